/* clcone public API: local-form problems and batches. */
#ifndef CLCONE_API_PROBLEM_H
#define CLCONE_API_PROBLEM_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* W in block-CSR with 3x3 blocks; each block is stored ROW-MAJOR (9
 * doubles). Block columns within a block row are strictly increasing and
 * every diagonal block is present.
 *
 * A batch is several independent problems concatenated: problem k owns
 * contacts [prob_off[k], prob_off[k+1]). No block of W may couple contacts
 * of two different problems (checked by clcone_problem_validate). A single
 * problem is a batch with nprob = 1. */
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

/* Allocates all arrays for n contacts and nnzb blocks (zeroed; nprob = 1,
 * prob_off = {0, n}). */
CLCONE_API clcone_status clcone_problem_alloc(clcone_problem *p, int n, int nnzb,
                                   clcone_error *err);
CLCONE_API void clcone_problem_free(clcone_problem *p);

/* Builds a problem from a dense 3n x 3n row-major W; all-zero off-diagonal
 * blocks are dropped. A non-finite entry of W, q or mu is CLCONE_EINVAL,
 * naming it. */
CLCONE_API clcone_status clcone_problem_from_dense(clcone_problem *p, int n,
                                        const double *W_rowmajor,
                                        const double *q, const double *mu,
                                        clcone_error *err);

/* Checks structure and values: sizes, sorted in-range block columns,
 * diagonal blocks present, finite W/q/mu, mu >= 0, batch offsets
 * consistent and no coupling across problems, and each diagonal block's
 * symmetric part positive semidefinite with a strictly positive normal
 * entry W_nn > 0 (the solvers divide by it). Semidefiniteness is accepted
 * up to -1e-6 * max|block| on the smallest eigenvalue, since real files
 * carry rounding (see docs/formats.md section 6). */
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
