/* The Cholesky factor of MuJoCo's Newton Hessian, sparse with its pattern
 * found once a solve, or dense for a small island (docs/mujoco.md). */
#ifndef CLCONE_REF_PRIMAL_CHOL_H
#define CLCONE_REF_PRIMAL_CHOL_H

#include "core/primal.h"

typedef struct pchol {
    int nv;
    int *pd;    /* nv: a dof's position in the eliminated order */
    int *orig;  /* nv: the dof at a position */
    int *mp;    /* nv + 1: M's nonzeros on and below the diagonal by positions: column j's rows at mi [mp[j], mp[j+1]) */
    int *mi;
    int *lp;    /* nv + 1: L's column j at li, lx [lp[j], lp[j+1]): the diagonal, then rows ascending */
    int *li;    /* rows (positions) */
    double *lx; /* values */
    int *rp;    /* nv + 1: row j of L left of the diagonal at re, rk [rp[j], rp[j+1]) */
    int *re;    /* each entry's index in li, lx */
    int *rk;    /* and its column */
    double *w;  /* nv: a column's scatter, zero between columns */
    double *dinv; /* nv: 1 / L's diagonal, kept by the factor and the updates (the solve multiplies: a
                   * division in each substitution's step waited on the one before) */
    double cost; /* a factor's multiply-adds, about */
    int dense;   /* the whole triangle in the dofs' order: no pattern, mp, mi or rows */
} pchol;

/* Islands of at most this many dofs are factored dense: below it the
 * pattern's analysis and the scattered assembly cost more than the flops
 * a dense factor adds (bench section 5's humanoid states, docs/mujoco.md). */
#define PCHOL_DENSE_MAX 48

/* Whether p's Hessian is best factored dense. */
int clc_pchol_dense_pays(const clc_pproblem *p);

/* The pattern of L for p's H = M + J'DJ + each cone's J'HcJ, whatever
 * every block's zone; dense: the whole triangle, positions the dofs.
 * Sparse: positions of p's trees in minimum-degree order,
 * each tree's dofs last first (MuJoCo numbers a tree's dofs parents
 * first, so its leaves go first and M's tree pattern fills nothing).
 * same[r]: rows r - 1 and r reach the same dofs (clc_pproblem_same_dofs;
 * same[0] 0), read by the sparse pattern only. */
clcone_status clc_pchol_init(pchol *c, const clc_pproblem *p, int dense, const int *same, clcone_error *err);
void clc_pchol_free(pchol *c);

/* Adds H's column at position j, rows at positions >= j, into w (by
 * position); every entry it adds lies in the pattern clc_pchol_init saw. */
typedef void (*clc_pchol_column)(void *arg, int j, double *w);

/* A dense factor's column j, H's or L's, indexed by row: rows j..nv-1. */
static inline double *clc_pchol_dense_col(const pchol *c, int j) { return c->lx + c->lp[j] - j; }

/* Factors H, its columns from col; or, col NULL, a dense factor in place
 * from H's lower triangle written through clc_pchol_dense_col (no copy
 * of each column). CLCONE_EINVAL naming the dof of a pivot that is not
 * positive. */
clcone_status clc_pchol_factor(pchol *c, clc_pchol_column col, void *arg, clcone_error *err);

/* The factor of H + sigma (scale v)(scale v)' in place (sigma +1 or -1),
 * v's n entries at positions vi (ascending, in the pattern) with values
 * vx. 0 when H - v v' is not positive definite to rounding: the factor is
 * then spoilt, to be factored afresh. */
int clc_pchol_update(pchol *c, int sigma, const int *vi, const double *vx, int n, double scale);

/* About the multiply-adds of an update whose least position is j. */
double clc_pchol_path_cost(const pchol *c, int j);

/* a'b over four running sums (one sum waits on each add's latency). */
static inline double clc_pchol_dot(const double *a, const double *b, int n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int j = 0;
    for (; j + 3 < n; j += 4) {
        s0 += a[j] * b[j];
        s1 += a[j + 1] * b[j + 1];
        s2 += a[j + 2] * b[j + 2];
        s3 += a[j + 3] * b[j + 3];
    }
    for (; j < n; ++j) s0 += a[j] * b[j];
    return (s0 + s1) + (s2 + s3);
}

/* sum a[e] x[idx[e]] over two running sums, as clc_pchol_dot. */
static inline double clc_pchol_dot_at(const double *a, const int *idx, const double *x, int n)
{
    double s0 = 0, s1 = 0;
    int e = 0;
    for (; e + 1 < n; e += 2) {
        s0 += a[e] * x[idx[e]];
        s1 += a[e + 1] * x[idx[e + 1]];
    }
    if (e < n) s0 += a[e] * x[idx[e]];
    return s0 + s1;
}

/* x = H^-1 b (x and b may not alias; nv each, the problem's order). */
void clc_pchol_solve(const pchol *c, const double *b, double *x, double *tmp);

#endif
