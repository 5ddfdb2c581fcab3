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

/* Prints "clcone: <fmt with arg>" and the line that says how to get the
 * usage (cli_usage_hint); returns EXIT_USAGE. */
int usage_error(const char *usage, const char *fmt, const char *arg);
/* "Run 'clcone solve --help' for its options.", the command read from
 * the usage text's first line, on stderr. */
void cli_usage_hint(const char *usage);
/* Prints a library error; returns EXIT_USAGE. */
int lib_error(const clcone_error *e);
/* Puts "FILE: " in front of a message found after FILE was read (a value
 * the device cannot take), unless it already starts so. */
void cli_name_file(clcone_error *e, const char *file);
int parse_double(const char *s, double *v);
int parse_int(const char *s, int *v);
/* Options shared by solve, check, demo and simulate; returns 0, -1 after
 * --help, or an exit code. */
int parse_args(int argc, char **argv, const char *usage, int maxpos, cli_args *a);
/* Whether option opt ("--facets") was given. */
int cli_given(const cli_args *a, const char *opt);
/* Refuses the first given option of the NULL-terminated opts, saying why
 * it does not apply; returns EXIT_USAGE then, else 0. */
int cli_refuse(const cli_args *a, const char *usage, const char *const *opts, const char *why);
/* Refuses the options that the chosen model and device do not use (scene:
 * the input is a scene file, whose time step the soft model takes). */
int cli_check_applicable(const cli_args *a, const char *usage, int scene);
/* Prints a refusal of clcone_options_check_given or clcone_gen_check_given
 * naming the flag ("facets does not apply" as "--facets does not apply")
 * and the usage; returns EXIT_USAGE. */
int cli_given_error(const char *usage, const clcone_error *e);
/* clcone_context_create with a line on stderr before each kernel
 * program it compiles. */
clcone_status cli_open_device(const char *device, clcone_precision prec, clcone_context **ctx, clcone_error *e);
/* That line on stderr for a context opened otherwise (ctx NULL: none). */
void cli_on_compile(clcone_context *ctx);
/* Progress of one long solve on stderr (a terminal, or --progress):
 * attached to o, the line is cleared by cli_progress_end. */
typedef struct cli_progress {
    double t0, last;
    int shown;
} cli_progress;
void cli_progress_attach(const cli_args *a, clcone_options *o, cli_progress *p);
void cli_progress_end(cli_progress *p);
int is_ref(const char *device);
void print_last_line(const char *status, double error, int iters, double ms, int n);
/* A backend in the words every command, plot and picture uses: the
 * device's name, platform and precision, or the reference (ctx NULL). */
void describe_backend(const clcone_context *ctx, char *buf, size_t len);
/* The file name without its directories. */
const char *cli_base_name(const char *path);

#ifdef CLCONE_MPI
/* host/cli/cli_mpi.c, in clcone-mpi only */
/* main under MPI: rank 0 runs the command line (run), the other ranks
 * wait for the collective part of `solve --mpi`; every rank returns rank
 * 0's exit code. */
int cli_mpi_main(int argc, char **argv, int (*run)(int, char **));
/* What `solve --mpi` hands over on rank 0 (solve_batch's arrays): the
 * problem files as one batch (NULL: none) with its reactions r and
 * results res, the nf files' worlds (a scene file's has bodies), and what
 * it fills for the scene files: out[k], n[k] (contacts), rk[k] (their
 * reactions, malloc'ed), and *ms, the time of both solves. */
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
/* `solve --mpi`'s collective part, from rank 0 (b; the other ranks take
 * part on their own, b NULL): each rank's device from a's --device and
 * --precision into *ctx, a->o resolved, the problems then the scenes
 * solved over the ranks. 0, or the exit code after saying why. */
int cli_mpi_solve(cli_args *a, cli_mpi_batch *b, clcone_context **ctx);
/* `simulate --mpi` on rank 0: the other ranks told, every rank's device
 * (a's --device, --precision) opened, rank 0's into *ctx; 0, or the exit
 * code after saying why. Then sim's solves go over the ranks
 * (cli_mpi_sim_attach) until cli_mpi_sim_close, which every path after
 * a successful open calls. */
int cli_mpi_sim_open(const cli_args *a, clcone_context **ctx);
int cli_mpi_sim_attach(clcone_sim *sim, clcone_context *ctx, double rebalance);
/* The ranks' bodies, contacts and reactions to rank 0's world and
 * stepper, before it writes them; 0, or fills e. */
int cli_mpi_sim_sync(clcone_error *e);
void cli_mpi_sim_close(void);
#endif

