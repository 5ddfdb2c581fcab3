/* Newton's sparse Jacobian on the reference (ref/newton_sparse.c): J = A + B W in W's block pattern, factored by
 * KLU, and Levenberg-Marquardt's J'J + lambda I by CHOLMOD. */
#ifndef CLCONE_REF_NEWTON_SPARSE_H
#define CLCONE_REF_NEWTON_SPARSE_H

#include "core/internal.h"

#include <cholmod.h>
#include <klu.h>

typedef struct clc_jac_sparse {
    int n, m;          /* contacts, unknowns */
    int *slot_start;   /* n + 1: contact i's first block slot (its W blocks in W's order) */
    int *diag;         /* n: the slot of contact i's diagonal block */
    int *Ap, *Ai;      /* J's scalar rows (row pointers, columns): KLU reads them as J' by columns */
    double *Ax;        /* J's values */
    double *col;       /* m: J's squared column norms */
    klu_common common;
    klu_symbolic *sym;
    klu_numeric *num;
    cholmod_common cm; /* started at the first Levenberg-Marquardt step */
    int cm_started;
    cholmod_factor *lm;
    cholmod_dense *rhs;
} clc_jac_sparse;

/* J's pattern for contacts [c0, c1) of p (a problem of the batch: its W blocks within it). */
clcone_status clc_jac_sparse_make(clc_jac_sparse *J, const clcone_problem *p, int c0, int c1, clcone_error *err);
void clc_jac_sparse_free(clc_jac_sparse *J);
/* Where block slot s of contact i starts in Ax, and the stride from one of its rows to the next. */
double *clc_jac_sparse_block(const clc_jac_sparse *J, int i, int s, int *stride);
/* out = J' v. */
void clc_jac_sparse_tmul(const clc_jac_sparse *J, const double *v, double *out);
/* Factors J and solves J d = -rhs: 1, or 0 where J is singular, its pivots' ratio below tiny, d not finite or
 * KLU is out of memory (the caller falls back to Levenberg-Marquardt, which needs none). */
int clc_jac_sparse_solve(clc_jac_sparse *J, const double *rhs, double *d, double tiny);
/* Levenberg-Marquardt's (J'J + lambda I) d = -g: 1, or 0 where CHOLMOD fails (out of memory) or d is not
 * finite. */
int clc_jac_sparse_lm(clc_jac_sparse *J, const double *g, double lambda, double *d);
/* The largest diagonal entry of J'J (the squared norm of J's largest column). */
double clc_jac_sparse_normal_scale(const clc_jac_sparse *J);
/* An LU's multiply-subtract pairs on J's pattern (AMD's count, no pivoting). */
clcone_status clc_jac_sparse_flops(const clc_jac_sparse *J, double *multsubs, clcone_error *err);

#endif
