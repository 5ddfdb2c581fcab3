/* clcone public API: local-form problems and batches. */
#ifndef CLCONE_API_PROBLEM_H
#define CLCONE_API_PROBLEM_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* W in block-CSR of ROW-MAJOR 3x3 blocks, block columns strictly increasing, every diagonal
 * block present. A batch: problem k owns contacts [prob_off[k], prob_off[k+1]) and no block
 * couples two problems; a single problem is a batch of nprob = 1. */
typedef struct clcone_problem {
    int n;            /* contacts (all problems of the batch) */
    int nnzb;         /* stored 3x3 blocks */
    int *row_ptr;     /* n + 1 */
    int *col;         /* nnzb */
    double *blocks;   /* 9 * nnzb, row-major per block */
    double *q;        /* 3n */
    double *mu;       /* n */
    int nprob;        /* problems in the batch (>= 1) */
    int *prob_off;    /* nprob + 1 contact offsets */
} clcone_problem;

/* Allocates every array for n contacts, nnzb blocks, zeroed (nprob = 1, prob_off = {0, n}). */
CLCONE_API clcone_status clcone_problem_alloc(clcone_problem *p, int n, int nnzb,
                                   clcone_error *err);
CLCONE_API void clcone_problem_free(clcone_problem *p);

/* From a dense row-major 3n x 3n W (zero off-diagonal blocks dropped); a non-finite entry
 * of W, q or mu is CLCONE_EINVAL naming it. */
CLCONE_API clcone_status clcone_problem_from_dense(clcone_problem *p, int n,
                                        const double *W_rowmajor,
                                        const double *q, const double *mu,
                                        clcone_error *err);

/* Checks sizes, sorted in-range columns, diagonal blocks, finite W/q/mu, mu >= 0, the batch
 * (no coupling), and each diagonal block PSD (smallest eigenvalue >= -1e-6 max|block|) with
 * W_nn > 0. */
CLCONE_API clcone_status clcone_problem_validate(const clcone_problem *p,
                                      clcone_error *err);

/* Concatenates k problems (each may itself be a batch) into one batch. */
CLCONE_API clcone_status clcone_batch_concat(const clcone_problem *const *parts, int k,
                                  clcone_problem *out, clcone_error *err);

/* Copies problem `index` of a batch out as a stand-alone problem. */
CLCONE_API clcone_status clcone_batch_extract(const clcone_problem *batch, int index,
                                   clcone_problem *out, clcone_error *err);

/* u = W r + q (3n). */
CLCONE_API void clcone_problem_velocity(const clcone_problem *p, const double *r,
                             double *u);

#ifdef __cplusplus
}
#endif
#endif
