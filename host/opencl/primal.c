/* MuJoCo's Newton method on its primal problem on a device
 * (opencl/primal.h): a batch of K problems packed one after another
 * (kernels/primal_layout.h), M made dense, J by rows and by dofs with
 * each block's pattern (the dofs its rows move), uploaded, solved in one
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
    Q_INFO, Q_OFF, Q_KIND, Q_MU, Q_PRM, Q_M, Q_JP, Q_JC, Q_JV, Q_CP, Q_CR, Q_CV, Q_POFF, Q_PAT, Q_DOFF, Q_ROWBLK,
    Q_DIN, Q_RIN, Q_H, Q_DJ, Q_DV, Q_RV, Q_BLK, Q_STATE, Q_OUT, Q_OUTR, Q_COUNT
};

/* The batch on the host: its layout (info, PI_* a problem) and its
 * arrays as the kernel reads them, in double. */
typedef struct pdev {
    clcone_context *c;
    int K;
    const clc_pproblem *const *p;
    double *const *a;
    const clcone_options *o;
    size_t nd, nr, nb, nh, nz, npat, ndj; /* dofs, rows, blocks, M's reals, J's entries, pattern dofs, D J's reals */
    int *info, *off, *kind, *state, *out;
    int *jp, *jc, *cp, *cr, *poff, *pat, *doff, *rowblk; /* J by rows and by dofs, the blocks' patterns (layout.h) */
    double *mu, *prm, *M, *jv, *cv, *din, *rin, *dv, *rv, *outr;
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
    free(D->jp);
    free(D->mu);
}

/* Block b's pattern: the dofs its rows move, ascending, into pat (when
 * not NULL); their count. tag marks a dof seen, stamp's tag[dof] holding
 * the last block's number that saw it. */
static int block_pattern(const clc_pproblem *p, int b, int *stamp, int tag, int *pat)
{
    int n = 0;
    for (int e = p->jp[p->off[b]]; e < p->jp[p->off[b + 1]]; ++e) {
        int c = p->jc[e], i = n;
        if (stamp[c] == tag) continue;
        stamp[c] = tag;
        if (pat) {
            for (; i > 0 && pat[i - 1] > c; --i) pat[i] = pat[i - 1];
            pat[i] = c;
        }
        ++n;
    }
    return n;
}

/* J's entries, patterns and D J's reals of problem p, counted (the
 * stamps' tags continue from *tag). */
static void sparse_sizes(const clc_pproblem *p, int *stamp, int *tag, size_t *nz, size_t *npat, size_t *ndj)
{
    *nz += (size_t)p->jp[p->m];
    for (int b = 0; b < p->nb; ++b) {
        int n = block_pattern(p, b, stamp, ++*tag, NULL);
        *npat += (size_t)n;
        *ndj += (size_t)n * (size_t)(p->off[b + 1] - p->off[b]);
    }
}

/* Problem k's J by rows and by dofs (rows ascending in a dof), its
 * blocks' patterns and offsets, each row's block. */
static void pack_sparse(pdev *D, int k, int *stamp, int *tag)
{
    const clc_pproblem *p = D->p[k];
    const int *I = D->info + PI_N * k;
    int nz0 = I[PI_NZ0], nv = p->nv, m = p->m, *jp = D->jp + I[PI_R0] + k, *cp = D->cp + I[PI_D0] + k;
    int *poff = D->poff + I[PI_B0] + k, *doff = D->doff + I[PI_B0] + k, *pat = D->pat + I[PI_PT0];
    int *cr = D->cr + nz0, *rowblk = D->rowblk + I[PI_R0];
    double *cv = D->cv + nz0;
    memcpy(jp, p->jp, sizeof *jp * ((size_t)m + 1));
    memcpy(D->jc + nz0, p->jc, sizeof *D->jc * (size_t)p->jp[m]);
    memcpy(D->jv + nz0, p->jv, sizeof *D->jv * (size_t)p->jp[m]);
    for (int e = 0; e < p->jp[m]; ++e) ++cp[p->jc[e] + 1];
    for (int v = 0; v < nv; ++v) cp[v + 1] += cp[v];
    for (int i = 0; i < m; ++i) /* cp[v] runs ahead as dof v's entries are written, then steps back */
        for (int e = p->jp[i]; e < p->jp[i + 1]; ++e) {
            int at = cp[p->jc[e]]++;
            cr[at] = i;
            cv[at] = p->jv[e];
        }
    for (int v = nv; v > 0; --v) cp[v] = cp[v - 1];
    cp[0] = 0;
    poff[0] = doff[0] = 0;
    for (int b = 0; b < p->nb; ++b) {
        int n = block_pattern(p, b, stamp, ++*tag, pat + poff[b]);
        poff[b + 1] = poff[b] + n;
        doff[b + 1] = doff[b] + n * (p->off[b + 1] - p->off[b]);
        for (int i = p->off[b]; i < p->off[b + 1]; ++i) rowblk[i] = b;
    }
}

