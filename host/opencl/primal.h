/* MuJoCo's Newton method on its primal problem on a device. */
#ifndef CLCONE_OPENCL_PRIMAL_H
#define CLCONE_OPENCL_PRIMAL_H

#include "core/primal.h"

/* The most dofs of a problem the device takes: its Hessian is dense,
 * nv x nv reals of global scratch, factored a column a step with two
 * barriers each (docs/mujoco.md). */
#define CLC_PRIMAL_DEV_MAX_DOFS 1024

/* MuJoCo's Newton on c for the K validated p[k] in one launch, a
 * work-group each (kernels/primal.cl): a[k], f[k], state[k] and res[k]
 * as clc_ref_primal_newton gives them; a problem over the dof limit is
 * CLCONE_ENOTSUP, one whose Hessian is not positive definite
 * CLCONE_EINVAL, either naming it in *failed (else -1). */
/* primal.cl built and its kernel made in c's kept state, so that the
 * first batch's solve does not pay for compiling (clcone's rule:
 * compilation is never solve time); a batch makes it when not. */
clcone_status clc_dev_primal_prepare(clcone_context *c, clcone_error *err);

clcone_status clc_dev_primal_batch(clcone_context *c, int K, const clc_pproblem *const *p,
                                      const clcone_options *o, int threads, double *const *a, double *const *f,
                                      int *const *state, clcone_prob_result *res, int *failed, clcone_error *err);

/* The model coulomb's hard rows by proximal rounds of clc_dev_primal_batch
 * (ref/primal_prox.h), a launch a round for the problems still above tol. */
clcone_status clc_dev_primal_prox_batch(clcone_context *c, int K, const clc_pproblem *const *p,
                                           const clcone_options *o, int threads, double *const *a,
                                           double *const *f, int *const *state, clcone_prob_result *res,
                                           int *failed, clcone_error *err);

#endif
