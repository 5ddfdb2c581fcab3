/* The general-block problem, MuJoCo's dual and any of its kind: min 1/2 f'Wf + q'f
 * over f in S_1 x ... x S_nb, W in block-CSR of variable-size dense blocks.
 * Sets, scaling and error measure: docs/solvers.md. */
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

/* Allocates the structure, zeroed; clc_bproblem_layout the values once off, row_ptr and col are set. */
clcone_status clc_bproblem_alloc(clc_bproblem *p, int nb, int m, int nnzb, clcone_error *err);
clcone_status clc_bproblem_layout(clc_bproblem *p, clcone_error *err);
void clc_bproblem_free(clc_bproblem *p);

/* The K parts as one block-diagonal problem, each laid out as alone; q, bound, val allocated, not filled. */
clcone_status clc_bproblem_concat_layout(const clc_bproblem *const *parts, int K, clc_bproblem *out,
                                     clcone_error *err);

/* Rows of block b. */
static inline int clc_bproblem_rows(const clc_bproblem *p, int b) { return p->off[b + 1] - p->off[b]; }

/* Checks structure and values (list: docs/solvers.md), naming the block, row or stored block. */
clcone_status clc_bproblem_validate(const clc_bproblem *p, clcone_error *err);

/* y = W x (+ q when add_q). */
void clc_bproblem_mul(const clc_bproblem *p, const double *x, double *y, int add_q);

/* The scaled problem's q, bounds and W values in p's layout, and S (m): f = S g. */
void clc_bproblem_scale(const clc_bproblem *p, double *S, double *q, double *bound, double *val);

/* The scaled problem into out (allocated), and S (m): f = S g. */
clcone_status clc_bproblem_scaled(const clc_bproblem *p, clc_bproblem *out, double *S, clcone_error *err);

/* The solvers' start on the scaled problem s: g = P(f / S), f NULL: 0. */
void clc_bproblem_start(const clc_bproblem *s, const double *S, const double *f, double *g);

/* The error measure of forces f with velocities u over nb blocks of rows off (nb + 1), their kinds, bounds
 * (a cone's: 1, then its frictions) and q: the general-block form's (docs/solvers.md). */
double clc_block_sets_error(int nb, const int *off, const int *kind, const double *bound, const double *q,
                            const double *f, const double *u);

/* The error measure of f with u = W f + q (NULL: computed here). */
double clc_bproblem_error(const clc_bproblem *p, const double *f, const double *u);

/* The error measure of the scaled iterate g (f = S g), us = the scaled W g + q. */
double clc_bproblem_error_scaled(const clc_bproblem *p, const double *S, const double *g, const double *us);

/* An upper estimate of W's largest eigenvalue (Lanczos, held to Gershgorin's bound; docs/solvers.md). */
double clc_bproblem_lipschitz(const clc_bproblem *p);

/* 1/2 f'Wf + q'f. */
double clc_bproblem_cost(const clc_bproblem *p, const double *f);

#endif
