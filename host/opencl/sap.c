/* SAP on an OpenCL device: the backend of clc_sap_newton (core/sap.c)
 * built on the kernels of kernels/sap.cl. Everything is uploaded once; per
 * Newton iteration the host reads back only scalars: the 6 sums of the
 * evaluation, 2 per CG iteration (to decide when CG stops), 3 for the
 * line-search set-up and 3 per line-search point. Sums are
 * reduce_rows over one "problem" whose rows are the bodies or the
 * contacts: fixed order, no atomics, bitwise reproducible. */
#include "opencl/opencl.h"
#include "core/sap.h"
#include "cone.h"
#include "jacobian.h"
#include "sap_math.h"
#include "schedule.h"
#include "opencl/device_solve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BODY_TERMS_MAX 5  /* widest per-body row reduced */

/* A real_t scalar argument in the context's precision. */
static clcone_status set_real(clcone_context *c, cl_kernel k, int idx, double x, const char *name,
                              clcone_error *err)
{
    float xf = (float)x;
    cl_int e = c->prec == CLCONE_DOUBLE ? clSetKernelArg(k, (cl_uint)idx, sizeof(double), &x)
                                        : clSetKernelArg(k, (cl_uint)idx, sizeof(float), &xf);
    if (e != CL_SUCCESS) {
        char what[128];
        snprintf(what, sizeof what, "setting argument %d of kernel %s", idx, name);
        return clc_cl_fail(err, e, what);
    }
    return CLCONE_OK;
}

/* One buffer argument at a given index (after a scalar). */
static clcone_status set_mem(cl_kernel k, int idx, cl_mem m, const char *name, clcone_error *err)
{
    cl_int e = clSetKernelArg(k, (cl_uint)idx, sizeof(cl_mem), &m);
    if (e != CL_SUCCESS) {
        char what[128];
        snprintf(what, sizeof what, "setting argument %d of kernel %s", idx, name);
        return clc_cl_fail(err, e, what);
    }
    return CLCONE_OK;
}

enum { K_EVC, K_EVB, K_CGS, K_HC, K_HB, K_CGU, K_CGD, K_AJ, K_LSB, K_LSC, K_STEP, K_RED, K_COUNT };
static const char *const KNAMES[K_COUNT] = {
    "sap_eval_contacts", "sap_eval_bodies", "sap_cg_start", "sap_hess_contacts", "sap_hess_bodies",
    "sap_cg_update", "sap_cg_direction", "sap_apply_j", "sap_ls_bodies", "sap_ls_contacts", "sap_step",
    "reduce_rows"};

typedef struct dev_sap {
    clcone_context *c;
    int n, nb;
    /* problem data */
    cl_mem ca, cb, moving, bptr, bc, bs, frame, arm, u0, mu, R, mass, inertia, vstar;
    /* state: velocities, per-contact u, gamma, G, cost; gradient and
     * preconditioner factors; CG vectors (x is the Newton step dv) */
    cl_mem v, u, gamma, G, cost, grad, Pc, x, r, z, p, hp, gw, w;
    /* reduction rows, row offsets ({0, nb}, {0, n}) and sums */
    cl_mem bterms, cterms, off_b, off_c, s_cost, s_body, s_php, s_rz[2], s_lsb, s_lsc;
    cl_kernel k[K_COUNT];
} dev_sap;

static void dev_sap_close(dev_sap *d)
{
    cl_mem *mems[] = {&d->ca, &d->cb, &d->moving, &d->bptr, &d->bc, &d->bs, &d->frame, &d->arm, &d->u0,
                      &d->mu, &d->R, &d->mass, &d->inertia, &d->vstar, &d->v, &d->u, &d->gamma, &d->G,
                      &d->cost, &d->grad, &d->Pc, &d->x, &d->r, &d->z, &d->p, &d->hp, &d->gw, &d->w,
                      &d->bterms, &d->cterms, &d->off_b, &d->off_c, &d->s_cost, &d->s_body, &d->s_php,
                      &d->s_rz[0], &d->s_rz[1], &d->s_lsb, &d->s_lsc};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i) clc_buf_free(d->c, mems[i]);
    for (int i = 0; i < K_COUNT; ++i)
        if (d->k[i]) {
            clReleaseKernel(d->k[i]);
            d->k[i] = NULL;
        }
}

/* Sums the K-value rows of vals over one row range (off) into out; reads
 * the K sums back when host is non-NULL. */
static clcone_status dev_sum(dev_sap *d, cl_mem off, int K, cl_mem vals, cl_mem out, double *host,
                             clcone_error *err)
{
    clcone_status s = clc_reduce_rows(d->c, d->k[K_RED], 1, off, K, vals, out, err);
    if (s) return s;
    return host ? clc_read_reals(d->c, out, host, (size_t)K, err) : CLCONE_OK;
}

