/* The multi-launch device solvers: projected Jacobi, coloured
 * Gauss-Seidel (CGS), accelerated CGS and APGD, each a step of launches in
 * the one iteration loop (clc_dev_iterate), on local-form batches and
 * body-form scenes alike (only the operator differs). Each solver's device
 * entry (clc_dev_fn, named in its rows of solve/contract.c) runs its
 * whole-problem kernel when the batch fits one (group.c), else its loop
 * here. */
#include "opencl/dev_batch.h"
#include "cone.h"
#include "local_solve.h"
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

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

static clcone_status jacobi_step(clc_dev_batch *d, void *state, int it, clcone_error *err)
{
    dev_jacobi_state *J = state;
    clcone_status s;
    (void)it;
    if ((s = clc_run(d->c, J->kw[J->cur], (size_t)(d->body.nb ? d->body.nb : d->n), 0, J->wname, err))
        || (s = clc_dev_halo(d, err)) || (s = clc_run(d->c, J->ks[J->cur], (size_t)d->n, 0, J->sname, err)))
        return s;
    J->cur ^= 1;
    d->r = J->it_buf[J->cur];
    return CLCONE_OK;
}

static clcone_status jacobi_loop(clc_dev_batch *d, clcone_error *err)
{
    clcone_context *c = d->c;
    cl_mem om = NULL;
    dev_jacobi_state J = {{d->r, NULL}, {NULL, NULL}, {NULL, NULL},
                          d->body.nb ? "body_gather" : "matvec_local", d->body.nb ? "body_jacobi_step" : "jacobi_step", 0};
    cl_mem *it_buf = J.it_buf;
    cl_kernel *kw = J.kw, *ks = J.ks;
    const char *wname = J.wname, *sname = J.sname;
    clcone_status s;
    if ((s = clc_buf_reals(c, "Jacobi step size of contact", 1, d->h.omega_j, (size_t)d->n, &om, err))
        || (s = clc_buf_alloc(c, 3 * (size_t)d->n * c->real_size, &it_buf[1], err)))
        goto out;
    for (int p = 0; p < 2; ++p) {
        if ((s = clc_kernel(c, wname, &kw[p], err)) || (s = clc_kernel(c, sname, &ks[p], err))) goto out;
        if (d->body.nb)
            s = SET_ARGS(kw[p], wname, err, KI(d->body.nb), KM(d->body.bptr), KM(d->body.bc), KM(d->body.bs), KM(d->body.frame), KM(d->body.arm),
                         KM(d->body.inv_mass), KM(d->body.inv_inertia), KM(it_buf[p]), KM(d->body.dv))
                    ? s
                    : SET_ARGS(ks[p], sname, err, KI(d->n), KM(d->body.ca), KM(d->body.cb), KM(d->body.frame), KM(d->body.arm),
                               KM(d->body.dv), KM(d->body.Rd), KM(d->q), KM(d->mu), KM(om), KM(d->prob), KM(d->active),
                               KM(it_buf[p]), KM(it_buf[1 - p]), KI(d->model), KI(d->facets), KI(d->inner));
        else
            s = SET_ARGS(kw[p], wname, err, KI(d->n), KM(d->row_ptr), KM(d->col), KM(d->W), KM(it_buf[p]), KM(d->w))
                    ? s
                    : SET_ARGS(ks[p], sname, err, KI(d->n), KM(d->q), KM(d->mu), KM(om), KM(d->prob), KM(d->active),
                               KM(it_buf[p]), KM(d->w), KM(it_buf[1 - p]), KI(d->model), KI(d->facets),
                               KI(d->inner));
        if (s) goto out;
    }
    s = clc_dev_iterate(d, jacobi_step, NULL, &J, err);
out:
    if (J.cur) {
        /* the iterate back into the plan's own buffer */
        size_t bytes = 3 * (size_t)d->n * c->real_size;
        cl_int e = clEnqueueCopyBuffer(c->queue, it_buf[1], it_buf[0], 0, 0, bytes, 0, NULL, NULL);
        if (!s && e != CL_SUCCESS) s = clc_cl_fail(err, e, "clEnqueueCopyBuffer(reactions)");
    }
    d->r = it_buf[0];
    if (!s) {
        cl_int e = clFinish(c->queue);
        if (e != CL_SUCCESS) s = clc_cl_fail(err, e, "clFinish");
    }
    clc_buf_free(c, &om);
    clc_buf_free(c, &it_buf[1]);
    for (int p = 0; p < 2; ++p) {
        clc_release_kernel(&kw[p]);
        clc_release_kernel(&ks[p]);
    }
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

static void sweep_close(clc_dev_batch *d, dev_sweep *w)
{
    clc_buf_free(d->c, &w->ord);
    clc_buf_free(d->c, &w->dg);
    clc_buf_free(d->c, &w->om);
    clc_release_kernel(&w->k);
}

static clcone_status sweep_open(clc_dev_batch *d, dev_sweep *w, clcone_error *err)
{
    clcone_status s;
    memset(w, 0, sizeof *w);
    w->name = d->body.nb ? "cgs_body" : "cgs_local";
    if ((!d->body.nb && (s = clc_dev_local_diag(d, &w->dg, err)))
        || (s = clc_buf_ints(d->c, d->h.order, (size_t)d->n, &w->ord, err))
        || (s = clc_buf_reals(d->c, "Gauss-Seidel step size of contact", 1, d->h.omega_gs, (size_t)d->n, &w->om,
                                 err))
        || (s = clc_kernel(d->c, w->name, &w->k, err)))
        return s;
    return CLCONE_OK;
}

/* Sweep number `it` over every colour of r in place (body form: d->body.dv
 * must be M^-1 J^T r, and is kept so). */
static clcone_status sweep_run(clc_dev_batch *d, dev_sweep *w, cl_mem r, int it, clcone_error *err)
{
    const int *cptr = d->h.color_ptr;
    clcone_status s;
    for (int col = 0; col < d->h.ncolors; ++col) {
        int start = cptr[col], count = cptr[col + 1] - cptr[col];
        if (d->body.nb)
            s = SET_ARGS(w->k, w->name, err, KI(start), KI(count), KM(w->ord), KM(d->body.ca), KM(d->body.cb), KM(d->body.frame),
                         KM(d->body.arm), KM(d->body.Wcc), KM(d->body.Rd), KM(d->q), KM(d->mu), KM(w->om), KM(d->prob), KM(d->active),
                         KM(d->body.inv_mass), KM(d->body.inv_inertia), KM(r), KM(d->body.dv), KI(d->model), KI(d->facets),
                         KI(d->inner), KI(it));
        else
            s = SET_ARGS(w->k, w->name, err, KI(start), KI(count), KM(w->ord), KM(d->row_ptr), KM(d->col), KM(d->W),
                         KM(w->dg), KM(d->q), KM(d->mu), KM(w->om), KM(d->prob), KM(d->active), KM(r),
                         KI(d->model), KI(d->facets), KI(d->inner), KI(it));
        if (s || (s = clc_run(d->c, w->k, (size_t)count, 0, w->name, err))) return s;
    }
    return CLCONE_OK;
}

static clcone_status cgs_step(clc_dev_batch *d, void *state, int it, clcone_error *err)
{
    return sweep_run(d, state, d->r, it, err);
}

static clcone_status cgs_loop(clc_dev_batch *d, clcone_error *err)
{
    dev_sweep w;
    clcone_status s;
    if (d->body.nb && (s = clc_dev_apply(d, d->r, d->w, err))) return s; /* dv = M^-1 J^T r0 */
    if ((s = sweep_open(d, &w, err))) goto out;
    /* each check recomputes dv = M^-1 J^T r exactly (loop_measure); the
     * sweeps go on from it, so the incremental updates never drift far */
    s = clc_dev_iterate(d, cgs_step, NULL, &w, err);
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

static clcone_status acgs_step(clc_dev_batch *d, void *state, int it, clcone_error *err)
{
    dev_acgs_state *A = state;
    clcone_status s;
    cl_int e = clEnqueueCopyBuffer(d->c->queue, A->y, A->work, 0, 0, A->v3, 0, NULL, NULL);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clEnqueueCopyBuffer(work)");
    if ((d->body.nb && (s = clc_dev_body_dv(d, A->work, err))) /* dv = M^-1 J^T y */
        || (s = sweep_run(d, A->w, A->work, it, err))
        || (s = clc_run(d->c, A->k_terms, (size_t)d->n, 0, "acgs_terms", err))
        || (s = clc_dev_reduce(d, A->terms, 1, A->sums, NULL, err))
        || (s = clc_run(d->c, A->k_mom, (size_t)d->nprob, 0, "acgs_momentum", err))
        || (s = clc_run(d->c, A->k_upd, (size_t)d->n, 0, "acgs_update", err)))
        return s;
    return CLCONE_OK;
}

/* The function restart after a check, from the check's w = W x in d->w. */
static clcone_status acgs_checked(clc_dev_batch *d, void *state, int it, clcone_error *err)
{
    dev_acgs_state *A = state;
    cl_int e = clSetKernelArg(A->k_climbed, 1, sizeof it, &it);
    clcone_status s;
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clSetKernelArg(acgs_climbed)");
    if ((s = clc_run(d->c, A->k_obj, (size_t)d->n, 0, "acgs_objective", err))
        || (s = clc_dev_reduce(d, A->terms, 1, A->sums, NULL, err))
        || (s = clc_run(d->c, A->k_climbed, (size_t)d->nprob, 0, "acgs_climbed", err))
        || (s = clc_run(d->c, A->k_reset, (size_t)d->n, 0, "acgs_reset", err)))
        return s;
    return CLCONE_OK;
}

/* Accelerated CGS (kernels/acgs.cl): d->r holds x_k, y the extrapolated
 * point, work the sweep from y; the body form regathers dv = M^-1 J^T y
 * before each sweep, so the sweeps never drift from y. */
static clcone_status acgs_loop(clc_dev_batch *d, clcone_error *err)
{
    clcone_context *c = d->c;
    size_t v3 = 3 * (size_t)d->n * c->real_size;
    dev_sweep w;
    cl_mem y = NULL, work = NULL, th = NULL, beta = NULL, terms = NULL, sums = NULL, last = NULL, reset = NULL;
    cl_kernel k_terms = NULL, k_mom = NULL, k_upd = NULL, k_obj = NULL, k_climbed = NULL, k_reset = NULL;
    double *ones = clc_calloc((size_t)d->nprob, sizeof *ones, err, "acgs momentum");
    int it0 = 0; /* acgs_checked sets the iteration */
    clcone_status s = CLCONE_ENOMEM;
    cl_int e;
    memset(&w, 0, sizeof w);
    if (!ones) goto out;
    for (int p = 0; p < d->nprob; ++p) ones[p] = 1.0;
    if ((s = sweep_open(d, &w, err))
        || (s = clc_buf_alloc(c, v3, &y, err)) || (s = clc_buf_alloc(c, v3, &work, err))
        || (s = clc_buf_reals(c, "acgs theta of problem", 1, ones, (size_t)d->nprob, &th, err))
        || (s = clc_buf_alloc(c, (size_t)d->nprob * c->real_size, &last, err))
        || (s = clc_buf_alloc(c, (size_t)d->nprob * sizeof(int), &reset, err))
        || (s = clc_buf_alloc(c, (size_t)d->nprob * c->real_size, &beta, err))
        || (s = clc_buf_alloc(c, (size_t)d->n * c->real_size, &terms, err))
        || (s = clc_buf_alloc(c, (size_t)d->nprob * c->real_size, &sums, err))
        || (s = clc_kernel(c, "acgs_terms", &k_terms, err))
        || (s = clc_kernel(c, "acgs_momentum", &k_mom, err))
        || (s = clc_kernel(c, "acgs_update", &k_upd, err))
        || (s = clc_kernel(c, "acgs_objective", &k_obj, err))
        || (s = clc_kernel(c, "acgs_climbed", &k_climbed, err))
        || (s = clc_kernel(c, "acgs_reset", &k_reset, err)))
        goto out;
    e = clEnqueueCopyBuffer(c->queue, d->r, y, 0, 0, v3, 0, NULL, NULL); /* y = x_0 */
    if (e != CL_SUCCESS) {
        s = clc_cl_fail(err, e, "clEnqueueCopyBuffer(y)");
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
        s = clc_dev_iterate(d, acgs_step, acgs_checked, &A, err);
    }
out:
    {
        cl_mem *mems[] = {&y, &work, &th, &beta, &terms, &sums, &last, &reset};
        cl_kernel *ks[] = {&k_terms, &k_mom, &k_upd, &k_obj, &k_climbed, &k_reset};
        for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clc_buf_free(c, mems[i]);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) clc_release_kernel(ks[i]);
    }
    sweep_close(d, &w);
    free(ones);
    return s;
}

#define APGD_TERMS CONE_APGD_TERMS

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
static clcone_status apgd_try_needed(clc_dev_batch *d, dev_apgd_state *A, int *needed, clcone_error *err)
{
    cl_int e = clEnqueueReadBuffer(d->c->queue, A->acc, CL_TRUE, 0, sizeof(int) * (size_t)d->nprob, A->acc_h, 0,
                                   NULL, NULL);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clEnqueueReadBuffer(APGD flags)");
    *needed = 0;
    for (int k = 0; k < d->nprob; ++k)
        if (d->active_h[k] && !A->acc_h[k]) *needed = 1;
    return CLCONE_OK;
}

static clcone_status apgd_step(clc_dev_batch *d, void *state, int it, clcone_error *err)
{
    dev_apgd_state *A = state;
    clcone_context *c = d->c;
    clcone_status s;
    (void)it;
    for (int t = 0; t < CONE_APGD_TRIES; ++t) {
        int needed = 1;
        if (t > 0 && (s = apgd_try_needed(d, A, &needed, err))) return s;
        if (!needed) break;
        if (((t > 0 || !A->cand_ready) && (s = clc_run(c, A->k_cand, (size_t)d->n, 0, "apgd_candidate", err)))
            || (d->body.nb ? (s = clc_dev_body_dv(d, A->xn, err)) : (s = clc_dev_apply(d, A->xn, A->wxn, err)))
            || (s = clc_run(c, A->k_terms, (size_t)d->n, 0, d->body.nb ? "body_apply_apgd_terms" : "apgd_terms", err))
            || (s = clc_dev_reduce(d, A->terms, APGD_TERMS, A->sums, NULL, err))
            || (s = clc_run(c, A->k_acc, (size_t)d->nprob, 0, "apgd_accept", err)))
            return s;
    }
    if ((s = clc_run(c, A->k_mom, (size_t)d->nprob, 0, "apgd_momentum", err))
        || (s = clc_run(c, A->k_upd, (size_t)d->n, 0, "apgd_update_candidate", err)))
        return s;
    A->cand_ready = 1;
    return CLCONE_OK;
}

/* coulomb: a new cone QP at each check, the shift from the current
 * velocities and the momentum reset (as the reference's apgd_checked). */
static clcone_status apgd_checked(clc_dev_batch *d, void *state, int it, clcone_error *err)
{
    dev_apgd_state *A = state;
    clcone_context *c = d->c;
    clcone_status s;
    cl_int e;
    double one = 1.0;
    float onef = 1.0f;
    if (!A->coulomb || !clc_is_check_iteration(d->o, it)) return CLCONE_OK;
    A->cand_ready = 0; /* the shift below moves y and q_eff */
    if ((s = SET_ARGS(A->k_shift, "desaxce_shift", err, KI(d->n), KM(d->prob), KM(d->active), KM(d->q), KM(d->mu),
                      KM(A->wx), KM(d->r), KM(A->qe), KM(A->y), KM(A->wy)))
        || (s = clc_run(c, A->k_shift, (size_t)d->n, 0, "desaxce_shift", err)))
        return s;
    e = clEnqueueFillBuffer(c->queue, A->th, c->prec == CLCONE_DOUBLE ? (void *)&one : (void *)&onef, c->real_size, 0,
                            (size_t)d->nprob * c->real_size, 0, NULL, NULL);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "clEnqueueFillBuffer(theta)");
}

