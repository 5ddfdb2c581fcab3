/* Library-internal helpers shared by the host sources. */
#ifndef CLCONE_INTERNAL_H
#define CLCONE_INTERNAL_H

#include <clcone/clcone.h>

#if defined(__GNUC__)
#define CLCONE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLCONE_PRINTF(a, b)
#endif

/* Fills err (when non-NULL) with code and a formatted message; returns
 * code so that callers can write `return clc_fail(err, ...)`. */
clcone_status clc_fail(clcone_error *err, clcone_status code,
                          const char *fmt, ...) CLCONE_PRINTF(3, 4);

/* Prefixes an already set message with context ("file.dat: ..."). */
void clc_error_prefix(clcone_error *err, const char *fmt, ...)
    CLCONE_PRINTF(2, 3);

/* Monotonic clock in milliseconds. */
double clc_now_ms(void);

/* Allocation that reports failure through err (never returns NULL with
 * CLCONE_OK). n * size is checked for overflow. */
void *clc_calloc(size_t n, size_t size, clcone_error *err,
                    const char *what);

/* Whether iteration `it` (1-based) measures the error: every one of the
 * first 100, then every o->check_every, and the last. The reference and
 * the device share it, so both stop at the same iteration. */
int clc_is_check_iteration(const clcone_options *o, int it);
/* The general-block solvers' schedule (both backends): the first
 * iteration (a warm start that is already there stops at once), then
 * every o->check_every from the start, and the last. Without the first
 * 100's window: a check costs about three of their iterations on a
 * device (a product with W and a read), and their warm-started MuJoCo
 * steps take 30-130 iterations, all inside that window. */
int clc_is_block_check_iteration(const clcone_options *o, int it);
/* A public entry's check of a pointer argument it needs: CLCONE_EINVAL
 * naming the function and the argument, never a crash. */
#define CLCONE_REQUIRE(err, arg)                                                                 \
    do {                                                                                         \
        if (!(arg)) return clc_fail((err), CLCONE_EINVAL, "%s: argument '%s' is NULL", __func__, #arg); \
    } while (0)
/* Why an iterative solve stopped (core/stopping.c). */
typedef enum clc_stop_why {
    CLCONE_STOP_TOL,          /* converged: error <= tol */
    CLCONE_STOP_NONFINITE,    /* diverged: the error (or r) is not finite */
    CLCONE_STOP_ITERS,        /* o->max_iter iterations done */
    CLCONE_STOP_TIME          /* o->max_seconds passed */
} clc_stop_why;
/* Sets out's status and reason for a stop after iteration it. */
void clc_stop(clcone_prob_result *out, clc_stop_why why, const clcone_options *o, int it);
/* Whether o->cancel is set. */
int clc_cancelled(const clcone_options *o);
/* Whether o->max_seconds (0 = none) has passed or o->cancel is set: a
 * cancel stops a solve as the time cap does (CLCONE_STOP_TIME, whose
 * reason then says "cancelled"). */
int clc_time_is_up(const clcone_options *o, double elapsed_ms);
/* Iterations of the next launch of a kernel that runs many iterations a
 * launch, after one of `last` iterations that took last_ms, elapsed_ms
 * into the solve: twice `last` up to `most`, and under a time cap no more
 * than fit in the time left at the last launch's pace (so the solve stops
 * near the cap, not a doubled launch past it); 0 when not one fits or
 * the caller cancelled the solve (clc_cancelled). */
int clc_next_budget(const clcone_options *o, int last, int most, double last_ms, double elapsed_ms);
/* How long a device may run queued work unseen under a time cap or a
 * cancel flag (a twentieth of the cap, at most CLCONE_SLICE_MS), so that
 * the solve stops within a tenth of its cap; INFINITY with neither. */
double clc_cap_slice_ms(const clcone_options *o);
/* The stopping rule at a check of error e after iteration it: records
 * iters and error in out; returns 1 (status and reason set) when the solve
 * stops: non-finite, converged, time cap, iteration cap, in that order. */
int clc_stop_rule(const clcone_options *o, int it, double e, double elapsed_ms, clcone_prob_result *out);
/* What a backend gives the one iteration loop (core/iterate.c). Every call
 * works on the backend's own iterate. */
typedef struct clc_iter_ops {
    void *ctx;
    int nprob;   /* problems iterated together: a batch on the device, one on the reference */
    int prob0;   /* batch index of the first, for the history and progress */
    double t0_ms; /* when the solve's clock started (clc_now_ms); 0 = now */
    /* iteration it (1-based) of every problem still active */
    clcone_status (*step)(void *ctx, int it, clcone_error *err);
    /* errors[k] of every problem k with active[k], after iteration it */
    clcone_status (*measure)(void *ctx, int it, const int *active, double *errors, clcone_error *err);
    /* after a check that left problems running (NULL: nothing to do),
     * with the errors it measured; changed: some problem stopped at it */
    clcone_status (*checked)(void *ctx, int it, const int *active, const double *errors, int changed,
                             clcone_error *err);
    /* waits for the iterations queued so far (NULL: step waits itself) */
    clcone_status (*sync)(void *ctx, clcone_error *err);
    /* *ms, the solve's clock, made the same on every process that shares
     * the solve (the largest), at checks only, so that they all stop at
     * one iteration; NULL: one process */
    clcone_status (*agree_ms)(void *ctx, double *ms, clcone_error *err);
} clc_iter_ops;
/* Iterates until every problem has stopped by clc_stop_rule, checking
 * on the schedule is_check (and early once the time cap has passed);
 * fills out[k] (iters, error, status, reason, time_ms) of each problem.
 * clc_iterate: on the shared schedule, clc_is_check_iteration. */
clcone_status clc_iterate_on(const clc_iter_ops *ops, const clcone_options *o,
                                int (*is_check)(const clcone_options *o, int it), clcone_prob_result *out,
                                clcone_error *err);
clcone_status clc_iterate(const clc_iter_ops *ops, const clcone_options *o, clcone_prob_result *out,
                             clcone_error *err);
/* Appends one check to h (no-op when h is NULL). */
void clc_history_add(clcone_history *h, int prob, int iter, double time_ms, double error);

/* The model whose solvers run a model: soft is solved as ccp on W + R,
 * q - a_ref; every other model as itself. */
clcone_model clc_model_solved_as(clcone_model m);
/* Allocates res->items for nprob problems. */
clcone_status clc_result_init(clcone_result *res, int nprob, clcone_error *err);

/* Siconos's relative error from the sums of squares of the natural map,
 * q, r and u (docs/formats.md section 2). */
double clc_scaled_error(double f2, double q2, double r2, double u2);

/* soft model (core/soft.c): option checks; per-contact R and a_ref from
 * the diagonal of W (3n) and gaps (NULL = 0); the transformed local
 * problem W + R, q - a_ref (allocated in out). */
clcone_status clc_soft_validate(const clcone_options *o, clcone_error *err);
clcone_status clc_soft_terms(const clcone_options *o, int n, const double *Wdiag,
                                const double *gap, double *R, double *aref,
                                clcone_error *err);
clcone_status clc_soft_local(const clcone_problem *p, const clcone_options *o,
                                const double *gap, clcone_problem *out,
                                clcone_error *err);
/* 1/2 r'Wr + q'r over contacts [c0, c1) of p. */
double clc_qp_cost(const clcone_problem *p, const double *r, int c0, int c1);

#endif
