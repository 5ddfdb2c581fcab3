/* Device solvers (OpenCL): projected Jacobi, coloured Gauss-Seidel and
 * APGD, on local-form batches (W in block-CSR) and on body-form scenes
 * (matrix-free: W x = J M^-1 J^T x by a per-body gather and a per-contact
 * Jacobian product). Both forms provide the operator x -> W x; Jacobi,
 * APGD and the error measure only use that. Everything is uploaded once; inside an
 * iteration the host only enqueues kernels. Every o->check_every
 * iterations the per-problem error sums (4 reals per problem) come back,
 * converged problems are frozen (their `active` flag cleared) and the
 * loop ends when none is left, so each problem of a batch stops exactly
 * where it would stop alone. */
#include "opencl/opencl.h"
#include "ref/reference.h"
#include "core/body_form.h"
#include "cone.h"
#include "local_solve.h"
#include "jacobian.h"
#include "schedule.h"
#include "core/analysis.h"
#include "opencl/device_solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Buffers the whole-problem kernels keep besides their states. */
#define GROUP_BUFFERS 8

/* What the solvers need from a form, on the host, before upload. */
typedef struct dev_host {
    int n, nprob;
    const int *prob_off;        /* nprob + 1 */
    const double *q, *mu;       /* 3n, n */
    double *omega_j;            /* Jacobi steps: 1 / D_c with D >= W */
    double *omega_gs;           /* Gauss-Seidel steps: 1 / lambda_max(W_cc) */
    double *Lmax;               /* per problem: max_c D_c >= lambda_max(W) */
    int ncolors, *color_ptr, *order;
} dev_host;

/* State shared by the device solvers of one batch. */
typedef struct dev_local {
    clcone_context *c;
    const clcone_options *o;
    int n, nprob, model, facets, inner;
    cl_mem q, mu, prob, prob_off, active, r, w, terms, sums;
    cl_kernel k_resid, k_reduce;
    int *active_h;
    double *sums_h, t0;
    clcone_result *res;
    dev_host h;
    /* local form */
    const clcone_problem *p;
    cl_mem row_ptr, col, W;
    cl_kernel k_mv;
    /* body form */
    int nb;
    cl_mem bptr, bc, bs, ca, cb, frame, arm, inv_mass, inv_inertia, dv, Wcc, Rd;
    cl_kernel k_gather, k_capply;
    /* whole-problem kernel: made, with its arguments, at the first solve
     * and kept for the next; a solve resets only the states (and APGD's
     * L and theta) */
    cl_kernel k_group;
    cl_mem g_mem[GROUP_BUFFERS], g_state, g_err, g_L0, g_L, g_theta;
    /* 3n reals in the device precision: the start going up and the
     * reactions coming back without blocking */
    void *stage;
} dev_local;

static void release_kernel(cl_kernel *k)
{
    if (*k) clReleaseKernel(*k);
    *k = NULL;
}

static void dev_close(dev_local *d)
{
    cl_mem *mems[] = {&d->row_ptr, &d->col, &d->W, &d->q, &d->mu, &d->prob, &d->prob_off,
                      &d->active, &d->r, &d->w, &d->terms, &d->sums, &d->bptr, &d->bc, &d->bs,
                      &d->ca, &d->cb, &d->frame, &d->arm, &d->inv_mass, &d->inv_inertia, &d->dv,
                      &d->Wcc, &d->Rd};
    cl_kernel *ks[] = {&d->k_resid, &d->k_reduce, &d->k_mv, &d->k_gather, &d->k_capply, &d->k_group};
    cl_mem *gmems[] = {&d->g_state, &d->g_err, &d->g_L0, &d->g_L, &d->g_theta};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clcone_buf_free(d->c, mems[i]);
    for (size_t i = 0; i < sizeof gmems / sizeof gmems[0]; ++i) clcone_buf_free(d->c, gmems[i]);
    for (int i = 0; i < GROUP_BUFFERS; ++i) clcone_buf_free(d->c, &d->g_mem[i]);
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) release_kernel(ks[i]);
    free(d->active_h);
    free(d->sums_h);
    free(d->stage);
    free(d->h.omega_j);
    free(d->h.omega_gs);
    free(d->h.Lmax);
    free(d->h.color_ptr);
    free(d->h.order);
}

/* Body form: dv = M^-1 J^T x. */
static clcone_status dev_body_dv(dev_local *d, cl_mem x, clcone_error *err)
{
    clcone_status s = SET_ARGS(d->k_gather, "body_gather", err, KI(d->nb), KM(d->bptr), KM(d->bc), KM(d->bs),
                               KM(d->frame), KM(d->arm), KM(d->inv_mass), KM(d->inv_inertia), KM(x), KM(d->dv));
    return s ? s : clcone_run(d->c, d->k_gather, (size_t)d->nb, 0, "body_gather", err);
}

/* w = W x with the form's operator. */
static clcone_status dev_apply(dev_local *d, cl_mem x, cl_mem w, clcone_error *err)
{
    clcone_status s;
    if (!d->nb)
        return (s = SET_ARGS(d->k_mv, "matvec_local", err, KI(d->n), KM(d->row_ptr), KM(d->col), KM(d->W), KM(x),
                             KM(w)))
                   ? s
                   : clcone_run(d->c, d->k_mv, (size_t)d->n, 0, "matvec_local", err);
    if ((s = dev_body_dv(d, x, err))
        || (s = SET_ARGS(d->k_capply, "body_contact_apply", err, KI(d->n), KM(d->ca), KM(d->cb), KM(d->frame),
                         KM(d->arm), KM(d->dv), KM(d->Rd), KM(x), KM(w))))
        return s;
    return clcone_run(d->c, d->k_capply, (size_t)d->n, 0, "body_contact_apply", err);
}

/* What a plan keeps whatever its contacts: the options, the per-problem
 * flags and error sums, the error kernels. The arrays sized by the
 * contacts come with each form (plan_size). */
static clcone_status dev_open(dev_local *d, clcone_context *c, int nprob, const clcone_options *o,
                              clcone_error *err)
{
    clcone_status s;
    d->c = c;
    d->o = o;
    d->nprob = nprob;
    d->model = (int)o->model;
    d->facets = o->facets;
    d->inner = o->fit == CLCONE_FIT_INNER;
    d->active_h = clcone_calloc((size_t)nprob, sizeof *d->active_h, err, "active flags");
    d->sums_h = clcone_calloc((size_t)nprob * 4, sizeof *d->sums_h, err, "problem sums");
    if (!d->active_h || !d->sums_h) return CLCONE_ENOMEM;
    if ((s = clcone_buf_alloc(c, sizeof(int) * (size_t)nprob, &d->active, err))
        || (s = clcone_buf_alloc(c, 4 * (size_t)nprob * c->real_size, &d->sums, err))
        || (s = clcone_kernel(c, "residual_terms", &d->k_resid, err)))
        return s;
    return clcone_kernel(c, "reduce_rows", &d->k_reduce, err);
}

/* Starts a solve from r0 with every problem active; the clock starts here,
 * after every upload that does not change between solves. Nothing here
 * waits for the device: the start goes up from the staging area. */
