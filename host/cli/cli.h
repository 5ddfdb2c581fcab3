/* Helpers shared by the command-line sources (host/cli*.c). */
#ifndef CLCONE_CLI_H
#define CLCONE_CLI_H

#include <stddef.h>
#include <stdio.h>

#include <clcone/clcone.h>
#include <clcone/output.h>

#define EXIT_NOTCONV 1
#define EXIT_USAGE 2
#define CLI_STR(x) #x
#define CLI_XSTR(x) CLI_STR(x)
#define CLI_MAX_FILES_TEXT CLI_XSTR(CLI_MAX_FILES)

/* Files one `solve` takes as a batch. */
#define CLI_MAX_FILES 4096

typedef struct cli_args {
    const char *positional[CLI_MAX_FILES];
    int npos;
    const char *out, *warm, *dir, *device;
    const char *plot;    /* --plot FILE.png */
    unsigned given;      /* bit per option taking a value (cli_given) */
    int compare, progress;
    int mpi;             /* solve --mpi (clcone-mpi only) */
    clcone_precision prec;
    clcone_options o;
} cli_args;

/* Prints "clcone: <fmt with arg>" and the usage hint; returns EXIT_USAGE. */
int usage_error(const char *usage, const char *fmt, const char *arg);
/* Tells on stderr how to get the help of the command the usage names. */
void cli_usage_hint(const char *usage);
/* Prints a library error; returns EXIT_USAGE. */
int lib_error(const clcone_error *e);
/* Prefixes "FILE: " to an error found after FILE was read, once. */
void cli_name_file(clcone_error *e, const char *file);
int parse_double(const char *s, double *v);
/* val as opt's integer in lo..hi into out: 0, or the usage error's exit
 * code after its message. */
int cli_int_opt(const char *usage, const char *opt, const char *val, int lo, int hi, int *out);
/* Options shared by solve, check, demo and simulate; 0, -1 after --help, or an exit code. */
int parse_args(int argc, char **argv, const char *usage, int maxpos, cli_args *a);
/* Whether option opt ("--facets") was given. */
int cli_given(const cli_args *a, const char *opt);
/* Refuses the first given of the NULL-terminated opts with why; EXIT_USAGE then, else 0. */
int cli_refuse(const cli_args *a, const char *usage, const char *const *opts, const char *why);
/* Refuses options the chosen model and device do not use (scene: input is a scene file). */
int cli_check_applicable(const cli_args *a, const char *usage, int scene);
/* Prints an options refusal with the name as a flag ("--facets"); returns EXIT_USAGE. */
int cli_given_error(const char *usage, const clcone_error *e);
/* clcone_context_create that says on stderr which kernel program it compiles. */
clcone_status cli_open_device(const char *device, clcone_precision prec, clcone_context **ctx, clcone_error *e);
/* The same compile lines for a context opened otherwise (ctx NULL: none). */
void cli_on_compile(clcone_context *ctx);
/* A long solve's progress line on stderr; cli_progress_end clears it. */
typedef struct cli_progress {
    double t0, last;
    int shown;
} cli_progress;
void cli_progress_attach(const cli_args *a, clcone_options *o, cli_progress *p);
void cli_progress_end(cli_progress *p);
int is_ref(const char *device);
void print_last_line(const char *status, double error, int iters, double ms, int n);
/* The backend in the words every output uses: device, platform, precision, or the reference (ctx NULL). */
void describe_backend(const clcone_context *ctx, char *buf, size_t len);
/* The file name without its directories. */
const char *cli_base_name(const char *path);