/* The batch's offsets and sizes, J's structure; a problem over the dof
 * limit, or a batch whose offsets overflow the kernel's ints, refused. */
static clcone_status pdev_layout(pdev *D, int *failed, clcone_error *err)
{
    size_t nd = 0, nr = 0, nb = 0, nh = 0, nz = 0, npat = 0, ndj = 0, K = (size_t)D->K;
    int *stamp = NULL, tag = 0;
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
    }
    if (!(stamp = clc_calloc((size_t)CLC_PRIMAL_DEV_MAX_DOFS, sizeof *stamp, err, "the blocks' patterns")))
        return CLCONE_ENOMEM;
    for (int k = 0; k < D->K; ++k) sparse_sizes(D->p[k], stamp, &tag, &nz, &npat, &ndj);
    if (nh > INT_MAX || nz > INT_MAX || npat > INT_MAX || ndj > INT_MAX || PR_N * nr > INT_MAX
        || PB_N * (nb + K) > INT_MAX || PD_N * nd > INT_MAX) {
        free(stamp);
        return clc_fail(err, CLCONE_ENOTSUP,
                           "a primal batch of %zu dofs, %zu rows, %zu Hessian entries, %zu of J and %zu of D J: "
                           "over the device's int offsets; split the batch",
                           nd, nr, nh, nz, ndj);
    }
    D->nd = nd;
    D->nr = nr;
    D->nb = nb;
    D->nh = nh;
    D->nz = nz;
    D->npat = npat;
    D->ndj = ndj;
    D->info = clc_calloc(PI_N * K + (nb + K) + nb + nr + PO_N * K + 1, sizeof *D->info, err, "the batch's layout");
    D->jp = clc_calloc((nr + K) + (nd + K) + 2 * (nb + K) + nr + 2 * nz + npat + 1, sizeof *D->jp, err,
                          "J's structure");
    D->mu = clc_calloc(nb + 2 * K + nh + 2 * nz + 2 * nd + 3 * nr + PD_N * nd + 1 + PR_N * nr + 2 * K,
                          sizeof *D->mu, err, "the batch's values");
    if (!D->info || !D->jp || !D->mu) {
        free(stamp);
        return CLCONE_ENOMEM;
    }
    D->off = D->info + PI_N * K;
    D->kind = D->off + nb + K;
    D->state = D->kind + nb;
    D->out = D->state + nr;
    D->cp = D->jp + nr + K;
    D->poff = D->cp + nd + K;
    D->doff = D->poff + nb + K;
    D->rowblk = D->doff + nb + K;
    D->jc = D->rowblk + nr;
    D->cr = D->jc + nz;
    D->pat = D->cr + nz;
    D->prm = D->mu + nb;
    D->M = D->prm + 2 * K;
    D->jv = D->M + nh;
    D->cv = D->jv + nz;
    D->din = D->cv + nz;
    D->rin = D->din + 2 * nd;
    D->dv = D->rin + 3 * nr;
    D->rv = D->dv + PD_N * nd + 1;
    D->outr = D->rv + PR_N * nr;
    nd = nr = nb = nh = nz = npat = ndj = 0;
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
        I[PI_LS] = p->ls_iterations;
        I[PI_NZ0] = (int)nz;
        I[PI_PT0] = (int)npat;
        I[PI_DJ0] = (int)ndj;
        nd += (size_t)p->nv;
        nr += (size_t)p->m;
        nb += (size_t)p->nb;
        nh += (size_t)p->nv * (size_t)p->nv;
        pack_sparse(D, k, stamp, &tag);
        nz += (size_t)p->jp[p->m];
        npat += (size_t)D->poff[(size_t)I[PI_B0] + (size_t)k + (size_t)p->nb];
        ndj += (size_t)D->doff[(size_t)I[PI_B0] + (size_t)k + (size_t)p->nb];
    }
    free(stamp);
    return CLCONE_OK;
}

