/* MuJoCo's primal problem at a state, as islands (mujoco/mj_primal.h).
 * Where the dual forms (mujoco/adapter.c, general.c) need A = J M^-1 J',
 * M^-1 on every row's trees, this takes M and J as MuJoCo has them. */
#define _POSIX_C_SOURCE 200809L
#include "mujoco/mj_primal.h"
#include "mujoco/mj_common.h"
#include "core/internal.h"
#include "solve/blocks_solve.h"
#include "cone.h"
#include "block_sets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MuJoCo's J (sparse or dense) as its rows' entries: row i's at jp[i]
 * .. jp[i+1]. An elliptic contact's sparse rows keep their zeros: MuJoCo
 * gives each the contact's chain of dofs, so they share their dofs (one
 * run in J's transpose and H's pattern: primal_newton.c), where the
 * normal's and the tangents' zeros differ. Other rows drop theirs: a
 * pyramid's edges, each a normal plus or minus a tangent, keep their
 * shared dofs without them (the humanoids' solves 4-5% faster), and a
 * dense row's come in no pattern. */
typedef struct jrows {
    int *jp, *jc;
    double *jv;
} jrows;

static clcone_status jrows_make(const mjModel *m, const mjData *d, jrows *J, clcone_error *err)
{
    int sparse = mj_isSparse(m), nv = (int)m->nv, n = 0;
    size_t cap = !d->nefc ? 0
                 : sparse ? (size_t)d->efc_J_rowadr[d->nefc - 1] + (size_t)d->efc_J_rownnz[d->nefc - 1]
                        : (size_t)d->nefc * (size_t)nv;
    J->jv = clc_malloc(cap + 1, sizeof *J->jv, err, "J's values");
    J->jp = clc_malloc((size_t)d->nefc + 1 + cap + 1, sizeof *J->jp, err, "J's rows and columns");
    if (!J->jp || !J->jv) return CLCONE_ENOMEM;
    J->jc = J->jp + d->nefc + 1;
    J->jp[0] = 0;
    for (int i = 0; i < d->nefc; ++i) {
        int len = sparse ? d->efc_J_rownnz[i] : nv, keep = sparse && d->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC;
        for (int k = 0; k < len; ++k) { /* without a branch */
            int a = sparse ? d->efc_J_rowadr[i] + k : i * nv + k;
            J->jc[n] = sparse ? d->efc_J_colind[a] : k;
            J->jv[n] = d->efc_J[a];
            n += keep || d->efc_J[a] != 0;
        }
        J->jp[i + 1] = n;
    }
    return CLCONE_OK;
}

static void jrows_free(jrows *J)
{
    free(J->jp);
    free(J->jv);
}

/* Rows of the block that starts at row i: an elliptic contact's dim, else
 * 1 (every other row's cost is its own). */
static int block_rows(const mjData *d, int i)
{
    return d->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC ? d->contact[d->efc_id[i]].dim : 1;
}

static int root(int *up, int t)
{
    while (up[t] != t) t = up[t] = up[up[t]];
    return t;
}

/* Each row's island (isl[i]; *n islands, the dofless one last) from the
 * trees the blocks' rows reach, joined; each tree's island in tisl (-1:
 * none). */
static void islands(const mjModel *m, const mjData *d, const jrows *J, int *up, int *isl, int *tisl, int *n)
{
    int nt = (int)m->ntree, dofless = 0;
    for (int t = 0; t < nt; ++t) {
        up[t] = t;
        tisl[t] = -1;
    }
    for (int i = 0; i < d->nefc; i += block_rows(d, i)) {
        int t0 = -1;
        for (int r = i; r < i + block_rows(d, i); ++r)
            for (int k = J->jp[r], last = -1; k < J->jp[r + 1]; ++k) {
                int t = m->dof_treeid[J->jc[k]];
                if (t == last) continue; /* a tree's dofs are contiguous: its entries in a row are one run */
                last = t;
                if (t0 < 0) t0 = root(up, t);
                else up[root(up, t)] = root(up, t0);
            }
        for (int r = i; r < i + block_rows(d, i); ++r) isl[r] = t0; /* a tree for now */
    }
    *n = 0;
    for (int i = 0; i < d->nefc; ++i) {
        int t = isl[i] < 0 ? -1 : root(up, isl[i]);
        if (t >= 0 && tisl[t] < 0) tisl[t] = (*n)++;
        isl[i] = t >= 0 ? tisl[t] : -1;
        dofless |= t < 0;
    }
    for (int i = 0; i < d->nefc; ++i)
        if (isl[i] < 0) isl[i] = *n;
    *n += dofless;
    for (int t = 0; t < nt; ++t) tisl[t] = tisl[root(up, t)];
}

/* The model coulomb's hard rows, R = 0 on the contacts (frictionless,
 * pyramidal and elliptic), each scaled by A's
 * diagonal as MuJoCo approximates it, one for all of a contact's rows
 * (times MuJoCo's ratio of the row's R to the first row's: an elliptic
 * cone's soft cost holds only for MuJoCo's proportions of R): its
 * R is (1 - imp) / imp of it (imp the impedance, efc_KBIP's third; the
 * field of the diagonal itself changed its name between MuJoCo's versions).
 * A pyramid's R is 2 mu^2 / impratio of its normal's, tiny at a small
 * friction, so HARD_SCALE_FLOOR of the contact's mean of J_i M^-1 J_i'
 * with M's diagonal alone bounds it from below. One scale a contact, and
 * MuJoCo's where it is above the floor: on the humanoid, a scale a row by
 * M's diagonal let the device and the reference part by 1e-5 in qpos over
 * 100 steps (2e-9 with MuJoCo's), and the contact's mean of it took 332
 * Newton steps over 50 steps to 1e-8 against MuJoCo's 215. */
#define HARD_SCALE_FLOOR 0.1
static clcone_status hard_rows(const mjData *d, const int *row, clc_pproblem *p, clcone_error *err)
{
    double *md = clc_malloc((size_t)p->nv + 1, sizeof *md, err, "M's diagonal");
    clcone_status s = md ? clc_pproblem_make_hard(p, err) : CLCONE_ENOMEM;
    for (int g = 0; !s && g < p->ng; ++g)
        for (int v = p->goff[g], n = p->goff[g + 1] - p->goff[g]; v < p->goff[g + 1]; ++v)
            md[v] = p->M[p->moff[g] + (size_t)(v - p->goff[g]) * (size_t)(n + 1)];
    for (int x = 0, x1; !s && x < p->m; x = x1) {
        int i = row[x];
        double imp = d->efc_KBIP[4 * i + 2], w = d->efc_R[i] * imp / (1 - imp), diag = 0;
        x1 = x + 1;
        if (d->efc_type[i] < mjCNSTR_CONTACT_FRICTIONLESS) continue;
        while (x1 < p->m && d->efc_type[row[x1]] == d->efc_type[i] && d->efc_id[row[x1]] == d->efc_id[i]) ++x1;
        for (int y = x; y < x1; ++y)
            for (int e = p->jp[y]; e < p->jp[y + 1]; ++e) diag += p->jv[e] * p->jv[e] / md[p->jc[e]];
        w = fmax(w, HARD_SCALE_FLOOR * diag / (x1 - x));
        if (!(w > 0 && isfinite(w))) {
            s = clc_fail(err, CLCONE_EINVAL, "constraint row %d (%s): hard contact with A's diagonal %g, not finite "
                                                "and > 0", i, clc_mj_row_kind(d->efc_type[i]), w);
            break;
        }
        for (int y = x; y < x1; ++y) p->hard[y] = y == x ? w : w * (p->R[y] / p->R[x]);
    }
    free(md);
    return s;
}

/* Island k's problem from its dofs and rows (loc: a dof's local index). */
static clcone_status fill_island(const mjModel *m, const mjData *d, const jrows *J, const clc_mj_primal *pr,
                                 int k, const int *loc, int hard, clcone_error *err)
{
    clc_pproblem *p = &pr->isl[k];
    const int *dof = pr->dof + pr->dof_off[k], *row = pr->row + pr->row_off[k];
    int nv = pr->dof_off[k + 1] - pr->dof_off[k], nr = pr->row_off[k + 1] - pr->row_off[k], nb = 0, nnz = 0;
    size_t nm = 0;
    double inertia = 0;
    clcone_status s;
    for (int x = 0; x < nr; x += block_rows(d, row[x])) ++nb;
    for (int x = 0; x < nr; ++x) nnz += J->jp[row[x] + 1] - J->jp[row[x]];
    for (int j = 0; j < nv; j += m->tree_dofnum[m->dof_treeid[dof[j]]])
        nm += (size_t)m->tree_dofnum[m->dof_treeid[dof[j]]] * (size_t)m->tree_dofnum[m->dof_treeid[dof[j]]];
    if ((s = clc_pproblem_alloc(p, nv, nr, nb, nnz, nm, err))) return s;
    for (int j = 0, g0 = 0, n = 0; j < nv; ++j) {
        int g = dof[j];
        double *B;
        if (j == 0 || m->dof_treeid[g] != m->dof_treeid[dof[j - 1]]) { /* a tree's dofs: a group */
            g0 = j;
            n = m->tree_dofnum[m->dof_treeid[g]];
            p->goff[p->ng] = j;
            p->moff[p->ng + 1] = p->moff[p->ng] + n * n;
            ++p->ng;
        }
        B = p->M + p->moff[p->ng - 1];
        for (int e = m->M_rowadr[g]; e < m->M_rowadr[g] + m->M_rownnz[g]; ++e) {
            int c = loc[m->M_colind[e]] - g0;
            B[(j - g0) * n + c] = B[c * n + j - g0] = d->M[e];
        }
        inertia += B[(j - g0) * n + j - g0];
        p->a0[j] = d->qacc_smooth[g];
        p->f0[j] = d->qfrc_smooth[g];
        pr->a[pr->dof_off[k] + j] = d->qacc_warmstart[g];
    }
    nnz = nb = 0;
    for (int x = 0; x < nr; ++x) {
        int i = row[x], t = d->efc_type[i];
        const mjContact *con = t == mjCNSTR_CONTACT_ELLIPTIC ? &d->contact[d->efc_id[i]] : NULL;
        for (int e = J->jp[i]; e < J->jp[i + 1]; ++e) {
            p->jc[nnz] = loc[J->jc[e]];
            p->jv[nnz++] = J->jv[e];
        }
        p->jp[x + 1] = nnz;
        p->aref[x] = d->efc_aref[i];
        p->R[x] = d->efc_R[i];
        if (con && i != con->efc_address) {
            p->bound[x] = con->friction[i - con->efc_address - 1];
            continue;
        }
        p->off[nb] = x;
        p->kind[nb] = t == mjCNSTR_EQUALITY ? BLK_FREE
                      : t == mjCNSTR_FRICTION_DOF || t == mjCNSTR_FRICTION_TENDON ? BLK_BOX
                      : con ? BLK_CONE : BLK_NONNEG;
        p->mu[nb++] = con ? con->mu : 0;
        p->bound[x] = p->kind[nb - 1] == BLK_BOX ? d->efc_frictionloss[i] : 0;
    }
    p->off[nb] = nr;
    p->goff[p->ng] = nv;
    p->scale = nv ? 1 / inertia : 1;
    p->ls_iterations = m->opt.ls_iterations;
    p->ls_tolerance = m->opt.ls_tolerance;
    if (hard && (s = hard_rows(d, row, p, err))) return s;
    /* a prefix: clc_fail would format err->msg from itself */
    if ((s = clc_pproblem_validate(p, err)))
        clc_error_prefix(err, "island %d (MuJoCo's rows from %d, %s)", k, row[0],
                            clc_mj_row_kind(d->efc_type[row[0]]));
    return s;
}

/* pr's dof and row lists by island (k's from dof_off[k], row_off[k]). */
static void lists(const mjModel *m, const mjData *d, clc_mj_primal *pr, const int *isl, const int *tisl,
                  int *loc, int *fill)
{
    int nt = (int)m->ntree;
    for (int t = 0; t < nt; ++t)
        if (tisl[t] >= 0) pr->dof_off[tisl[t] + 1] += m->tree_dofnum[t];
    for (int i = 0; i < d->nefc; ++i) ++pr->row_off[isl[i] + 1];
    for (int k = 0; k < pr->n; ++k) {
        pr->dof_off[k + 1] += pr->dof_off[k];
        pr->row_off[k + 1] += pr->row_off[k];
        fill[k] = 0;
    }
    for (int t = 0; t < nt; ++t)
        for (int j = 0; tisl[t] >= 0 && j < m->tree_dofnum[t]; ++j) {
            int k = tisl[t], g = m->tree_dofadr[t] + j;
            loc[g] = fill[k]++;
            pr->dof[pr->dof_off[k] + loc[g]] = g;
        }
    for (int k = 0; k < pr->n; ++k) fill[k] = 0;
    for (int i = 0; i < d->nefc; ++i) pr->row[pr->row_off[isl[i]] + fill[isl[i]]++] = i;
}

/* pr's islands, their dofs and rows, accelerations, forces and zones,
 * zeroed, in one allocation (a world's are made every step): the islands
 * first, then the reals, then the integers. */
static clcone_status islands_alloc(clc_mj_primal *pr, int nv, int nefc, clcone_error *err)
{
    size_t n = (size_t)pr->n + 1, V = (size_t)nv + 1, R = (size_t)nefc + 1;
    char *at = clc_calloc(1, n * sizeof *pr->isl + (V + R) * sizeof *pr->a + (2 * n + V + 2 * R) * sizeof(int), err,
                          "islands");
    if (!at) return CLCONE_ENOMEM;
    pr->isl = (clc_pproblem *)(void *)at;
    pr->a = (double *)(void *)(at + n * sizeof *pr->isl);
    pr->f = pr->a + V;
    pr->dof_off = (int *)(void *)(pr->f + R);
    pr->row_off = pr->dof_off + n;
    pr->dof = pr->row_off + n;
    pr->row = pr->dof + V;
    pr->state = pr->row + R;
    return CLCONE_OK;
}

clcone_status clc_mj_primal_build(const mjModel *m, const mjData *d, const char *label, int hard,
                                     clc_mj_primal *pr, clcone_error *err)
{
    int nt = (int)m->ntree, nv = (int)m->nv, nefc = d->nefc;
    /* scratch in one allocation: the trees' sets and islands, the rows'
     * islands, the dofs' local indices, the islands' fill (at most one an
     * island, and the dofless rows' one) */
    int *up = clc_calloc(3 * (size_t)nt + (size_t)nefc + (size_t)nv + 6, sizeof *up, err, "the islands' scratch");
    int *tisl = up ? up + nt + 1 : NULL, *isl = up ? tisl + nt + 1 : NULL, *loc = up ? isl + nefc + 1 : NULL,
        *fill = up ? loc + nv + 1 : NULL;
    jrows J = {0};
    clcone_status s = CLCONE_ENOMEM;
    memset(pr, 0, sizeof *pr);
    if (!up || jrows_make(m, d, &J, err)) goto out;
    islands(m, d, &J, up, isl, tisl, &pr->n);
    if (islands_alloc(pr, nv, nefc, err)) goto out;
    lists(m, d, pr, isl, tisl, loc, fill);
    pr->warm = !mjDISABLED(mjDSBL_WARMSTART);
    s = CLCONE_OK;
    for (int k = 0; k < pr->n && !s; ++k)
        if ((s = fill_island(m, d, &J, pr, k, loc, hard, err))) clc_mj_state_error(s, label, err);
out:
    jrows_free(&J);
    free(up);
    if (s) clc_mj_primal_free(pr);
    return s;
}

void clc_mj_primal_free(clc_mj_primal *pr)
{
    for (int k = 0; pr->isl && k < pr->n; ++k) clc_pproblem_free(&pr->isl[k]);
    free(pr->isl); /* and the arrays after it (islands_alloc) */
    memset(pr, 0, sizeof *pr);
}

void clc_mj_primal_write(const mjModel *m, mjData *d, const clc_mj_primal *pr)
{
    static const int zone[] = {mjCNSTRSTATE_SATISFIED, mjCNSTRSTATE_QUADRATIC, mjCNSTRSTATE_LINEARNEG,
                               mjCNSTRSTATE_LINEARPOS, mjCNSTRSTATE_CONE};
    memcpy(d->qacc, d->qacc_smooth, sizeof *d->qacc * (size_t)m->nv);
    for (int j = 0; j < pr->dof_off[pr->n]; ++j) d->qacc[pr->dof[j]] = pr->a[j];
    for (int x = 0; x < d->nefc; ++x) {
        d->efc_force[pr->row[x]] = pr->f[x];
        d->efc_state[pr->row[x]] = zone[pr->state[x]];
    }
    mj_mulJacVec(m, d, d->efc_b, d->qacc_smooth);
    for (int i = 0; i < d->nefc; ++i) d->efc_b[i] -= d->efc_aref[i];
    mj_mulJacTVec(m, d, d->qfrc_constraint, d->efc_force);
}

/* The islands' results as one: the worst status (its reason) and error,
 * the most iterations, the costs summed. */
static void merge_results(const clcone_prob_result *res, int n, double ms, clcone_prob_result *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < n; ++k) {
        if (res[k].status > out->status || k == 0) {
            out->status = res[k].status;
            memcpy(out->reason, res[k].reason, sizeof out->reason);
        }
        if (res[k].iters > out->iters) out->iters = res[k].iters;
        if (res[k].error > out->error) out->error = res[k].error;
        out->cost += res[k].cost;
    }
    out->time_ms = ms;
}