static clcone_status apgd_loop(clc_dev_batch *d, clcone_error *err)
{
    clcone_context *c = d->c;
    size_t v3 = 3 * (size_t)d->n * c->real_size;
    cl_mem wx = NULL, y = NULL, wy = NULL, xn = NULL, wxn = NULL, qe = NULL, L = NULL, th = NULL,
           beta = NULL, acc = NULL, terms = NULL, sums = NULL;
    cl_kernel k_cand = NULL, k_terms = NULL, k_acc = NULL, k_mom = NULL, k_upd = NULL,
              k_shift = NULL;
    double *ones = clc_calloc((size_t)d->nprob, sizeof *ones, err, "APGD momentum");
    int *zeros = clc_calloc((size_t)d->nprob, sizeof *zeros, err, "APGD flags");
    int coulomb = d->model == CLCONE_MODEL_COULOMB;
    clcone_status s = CLCONE_ENOMEM;
    if (!ones || !zeros) goto out;
    for (int k = 0; k < d->nprob; ++k) ones[k] = 1.0;
    if ((s = clc_buf_alloc(c, v3, &wx, err)) || (s = clc_buf_alloc(c, v3, &y, err))
        || (s = clc_buf_alloc(c, v3, &wy, err)) || (s = clc_buf_alloc(c, v3, &xn, err))
        || (s = clc_buf_alloc(c, v3, &wxn, err))
        || (s = clc_buf_reals(c, "q of contact", 3, d->h.q, 3 * (size_t)d->n, &qe, err))
        || (s = clc_dev_apgd_bounds(d, &L, err))
        || (s = clc_buf_reals(c, "APGD theta of problem", 1, ones, (size_t)d->nprob, &th, err))
        || (s = clc_buf_reals(c, "APGD beta of problem", 1, ones, (size_t)d->nprob, &beta, err))
        || (s = clc_buf_ints(c, zeros, (size_t)d->nprob, &acc, err))
        || (s = clc_buf_alloc(c, APGD_TERMS * (size_t)d->n * c->real_size, &terms, err))
        || (s = clc_buf_alloc(c, APGD_TERMS * (size_t)d->nprob * c->real_size, &sums, err))
        || (s = clc_kernel(c, "apgd_candidate", &k_cand, err))
        || (s = clc_kernel(c, d->body.nb ? "body_apply_apgd_terms" : "apgd_terms", &k_terms, err))
        || (s = clc_kernel(c, "apgd_accept", &k_acc, err)) || (s = clc_kernel(c, "apgd_momentum", &k_mom, err))
        || (s = clc_kernel(c, "apgd_update_candidate", &k_upd, err))
        || (s = clc_kernel(c, "desaxce_shift", &k_shift, err)))
        goto out;
    /* x = r (projected by the caller), wx = W x, y = x, wy = wx */
    if ((s = clc_dev_apply(d, d->r, wx, err))) goto out;
    {
        cl_int e = clEnqueueCopyBuffer(c->queue, d->r, y, 0, 0, v3, 0, NULL, NULL);
        if (e == CL_SUCCESS) e = clEnqueueCopyBuffer(c->queue, wx, wy, 0, 0, v3, 0, NULL, NULL);
        if (e != CL_SUCCESS) {
            s = clc_cl_fail(err, e, "clEnqueueCopyBuffer");
            goto out;
        }
    }
    if (coulomb
        && ((s = SET_ARGS(k_shift, "desaxce_shift", err, KI(d->n), KM(d->prob), KM(d->active), KM(d->q), KM(d->mu),
                          KM(wx), KM(d->r), KM(qe), KM(y), KM(wy)))
            || (s = clc_run(c, k_shift, (size_t)d->n, 0, "desaxce_shift", err))))
        goto out;
    if ((s = SET_ARGS(k_cand, "apgd_candidate", err, KI(d->n), KM(d->prob), KM(d->active), KM(acc), KM(L), KM(y),
                      KM(wy), KM(qe), KM(d->mu), KM(xn)))
        || (s = d->body.nb ? SET_ARGS(k_terms, "body_apply_apgd_terms", err, KI(d->n), KM(d->body.ca), KM(d->body.cb), KM(d->body.frame),
                                 KM(d->body.arm), KM(d->body.dv), KM(d->body.Rd), KM(y), KM(wy), KM(qe), KM(d->r), KM(xn), KM(wxn),
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
        s = clc_dev_iterate(d, apgd_step, apgd_checked, &A, err);
    }
out:
    {
        cl_mem *mems[] = {&wx, &y, &wy, &xn, &wxn, &qe, &L, &th, &beta, &acc, &terms, &sums};
        cl_kernel *ks[] = {&k_cand, &k_terms, &k_acc, &k_mom, &k_upd, &k_shift};
        for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clc_buf_free(c, mems[i]);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) clc_release_kernel(ks[i]);
    }
    free(ones);
    free(zeros);
    return s;
}

/* The device entries (clc_dev_fn), named in solve/contract.c's rows. */
clc_dev_fn clc_dev_jacobi, clc_dev_cgs, clc_dev_acgs, clc_dev_apgd;

clcone_status clc_dev_jacobi(clc_dev_batch *d, double *r, clcone_error *err)
{
    return clc_dev_solve(d, r, CLCONE_GROUP_JACOBI, jacobi_loop, err);
}

clcone_status clc_dev_cgs(clc_dev_batch *d, double *r, clcone_error *err)
{
    return clc_dev_solve(d, r, CLCONE_GROUP_CGS, cgs_loop, err);
}

clcone_status clc_dev_acgs(clc_dev_batch *d, double *r, clcone_error *err)
{
    return clc_dev_solve(d, r, CLCONE_GROUP_ACGS, acgs_loop, err);
}

clcone_status clc_dev_apgd(clc_dev_batch *d, double *r, clcone_error *err)
{
    /* APGD iterates inside the cones from the start */
    for (int c = 0; c < d->n; ++c) cone_project(d->h.mu[c], r + 3 * c);
    return clc_dev_solve(d, r, CLCONE_GROUP_APGD, apgd_loop, err);
}
