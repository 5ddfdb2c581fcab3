/* Library-internal helpers shared by the host sources. */
#ifndef CLCONE_INTERNAL_H
#define CLCONE_INTERNAL_H

#include <clcone/clcone.h>

#if defined(__GNUC__)
#define CLCONE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLCONE_PRINTF(a, b)
#endif

/* Fills err (if non-NULL) with code and a message; returns code, for `return clc_fail(err, ...)`. */
clcone_status clc_fail(clcone_error *err, clcone_status code,
                          const char *fmt, ...) CLCONE_PRINTF(3, 4);

/* Prefixes an already set message with context ("file.dat: ..."). */
void clc_error_prefix(clcone_error *err, const char *fmt, ...)
    CLCONE_PRINTF(2, 3);

/* Refuses a per-contact vector (q, a start) whose sum of squares passes limit / 64, limit being
 * the largest number of the precision it is measured in (FLT_MAX or DBL_MAX): the error measure
 * squares and sums it, and an overflowed sum would measure nothing. */
clcone_status clc_check_squares(const double *x, size_t n, double limit, const char *what, clcone_error *err);

/* Monotonic clock in milliseconds. */
double clc_now_ms(void);

/* Zeroed allocation, n * size checked for overflow; NULL only with err filled. */
void *clc_calloc(size_t n, size_t size, clcone_error *err,
                    const char *what);
/* The same, not zeroed: for large scratch written before it is read. */
void *clc_malloc(size_t n, size_t size, clcone_error *err, const char *what);

/* Whether 1-based iteration it measures the error; shared, so both backends stop alike (docs/architecture.md). */
int clc_is_check_iteration(const clcone_options *o, int it);
/* The general-block solvers' check schedule, without the first 100's window (docs/mujoco.md). */
int clc_is_block_check_iteration(const clcone_options *o, int it);
/* A public entry's NULL check of a needed pointer: CLCONE_EINVAL naming function and argument. */
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
/* Whether o->max_seconds (0: none) has passed or o->cancel is set (a cancel stops as the cap does). */
int clc_time_is_up(const clcone_options *o, double elapsed_ms);
/* Iterations of a multi-iteration kernel's next launch under the caps; 0 when none fits or cancelled. */
int clc_next_budget(const clcone_options *o, int last, int most, double last_ms, double elapsed_ms);
/* How long a device may run queued work unseen under a cap or cancel flag; INFINITY with neither. */
double clc_cap_slice_ms(const clcone_options *o);
/* The stopping rule at a check (error e, iteration it): records them in out; 1 when the solve stops. */
int clc_stop_rule(const clcone_options *o, int it, double e, double elapsed_ms, clcone_prob_result *out);
/* After the stopping rule let iteration it go on: stops out by the time cap when the next step, as long as
 * the last (step_ms; 0: none measured), would end past it, saying so; 1 when stopped. For steps that cannot
 * be cut short (a sparse factorization). */
int clc_step_passes_cap(const clcone_options *o, int it, double elapsed_ms, double step_ms,
                        clcone_prob_result *out);
/* What a backend gives the one iteration loop (core/iterate.c), each call on its own iterate. */
typedef struct clc_iter_ops {
    void *ctx;
    int nprob;   /* problems iterated together: a batch on the device, one on the reference */
    int prob0;   /* batch index of the first, for the history and progress */
    double t0_ms; /* when the solve's clock started (clc_now_ms); 0 = now */
    /* iteration it (1-based) of every problem still active */
    clcone_status (*step)(void *ctx, int it, clcone_error *err);
    /* errors[k] of every problem k with active[k], after iteration it */
    clcone_status (*measure)(void *ctx, int it, const int *active, double *errors, clcone_error *err);
    /* after a check that left problems running (NULL: none); changed: some problem stopped */
    clcone_status (*checked)(void *ctx, int it, const int *active, const double *errors, int changed,
                             clcone_error *err);
    /* waits for the iterations queued so far (NULL: step waits itself) */
    clcone_status (*sync)(void *ctx, clcone_error *err);
    /* makes *ms, the clock, the largest over processes sharing the solve, at checks; NULL: one process */
    clcone_status (*agree_ms)(void *ctx, double *ms, clcone_error *err);
    /* whether problem k, still running at error e after iteration it, stops for another method (NULL: never) */
    int (*hand_over)(void *ctx, int k, int it, double e);
    const int *skip; /* problems that do not run (NULL: every one runs) */
    int it0;         /* iterations done before this loop: the stop rule, history and progress count from it */
} clc_iter_ops;
/* Iterates until every problem stops by clc_stop_rule, checking on is_check; fills out[k]. */
clcone_status clc_iterate_on(const clc_iter_ops *ops, const clcone_options *o,
                                int (*is_check)(const clcone_options *o, int it), clcone_prob_result *out,
                                clcone_error *err);
/* clc_iterate_on on the shared schedule, clc_is_check_iteration. */
clcone_status clc_iterate(const clc_iter_ops *ops, const clcone_options *o, clcone_prob_result *out,
                             clcone_error *err);
/* Appends one check to h (no-op when h is NULL). */
void clc_history_add(clcone_history *h, int prob, int iter, double time_ms, double error);

/* The model whose solvers run m: soft is solved as ccp on W + R, q - a_ref; the rest as themselves. */
clcone_model clc_model_solved_as(clcone_model m);
/* Allocates res->items for nprob problems. */
clcone_status clc_result_init(clcone_result *res, int nprob, clcone_error *err);

/* Siconos's relative error from sums of squares of F, q, r, u (docs/formats.md section 2). */
double clc_scaled_error(double f2, double q2, double r2, double u2);

/* An upper estimate of the Coulomb error that rounding alone leaves in r over contacts [c0, c1) at
 * machine epsilon eps, and the largest friction there (*mu_max). */
double clc_coulomb_rounding_floor(const clcone_problem *p, const double *r, int c0, int c1, double eps,
                                  double *mu_max);

/* soft model (core/soft.c): option checks; R, a_ref from W's diagonal (3n) and gaps (NULL: 0);
 * the local problem W + R, q - a_ref allocated in out. */
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
