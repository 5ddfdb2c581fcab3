/* Hard rows of MuJoCo's primal problem (core/primal.h's hard: R = 0, the
 * model coulomb) by proximal rounds of MuJoCo's Newton on soft ones
 * (ref/primal_prox.c). */
#ifndef CLCONE_REF_PRIMAL_PROX_H
#define CLCONE_REF_PRIMAL_PROX_H

#include "core/primal.h"

/* The smallest proximal weight (c, a hard row's R over its scale) of a
 * round in double and in float: a float Hessian loses digits as c falls. */
#define CLC_PROX_FLOOR_DOUBLE 1e-6
#define CLC_PROX_FLOOR_FLOAT 1e-3

/* A batch of soft problems solved as clc_dev_primal_batch does (solver:
 * the backend's own state). */
typedef clcone_status (*clc_primal_batch_fn)(void *solver, int K, const clc_pproblem *const *p,
                                             const clcone_options *o, double *const *a, double *const *f,
                                             int *const *state, clcone_prob_result *res, int *failed,
                                             clcone_error *err);

/* The K validated p[k] (with hard rows or without) by rounds of inner on
 * the problems not yet within o->tol, each round's weight c shrinking to
 * floor: a[k] the start (o->warm_start) and the answer, f[k], state[k] and
 * res[k] as clc_ref_primal_newton's, iterations the Newton steps of every
 * round, error the hard problem's (clc_pproblem_hard_error). Each problem's
 * rounds depend on it alone: a batch gives each the bits it has alone. */
clcone_status clc_primal_prox_rounds(int K, const clc_pproblem *const *p, const clcone_options *o, double floor,
                                     double *const *a, double *const *f, int *const *state,
                                     clcone_prob_result *res, clc_primal_batch_fn inner, void *solver,
                                     int *failed, clcone_error *err);

/* One problem on the reference (the contract table's entry). */
clcone_status clc_ref_primal_prox(const clc_pproblem *p, const clcone_options *o, double *a, double *f,
                                     int *state, clcone_prob_result *res, clcone_error *err);

#endif
