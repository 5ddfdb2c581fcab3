/* Device solvers (OpenCL) for local-form batches: projected Jacobi,
 * coloured Gauss-Seidel and APGD. Everything is uploaded once; inside an
 * iteration the host only enqueues kernels. Every o->check_every
 * iterations the per-problem error sums (4 reals per problem) come back,
 * converged problems are frozen (their `active` flag cleared) and the
 * loop ends when none is left, so each problem of a batch stops exactly
 * where it would stop alone. */
#include "opencl.h"
#include "reference.h"
#include "cone.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct karg {
    size_t size;
    const void *ptr;  /* NULL: __local memory of `size` bytes */
} karg;
#define KM(m) ((karg){sizeof(cl_mem), &(m)})
#define KI(i) ((karg){sizeof(int), &(i)})
#define KLOCAL(bytes) ((karg){(bytes), NULL})

static clcone_status set_args(cl_kernel k, const char *name, int n, const karg *a, clcone_error *err)
{
    for (int i = 0; i < n; ++i) {
        cl_int e = clSetKernelArg(k, (cl_uint)i, a[i].size, a[i].ptr);
        if (e != CL_SUCCESS) {
            char what[128];
            snprintf(what, sizeof what, "setting argument %d of kernel %s", i, name);
            return clcone_cl_fail(err, e, what);
        }
    }
    return CLCONE_OK;
}
#define SET_ARGS(k, name, err, ...)                                                    \
    set_args(k, name, (int)(sizeof((karg[]){__VA_ARGS__}) / sizeof(karg)), (karg[]){__VA_ARGS__}, \
             err)

#define REDUCE_WG 64 /* must match kernels/reduce.cl */

/* State shared by the device solvers of one local-form batch. */
typedef struct dev_local {
    clcone_context *c;
    const clcone_problem *p;
    const clcone_options *o;
    int n, nprob, model, facets, inner, remaining;
    cl_mem row_ptr, col, W, q, mu, prob, prob_off, active, r, terms, sums;
    cl_kernel k_resid, k_reduce;
    int *active_h;
    double *sums_h, t0;
    clcone_result *res;
} dev_local;

static void release_mem(cl_mem *m)
{
    if (*m) clReleaseMemObject(*m);
    *m = NULL;
}

static void release_kernel(cl_kernel *k)
{
    if (*k) clReleaseKernel(*k);
    *k = NULL;
}

static void dev_close(dev_local *d)
{
    cl_mem *mems[] = {&d->row_ptr, &d->col, &d->W, &d->q, &d->mu, &d->prob, &d->prob_off,
                      &d->active, &d->r, &d->terms, &d->sums};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) release_mem(mems[i]);
    release_kernel(&d->k_resid);
    release_kernel(&d->k_reduce);
    free(d->active_h);
    free(d->sums_h);
}

static clcone_status dev_open(dev_local *d, clcone_context *c, const clcone_problem *p,
                              const clcone_options *o, const double *r0, clcone_result *res,
                              clcone_error *err)
{
    clcone_status s;
    int *prob = NULL;
    memset(d, 0, sizeof *d);
    d->c = c;
    d->p = p;
    d->o = o;
    d->n = p->n;
    d->nprob = p->nprob;
    d->model = (int)o->model;
    d->facets = o->facets;
    d->inner = o->fit == CLCONE_FIT_INNER;
    d->remaining = p->nprob;
    d->res = res;
    d->active_h = clcone_calloc((size_t)p->nprob, sizeof *d->active_h, err, "active flags");
    d->sums_h = clcone_calloc((size_t)p->nprob * 8, sizeof *d->sums_h, err, "problem sums");
    prob = clcone_calloc((size_t)p->n, sizeof *prob, err, "contact problems");
    if (!d->active_h || !d->sums_h || !prob) {
        free(prob);
        return CLCONE_ENOMEM;
    }
    for (int k = 0; k < p->nprob; ++k) {
        d->active_h[k] = 1;
        for (int c2 = p->prob_off[k]; c2 < p->prob_off[k + 1]; ++c2) prob[c2] = k;
    }
    if ((s = clcone_buf_ints(c, p->row_ptr, (size_t)p->n + 1, &d->row_ptr, err))
        || (s = clcone_buf_ints(c, p->col, (size_t)p->nnzb, &d->col, err))
        || (s = clcone_buf_reals(c, p->blocks, 9 * (size_t)p->nnzb, &d->W, err))
        || (s = clcone_buf_reals(c, p->q, 3 * (size_t)p->n, &d->q, err))
        || (s = clcone_buf_reals(c, p->mu, (size_t)p->n, &d->mu, err))
        || (s = clcone_buf_ints(c, prob, (size_t)p->n, &d->prob, err))
        || (s = clcone_buf_ints(c, p->prob_off, (size_t)p->nprob + 1, &d->prob_off, err))
        || (s = clcone_buf_ints(c, d->active_h, (size_t)p->nprob, &d->active, err))
        || (s = clcone_buf_reals(c, r0, 3 * (size_t)p->n, &d->r, err))
        || (s = clcone_buf_alloc(c, 8 * (size_t)p->n * c->real_size, &d->terms, err))
        || (s = clcone_buf_alloc(c, 8 * (size_t)p->nprob * c->real_size, &d->sums, err))
        || (s = clcone_kernel(c, "residual_local", &d->k_resid, err))
        || (s = clcone_kernel(c, "reduce_rows", &d->k_reduce, err))) {
        free(prob);
        return s;
    }
    free(prob);
    d->t0 = clcone_now_ms();
    return CLCONE_OK;
}