/* Room for a batch's islands as clc_solve_primal_batch takes them: a
 * world's few islands on the stack, a larger batch's in one allocation
 * (a solve of the humanoid's one island took five, whose churn cost more
 * than the island's Cholesky). */
#define ISLANDS_ON_STACK 4
typedef struct island_room {
    const clc_pproblem **p;
    double **av;   /* 2N: each island's accelerations, then its forces */
    int **sv;
    int *owner;    /* 2N: each island's world, then its index there */
    clcone_prob_result *res;
    void *heap;
    const clc_pproblem *p_[ISLANDS_ON_STACK];
    double *av_[2 * ISLANDS_ON_STACK];
    int *sv_[ISLANDS_ON_STACK], owner_[2 * ISLANDS_ON_STACK];
    clcone_prob_result res_[ISLANDS_ON_STACK];
} island_room;

static clcone_status room_make(island_room *r, size_t N, clcone_error *err)
{
    char *at;
    r->heap = NULL;
    if (N <= ISLANDS_ON_STACK) {
        r->p = r->p_;
        r->av = r->av_;
        r->sv = r->sv_;
        r->owner = r->owner_;
        r->res = r->res_;
        return CLCONE_OK;
    }
    /* the results first: the strictest alignment */
    at = r->heap = clc_malloc(N, sizeof *r->res + sizeof *r->p + 2 * sizeof *r->av + sizeof *r->sv
                                     + 2 * sizeof *r->owner, err, "islands");
    if (!at) return CLCONE_ENOMEM;
    r->res = (clcone_prob_result *)(void *)at;
    r->p = (const clc_pproblem **)(void *)(at += N * sizeof *r->res);
    r->av = (double **)(void *)(at += N * sizeof *r->p);
    r->sv = (int **)(void *)(at += 2 * N * sizeof *r->av);
    r->owner = (int *)(void *)(at + N * sizeof *r->sv);
    return CLCONE_OK;
}

