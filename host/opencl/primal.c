/* MuJoCo's Newton method on its primal problem on a device
 * (opencl/primal.h): a batch of K problems packed one after another
 * (kernels/primal_layout.h), M by its trees' blocks, J by rows and by dofs with
 * each block's pattern (the dofs its rows move), uploaded, solved in one
 * launch of primal_newton (a work-group a problem, kernels/primal.cl) and
 * read back with one wait. A problem's work-group reads and writes only
 * its own slices, so its bits are those of its solve alone. */
#include "opencl/primal.h"
#include "ref/primal_prox.h"
#include "opencl/opencl.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "ref/primal_chol.h"
#include "schedule.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The batch's buffers (kernels/primal_layout.h's PQ_* regions): a few
 * large transfers, where a buffer an array made 30 transfers a call. */
enum { B_INTS, B_REALS, B_SCRATCH, B_COUNT };

/* What the context keeps of the last batch (its kept slot): the device
 * buffers, grown only when a batch needs more, the kernel, and the host
 * arenas the batches are packed in. A simulator solves a batch of the
 * same shape step after step; making these afresh each call cost about
 * as much as the reference's whole solve of 256 humanoid worlds
 * (docs/measured.md). */
typedef struct pkept {
    cl_mem mem[B_COUNT];
    size_t cap[B_COUNT]; /* bytes */
    cl_kernel k;
    int *ints;
    double *reals;
    void *stage; /* the reals in the device's precision, when float */
    size_t ints_cap, reals_cap, stage_cap;
} pkept;

/* The batch on the host: its layout (info, PI_* a problem) and its
 * arrays as the kernel reads them, in double, in the kept arenas. */
typedef struct pdev {
    clcone_context *c;
    pkept *kp;
    int K, threads;
    const clc_pproblem *const *p;
    pchol *ch; /* each sparse island's factor pattern (ref/primal_chol.h); a dense one's unused */
    double *const *a;
    const clcone_options *o;
    size_t nd, nr, nb, nh, nm, nz, npat, ndj; /* dofs, rows, blocks, H's reals, M's, J's entries, pattern dofs, D J's reals */
    size_t nli;                                /* L's entries */
    size_t at[PQ_N];                           /* each region's offset in its buffer (layout.h) */
    size_t nints, nreals, nscratch;            /* the buffers' items in use */
    int *info, *off, *kind, *state, *out;
    int *jp, *jc, *cp, *cr, *poff, *pat, *doff, *rowblk; /* J by rows and by dofs, the blocks' patterns (layout.h) */
    int *mt; /* each dof's tree and row of M (layout.h) */
    int *pos, *lp, *li; /* each dof's position in the factor, L's columns' offsets and rows (positions) */
    double *mu, *prm, *M, *jv, *cv, *din, *rin, *a0, *f, *outr; /* a0: the start's a, then the solution's */
} pdev;

/* Lanes a problem: a GPU CONE_REDUCE_WG; a CPU one. A CPU runs a
 * group's lanes one after another, and every lane evaluates the line
 * search and the cost whole: one lane took 0.6-0.7x the time of 8 on
 * POCL (256 humanoid worlds, Stonehenge, 100 humanoids; same bits). */
#define PDEV_CPU_LANES 1

static void pkept_free(clcone_context *c, void *kept)
{
    pkept *kp = kept;
    for (int i = 0; i < B_COUNT; ++i) clc_buf_free(c, &kp->mem[i]);
    if (kp->k) clReleaseKernel(kp->k);
    free(kp->ints);
    free(kp->reals);
    free(kp->stage);
    free(kp);
}

/* The context's kept primal state, made at its first primal batch (a
 * solver that kept something else there gives it up). */
static pkept *pkept_of(clcone_context *c, clcone_error *err)
{
    pkept *kp;
    if (c->kept_free == pkept_free) return c->kept;
    if (!(kp = clc_calloc(1, sizeof *kp, err, "the primal batch's kept state"))) return NULL;
    if (c->kept_free) c->kept_free(c, c->kept);
    c->kept = kp;
    c->kept_free = pkept_free;
    return kp;
}