/* Sums K per-contact terms per problem into d->sums_h (read back). */
static clcone_status dev_reduce(dev_local *d, cl_mem terms, int K, cl_mem sums, double *host,
                                clcone_error *err)
{
    clcone_status s;
    if ((s = SET_ARGS(d->k_reduce, "reduce_rows", err, KI(d->nprob), KM(d->prob_off), KI(K), KM(terms),
                      KM(sums), KLOCAL((size_t)REDUCE_WG * (size_t)K * d->c->real_size)))
        || (s = clcone_run(d->c, d->k_reduce, (size_t)d->nprob * REDUCE_WG, REDUCE_WG, "reduce_rows", err)))
        return s;
    return host ? clcone_read_reals(d->c, sums, host, (size_t)d->nprob * (size_t)K, err) : CLCONE_OK;
}

/* Measures every active problem's error at iteration it, freezes the
 * converged and diverged ones and records their results. */
static clcone_status dev_check(dev_local *d, int it, clcone_error *err)
{
    clcone_status s;
    int changed = 0;
    double now;
    if ((s = SET_ARGS(d->k_resid, "residual_local", err, KI(d->n), KM(d->row_ptr), KM(d->col), KM(d->W),
                      KM(d->q), KM(d->mu), KM(d->r), KM(d->terms), KI(d->model), KI(d->facets),
                      KI(d->inner)))
        || (s = clcone_run(d->c, d->k_resid, (size_t)d->n, 0, "residual_local", err))
        || (s = dev_reduce(d, d->terms, 4, d->sums, d->sums_h, err)))
        return s;
    now = clcone_now_ms();
    for (int k = 0; k < d->nprob; ++k) {
        clcone_prob_result *out = &d->res->items[k];
        const double *t = d->sums_h + 4 * k;
        double e;
        if (!d->active_h[k]) continue;
        e = clcone_scaled_error(t[0], t[1], t[2], t[3]);
        out->iters = it;
        out->error = e;
        out->time_ms = now - d->t0;
        if (!isfinite(e)) {
            out->status = CLCONE_DIVERGED;
            snprintf(out->reason, sizeof out->reason, "non-finite error after %d iterations", it);
        } else if (e <= d->o->tol) {
            out->status = CLCONE_CONVERGED;
        } else if (d->o->max_seconds > 0 && now - d->t0 > 1e3 * d->o->max_seconds) {
            out->status = CLCONE_MAXITER;
            snprintf(out->reason, sizeof out->reason, "time cap %.3g s reached", d->o->max_seconds);
        } else if (it >= d->o->max_iter) {
            out->status = CLCONE_MAXITER;
            snprintf(out->reason, sizeof out->reason, "iteration cap %d reached", d->o->max_iter);
        } else {
            continue;
        }
        d->active_h[k] = 0;
        --d->remaining;
        changed = 1;
    }
    if (changed) {
        cl_int e = clEnqueueWriteBuffer(d->c->queue, d->active, CL_TRUE, 0, sizeof(int) * (size_t)d->nprob,
                                        d->active_h, 0, NULL, NULL);
        if (e != CL_SUCCESS) return clcone_cl_fail(err, e, "clEnqueueWriteBuffer(active)");
    }
    return CLCONE_OK;
}

