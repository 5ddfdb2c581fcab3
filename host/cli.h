/* Helpers shared by the command-line sources (host/cli*.c). */
#ifndef CLCONE_CLI_H
#define CLCONE_CLI_H

#include <stddef.h>

#include "clcone.h"

#define EXIT_NOTCONV 1
#define EXIT_USAGE 2

typedef struct cli_args {
    const char *positional[2];
    int npos;
    const char *out, *warm, *dir, *device;
    int model_given, solver_given, tol_given, compare;
    clcone_precision prec;
    clcone_options o;
} cli_args;

/* Prints "clcone: <fmt with arg>" and the usage; returns EXIT_USAGE. */
int usage_error(const char *usage, const char *fmt, const char *arg);
/* Prints a library error; returns EXIT_USAGE. */
int lib_error(const clcone_error *e);
int parse_double(const char *s, double *v);
int parse_int(const char *s, int *v);
/* Options shared by solve, check, demo and simulate; returns 0, -1 after
 * --help, or an exit code. */
int parse_args(int argc, char **argv, const char *usage, int maxpos, cli_args *a);
int is_ref(const char *device);
void backend_defaults(cli_args *a, int ref);
void print_last_line(const char *status, double error, int iters, double ms, int n);
void describe_backend(const clcone_context *ctx, char *buf, size_t len);

/* host/cli_scene.c */
/* `solve` on a scene file (parsed arguments, positional[0] the file). */
int cli_solve_world(cli_args *a);
int cmd_gen(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
/* The main job: a pile simulated on the device, the last solve compared
 * with the reference. */
int cmd_demo_pile(int argc, char **argv);

/* Monotonic clock in milliseconds, for the figures the commands print. */
double cli_now_ms(void);

#endif