static clcone_status dev_eval(void *vctx, clc_sap_eval *out, clcone_error *err)
{
    dev_sap *d = vctx;
    double c1 = 0, t[SAP_EVAL_TERMS];
    clcone_status s;
    if ((s = SET_ARGS(d->k[K_EVC], KNAMES[K_EVC], err, KI(d->n), KM(d->ca), KM(d->cb), KM(d->frame), KM(d->arm),
                      KM(d->u0), KM(d->mu), KM(d->R), KM(d->v), KM(d->u), KM(d->gamma), KM(d->G), KM(d->cost)))
        || (s = clc_run(d->c, d->k[K_EVC], (size_t)d->n, 0, KNAMES[K_EVC], err))
        || (s = dev_sum(d, d->off_c, 1, d->cost, d->s_cost, &c1, err))
        || (s = SET_ARGS(d->k[K_EVB], KNAMES[K_EVB], err, KI(d->nb), KM(d->moving), KM(d->bptr), KM(d->bc),
                         KM(d->bs), KM(d->frame), KM(d->arm), KM(d->mass), KM(d->inertia), KM(d->vstar),
                         KM(d->v), KM(d->gamma), KM(d->G), KM(d->grad), KM(d->Pc), KM(d->bterms)))
        || (s = clc_run(d->c, d->k[K_EVB], (size_t)d->nb, 0, KNAMES[K_EVB], err))
        || (s = dev_sum(d, d->off_b, SAP_EVAL_TERMS, d->bterms, d->s_body, t, err)))
        return s;
    out->g2 = t[0];
    out->scale2 = fmax(t[1], fmax(t[2], t[3]));
    out->cost = 0.5 * t[4] + c1;
    return CLCONE_OK;
}

/* Block-Jacobi PCG on H x = -g from x = 0. The scalars alpha and beta are
 * formed on the device from the reduced sums (sap_cg_update and
 * sap_cg_direction read them), so the host reads only ||D r|| to stop. */
static clcone_status dev_direction(void *vctx, double tol_abs, int max_inner, int *inner, clcone_error *err)
{
    dev_sap *d = vctx;
    double h[2];
    int cur = 0;
    clcone_status s;
    if ((s = SET_ARGS(d->k[K_CGS], KNAMES[K_CGS], err, KI(d->nb), KM(d->moving), KM(d->mass), KM(d->inertia),
                      KM(d->Pc), KM(d->grad), KM(d->x), KM(d->r), KM(d->z), KM(d->p), KM(d->bterms)))
        || (s = clc_run(d->c, d->k[K_CGS], (size_t)d->nb, 0, KNAMES[K_CGS], err))
        || (s = dev_sum(d, d->off_b, 2, d->bterms, d->s_rz[cur], h, err)))
        return s;
    if (sqrt(h[1]) <= tol_abs) return CLCONE_OK;
    for (int it = 0; it < max_inner; ++it) {
        int nxt = 1 - cur;
        if ((s = SET_ARGS(d->k[K_HC], KNAMES[K_HC], err, KI(d->n), KM(d->ca), KM(d->cb), KM(d->frame), KM(d->arm),
                          KM(d->G), KM(d->p), KM(d->gw)))
            || (s = clc_run(d->c, d->k[K_HC], (size_t)d->n, 0, KNAMES[K_HC], err))
            || (s = SET_ARGS(d->k[K_HB], KNAMES[K_HB], err, KI(d->nb), KM(d->moving), KM(d->bptr), KM(d->bc),
                             KM(d->bs), KM(d->frame), KM(d->arm), KM(d->mass), KM(d->inertia), KM(d->p),
                             KM(d->gw), KM(d->hp), KM(d->bterms)))
            || (s = clc_run(d->c, d->k[K_HB], (size_t)d->nb, 0, KNAMES[K_HB], err))
            || (s = dev_sum(d, d->off_b, 1, d->bterms, d->s_php, NULL, err))
            || (s = SET_ARGS(d->k[K_CGU], KNAMES[K_CGU], err, KI(d->nb), KM(d->moving), KM(d->mass),
                             KM(d->inertia), KM(d->Pc), KM(d->s_php), KM(d->s_rz[cur]), KM(d->p), KM(d->hp),
                             KM(d->x), KM(d->r), KM(d->z), KM(d->bterms)))
            || (s = clc_run(d->c, d->k[K_CGU], (size_t)d->nb, 0, KNAMES[K_CGU], err))
            || (s = dev_sum(d, d->off_b, 2, d->bterms, d->s_rz[nxt], h, err)))
            return s;
        ++*inner;
        /* also stop on a breakdown (r'z = 0 or non-finite): the kernels
         * froze the iterate rather than divide by it */
        if (!(sqrt(h[1]) > tol_abs) || !(h[0] > 0)) break;
        if ((s = SET_ARGS(d->k[K_CGD], KNAMES[K_CGD], err, KI(d->nb), KM(d->s_rz[nxt]), KM(d->s_rz[cur]), KM(d->z),
                          KM(d->p)))
            || (s = clc_run(d->c, d->k[K_CGD], (size_t)d->nb, 0, KNAMES[K_CGD], err)))
            return s;
        cur = nxt;
    }
    return CLCONE_OK;
}

