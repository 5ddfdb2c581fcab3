/* MuJoCo's Newton method on its primal problem (core/primal.h), on the
 * reference (ref/primal_newton.c). */
#ifndef CLCONE_REF_PRIMAL_NEWTON_H
#define CLCONE_REF_PRIMAL_NEWTON_H

#include "core/primal.h"

/* MuJoCo's Newton on validated p from a (nv); a, f, state out; a non-PD Hessian is CLCONE_EINVAL (docs/mujoco.md). */
clcone_status clc_ref_primal_newton(const clc_pproblem *p, const clcone_options *o, double *a, double *f,
                                       int *state, clcone_prob_result *res, clcone_error *err);

#endif