#ifdef CLCONE_MPI
/* host/cli/cli_mpi.c, in clcone-mpi only */
/* main under MPI: rank 0 runs run, the others serve `solve --mpi`; all return rank 0's code. */
int cli_mpi_main(int argc, char **argv, int (*run)(int, char **));
/* What `solve --mpi` hands over on rank 0 (see docs/mpi.md); batch NULL: no problem files. */
typedef struct cli_mpi_batch {
    const clcone_problem *batch;
    double *r;
    clcone_result *res;
    const clcone_world *worlds;
    int nf;
    clcone_prob_result *out;
    int *n;
    double **rk, *ms;
} cli_mpi_batch;
/* `solve --mpi`'s collective part (b NULL off rank 0); 0, or the exit code after saying why. */
int cli_mpi_solve(cli_args *a, cli_mpi_batch *b, clcone_context **ctx);
/* `simulate --mpi` on rank 0: every rank's device opened; after 0, cli_mpi_sim_close must follow. */
int cli_mpi_sim_open(const cli_args *a, clcone_context **ctx);
int cli_mpi_sim_attach(clcone_sim *sim, clcone_context *ctx, double rebalance);
/* Gathers the ranks' bodies, contacts and reactions to rank 0 before it writes; 0, or fills e. */
int cli_mpi_sim_sync(clcone_error *e);
void cli_mpi_sim_close(void);
#endif

/* host/cli/outputs.c */
/* One output: its option, path (NULL: not given), whether a directory, and the names it writes there. */
typedef struct cli_output {
    const char *opt, *path;
    int dir;
    int (*writes)(const char *name, const void *ctx);
    const void *ctx;
} cli_output;
/* One input: what the command line calls it ("FILE", "--warm") and its path. */
typedef struct cli_input {
    const char *what, *path;
} cli_input;
/* Checks every output before any input is read (rules in docs/cli.md); 0, or EXIT_USAGE after saying why. */
int cli_check_outputs(const cli_output *outs, int n, const cli_input *ins, int nin);
/* Creates the missing directory output dir; 0, or EXIT_USAGE after saying why not. */
int cli_make_dir(const char *opt, const char *dir);

/* host/cli/cli_scene.c */
/* One solve through a plan (sc NULL: problem p), so set-up stays out of the reported time. */
int cli_plan_solve(clcone_context *ctx, const clcone_problem *p, const clcone_scene *sc, const clcone_options *o,
                   double *r, clcone_result *res, clcone_error *e);
