/* The general-block problem's dispatch (solve/blocks_solve.h): apgd on
 * either backend (the default, as for the soft model), pgs on the
 * reference. */
#include "solve/blocks_solve.h"
#include "core/internal.h"
#include "ref/blocks_ref.h"
#include "opencl/blocks_device.h"

#include <string.h>

/* o with the backend's default solver and tolerance, or why o's solver
 * is not run on it. */
static clcone_status resolve_options(const clcone_context *ctx, const clcone_options *o, clcone_options *oo,
                                     clcone_error *err)
{
    *oo = *o;
    if (oo->solver == CLCONE_SOLVER_DEFAULT) oo->solver = CLCONE_SOLVER_APGD;
    if (oo->solver != CLCONE_SOLVER_APGD && (ctx || oo->solver != CLCONE_SOLVER_PGS))
        return clcone_fail(err, CLCONE_ENOTSUP, "the general-block problem is solved by %s, not %s",
                           ctx ? "apgd on a device" : "apgd or pgs on the reference", clcone_solver_name(oo->solver));
    if (oo->tol == 0) oo->tol = !ctx || clcone_context_precision(ctx) == CLCONE_DOUBLE ? 1e-8 : 1e-5;
    return CLCONE_OK;
}

/* A failure of problem k of K: in *failed for a caller that names it
 * itself, else named here when there are several. */
static clcone_status problem_failed(clcone_status s, int K, int k, int *failed, clcone_error *err)
{
    if (failed) *failed = k;
    else if (K > 1) clcone_error_prefix(err, "problem %d", k);
    return s;
}

clcone_status clcone_solve_blocks(clcone_context *ctx, const clcone_bproblem *p, const clcone_options *o, double *f,
                                  clcone_prob_result *res, clcone_error *err)
{
    return clcone_solve_blocks_batch(ctx, 1, &p, o, &f, res, NULL, err);
}

clcone_status clcone_solve_blocks_batch(clcone_context *ctx, int K, const clcone_bproblem *const *p,
                                        const clcone_options *o, double *const *f, clcone_prob_result *res,
                                        int *failed, clcone_error *err)
{
    clcone_options oo;
    clcone_status s;
    if (failed) *failed = -1;
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, f);
    CLCONE_REQUIRE(err, res);
    if (K < 1) return clcone_fail(err, CLCONE_EINVAL, "a batch of %d general-block problems: need at least one", K);
    memset(res, 0, sizeof *res * (size_t)K);
    for (int k = 0; k < K; ++k) {
        CLCONE_REQUIRE(err, p[k]);
        CLCONE_REQUIRE(err, f[k]);
        if ((s = clcone_bproblem_validate(p[k], err))) return problem_failed(s, K, k, failed, err);
    }
    if ((s = resolve_options(ctx, o, &oo, err))) return s;
    if (ctx) return clcone_dev_blocks_batch(ctx, K, p, &oo, f, res, err);
    for (int k = 0; k < K; ++k)
        if ((s = clcone_ref_blocks(p[k], &oo, f[k], &res[k], err))) return problem_failed(s, K, k, failed, err);
    return CLCONE_OK;
}