static clcone_status dev_begin(dev_local *d, const double *r0, clcone_result *res, clcone_error *err)
{
    clcone_status s;
    cl_int e;
    d->res = res;
    for (int k = 0; k < d->nprob; ++k) d->active_h[k] = 1;
    d->t0 = clcone_now_ms();
    if ((s = clcone_stage_reals(d->c, "warm start of contact", 3, r0, 3 * (size_t)d->n, d->stage, err))) return s;
    e = clEnqueueWriteBuffer(d->c->queue, d->r, CL_FALSE, 0, 3 * (size_t)d->n * d->c->real_size, d->stage, 0, NULL,
                             NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(d->c->queue, d->active, CL_FALSE, 0, sizeof(int) * (size_t)d->nprob, d->active_h, 0,
                                 NULL, NULL);
    return e == CL_SUCCESS ? CLCONE_OK : clcone_cl_fail(err, e, "clEnqueueWriteBuffer(start)");
}

/* Sums K per-contact terms per problem into d->sums_h (read back). */
static clcone_status dev_reduce(dev_local *d, cl_mem terms, int K, cl_mem sums, double *host,
                                clcone_error *err)
{
    clcone_status s = clcone_reduce_rows(d->c, d->k_reduce, d->nprob, d->prob_off, K, terms, sums, err);
    if (s) return s;
    return host ? clcone_read_reals(d->c, sums, host, (size_t)d->nprob * (size_t)K, err) : CLCONE_OK;
}

/* The device's side of the one iteration loop (core/iterate.c): a
 * solver's iteration as launches, the errors of a check as the residual
 * kernel and one per-problem sum read back, and the problems the loop
 * stopped frozen through d->active. */
typedef clcone_status (*dev_step_fn)(dev_local *d, void *state, int it, clcone_error *err);

typedef struct dev_loop {
    dev_local *d;
    dev_step_fn step, checked;
    void *state;
} dev_loop;

static clcone_status loop_step(void *ctx, int it, clcone_error *err)
{
    dev_loop *L = ctx;
    return L->step(L->d, L->state, it, err);
}

static clcone_status loop_measure(void *ctx, int it, const int *active, double *errors, clcone_error *err)
{
    dev_local *d = ((dev_loop *)ctx)->d;
    clcone_status s;
    (void)it;
    if ((s = dev_apply(d, d->r, d->w, err))
        || (s = SET_ARGS(d->k_resid, "residual_terms", err, KI(d->n), KM(d->q), KM(d->mu), KM(d->r), KM(d->w),
                         KM(d->terms), KI(d->model), KI(d->facets), KI(d->inner)))
        || (s = clcone_run(d->c, d->k_resid, (size_t)d->n, 0, "residual_terms", err))
        || (s = dev_reduce(d, d->terms, 4, d->sums, d->sums_h, err)))
        return s;
    for (int k = 0; k < d->nprob; ++k) {
        const double *t = d->sums_h + 4 * k;
        if (active[k]) errors[k] = clcone_scaled_error(t[0], t[1], t[2], t[3]);
    }
    return CLCONE_OK;
}

static clcone_status loop_checked(void *ctx, int it, const int *active, const double *errors, int changed,
                                  clcone_error *err)
{
    dev_loop *L = ctx;
    dev_local *d = L->d;
    (void)errors; /* the device decides on its own sums */
    if (changed) {
        cl_int e;
        memcpy(d->active_h, active, sizeof(int) * (size_t)d->nprob);
        e = clEnqueueWriteBuffer(d->c->queue, d->active, CL_TRUE, 0, sizeof(int) * (size_t)d->nprob, d->active_h, 0,
                                 NULL, NULL);
        if (e != CL_SUCCESS) return clcone_cl_fail(err, e, "clEnqueueWriteBuffer(active)");
    }
    return L->checked ? L->checked(d, L->state, it, err) : CLCONE_OK;
}

/* Runs step until every problem of the batch has stopped; checked (NULL:
 * none) runs after each check that leaves problems running. */
static clcone_status dev_iterate(dev_local *d, dev_step_fn step, dev_step_fn checked, void *state, clcone_error *err)
{
    dev_loop L = {d, step, checked, state};
    clcone_iter_ops ops = {&L, d->nprob, 0, d->t0, loop_step, loop_measure, loop_checked};
    return clcone_iterate(&ops, d->o, d->res->items, err);
}

/* Jacobi's launches: per parity p, the product kernel reading it_buf[p]
 * and the step writing it_buf[1 - p], arguments set once; the body form
 * fuses w = W r into the step (body_jacobi_step), two launches an
 * iteration. */
typedef struct dev_jacobi_state {
    cl_mem it_buf[2];
    cl_kernel kw[2], ks[2];
    const char *wname, *sname;
    int cur;
} dev_jacobi_state;

static clcone_status jacobi_step(dev_local *d, void *state, int it, clcone_error *err)
{
    dev_jacobi_state *J = state;
    clcone_status s;
    (void)it;
    if ((s = clcone_run(d->c, J->kw[J->cur], (size_t)(d->nb ? d->nb : d->n), 0, J->wname, err))
        || (s = clcone_run(d->c, J->ks[J->cur], (size_t)d->n, 0, J->sname, err)))
        return s;
    J->cur ^= 1;
    d->r = J->it_buf[J->cur];
    return CLCONE_OK;
}

static clcone_status dev_jacobi(dev_local *d, clcone_error *err)
{
    clcone_context *c = d->c;
    cl_mem om = NULL;
    dev_jacobi_state J = {{d->r, NULL}, {NULL, NULL}, {NULL, NULL},
                          d->nb ? "body_gather" : "matvec_local", d->nb ? "body_jacobi_step" : "jacobi_step", 0};
    cl_mem *it_buf = J.it_buf;
    cl_kernel *kw = J.kw, *ks = J.ks;
    const char *wname = J.wname, *sname = J.sname;
    clcone_status s;
    if ((s = clcone_buf_reals(c, "Jacobi step size of contact", 1, d->h.omega_j, (size_t)d->n, &om, err))
        || (s = clcone_buf_alloc(c, 3 * (size_t)d->n * c->real_size, &it_buf[1], err)))
        goto out;
    for (int p = 0; p < 2; ++p) {
        if ((s = clcone_kernel(c, wname, &kw[p], err)) || (s = clcone_kernel(c, sname, &ks[p], err))) goto out;
        if (d->nb)
            s = SET_ARGS(kw[p], wname, err, KI(d->nb), KM(d->bptr), KM(d->bc), KM(d->bs), KM(d->frame), KM(d->arm),
                         KM(d->inv_mass), KM(d->inv_inertia), KM(it_buf[p]), KM(d->dv))
                    ? s
                    : SET_ARGS(ks[p], sname, err, KI(d->n), KM(d->ca), KM(d->cb), KM(d->frame), KM(d->arm),
                               KM(d->dv), KM(d->Rd), KM(d->q), KM(d->mu), KM(om), KM(d->prob), KM(d->active),
                               KM(it_buf[p]), KM(it_buf[1 - p]), KI(d->model), KI(d->facets), KI(d->inner));
        else
            s = SET_ARGS(kw[p], wname, err, KI(d->n), KM(d->row_ptr), KM(d->col), KM(d->W), KM(it_buf[p]), KM(d->w))
                    ? s
                    : SET_ARGS(ks[p], sname, err, KI(d->n), KM(d->q), KM(d->mu), KM(om), KM(d->prob), KM(d->active),
                               KM(it_buf[p]), KM(d->w), KM(it_buf[1 - p]), KI(d->model), KI(d->facets),
                               KI(d->inner));
        if (s) goto out;
    }
    s = dev_iterate(d, jacobi_step, NULL, &J, err);
out:
    if (J.cur) {
        /* the iterate back into the plan's own buffer */
        size_t bytes = 3 * (size_t)d->n * c->real_size;
        cl_int e = clEnqueueCopyBuffer(c->queue, it_buf[1], it_buf[0], 0, 0, bytes, 0, NULL, NULL);
        if (!s && e != CL_SUCCESS) s = clcone_cl_fail(err, e, "clEnqueueCopyBuffer(reactions)");
    }
    d->r = it_buf[0];
    if (!s) {
        cl_int e = clFinish(c->queue);
        if (e != CL_SUCCESS) s = clcone_cl_fail(err, e, "clFinish");
    }
    clcone_buf_free(c, &om);
    clcone_buf_free(c, &it_buf[1]);
    for (int p = 0; p < 2; ++p) {
        release_kernel(&kw[p]);
        release_kernel(&ks[p]);
    }
    return s;
}

/* Position of each diagonal block of the local form, for the kernels
 * that take W_cc out of the block rows. */
static clcone_status local_diag(dev_local *d, cl_mem *out, clcone_error *err)
{
    const clcone_problem *p = d->p;
    int *diag = clcone_calloc((size_t)p->n, sizeof *diag, err, "diagonal blocks");
    clcone_status s;
    if (!diag) return CLCONE_ENOMEM;
    for (int c = 0; c < p->n; ++c)
        for (int b = p->row_ptr[c]; b < p->row_ptr[c + 1]; ++b)
            if (p->col[b] == c) diag[c] = b;
    s = clcone_buf_ints(d->c, diag, (size_t)p->n, out, err);
    free(diag);
    return s;
}

/* What a coloured Gauss-Seidel sweep launches with (CGS and ACGS): the
 * colour order, the diagonal block positions (local form), the steps and
 * the kernel. */
typedef struct dev_sweep {
    cl_mem ord, dg, om;
    cl_kernel k;
    const char *name;
} dev_sweep;

static void sweep_close(dev_local *d, dev_sweep *w)
{
    clcone_buf_free(d->c, &w->ord);
    clcone_buf_free(d->c, &w->dg);
    clcone_buf_free(d->c, &w->om);
    release_kernel(&w->k);
}

static clcone_status sweep_open(dev_local *d, dev_sweep *w, clcone_error *err)
{
    clcone_status s;
    memset(w, 0, sizeof *w);
    w->name = d->nb ? "cgs_body" : "cgs_local";
    if ((!d->nb && (s = local_diag(d, &w->dg, err)))
        || (s = clcone_buf_ints(d->c, d->h.order, (size_t)d->n, &w->ord, err))
        || (s = clcone_buf_reals(d->c, "Gauss-Seidel step size of contact", 1, d->h.omega_gs, (size_t)d->n, &w->om,
                                 err))
        || (s = clcone_kernel(d->c, w->name, &w->k, err)))
        return s;
    return CLCONE_OK;
}

/* Sweep number `it` over every colour of r in place (body form: d->dv
 * must be M^-1 J^T r, and is kept so). */
static clcone_status sweep_run(dev_local *d, dev_sweep *w, cl_mem r, int it, clcone_error *err)
{
    const int *cptr = d->h.color_ptr;
    clcone_status s;
    for (int col = 0; col < d->h.ncolors; ++col) {
        int start = cptr[col], count = cptr[col + 1] - cptr[col];
        if (d->nb)
            s = SET_ARGS(w->k, w->name, err, KI(start), KI(count), KM(w->ord), KM(d->ca), KM(d->cb), KM(d->frame),
                         KM(d->arm), KM(d->Wcc), KM(d->Rd), KM(d->q), KM(d->mu), KM(w->om), KM(d->prob), KM(d->active),
                         KM(d->inv_mass), KM(d->inv_inertia), KM(r), KM(d->dv), KI(d->model), KI(d->facets),
                         KI(d->inner), KI(it));
        else
            s = SET_ARGS(w->k, w->name, err, KI(start), KI(count), KM(w->ord), KM(d->row_ptr), KM(d->col), KM(d->W),
                         KM(w->dg), KM(d->q), KM(d->mu), KM(w->om), KM(d->prob), KM(d->active), KM(r),
                         KI(d->model), KI(d->facets), KI(d->inner), KI(it));
        if (s || (s = clcone_run(d->c, w->k, (size_t)count, 0, w->name, err))) return s;
    }
    return CLCONE_OK;
}

static clcone_status cgs_step(dev_local *d, void *state, int it, clcone_error *err)
{
    return sweep_run(d, state, d->r, it, err);
}

static clcone_status dev_cgs(dev_local *d, clcone_error *err)
{
    dev_sweep w;
    clcone_status s;
    if (d->nb && (s = dev_apply(d, d->r, d->w, err))) return s; /* dv = M^-1 J^T r0 */
    if ((s = sweep_open(d, &w, err))) goto out;
    /* each check recomputes dv = M^-1 J^T r exactly (loop_measure); the
     * sweeps go on from it, so the incremental updates never drift far */
    s = dev_iterate(d, cgs_step, NULL, &w, err);
out:
    sweep_close(d, &w);
    return s;
}

/* One ACGS iteration: the sweep from y (in work), then the restart sum
 * and the extrapolation into d->r (x_k) and y. */
typedef struct dev_acgs_state {
    dev_sweep *w;
    cl_mem y, work, terms, sums;
    cl_kernel k_terms, k_mom, k_upd, k_obj, k_climbed, k_reset;
    size_t v3;
} dev_acgs_state;

static clcone_status acgs_step(dev_local *d, void *state, int it, clcone_error *err)
{
    dev_acgs_state *A = state;
    clcone_status s;
    cl_int e = clEnqueueCopyBuffer(d->c->queue, A->y, A->work, 0, 0, A->v3, 0, NULL, NULL);
    if (e != CL_SUCCESS) return clcone_cl_fail(err, e, "clEnqueueCopyBuffer(work)");
    if ((d->nb && (s = dev_body_dv(d, A->work, err))) /* dv = M^-1 J^T y */
        || (s = sweep_run(d, A->w, A->work, it, err))
        || (s = clcone_run(d->c, A->k_terms, (size_t)d->n, 0, "acgs_terms", err))
        || (s = dev_reduce(d, A->terms, 1, A->sums, NULL, err))
        || (s = clcone_run(d->c, A->k_mom, (size_t)d->nprob, 0, "acgs_momentum", err))
        || (s = clcone_run(d->c, A->k_upd, (size_t)d->n, 0, "acgs_update", err)))
        return s;
    return CLCONE_OK;
}

/* The function restart after a check, from the check's w = W x in d->w. */
static clcone_status acgs_checked(dev_local *d, void *state, int it, clcone_error *err)
{
    dev_acgs_state *A = state;
    cl_int e = clSetKernelArg(A->k_climbed, 1, sizeof it, &it);
    clcone_status s;
    if (e != CL_SUCCESS) return clcone_cl_fail(err, e, "clSetKernelArg(acgs_climbed)");
    if ((s = clcone_run(d->c, A->k_obj, (size_t)d->n, 0, "acgs_objective", err))
        || (s = dev_reduce(d, A->terms, 1, A->sums, NULL, err))
        || (s = clcone_run(d->c, A->k_climbed, (size_t)d->nprob, 0, "acgs_climbed", err))
        || (s = clcone_run(d->c, A->k_reset, (size_t)d->n, 0, "acgs_reset", err)))
        return s;
    return CLCONE_OK;
}

/* Accelerated CGS (kernels/acgs.cl): d->r holds x_k, y the extrapolated
 * point, work the sweep from y; the body form regathers dv = M^-1 J^T y
 * before each sweep, so the sweeps never drift from y. */
static clcone_status dev_acgs(dev_local *d, clcone_error *err)
{
    clcone_context *c = d->c;
    size_t v3 = 3 * (size_t)d->n * c->real_size;
    dev_sweep w;
    cl_mem y = NULL, work = NULL, th = NULL, beta = NULL, terms = NULL, sums = NULL, last = NULL, reset = NULL;
    cl_kernel k_terms = NULL, k_mom = NULL, k_upd = NULL, k_obj = NULL, k_climbed = NULL, k_reset = NULL;
    size_t nz = (size_t)(d->n > d->nprob ? d->n : d->nprob);
    double *ones = clcone_calloc((size_t)d->nprob, sizeof *ones, err, "acgs momentum");
    double *zeros = clcone_calloc(nz, sizeof *zeros, err, "acgs terms");
    int it0 = 0; /* acgs_checked sets the iteration */
    clcone_status s = CLCONE_ENOMEM;
    cl_int e;
    memset(&w, 0, sizeof w);
    if (!ones || !zeros) goto out;
    for (int p = 0; p < d->nprob; ++p) ones[p] = 1.0;
    /* beta and terms are written by kernels before any read, yet are
     * created from the host: Oclgrind's --uninitialized keeps a released
     * buffer's shadow, size included, for the next buffer in its slot
     * (only a whole-buffer host write resets it), so after a plan's
     * warm-up, terms in the slot of the sweep's n-int buffer read its
     * second half as unwritten in double, and beta in the int reset's. */
    if ((s = sweep_open(d, &w, err))
        || (s = clcone_buf_alloc(c, v3, &y, err)) || (s = clcone_buf_alloc(c, v3, &work, err))
        || (s = clcone_buf_reals(c, "acgs theta of problem", 1, ones, (size_t)d->nprob, &th, err))
        || (s = clcone_buf_alloc(c, (size_t)d->nprob * c->real_size, &last, err))
        || (s = clcone_buf_alloc(c, (size_t)d->nprob * sizeof(int), &reset, err))
        || (s = clcone_buf_reals(c, "acgs beta", 1, zeros, (size_t)d->nprob, &beta, err))
        || (s = clcone_buf_reals(c, "acgs terms", 1, zeros, (size_t)d->n, &terms, err))
        || (s = clcone_buf_alloc(c, (size_t)d->nprob * c->real_size, &sums, err))
        || (s = clcone_kernel(c, "acgs_terms", &k_terms, err))
        || (s = clcone_kernel(c, "acgs_momentum", &k_mom, err))
        || (s = clcone_kernel(c, "acgs_update", &k_upd, err))
        || (s = clcone_kernel(c, "acgs_objective", &k_obj, err))
        || (s = clcone_kernel(c, "acgs_climbed", &k_climbed, err))
        || (s = clcone_kernel(c, "acgs_reset", &k_reset, err)))
        goto out;
    e = clEnqueueCopyBuffer(c->queue, d->r, y, 0, 0, v3, 0, NULL, NULL); /* y = x_0 */
    if (e != CL_SUCCESS) {
        s = clcone_cl_fail(err, e, "clEnqueueCopyBuffer(y)");
        goto out;
    }
    if ((s = SET_ARGS(k_terms, "acgs_terms", err, KI(d->n), KM(y), KM(work), KM(d->r), KM(terms)))
        || (s = SET_ARGS(k_mom, "acgs_momentum", err, KI(d->nprob), KM(d->active), KM(th), KM(beta), KM(sums)))
        || (s = SET_ARGS(k_upd, "acgs_update", err, KI(d->n), KM(d->prob), KM(d->active), KM(d->mu), KM(beta),
                         KM(work), KM(d->r), KM(y)))
        || (s = SET_ARGS(k_obj, "acgs_objective", err, KI(d->n), KM(d->q), KM(d->r), KM(d->w), KM(terms)))
        || (s = SET_ARGS(k_climbed, "acgs_climbed", err, KI(d->nprob), KI(it0), KM(d->active), KM(sums), KM(last),
                         KM(th), KM(reset)))
        || (s = SET_ARGS(k_reset, "acgs_reset", err, KI(d->n), KM(d->prob), KM(reset), KM(d->mu), KM(d->r), KM(y))))
        goto out;
    {
        dev_acgs_state A = {&w, y, work, terms, sums, k_terms, k_mom, k_upd, k_obj, k_climbed, k_reset, v3};
        s = dev_iterate(d, acgs_step, acgs_checked, &A, err);
    }
out:
    {
        cl_mem *mems[] = {&y, &work, &th, &beta, &terms, &sums, &last, &reset};
        cl_kernel *ks[] = {&k_terms, &k_mom, &k_upd, &k_obj, &k_climbed, &k_reset};
        for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clcone_buf_free(c, mems[i]);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) release_kernel(ks[i]);
    }
    sweep_close(d, &w);
    free(ones);
    free(zeros);
    return s;
}