/* *p with room for n items of size bytes, kept; its old contents lost. */
static int arena(void **p, size_t *cap, size_t n, size_t size, clcone_error *err, const char *what)
{
    void *q;
    if (n <= *cap) return 1;
    if (!(q = clc_malloc(n, size, err, what))) return 0;
    free(*p);
    *p = q;
    *cap = n;
    return 1;
}

/* Block b's pattern: the dofs its rows move, ascending, into pat (when
 * not NULL); their count. Mostly its first row's columns (a block of one
 * row, a contact's rows alike); else tag marks a dof seen, stamp's
 * tag[dof] holding the last block's number that saw it. */
static int block_pattern(const clc_pproblem *p, int b, int *stamp, int tag, int *pat)
{
    int n = 0, r0 = p->off[b], same = 1;
    for (int r = r0 + 1; same && r < p->off[b + 1]; ++r) same = clc_pproblem_same_dofs(p, r0, r);
    if (same) {
        n = p->jp[r0 + 1] - p->jp[r0];
        if (pat) memcpy(pat, p->jc + p->jp[r0], sizeof *pat * (size_t)n);
        return n;
    }
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

/* Problem k's factor pattern (ref/primal_chol.h, as the reference
 * factors it): a sparse island's positions in minimum-degree order and
 * L's columns; a dense one (clc_pchol_dense_pays) keeps its dofs' order
 * and the whole triangle, which the kernel needs no table for. */
static clcone_status analyse_item(void *job, int k, clcone_error *err)
{
    pdev *D = job;
    const clc_pproblem *p = D->p[k];
    int *same;
    clcone_status s;
    if (clc_pchol_dense_pays(p)) return CLCONE_OK;
    if (!(same = clc_calloc((size_t)p->m + 1, sizeof *same, err, "the rows' dofs"))) return CLCONE_ENOMEM;
    for (int r = 1; r < p->m; ++r) same[r] = clc_pproblem_same_dofs(p, r - 1, r);
    s = clc_pchol_init(&D->ch[k], p, 0, same, err);
    free(same);
    return s;
}

/* L's rows problem k uploads: none for a dense island (the kernel's
 * pn_row). */
static size_t factor_size(const pdev *D, int k)
{
    return D->ch[k].lp ? (size_t)D->ch[k].lp[D->p[k]->nv] : 0;
}

/* The buffers' regions (layout.h's PQ_*) for the batch's sizes, their
 * offsets in the ints' head, the host arenas and the arrays in them (the
 * ints zeroed: the packing counts in cp); a batch whose offsets overflow
 * the kernel's ints refused. */
static clcone_status pdev_arenas(pdev *D, clcone_error *err)
{
    size_t K = (size_t)D->K, nd = D->nd, nr = D->nr, nb = D->nb, at = PQ_N, *n = D->at;
    int *I;
    double *R;
    n[PQ_INFO] = PI_N * K, n[PQ_OFF] = nb + K, n[PQ_KIND] = nb, n[PQ_JP] = nr + K, n[PQ_CP] = nd + K;
    n[PQ_POFF] = nb + K, n[PQ_DOFF] = nb + K, n[PQ_ROWBLK] = nr, n[PQ_JC] = D->nz, n[PQ_CR] = D->nz;
    n[PQ_PAT] = D->npat, n[PQ_MT] = 3 * nd, n[PQ_POS] = nd, n[PQ_LP] = nd + K, n[PQ_LI] = D->nli;
    n[PQ_STATE] = nr, n[PQ_OUT] = PO_N * K, n[PQ_MU] = nb, n[PQ_PRM] = 2 * K, n[PQ_M] = D->nm;
    n[PQ_JV] = D->nz, n[PQ_CV] = D->nz, n[PQ_DIN] = 2 * nd, n[PQ_RIN] = 3 * nr, n[PQ_A] = nd, n[PQ_F] = nr;
    n[PQ_OUTR] = 2 * K, n[PQ_H] = D->nh, n[PQ_DJ] = D->ndj, n[PQ_DV] = PD_N * nd, n[PQ_RV] = PR_N * nr;
    n[PQ_BLK] = PB_N * nb;
    for (int q = 0; q < PQ_N; ++q) { /* sizes become offsets; the reals and the scratch begin anew */
        size_t len = n[q];
        at = q == PQ_MU || q == PQ_H ? 0 : at;
        n[q] = at;
        at += len;
        if (q == PQ_OUT) D->nints = at;
        if (q == PQ_OUTR) D->nreals = at;
    }
    D->nscratch = at;
    if (D->nints > INT_MAX || D->nreals > INT_MAX || D->nscratch > INT_MAX)
        return clc_fail(err, CLCONE_ENOTSUP,
                           "a primal batch of %zu dofs, %zu rows, %zu Hessian entries, %zu of J and %zu of D J: "
                           "over the device's int offsets; split the batch",
                           nd, nr, D->nh, D->nz, D->ndj);
    if (!arena((void **)&D->kp->ints, &D->kp->ints_cap, D->nints, sizeof(int), err, "the batch's layout")
        || !arena((void **)&D->kp->reals, &D->kp->reals_cap, D->nreals, sizeof(double), err, "the batch's values")
        || (D->c->prec != CLCONE_DOUBLE
            && !arena(&D->kp->stage, &D->kp->stage_cap, D->nreals, D->c->real_size, err, "the batch's staging")))
        return CLCONE_ENOMEM;
    I = D->kp->ints;
    R = D->kp->reals;
    memset(I, 0, D->nints * sizeof *I);
    memset(R + n[PQ_F], 0, (D->nreals - n[PQ_F]) * sizeof *R); /* outputs: no stale or undefined bytes go up */
    for (int q = 0; q < PQ_N; ++q) I[q] = (int)n[q];
    D->info = I + n[PQ_INFO], D->off = I + n[PQ_OFF], D->kind = I + n[PQ_KIND], D->jp = I + n[PQ_JP];
    D->cp = I + n[PQ_CP], D->poff = I + n[PQ_POFF], D->doff = I + n[PQ_DOFF], D->rowblk = I + n[PQ_ROWBLK];
    D->jc = I + n[PQ_JC], D->cr = I + n[PQ_CR], D->pat = I + n[PQ_PAT], D->mt = I + n[PQ_MT];
    D->pos = I + n[PQ_POS], D->lp = I + n[PQ_LP], D->li = I + n[PQ_LI], D->state = I + n[PQ_STATE];
    D->out = I + n[PQ_OUT];
    D->mu = R + n[PQ_MU], D->prm = R + n[PQ_PRM], D->M = R + n[PQ_M], D->jv = R + n[PQ_JV], D->cv = R + n[PQ_CV];
    D->din = R + n[PQ_DIN], D->rin = R + n[PQ_RIN], D->a0 = R + n[PQ_A], D->f = R + n[PQ_F];
    D->outr = R + n[PQ_OUTR];
    return CLCONE_OK;
}

/* The batch's offsets and sizes, J's structure; a problem over the dof
 * limit, or a batch whose offsets overflow the kernel's ints, refused. */
static clcone_status pdev_layout(pdev *D, int *failed, clcone_error *err)
{
    size_t nd = 0, nr = 0, nb = 0, nh = 0, nm = 0, nz = 0, npat = 0, ndj = 0, nli = 0, K = (size_t)D->K;
    int *stamp = NULL, tag = 0, sparse = 0; /* whether an island is factored sparse (threads for their analysis) */
    clcone_status s;
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
        nm += (size_t)p->moff[p->ng];
    }
    if (!(D->ch = clc_calloc(K, sizeof *D->ch, err, "the factors' patterns"))) return CLCONE_ENOMEM;
    for (int k = 0; k < D->K && !sparse; ++k) sparse = !clc_pchol_dense_pays(D->p[k]);
    if (sparse && (s = clc_each_item(D->threads, D->K, analyse_item, D, failed, err))) return s;
    for (int k = 0; k < D->K; ++k) nli += factor_size(D, k);
    if (!(stamp = clc_calloc((size_t)CLC_PRIMAL_DEV_MAX_DOFS, sizeof *stamp, err, "the blocks' patterns")))
        return CLCONE_ENOMEM;
    for (int k = 0; k < D->K; ++k) sparse_sizes(D->p[k], stamp, &tag, &nz, &npat, &ndj);
    D->nd = nd;
    D->nr = nr;
    D->nb = nb;
    D->nh = nh;
    D->nm = nm;
    D->nli = nli;
    D->nz = nz;
    D->npat = npat;
    D->ndj = ndj;
    if ((s = pdev_arenas(D, err))) {
        free(stamp);
        return s;
    }
    nd = nr = nb = nh = nm = nz = npat = ndj = nli = 0;
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
        I[PI_MB0] = (int)nm;
        I[PI_LI0] = (int)nli;
        nd += (size_t)p->nv;
        nr += (size_t)p->m;
        nb += (size_t)p->nb;
        nh += (size_t)p->nv * (size_t)p->nv;
        nm += (size_t)p->moff[p->ng];
        nli += factor_size(D, k);
        pack_sparse(D, k, stamp, &tag);
        nz += (size_t)p->jp[p->m];
        npat += (size_t)D->poff[(size_t)I[PI_B0] + (size_t)k + (size_t)p->nb];
        ndj += (size_t)D->doff[(size_t)I[PI_B0] + (size_t)k + (size_t)p->nb];
    }
    free(stamp);
    return CLCONE_OK;
}

