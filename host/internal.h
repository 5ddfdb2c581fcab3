/* Library-internal helpers shared by the host sources. */
#ifndef CLCONE_INTERNAL_H
#define CLCONE_INTERNAL_H

#include "clcone.h"

#if defined(__GNUC__)
#define CLCONE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLCONE_PRINTF(a, b)
#endif

/* Fills err (when non-NULL) with code and a formatted message; returns
 * code so that callers can write `return clcone_fail(err, ...)`. */
clcone_status clcone_fail(clcone_error *err, clcone_status code,
                          const char *fmt, ...) CLCONE_PRINTF(3, 4);

/* Prefixes an already set message with context ("file.dat: ..."). */
void clcone_error_prefix(clcone_error *err, const char *fmt, ...)
    CLCONE_PRINTF(2, 3);

/* Monotonic clock in milliseconds. */
double clcone_now_ms(void);

/* Allocation that reports failure through err (never returns NULL with
 * CLCONE_OK). n * size is checked for overflow. */
void *clcone_calloc(size_t n, size_t size, clcone_error *err,
                    const char *what);

/* Writes an output file the way clcone_out_open does (clcone.h): fn
 * writes to the FILE* (returning 0 on success); a regular file is
 * replaced atomically only when everything succeeded. */
typedef int (*clcone_writer_fn)(void *file, const void *ctx);
clcone_status clcone_write_atomic(const char *path, clcone_writer_fn fn,
                                  const void *ctx, clcone_error *err);
/* The same, except that whatever path is (a FIFO, a link, a device) is
 * replaced by a regular file: for files clcone owns, the program cache. */
clcone_status clcone_write_replace(const char *path, clcone_writer_fn fn,
                                   const void *ctx, clcone_error *err);

/* Whether iteration `it` (1-based) measures the error: every one of the
 * first 100, then every o->check_every, and the last. The reference and
 * the device share it, so both stop at the same iteration. */
int clcone_is_check_iteration(const clcone_options *o, int it);
/* Appends one check to h (no-op when h is NULL); a second point for the
 * same problem and iteration replaces the first. */
void clcone_history_add(clcone_history *h, int prob, int iter, double time_ms, double error);

/* Checks option ranges and that the solver serves the model. */
clcone_status clcone_options_validate(const clcone_options *o, clcone_error *err);
/* Allocates res->items for nprob problems. */
clcone_status clcone_result_init(clcone_result *res, int nprob, clcone_error *err);

/* Siconos's relative error from the sums of squares of the natural map,
 * q, r and u (docs/formats.md section 2). */
double clcone_scaled_error(double f2, double q2, double r2, double u2);

/* Device solve of a validated batch (host/device_solve.c). */
clcone_status clcone_solve_device(clcone_context *c, const clcone_problem *p,
                                  const clcone_options *o, double *r,
                                  clcone_result *res, clcone_error *err);
/* soft model (host/soft.c): option checks; per-contact R and a_ref from
 * the diagonal of W (3n) and gaps (NULL = 0); the transformed local
 * problem W + R, q - a_ref (allocated in out). */
clcone_status clcone_soft_validate(const clcone_options *o, clcone_error *err);
clcone_status clcone_soft_terms(const clcone_options *o, int n, const double *Wdiag,
                                const double *gap, double *R, double *aref,
                                clcone_error *err);
clcone_status clcone_soft_local(const clcone_problem *p, const clcone_options *o,
                                const double *gap, clcone_problem *out,
                                clcone_error *err);
/* 1/2 r'Wr + q'r over contacts [c0, c1) of p. */
double clcone_qp_cost(const clcone_problem *p, const double *r, int c0, int c1);

/* Device side of clcone_plan (host/device_solve.c): a validated problem
 * (batch) or scene uploaded once; solves reset only the iterate and the
 * per-problem flags. set_q gives a local-form plan 3n values. set_scene
 * gives a scene plan another scene on the same buffers, grown when it
 * needs more, uploading only the arrays that differ from the last
 * scene's; o is the plan's options, whose soft inputs (soft_v0, soft_R,
 * soft_aref) may have changed. A plan whose set_scene failed is only to
 * be freed. */
typedef struct clcone_dev_plan clcone_dev_plan;
clcone_status clcone_dev_plan_local(clcone_context *c, const clcone_problem *p, const clcone_options *o,
                                    clcone_dev_plan **out, clcone_error *err);
clcone_status clcone_dev_plan_scene(clcone_context *c, const clcone_scene *s, const clcone_options *o,
                                    clcone_dev_plan **out, clcone_error *err);
clcone_status clcone_dev_plan_set_q(clcone_dev_plan *pl, const double *q, clcone_error *err);
clcone_status clcone_dev_plan_set_scene(clcone_dev_plan *pl, const clcone_scene *s, const clcone_options *o,
                                        clcone_error *err);
clcone_status clcone_dev_plan_solve(clcone_dev_plan *pl, double *r, clcone_result *res, clcone_error *err);
/* A one-iteration solve that leaves nothing behind: first-launch
 * compilation happens here, not in a timed solve. */
clcone_status clcone_dev_plan_warm_up(clcone_dev_plan *pl, clcone_error *err);
/* What a plan did to its kept buffers since it was made, for the tests:
 * buffers made (first or grown) and arrays uploaded. */
typedef struct clcone_dev_counts {
    int buffers;
    int uploads;
} clcone_dev_counts;
clcone_dev_counts clcone_dev_plan_counts(const clcone_dev_plan *pl);
void clcone_dev_plan_free(clcone_dev_plan *pl);

/* Per-solve inputs of a plan that the stepper changes between steps
 * (host/solve.c): whether r is a warm start, and the soft model's
 * normal velocities (soft_v0, read by the next clcone_plan_set_scene and
 * by the solves; it must stay valid until then). */
void clcone_plan_set_start(clcone_plan *pl, int warm_start, const double *soft_v0);
/* The device side's clcone_dev_plan_counts; zeros without one. */
clcone_dev_counts clcone_plan_device_counts(const clcone_plan *pl);

#endif
