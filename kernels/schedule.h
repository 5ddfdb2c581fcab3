/* What the host and the kernels must agree on, compiled by both (after
 * cone.h): the check schedule, the error formula and the work-group sizes
 * of the kernels that reduce or iterate per problem. The host asserts the
 * sizes it launches with against these, so nothing is tied by a comment. */
#ifndef CLCONE_SCHEDULE_H
#define CLCONE_SCHEDULE_H

#ifndef CLCONE_OPENCL
#include "cone.h"
#endif

/* Lanes of reduce_rows and of the whole-problem kernels: a lane sums a
 * fixed strided subset of the contacts, then a fixed tree combines the
 * lanes, so sums do not depend on scheduling. Both use the same width, so
 * a problem solved inside one work-group measures its error with exactly
 * the additions of the multi-launch path. */
#define CONE_REDUCE_WG 64

/* Per-problem states of the whole-problem kernels (group_solve.cl),
 * read by the host between launches. */
#define CONE_GROUP_RUNNING 0
#define CONE_GROUP_CONVERGED 1
#define CONE_GROUP_MAXITER 2
#define CONE_GROUP_DIVERGED 3

/* Per-contact terms summed by the APGD backtracking test (apgd.cl). */
#define CONE_APGD_TERMS 3

/* Whether iteration `it` (1-based) measures the error: each of the first
 * CONE_DENSE_CHECKS - 1, then every `every`-th, and the last. The
 * reference, the multi-launch device loop and the whole-problem kernels
 * share it, so all stop at the same iteration. */
#define CONE_DENSE_CHECKS 100
CONE_FN int cone_is_check(int it, int every, int max_iter)
{
    if (every < 1) every = 1;
    return it < CONE_DENSE_CHECKS || it % every == 0 || it >= max_iter;
}

/* ACGS's function restart (O'Donoghue and Candes), at a check of
 * objective f = 1/2 x.Wx + q.x after iteration it: whether to restart the
 * momentum (theta = 1, y = P(x)) because f rose above the last check's,
 * *last, which it then replaces. Iteration 1 is every solve's first check,
 * so it has nothing to compare with. A rise within 64 epsilons of f is
 * taken as rounding, so that sums added in another order (the reference
 * against the device) decide alike. The gradient test alone let the
 * momentum climb for good on MuJoCo's 512 cubes (error 0.18 after 5,000
 * sweeps; with this test 1e-4 in 1,580); on the Siconos files and the
 * sphere piles it never fires, and the sweeps are those of the gradient
 * test alone (an error-based test instead cost Capsules-i101-404 7x more
 * sweeps to 1e-6). */
CONE_FN int cone_acgs_climbed(int it, real_t f, CONE_PRIV real_t *last)
{
    real_t l = *last;
    *last = f;
    return it > 1 && f - l > 64 * CONE_SCALE_EPS * CONE_FABS(l);
}

/* Siconos's relative error from the sums of squares of the natural map,
 * q, r and u (docs/formats.md section 2): ||F|| / max(||q||, ||r||, ||u||),
 * the absolute ||F|| when every scale is below the precision's epsilon. */
CONE_FN real_t cone_scaled_error(real_t f2, real_t q2, real_t r2, real_t u2)
{
    real_t scale2 = q2 > r2 ? q2 : r2, eabs = CONE_SQRT(f2), scale;
    if (u2 > scale2) scale2 = u2;
    scale = CONE_SQRT(scale2);
    return scale > CONE_SCALE_EPS ? eabs / scale : eabs;
}

#endif