/* Problem k's factor pattern (analyse_item's) into its slices, and
 * whether it is dense (PI_LI0 -1: no tables). */
static void pack_factor(pdev *D, int k)
{
    const pchol *c = &D->ch[k];
    int *I = D->info + PI_N * k, nv = D->p[k]->nv;
    if (!c->lp) {
        I[PI_LI0] = -1;
        return;
    }
    memcpy(D->pos + I[PI_D0], c->pd, sizeof *D->pos * (size_t)nv);
    memcpy(D->lp + I[PI_D0] + k, c->lp, sizeof *D->lp * ((size_t)nv + 1));
    memcpy(D->li + I[PI_LI0], c->li, sizeof *D->li * (size_t)c->lp[nv]);
}

/* Problem k's values into its slices: M's blocks with each dof's tree
 * and row (layout.h), the start a in the iterate's slot (the kernel's
 * warm start reads it). */
static clcone_status pack_item(void *job, int k, clcone_error *err)
{
    pdev *D = job;
    const clc_pproblem *p = D->p[k];
    const int *I = D->info + PI_N * k;
    int nv = p->nv, m = p->m, b0 = I[PI_B0];
    int *mt = D->mt + 3 * (size_t)I[PI_D0];
    double *din = D->din + 2 * (size_t)I[PI_D0];
    double *rin = D->rin + 3 * (size_t)I[PI_R0];
    (void)err;
    memcpy(D->M + I[PI_MB0], p->M, sizeof *D->M * (size_t)p->moff[p->ng]);
    for (int g = 0; g < p->ng; ++g) {
        int g0 = p->goff[g], n = p->goff[g + 1] - g0;
        for (int i = g0; i < g0 + n; ++i) {
            mt[3 * i] = g0;
            mt[3 * i + 1] = g0 + n;
            mt[3 * i + 2] = p->moff[g] + (i - g0) * n - g0;
        }
    }
    pack_factor(D, k);
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
    memcpy(D->a0 + I[PI_D0], D->a[k], sizeof *D->a0 * (size_t)nv);
    return CLCONE_OK;
}

