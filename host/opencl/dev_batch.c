/* The device state of one batch (opencl/dev_batch.h): opened and closed,
 * its operator w = W x in either form, and its side of the one iteration
 * loop (core/iterate.c): a solver's iteration as launches, the errors of a
 * check as the residual kernel and one per-problem sum read back, and the
 * problems the loop stopped frozen through d->active. */
#include "opencl/dev_batch.h"
#include "core/analysis.h"
#include "cone.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clc_release_kernel(cl_kernel *k)
{
    if (*k) clReleaseKernel(*k);
    *k = NULL;
}

void clc_dev_close(clc_dev_batch *d)
{
    cl_mem *mems[] = {&d->row_ptr, &d->col, &d->W, &d->q, &d->mu, &d->prob, &d->prob_off,
                      &d->active, &d->r, &d->w, &d->terms, &d->sums, &d->body.bptr, &d->body.bc, &d->body.bs,
                      &d->body.ca, &d->body.cb, &d->body.frame, &d->body.arm, &d->body.inv_mass, &d->body.inv_inertia, &d->body.dv,
                      &d->body.Wcc, &d->body.Rd};
    cl_kernel *ks[] = {&d->k_resid, &d->k_reduce, &d->k_mv, &d->body.k_gather, &d->body.k_capply, &d->k_group};
    cl_mem *gmems[] = {&d->g_state, &d->g_err, &d->g_L0, &d->g_L, &d->g_theta};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clc_buf_free(d->c, mems[i]);
    for (size_t i = 0; i < sizeof gmems / sizeof gmems[0]; ++i) clc_buf_free(d->c, gmems[i]);
    for (int i = 0; i < GROUP_BUFFERS; ++i) clc_buf_free(d->c, &d->g_mem[i]);
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) clc_release_kernel(ks[i]);
    clc_handover_close(d);
    free(d->active_h);
    free(d->sums_h);
    free(d->stage);
    free(d->body.halo);
    free(d->h.omega_j);
    free(d->h.omega_gs);
    free(d->h.Lmax);
    free(d->h.color_ptr);
    free(d->h.order);
}

/* A part's ghosts' dv: the gather leaves them partial (the part holds
 * only the contacts its own bodies touch), the parts that own them send
 * them whole; through host memory, in the device's precision. */
clcone_status clc_dev_halo(clc_dev_batch *d, clcone_error *err)
{
    const clcone_dev_part *P = d->body.part;
    size_t body = 6 * d->c->real_size, nsend, nrecv;
    char *h = d->body.halo;
    cl_int e;
    clcone_status s;
    if (!P) return CLCONE_OK;
    nsend = (size_t)(P->own - P->send) * body;
    nrecv = (size_t)P->ghosts * body;
    e = nsend ? clEnqueueReadBuffer(d->c->queue, d->body.dv, CL_TRUE, (size_t)P->send * body, nsend, h, 0, NULL, NULL)
              : clFinish(d->c->queue);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clEnqueueReadBuffer(halo)");
    if ((s = P->exchange(P->ctx, h, h + nsend, d->c->real_size, err))) return s;
    e = nrecv ? clEnqueueWriteBuffer(d->c->queue, d->body.dv, CL_TRUE, (size_t)P->own * body, nrecv, h + nsend, 0, NULL,
                                     NULL)
              : CL_SUCCESS;
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "clEnqueueWriteBuffer(halo)");
}

/* Body form: dv = M^-1 J^T x. */
clcone_status clc_dev_body_dv(clc_dev_batch *d, cl_mem x, clcone_error *err)
{
    clcone_status s = SET_ARGS(d->body.k_gather, "body_gather", err, KI(d->body.nb), KM(d->body.bptr), KM(d->body.bc), KM(d->body.bs),
                               KM(d->body.frame), KM(d->body.arm), KM(d->body.inv_mass), KM(d->body.inv_inertia), KM(x), KM(d->body.dv));
    if (!s) s = clc_run(d->c, d->body.k_gather, (size_t)d->body.nb, 0, "body_gather", err);
    return s ? s : clc_dev_halo(d, err);
}

