/* CPU reference solvers (double, single thread, deterministic). Each one
 * solves ONE problem of a batch: contacts [c0, c1) of p, whose W blocks
 * never leave that range. r (3n, whole batch) holds the start on entry and
 * the reactions on exit; only entries of [c0, c1) are touched. They fill
 * out->status, out->iters, out->error (the model's error, see
 * clcone_error_of) and out->reason; the dispatcher (solve.c) sets the time. */
#ifndef CLCONE_REFERENCE_H
#define CLCONE_REFERENCE_H

#include "clcone.h"

clcone_status ref_nsgs_coulomb(const clcone_problem *p, const clcone_options *o,
                               int c0, int c1, double *r,
                               clcone_prob_result *out, clcone_error *err);
/* Projected Jacobi for coulomb, ccp and pyramid. */
clcone_status ref_jacobi(const clcone_problem *p, const clcone_options *o,
                         int c0, int c1, double *r, clcone_prob_result *out,
                         clcone_error *err);
/* Projected Gauss-Seidel for ccp and pyramid. */
clcone_status ref_pgs(const clcone_problem *p, const clcone_options *o,
                      int c0, int c1, double *r, clcone_prob_result *out,
                      clcone_error *err);
/* APGD on the cone QP (ccp); for coulomb the De Saxce fixed point: the
 * shift mu ||u_t|| is frozen into q for check_every iterations at a time. */
clcone_status ref_apgd(const clcone_problem *p, const clcone_options *o,
                       int c0, int c1, double *r, clcone_prob_result *out,
                       clcone_error *err);
/* Lemke's method on the N-facet pyramid LCP (Stewart-Trinkle form), dense;
 * o->max_iter caps the pivots. */
clcone_status ref_lemke_pyramid(const clcone_problem *p, const clcone_options *o,
                                int c0, int c1, double *r,
                                clcone_prob_result *out, clcone_error *err);

/* (W r)_c + q_c for contact c: the velocity of one contact. */
void ref_contact_velocity(const clcone_problem *p, const double *r, int c,
                          double u[3]);

#endif

/* Shared iteration bookkeeping of the reference solvers: decides when to
 * measure the error (every iteration below 100, then every
 * o->check_every), and stops on convergence, non-finite values or the
 * time cap. */
typedef struct ref_loop {
    const clcone_problem *p;
    const clcone_options *o;
    int c0, c1;
    int prob;        /* index in the batch, for o->history */
    double t0_ms;
} ref_loop;

void ref_loop_start(ref_loop *L, const clcone_problem *p,
                    const clcone_options *o, int c0, int c1);
/* Call after iteration `iter` (1-based). Returns 1 when the solver must
 * stop; out is then filled. */
int ref_loop_check(ref_loop *L, int iter, const double *r,
                   clcone_prob_result *out);
/* Fills out for a run that used all o->max_iter iterations. */
void ref_loop_finish(ref_loop *L, int iter, const double *r,
                     clcone_prob_result *out);

/* Eigenvalue range of the symmetric part of a 3x3 block. */
void ref_sym3_eig_range(const double B[9], double *lo, double *hi);
/* Sum over the block row of contact c of the blocks' Frobenius norms:
 * a Gershgorin bound on W's spectrum used for safe Jacobi steps. */
double ref_row_block_norm(const clcone_problem *p, int c);

/* Sum of v[0..n) with the additions of the device's reduce_rows (lane l
 * adds v[l], v[l + CONE_REDUCE_WG], ... in order, then a fixed tree), so
 * a decision taken on a sum's sign goes the same way on both sides. */
double ref_lane_sum(const double *v, int n);

/* w = W x over contacts [c0, c1), x and w indexed from contact c0 (no q). */
void ref_range_product(const clcone_problem *p, int c0, int c1,
                       const double *x, double *w);

/* Gauss-Seidel sweeps in a given contact order (NULL = natural order),
 * so that the coloured Gauss-Seidel of the device has a reference. */
clcone_status ref_nsgs_ordered(const clcone_problem *p, const clcone_options *o,
                               int c0, int c1, const int *order, double *r,
                               clcone_prob_result *out, clcone_error *err);
clcone_status ref_pgs_ordered(const clcone_problem *p, const clcone_options *o,
                              int c0, int c1, const int *order, double *r,
                              clcone_prob_result *out, clcone_error *err);
/* Gauss-Seidel steps of contacts [c0, c1): 1 / lambda_max(W_cc), malloc'ed
 * (NULL: out of memory, err set). */
double *ref_gs_steps(const clcone_problem *p, int c0, int c1, clcone_error *err);
/* One projected Gauss-Seidel sweep (ccp, pyramid) in the given order
 * (NULL = natural), omega from ref_gs_steps. */
void ref_pgs_sweep(const clcone_problem *p, const clcone_options *o, int c0, int c1, const int *order,
                   const double *omega, double *r);
/* Coloured Gauss-Seidel on the CPU: NSGS (coulomb) or PGS (ccp, pyramid)
 * sweeping colour by colour in the device's order. */
clcone_status ref_cgs(const clcone_problem *p, const clcone_options *o, int c0,
                      int c1, double *r, clcone_prob_result *out,
                      clcone_error *err);

/* Accelerated coloured Gauss-Seidel (ccp): Nesterov's extrapolation over
 * the sweeps of ref_cgs, with gradient restart (kernels/local_solve.h,
 * cone_acgs_*). */
clcone_status ref_acgs(const clcone_problem *p, const clcone_options *o, int c0,
                       int c1, double *r, clcone_prob_result *out,
                       clcone_error *err);

/* Greedy colouring of contacts [c0, c1) by the block sparsity of W (two
 * contacts conflict when W_cd or W_dc is stored): *order lists the
 * contacts colour by colour, colour k being order[color_ptr[k] ..
 * color_ptr[k+1]). Deterministic: contacts in index order, each taking
 * the smallest colour none of its neighbours has. Arrays malloc'ed. */
clcone_status ref_color_contacts(const clcone_problem *p, int c0, int c1,
                                 int *ncolors, int **color_ptr, int **order,
                                 clcone_error *err);
