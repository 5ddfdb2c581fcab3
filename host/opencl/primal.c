/* MuJoCo's Newton method on its primal problem on a device
 * (opencl/primal.h): a batch of K problems packed one after another
 * (kernels/primal_layout.h), M and J made dense, uploaded, solved in one
 * launch of primal_newton (a work-group a problem, kernels/primal.cl) and
 * read back with one wait. A problem's work-group reads and writes only
 * its own slices, so its bits are those of its solve alone. */
#include "opencl/primal.h"
#include "opencl/opencl.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "schedule.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum {
    Q_INFO, Q_OFF, Q_KIND, Q_MU, Q_PRM, Q_M, Q_J, Q_DIN, Q_RIN, Q_H, Q_DJ, Q_DV, Q_RV, Q_BLK, Q_STATE, Q_OUT,
    Q_OUTR, Q_COUNT
};

/* The batch on the host: its layout (info, PI_* a problem) and its
 * arrays as the kernel reads them, in double. */
typedef struct pdev {
    clcone_context *c;
    int K;
    const clc_pproblem *const *p;
    double *const *a;
    const clcone_options *o;
    size_t nd, nr, nb, nh, nj; /* dofs, rows, blocks, M's and J's reals, all problems */
    int *info, *off, *kind, *state, *out;
    double *mu, *prm, *M, *J, *din, *rin, *dv, *rv, *outr;
    cl_mem mem[Q_COUNT];
    cl_kernel k;
} pdev;

/* Lanes a problem: a CPU runs a group's lanes one after another, so a
 * few (as blocks.c's), a GPU CONE_REDUCE_WG. */
#define PDEV_CPU_LANES 8

static void pdev_free(pdev *D)
{
    for (int i = 0; i < Q_COUNT; ++i) clc_buf_free(D->c, &D->mem[i]);
    if (D->k) clReleaseKernel(D->k);
    free(D->info);
    free(D->mu);
}

/* The batch's offsets and sizes; a problem over the dof limit, or a
 * batch whose offsets overflow the kernel's ints, refused. */
static clcone_status pdev_layout(pdev *D, int *failed, clcone_error *err)
{
    size_t nd = 0, nr = 0, nb = 0, nh = 0, nj = 0, K = (size_t)D->K;
    for (int k = 0; k < D->K; ++k) {
        const clc_pproblem *p = D->p[k];
        if (p->nv > CLC_PRIMAL_DEV_MAX_DOFS) {
            *failed = k;
            return clc_fail(err, CLCONE_ENOTSUP,
                               "%d dofs: the device's primal Newton takes at most %d (its dense Hessian); "
                               "solve it on the reference",
                               p->nv, CLC_PRIMAL_DEV_MAX_DOFS);
        }
        nd += (size_t)p->nv;
        nr += (size_t)p->m;
        nb += (size_t)p->nb;
        nh += (size_t)p->nv * (size_t)p->nv;
        nj += (size_t)p->m * (size_t)p->nv;
    }
    if (nh > INT_MAX || nj > INT_MAX || PR_N * nr > INT_MAX || PB_N * (nb + K) > INT_MAX || PD_N * nd > INT_MAX)
        return clc_fail(err, CLCONE_ENOTSUP,
                           "a primal batch of %zu dofs, %zu rows, %zu Hessian and %zu Jacobian entries: over the "
                           "device's int offsets; split the batch",
                           nd, nr, nh, nj);
    D->nd = nd;
    D->nr = nr;
    D->nb = nb;
    D->nh = nh;
    D->nj = nj;
    D->info = clc_calloc(PI_N * K + (nb + K) + nb + nr + PO_N * K + 1, sizeof *D->info, err, "the batch's layout");
    D->mu = clc_calloc(nb + 2 * K + nh + nj + 2 * nd + 3 * nr + PD_N * nd + 1 + PR_N * nr + 2 * K, sizeof *D->mu,
                          err, "the batch's values");
    if (!D->info || !D->mu) return CLCONE_ENOMEM;
    D->off = D->info + PI_N * K;
    D->kind = D->off + nb + K;
    D->state = D->kind + nb;
    D->out = D->state + nr;
    D->prm = D->mu + nb;
    D->M = D->prm + 2 * K;
    D->J = D->M + nh;
    D->din = D->J + nj;
    D->rin = D->din + 2 * nd;
    D->dv = D->rin + 3 * nr;
    D->rv = D->dv + PD_N * nd + 1;
    D->outr = D->rv + PR_N * nr;
    nd = nr = nb = nh = nj = 0;
    for (int k = 0; k < D->K; ++k) {
        const clc_pproblem *p = D->p[k];
        int *I = D->info + PI_N * k;
        I[PI_D0] = (int)nd;
        I[PI_NV] = p->nv;
        I[PI_R0] = (int)nr;
        I[PI_M] = p->m;
        I[PI_B0] = (int)nb;
        I[PI_NB] = p->nb;
        I[PI_HOFF] = (int)nh;
        I[PI_JOFF] = (int)nj;
        I[PI_LS] = p->ls_iterations;
        nd += (size_t)p->nv;
        nr += (size_t)p->m;
        nb += (size_t)p->nb;
        nh += (size_t)p->nv * (size_t)p->nv;
        nj += (size_t)p->m * (size_t)p->nv;
    }
    return CLCONE_OK;
}

