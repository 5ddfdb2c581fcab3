/* Properties of W that both backends use: eigenvalue bounds for step
 * sizes and safeguards (core/analysis.c) and the contact colouring of
 * Gauss-Seidel (core/coloring.c). */
#ifndef CLCONE_ANALYSIS_H
#define CLCONE_ANALYSIS_H

#include <clcone/clcone.h>
#include "cone.h"

/* Eigenvalue range of the symmetric part of a 3x3 block. */
void clc_sym3_eig_range(const double B[9], double *lo, double *hi);
/* The stored block index of contact c's diagonal block of W, -1 where W
 * stores none (clcone_problem_validate refuses that; callers check). */
int clc_diag_slot(const clcone_problem *p, int c);
/* Sum of contact c's block row's Frobenius norms: a Gershgorin bound for safe Jacobi steps. */
double clc_row_block_norm(const clcone_problem *p, int c);

/* Greedy colouring in index order; neighbours sets mark[color[d]] = i for earlier neighbours d. */
typedef void (*clc_neighbours_fn)(const void *ctx, int i, const int *color, int *mark);
clcone_status clc_color_greedy(int m, clc_neighbours_fn neighbours, const void *ctx, int *ncolors,
                                  int **color_ptr, int **order, clcone_error *err);

/* Greedy colouring of contacts [c0, c1) by W's stored blocks; order colour by colour, malloc'ed. */
clcone_status clc_color_contacts(const clcone_problem *p, int c0, int c1,
                                    int *ncolors, int **color_ptr, int **order,
                                    clcone_error *err);

/* Sum of v[0..n) in reduce_rows's order, so decisions on a sum's sign agree with the device. */
double clc_lane_sum(const double *v, int n);

/* acc += B x for one 3x3 block of W: kernels/cone.h's block product. */
static inline void clc_block_add(const double B[9], const double x[3], double acc[3])
{
    cone_block_add(B, x[0], x[1], x[2], acc);
}

/* u = (W r + q)_c: the velocity of contact c. */
void clc_contact_velocity(const clcone_problem *p, const double *r, int c, double u[3]);

/* w = W x over contacts [c0, c1), x and w indexed from contact c0 (no q). */
void clc_range_product(const clcone_problem *p, int c0, int c1,
                          const double *x, double *w);

#endif
