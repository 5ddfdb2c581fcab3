/* Accelerated CGS on a device (kernels/acgs.cl): CGS's sweep
 * (opencl/sweeps.c) from an extrapolated point, Nesterov's momentum and a
 * function restart, a step of launches in the one iteration loop; its
 * whole-problem kernel where the batch fits one (opencl/group_solve.c). */
#include "opencl/sweeps.h"
#include "cone.h"
#include "local_solve.h"
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

/* One ACGS iteration: the sweep from y (in work), then the restart sum
 * and the extrapolation into d->r (x_k) and y. */
typedef struct dev_acgs_state {
    clc_sweep *w;
    cl_mem y, work, terms, sums;
    cl_kernel k_terms, k_mom, k_upd, k_rise, k_climbed, k_reset;
    size_t v3;
} dev_acgs_state;

static clcone_status acgs_step(clc_dev_batch *d, void *state, int it, clcone_error *err)
{
    dev_acgs_state *A = state;
    clcone_status s;
    cl_int e = clEnqueueCopyBuffer(d->c->queue, A->y, A->work, 0, 0, A->v3, 0, NULL, NULL);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clEnqueueCopyBuffer(work)");
    if ((d->body.nb && (s = clc_dev_body_dv(d, A->work, err))) /* dv = M^-1 J^T y */
        || (s = clc_sweep_run(d, A->w, A->work, it, err))
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
    if (e == CL_SUCCESS) e = clSetKernelArg(A->k_rise, 1, sizeof it, &it);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clSetKernelArg(acgs_climbed, acgs_rise)");
    if ((s = clc_run(d->c, A->k_rise, (size_t)d->n, 0, "acgs_rise", err))
        || (s = clc_dev_reduce(d, A->terms, 2, A->sums, NULL, err))
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
    clc_sweep w;
    cl_mem y = NULL, work = NULL, th = NULL, beta = NULL, terms = NULL, sums = NULL, xc = NULL, uc = NULL,
           reset = NULL;
    cl_kernel k_terms = NULL, k_mom = NULL, k_upd = NULL, k_rise = NULL, k_climbed = NULL, k_reset = NULL;
    double *ones = clc_calloc((size_t)d->nprob, sizeof *ones, err, "acgs momentum");
    int it0 = 0; /* acgs_checked sets the iteration */
    clcone_status s = CLCONE_ENOMEM;
    cl_int e;
    memset(&w, 0, sizeof w);
    if (!ones) goto out;
    for (int p = 0; p < d->nprob; ++p) ones[p] = 1.0;
    if ((s = clc_sweep_open(d, &w, err))
        || (s = clc_buf_alloc(c, v3, &y, err)) || (s = clc_buf_alloc(c, v3, &work, err))
        || (s = clc_buf_reals(c, "acgs theta of problem", 1, ones, (size_t)d->nprob, &th, err))
        || (s = clc_buf_alloc(c, v3, &xc, err)) || (s = clc_buf_alloc(c, v3, &uc, err))
        || (s = clc_buf_alloc(c, (size_t)d->nprob * sizeof(int), &reset, err))
        || (s = clc_buf_alloc(c, (size_t)d->nprob * c->real_size, &beta, err))
        || (s = clc_buf_alloc(c, 2 * (size_t)d->n * c->real_size, &terms, err))
        || (s = clc_buf_alloc(c, 2 * (size_t)d->nprob * c->real_size, &sums, err))
        || (s = clc_kernel(c, "acgs_terms", &k_terms, err))
        || (s = clc_kernel(c, "acgs_momentum", &k_mom, err))
        || (s = clc_kernel(c, "acgs_update", &k_upd, err))
        || (s = clc_kernel(c, "acgs_rise", &k_rise, err))
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
        || (s = SET_ARGS(k_rise, "acgs_rise", err, KI(d->n), KI(it0), KM(d->q), KM(d->r), KM(d->w), KM(xc),
                         KM(uc), KM(terms)))
        || (s = SET_ARGS(k_climbed, "acgs_climbed", err, KI(d->nprob), KI(it0), KM(d->active), KM(sums), KM(th),
                         KM(reset)))
        || (s = SET_ARGS(k_reset, "acgs_reset", err, KI(d->n), KM(d->prob), KM(reset), KM(d->mu), KM(d->r), KM(y))))
        goto out;
    {
        dev_acgs_state A = {&w, y, work, terms, sums, k_terms, k_mom, k_upd, k_rise, k_climbed, k_reset, v3};
        s = clc_dev_iterate(d, acgs_step, acgs_checked, &A, err);
    }
out:
    {
        cl_mem *mems[] = {&y, &work, &th, &beta, &terms, &sums, &xc, &uc, &reset};
        cl_kernel *ks[] = {&k_terms, &k_mom, &k_upd, &k_rise, &k_climbed, &k_reset};
        for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clc_buf_free(c, mems[i]);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) clc_release_kernel(ks[i]);
    }
    clc_sweep_close(d, &w);
    free(ones);
    return s;
}

/* The device entry (clc_dev_fn), named in solve/contract.c's rows. */
clc_dev_fn clc_dev_acgs;

clcone_status clc_dev_acgs(clc_dev_batch *d, double *r, clcone_error *err)
{
    return clc_dev_solve(d, r, CLCONE_GROUP_ACGS, acgs_loop, err);
}