/* Problem k's values into its slices: M dense, the start a in the
 * iterate's slot (the kernel's warm start reads it). */
static clcone_status pack_item(void *job, int k, clcone_error *err)
{
    pdev *D = job;
    const clc_pproblem *p = D->p[k];
    const int *I = D->info + PI_N * k;
    int nv = p->nv, m = p->m, b0 = I[PI_B0];
    double *M = D->M + I[PI_HOFF], *din = D->din + 2 * (size_t)I[PI_D0];
    double *rin = D->rin + 3 * (size_t)I[PI_R0];
    (void)err;
    for (int g = 0; g < p->ng; ++g) {
        int g0 = p->goff[g], n = p->goff[g + 1] - g0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) M[(size_t)(g0 + i) * nv + g0 + j] = p->M[p->moff[g] + i * n + j];
    }
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
        || (s = clc_buf_ints(c, D->jp, nr + K, &q[Q_JP], err)) || (s = clc_buf_ints(c, D->jc, D->nz + 1, &q[Q_JC], err))
        || (s = clc_buf_reals(c, "J entry", 1, D->jv, D->nz + 1, &q[Q_JV], err))
        || (s = clc_buf_ints(c, D->cp, D->nd + K, &q[Q_CP], err)) || (s = clc_buf_ints(c, D->cr, D->nz + 1, &q[Q_CR], err))
        || (s = clc_buf_reals(c, "J entry", 1, D->cv, D->nz + 1, &q[Q_CV], err))
        || (s = clc_buf_ints(c, D->poff, nb + K, &q[Q_POFF], err))
        || (s = clc_buf_ints(c, D->pat, D->npat + 1, &q[Q_PAT], err))
        || (s = clc_buf_ints(c, D->doff, nb + K, &q[Q_DOFF], err))
        || (s = clc_buf_ints(c, D->rowblk, nr + 1, &q[Q_ROWBLK], err))
        || (s = clc_buf_reals(c, "a0 and M a0", 1, D->din, 2 * D->nd + 1, &q[Q_DIN], err))
        || (s = clc_buf_reals(c, "a_ref, R and bound", 1, D->rin, 3 * nr, &q[Q_RIN], err))
        || (s = clc_buf_alloc(c, (D->nh + 1) * c->real_size, &q[Q_H], err))
        || (s = clc_buf_alloc(c, (D->ndj + 1) * c->real_size, &q[Q_DJ], err))
        || (s = clc_buf_reals(c, "start dof", 1, D->dv, PD_N * D->nd + 1, &q[Q_DV], err))
        || (s = clc_buf_alloc(c, (PR_N * nr + 1) * c->real_size, &q[Q_RV], err))
        || (s = clc_buf_alloc(c, (PB_N * nb + 1) * c->real_size, &q[Q_BLK], err))
        || (s = clc_buf_alloc(c, (nr + 1) * sizeof(cl_int), &q[Q_STATE], err))
        || (s = clc_buf_alloc(c, PO_N * K * sizeof(cl_int), &q[Q_OUT], err))
        || (s = clc_buf_alloc(c, 2 * K * c->real_size, &q[Q_OUTR], err)) || (s = clc_kernel(c, "primal_newton", &D->k, err))
        || (s = SET_ARGS(D->k, "primal_newton", err, KI(max_iter), KR(c, tol), KI(warm), KM(q[Q_INFO]), KM(q[Q_OFF]),
                         KM(q[Q_KIND]), KM(q[Q_MU]), KM(q[Q_PRM]), KM(q[Q_M]), KM(q[Q_JP]), KM(q[Q_JC]),
                         KM(q[Q_JV]), KM(q[Q_CP]), KM(q[Q_CR]), KM(q[Q_CV]), KM(q[Q_POFF]), KM(q[Q_PAT]),
                         KM(q[Q_DOFF]), KM(q[Q_ROWBLK]), KM(q[Q_DIN]),
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