/* Kept buffer q with room for n items of size bytes (at least one), x's
 * n written into it (x NULL: nothing) without a wait: the arenas stay
 * as they are until the batch's read has waited. Each upload covers its
 * buffer's head as the kernel reads it: Oclgrind's uninitialised-value
 * plugin sizes a buffer's shadow to its last host store, and one into a
 * part of a buffer left the rest poisoned for the kernel's own writes. */
static clcone_status put(pdev *D, int q, size_t n, size_t size, const void *x, clcone_error *err)
{
    int fresh;
    cl_int e;
    clcone_status s = clc_buf_reserve(D->c, &D->kp->mem[q], &D->kp->cap[q], (n ? n : 1) * size, &fresh, err);
    if (s || !x || !n) return s;
    e = clEnqueueWriteBuffer(D->c->queue, D->kp->mem[q], CL_FALSE, 0, n * size, x, 0, NULL, NULL);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "uploading the primal batch");
}

/* The reals in the device's precision: a float device's in the staging
 * arena, each input region checked as clc_buf_reals does (the outputs'
 * zeroed). */
static const void *staged_reals(pdev *D, clcone_error *err)
{
    static const struct {
        int q;
        size_t per;
        const char *what;
    } in[] = {{PQ_MU, 1, "cone mu"},         {PQ_PRM, 2, "scale and line-search tolerance"},
              {PQ_M, 1, "M entry"},          {PQ_JV, 1, "J entry"},
              {PQ_CV, 1, "J entry"},         {PQ_DIN, 1, "a0 and M a0"},
              {PQ_RIN, 1, "a_ref, R and bound"}, {PQ_A, 1, "start dof"}};
    size_t rs = D->c->real_size, *at = D->at;
    char *st = D->kp->stage;
    if (D->c->prec == CLCONE_DOUBLE) return D->kp->reals;
    for (size_t i = 0; i < sizeof in / sizeof *in; ++i) {
        int q = in[i].q;
        if (clc_stage_reals(D->c, in[i].what, in[i].per, D->kp->reals + at[q], at[q + 1] - at[q], st + at[q] * rs,
                            err))
            return NULL;
    }
    memset(st + at[PQ_F] * rs, 0, (D->nreals - at[PQ_F]) * rs);
    return st;
}