/* w = W x with the form's operator. */
clcone_status clc_dev_apply(clc_dev_batch *d, cl_mem x, cl_mem w, clcone_error *err)
{
    clcone_status s;
    if (!d->body.nb)
        return (s = SET_ARGS(d->k_mv, "matvec_local", err, KI(d->n), KM(d->row_ptr), KM(d->col), KM(d->W), KM(x),
                             KM(w)))
                   ? s
                   : clc_run(d->c, d->k_mv, (size_t)d->n, 0, "matvec_local", err);
    if ((s = clc_dev_body_dv(d, x, err))
        || (s = SET_ARGS(d->body.k_capply, "body_contact_apply", err, KI(d->n), KM(d->body.ca), KM(d->body.cb), KM(d->body.frame),
                         KM(d->body.arm), KM(d->body.dv), KM(d->body.Rd), KM(x), KM(w))))
        return s;
    return clc_run(d->c, d->body.k_capply, (size_t)d->n, 0, "body_contact_apply", err);
}

/* What a plan keeps whatever its contacts: the options, the per-problem
 * flags and error sums, the error kernels. The arrays sized by the
 * contacts come with each form (plan_size). */
clcone_status clc_dev_open(clc_dev_batch *d, clcone_context *c, int nprob, const clcone_options *o,
                              clcone_error *err)
{
    clcone_status s;
    d->c = c;
    d->o = o;
    d->nprob = nprob;
    d->model = (int)o->model;
    d->facets = o->facets;
    d->inner = o->fit == CLCONE_FIT_INNER;
    d->active_h = clc_calloc((size_t)nprob, sizeof *d->active_h, err, "active flags");
    d->sums_h = clc_calloc((size_t)nprob * 4, sizeof *d->sums_h, err, "problem sums");
    if (!d->active_h || !d->sums_h) return CLCONE_ENOMEM;
    if ((s = clc_buf_alloc(c, sizeof(int) * (size_t)nprob, &d->active, err))
        || (s = clc_buf_alloc(c, 4 * (size_t)nprob * c->real_size, &d->sums, err))
        || (s = clc_kernel(c, "residual_terms", &d->k_resid, err)))
        return s;
    return clc_kernel(c, "reduce_rows", &d->k_reduce, err);
}

/* Starts a solve from r0 with every problem active; the clock starts here,
 * after every upload that does not change between solves. Nothing here
 * waits for the device: the start goes up from the staging area. */
clcone_status clc_dev_begin(clc_dev_batch *d, const double *r0, clcone_error *err)
{
    clcone_status s;
    cl_int e;
    const clc_dev_watch *w = d->watch;
    for (int k = 0; k < d->nprob; ++k) d->active_h[k] = !(w && w->skip && w->skip[k]);
    d->t0 = w && w->t0 > 0 ? w->t0 : clc_now_ms();
    if ((s = clc_stage_reals(d->c, "warm start of contact", 3, r0, 3 * (size_t)d->n, d->stage, err))) return s;
    e = clEnqueueWriteBuffer(d->c->queue, d->r, CL_FALSE, 0, 3 * (size_t)d->n * d->c->real_size, d->stage, 0, NULL,
                             NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(d->c->queue, d->active, CL_FALSE, 0, sizeof(int) * (size_t)d->nprob, d->active_h, 0,
                                 NULL, NULL);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "clEnqueueWriteBuffer(start)");
}

/* A part's K sums over the whole scene (part->sum), into sums and host. */
static clcone_status part_reduce(clc_dev_batch *d, cl_mem terms, int K, cl_mem sums, double *host,
                                 clcone_error *err)
{
    const clcone_dev_part *P = d->body.part;
    double *t = clc_calloc((size_t)K * (size_t)d->n + 1, sizeof *t, err, "part terms"), v[8];
    float f[8];
    clcone_status s;
    cl_int e;
    if (!t) return CLCONE_ENOMEM;
    s = clc_read_reals(d->c, terms, t, (size_t)K * (size_t)d->n, err);
    if (!s) s = P->sum(P->ctx, t, d->n, K, v, err);
    free(t);
    if (s) return s;
    /* in the device's precision as its own sums are, without a range
     * check: a float sum that underflows is what the device would have */
    for (int k = 0; k < K; ++k) f[k] = (float)v[k];
    e = clEnqueueWriteBuffer(d->c->queue, sums, CL_TRUE, 0, (size_t)K * d->c->real_size,
                             d->c->prec == CLCONE_DOUBLE ? (void *)v : (void *)f, 0, NULL, NULL);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clEnqueueWriteBuffer(sums)");
    if (host) memcpy(host, v, sizeof *v * (size_t)K);
    return CLCONE_OK;
}