#define APGD_TERMS CONE_APGD_TERMS

/* APGD's starting Lipschitz estimates per problem: max_c D_c >= lambda_max(W). */
static double *apgd_start_L(const dev_local *d, clcone_error *err)
{
    double *Lh = clcone_calloc((size_t)d->nprob, sizeof *Lh, err, "APGD steps");
    if (Lh)
        for (int k = 0; k < d->nprob; ++k) Lh[k] = d->h.Lmax[k] > 0 ? d->h.Lmax[k] : 1.0;
    return Lh;
}

static clcone_status apgd_bounds(dev_local *d, cl_mem *L, clcone_error *err)
{
    double *Lh = apgd_start_L(d, err);
    clcone_status s;
    if (!Lh) return CLCONE_ENOMEM;
    s = clcone_buf_reals(d->c, "APGD step bound of problem", 1, Lh, (size_t)d->nprob, L, err);
    free(Lh);
    return s;
}

/* What APGD's iterations and checks launch. */
typedef struct dev_apgd_state {
    int coulomb;
    cl_mem xn, wxn, wx, qe, y, wy, th, terms, sums, acc;
    /* k_terms: apgd_terms, or on the body form body_apply_apgd_terms (the
     * W product's last pass and the terms); k_upd: apgd_update_candidate */
    cl_kernel k_cand, k_terms, k_acc, k_mom, k_upd, k_shift;
    int *acc_h;     /* the accept flags, read between tries */
    int cand_ready; /* xn holds the first candidate (made by k_upd) */
} dev_apgd_state;

/* Whether a further backtracking try has work: some active problem's
 * candidate was refused. Only the candidate kernel skips accepted
 * problems; a try's W product, terms and sum would redo the accepted
 * ones' work (the same bits), so reading the flags, one small transfer,
 * saves a whole W product in the usual iteration. */
static clcone_status apgd_try_needed(dev_local *d, dev_apgd_state *A, int *needed, clcone_error *err)
{
    cl_int e = clEnqueueReadBuffer(d->c->queue, A->acc, CL_TRUE, 0, sizeof(int) * (size_t)d->nprob, A->acc_h, 0,
                                   NULL, NULL);
    if (e != CL_SUCCESS) return clcone_cl_fail(err, e, "clEnqueueReadBuffer(APGD flags)");
    *needed = 0;
    for (int k = 0; k < d->nprob; ++k)
        if (d->active_h[k] && !A->acc_h[k]) *needed = 1;
    return CLCONE_OK;
}

static clcone_status apgd_step(dev_local *d, void *state, int it, clcone_error *err)
{
    dev_apgd_state *A = state;
    clcone_context *c = d->c;
    clcone_status s;
    (void)it;
    for (int t = 0; t < CONE_APGD_TRIES; ++t) {
        int needed = 1;
        if (t > 0 && (s = apgd_try_needed(d, A, &needed, err))) return s;
        if (!needed) break;
        if (((t > 0 || !A->cand_ready) && (s = clcone_run(c, A->k_cand, (size_t)d->n, 0, "apgd_candidate", err)))
            || (d->nb ? (s = dev_body_dv(d, A->xn, err)) : (s = dev_apply(d, A->xn, A->wxn, err)))
            || (s = clcone_run(c, A->k_terms, (size_t)d->n, 0, d->nb ? "body_apply_apgd_terms" : "apgd_terms", err))
            || (s = dev_reduce(d, A->terms, APGD_TERMS, A->sums, NULL, err))
            || (s = clcone_run(c, A->k_acc, (size_t)d->nprob, 0, "apgd_accept", err)))
            return s;
    }
    if ((s = clcone_run(c, A->k_mom, (size_t)d->nprob, 0, "apgd_momentum", err))
        || (s = clcone_run(c, A->k_upd, (size_t)d->n, 0, "apgd_update_candidate", err)))
        return s;
    A->cand_ready = 1;
    return CLCONE_OK;
}

