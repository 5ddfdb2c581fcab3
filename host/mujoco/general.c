/* MuJoCo's whole dual as a general-block problem (core/blocks.h): every
 * row kind, rows in MuJoCo's order (block rows = efc rows, one to one).
 *
 *   equality rows          free, a block per constraint (at most
 *                          BLK_MAX_ROWS rows; a longer one is split, its
 *                          rows being independent)
 *   dof / tendon friction  box |f| <= efc_frictionloss, a row a block
 *   limits, frictionless   f >= 0, a row a block
 *   pyramidal contact      f >= 0, its 2 (condim - 1) rows one block
 *   elliptic contact       the cone sum_i (f_i / friction[i-1])^2 <= f_0^2
 *                          of its condim rows (3, 4 or 6), one block
 *
 * W = A + R (A = J M^-1 J', R = efc_R on the diagonal) and q = J
 * qacc_smooth - efc_aref: MuJoCo's efc_AR and efc_b, MuJoCo's soft model
 * itself. Hard contact (--model coulomb) sets R = 0 on the contact rows
 * (frictionless and pyramidal: f >= 0 on each, so the problem stays a
 * QP; an elliptic cone with R = 0 is exact Coulomb only with De Saxce's
 * shift, which the 3-row form has and this one does not). */
#define _POSIX_C_SOURCE 200809L
#include "mujoco/mj_common.h"
#include "core/internal.h"
#include "cone.h"
#include "block_sets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows of the block that starts at row i. */
static int gen_rows(const mjData *d, int i)
{
    int t = d->efc_type[i], n = 1;
    if (t == mjCNSTR_EQUALITY)
        while (i + n < d->nefc && n < BLK_MAX_ROWS && d->efc_type[i + n] == t && d->efc_id[i + n] == d->efc_id[i]) ++n;
    else if (t == mjCNSTR_CONTACT_ELLIPTIC) n = d->contact[d->efc_id[i]].dim;
    else if (t == mjCNSTR_CONTACT_PYRAMIDAL) n = 2 * (d->contact[d->efc_id[i]].dim - 1);
    return n;
}

static int gen_kind(int type)
{
    switch (type) {
    case mjCNSTR_EQUALITY: return BLK_FREE;
    case mjCNSTR_FRICTION_DOF:
    case mjCNSTR_FRICTION_TENDON: return BLK_BOX;
    case mjCNSTR_CONTACT_ELLIPTIC: return BLK_CONE;
    default: return BLK_NONNEG;
    }
}

/* Blocks of d's rows: their first rows in off (nb + 1 entries) when not
 * NULL; CLCONE_EINVAL naming the row when MuJoCo's rows do not make
 * blocks (a contact's rows cut short, an unknown type). */
static clcone_status gen_blocks(const mjData *d, const char *label, int *off, int *nb, clcone_error *err)
{
    int n = 0, i = 0;
    while (i < d->nefc) {
        int t = d->efc_type[i], r = t >= 0 && t <= mjCNSTR_CONTACT_ELLIPTIC ? gen_rows(d, i) : 0;
        if (r < 1 || r > BLK_MAX_ROWS || i + r > d->nefc || (t == mjCNSTR_CONTACT_ELLIPTIC && r < 2))
            return clc_fail(err, CLCONE_EINVAL, "%s: constraint row %d (type %d, %s) makes no block of 1 to %d "
                                                   "rows (%d rows of %d left)", label, i, t,
                               t >= 0 && t <= mjCNSTR_CONTACT_ELLIPTIC ? clc_mj_row_kind(t) : "unknown", BLK_MAX_ROWS,
                               r, d->nefc - i);
        for (int x = 1; x < r; ++x)
            if (d->efc_type[i + x] != t)
                return clc_fail(err, CLCONE_EINVAL, "%s: constraint row %d (%s) is inside a %s block from row %d",
                                   label, i + x, clc_mj_row_kind(d->efc_type[i + x]), clc_mj_row_kind(t), i);
        if (off) off[n] = i;
        ++n;
        i += r;
    }
    if (off) off[n] = d->nefc;
    *nb = n;
    return CLCONE_OK;
}