static int is_check(const clcone_options *o, int it)
{
    return it % o->check_every == 0 || it >= o->max_iter;
}

static clcone_status dev_jacobi(dev_local *d, clcone_error *err)
{
    const clcone_problem *p = d->p;
    double *omega = clcone_calloc((size_t)p->n, sizeof *omega, err, "Jacobi steps");
    cl_mem om = NULL, r2 = NULL;
    cl_kernel k = NULL;
    clcone_status s;
    if (!omega) return CLCONE_ENOMEM;
    for (int c = 0; c < p->n; ++c) omega[c] = 1.0 / ref_row_block_norm(p, c);
    s = clcone_buf_reals(d->c, omega, (size_t)p->n, &om, err);
    free(omega);
    if (s || (s = clcone_buf_alloc(d->c, 3 * (size_t)p->n * d->c->real_size, &r2, err))
        || (s = clcone_kernel(d->c, "jacobi_local", &k, err)))
        goto out;
    for (int it = 1; it <= d->o->max_iter && d->remaining > 0; ++it) {
        cl_mem tmp;
        if ((s = SET_ARGS(k, "jacobi_local", err, KI(d->n), KM(d->row_ptr), KM(d->col), KM(d->W), KM(d->q),
                          KM(d->mu), KM(om), KM(d->prob), KM(d->active), KM(d->r), KM(r2), KI(d->model),
                          KI(d->facets), KI(d->inner)))
            || (s = clcone_run(d->c, k, (size_t)d->n, 0, "jacobi_local", err)))
            goto out;
        tmp = d->r;
        d->r = r2;
        r2 = tmp;
        if (is_check(d->o, it) && (s = dev_check(d, it, err))) goto out;
    }
out:
    release_mem(&om);
    release_mem(&r2);
    release_kernel(&k);
    return s;
}

static clcone_status dev_cgs(dev_local *d, clcone_error *err)
{
    const clcone_problem *p = d->p;
    int nc = 0, *cptr = NULL, *order = NULL, *diag = NULL;
    double *omega = NULL;
    cl_mem ord = NULL, dg = NULL, om = NULL;
    cl_kernel k = NULL;
    clcone_status s = ref_color_contacts(p, 0, p->n, &nc, &cptr, &order, err);
    if (s) return s;
    diag = clcone_calloc((size_t)p->n, sizeof *diag, err, "diagonal blocks");
    omega = clcone_calloc((size_t)p->n, sizeof *omega, err, "CGS steps");
    if (!diag || !omega) {
        s = CLCONE_ENOMEM;
        goto out;
    }
    for (int c = 0; c < p->n; ++c)
        for (int b = p->row_ptr[c]; b < p->row_ptr[c + 1]; ++b)
            if (p->col[b] == c) {
                double lo, hi;
                diag[c] = b;
                ref_sym3_eig_range(p->blocks + 9 * b, &lo, &hi);
                omega[c] = 1.0 / hi;
            }
    if ((s = clcone_buf_ints(d->c, order, (size_t)p->n, &ord, err))
        || (s = clcone_buf_ints(d->c, diag, (size_t)p->n, &dg, err))
        || (s = clcone_buf_reals(d->c, omega, (size_t)p->n, &om, err))
        || (s = clcone_kernel(d->c, "cgs_local", &k, err)))
        goto out;
    for (int it = 1; it <= d->o->max_iter && d->remaining > 0; ++it) {
        for (int col = 0; col < nc; ++col) {
            int start = cptr[col], count = cptr[col + 1] - cptr[col];
            if ((s = SET_ARGS(k, "cgs_local", err, KI(start), KI(count), KM(ord), KM(d->row_ptr), KM(d->col),
                              KM(d->W), KM(dg), KM(d->q), KM(d->mu), KM(om), KM(d->prob), KM(d->active),
                              KM(d->r), KI(d->model), KI(d->facets), KI(d->inner), KI(it)))
                || (s = clcone_run(d->c, k, (size_t)count, 0, "cgs_local", err)))
                goto out;
        }
        if (is_check(d->o, it) && (s = dev_check(d, it, err))) goto out;
    }
out:
    free(cptr);
    free(order);
    free(diag);
    free(omega);
    release_mem(&ord);
    release_mem(&dg);
    release_mem(&om);
    release_kernel(&k);
    return s;
}

/* Tries per iteration of the Lipschitz backtracking: a problem still
 * refused after them keeps its iterate, with L raised, for the next. */
