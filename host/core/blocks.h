/* The general-block problem: MuJoCo's dual and any problem of its kind.
 *
 *   min 1/2 f'Wf + q'f   over f in S_1 x ... x S_nb
 *
 * Block b is rows off[b] .. off[b+1]-1 (1 to BLK_MAX_ROWS rows) and its
 * set S_b is of kind[b] (kernels/block_sets.h): free; a box |f_i| <= bound_i;
 * f_i >= 0; or an elliptic cone { f : sum_i (f_i / bound_i)^2 <= f_0^2,
 * f_0 >= 0 }, i >= 1, whose tangential rows carry their own friction
 * coefficient in bound (the normal row's bound is 1). W is symmetric
 * positive semidefinite in block-CSR of dense row-major blocks of
 * variable size: stored block k, at (b, col[k]), is n_b x n_col[k] reals
 * from val + val_off[k]. Beside clcone_problem (3-row blocks, one mu per
 * contact), which it leaves as it is.
 *
 * The solvers see the scaled problem g = f / S (clc_bproblem_scaled):
 * S_i = s_b m_i, m_i the row's friction coefficient in a cone's
 * tangential rows (1 elsewhere), which turns the elliptic cone into the
 * standard second-order cone, and s_b = 1 / sqrt(max_i m_i^2 W_ii) over
 * the block, one factor a block so that its set keeps its shape, which
 * brings every block's diagonal to at most 1 (the rows of MuJoCo's
 * problems differ in scale by orders of magnitude).
 *
 * The error measure (clc_bproblem_error) is docs/formats.md section 2's
 * natural map and scaling on the problem with m alone (the standard cone;
 * s_b left out so that the measure does not depend on the solver's
 * preconditioning): g_i = f_i / m_i, u_i = m_i (W f + q)_i. */
#ifndef CLCONE_CORE_BLOCKS_H
#define CLCONE_CORE_BLOCKS_H

#include <clcone/clcone.h>

typedef struct clc_bproblem {
    int nb;       /* blocks */
    int m;        /* rows */
    int nnzb;     /* stored blocks of W */
    int *off;     /* nb + 1 row offsets */
    int *kind;    /* nb, BLK_* */
    double *bound; /* m: box bounds, a cone's friction coefficients */
    double *q;    /* m */
    int *row_ptr; /* nb + 1 */
    int *col;     /* nnzb, increasing in a block row, the diagonal present */
    int *val_off; /* nnzb + 1 */
    double *val;  /* val_off[nnzb] */
} clc_bproblem;

/* Allocates off, kind, bound, q, row_ptr (nb blocks, m rows) and col
 * (nnzb), zeroed; clc_bproblem_layout allocates the values once off,
 * row_ptr and col are filled. */
clcone_status clc_bproblem_alloc(clc_bproblem *p, int nb, int m, int nnzb, clcone_error *err);
clcone_status clc_bproblem_layout(clc_bproblem *p, clcone_error *err);
void clc_bproblem_free(clc_bproblem *p);

/* The structure of the K problems parts[k] as one (allocated into out),
 * block-diagonal: part k's blocks and rows after those of parts 0..k-1,
 * each block's stored W blocks and order as in its part, so that a
 * block's W x is summed in the same order as in its part alone. Its q,
 * bound and val are allocated, not filled: part k's rows start at the
 * rows of parts 0..k-1, its values at out->val_off of their stored
 * blocks, each laid out as in the part (clc_bproblem_layout), so that
 * they can be written there in place (clc_bproblem_scale). */
clcone_status clc_bproblem_concat_layout(const clc_bproblem *const *parts, int K, clc_bproblem *out,
                                     clcone_error *err);

/* Rows of block b. */
static inline int clc_bproblem_rows(const clc_bproblem *p, int b) { return p->off[b + 1] - p->off[b]; }

/* Checks structure and values, naming the block, row or stored block:
 * sizes 1..BLK_MAX_ROWS (a cone 2..), kinds, sorted in-range columns,
 * diagonal blocks present, finite W, q and bounds, box bounds >= 0, cone
 * friction > 0, W_ii a normal double > 0, the scaled problem's factors
 * and values finite in double (clc_bproblem_scale), W symmetric up to
 * 1e-9 relative and positive semidefinite as far as its diagonal blocks
 * and 2 x 2 principal minors tell (each diagonal block within 1e-9 of
 * its largest diagonal, W_ij^2 <= W_ii W_jj up to 1e-9 relative). */
clcone_status clc_bproblem_validate(const clc_bproblem *p, clcone_error *err);

/* y = W x (+ q when add_q). */
void clc_bproblem_mul(const clc_bproblem *p, const double *x, double *y, int add_q);

/* The scaled problem's q, bounds and W values (in p's layout) and S (m)
 * as the header says: f = S g. */
void clc_bproblem_scale(const clc_bproblem *p, double *S, double *q, double *bound, double *val);

/* The scaled problem out (allocated) and S (m) as the header says: f = S g. */
clcone_status clc_bproblem_scaled(const clc_bproblem *p, clc_bproblem *out, double *S, clcone_error *err);

/* The solvers' start on the scaled problem s: g = P(f / S), f NULL: 0. */
void clc_bproblem_start(const clc_bproblem *s, const double *S, const double *f, double *g);

/* The error measure of f with u = W f + q (NULL: computed here). */
double clc_bproblem_error(const clc_bproblem *p, const double *f, const double *u);

/* The error measure of the scaled problem's iterate g (f = S g) with us
 * = W' g + q' of the scaled problem. */
double clc_bproblem_error_scaled(const clc_bproblem *p, const double *S, const double *g, const double *us);

/* An upper estimate of W's largest eigenvalue: the largest Ritz value of
 * Lanczos from a fixed pseudo-random start, once five more steps raise it
 * by less than 0.1% (at most 60 products with W), raised by 5%, held to
 * Gershgorin's bound (max row sum of |W|). */
double clc_bproblem_lipschitz(const clc_bproblem *p);

/* 1/2 f'Wf + q'f. */
double clc_bproblem_cost(const clc_bproblem *p, const double *f);

#endif