/* The batch on the device, the kernel's arguments set and its lanes. */
static clcone_status pdev_upload(pdev *D, size_t *lanes, clcone_error *err)
{
    clcone_context *c = D->c;
    pkept *kp = D->kp;
    int warm = D->o->warm_start != 0, max_iter = D->o->max_iter, ND = (int)D->nd, NR = (int)D->nr;
    const void *reals = staged_reals(D, err);
    kreal tol = KREAL(D->o->tol);
    clcone_status s;
    if (!reals) return CLCONE_EINVAL;
    if ((s = put(D, B_INTS, D->nints, sizeof(int), kp->ints, err))
        || (s = put(D, B_REALS, D->nreals, c->real_size, reals, err))
        || (s = put(D, B_SCRATCH, D->nscratch, c->real_size, NULL, err))
        || (!kp->k && (s = clc_kernel(c, "primal_newton", &kp->k, err)))
        || (s = SET_ARGS(kp->k, "primal_newton", err, KI(max_iter), KR(c, tol), KI(warm), KI(ND), KI(NR),
                         KM(kp->mem[B_INTS]), KM(kp->mem[B_REALS]), KM(kp->mem[B_SCRATCH]))))
        return s;
    return clc_kernel_lanes(c, kp->k, "primal_newton", c->info.is_cpu ? PDEV_CPU_LANES : CONE_REDUCE_WG, lanes, err);
}

/* The zones and outcomes, then the iterates, forces and errors back
 * (two runs, layout.h), with one wait. */
