/* The reference's side of the one iteration loop (core/iterate.c): one
 * problem, contacts [c0, c1) of a batch, measured in double with the
 * model's error. */
#include "core/internal.h"
#include "ref/reference.h"

#include <math.h>

typedef struct ref_run {
    const clcone_problem *p;
    const clcone_options *o;
    int c0, c1;
    const double *r;
    ref_step_fn step;
    ref_checked_fn checked;
    void *state;
} ref_run;

static clcone_status run_step(void *ctx, int it, clcone_error *err)
{
    ref_run *R = ctx;
    return R->step(R->state, it, err);
}

static clcone_status run_measure(void *ctx, int it, const int *active, double *errors, clcone_error *err)
{
    ref_run *R = ctx;
    (void)it;
    (void)active;
    (void)err;
    errors[0] = clcone_error_of(R->p, R->o, R->r, R->c0, R->c1);
    for (int i = 3 * R->c0; i < 3 * R->c1; ++i)
        if (!isfinite(R->r[i])) errors[0] = INFINITY;
    return CLCONE_OK;
}

static clcone_status run_checked(void *ctx, int it, const int *active, const double *errors, int changed,
                                 clcone_error *err)
{
    ref_run *R = ctx;
    (void)active;
    (void)changed;
    return R->checked ? R->checked(R->state, it, errors[0], err) : CLCONE_OK;
}

clcone_status clc_ref_iterate(const clcone_problem *p, const clcone_options *o, int c0, int c1, const double *r,
                                 ref_step_fn step, ref_checked_fn checked, void *state, clcone_prob_result *out,
                                 clcone_error *err)
{
    ref_run R = {p, o, c0, c1, r, step, checked, state};
    clc_iter_ops ops = {&R, 1, 0, 0, run_step, run_measure, run_checked, NULL, NULL, NULL, NULL, 0};
    while (ops.prob0 + 1 < p->nprob && p->prob_off[ops.prob0 + 1] <= c0) ++ops.prob0;
    return clc_iterate(&ops, o, out, err);
}

int clc_ref_problem_of(const clcone_problem *p, int c0)
{
    int prob = 0;
    while (prob + 1 < p->nprob && p->prob_off[prob + 1] <= c0) ++prob;
    return prob;
}