clcone_status clc_mj_primal_solve_many(clcone_context *ctx, int n, clc_mj_primal *const *pr,
                                       const clcone_options *o, int threads, clcone_prob_result *out, int *failed,
                                       clcone_error *err)
{
    size_t N = 0;
    double t0 = clc_now_ms();
    int fi = -1;
    island_room r;
    clcone_status s;
    *failed = -1;
    for (int j = 0; j < n; ++j) N += (size_t)pr[j]->n;
    if ((s = room_make(&r, N, err))) return s;
    for (int j = 0, i = 0; j < n; ++j)
        for (int k = 0; k < pr[j]->n; ++k, ++i) {
            r.p[i] = &pr[j]->isl[k];
            r.av[i] = pr[j]->a + pr[j]->dof_off[k];
            r.av[N + i] = pr[j]->f + pr[j]->row_off[k];
            r.sv[i] = pr[j]->state + pr[j]->row_off[k];
            r.owner[i] = j;
            r.owner[N + i] = k;
        }
    s = clc_solve_primal_batch(ctx, (int)N, r.p, o, threads, r.av, r.av + N, r.sv, r.res, &fi, err);
    if (s && fi >= 0) {
        *failed = r.owner[fi];
        clc_error_prefix(err, "island %d", r.owner[N + fi]);
    }
    for (int j = 0, i = 0; !s && j < n; i += pr[j++]->n) merge_results(r.res + i, pr[j]->n, clc_now_ms() - t0, &out[j]);
    free(r.heap);
    return s;
}

clcone_status clc_mj_primal_solve(clcone_context *ctx, clc_mj_primal *pr, const clcone_options *o,
                                  clcone_prob_result *out, clcone_error *err)
{
    int failed;
    return clc_mj_primal_solve_many(ctx, 1, &pr, o, 1, out, &failed, err);
}