/* Kinds, bounds and q of p's blocks; W's values A + R (with coulomb,
 * R = 0 on the contact rows). */
static void gen_fill(const mjData *d, const clc_mj_rows *J, int coulomb, clc_bproblem *p)
{
    for (int b = 0; b < p->nb; ++b) {
        int r0 = p->off[b], n = clc_bproblem_rows(p, b);
        p->kind[b] = gen_kind(d->efc_type[r0]);
        for (int x = 0; x < n; ++x) {
            int i = r0 + x;
            p->q[i] = J->jqs[i] - d->efc_aref[i];
            p->bound[i] = p->kind[b] == BLK_BOX ? d->efc_frictionloss[i]
                          : p->kind[b] == BLK_CONE ? (x ? d->contact[d->efc_id[r0]].friction[x - 1] : 1.0)
                                                   : 0.0;
        }
        for (int k = p->row_ptr[b]; k < p->row_ptr[b + 1]; ++k) {
            int c = p->col[k], nc = clc_bproblem_rows(p, c);
            double *B = p->val + p->val_off[k];
            if (c < b) continue;
            /* each entry once, mirrored: W symmetric to the bit */
            for (int x = 0; x < n; ++x)
                for (int y = c == b ? x : 0; y < nc; ++y) {
                    double v = clc_mj_dot(J, r0 + x, p->off[c] + y);
                    if (c == b && x == y && !(coulomb && d->efc_type[r0 + x] >= mjCNSTR_CONTACT_FRICTIONLESS))
                        v += d->efc_R[r0 + x];
                    B[x * nc + y] = v;
                    if (c == b) B[y * nc + x] = v;
                }
            if (c == b) continue;
            for (int t = p->row_ptr[c]; t < p->row_ptr[c + 1]; ++t)
                if (p->col[t] == b)
                    for (int x = 0; x < n; ++x)
                        for (int y = 0; y < nc; ++y) p->val[p->val_off[t] + y * n + x] = B[x * nc + y];
        }
    }
}

clcone_status clc_mujoco_bproblem(const mjModel *m, mjData *d, int coulomb, const char *label, clc_bproblem *p,
                                     clcone_error *err)
{
    int nefc = d->nefc, nb, *nrow = NULL, *off = NULL, *rp = NULL, *cl = NULL, nnzb = 0;
    clc_mj_rows J = {0};
    clcone_status s;
    memset(p, 0, sizeof *p);
    if (nefc == 0) return clc_fail(err, CLCONE_EINVAL, "%s: no constraint rows at this state", label);
    if ((s = gen_blocks(d, label, NULL, &nb, err))) return s;
    s = CLCONE_ENOMEM;
    off = clc_calloc((size_t)nb + 1, sizeof *off, err, "block offsets");
    nrow = clc_calloc((size_t)nb, sizeof *nrow, err, "block sizes");
    if (!off || !nrow) goto out;
    gen_blocks(d, label, off, &nb, err);
    for (int b = 0; b < nb; ++b) nrow[b] = off[b + 1] - off[b];
    if ((s = clc_mj_rows_build(m, d, label, &J, err))) goto out;
    for (int i = 0; i < nefc; ++i)
        if (!isfinite(d->efc_frictionloss[i])) {
            s = clc_fail(err, CLCONE_EINVAL, "%s: constraint row %d (%s) has a non-finite frictionloss", label, i,
                            clc_mj_row_kind(d->efc_type[i]));
            goto out;
        }
    if ((s = clc_mj_structure(m, &J, nb, off, nrow, &rp, &cl, &nnzb, err))) goto out;
    if ((s = clc_bproblem_alloc(p, nb, nefc, nnzb, err))) goto out;
    memcpy(p->off, off, sizeof *off * ((size_t)nb + 1));
    memcpy(p->row_ptr, rp, sizeof *rp * ((size_t)nb + 1));
    memcpy(p->col, cl, sizeof *cl * (size_t)nnzb);
    if ((s = clc_bproblem_layout(p, err))) goto out;
    gen_fill(d, &J, coulomb, p);
    if ((s = clc_bproblem_validate(p, err))) clc_mj_state_error(s, label, err);
out:
    free(off);
    free(nrow);
    free(rp);
    free(cl);
    clc_mj_rows_free(&J);
    if (s) clc_bproblem_free(p);
    return s;
}