static clcone_status dev_ls_setup(void *vctx, double *a, double *b, double *c, clcone_error *err)
{
    dev_sap *d = vctx;
    double t[3];
    clcone_status s;
    if ((s = SET_ARGS(d->k[K_AJ], KNAMES[K_AJ], err, KI(d->n), KM(d->ca), KM(d->cb), KM(d->frame), KM(d->arm),
                      KM(d->x), KM(d->w)))
        || (s = clc_run(d->c, d->k[K_AJ], (size_t)d->n, 0, KNAMES[K_AJ], err))
        || (s = SET_ARGS(d->k[K_LSB], KNAMES[K_LSB], err, KI(d->nb), KM(d->moving), KM(d->mass), KM(d->inertia),
                         KM(d->vstar), KM(d->v), KM(d->x), KM(d->grad), KM(d->bterms)))
        || (s = clc_run(d->c, d->k[K_LSB], (size_t)d->nb, 0, KNAMES[K_LSB], err))
        || (s = dev_sum(d, d->off_b, 3, d->bterms, d->s_lsb, t, err)))
        return s;
    *a = t[0];
    *b = t[1];
    *c = t[2];
    return CLCONE_OK;
}

static clcone_status dev_ls_eval(void *vctx, double alpha, double *dcost, double *d1, double *d2,
                                 clcone_error *err)
{
    dev_sap *d = vctx;
    double t[3];
    clcone_status s;
    /* the scalar alpha sits between buffers: index 6, then the output */
    if ((s = SET_ARGS(d->k[K_LSC], KNAMES[K_LSC], err, KI(d->n), KM(d->mu), KM(d->R), KM(d->u), KM(d->w),
                      KM(d->cost)))
        || (s = set_real(d->c, d->k[K_LSC], 6, alpha, KNAMES[K_LSC], err))
        || (s = set_mem(d->k[K_LSC], 7, d->cterms, KNAMES[K_LSC], err)))
        return s;
    if ((s = clc_run(d->c, d->k[K_LSC], (size_t)d->n, 0, KNAMES[K_LSC], err))
        || (s = dev_sum(d, d->off_c, 3, d->cterms, d->s_lsc, t, err)))
        return s;
    *dcost = t[0];
    *d1 = t[1];
    *d2 = t[2];
    return CLCONE_OK;
}

static clcone_status dev_step(void *vctx, double alpha, clcone_error *err)
{
    dev_sap *d = vctx;
    clcone_status s;
    if ((s = SET_ARGS(d->k[K_STEP], KNAMES[K_STEP], err, KI(d->nb), KM(d->moving)))
        || (s = set_real(d->c, d->k[K_STEP], 2, alpha, KNAMES[K_STEP], err))
        || (s = set_mem(d->k[K_STEP], 3, d->x, KNAMES[K_STEP], err))
        || (s = set_mem(d->k[K_STEP], 4, d->v, KNAMES[K_STEP], err)))
        return s;
    return clc_run(d->c, d->k[K_STEP], (size_t)d->nb, 0, KNAMES[K_STEP], err);
}

