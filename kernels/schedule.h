/* What the host and the kernels must agree on, compiled by both (after
 * cone.h): the check schedule, the error formula and the work-group sizes
 * of the kernels that reduce or iterate per problem. The host asserts the
 * sizes it launches with against these, so nothing is tied by a comment. */
#ifndef CLCONE_SCHEDULE_H
#define CLCONE_SCHEDULE_H

#ifndef CLCONE_OPENCL
#include "cone.h"
#endif

/* Lanes of reduce_rows and the whole-problem kernels: fixed stripes and tree, so sums never depend on scheduling. */
#define CONE_REDUCE_WG 64

/* Per-problem states of the whole-problem kernels, read by the host between launches. */
#define CONE_GROUP_RUNNING 0
#define CONE_GROUP_CONVERGED 1
#define CONE_GROUP_MAXITER 2
#define CONE_GROUP_DIVERGED 3
/* newton_local's hybrid gave the problem to the host's interior point (host/opencl/newton.c) */
#define CONE_GROUP_HANDOVER 4

/* Per-contact terms summed by the APGD backtracking test (apgd.cl). */
#define CONE_APGD_TERMS 3

/* Whether 1-based iteration it measures the error; shared by every path so all stop alike. */
#define CONE_DENSE_CHECKS 100
CONE_FN int cone_is_check(int it, int every, int max_iter)
{
    if (every < 1) every = 1;
    return it < CONE_DENSE_CHECKS || it % every == 0 || it >= max_iter;
}

/* ACGS's function restart: whether the objective rose since the last check, its rise (cone_acgs_rise_term
 * summed) beyond 64 epsilons of the terms' magnitude mag, their rounding (docs/solvers.md); iteration 1, every
 * solve's first check, has no last check. */
CONE_FN int cone_acgs_climbed(int it, real_t rise, real_t mag)
{
    return it > 1 && rise > 64 * CONE_SCALE_EPS * mag;
}

/* Siconos's ||F|| / max(||q||, ||r||, ||u||) from sums of squares; absolute when every scale is below eps.
 * A sum of squares that overflowed measures nothing: F / inf would be 0, a
 * wrong answer called converged, so it is NaN (diverged) instead. */
CONE_FN real_t cone_scaled_error(real_t f2, real_t q2, real_t r2, real_t u2)
{
    real_t scale2 = q2 > r2 ? q2 : r2, eabs = CONE_SQRT(f2), scale;
    if (u2 > scale2) scale2 = u2;
    if (isinf(scale2) || isinf(f2)) return (real_t)NAN;
    scale = CONE_SQRT(scale2);
    return scale > CONE_SCALE_EPS ? eabs / scale : eabs;
}

#endif