/* Problem k into its slices: M and J dense, the start a in the iterate's
 * slot (the kernel's warm start reads it). */
static clcone_status pack_item(void *job, int k, clcone_error *err)
{
    pdev *D = job;
    const clc_pproblem *p = D->p[k];
    const int *I = D->info + PI_N * k;
    int nv = p->nv, m = p->m, b0 = I[PI_B0];
    double *M = D->M + I[PI_HOFF], *J = D->J + I[PI_JOFF], *din = D->din + 2 * (size_t)I[PI_D0];
    double *rin = D->rin + 3 * (size_t)I[PI_R0];
    (void)err;
    for (int g = 0; g < p->ng; ++g) {
        int g0 = p->goff[g], n = p->goff[g + 1] - g0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) M[(size_t)(g0 + i) * nv + g0 + j] = p->M[p->moff[g] + i * n + j];
    }
    for (int i = 0; i < m; ++i)
        for (int e = p->jp[i]; e < p->jp[i + 1]; ++e) J[(size_t)i * nv + p->jc[e]] += p->jv[e];
    for (int b = 0; b <= p->nb; ++b) D->off[b0 + k + b] = p->off[b];
    for (int b = 0; b < p->nb; ++b) {
        D->kind[b0 + b] = p->kind[b];
        D->mu[b0 + b] = p->mu[b];
    }
    D->prm[2 * k] = p->scale;
    D->prm[2 * k + 1] = p->ls_tolerance;
    memcpy(din, p->a0, sizeof *din * (size_t)nv);
    memcpy(din + nv, p->f0, sizeof *din * (size_t)nv);
    memcpy(rin, p->aref, sizeof *rin * (size_t)m);
    memcpy(rin + m, p->R, sizeof *rin * (size_t)m);
    memcpy(rin + 2 * m, p->bound, sizeof *rin * (size_t)m);
    memcpy(D->dv + PD_N * (size_t)I[PI_D0] + PD_A * (size_t)nv, D->a[k], sizeof *D->dv * (size_t)nv);
    return CLCONE_OK;
}

/* The batch on the device, the kernel's arguments set and its lanes. */
static clcone_status pdev_upload(pdev *D, size_t *lanes, clcone_error *err)
{
    clcone_context *c = D->c;
    cl_mem *q = D->mem;
    size_t K = (size_t)D->K, nb = D->nb, nr = D->nr;
    int warm = D->o->warm_start != 0, max_iter = D->o->max_iter;
    kreal tol = KREAL(D->o->tol);
    clcone_status s;
    if ((s = clc_buf_ints(c, D->info, PI_N * K, &q[Q_INFO], err))
        || (s = clc_buf_ints(c, D->off, nb + K, &q[Q_OFF], err))
        || (s = clc_buf_ints(c, D->kind, nb, &q[Q_KIND], err))
        || (s = clc_buf_reals(c, "cone mu", 1, D->mu, nb, &q[Q_MU], err))
        || (s = clc_buf_reals(c, "scale and line-search tolerance", 2, D->prm, 2 * K, &q[Q_PRM], err))
        || (s = clc_buf_reals(c, "M entry", 1, D->M, D->nh + 1, &q[Q_M], err))
        || (s = clc_buf_reals(c, "J entry", 1, D->J, D->nj + 1, &q[Q_J], err))
        || (s = clc_buf_reals(c, "a0 and M a0", 1, D->din, 2 * D->nd + 1, &q[Q_DIN], err))
        || (s = clc_buf_reals(c, "a_ref, R and bound", 1, D->rin, 3 * nr, &q[Q_RIN], err))
        || (s = clc_buf_alloc(c, (D->nh + 1) * c->real_size, &q[Q_H], err))
        || (s = clc_buf_alloc(c, (D->nj + 1) * c->real_size, &q[Q_DJ], err))
        || (s = clc_buf_reals(c, "start dof", 1, D->dv, PD_N * D->nd + 1, &q[Q_DV], err))
        || (s = clc_buf_alloc(c, (PR_N * nr + 1) * c->real_size, &q[Q_RV], err))
        || (s = clc_buf_alloc(c, (PB_N * nb + 1) * c->real_size, &q[Q_BLK], err))
        || (s = clc_buf_alloc(c, (nr + 1) * sizeof(cl_int), &q[Q_STATE], err))
        || (s = clc_buf_alloc(c, PO_N * K * sizeof(cl_int), &q[Q_OUT], err))
        || (s = clc_buf_alloc(c, 2 * K * c->real_size, &q[Q_OUTR], err)) || (s = clc_kernel(c, "primal_newton", &D->k, err))
        || (s = SET_ARGS(D->k, "primal_newton", err, KI(max_iter), KR(c, tol), KI(warm), KM(q[Q_INFO]), KM(q[Q_OFF]),
                         KM(q[Q_KIND]), KM(q[Q_MU]), KM(q[Q_PRM]), KM(q[Q_M]), KM(q[Q_J]), KM(q[Q_DIN]),
                         KM(q[Q_RIN]), KM(q[Q_H]), KM(q[Q_DJ]), KM(q[Q_DV]), KM(q[Q_RV]), KM(q[Q_BLK]),
                         KM(q[Q_STATE]), KM(q[Q_OUT]), KM(q[Q_OUTR]))))
        return s;
    return clc_kernel_lanes(c, D->k, "primal_newton", c->info.is_cpu ? PDEV_CPU_LANES : CONE_REDUCE_WG, lanes, err);
}

