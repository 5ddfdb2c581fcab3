/* APGD on a device (kernels/apgd.cl): Nesterov's accelerated projected
 * gradient with backtracking and restart, for coulomb De Saxce's shift
 * frozen between checks; a step of launches in the one iteration loop, on
 * either form; its whole-problem kernel where the batch fits one
 * (opencl/group_solve.c). */
#include "opencl/dev_batch.h"
#include "cone.h"
#include "local_solve.h"
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

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

/* The device entry (clc_dev_fn), named in solve/contract.c's rows. */
clc_dev_fn clc_dev_apgd;

clcone_status clc_dev_apgd(clc_dev_batch *d, double *r, clcone_error *err)
{
    /* APGD iterates inside the cones from the start */
    for (int c = 0; c < d->n; ++c) cone_project(d->h.mu[c], r + 3 * c);
    return clc_dev_solve(d, r, CLCONE_GROUP_APGD, apgd_loop, err);
}