/* `solve` on a scene file read into w, which it frees. */
int cli_solve_world(cli_args *a, clcone_world *w);
int cmd_gen(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* Prints usage (and the solver table if it names --solver); 1 when argv asks for help. */
int cli_want_help(int argc, char **argv, const char *usage);
/* cli_take_opt's first fault: an option without its value or given twice (opt NULL: none). */
typedef struct cli_opt_fault {
    const char *opt;
    int twice;
} cli_opt_fault;
/* Takes "--name value" out of argv; the value or NULL, a fault kept in *fault if it has none. */
const char *cli_take_opt(int *argc, char **argv, const char *name, cli_opt_fault *fault);
/* 0 when fault records nothing, else EXIT_USAGE after naming the option and its fault. */
int cli_opt_fault_error(const char *usage, const cli_opt_fault *fault);

/* host/cli/cli_batch.c: a batch `solve` (several files or --mpi); each returns 0 or an exit code. */
/* Solve's outputs against each other and its inputs, before any is read. */
int cli_check_solve_files(const cli_args *a);
/* 0 when the files have different names, as one output file per input in out needs. */
int cli_names_differ(const cli_args *a, const char *out, const char *what);
int cli_solve_batch(cli_args *a, const char *usage);

/* host/cli/cli_sim.c */
/* The stepping commands' shared parts: stop signals, progress bar, per-step CSV (world < 0: no column). */
void cli_catch_stop_signals(void);
void cli_release_stop_signals(void);
/* solve's cancel flag (clcone_options.cancel), raised by SIGINT or SIGTERM while cli_solve_interruptible runs
 * cmd; that returns cmd's exit code, or 130 after saying the solve was stopped (its outputs are written). */
const volatile int *cli_solve_cancel(void);
int cli_solve_interruptible(int (*cmd)(int, char **), int argc, char **argv);
/* cmd (gen, export: a file made) with SIGINT and SIGTERM ending the process at once, exit 130,
 * the output's temporary discarded and the target left as it was. */
int cli_write_interruptible(int (*cmd)(int, char **), int argc, char **argv);
int cli_stop_requested(void);
int cli_report_interrupted(int steps_done, int steps);
void cli_steps_progress(int step, int steps, int contacts, double t0);
void cli_sim_csv_header(FILE *csv, int world_column);
void cli_sim_csv_row(FILE *csv, int world, const clcone_step_info *in);
/* host/cli/cli_worlds.c: `simulate SCENE SCENE...` (csv, threads: 0 when not given); the exit code. */
int cli_simulate_worlds(cli_args *a, int steps, double dt, const char *csv, int threads);
int cmd_simulate(int argc, char **argv);
/* The main job: a pile simulated on the device, the last solve compared with the reference. */
int cmd_demo_pile(int argc, char **argv);

/* host/cli/cli_mujoco.c */
/* `clcone mujoco MODEL.xml --steps K ...`: a MuJoCo model stepped with clcone as its solver. */
int cmd_mujoco(int argc, char **argv);

/* host/cli/cli_plot.c */
/* --png-size "WxH" of --png (NULL: refused); 0 or EXIT_USAGE after saying which was wrong. */
int cli_png_size(const char *usage, const char *png, const char *s, int *w, int *h);
/* solve --plot: h[0] the solve's history, h[1] the reference's; 0 or an exit code after saying why. */
int cli_plot_solve(const cli_args *a, const clcone_context *ctx, const clcone_history h[2], const char *what);
/* simulate --plot: per step (n) iterations, error and solve time. */
clcone_status cli_plot_steps(const char *path, const char *title, int n, const double *iters, const double *errors,
                             const double *ms, double tol, clcone_error *e);

/* What `solve` or `check` does with a general-block problem file. */
enum cli_blocks_use { CLI_BLOCKS_REFUSE, CLI_BLOCKS_SOLVE, CLI_BLOCKS_CHECK };
/* Reads path once (a pipe works) into in, or handles a general-block file as use says; 0 or an exit code. */
int cli_read_input(cli_args *a, const char *path, const char *usage, enum cli_blocks_use use, clcone_input *in,
                   int *handled);
/* check's verdict on read reactions: the tolerance line, then the last line; the exit code. */
int cli_check_verdict(cli_args *a, const clcone_reactions_info *info, const char *rfile, double error, int n,
                      double t0);
/* --compare's table of the device's and the reference's results and m reactions. */
void cli_print_comparison(const clcone_prob_result *dev, const clcone_prob_result *ref, const double *r_dev,
                          const double *r_ref, size_t m);

/* Monotonic clock in milliseconds, for the figures the commands print. */
double cli_now_ms(void);
/* --compare: p (or sc) solved again on the reference from r0, both printed; 0 or the exit code. */
int cli_compare_with_reference(const clcone_problem *p, const clcone_scene *sc, const cli_args *a, const double *r0,
                               const double *r_dev, const clcone_prob_result *dev, clcone_history *history);
/* The rest of a one-problem report (p, or sc when p is NULL): --compare, --plot, last line. */
int cli_finish_solve(const cli_args *a, const clcone_context *ctx, const clcone_problem *p, const clcone_scene *sc,
                     const double *r0, const double *r, const clcone_prob_result *it, clcone_history hist[2]);
/* The solve as a reactions file records it: model, solver, tolerance, precision (a->o resolved). */
clcone_reactions_info cli_reactions_info(const cli_args *a, const clcone_context *ctx);
/* A one-problem solve's result lines, then --out (p NULL for a scene); 0 or the exit code. */
int cli_print_result(const cli_args *a, const clcone_context *ctx, const clcone_problem *p, int n, const double *r,
                     const clcone_prob_result *it);
/* Frees what a one-problem solve holds besides its problem. */
void cli_solve_release(clcone_history hist[2], clcone_context *ctx, double *r, double *r0);
/* The library's solver table: for help texts, `clcone solvers`, or docs/solvers.md's table. */
enum cli_solvers_form { CLI_SOLVERS_SHORT, CLI_SOLVERS_MARKDOWN, CLI_SOLVERS_HELP };
void cli_print_solvers(FILE *f, enum cli_solvers_form form);
/* Largest |a_i| and largest |a_i - b_i| over n values. */
double cli_max_abs(const double *a, size_t n);
double cli_max_abs_diff(const double *a, const double *b, size_t n);

#endif
