/* Solving the general-block problem (core/blocks.h) on a backend. */
#ifndef CLCONE_SOLVE_BLOCKS_SOLVE_H
#define CLCONE_SOLVE_BLOCKS_SOLVE_H

#include "core/blocks.h"
#include "core/primal.h"

/* Validates and solves p on ctx (NULL: reference) with o; f (p->m) the start if warm_start, then the forces. */
clcone_status clc_solve_blocks(clcone_context *ctx, const clc_bproblem *p, const clcone_options *o, double *f,
                                  clcone_prob_result *res, clcone_error *err);

/* K problems, bitwise as each alone, on any threads; *failed the failing k, -1 for the batch (docs/mujoco.md). */
clcone_status clc_solve_blocks_batch(clcone_context *ctx, int K, const clc_bproblem *const *p,
                                        const clcone_options *o, int threads, double *const *f,
                                        clcone_prob_result *res, int *failed, clcone_error *err);

/* K primal problems by MuJoCo's Newton on the reference or a device; failed as above. Each p[k] is
 * already checked by clc_pproblem_validate (clc_mj_primal_build checks every island it builds). */
clcone_status clc_solve_primal_batch(clcone_context *ctx, int K, const clc_pproblem *const *p,
                                        const clcone_options *o, int threads, double *const *a, double *const *f,
                                        int *const *state, clcone_prob_result *res, int *failed, clcone_error *err);

/* What a solve of primal problems with o on ctx builds before its first batch (the device's
 * kernel), so that its time is not the first solve's; nothing on the reference. */
clcone_status clc_solve_primal_prepare(clcone_context *ctx, const clcone_options *o, clcone_error *err);

#endif
