/* The dispatch of MuJoCo's two other forms (solve/blocks_solve.h), each
 * through its rows of the solver table (solve/contract.c): the
 * general-block problem's and the primal problem's. */
#include "solve/blocks_solve.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "solve/solve_entries.h"
#include "opencl/primal.h"

#include <stdlib.h>
#include <string.h>

/* o with the form's default solver and tolerance on ctx's backend from
 * the solver table, and the row that runs it there, or why none does. */
static clcone_status resolve_options(clcone_form form, const clcone_context *ctx, const clcone_options *o,
                                     clcone_options *oo, const clc_contract_row **row, clcone_error *err)
{
    *oo = *o;
    clc_contract_resolve(CLCONE_FORM_BIT(form), oo, ctx);
    return clc_contract_validate(CLCONE_FORM_BIT(form), oo, ctx, row, err);
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
    const clc_contract_row *row;
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
    return j->row->run.blocks.ref(j->p[k], j->o, j->f[k], &j->res[k], err);
}

clcone_status clc_solve_blocks_batch(clcone_context *ctx, int K, const clc_bproblem *const *p,
                                        const clcone_options *o, int threads, double *const *f,
                                        clcone_prob_result *res, int *failed, clcone_error *err)
{
    clcone_options oo;
    batch_job job = {p, &oo, NULL, f, res};
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
    if ((s = resolve_options(CLCONE_FORM_BLOCKS, ctx, o, &oo, &job.row, err))) return s;
    if (ctx) {
        if ((s = job.row->run.blocks.dev(ctx, K, p, &oo, threads, f, res, &k, err)) && k >= 0)
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
    const clc_contract_row *row;
    double *const *a, *const *f;
    int *const *state;
    clcone_prob_result *res;
} primal_job;

static clcone_status primal_item(void *job, int k, clcone_error *err)
{
    const primal_job *j = job;
    return j->row->run.primal.ref(j->p[k], j->o, j->a[k], j->f[k], j->state[k], &j->res[k], err);
}

/* Writable arrays for a part of a primal batch, and the part's indices in it. */
typedef struct primal_part {
    const clc_pproblem **p;
    double **a, **f;
    int **state, *idx;
} primal_part;

/* The problems of job past the device's dof limit (host) or within it
 * into part; how many. */
static int primal_gather(const primal_job *job, int K, int host, primal_part *part)
{
    int n = 0;
    for (int i = 0; i < K; ++i)
        if ((job->p[i]->nv > CLC_PRIMAL_DEV_MAX_DOFS) == host) {
            part->p[n] = job->p[i];
            part->a[n] = job->a[i];
            part->f[n] = job->f[i];
            part->state[n] = job->state[i];
            part->idx[n++] = i;
        }
    return n;
}

/* A device's batch: the problems within its dof limit in one launch,
 * the others (a Hessian past the device's dense scratch) on the
 * reference on the batch's threads, as the local form's hybrid hands its
 * largest problems to the host; each problem gets the answer it gets
 * alone either way. */
static clcone_status primal_on_device(clcone_context *ctx, int K, const primal_job *job, int threads, int *failed,
                                      clcone_error *err)
{
    size_t n = (size_t)K;
    primal_part part = {malloc(sizeof *part.p * n), malloc(sizeof *part.a * n), malloc(sizeof *part.f * n),
                        malloc(sizeof *part.state * n), malloc(sizeof *part.idx * n)};
    primal_job sub = {part.p, job->o, job->row, part.a, part.f, part.state, calloc(n, sizeof(clcone_prob_result))};
    clcone_status s = CLCONE_OK;
    int k = -1, m;
    if (!part.p || !part.a || !part.f || !part.state || !part.idx || !sub.res)
        s = clc_fail(err, CLCONE_ENOMEM, "out of memory for a batch of %d primal problems", K);
    for (int host = 0; host < 2 && !s; ++host) {
        if (!(m = primal_gather(job, K, host, &part))) continue;
        s = host ? clc_each_item(threads, m, primal_item, &sub, &k, err)
                 : job->row->run.primal.dev(ctx, m, sub.p, job->o, threads, sub.a, sub.f, sub.state, sub.res, &k,
                                            err);
        if (s) k = k >= 0 ? part.idx[k] : -1;
        for (int i = 0; i < m && !s; ++i) job->res[part.idx[i]] = sub.res[i];
    }
    if (s && k >= 0) s = problem_failed(s, K, k, failed, err);
    free(part.p);
    free(part.a);
    free(part.f);
    free(part.state);
    free(part.idx);
    free(sub.res);
    return s;
}

clcone_status clc_solve_primal_batch(clcone_context *ctx, int K, const clc_pproblem *const *p,
                                        const clcone_options *o, int threads, double *const *a, double *const *f,
                                        int *const *state, clcone_prob_result *res, int *failed, clcone_error *err)
{
    clcone_options oo;
    primal_job job = {p, &oo, NULL, a, f, state, res};
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
    if ((s = resolve_options(CLCONE_FORM_PRIMAL, ctx, o, &oo, &job.row, err))) return s;
    memset(res, 0, sizeof *res * (size_t)K);
    if (ctx) return primal_on_device(ctx, K, &job, threads, failed, err);
    if ((s = clc_each_item(threads, K, primal_item, &job, &k, err))) return problem_failed(s, K, k, failed, err);
    return CLCONE_OK;
}

clcone_status clc_solve_primal_prepare(clcone_context *ctx, const clcone_options *o, clcone_error *err)
{
    clcone_options oo;
    const clc_contract_row *row;
    clcone_status s;
    CLCONE_REQUIRE(err, o);
    if (!ctx) return CLCONE_OK;
    if ((s = resolve_options(CLCONE_FORM_PRIMAL, ctx, o, &oo, &row, err))) return s;
    return clc_dev_primal_prepare(ctx, err);
}
