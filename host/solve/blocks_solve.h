/* Solving the general-block problem (core/blocks.h) on a backend. */
#ifndef CLCONE_SOLVE_BLOCKS_SOLVE_H
#define CLCONE_SOLVE_BLOCKS_SOLVE_H

#include "core/blocks.h"
#include "core/primal.h"

/* Validates p and solves it on ctx (NULL: the CPU reference, pgs or apgd;
 * a device: apgd) with o's solver (a solver the backend does not run for
 * this problem is CLCONE_ENOTSUP naming the ones it does; the default:
 * the backend's), tol, max_iter, check schedule and time cap. f (p->m) is
 * the start when o->warm_start, and the forces on return. */
clcone_status clc_solve_blocks(clcone_context *ctx, const clc_bproblem *p, const clcone_options *o, double *f,
                                  clcone_prob_result *res, clcone_error *err);

/* K problems p[k] (K >= 1) solved as clc_solve_blocks solves each
 * alone, with f[k] and res[k] its forces and result: bitwise the same
 * iterates, iterations, status and forces (time_ms and a time cap aside:
 * on a device the clock is the batch's). On a device they are one batch,
 * each iteration one set of launches for them all; on the reference one
 * after another. The host's work a problem (validation, scaling, the
 * checks' errors; on the reference the solves) runs on `threads` threads
 * (1 or more), the results the same bits for any. When problem k fails (validation, its solve on the
 * reference), *failed is set to k for the caller to name it, or with
 * failed NULL the message starts "problem k: "; *failed is -1 when the
 * failure is the batch's. */
clcone_status clc_solve_blocks_batch(clcone_context *ctx, int K, const clc_bproblem *const *p,
                                        const clcone_options *o, int threads, double *const *f,
                                        clcone_prob_result *res, int *failed, clcone_error *err);

/* K primal problems p[k] (core/primal.h, MuJoCo's islands) solved by
 * MuJoCo's Newton method (ref/primal_newton.h) on the reference, each
 * validated, on `threads` threads, the same bits for any: a[k] (p[k]->nv)
 * the start when o->warm_start and the accelerations on return, f[k] and
 * state[k] (p[k]->m) the forces and zones, res[k] the result. o->solver
 * is newton (or the default); tol 0 is MuJoCo's default 1e-8. On a device
 * CLCONE_ENOTSUP: the device part is not built. failed as
 * clc_solve_blocks_batch's. */
clcone_status clc_solve_primal_batch(clcone_context *ctx, int K, const clc_pproblem *const *p,
                                        const clcone_options *o, int threads, double *const *a, double *const *f,
                                        int *const *state, clcone_prob_result *res, int *failed, clcone_error *err);

#endif