static clcone_status pdev_read(pdev *D, clcone_error *err)
{
    clcone_context *c = D->c;
    size_t rs = c->real_size, a = D->at[PQ_A], nback = D->nreals - a;
    char *to = c->prec == CLCONE_DOUBLE ? (char *)D->kp->reals : (char *)D->kp->stage;
    cl_int e = clEnqueueReadBuffer(c->queue, D->kp->mem[B_INTS], CL_FALSE, D->at[PQ_STATE] * sizeof(int),
                                   (D->nints - D->at[PQ_STATE]) * sizeof(int), D->state, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueReadBuffer(c->queue, D->kp->mem[B_REALS], CL_FALSE, a * rs, nback * rs, to + a * rs, 0, NULL,
                                NULL);
    if (e == CL_SUCCESS) e = clFinish(c->queue);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "reading the primal Newton's results");
    if (c->prec != CLCONE_DOUBLE) clc_unstage_reals(c, to + a * rs, D->a0, nback);
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
    memcpy(a, D->a0 + I[PI_D0], sizeof *a * (size_t)nv);
    memcpy(f, D->f + I[PI_R0], sizeof *f * (size_t)m);
    memcpy(state, D->state + I[PI_R0], sizeof *state * (size_t)m);
    res->iters = out[PO_ITERS];
    res->error = D->outr[2 * k];
    res->cost = D->outr[2 * k + 1];
    if (out[PO_STOP] == PS_NOT_PD) {
        int dof = I[PI_LI0] < 0 ? out[PO_PIVOT] : 0; /* the pivot's position, as a dof */
        while (I[PI_LI0] >= 0 && dof < nv - 1 && D->pos[I[PI_D0] + dof] != out[PO_PIVOT]) ++dof;
        return clc_fail(err, CLCONE_EINVAL,
                           "MuJoCo's Newton: the Hessian M + J'DJ is not positive definite (pivot at dof %d of %d, "
                           "on the device)",
                           dof, nv);
    }
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

clcone_status clc_dev_primal_prepare(clcone_context *c, clcone_error *err)
{
    pkept *kp = pkept_of(c, err);
    if (!kp) return CLCONE_ENOMEM;
    return kp->k ? CLCONE_OK : clc_kernel(c, "primal_newton", &kp->k, err);
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
    for (int k = 0; k < K; ++k)
        if ((s = clc_pproblem_soft_only(p[k], err))) {
            *failed = k;
            return s;
        }
    D.c = c;
    if (!(D.kp = pkept_of(c, err))) return CLCONE_ENOMEM;
    D.K = K;
    D.p = p;
    D.a = a;
    D.o = o;
    D.threads = threads;
    *failed = -1;
    if ((s = pdev_layout(&D, failed, err)) || (s = clc_each_item(threads, K, pack_item, &D, failed, err))
        || (s = pdev_upload(&D, &lanes, err))
        || (s = clc_run(c, D.kp->k, (size_t)K * lanes, lanes, "primal_newton", err)) || (s = pdev_read(&D, err)))
        goto out;
    for (int k = 0; k < K; ++k) {
        if ((s = pdev_result(&D, k, a[k], f[k], state[k], &res[k], err))) {
            *failed = k;
            goto out;
        }
        res[k].time_ms = clc_now_ms() - t0;
    }
out:
    if (s) clFinish(c->queue); /* no transfer left to read the arenas the next batch rewrites */
    for (int k = 0; D.ch && k < K; ++k) clc_pchol_free(&D.ch[k]);
    free(D.ch);
    return s;
}

/* The device's batch as the proximal rounds' inner solve. */
typedef struct dev_rounds {
    clcone_context *c;
    int threads;
} dev_rounds;

static clcone_status dev_round(void *solver, int K, const clc_pproblem *const *p, const clcone_options *o,
                               double *const *a, double *const *f, int *const *state, clcone_prob_result *res,
                               int *failed, clcone_error *err)
{
    const dev_rounds *r = solver;
    return clc_dev_primal_batch(r->c, K, p, o, r->threads, a, f, state, res, failed, err);
}

clcone_status clc_dev_primal_prox_batch(clcone_context *c, int K, const clc_pproblem *const *p,
                                           const clcone_options *o, int threads, double *const *a,
                                           double *const *f, int *const *state, clcone_prob_result *res,
                                           int *failed, clcone_error *err)
{
    dev_rounds r = {c, threads};
    return clc_primal_prox_rounds(K, p, o, c->prec == CLCONE_DOUBLE ? CLC_PROX_FLOOR_DOUBLE : CLC_PROX_FLOOR_FLOAT,
                                  a, f, state, res, dev_round, &r, failed, err);
}
