/* clcone benchmarks: shared state of one run.
 *
 * Every section writes its part of the report into its own markdown buffer
 * (sections run in the order 2, 1, 3, 4, 7, 6, 5, 8 but the report lists
 * them 1..8), its data files and gnuplot scripts into the results directory,
 * and notes every failure in its text instead of stopping the run. No
 * figure in the report is typed in: all of them are measured in the run. */
#ifndef CLCONE_BENCH_H
#define CLCONE_BENCH_H

#include <clcone/clcone.h>
#include <clcone/output.h>
#include "world/world_parts.h" /* the scene generators */

#include <stdio.h>

#define BENCH_SECTIONS 10

typedef struct bench {
    int quick;                    /* BENCH_QUICK=1: small sizes, short caps */
    const char *out;              /* results directory */
    const char *problems;         /* Siconos problems directory */
    clcone_context *fctx, *dctx;  /* float and double contexts (NULL if unavailable) */
    const char *spec;             /* --device as given (NULL: the default device) */
    char dev_name[1024];           /* device, platform and driver, for the rows */
    char dev_short[64];           /* short device name for table rows */
    char fctx_err[1100], dctx_err[1100];
    double t0;                    /* start of the run (s, monotonic) */
    char *sec_text[BENCH_SECTIONS];
    size_t sec_len[BENCH_SECTIONS];
    FILE *sec[BENCH_SECTIONS];    /* open_memstream per section */
    double sec_seconds[BENCH_SECTIONS];
    /* measured by section 2, used by section 1 */
    double triad_gbs;             /* best triad bandwidth on the float context, GB/s */
    int bw_scene_contacts, bw_L;  /* grid of the section-2 Jacobi timing */
    double bw_iter_ms, bw_t100_ms;
    int bw_flag;
    int gnuplot_ok;               /* gnuplot found */
    int failures;                 /* failures noted in the report */
} bench;

/* Seconds on a monotonic clock. */
double bench_now(void);
/* Elapsed seconds since the start of the run. */
double bench_elapsed(const bench *b);

/* Notes a failure in section text f (and counts it). */
void bench_fail(bench *b, FILE *f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Opens a data file in the results directory (NULL and a failure note on
 * error). */
FILE *bench_data(bench *b, FILE *sec, const char *name);
/* Writes a gnuplot script `name`.gp producing `name`.png and runs it;
 * returns 1 when the PNG was written (the report links it) and notes a
 * failure otherwise. `body` holds the plot commands after the terminal
 * and output lines. */
int bench_plot(bench *b, FILE *sec, const char *name, const char *body);

/* The CLI built beside this bench (build/clcone), for the sections that
 * measure what a user runs. */
void bench_cli_path(char *buf, size_t len);
/* The CLI's path into cli (len bytes): 1, or 0 and a failure in f where it is not there. */
int bench_cli_ready(bench *b, FILE *f, char *cli, size_t len);
/* The CLI's name for the bench's device: as given, else its kind. */
const char *bench_cli_device(const bench *b);
/* Section 8's table of hard contact on the shared models (bench/sec_hard.c; MuJoCo builds only). */
void bench_hard_models(bench *b, FILE *f);

/* Formats a time in ms with a sensible unit into buf. */
const char *bench_fmt_ms(double ms, char *buf, size_t len);

/* Sections. Each returns nothing: failures are in its text. */
void bench_section_scaling(bench *b, FILE *f);     /* 1 */
void bench_section_bandwidth(bench *b, FILE *f);   /* 2 */
void bench_section_batches(bench *b, FILE *f);     /* 3 */
void bench_worlds_stepped(bench *b, FILE *f);      /* 3, its second part (sec_stepped.c) */
void bench_local_or_body(bench *b, FILE *f);       /* 3, its third part (sec_stepped.c) */
void bench_section_siconos(bench *b, FILE *f);     /* 4 */
void bench_section_mujoco(bench *b, FILE *f);      /* 5 */
void bench_section_bias(bench *b, FILE *f);        /* 6 */
void bench_section_peer(bench *b, FILE *f);        /* 7: Siconos itself */
void bench_section_creep(bench *b, FILE *f);       /* 8: the pinched capsule's slip */
void bench_section_worlds(bench *b, FILE *f);      /* 9: MuJoCo worlds in one batch */
void bench_section_second(bench *b, FILE *f);      /* 10: second order to 1e-8 */

/* The problem files of b->problems (.dat, and .hdf5 unless dat_only),
 * sorted by name, at most max, strdup'ed into files; -1 and a failure
 * note when the directory cannot be read. */
int bench_problem_files(bench *b, FILE *f, int dat_only, char **files, int max);
/* A plan of problem p, model coulomb, with a run's solver, tolerance,
 * iteration cap (0: the library's default) and time cap. */
clcone_status bench_coulomb_plan(clcone_context *ctx, const clcone_problem *p, clcone_solver solver, double tol,
                                 int max_iter, double cap, clcone_plan **plan, clcone_error *err);

/* Short solves run again: a solve under BENCH_REPEAT_MS runs up to
 * BENCH_REPEATS times in all and its time is the shortest (noise on a
 * shared machine only adds time; every run gives the same bits). A single
 * sub-millisecond solve's time swung 2x from one run of the bench to the
 * next (NESpheres_10_1 on POCL: 302 and 648 us). */
#define BENCH_REPEATS 5
#define BENCH_REPEAT_MS 50.0
/* Whether a solve that took `ms`, run `runs` times so far, runs again. */
int bench_repeat(int runs, double ms);
/* plan's solve from r = 0 (nr reals), repeated by bench_repeat; *ms the
 * shortest, res the last run's (the caller frees it). */
clcone_status bench_plan_solve_best(clcone_plan *plan, double *r, size_t nr, clcone_result *res, double *ms,
                                    clcone_error *err);

/* Shared scene helpers. */
/* Solves a scene with options o on ctx (NULL = reference) from r = 0;
 * fills res item 0. Returns the status; err has the message. */
clcone_status bench_solve_scene(clcone_context *ctx, const clcone_scene *s, const clcone_options *o,
                                clcone_prob_result *out, double *r_out, clcone_error *err);

/* Time of one iteration without the error checks: two runs from r = 0
 * with no check after the library's fixed first 100 (check_every huge,
 * tol 0), of 100 and 100 + M iterations; the difference over M. Also
 * returns the 100-iteration run's time. */
#define BENCH_TIME_OK 0
#define BENCH_TIME_EXACT 1 /* the run stopped early at error exactly 0: time/iteration of that run, checks included */
#define BENCH_TIME_NOISY 2 /* the difference stayed implausibly small over 3 tries (a loaded machine) */
clcone_status bench_iter_time(clcone_context *ctx, const clcone_scene *s, const clcone_options *o, int M,
                             double *per_iter_ms, double *t100_ms, int *flag, clcone_error *err);
/* Marker for a flagged time ("" when BENCH_TIME_OK). */
const char *bench_time_flag(int flag);

/* Body-form Jacobi traffic model (section 2): bytes one iteration must
 * move (body_gather + body_contact_apply + jacobi_step, each array element
 * a kernel touches counted once) for real size rs. */
double bench_jacobi_bytes(const clcone_scene *s, int rs, long long *E, long long *nbm);

#endif