/* host/cli/outputs.c */
/* One output of a command: the option that names it (for messages), its
 * path (NULL: not given) and whether it names a directory (--vtk DIR, a
 * batch's --out DIR) rather than a file; a directory output says which
 * names it writes in it (writes(name, ctx); NULL: none to check). */
typedef struct cli_output {
    const char *opt, *path;
    int dir;
    int (*writes)(const char *name, const void *ctx);
    const void *ctx;
} cli_output;
/* One input of a command: what the command line calls it ("FILE",
 * "--warm") and its path. */
typedef struct cli_input {
    const char *what, *path;
} cli_input;
/* Checks every output before any work (before an input is read): a
 * file's directory must exist (no output creates missing directories); a
 * directory output may be missing when its parent exists (cli_make_dir
 * creates it); a path that cannot be written (a symbolic link loop) is
 * refused; two outputs that resolve to the same file are refused; an
 * output that is one of the nin inputs ins, or a directory output that
 * writes a file that is one, by any name (a symbolic or hard link, ./x,
 * a path through ..), is refused naming both. Returns 0, or EXIT_USAGE
 * after saying why. */
int cli_check_outputs(const cli_output *outs, int n, const cli_input *ins, int nin);
/* Creates the directory output dir when missing (its parent exists after
 * cli_check_outputs); 0, or EXIT_USAGE after saying why not. */
int cli_make_dir(const char *opt, const char *dir);

/* host/cli/cli_scene.c */
/* `solve` on a scene file (parsed arguments, positional[0] the file),
 * read into w, which it frees. */
/* One solve through a plan (sc NULL: the problem p), so that set-up and
 * first-launch compilation are not in the reported solve time. */
int cli_plan_solve(clcone_context *ctx, const clcone_problem *p, const clcone_scene *sc, const clcone_options *o,
                   double *r, clcone_result *res, clcone_error *e);
