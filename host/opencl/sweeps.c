/* Projected Jacobi and coloured Gauss-Seidel (CGS) on a device, each a
 * step of launches in the one iteration loop (clc_dev_iterate), on
 * local-form batches and body-form scenes alike (only the operator
 * differs). Their kernels are the form programs' (kernels/local_form.cl,
 * kernels/body_form.cl, kernels/iterate.cl's jacobi_step), since each
 * reads its form's W; the sweep is shared with ACGS (opencl/acgs.c).
 * Each device entry runs its whole-problem kernel when the batch fits one
 * (opencl/group_solve.c), else its loop here. */
#include "opencl/sweeps.h"
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

void clc_sweep_close(clc_dev_batch *d, clc_sweep *w)
{
    clc_buf_free(d->c, &w->ord);
    clc_buf_free(d->c, &w->dg);
    clc_buf_free(d->c, &w->om);
    clc_release_kernel(&w->k);
}

clcone_status clc_sweep_open(clc_dev_batch *d, clc_sweep *w, clcone_error *err)
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

clcone_status clc_sweep_run(clc_dev_batch *d, clc_sweep *w, cl_mem r, int it, clcone_error *err)
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
    return clc_sweep_run(d, state, d->r, it, err);
}

static clcone_status cgs_loop(clc_dev_batch *d, clcone_error *err)
{
    clc_sweep w;
    clcone_status s;
    if (d->body.nb && (s = clc_dev_apply(d, d->r, d->w, err))) return s; /* dv = M^-1 J^T r0 */
    if ((s = clc_sweep_open(d, &w, err))) goto out;
    /* each check recomputes dv = M^-1 J^T r exactly (loop_measure); the
     * sweeps go on from it, so the incremental updates never drift far */
    s = clc_dev_iterate(d, cgs_step, NULL, &w, err);
out:
    clc_sweep_close(d, &w);
    return s;
}

/* The device entries (clc_dev_fn), named in solve/contract.c's rows. */
clc_dev_fn clc_dev_jacobi, clc_dev_cgs;

clcone_status clc_dev_jacobi(clc_dev_batch *d, double *r, clcone_error *err)
{
    return clc_dev_solve(d, r, CLCONE_GROUP_JACOBI, jacobi_loop, err);
}

clcone_status clc_dev_cgs(clc_dev_batch *d, double *r, clcone_error *err)
{
    return clc_dev_solve(d, r, CLCONE_GROUP_CGS, cgs_loop, err);
}
