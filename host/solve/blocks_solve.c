/* The general-block problem's dispatch (solve/blocks_solve.h): apgd on
 * either backend (the default, as for the soft model), pgs on the
 * reference; and MuJoCo's primal problem's, Newton on the reference. */
#include "solve/blocks_solve.h"
#include "core/internal.h"
#include "ref/blocks_ref.h"
#include "ref/primal_newton.h"
#include "opencl/blocks_device.h"
#include "core/parallel.h"

#include <string.h>

/* o with the backend's default solver and tolerance, or why o's solver
 * is not run on it. */
static clcone_status resolve_options(const clcone_context *ctx, const clcone_options *o, clcone_options *oo,
                                     clcone_error *err)
{
    *oo = *o;
    if (oo->solver == CLCONE_SOLVER_DEFAULT) oo->solver = CLCONE_SOLVER_APGD;
    if (oo->solver != CLCONE_SOLVER_APGD && (ctx || oo->solver != CLCONE_SOLVER_PGS))
        return clc_fail(err, CLCONE_ENOTSUP, "the general-block problem is solved by %s, not %s",
                           ctx ? "apgd on a device" : "apgd or pgs on the reference", clcone_solver_name(oo->solver));
    if (oo->tol == 0) oo->tol = !ctx || clcone_context_precision(ctx) == CLCONE_DOUBLE ? 1e-8 : 1e-5;
    return CLCONE_OK;
}

/* A failure of problem k of K: in *failed for a caller that names it
 * itself, else named here when there are several. */
static clcone_status problem_failed(clcone_status s, int K, int k, int *failed, clcone_error *err)
{
    if (failed) *failed = k;
    else if (K > 1) clc_error_prefix(err, "problem %d", k);
    return s;
}

clcone_status clc_solve_blocks(clcone_context *ctx, const clc_bproblem *p, const clcone_options *o, double *f,
                                  clcone_prob_result *res, clcone_error *err)
{
    return clc_solve_blocks_batch(ctx, 1, &p, o, 1, &f, res, NULL, err);
}

/* A batch's problems, for its items on threads: validated, or solved on
 * the reference. */
typedef struct batch_job {
    const clc_bproblem *const *p;
    const clcone_options *o;
    double *const *f;
    clcone_prob_result *res;
} batch_job;

static clcone_status validate_item(void *job, int k, clcone_error *err)
{
    return clc_bproblem_validate(((const batch_job *)job)->p[k], err);
}

static clcone_status solve_item(void *job, int k, clcone_error *err)
{
    const batch_job *j = job;
    return clc_ref_blocks(j->p[k], j->o, j->f[k], &j->res[k], err);
}

clcone_status clc_solve_blocks_batch(clcone_context *ctx, int K, const clc_bproblem *const *p,
                                        const clcone_options *o, int threads, double *const *f,
                                        clcone_prob_result *res, int *failed, clcone_error *err)
{
    clcone_options oo;
    batch_job job = {p, &oo, f, res};
    clcone_status s;
    int k;
    if (failed) *failed = -1;
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, f);
    CLCONE_REQUIRE(err, res);
    if (K < 1) return clc_fail(err, CLCONE_EINVAL, "a batch of %d general-block problems: need at least one", K);
    if (threads < 1) return clc_fail(err, CLCONE_EINVAL, "a batch solved on %d threads: need at least one", threads);
    memset(res, 0, sizeof *res * (size_t)K);
    for (k = 0; k < K; ++k) {
        CLCONE_REQUIRE(err, p[k]);
        CLCONE_REQUIRE(err, f[k]);
    }
    if ((s = clc_each_item(threads, K, validate_item, &job, &k, err))) return problem_failed(s, K, k, failed, err);
    if ((s = resolve_options(ctx, o, &oo, err))) return s;
    if (ctx) {
        if ((s = clc_dev_blocks_batch(ctx, K, p, &oo, threads, f, res, &k, err)) && k >= 0)
            return problem_failed(s, K, k, failed, err);
        return s;
    }
    if ((s = clc_each_item(threads, K, solve_item, &job, &k, err))) return problem_failed(s, K, k, failed, err);
    return CLCONE_OK;
}

/* A batch of primal problems, for its items on threads. */
typedef struct primal_job {
    const clc_pproblem *const *p;
    const clcone_options *o;
    double *const *a, *const *f;
    int *const *state;
    clcone_prob_result *res;
} primal_job;

static clcone_status primal_item(void *job, int k, clcone_error *err)
{
    const primal_job *j = job;
    clcone_status s = clc_pproblem_validate(j->p[k], err);
    return s ? s : clc_ref_primal_newton(j->p[k], j->o, j->a[k], j->f[k], j->state[k], &j->res[k], err);
}

clcone_status clc_solve_primal_batch(clcone_context *ctx, int K, const clc_pproblem *const *p,
                                        const clcone_options *o, int threads, double *const *a, double *const *f,
                                        int *const *state, clcone_prob_result *res, int *failed, clcone_error *err)
{
    clcone_options oo;
    primal_job job = {p, &oo, a, f, state, res};
    clcone_status s;
    int k;
    if (failed) *failed = -1;
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, a);
    CLCONE_REQUIRE(err, f);
    CLCONE_REQUIRE(err, state);
    CLCONE_REQUIRE(err, res);
    if (K < 1 || threads < 1)
        return clc_fail(err, CLCONE_EINVAL, "a batch of %d primal problems on %d threads: need one or more of each",
                           K, threads);
    if (ctx)
        return clc_fail(err, CLCONE_ENOTSUP, "MuJoCo's Newton method runs on the reference only (the device part "
                                                "is not built): use --device ref");
    oo = *o;
    if (oo.solver != CLCONE_SOLVER_DEFAULT && oo.solver != CLCONE_SOLVER_NEWTON)
        return clc_fail(err, CLCONE_ENOTSUP, "MuJoCo's primal problem is solved by newton, not %s",
                           clcone_solver_name(oo.solver));
    if (oo.tol == 0) oo.tol = 1e-8;
    memset(res, 0, sizeof *res * (size_t)K);
    if ((s = clc_each_item(threads, K, primal_item, &job, &k, err))) return problem_failed(s, K, k, failed, err);
    return CLCONE_OK;
}