/* Uploads the set-up and allocates the state. */
static clcone_status dev_sap_open(dev_sap *d, clcone_context *c, const clc_sap_setup *S, const double *v0,
                                  clcone_error *err)
{
    size_t n = (size_t)S->n, nb = (size_t)S->nb, rs = c->real_size;
    size_t nk = (size_t)S->L.ptr[S->nb];
    int offb[2] = {0, S->nb}, offc[2] = {0, S->n};
    clcone_status s;
    cl_int e;
    d->c = c;
    d->n = S->n;
    d->nb = S->nb;
    if ((s = clc_buf_ints(c, S->ca, n, &d->ca, err)) || (s = clc_buf_ints(c, S->cb, n, &d->cb, err))
        || (s = clc_buf_ints(c, S->moving, nb, &d->moving, err))
        || (s = clc_buf_ints(c, S->L.ptr, nb + 1, &d->bptr, err))
        || (s = clc_buf_ints(c, S->L.contact, nk, &d->bc, err))
        || (s = clc_buf_alloc(c, nk + 1, &d->bs, err))
        || (s = clc_buf_reals(c, "frame of contact", 9, S->frame, 9 * n, &d->frame, err))
        || (s = clc_buf_reals(c, "lever arms of contact", 6, S->arm, 6 * n, &d->arm, err))
        || (s = clc_buf_reals(c, "free velocity of contact", 3, S->u0, 3 * n, &d->u0, err))
        || (s = clc_buf_reals(c, "mu of contact", 1, S->mu, n, &d->mu, err)) || (s = clc_buf_reals(c, "regularisation of contact", 2, S->R, 2 * n, &d->R, err))
        || (s = clc_buf_reals(c, "mass of body", 1, S->mass, nb, &d->mass, err))
        || (s = clc_buf_reals(c, "inertia of body", 9, S->inertia, 9 * nb, &d->inertia, err))
        || (s = clc_buf_reals(c, "free velocity of body", 6, S->vstar, 6 * nb, &d->vstar, err))
        || (s = clc_buf_reals(c, "velocity of body", 6, v0, 6 * nb, &d->v, err))
        || (s = clc_buf_alloc(c, 3 * n * rs, &d->u, err)) || (s = clc_buf_alloc(c, 3 * n * rs, &d->gamma, err))
        || (s = clc_buf_alloc(c, 9 * n * rs, &d->G, err)) || (s = clc_buf_alloc(c, n * rs, &d->cost, err))
        || (s = clc_buf_alloc(c, 6 * nb * rs, &d->grad, err))
        || (s = clc_buf_alloc(c, 36 * nb * rs, &d->Pc, err))
        || (s = clc_buf_alloc(c, 6 * nb * rs, &d->x, err)) || (s = clc_buf_alloc(c, 6 * nb * rs, &d->r, err))
        || (s = clc_buf_alloc(c, 6 * nb * rs, &d->z, err)) || (s = clc_buf_alloc(c, 6 * nb * rs, &d->p, err))
        || (s = clc_buf_alloc(c, 6 * nb * rs, &d->hp, err)) || (s = clc_buf_alloc(c, 3 * n * rs, &d->gw, err))
        || (s = clc_buf_alloc(c, 3 * n * rs, &d->w, err))
        || (s = clc_buf_alloc(c, BODY_TERMS_MAX * nb * rs, &d->bterms, err))
        || (s = clc_buf_alloc(c, 3 * n * rs, &d->cterms, err))
        || (s = clc_buf_ints(c, offb, 2, &d->off_b, err)) || (s = clc_buf_ints(c, offc, 2, &d->off_c, err))
        || (s = clc_buf_alloc(c, rs, &d->s_cost, err)) || (s = clc_buf_alloc(c, SAP_EVAL_TERMS * rs, &d->s_body, err))
        || (s = clc_buf_alloc(c, rs, &d->s_php, err)) || (s = clc_buf_alloc(c, 2 * rs, &d->s_rz[0], err))
        || (s = clc_buf_alloc(c, 2 * rs, &d->s_rz[1], err)) || (s = clc_buf_alloc(c, 3 * rs, &d->s_lsb, err))
        || (s = clc_buf_alloc(c, 3 * rs, &d->s_lsc, err)))
        return s;
    for (int i = 0; i < K_COUNT; ++i)
        if ((s = clc_kernel(c, KNAMES[i], &d->k[i], err))) return s;
    if (nk) {
        e = clEnqueueWriteBuffer(c->queue, d->bs, CL_TRUE, 0, nk, S->L.sign, 0, NULL, NULL);
        if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clEnqueueWriteBuffer(sap body signs)");
    }
    return CLCONE_OK;
}

clcone_status clc_sap_device_prepare(clcone_context *ctx, clcone_error *err)
{
    for (int i = 0; i < K_COUNT; ++i) {
        cl_kernel k;
        clcone_status s = clc_kernel(ctx, KNAMES[i], &k, err);
        if (s) return s;
        clReleaseKernel(k);
    }
    return CLCONE_OK;
}

clcone_status clc_sap_device(clcone_context *ctx, const clc_sap_setup *S, const double *v0,
                                const clcone_options *o, clc_sap_params *prm, double *r, double *v,
                                clcone_prob_result *out, clcone_error *err)
{
    dev_sap d;
    clc_sap_ops ops = {&d, dev_eval, dev_direction, dev_ls_setup, dev_ls_eval, dev_step};
    clcone_status s;
    memset(&d, 0, sizeof d);
    if (!(s = dev_sap_open(&d, ctx, S, v0, err)) && !(s = clc_sap_newton(&ops, o, 6 * S->nmoving, prm, out, err))) {
        cl_int e = clFinish(ctx->queue);
        if (e != CL_SUCCESS) s = clc_cl_fail(err, e, "clFinish");
        if (!s) s = clc_read_reals(ctx, d.gamma, r, 3 * (size_t)S->n, err);
        if (!s && v) s = clc_read_reals(ctx, d.v, v, 6 * (size_t)S->nb, err);
    }
    dev_sap_close(&d);
    return s;
}
