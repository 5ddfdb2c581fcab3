/* The device state of one batch solve (clc_dev_batch) and what the device
 * layer's files share about it: buffers, solver drivers, whole-problem kernels,
 * the body form and plans (which file holds what: docs/architecture.md). */
#ifndef CLCONE_DEV_BATCH_H
#define CLCONE_DEV_BATCH_H

#include "opencl/opencl.h"
#include "opencl/device_solve.h"
#include "core/body_form.h"

/* Buffers the whole-problem kernels keep besides their states. */
#define GROUP_BUFFERS 10

/* What the solvers need from a form, on the host, before upload. */
typedef struct clc_dev_host {
    int n, nprob;
    const int *prob_off;        /* nprob + 1 */
    const double *q, *mu;       /* 3n, n */
    double *omega_j;            /* Jacobi steps: 1 / D_c with D >= W */
    double *omega_gs;           /* Gauss-Seidel steps: 1 / lambda_max(W_cc) */
    double *Lmax;               /* per problem: max_c D_c >= lambda_max(W) */
    int ncolors, *color_ptr, *order;
} clc_dev_host;

/* The body form on the device (matrix-free W = J M^-1 J^T); nb = 0: local form, part NULL: whole scene. */
typedef struct clc_dev_body {
    int nb;
    cl_mem bptr, bc, bs, ca, cb, frame, arm, inv_mass, inv_inertia, dv, Wcc, Rd;
    cl_kernel k_gather, k_capply;
    const clcone_dev_part *part;
    void *halo;
} clc_dev_body;

/* What the hybrid asks of the multi-launch loop (opencl/handover.c): the
 * problems to stop for the host's second phase (hand_over, NULL: none),
 * and a loop that resumes some problems (skip the others) from iteration
 * it0 of a solve whose clock started at t0 (0: a new solve). */
typedef struct clc_dev_watch {
    int (*hand_over)(void *state, int k, int it, double e);
    void *state;
    const int *skip;
    int it0;
    double t0;
} clc_dev_watch;

/* One batch on the device: options, per-contact vectors, per-problem flags and sums, operator, staging. */
struct clc_dev_batch {
    clcone_context *c;
    const clcone_options *o;
    int n, nprob, model, facets, inner;
    cl_mem q, mu, prob, prob_off, active, r, w, terms, sums;
    cl_kernel k_resid, k_reduce;
    int *active_h;
    double *sums_h, t0;
    clcone_result *res;  /* of the solve under way */
    clc_dev_host h;
    /* local form */
    const clcone_problem *p;
    cl_mem row_ptr, col, W;
    cl_kernel k_mv;
    clc_dev_body body;
    /* whole-problem kernel, made at the first solve and kept; a solve resets only the states */
    cl_kernel k_group;
    cl_mem g_mem[GROUP_BUFFERS], g_state, g_err, g_L0, g_L, g_theta;
    /* 3n device reals: the start going up, the reactions coming back without blocking */
    void *stage;
    const clc_dev_watch *watch; /* the multi-launch loop's, NULL: none */
    /* local form: the host's second phase of each problem past the dense limit (NULL: not priced), set up at
     * its price and kept for the batch's life (its W's), analysed once (opencl/handover.c) */
    struct ipm **ipm;
    int nipm;
};

/* dev_batch.c: the batch's life, its operator and its side of the iteration loop. */
void clc_release_kernel(cl_kernel *k);
void clc_dev_close(clc_dev_batch *d);
/* Opens what a batch keeps whatever its contacts: options, per-problem flags and sums, error kernels. */
clcone_status clc_dev_open(clc_dev_batch *d, clcone_context *c, int nprob, const clcone_options *o,
                              clcone_error *err);
/* Body form: dv = M^-1 J^T x. */
clcone_status clc_dev_body_dv(clc_dev_batch *d, cl_mem x, clcone_error *err);
/* A part's ghost bodies' dv from their owners, after a gather (nothing for a whole scene). */
clcone_status clc_dev_halo(clc_dev_batch *d, clcone_error *err);
/* w = W x with the form's operator. */
clcone_status clc_dev_apply(clc_dev_batch *d, cl_mem x, cl_mem w, clcone_error *err);
/* Starts a solve from r0, every problem active (but those d->watch skips), into d->res; the clock
 * starts here (or at d->watch's t0). */
clcone_status clc_dev_begin(clc_dev_batch *d, const double *r0, clcone_error *err);
/* Sums K per-contact terms per problem into sums (and host if not NULL); a part's over the whole scene. */
clcone_status clc_dev_reduce(clc_dev_batch *d, cl_mem terms, int K, cl_mem sums, double *host,
                                clcone_error *err);
/* A multi-launch solver's iteration (or its work after a check). */
typedef clcone_status (*clc_dev_step_fn)(clc_dev_batch *d, void *state, int it, clcone_error *err);
/* Runs step until every problem has stopped (core/iterate.c's loop); checked (may be NULL) after checks. */
clcone_status clc_dev_iterate(clc_dev_batch *d, clc_dev_step_fn step, clc_dev_step_fn checked,
                                 void *state, clcone_error *err);
