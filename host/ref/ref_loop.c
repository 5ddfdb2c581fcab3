/* Bookkeeping shared by the CPU reference solvers. */
#include "core/internal.h"
#include "ref/reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void ref_loop_start(ref_loop *L, const clcone_problem *p,
                    const clcone_options *o, int c0, int c1)
{
    L->p = p;
    L->o = o;
    L->c0 = c0;
    L->c1 = c1;
    L->prob = 0;
    while (L->prob + 1 < p->nprob && p->prob_off[L->prob + 1] <= c0) ++L->prob;
    L->t0_ms = clcone_now_ms();
}



static double ref_measure(ref_loop *L, int iter, const double *r)
{
    double e = clcone_error_of(L->p, L->o, r, L->c0, L->c1);
    clcone_history_add(L->o->history, L->prob, iter, clcone_now_ms() - L->t0_ms, e);
    if (L->o->progress) L->o->progress(L->o->progress_user, L->prob, iter, e);
    return e;
}

static int all_finite(const double *r, int c0, int c1)
{
    for (int i = 3 * c0; i < 3 * c1; ++i)
        if (!isfinite(r[i])) return 0;
    return 1;
}

int ref_loop_check(ref_loop *L, int iter, const double *r, clcone_prob_result *out)
{
    if (!clcone_is_check_iteration(L->o, iter)) {
        if (iter % 64 != 0 || !clcone_time_is_up(L->o, clcone_now_ms() - L->t0_ms)) return 0;
        out->iters = iter;
        out->error = ref_measure(L, iter, r);
        clcone_stop(out, CLCONE_STOP_TIME, L->o, iter);
        return 1;
    }
    if (!all_finite(r, L->c0, L->c1)) {
        out->iters = iter;
        out->error = INFINITY;
        clcone_stop(out, CLCONE_STOP_NONFINITE_R, L->o, iter);
        return 1;
    }
    return clcone_stop_rule(L->o, iter, ref_measure(L, iter, r), clcone_now_ms() - L->t0_ms, out);
}

void ref_loop_finish(ref_loop *L, int iter, const double *r, clcone_prob_result *out)
{
    if (!ref_loop_check(L, iter, r, out)) clcone_stop(out, CLCONE_STOP_ITERS, L->o, iter);
}