/* Sums K per-contact terms per problem into d->sums_h (read back). */
clcone_status clc_dev_reduce(clc_dev_batch *d, cl_mem terms, int K, cl_mem sums, double *host,
                                clcone_error *err)
{
    clcone_status s;
    if (d->body.part) return part_reduce(d, terms, K, sums, host, err);
    s = clc_reduce_rows(d->c, d->k_reduce, d->nprob, d->prob_off, K, terms, sums, err);
    if (s) return s;
    return host ? clc_read_reals(d->c, sums, host, (size_t)d->nprob * (size_t)K, err) : CLCONE_OK;
}

/* The device's side of the one iteration loop (core/iterate.c): a
 * solver's iteration as launches, the errors of a check as the residual
 * kernel and one per-problem sum read back, and the problems the loop
 * stopped frozen through d->active. */
typedef struct dev_loop {
    clc_dev_batch *d;
    clc_dev_step_fn step, checked;
    void *state;
} dev_loop;

static clcone_status loop_step(void *ctx, int it, clcone_error *err)
{
    dev_loop *L = ctx;
    return L->step(L->d, L->state, it, err);
}

static clcone_status loop_measure(void *ctx, int it, const int *active, double *errors, clcone_error *err)
{
    clc_dev_batch *d = ((dev_loop *)ctx)->d;
    clcone_status s;
    (void)it;
    if ((s = clc_dev_apply(d, d->r, d->w, err))
        || (s = SET_ARGS(d->k_resid, "residual_terms", err, KI(d->n), KM(d->q), KM(d->mu), KM(d->r), KM(d->w),
                         KM(d->terms), KI(d->model), KI(d->facets), KI(d->inner)))
        || (s = clc_run(d->c, d->k_resid, (size_t)d->n, 0, "residual_terms", err))
        || (s = clc_dev_reduce(d, d->terms, 4, d->sums, d->sums_h, err)))
        return s;
    for (int k = 0; k < d->nprob; ++k) {
        const double *t = d->sums_h + 4 * k;
        if (active[k]) errors[k] = clc_scaled_error(t[0], t[1], t[2], t[3]);
    }
    return CLCONE_OK;
}

static clcone_status loop_checked(void *ctx, int it, const int *active, const double *errors, int changed,
                                  clcone_error *err)
{
    dev_loop *L = ctx;
    clc_dev_batch *d = L->d;
    (void)errors; /* the device decides on its own sums */
    if (changed) {
        cl_int e;
        memcpy(d->active_h, active, sizeof(int) * (size_t)d->nprob);
        e = clEnqueueWriteBuffer(d->c->queue, d->active, CL_TRUE, 0, sizeof(int) * (size_t)d->nprob, d->active_h, 0,
                                 NULL, NULL);
        if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clEnqueueWriteBuffer(active)");
    }
    return L->checked ? L->checked(d, L->state, it, err) : CLCONE_OK;
}

static clcone_status loop_sync(void *ctx, clcone_error *err)
{
    cl_int e = clFinish(((dev_loop *)ctx)->d->c->queue);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "clFinish");
}

static clcone_status loop_agree_ms(void *ctx, double *ms, clcone_error *err)
{
    const clcone_dev_part *part = ((dev_loop *)ctx)->d->body.part;
    return part->max(part->ctx, ms, err);
}

static int loop_hand_over(void *ctx, int k, int it, double e)
{
    const clc_dev_watch *w = ((dev_loop *)ctx)->d->watch;
    return w->hand_over(w->state, k, it, e);
}

/* Runs step until every problem of the batch has stopped; checked (NULL:
 * none) runs after each check that leaves problems running. */