/* coulomb: a new cone QP at each check, the shift from the current
 * velocities and the momentum reset (as the reference's apgd_checked). */
static clcone_status apgd_checked(dev_local *d, void *state, int it, clcone_error *err)
{
    dev_apgd_state *A = state;
    clcone_context *c = d->c;
    clcone_status s;
    cl_int e;
    double one = 1.0;
    float onef = 1.0f;
    if (!A->coulomb || !clcone_is_check_iteration(d->o, it)) return CLCONE_OK;
    A->cand_ready = 0; /* the shift below moves y and q_eff */
    if ((s = SET_ARGS(A->k_shift, "desaxce_shift", err, KI(d->n), KM(d->prob), KM(d->active), KM(d->q), KM(d->mu),
                      KM(A->wx), KM(d->r), KM(A->qe), KM(A->y), KM(A->wy)))
        || (s = clcone_run(c, A->k_shift, (size_t)d->n, 0, "desaxce_shift", err)))
        return s;
    e = clEnqueueFillBuffer(c->queue, A->th, c->prec == CLCONE_DOUBLE ? (void *)&one : (void *)&onef, c->real_size, 0,
                            (size_t)d->nprob * c->real_size, 0, NULL, NULL);
    return e == CL_SUCCESS ? CLCONE_OK : clcone_cl_fail(err, e, "clEnqueueFillBuffer(theta)");
}

static clcone_status dev_apgd(dev_local *d, clcone_error *err)
{
    clcone_context *c = d->c;
    size_t v3 = 3 * (size_t)d->n * c->real_size;
    cl_mem wx = NULL, y = NULL, wy = NULL, xn = NULL, wxn = NULL, qe = NULL, L = NULL, th = NULL,
           beta = NULL, acc = NULL, terms = NULL, sums = NULL;
    cl_kernel k_cand = NULL, k_terms = NULL, k_acc = NULL, k_mom = NULL, k_upd = NULL,
              k_shift = NULL;
    double *ones = clcone_calloc((size_t)d->nprob, sizeof *ones, err, "APGD momentum");
    int *zeros = clcone_calloc((size_t)d->nprob, sizeof *zeros, err, "APGD flags");
    int coulomb = d->model == CLCONE_MODEL_COULOMB;
    clcone_status s = CLCONE_ENOMEM;
    if (!ones || !zeros) goto out;
    for (int k = 0; k < d->nprob; ++k) ones[k] = 1.0;
    if ((s = clcone_buf_alloc(c, v3, &wx, err)) || (s = clcone_buf_alloc(c, v3, &y, err))
        || (s = clcone_buf_alloc(c, v3, &wy, err)) || (s = clcone_buf_alloc(c, v3, &xn, err))
        || (s = clcone_buf_alloc(c, v3, &wxn, err))
        || (s = clcone_buf_reals(c, "q of contact", 3, d->h.q, 3 * (size_t)d->n, &qe, err))
        || (s = apgd_bounds(d, &L, err))
        || (s = clcone_buf_reals(c, "APGD theta of problem", 1, ones, (size_t)d->nprob, &th, err))
        || (s = clcone_buf_reals(c, "APGD beta of problem", 1, ones, (size_t)d->nprob, &beta, err))
        || (s = clcone_buf_ints(c, zeros, (size_t)d->nprob, &acc, err))
        || (s = clcone_buf_alloc(c, APGD_TERMS * (size_t)d->n * c->real_size, &terms, err))
        || (s = clcone_buf_alloc(c, APGD_TERMS * (size_t)d->nprob * c->real_size, &sums, err))
        || (s = clcone_kernel(c, "apgd_candidate", &k_cand, err))
        || (s = clcone_kernel(c, d->nb ? "body_apply_apgd_terms" : "apgd_terms", &k_terms, err))
        || (s = clcone_kernel(c, "apgd_accept", &k_acc, err)) || (s = clcone_kernel(c, "apgd_momentum", &k_mom, err))
        || (s = clcone_kernel(c, "apgd_update_candidate", &k_upd, err))
        || (s = clcone_kernel(c, "desaxce_shift", &k_shift, err)))
        goto out;
    /* x = r (projected by the caller), wx = W x, y = x, wy = wx */
    if ((s = dev_apply(d, d->r, wx, err))) goto out;
    {
        cl_int e = clEnqueueCopyBuffer(c->queue, d->r, y, 0, 0, v3, 0, NULL, NULL);
        if (e == CL_SUCCESS) e = clEnqueueCopyBuffer(c->queue, wx, wy, 0, 0, v3, 0, NULL, NULL);
        if (e != CL_SUCCESS) {
            s = clcone_cl_fail(err, e, "clEnqueueCopyBuffer");
            goto out;
        }
    }
    if (coulomb
        && ((s = SET_ARGS(k_shift, "desaxce_shift", err, KI(d->n), KM(d->prob), KM(d->active), KM(d->q), KM(d->mu),
                          KM(wx), KM(d->r), KM(qe), KM(y), KM(wy)))
            || (s = clcone_run(c, k_shift, (size_t)d->n, 0, "desaxce_shift", err))))
        goto out;
    if ((s = SET_ARGS(k_cand, "apgd_candidate", err, KI(d->n), KM(d->prob), KM(d->active), KM(acc), KM(L), KM(y),
                      KM(wy), KM(qe), KM(d->mu), KM(xn)))
        || (s = d->nb ? SET_ARGS(k_terms, "body_apply_apgd_terms", err, KI(d->n), KM(d->ca), KM(d->cb), KM(d->frame),
                                 KM(d->arm), KM(d->dv), KM(d->Rd), KM(y), KM(wy), KM(qe), KM(d->r), KM(xn), KM(wxn),
                                 KM(terms))
                      : SET_ARGS(k_terms, "apgd_terms", err, KI(d->n), KM(y), KM(wy), KM(qe), KM(d->r), KM(xn),
                                 KM(wxn), KM(terms)))
        || (s = SET_ARGS(k_acc, "apgd_accept", err, KI(d->nprob), KM(d->active), KM(acc), KM(L), KM(sums)))
        || (s = SET_ARGS(k_mom, "apgd_momentum", err, KI(d->nprob), KM(d->active), KM(acc), KM(th), KM(beta), KM(L),
                         KM(sums)))
        || (s = SET_ARGS(k_upd, "apgd_update_candidate", err, KI(d->n), KM(d->prob), KM(d->active), KM(beta), KM(L),
                         KM(qe), KM(d->mu), KM(d->r), KM(wx), KM(xn), KM(wxn), KM(y), KM(wy))))
        goto out;
    {
        dev_apgd_state A = {coulomb, xn, wxn, wx, qe, y, wy, th, terms, sums, acc,
                            k_cand, k_terms, k_acc, k_mom, k_upd, k_shift, zeros, 0};
        s = dev_iterate(d, apgd_step, apgd_checked, &A, err);
    }
out:
    {
        cl_mem *mems[] = {&wx, &y, &wy, &xn, &wxn, &qe, &L, &th, &beta, &acc, &terms, &sums};
        cl_kernel *ks[] = {&k_cand, &k_terms, &k_acc, &k_mom, &k_upd, &k_shift};
        for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clcone_buf_free(c, mems[i]);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) release_kernel(ks[i]);
    }
    free(ones);
    free(zeros);
    return s;
}

/* Largest problem solved inside one work-group. Beyond it one problem
 * would leave the device's other compute units idle, and the
 * multi-launch loop is used. On a CPU device one work-item still beats
 * the multi-launch loop's launches at 12,000 contacts (POCL, 2 cores,
 * APGD 300 iterations: 503 ms against 724; CGS level); on a GPU a 64-lane
 * work-group holds far less of the device. */
#define GROUP_MAX_CONTACTS_CPU 16384
#define GROUP_MAX_CONTACTS_GPU 4096

/* Per-problem colour classes for group_solve_local: the batch colouring
 * (h->color_ptr, h->order) regrouped so that problem p's colours are
 * slots [pcol[p], pcol[p + 1]) of gptr, each slot listing its contacts of
 * that colour in index order. The colouring is greedy in index order, so
 * a problem's colours are those it gets alone. */
static clcone_status group_colors(const dev_host *h, int **pcol_out, int **gptr_out, int **gorder_out,
                                  clcone_error *err)
{
    int n = h->n, np = h->nprob;
    int *colour = clcone_calloc((size_t)n, sizeof *colour, err, "colours");
    int *pcol = clcone_calloc((size_t)np + 1, sizeof *pcol, err, "problem colours");
    int *gptr = NULL, *gorder = clcone_calloc((size_t)n, sizeof *gorder, err, "colour order"), *cursor = NULL;
    clcone_status s = CLCONE_ENOMEM;
    if (!colour || !pcol || !gorder) goto out;
    for (int k = 0; k < h->ncolors; ++k)
        for (int i = h->color_ptr[k]; i < h->color_ptr[k + 1]; ++i) colour[h->order[i]] = k;
    for (int p = 0; p < np; ++p) {
        int top = -1;
        for (int c = h->prob_off[p]; c < h->prob_off[p + 1]; ++c) top = colour[c] > top ? colour[c] : top;
        pcol[p + 1] = pcol[p] + top + 1;
    }
    gptr = clcone_calloc((size_t)pcol[np] + 1, sizeof *gptr, err, "colour offsets");
    cursor = clcone_calloc((size_t)pcol[np] + 1, sizeof *cursor, err, "colour cursors");
    if (!gptr || !cursor) goto out;
    for (int p = 0; p < np; ++p)
        for (int c = h->prob_off[p]; c < h->prob_off[p + 1]; ++c) gptr[pcol[p] + colour[c] + 1]++;
    for (int k = 0; k < pcol[np]; ++k) gptr[k + 1] += gptr[k];
    memcpy(cursor, gptr, sizeof *cursor * (size_t)pcol[np]);
    for (int p = 0; p < np; ++p)
        for (int c = h->prob_off[p]; c < h->prob_off[p + 1]; ++c) gorder[cursor[pcol[p] + colour[c]]++] = c;
    *pcol_out = pcol;
    *gptr_out = gptr;
    *gorder_out = gorder;
    pcol = gptr = gorder = NULL;
    s = CLCONE_OK;
out:
    free(colour);
    free(pcol);
    free(gptr);
    free(gorder);
    free(cursor);
    return s;
}