#define APGD_TRIES 2
#define APGD_TERMS 7

static clcone_status dev_apgd(dev_local *d, clcone_error *err)
{
    const clcone_problem *p = d->p;
    clcone_context *c = d->c;
    size_t v3 = 3 * (size_t)p->n * c->real_size;
    cl_mem wx = NULL, y = NULL, wy = NULL, xn = NULL, wxn = NULL, qe = NULL, L = NULL, th = NULL,
           beta = NULL, acc = NULL, terms = NULL, sums = NULL;
    cl_kernel k_mv = NULL, k_cand = NULL, k_terms = NULL, k_acc = NULL, k_mom = NULL, k_upd = NULL,
              k_shift = NULL;
    double *Lh = clcone_calloc((size_t)p->nprob, sizeof *Lh, err, "APGD steps");
    double *ones = clcone_calloc((size_t)p->nprob, sizeof *ones, err, "APGD momentum");
    int *zeros = clcone_calloc((size_t)p->nprob, sizeof *zeros, err, "APGD flags");
    int coulomb = d->model == CLCONE_MODEL_COULOMB;
    clcone_status s = CLCONE_ENOMEM;
    if (!Lh || !ones || !zeros) goto out;
    for (int k = 0; k < p->nprob; ++k) {
        ones[k] = 1.0;
        for (int c2 = p->prob_off[k]; c2 < p->prob_off[k + 1]; ++c2) Lh[k] = fmax(Lh[k], ref_row_block_norm(p, c2));
        if (!(Lh[k] > 0)) Lh[k] = 1.0;
    }
    if ((s = clcone_buf_alloc(c, v3, &wx, err)) || (s = clcone_buf_alloc(c, v3, &y, err))
        || (s = clcone_buf_alloc(c, v3, &wy, err)) || (s = clcone_buf_alloc(c, v3, &xn, err))
        || (s = clcone_buf_alloc(c, v3, &wxn, err)) || (s = clcone_buf_reals(c, p->q, 3 * (size_t)p->n, &qe, err))
        || (s = clcone_buf_reals(c, Lh, (size_t)p->nprob, &L, err))
        || (s = clcone_buf_reals(c, ones, (size_t)p->nprob, &th, err))
        || (s = clcone_buf_reals(c, ones, (size_t)p->nprob, &beta, err))
        || (s = clcone_buf_ints(c, zeros, (size_t)p->nprob, &acc, err))
        || (s = clcone_buf_alloc(c, APGD_TERMS * (size_t)p->n * c->real_size, &terms, err))
        || (s = clcone_buf_alloc(c, APGD_TERMS * (size_t)p->nprob * c->real_size, &sums, err))
        || (s = clcone_kernel(c, "matvec_local", &k_mv, err)) || (s = clcone_kernel(c, "apgd_candidate", &k_cand, err))
        || (s = clcone_kernel(c, "apgd_terms", &k_terms, err)) || (s = clcone_kernel(c, "apgd_accept", &k_acc, err))
        || (s = clcone_kernel(c, "apgd_momentum", &k_mom, err)) || (s = clcone_kernel(c, "apgd_update", &k_upd, err))
        || (s = clcone_kernel(c, "desaxce_shift", &k_shift, err)))
        goto out;
    /* x = r (projected by the caller), wx = W x, y = x, wy = wx */
    if ((s = SET_ARGS(k_mv, "matvec_local", err, KI(d->n), KM(d->row_ptr), KM(d->col), KM(d->W), KM(d->r), KM(wx)))
        || (s = clcone_run(c, k_mv, (size_t)d->n, 0, "matvec_local", err)))
        goto out;
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
        || (s = SET_ARGS(k_mv, "matvec_local", err, KI(d->n), KM(d->row_ptr), KM(d->col), KM(d->W), KM(xn), KM(wxn)))
        || (s = SET_ARGS(k_terms, "apgd_terms", err, KI(d->n), KM(y), KM(wy), KM(qe), KM(d->r), KM(xn), KM(wxn),
                         KM(terms)))
        || (s = SET_ARGS(k_acc, "apgd_accept", err, KI(d->nprob), KM(d->active), KM(acc), KM(L), KM(sums)))
        || (s = SET_ARGS(k_mom, "apgd_momentum", err, KI(d->nprob), KM(d->active), KM(acc), KM(th), KM(beta), KM(L),
                         KM(sums)))
        || (s = SET_ARGS(k_upd, "apgd_update", err, KI(d->n), KM(d->prob), KM(d->active), KM(beta), KM(d->r), KM(wx),
                         KM(xn), KM(wxn), KM(y), KM(wy))))
        goto out;
    for (int it = 1; it <= d->o->max_iter && d->remaining > 0; ++it) {
        for (int t = 0; t < APGD_TRIES; ++t)
            if ((s = clcone_run(c, k_cand, (size_t)d->n, 0, "apgd_candidate", err))
                || (s = clcone_run(c, k_mv, (size_t)d->n, 0, "matvec_local", err))
                || (s = clcone_run(c, k_terms, (size_t)d->n, 0, "apgd_terms", err))
                || (s = dev_reduce(d, terms, APGD_TERMS, sums, NULL, err))
                || (s = clcone_run(c, k_acc, (size_t)d->nprob, 0, "apgd_accept", err)))
                goto out;
        if ((s = clcone_run(c, k_mom, (size_t)d->nprob, 0, "apgd_momentum", err))
            || (s = clcone_run(c, k_upd, (size_t)d->n, 0, "apgd_update", err)))
            goto out;
        if (!is_check(d->o, it)) continue;
        if ((s = dev_check(d, it, err))) goto out;
        if (coulomb && d->remaining > 0) {
            cl_int e;
            double one = 1.0;
            float onef = 1.0f;
            /* new cone QP: shift from the current velocities, momentum reset */
            if ((s = SET_ARGS(k_shift, "desaxce_shift", err, KI(d->n), KM(d->prob), KM(d->active), KM(d->q),
                              KM(d->mu), KM(wx), KM(d->r), KM(qe), KM(y), KM(wy)))
                || (s = clcone_run(c, k_shift, (size_t)d->n, 0, "desaxce_shift", err)))
                goto out;
            e = clEnqueueFillBuffer(c->queue, th, c->prec == CLCONE_DOUBLE ? (void *)&one : (void *)&onef,
                                    c->real_size, 0, (size_t)p->nprob * c->real_size, 0, NULL, NULL);
            if (e != CL_SUCCESS) {
                s = clcone_cl_fail(err, e, "clEnqueueFillBuffer(theta)");
                goto out;
            }
        }
    }