clcone_status clc_dev_iterate(clc_dev_batch *d, clc_dev_step_fn step, clc_dev_step_fn checked, void *state, clcone_error *err)
{
    dev_loop L = {d, step, checked, state};
    clc_iter_ops ops = {&L, d->nprob, 0, d->t0, loop_step, loop_measure, loop_checked, loop_sync,
                        NULL, NULL, NULL, 0};
    if (d->body.part) ops.agree_ms = loop_agree_ms;
    if (d->watch) {
        ops.hand_over = d->watch->hand_over ? loop_hand_over : NULL;
        ops.skip = d->watch->skip;
        ops.it0 = d->watch->it0;
    }
    return clc_iterate(&ops, d->o, d->res->items, err);
}

/* Position of each diagonal block of the local form, for the kernels
 * that take W_cc out of the block rows. */
clcone_status clc_dev_local_diag(clc_dev_batch *d, cl_mem *out, clcone_error *err)
{
    const clcone_problem *p = d->p;
    int *diag = clc_calloc((size_t)p->n, sizeof *diag, err, "diagonal blocks");
    clcone_status s;
    if (!diag) return CLCONE_ENOMEM;
    for (int c = 0; c < p->n; ++c)
        for (int b = p->row_ptr[c]; b < p->row_ptr[c + 1]; ++b)
            if (p->col[b] == c) diag[c] = b;
    s = clc_buf_ints(d->c, diag, (size_t)p->n, out, err);
    free(diag);
    return s;
}

/* APGD's starting Lipschitz estimates per problem: max_c D_c >= lambda_max(W). */
static double *apgd_start_L(const clc_dev_batch *d, clcone_error *err)
{
    double *Lh = clc_calloc((size_t)d->nprob, sizeof *Lh, err, "APGD steps");
    if (Lh)
        for (int k = 0; k < d->nprob; ++k) Lh[k] = d->h.Lmax[k] > 0 ? d->h.Lmax[k] : 1.0;
    return Lh;
}

clcone_status clc_dev_apgd_bounds(clc_dev_batch *d, cl_mem *L, clcone_error *err)
{
    double *Lh = apgd_start_L(d, err);
    clcone_status s;
    if (!Lh) return CLCONE_ENOMEM;
    s = clc_buf_reals(d->c, "APGD step bound of problem", 1, Lh, (size_t)d->nprob, L, err);
    free(Lh);
    return s;
}

/* Host-side step sizes and colouring of a local-form batch. */
clcone_status clc_dev_local_host(const clcone_problem *p, clc_dev_host *h, clcone_error *err)
{
    memset(h, 0, sizeof *h);
    h->n = p->n;
    h->nprob = p->nprob;
    h->prob_off = p->prob_off;
    h->q = p->q;
    h->mu = p->mu;
    h->omega_j = clc_calloc((size_t)p->n, sizeof *h->omega_j, err, "Jacobi steps");
    h->omega_gs = clc_calloc((size_t)p->n, sizeof *h->omega_gs, err, "GS steps");
    h->Lmax = clc_calloc((size_t)p->nprob, sizeof *h->Lmax, err, "APGD bounds");
    if (!h->omega_j || !h->omega_gs || !h->Lmax) return CLCONE_ENOMEM;
    for (int k = 0; k < p->nprob; ++k)
        for (int c = p->prob_off[k]; c < p->prob_off[k + 1]; ++c) {
            double D = clc_row_block_norm(p, c);
            h->omega_j[c] = 1.0 / D;
            h->Lmax[k] = fmax(h->Lmax[k], D);
            for (int b = p->row_ptr[c]; b < p->row_ptr[c + 1]; ++b)
                if (p->col[b] == c) {
                    double lo, hi;
                    clc_sym3_eig_range(p->blocks + 9 * b, &lo, &hi);
                    h->omega_gs[c] = 1.0 / hi;
                }
        }
    return clc_color_contacts(p, 0, p->n, &h->ncolors, &h->color_ptr, &h->order, err);
}

void clc_dev_host_free(clc_dev_host *h)
{
    free(h->omega_j);
    free(h->omega_gs);
    free(h->Lmax);
    free(h->color_ptr);
    free(h->order);
    memset(h, 0, sizeof *h);
}