/* Whether block b is decoupled (clc_mujoco_bproblem_decouple): no
 * Jacobian row, W its own diagonal alone, and a cone's tangential q 0. */
static int decoupled(const mjModel *m, const mjData *d, const clc_bproblem *p, int b)
{
    int n = clc_bproblem_rows(p, b), r0 = p->off[b];
    if (p->row_ptr[b + 1] - p->row_ptr[b] != 1) return 0;
    for (int x = 0; x < n; ++x) {
        if (!clc_mj_zero_row(m, d, r0 + x) || (p->kind[b] == BLK_CONE && x > 0 && p->q[r0 + x] != 0)) return 0;
        for (int y = 0; y < n; ++y)
            if (y != x && p->val[p->val_off[p->row_ptr[b]] + x * n + y] != 0) return 0;
    }
    return 1;
}

void clc_mujoco_bproblem_decouple(const mjModel *m, const mjData *d, clc_bproblem *p, double *fixed)
{
    for (int i = 0; i < p->m; ++i) fixed[i] = NAN;
    for (int b = 0; b < p->nb; ++b) {
        int n = clc_bproblem_rows(p, b), r0 = p->off[b];
        double *W = p->val + p->val_off[p->row_ptr[b]];
        if (!decoupled(m, d, p, b)) continue;
        for (int x = 0; x < n; ++x) {
            int i = r0 + x;
            double f = -p->q[i] / W[x * n + x];
            fixed[i] = p->kind[b] == BLK_FREE ? f
                       : p->kind[b] == BLK_BOX ? fmin(fmax(f, -p->bound[i]), p->bound[i])
                       : p->kind[b] == BLK_NONNEG || x == 0 ? fmax(f, 0.0)
                                                             : 0.0;
            p->q[i] = 0;
            W[x * n + x] = 1;
        }
    }
}

/* MuJoCo's dual state of block b's rows with forces f (mj_solPGS's
 * dualState): an elliptic contact CONE on the cone's surface, QUADRATIC
 * inside it, SATISFIED when its normal force is 0. */
static int gen_state(const clc_bproblem *p, int b, int x, const double *f)
{
    int i = p->off[b] + x;
    switch (p->kind[b]) {
    case BLK_FREE: return mjCNSTRSTATE_QUADRATIC;
    case BLK_BOX:
        return f[i] <= -p->bound[i] ? mjCNSTRSTATE_LINEARPOS
               : f[i] >= p->bound[i] ? mjCNSTRSTATE_LINEARNEG
                                     : mjCNSTRSTATE_QUADRATIC;
    case BLK_NONNEG: return f[i] > 0 ? mjCNSTRSTATE_QUADRATIC : mjCNSTRSTATE_SATISFIED;
    default: {
        int r0 = p->off[b];
        double t2 = 0;
        for (int y = 1; y < clc_bproblem_rows(p, b); ++y) {
            double g = f[r0 + y] / p->bound[r0 + y];
            t2 += g * g;
        }
        return !(f[r0] > 0) ? mjCNSTRSTATE_SATISFIED
               : t2 > 0 && sqrt(t2) >= f[r0] * (1 - 1e-12) ? mjCNSTRSTATE_CONE
                                                           : mjCNSTRSTATE_QUADRATIC;
    }
    }
}

void clc_mujoco_bproblem_write(const mjModel *m, mjData *d, const clc_bproblem *p, const double *f)
{
    for (int b = 0; b < p->nb; ++b)
        for (int x = 0; x < clc_bproblem_rows(p, b); ++x) {
            d->efc_force[p->off[b] + x] = f[p->off[b] + x];
            d->efc_state[p->off[b] + x] = gen_state(p, b, x, f);
        }
    clc_mj_finish(m, d);
}