int cli_solve_world(cli_args *a, clcone_world *w);
int cmd_gen(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* Prints usage (and the solver table when it names --solver) and returns
 * 1 when argv asks for --help or -h. */
int cli_want_help(int argc, char **argv, const char *usage);
/* What cli_take_opt found wrong first: an option without its value
 * (last on the line) or given twice (opt NULL: nothing). */
typedef struct cli_opt_fault {
    const char *opt;
    int twice;
} cli_opt_fault;
/* Takes "--name value" out of argv (argc adjusted); returns the value or
 * NULL. An option given twice (refused, as everywhere) or last without a
 * value is recorded in *fault unless it records one already. */
const char *cli_take_opt(int *argc, char **argv, const char *name, cli_opt_fault *fault);
/* 0 when fault records nothing, else EXIT_USAGE after naming the option
 * and what is wrong with it. */
int cli_opt_fault_error(const char *usage, const cli_opt_fault *fault);

/* host/cli/cli_batch.c: solve's outputs against each other and its
 * inputs, before any is read (0 or EXIT_USAGE after saying why); `solve`
 * of several files or with --mpi (usage: solve's, for its errors), the
 * exit code. */
int cli_check_solve_files(const cli_args *a);
/* 0 when the files (positional) have different names, as an output
 * directory out holding one file per input (its `what`) needs; else
 * EXIT_USAGE after saying which two clash. */
int cli_names_differ(const cli_args *a, const char *out, const char *what);
int cli_solve_batch(cli_args *a, const char *usage);

/* host/cli/cli_sim.c */
/* The stepping commands' shared parts: SIGINT/SIGTERM caught for a run
 * (and the old handlers put back), whether one came, and the message and
 * exit code of a run it stopped after steps_done; the progress bar; the
 * per-step CSV (world < 0: no world column). */
void cli_catch_stop_signals(void);
void cli_release_stop_signals(void);
int cli_stop_requested(void);
int cli_report_interrupted(int steps_done, int steps);
void cli_steps_progress(int step, int steps, int contacts, double t0);
void cli_sim_csv_header(FILE *csv, int world_column);
void cli_sim_csv_row(FILE *csv, int world, const clcone_step_info *in);
/* host/cli/cli_worlds.c: `simulate SCENE SCENE...` (a parsed, checked
 * but for its outputs; csv: --csv or NULL; threads: --threads or 0);
 * the exit code. */
int cli_simulate_worlds(cli_args *a, int steps, double dt, const char *csv, int threads);
int cmd_simulate(int argc, char **argv);
/* The main job: a pile simulated on the device, the last solve compared
 * with the reference. */
int cmd_demo_pile(int argc, char **argv);

/* host/cli/cli_mujoco.c */
/* `clcone mujoco MODEL.xml --steps K ...`: steps a MuJoCo model with
 * clcone as its constraint solver. */
int cmd_mujoco(int argc, char **argv);

/* host/cli/cli_plot.c */
/* --png-size s of the picture png (NULL: no --png given, refused) as
 * "WxH" (both parsed; ranges are the library's to check); 0 or
 * EXIT_USAGE after saying which was wrong. */
int cli_png_size(const char *usage, const char *png, const char *s, int *w, int *h);
/* solve --plot: h[0] the solve's history, h[1] the reference's (used with
 * --compare on a device), titled with the file and what ("ccp, apgd, 286
 * contacts"); prints the file's name. Returns 0 or an exit code after
 * printing why. */
int cli_plot_solve(const cli_args *a, const clcone_context *ctx, const clcone_history h[2], const char *what);
/* simulate --plot: per step (n) iterations, error and solve time. */
clcone_status cli_plot_steps(const char *path, const char *title, int n, const double *iters, const double *errors,
                             const double *ms, double tol, clcone_error *e);

/* Where `solve` or `check` takes a general-block problem file
 * (clcone-blocks): solved or measured (host/cli/cli_blocks.c), or
 * refused (a batch's file). */
enum cli_blocks_use { CLI_BLOCKS_REFUSE, CLI_BLOCKS_SOLVE, CLI_BLOCKS_CHECK };
/* Reads the command's input file path (one read, so that a pipe works)
 * into in; a general-block problem is instead solved or measured as use
 * says, with a's options (usage for its errors), *handled set and its
 * exit code returned. 0, or the exit code after saying why. */
int cli_read_input(cli_args *a, const char *path, const char *usage, enum cli_blocks_use use, clcone_input *in,
                   int *handled);
/* check's verdict on reactions of error over n contacts (blocks for a
 * general-block problem), read from rfile with info: the tolerance line
 * (--tol, else the recorded one, else the default), then the last line
 * with the time since t0; the exit code. */
int cli_check_verdict(cli_args *a, const clcone_reactions_info *info, const char *rfile, double error, int n,
                      double t0);
/* --compare's table: the device's and the reference's result (dev, ref)
 * and their m values (r_dev, r_ref). */
void cli_print_comparison(const clcone_prob_result *dev, const clcone_prob_result *ref, const double *r_dev,
                          const double *r_ref, size_t m);

/* Monotonic clock in milliseconds, for the figures the commands print. */
double cli_now_ms(void);
/* --compare: solves p (or the scene sc) again on the reference from r0
 * and prints both backends' error, iterations and time, the largest
 * reaction difference and the speed ratio; 0, or the exit code of a
 * failure it printed. */
int cli_compare_with_reference(const clcone_problem *p, const clcone_scene *sc, const cli_args *a, const double *r0,
                               const double *r_dev, const clcone_prob_result *dev, clcone_history *history);
/* The rest of a one-problem solve's report (problem p, or the scene sc
 * when p is NULL): --compare, --plot and the last line; the exit code. */
int cli_finish_solve(const cli_args *a, const clcone_context *ctx, const clcone_problem *p, const clcone_scene *sc,
                     const double *r0, const double *r, const clcone_prob_result *it, clcone_history hist[2]);
/* What a reactions file records of the solve: its model (with the
 * pyramid's facets and fit), solver and tolerance and the backend's
 * precision (a->o resolved). */
clcone_reactions_info cli_reactions_info(const cli_args *a, const clcone_context *ctx);
/* The result lines of a one-problem solve (n contacts, the local problem
 * p, or NULL for a scene): status, iterations, the error and the
 * precision it was evaluated in (on a float device, with p, also r's
 * error in double), the reason; then --out, the reactions with the
 * solve's tolerance in their header. 0, or the exit code of a failure
 * it printed. */
int cli_print_result(const cli_args *a, const clcone_context *ctx, const clcone_problem *p, int n, const double *r,
                     const clcone_prob_result *it);
/* What a one-problem solve command holds besides its problem: the two
 * histories, the device, the reactions and their start. */
void cli_solve_release(clcone_history hist[2], clcone_context *ctx, double *r, double *r0);
/* The library's solver table (clcone_offer_at): each model's solvers per
 * backend for help texts (SHORT), the same and each pair's line of help
 * (HELP, `clcone solvers`), or docs/solvers.md's markdown table. */
enum cli_solvers_form { CLI_SOLVERS_SHORT, CLI_SOLVERS_MARKDOWN, CLI_SOLVERS_HELP };
void cli_print_solvers(FILE *f, enum cli_solvers_form form);
/* Largest |a_i| and largest |a_i - b_i| over n values. */
double cli_max_abs(const double *a, size_t n);
double cli_max_abs_diff(const double *a, const double *b, size_t n);

#endif