/* Whether a local-form batch is solved by the whole-problem kernels. */
static int group_fits(const dev_local *d)
{
    /* they check on the device and keep no history */
    if (d->nb || d->o->history) return 0;
    int most = d->c->info.is_gpu ? GROUP_MAX_CONTACTS_GPU : GROUP_MAX_CONTACTS_CPU;
    for (int k = 0; k < d->nprob; ++k)
        if (d->h.prob_off[k + 1] - d->h.prob_off[k] > most) return 0;
    return 1;
}

/* Launches of a whole-problem kernel whose arguments are set, the last
 * two being restart and the iteration budget, until every problem has
 * stopped: a growing number of iterations per launch; after each, the
 * states, errors and reactions come back in one wait, and the host
 * applies its time cap. Fills the results and r. */
/* The most iterations a launch of a whole-problem kernel runs: the host
 * sees the states, and applies the time cap, only between launches. */
#define GROUP_MAX_BUDGET (1 << 14)

static clcone_status group_loop(dev_local *d, cl_kernel k, const char *name, double *r, clcone_error *err)
{
    clcone_context *c = d->c;
    const clcone_options *o = d->o;
    int np = d->nprob, budget = 128, restart = 1;
    /* a GPU runs a problem's contacts on a warp's lanes; a CPU device
     * runs a work-group's items one after another, where every barrier
     * costs a pass over them, so one item per problem does the least */
    size_t lanes;
    size_t m = 3 * (size_t)d->n;
    int *state = clcone_calloc(2 * (size_t)np, sizeof *state, err, "problem states");
    void *errs_dev = clcone_calloc((size_t)np, c->real_size, err, "problem errors");
    double *errs = clcone_calloc((size_t)np, sizeof *errs, err, "problem errors");
    clcone_status s = CLCONE_ENOMEM;
    cl_uint nargs = 0;
    cl_int e;
    if (!state || !errs || !errs_dev) goto out;
    if ((s = clcone_kernel_lanes(c, k, name, c->info.is_gpu ? CONE_REDUCE_WG : 1, &lanes, err))) goto out;
    e = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    if (e != CL_SUCCESS || nargs < 2) {
        s = clcone_cl_fail(err, e, "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
        goto out;
    }
    for (;;) {
        int running = 0;
        double now, launched = clcone_now_ms();
        e = clSetKernelArg(k, nargs - 2, sizeof restart, &restart);
        if (e == CL_SUCCESS) e = clSetKernelArg(k, nargs - 1, sizeof budget, &budget);
        if (e != CL_SUCCESS) {
            s = clcone_cl_fail(err, e, "clSetKernelArg(restart, budget)");
            goto out;
        }
        if ((s = clcone_run(c, k, (size_t)np * lanes, lanes, name, err))) goto out;
        e = clEnqueueReadBuffer(c->queue, d->g_state, CL_FALSE, 0, sizeof(int) * 2 * (size_t)np, state, 0, NULL,
                                NULL);
        if (e == CL_SUCCESS)
            e = clEnqueueReadBuffer(c->queue, d->g_err, CL_FALSE, 0, (size_t)np * c->real_size, errs_dev, 0, NULL,
                                    NULL);
        if (e == CL_SUCCESS)
            e = clEnqueueReadBuffer(c->queue, d->r, CL_FALSE, 0, m * c->real_size, d->stage, 0, NULL, NULL);
        if (e == CL_SUCCESS) e = clFinish(c->queue);
        if (e != CL_SUCCESS) {
            s = clcone_cl_fail(err, e, "reading the problem states");
            goto out;
        }
        restart = 0;
        now = clcone_now_ms();
        clcone_unstage_reals(c, errs_dev, errs, (size_t)np);
        for (int p = 0; p < np; ++p) {
            clcone_prob_result *out = &d->res->items[p];
            if (state[2 * p + 1] == CONE_GROUP_RUNNING) running++;
            else if (out->time_ms == 0) out->time_ms = now - d->t0;
            if (o->progress && state[2 * p] > 0) o->progress(o->progress_user, p, state[2 * p], errs[p]);
        }
        if (!running) break;
        /* the time cap is the batch's: its problems share the launches */
        budget = clcone_next_budget(o, budget, GROUP_MAX_BUDGET, now - launched, now - d->t0);
        if (budget == 0) {
            for (int p = 0; p < np; ++p)
                if (state[2 * p + 1] == CONE_GROUP_RUNNING) d->res->items[p].time_ms = now - d->t0;
            break;
        }
    }
    clcone_unstage_reals(c, d->stage, r, m);
    for (int p = 0; p < np; ++p) {
        clcone_prob_result *out = &d->res->items[p];
        int it = state[2 * p];
        out->iters = it;
        out->error = errs[p];
        clcone_stop(out,
                    state[2 * p + 1] == CONE_GROUP_CONVERGED  ? CLCONE_STOP_TOL
                    : state[2 * p + 1] == CONE_GROUP_DIVERGED ? CLCONE_STOP_NONFINITE
                    : state[2 * p + 1] == CONE_GROUP_MAXITER  ? CLCONE_STOP_ITERS
                                                              : CLCONE_STOP_TIME, /* still running */
                    o, it);
    }
out:
    free(state);
    free(errs);
    free(errs_dev);
    return s;
}

/* The per-problem state buffers of the whole-problem kernels. */
static clcone_status group_alloc_states(dev_local *d, clcone_error *err)
{
    clcone_status s;
    if ((s = clcone_buf_alloc(d->c, 2 * sizeof(int) * (size_t)d->nprob, &d->g_state, err))) return s;
    return clcone_buf_alloc(d->c, (size_t)d->nprob * d->c->real_size, &d->g_err, err);
}

/* Jacobi or CGS with one work-group per problem: the kernel and its
 * buffers (diagonal positions, steps, per-problem colours, the second
 * Jacobi iterate) made once. */
static clcone_status group_make(dev_local *d, clcone_error *err)
{
    clcone_context *c = d->c;
    const clcone_options *o = d->o;
    int np = d->nprob, budget = 0;
    int solver = o->solver == CLCONE_SOLVER_ACGS ? 2 : o->solver == CLCONE_SOLVER_CGS; /* GROUP_* */
    int *pcol = NULL, *gptr = NULL, *gorder = NULL;
    cl_mem *m = d->g_mem;
    kreal tol = KREAL(o->tol);
    clcone_status s;
    if ((s = group_colors(&d->h, &pcol, &gptr, &gorder, err))) goto out;
    if ((s = local_diag(d, &m[0], err))
        || (s = clcone_buf_reals(c, "step of contact", 1, solver ? d->h.omega_gs : d->h.omega_j, (size_t)d->n, &m[1],
                                 err))
        || (s = clcone_buf_ints(c, pcol, (size_t)np + 1, &m[2], err))
        || (s = clcone_buf_ints(c, gptr, (size_t)pcol[np] + 1, &m[3], err))
        || (s = clcone_buf_ints(c, gorder, (size_t)d->n, &m[4], err))
        || (s = clcone_buf_alloc(c, 3 * (size_t)d->n * c->real_size, &m[5], err))
        || (s = clcone_buf_alloc(c, 3 * (size_t)d->n * c->real_size, &m[6], err))
        || (s = clcone_buf_alloc(c, 2 * (size_t)np * c->real_size, &d->g_theta, err)) /* acgs: theta, last objective */
        || (s = group_alloc_states(d, err))
        || (s = clcone_kernel(c, "group_solve_local", &d->k_group, err)))
        goto out;
    s = SET_ARGS(d->k_group, "group_solve_local", err, KM(d->prob_off), KM(d->row_ptr), KM(d->col), KM(d->W),
                 KM(m[0]), KM(d->q), KM(d->mu), KM(m[1]), KM(m[2]), KM(m[3]), KM(m[4]), KM(d->r), KM(m[5]),
                 KM(m[6]), KM(d->g_theta), KM(d->g_state), KM(d->g_err), KI(solver), KI(d->model), KI(d->facets), KI(d->inner),
                 KI(o->max_iter), KI(o->check_every), KR(c, tol), KI(budget), KI(budget));
out:
    free(pcol);
    free(gptr);
    free(gorder);
    return s;
}

/* APGD with one work-group per problem (x is d->r): the kernel and its
 * vectors made once. */
static clcone_status group_make_apgd(dev_local *d, clcone_error *err)
{
    clcone_context *c = d->c;
    const clcone_options *o = d->o;
    size_t v3 = 3 * (size_t)d->n * c->real_size;
    int budget = 0;
    cl_mem *m = d->g_mem;
    kreal tol = KREAL(o->tol);
    clcone_status s;
    for (int i = 0; i < 6; ++i)
        if ((s = clcone_buf_alloc(c, v3, &m[i], err))) return s;
    if ((s = apgd_bounds(d, &d->g_L0, err))
        || (s = clcone_buf_alloc(c, (size_t)d->nprob * c->real_size, &d->g_L, err))
        || (s = clcone_buf_alloc(c, (size_t)d->nprob * c->real_size, &d->g_theta, err))
        || (s = group_alloc_states(d, err)) || (s = clcone_kernel(c, "group_apgd_local", &d->k_group, err)))
        return s;
    /* x, wx, y, wy, xn, wxn, qe */
    return SET_ARGS(d->k_group, "group_apgd_local", err, KM(d->prob_off), KM(d->row_ptr), KM(d->col), KM(d->W),
                    KM(d->q), KM(d->mu), KM(d->r), KM(m[0]), KM(m[1]), KM(m[2]), KM(m[3]), KM(m[4]), KM(m[5]),
                    KM(d->g_L0), KM(d->g_L), KM(d->g_theta), KM(d->g_state), KM(d->g_err), KI(d->model),
                    KI(o->max_iter), KI(o->check_every), KR(c, tol), KI(budget), KI(budget));
}

/* The stopping rule of this solve into the kernel's arguments max_iter,
 * check_every and tol, which come just before restart and the budget. */
static clcone_status group_set_limits(dev_local *d, clcone_error *err)
{
    cl_uint n = 0;
    kreal tol = KREAL(d->o->tol);
    karg a[3] = {KI(d->o->max_iter), KI(d->o->check_every), KR(d->c, tol)};
    cl_int e = clGetKernelInfo(d->k_group, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL);
    for (cl_uint i = 0; e == CL_SUCCESS && n >= 5 && i < 3; ++i)
        e = clSetKernelArg(d->k_group, n - 5 + i, a[i].size, a[i].ptr);
    return e == CL_SUCCESS && n >= 5 ? CLCONE_OK : clcone_cl_fail(err, e, "setting the stopping rule");
}

/* A solve on the whole-problem kernels, made at the first; r is read
 * back with the states. */
static clcone_status dev_group(dev_local *d, double *r, clcone_error *err)
{
    int apgd = d->o->solver == CLCONE_SOLVER_APGD;
    clcone_status s;
    if (!d->k_group && (s = apgd ? group_make_apgd(d, err) : group_make(d, err))) return s;
    if ((s = group_set_limits(d, err))) return s;
    return group_loop(d, d->k_group, apgd ? "group_apgd_local" : "group_solve_local", r, err);
}

/* Host-side step sizes and colouring of a local-form batch. */
static clcone_status local_host(const clcone_problem *p, dev_host *h, clcone_error *err)
{
    memset(h, 0, sizeof *h);
    h->n = p->n;
    h->nprob = p->nprob;
    h->prob_off = p->prob_off;
    h->q = p->q;
    h->mu = p->mu;
    h->omega_j = clcone_calloc((size_t)p->n, sizeof *h->omega_j, err, "Jacobi steps");
    h->omega_gs = clcone_calloc((size_t)p->n, sizeof *h->omega_gs, err, "GS steps");
    h->Lmax = clcone_calloc((size_t)p->nprob, sizeof *h->Lmax, err, "APGD bounds");
    if (!h->omega_j || !h->omega_gs || !h->Lmax) return CLCONE_ENOMEM;
    for (int k = 0; k < p->nprob; ++k)
        for (int c = p->prob_off[k]; c < p->prob_off[k + 1]; ++c) {
            double D = clcone_row_block_norm(p, c);
            h->omega_j[c] = 1.0 / D;
            h->Lmax[k] = fmax(h->Lmax[k], D);
            for (int b = p->row_ptr[c]; b < p->row_ptr[c + 1]; ++b)
                if (p->col[b] == c) {
                    double lo, hi;
                    clcone_sym3_eig_range(p->blocks + 9 * b, &lo, &hi);
                    h->omega_gs[c] = 1.0 / hi;
                }
        }
    return clcone_color_contacts(p, 0, p->n, &h->ncolors, &h->color_ptr, &h->order, err);
}

static void dev_host_free(dev_host *h)
{
    free(h->omega_j);
    free(h->omega_gs);
    free(h->Lmax);
    free(h->color_ptr);
    free(h->order);
    memset(h, 0, sizeof *h);
}

/* Runs the chosen solver on an opened batch from r (projected into the
 * cones first for APGD) and brings r back. */
static clcone_status dev_run(dev_local *d, double *r, clcone_result *res, clcone_error *err)
{
    clcone_status s;
    /* APGD iterates inside the cones from the start */
    if (d->o->solver == CLCONE_SOLVER_APGD)
        for (int c = 0; c < d->n; ++c) cone_project(d->h.mu[c], r + 3 * c);
    if ((s = dev_begin(d, r, res, err))) return s;
    if (group_fits(d)) return dev_group(d, r, err);
    s = d->o->solver == CLCONE_SOLVER_JACOBI ? dev_jacobi(d, err)
        : d->o->solver == CLCONE_SOLVER_CGS    ? dev_cgs(d, err)
        : d->o->solver == CLCONE_SOLVER_ACGS   ? dev_acgs(d, err)
                                               : dev_apgd(d, err);
    if (!s) {
        cl_int e = clFinish(d->c->queue);
        if (e != CL_SUCCESS) s = clcone_cl_fail(err, e, "clFinish");
    }
    return s ? s : clcone_read_reals(d->c, d->r, r, 3 * (size_t)d->n, err);
}

/* Body-form upload data computed on the host: per contact the frame, arms,
 * q = J v*, W_cc and the step sizes; the colouring by shared bodies. */
typedef struct body_host {
    int *ca, *cb;
    signed char *bs;
    double *frame, *arm, *q, *mu, *Wcc, *inv_mass, *inv_inertia;
    double *R, *aref;   /* soft model's regulariser (0 otherwise) */
    int prob_off[2];
} body_host;

static void body_host_free(body_host *b)
{
    free(b->ca);
    free(b->cb);
    free(b->bs);
    free(b->frame);
    free(b->arm);
    free(b->q);
    free(b->mu);
    free(b->Wcc);
    free(b->inv_mass);
    free(b->inv_inertia);
    free(b->R);
    free(b->aref);
}

/* Jacobi step sizes by mass splitting: W = sum over bodies of A_B, A_B
 * the block of contacts on B, and a PSD matrix with k block rows is at
 * most k times its block diagonal, so W <= D with D_c = sum over c's
 * moving bodies of k_B lambda_max(J_c,B M_B^-1 J_c,B^T), k_B the number
 * of contacts on B. Plain Jacobi (D_c = lambda_max(W_cc)) diverges on
 * stacks and piles, where one body carries many contacts; this D makes
 * the ccp iteration a convergent projected gradient method and keeps the
 * coulomb one stable, without forming W. */
static clcone_status body_prepare(const clcone_scene *s, const clcone_body_csr *L, const clcone_options *o,
                                  body_host *b, dev_host *h, clcone_error *err)
{
    int n = s->ncontacts;
    memset(h, 0, sizeof *h);
    b->ca = clcone_calloc((size_t)n, sizeof *b->ca, err, "contact bodies");
    b->cb = clcone_calloc((size_t)n, sizeof *b->cb, err, "contact bodies");
    b->bs = clcone_calloc((size_t)L->ptr[s->nbodies], sizeof *b->bs, err, "body signs");
    b->frame = clcone_calloc((size_t)n * 9, sizeof *b->frame, err, "contact frames");
    b->arm = clcone_calloc((size_t)n * 6, sizeof *b->arm, err, "lever arms");
    b->q = clcone_calloc((size_t)n * 3, sizeof *b->q, err, "q");
    b->mu = clcone_calloc((size_t)n, sizeof *b->mu, err, "mu");
    b->Wcc = clcone_calloc((size_t)n * 9, sizeof *b->Wcc, err, "W diagonal blocks");
    b->inv_mass = clcone_calloc((size_t)s->nbodies, sizeof *b->inv_mass, err, "inverse masses");
    b->inv_inertia = clcone_calloc((size_t)s->nbodies * 9, sizeof *b->inv_inertia, err, "inverse inertias");
    h->omega_j = clcone_calloc((size_t)n, sizeof *h->omega_j, err, "Jacobi steps");
    h->omega_gs = clcone_calloc((size_t)n, sizeof *h->omega_gs, err, "GS steps");
    h->Lmax = clcone_calloc(1, sizeof *h->Lmax, err, "APGD bound");
    b->R = clcone_calloc((size_t)n * 3, sizeof *b->R, err, "soft R");
    b->aref = clcone_calloc((size_t)n * 3, sizeof *b->aref, err, "soft a_ref");
    if (!b->ca || !b->cb || !b->bs || !b->frame || !b->arm || !b->q || !b->mu || !b->Wcc || !b->inv_mass
        || !b->inv_inertia || !h->omega_j || !h->omega_gs || !h->Lmax || !b->R || !b->aref)
        return CLCONE_ENOMEM;
    for (int i = 0; i < L->ptr[s->nbodies]; ++i) b->bs[i] = L->sign[i];
    for (int i = 0; i < s->nbodies; ++i) {
        b->inv_mass[i] = s->bodies[i].inv_mass;
        memcpy(b->inv_inertia + 9 * i, s->bodies[i].inv_inertia, sizeof(double) * 9);
    }
    for (int c = 0; c < n; ++c) {
        clcone_contact_sides cs;
        double D = 0;
        b->mu[c] = s->contacts[c].mu;
        clcone_contact_sides_of(s, c, &cs);
        memcpy(b->frame + 9 * c, cs.frame, sizeof cs.frame);
        memcpy(b->Wcc + 9 * c, cs.Wcc, sizeof cs.Wcc);
        b->ca[c] = b->cb[c] = -1;
        for (int side = 0; side < 2; ++side) {
            int bi = cs.body[side];
            double lo, hi;
            if (bi < 0) continue;
            cone_jac_apply_add(cs.J + 18 * side, side == 0 ? 1.0 : -1.0, s->bodies[bi].v, b->q + 3 * c);
            if (!cs.moving[side]) continue;
            *(side == 0 ? &b->ca[c] : &b->cb[c]) = bi;
            memcpy(b->arm + 6 * c + 3 * side, cs.arm + 3 * side, 3 * sizeof(double));
            clcone_sym3_eig_range(cs.A + 9 * side, &lo, &hi);
            D += (double)(L->ptr[bi + 1] - L->ptr[bi]) * hi;
        }
        if (!(D > 0))
            return clcone_fail(err, CLCONE_EINVAL, "contact %d: both bodies are static, W_cc = 0", c);
        h->omega_j[c] = D; /* D_c for now: 1 / (D_c + R_c) below */
    }
    if (o->model == CLCONE_MODEL_SOFT) {
        double *wd = clcone_calloc((size_t)n * 3, sizeof *wd, err, "soft diagonal"), *gap;
        clcone_status st;
        gap = clcone_calloc((size_t)n, sizeof *gap, err, "gaps");
        if (!wd || !gap) {
            free(wd);
            free(gap);
            return CLCONE_ENOMEM;
        }
        for (int c = 0; c < n; ++c) {
            gap[c] = s->contacts[c].gap;
            for (int a = 0; a < 3; ++a) wd[3 * c + a] = b->Wcc[9 * c + 4 * a];
        }
        st = clcone_soft_terms(o, n, wd, gap, b->R, b->aref, err);
        free(wd);
        free(gap);
        if (st) return st;
    }
    for (int c = 0; c < n; ++c) {
        double lo, hi, rmax = 0;
        for (int a = 0; a < 3; ++a) {
            b->Wcc[9 * c + 4 * a] += b->R[3 * c + a];
            b->q[3 * c + a] -= b->aref[3 * c + a];
            rmax = fmax(rmax, b->R[3 * c + a]);
        }
        clcone_sym3_eig_range(b->Wcc + 9 * c, &lo, &hi);
        h->omega_gs[c] = 1.0 / hi;
        /* W + R <= D + max R */
        h->omega_j[c] = 1.0 / (h->omega_j[c] + rmax);
        h->Lmax[0] = fmax(h->Lmax[0], 1.0 / h->omega_j[c]);
    }
    b->prob_off[0] = 0;
    b->prob_off[1] = n;
    h->n = n;
    h->nprob = 1;
    h->prob_off = b->prob_off;
    h->q = b->q;
    h->mu = b->mu;
    return CLCONE_OK;
}

/* Body-form colouring: contacts conflict when they share a moving body (L
 * lists each body's contacts in index order). The same colours as
 * clcone_color_contacts on the scene's local form, whose W couples exactly
 * the contacts that share a moving body. */
typedef struct body_graph {
    const clcone_body_csr *L;
    const body_host *b;
} body_graph;

static void body_neighbours(const void *ctx, int c, const int *color, int *mark)
{
    const body_graph *g = ctx;
    for (int side = 0; side < 2; ++side) {
        int bi = side == 0 ? g->b->ca[c] : g->b->cb[c];
        if (bi < 0) continue;
        for (int k = g->L->ptr[bi]; k < g->L->ptr[bi + 1] && g->L->contact[k] < c; ++k) mark[color[g->L->contact[k]]] = c;
    }
}

static clcone_status body_colors(const clcone_scene *s, const clcone_body_csr *L, const body_host *b, dev_host *h,
                                 clcone_error *err)
{
    body_graph g = {L, b};
    return clcone_color_greedy(s->ncontacts, body_neighbours, &g, &h->ncolors, &h->color_ptr, &h->order, err);
}

/* 1/2 r'(W + R)r + q'r from one more operator product on the device. */
static clcone_status body_cost(dev_local *d, const double *r, const double *q, double *cost, clcone_error *err)
{
    double *w = clcone_calloc(3 * (size_t)d->n, sizeof *w, err, "cost product");
    clcone_status s;
    if (!w) return CLCONE_ENOMEM;
    s = dev_apply(d, d->r, d->w, err);
    if (!s) s = clcone_read_reals(d->c, d->w, w, 3 * (size_t)d->n, err);
    *cost = 0;
    for (int i = 0; !s && i < 3 * d->n; ++i) *cost += r[i] * (0.5 * w[i] + q[i]);
    free(w);
    return s;
}

/* The buffers a plan keeps from one scene to the next
 * (clcone_dev_plan_set_scene), grown only when a scene needs more. */
enum kept {
    KEPT_Q, KEPT_MU, KEPT_PROB, KEPT_PROB_OFF, KEPT_R, KEPT_W, KEPT_TERMS, KEPT_BPTR, KEPT_BC, KEPT_BS, KEPT_CA,
    KEPT_CB, KEPT_FRAME, KEPT_ARM, KEPT_WCC, KEPT_RD, KEPT_INV_MASS, KEPT_INV_INERTIA, KEPT_DV, KEPT_COUNT
};

/* A problem or scene uploaded once and solved many times (clcone_plan's
 * device side). The options and, for the local form, the problem are
 * owned copies, since the uploaded state refers to them; the host
 * arrays of the last scene are kept, to upload only what differs from
 * them. */
struct clcone_dev_plan {
    dev_local d;
    clcone_options o;      /* what the kernels run (soft as ccp) */
    clcone_options given;  /* as the caller gave them */
    clcone_problem p;      /* local form */
    body_host b;           /* body form */
    clcone_body_csr L;
    size_t cap[KEPT_COUNT]; /* bytes of each kept buffer */
    size_t stage_cap;       /* reals of d.stage */
    clcone_dev_counts counts;
};

static cl_mem *kept_mem(dev_local *d, enum kept k)
{
    cl_mem *m[KEPT_COUNT] = {&d->q,     &d->mu,    &d->prob,  &d->prob_off, &d->r,    &d->w,
                             &d->terms, &d->bptr,  &d->bc,    &d->bs,       &d->ca,   &d->cb,
                             &d->frame, &d->arm,   &d->Wcc,   &d->Rd,       &d->inv_mass, &d->inv_inertia,
                             &d->dv};
    return m[k];
}

/* Kept buffer k with room for `bytes`; *fresh = 1 when it was made now
 * (nothing of the last scene is in it). A buffer that grows gets half
 * again what it had, so that contacts creeping up step after step make
 * few buffers; the first is made to measure. */
static clcone_status kept_reserve(clcone_dev_plan *pl, enum kept k, size_t bytes, int *fresh, clcone_error *err)
{
    clcone_context *c = pl->d.c;
    cl_mem *m = kept_mem(&pl->d, k);
    size_t cap = pl->cap[k] + pl->cap[k] / 2;
    clcone_status s;
    *fresh = !*m || pl->cap[k] < bytes;
    if (!*fresh) return CLCONE_OK;
    if (cap < bytes || cap > c->info.max_alloc) cap = bytes;
    clcone_buf_free(c, m);
    pl->cap[k] = 0;
    if ((s = clcone_buf_alloc(c, cap, m, err))) return s;
    pl->cap[k] = cap;
    pl->counts.buffers++;
    return CLCONE_OK;
}

/* Whether a kept buffer already holds x: old (old_bytes; NULL when
 * nothing was put there) is what the last scene put there, and the
 * kernels read only the first `bytes`. */
static int kept_holds(int fresh, const void *x, size_t bytes, const void *old, size_t old_bytes)
{
    return !fresh && old && old_bytes >= bytes && (bytes == 0 || memcmp(x, old, bytes) == 0);
}

static clcone_status kept_bytes(clcone_dev_plan *pl, enum kept k, const void *x, size_t bytes, const void *old,
                                size_t old_bytes, clcone_error *err)
{
    int fresh;
    cl_int e;
    clcone_status s = kept_reserve(pl, k, bytes, &fresh, err);
    if (s || bytes == 0 || kept_holds(fresh, x, bytes, old, old_bytes)) return s;
    pl->counts.uploads++;
    e = clEnqueueWriteBuffer(pl->d.c->queue, *kept_mem(&pl->d, k), CL_TRUE, 0, bytes, x, 0, NULL, NULL);
    return e == CL_SUCCESS ? CLCONE_OK : clcone_cl_fail(err, e, "clEnqueueWriteBuffer");
}

/* Reals are compared only with an old array of the same length: the
 * float range check of an upload looks at the whole array. */
static clcone_status kept_reals(clcone_dev_plan *pl, enum kept k, const char *what, size_t per, const double *x,
                                size_t n, const double *old, size_t old_n, clcone_error *err)
{
    int fresh;
    clcone_status s = kept_reserve(pl, k, n * pl->d.c->real_size, &fresh, err);
    if (s || kept_holds(fresh, x, n * sizeof *x, old_n == n ? old : NULL, n * sizeof *x)) return s;
    pl->counts.uploads++;
    return clcone_write_reals(pl->d.c, what, per, *kept_mem(&pl->d, k), x, n, err);
}

/* The problem of each contact of h (NULL for a form not yet there: h
 * zeroed; and when out of memory, with err set). */
static int *contact_problems(const dev_host *h, clcone_error *err)
{
    int *prob;
    if (!h->prob_off) return NULL;
    prob = clcone_calloc((size_t)h->n + 1, sizeof *prob, err, "contact problems");
    if (prob)
        for (int k = 0; k < h->nprob; ++k)
            for (int c = h->prob_off[k]; c < h->prob_off[k + 1]; ++c) prob[c] = k;
    return prob;
}

/* The arrays every form sizes by its contacts, in kept buffers: h is
 * taken over (the last form's freed), q, mu and the problem of each
 * contact uploaded when they differ from the last form's, the iterate,
 * the products and the residual terms grown when short. Called before
 * the host arrays that the last form's q and mu point into are freed. */
static clcone_status plan_size(clcone_dev_plan *pl, dev_host *h, clcone_error *err)
{
    dev_local *d = &pl->d;
    clcone_context *c = d->c;
    dev_host old = d->h;
    size_t n = (size_t)h->n, on = (size_t)old.n, np1 = (size_t)h->nprob + 1;
    int *prob = contact_problems(h, err), *oprob = prob ? contact_problems(&old, err) : NULL;
    clcone_status s = CLCONE_ENOMEM;
    d->h = *h;
    memset(h, 0, sizeof *h);
    d->n = d->h.n;
    if (!prob || (old.prob_off && !oprob)) goto out;
    if (pl->stage_cap < 3 * n) {
        size_t cap = pl->stage_cap + pl->stage_cap / 2 > 3 * n ? pl->stage_cap + pl->stage_cap / 2 : 3 * n;
        free(d->stage);
        pl->stage_cap = 0;
        if (!(d->stage = clcone_calloc(cap + 1, c->real_size, err, "staging buffer"))) goto out;
        pl->stage_cap = cap;
    }
    if ((s = kept_reals(pl, KEPT_Q, "q of contact", 3, d->h.q, 3 * n, old.q, 3 * on, err))
        || (s = kept_reals(pl, KEPT_MU, "mu of contact", 1, d->h.mu, n, old.mu, on, err))
        || (s = kept_bytes(pl, KEPT_PROB, prob, n * sizeof *prob, oprob, on * sizeof *prob, err))
        || (s = kept_bytes(pl, KEPT_PROB_OFF, d->h.prob_off, np1 * sizeof(int), old.prob_off,
                           old.prob_off ? np1 * sizeof(int) : 0, err)))
        goto out;
    {
        int fresh;
        if ((s = kept_reserve(pl, KEPT_R, 3 * n * c->real_size, &fresh, err))
            || (s = kept_reserve(pl, KEPT_W, 3 * n * c->real_size, &fresh, err)))
            goto out;
        s = kept_reserve(pl, KEPT_TERMS, 4 * n * c->real_size, &fresh, err);
    }
out:
    dev_host_free(&old);
    free(prob);
    free(oprob);
    return s;
}

static void plan_release(clcone_dev_plan *pl)
{
    dev_close(&pl->d);
    clcone_problem_free(&pl->p);
    body_host_free(&pl->b);
    clcone_body_csr_free(&pl->L);
    free(pl);
}

void clcone_dev_plan_free(clcone_dev_plan *pl)
{
    if (pl) plan_release(pl);
}

clcone_status clcone_dev_plan_local(clcone_context *c, const clcone_problem *p, const clcone_options *o,
                                    clcone_dev_plan **out, clcone_error *err)
{
    const clcone_problem *one[1] = {p};
    clcone_dev_plan *pl;
    dev_host h;
    clcone_status s;
    *out = NULL;
    if (!(pl = clcone_calloc(1, sizeof *pl, err, "device plan"))) return CLCONE_ENOMEM;
    pl->o = pl->given = *o;
    memset(&h, 0, sizeof h);
    if (!(s = clcone_batch_concat(one, 1, &pl->p, err)) && !(s = local_host(&pl->p, &h, err))) {
        pl->d.p = &pl->p;
        if (!(s = dev_open(&pl->d, c, pl->p.nprob, &pl->o, err)) && !(s = plan_size(pl, &h, err))
            && !(s = clcone_buf_ints(c, pl->p.row_ptr, (size_t)pl->p.n + 1, &pl->d.row_ptr, err))
            && !(s = clcone_buf_ints(c, pl->p.col, (size_t)pl->p.nnzb, &pl->d.col, err))
            && !(s = clcone_buf_reals(c, "W block", 9, pl->p.blocks, 9 * (size_t)pl->p.nnzb, &pl->d.W, err)))
            s = clcone_kernel(c, "matvec_local", &pl->d.k_mv, err);
    }
    dev_host_free(&h);
    if (s) {
        plan_release(pl);
        return s;
    }
    *out = pl;
    return CLCONE_OK;
}

clcone_status clcone_dev_plan_set_q(clcone_dev_plan *pl, const double *q, clcone_error *err)
{
    size_t m = 3 * (size_t)pl->d.n;
    memcpy(pl->p.q, q, m * sizeof *q);
    return clcone_write_reals(pl->d.c, "q of contact", 3, pl->d.q, q, m, err);
}

clcone_status clcone_dev_plan_warm_up(clcone_dev_plan *pl, clcone_error *err)
{
    /* one iteration from r = 0 launches every kernel of the solver, so a
     * device that compiles at the first launch (POCL: per work-group
     * size) does it here */
    clcone_options keep = pl->o;
    double *r = clcone_calloc(3 * (size_t)pl->d.n, sizeof *r, err, "warm-up reactions");
    clcone_result res;
    clcone_status s;
    if (!r) return CLCONE_ENOMEM;
    pl->o.max_iter = 1;
    pl->o.max_seconds = 0;
    pl->o.history = NULL;
    pl->o.progress = NULL;
    if (!(s = clcone_result_init(&res, pl->d.nprob, err))) {
        s = clcone_dev_plan_solve(pl, r, &res, err);
        clcone_result_free(&res);
    }
    pl->o = keep;
    free(r);
    return s;
}

clcone_status clcone_dev_plan_solve(clcone_dev_plan *pl, double *r, clcone_result *res, clcone_error *err)
{
    clcone_status s = dev_run(&pl->d, r, res, err);
    if (!s && pl->d.nb && pl->o.model == CLCONE_MODEL_CCP)
        s = body_cost(&pl->d, r, pl->b.q, &res->items[0].cost, err);
    return s;
}

clcone_status clcone_solve_device(clcone_context *c, const clcone_problem *p, const clcone_options *o,
                                  double *r, clcone_result *res, clcone_error *err)
{
    clcone_dev_plan *pl;
    clcone_status s = clcone_dev_plan_local(c, p, o, &pl, err);
    if (s) return s;
    s = clcone_dev_plan_solve(pl, r, res, err);
    plan_release(pl);
    return s;
}

/* The scene's body form in the plan's kept buffers, each array uploaded
 * only when it differs from the last scene's (all of them the first
 * time): masses of bodies that did not change, the contact lists of
 * contacts that kept their bodies, q alone when only the free velocities
 * changed. The colouring is redone only when the contacts' bodies
 * changed. On failure the plan is left unusable. */
static clcone_status scene_upload(clcone_dev_plan *pl, const clcone_scene *sc, clcone_error *err)
{
    dev_local *d = &pl->d;
    clcone_context *c = d->c;
    const body_host *ob = &pl->b;
    const clcone_body_csr *oL = &pl->L;
    clcone_body_csr L;
    body_host b;
    dev_host h;
    size_t n = (size_t)sc->ncontacts, on = (size_t)d->n, nb = (size_t)sc->nbodies, onb = (size_t)d->nb, nl, onl;
    int fresh;
    clcone_status s;
    memset(&L, 0, sizeof L);
    memset(&b, 0, sizeof b);
    memset(&h, 0, sizeof h);
    if ((s = clcone_body_csr_build(sc, &L, err)) || (s = body_prepare(sc, &L, &pl->given, &b, &h, err))) goto out;
    nl = (size_t)L.ptr[nb];
    onl = oL->ptr ? (size_t)oL->ptr[onb] : 0;
    if (oL->ptr && n == on && nb == onb && nl == onl && !memcmp(L.ptr, oL->ptr, (nb + 1) * sizeof *L.ptr)
        && (nl == 0 || !memcmp(L.contact, oL->contact, nl * sizeof *L.contact)) && !memcmp(b.ca, ob->ca, n * sizeof *b.ca)
        && !memcmp(b.cb, ob->cb, n * sizeof *b.cb)) {
        /* body_colors depends on nothing else */
        h.ncolors = d->h.ncolors;
        h.color_ptr = d->h.color_ptr;
        h.order = d->h.order;
        d->h.color_ptr = d->h.order = NULL;
    } else if ((s = body_colors(sc, &L, &b, &h, err))) {
        goto out;
    }
    if ((s = plan_size(pl, &h, err))
        || (s = kept_bytes(pl, KEPT_BPTR, L.ptr, (nb + 1) * sizeof *L.ptr, oL->ptr,
                           oL->ptr ? (onb + 1) * sizeof *L.ptr : 0, err))
        || (s = kept_bytes(pl, KEPT_BC, L.contact, nl * sizeof *L.contact, oL->contact, onl * sizeof *L.contact, err))
        || (s = kept_bytes(pl, KEPT_BS, b.bs, nl, ob->bs, onl, err))
        || (s = kept_bytes(pl, KEPT_CA, b.ca, n * sizeof *b.ca, ob->ca, on * sizeof *b.ca, err))
        || (s = kept_bytes(pl, KEPT_CB, b.cb, n * sizeof *b.cb, ob->cb, on * sizeof *b.cb, err))
        || (s = kept_reals(pl, KEPT_FRAME, "frame of contact", 9, b.frame, 9 * n, ob->frame, 9 * on, err))
        || (s = kept_reals(pl, KEPT_ARM, "lever arms of contact", 6, b.arm, 6 * n, ob->arm, 6 * on, err))
        || (s = kept_reals(pl, KEPT_WCC, "diagonal W block of contact", 9, b.Wcc, 9 * n, ob->Wcc, 9 * on, err))
        || (s = kept_reals(pl, KEPT_RD, "regularisation of contact", 3, b.R, 3 * n, ob->R, 3 * on, err))
        || (s = kept_reals(pl, KEPT_INV_MASS, "inverse mass of body", 1, b.inv_mass, nb, ob->inv_mass, onb, err))
        || (s = kept_reals(pl, KEPT_INV_INERTIA, "inverse inertia of body", 9, b.inv_inertia, 9 * nb,
                           ob->inv_inertia, 9 * onb, err))
        || (s = kept_reserve(pl, KEPT_DV, 6 * nb * c->real_size, &fresh, err)))
        goto out;
    body_host_free(&pl->b);
    clcone_body_csr_free(&pl->L);
    pl->b = b;
    pl->L = L;
    d->h.prob_off = pl->b.prob_off;
    d->nb = (int)nb;
    memset(&b, 0, sizeof b);
    memset(&L, 0, sizeof L);
out:
    body_host_free(&b);
    clcone_body_csr_free(&L);
    dev_host_free(&h);
    return s;
}

/* Body-form plan: the scene's Jacobians, masses and per-body contact
 * lists on the device (matrix-free W). The soft model is solved as a ccp
 * on W + R, q - a_ref. */
clcone_status clcone_dev_plan_scene(clcone_context *c, const clcone_scene *sc, const clcone_options *o,
                                    clcone_dev_plan **out, clcone_error *err)
{
    clcone_dev_plan *pl;
    clcone_status s;
    *out = NULL;
    if (!(pl = clcone_calloc(1, sizeof *pl, err, "device plan"))) return CLCONE_ENOMEM;
    pl->o = pl->given = *o;
    pl->o.model = clcone_model_solved_as(o->model);
    if ((s = dev_open(&pl->d, c, 1, &pl->o, err)) || (s = clcone_kernel(c, "body_gather", &pl->d.k_gather, err))
        || (s = clcone_kernel(c, "body_contact_apply", &pl->d.k_capply, err)) || (s = scene_upload(pl, sc, err))) {
        plan_release(pl);
        return s;
    }
    *out = pl;
    return CLCONE_OK;
}

clcone_status clcone_dev_plan_set_scene(clcone_dev_plan *pl, const clcone_scene *sc, const clcone_options *o,
                                        clcone_error *err)
{
    pl->given.soft_v0 = o->soft_v0;
    pl->given.soft_R = o->soft_R;
    pl->given.soft_aref = o->soft_aref;
    return scene_upload(pl, sc, err);
}

clcone_dev_counts clcone_dev_plan_counts(const clcone_dev_plan *pl)
{
    return pl->counts;
}
