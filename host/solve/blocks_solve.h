/* Solving the general-block problem (core/blocks.h) on a backend. */
#ifndef CLCONE_SOLVE_BLOCKS_SOLVE_H
#define CLCONE_SOLVE_BLOCKS_SOLVE_H

#include "core/blocks.h"

/* Validates p and solves it on ctx (NULL: the CPU reference, pgs or apgd;
 * a device: apgd) with o's solver (a solver the backend does not run for
 * this problem is CLCONE_ENOTSUP naming the ones it does; the default:
 * the backend's), tol, max_iter, check schedule and time cap. f (p->m) is
 * the start when o->warm_start, and the forces on return. */
clcone_status clcone_solve_blocks(clcone_context *ctx, const clcone_bproblem *p, const clcone_options *o, double *f,
                                  clcone_prob_result *res, clcone_error *err);

#endif