/* The iterates, forces, zones and outcomes back (one wait: the queue is in order). */
static clcone_status pdev_read(pdev *D, clcone_error *err)
{
    clcone_context *c = D->c;
    size_t K = (size_t)D->K;
    cl_int e = clEnqueueReadBuffer(c->queue, D->mem[Q_STATE], CL_FALSE, 0, D->nr * sizeof(cl_int), D->state, 0,
                                   NULL, NULL);
    clcone_status s;
    if (e == CL_SUCCESS)
        e = clEnqueueReadBuffer(c->queue, D->mem[Q_OUT], CL_TRUE, 0, PO_N * K * sizeof(cl_int), D->out, 0, NULL,
                                NULL);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "reading the primal Newton's zones and outcomes");
    if ((s = clc_read_reals(c, D->mem[Q_DV], D->dv, PD_N * D->nd + 1, err))
        || (s = clc_read_reals(c, D->mem[Q_RV], D->rv, PR_N * D->nr, err))
        || (s = clc_read_reals(c, D->mem[Q_OUTR], D->outr, 2 * K, err)))
        return s;
    return CLCONE_OK;
}

/* Problem k's a, f, zones and result from the device's, its outcome as
 * the reference words it. */
static clcone_status pdev_result(pdev *D, int k, double *a, double *f, int *state, clcone_prob_result *res,
                                 clcone_error *err)
{
    const int *I = D->info + PI_N * k, *out = D->out + PO_N * k;
    int nv = I[PI_NV], m = I[PI_M];
    static const clc_stop_why WHY[] = {CLCONE_STOP_TOL, CLCONE_STOP_TOL, CLCONE_STOP_ITERS, CLCONE_STOP_NONFINITE};
    memcpy(a, D->dv + PD_N * (size_t)I[PI_D0] + PD_A * (size_t)nv, sizeof *a * (size_t)nv);
    memcpy(f, D->rv + PR_N * (size_t)I[PI_R0] + PR_F * (size_t)m, sizeof *f * (size_t)m);
    memcpy(state, D->state + I[PI_R0], sizeof *state * (size_t)m);
    res->iters = out[PO_ITERS];
    res->error = D->outr[2 * k];
    res->cost = D->outr[2 * k + 1];
    if (out[PO_STOP] == PS_NOT_PD)
        return clc_fail(err, CLCONE_EINVAL,
                           "MuJoCo's Newton: the Hessian M + J'DJ is not positive definite (pivot at dof %d of %d, "
                           "on the device)",
                           out[PO_PIVOT], nv);
    if (out[PO_STOP] == PS_NO_DECREASE) {
        res->status = CLCONE_FAILED;
        snprintf(res->reason, sizeof res->reason,
                 "the line search found no decrease at %.3g (the smaller of the scaled gradient and the decrease "
                 "promised)",
                 res->error);
    } else if (out[PO_STOP] >= PS_TOL && out[PO_STOP] <= PS_NONFINITE)
        clc_stop(res, WHY[out[PO_STOP]], D->o, res->iters);
    else
        return clc_fail(err, CLCONE_EDEVICE, "the device's primal Newton gave outcome %d", out[PO_STOP]);
    return CLCONE_OK;
}

clcone_status clc_dev_primal_batch(clcone_context *c, int K, const clc_pproblem *const *p,
                                      const clcone_options *o, int threads, double *const *a, double *const *f,
                                      int *const *state, clcone_prob_result *res, int *failed, clcone_error *err)
{
    double t0 = clc_now_ms();
    size_t lanes = 1;
    clcone_status s;
    pdev D;
    memset(&D, 0, sizeof D);
    D.c = c;
    D.K = K;
    D.p = p;
    D.a = a;
    D.o = o;
    *failed = -1;
    if ((s = pdev_layout(&D, failed, err)) || (s = clc_each_item(threads, K, pack_item, &D, failed, err))
        || (s = pdev_upload(&D, &lanes, err))
        || (s = clc_run(c, D.k, (size_t)K * lanes, lanes, "primal_newton", err)) || (s = pdev_read(&D, err)))
        goto out;
    for (int k = 0; k < K; ++k) {
        if ((s = pdev_result(&D, k, a[k], f[k], state[k], &res[k], err))) {
            *failed = k;
            goto out;
        }
        res[k].time_ms = clc_now_ms() - t0;
    }
out:
    pdev_free(&D);
    return s;
}