/* Position of each diagonal block of the local form. */
clcone_status clc_dev_local_diag(clc_dev_batch *d, cl_mem *out, clcone_error *err);
/* APGD's starting Lipschitz estimates per problem, uploaded. */
clcone_status clc_dev_apgd_bounds(clc_dev_batch *d, cl_mem *L, clcone_error *err);
/* Host-side step sizes and colouring of a local-form batch. */
clcone_status clc_dev_local_host(const clcone_problem *p, clc_dev_host *h, clcone_error *err);
void clc_dev_host_free(clc_dev_host *h);

/* group_solve.c: the whole-problem kernels of kernels/group_solve.cl, chosen by its `solver` argument. */
enum clc_group_kind {
    CLCONE_GROUP_NONE = -1,  /* the solver has no whole-problem kernel */
    CLCONE_GROUP_JACOBI = 0, /* group_solve.cl's GROUP_JACOBI */
    CLCONE_GROUP_CGS = 1,    /* GROUP_CGS */
    CLCONE_GROUP_ACGS = 2,   /* GROUP_ACGS */
    CLCONE_GROUP_APGD = 3    /* its own kernel, group_apgd_local */
};
/* A multi-launch solver's loop on an opened, started batch (r in d->r). */
typedef clcone_status (*clc_dev_loop_fn)(clc_dev_batch *d, clcone_error *err);
/* The one way a device solver runs: r up, `group`'s whole-problem kernel if the batch fits, else loop. */
clcone_status clc_dev_solve(clc_dev_batch *d, double *r, enum clc_group_kind group,
                               clc_dev_loop_fn loop, clcone_error *err);
/* For another program's whole-problem kernel (newton.cl): its state buffers, limits and launches. */
clcone_status clc_group_alloc_states(clc_dev_batch *d, clcone_error *err);
/* Whether a local-form batch is solved by the whole-problem kernels, and their largest problem on c. */
int clc_group_fits(const clc_dev_batch *d);
int clc_group_max_contacts(const clcone_context *c);
/* The batch colouring regrouped per problem: problem p's colours are slots [pcol[p], pcol[p + 1]) of gptr. */
clcone_status clc_group_colors(const clc_dev_host *h, int **pcol_out, int **gptr_out, int **gorder_out,
                                  clcone_error *err);
clcone_status clc_group_set_limits(clc_dev_batch *d, clcone_error *err);
clcone_status clc_group_loop(clc_dev_batch *d, cl_kernel k, const char *name, int restart, double *r,
                              clcone_error *err);

/* handover.c: the hybrid's hand-over to the host's Newton (float) and second phase (past the dense Newton). */
/* Releases the second phases' setups (d->ipm). */
void clc_handover_close(clc_dev_batch *d);
/* Whether the hybrid's switch stops problems: clc_device_hybrid_switches at the batch's tolerance and model. */
int clc_hybrid_switches(const clc_dev_batch *d);
/* Each problem's price in sweeps (0: not handed over): those without dense scratch in off (off NULL: every
 * problem), within the dense limit the host's Newton's, past it the second phase's; 0 where a contact without
 * friction keeps the interior point out. */
clcone_status clc_handover_prices(clc_dev_batch *d, const cl_ulong *off, double *price, clcone_error *err);
/* Problem p from r at its iteration in d->res on the host (s: its status): within the dense limit its Newton in
 * double, past it the second phase, or (second: that phase has run) the sparse Newton for good; 1 where the
 * second phase stopped above tol within the caps, for the device's sweeps to go on from r. */
int clc_handover_run(clc_dev_batch *d, int p, int second, double *r, clcone_status *s, clcone_error *err);
/* The price in sweeps of the host's sparse Newton for problem p's sweeps after its second phase stalled: coulomb
 * past the dense limit; else 0 (the sweeps alone). */
double clc_handover_newton_price(const clc_dev_batch *d, int p);
/* The hybrid on the multi-launch loop: `sweeps` watched by the switch, the problems it stops to the host's
 * Newton or second phase, the sweeps again where that gives up or stalls. */
clcone_status clc_handover_loop(clc_dev_batch *d, clc_dev_fn *sweeps, double *r, clcone_error *err);

/* dev_body.c: the body form's host side. */
typedef struct clc_body_host {
    int *ca, *cb;
    signed char *bs;
    double *frame, *arm, *q, *mu, *Wcc, *inv_mass, *inv_inertia;
    double *R, *aref;   /* soft model's regulariser (0 otherwise) */
    int prob_off[2];
} clc_body_host;
void clc_body_host_free(clc_body_host *b);
/* Per-contact frame, arms, q, W_cc and step sizes into b and h; counts (may be NULL) for mass splitting. */
clcone_status clc_body_prepare(const clcone_scene *s, const clc_body_csr *L, const int *counts,
                                  const clcone_options *o, clc_body_host *b, clc_dev_host *h,
                                  clcone_error *err);
/* The colouring by shared moving bodies into h. */
clcone_status clc_body_colors(const clcone_scene *s, const clc_body_csr *L, const clc_body_host *b,
                                 clc_dev_host *h, clcone_error *err);
/* 1/2 r'(W + R)r + q'r by one more operator product on the device (a part's: the whole scene's). */
clcone_status clc_body_cost(clc_dev_batch *d, const double *r, const double *q, double *cost,
                               clcone_error *err);

#endif