out:
    {
        cl_mem *mems[] = {&wx, &y, &wy, &xn, &wxn, &qe, &L, &th, &beta, &acc, &terms, &sums};
        cl_kernel *ks[] = {&k_mv, &k_cand, &k_terms, &k_acc, &k_mom, &k_upd, &k_shift};
        for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) release_mem(mems[i]);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) release_kernel(ks[i]);
    }
    free(Lh);
    free(ones);
    free(zeros);
    return s;
}

clcone_status clcone_solve_device(clcone_context *c, const clcone_problem *p, const clcone_options *o,
                                  double *r, clcone_result *res, clcone_error *err)
{
    dev_local d;
    clcone_status s;
    if (o->solver != CLCONE_SOLVER_JACOBI && o->solver != CLCONE_SOLVER_CGS && o->solver != CLCONE_SOLVER_APGD)
        return clcone_fail(err, CLCONE_ENOTSUP,
                           "solver %s does not run on OpenCL devices (device solvers: jacobi, cgs, apgd; "
                           "use --device ref for the CPU reference)", clcone_solver_name(o->solver));
    if (o->solver == CLCONE_SOLVER_APGD && o->model == CLCONE_MODEL_PYRAMID)
        return clcone_fail(err, CLCONE_ENOTSUP, "apgd is not offered for the pyramid model (use jacobi or cgs)");
    if (o->solver == CLCONE_SOLVER_APGD)
        for (int c2 = 0; c2 < p->n; ++c2) cone_project(p->mu[c2], r + 3 * c2);
    if ((s = dev_open(&d, c, p, o, r, res, err))) goto out;
    s = o->solver == CLCONE_SOLVER_JACOBI ? dev_jacobi(&d, err)
        : o->solver == CLCONE_SOLVER_CGS  ? dev_cgs(&d, err)
                                          : dev_apgd(&d, err);
    if (!s) {
        cl_int e = clFinish(c->queue);
        if (e != CL_SUCCESS) s = clcone_cl_fail(err, e, "clFinish");
    }
    if (!s) s = clcone_read_reals(c, d.r, r, 3 * (size_t)p->n, err);
out:
    dev_close(&d);
    return s;
}
