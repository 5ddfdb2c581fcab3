/* MuJoCo's Newton method on its primal problem (core/primal.h), on the
 * reference (ref/primal_newton.c). */
#ifndef CLCONE_REF_PRIMAL_NEWTON_H
#define CLCONE_REF_PRIMAL_NEWTON_H

#include "core/primal.h"

/* Solves p (validated) from a (nv): with o->warm_start from the one of a
 * and a0 of lower cost (MuJoCo's warm start), else from a0. Each
 * iteration a Newton step on H = M + J'DJ over the quadratic rows plus
 * the cone blocks' Hessians in their middle zone, factored whole (dense
 * Cholesky), then MuJoCo's exact line search. It stops by MuJoCo's rule:
 * the cost's decrease or the gradient's norm, times p->scale, below
 * o->tol (res->error: the smaller of the two at the last iteration; a
 * line search that finds no decrease stops with the gradient's), or at
 * o->max_iter or the time cap. a, f (m) and state (m, PRIMAL_*) are the
 * accelerations, forces and zones on return. A Hessian that is not
 * positive definite is CLCONE_EINVAL naming the dof. */
clcone_status clc_ref_primal_newton(const clc_pproblem *p, const clcone_options *o, double *a, double *f,
                                       int *state, clcone_prob_result *res, clcone_error *err);

#endif
