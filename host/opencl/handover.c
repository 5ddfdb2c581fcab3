/* The device hybrid's hand-over to the host: a problem beyond the dense
 * Newton (past its contact limit, or without room for its matrices) goes
 * from the device's sweeps to the host's sparse second phase at the
 * switch's first verdict (newton_hybrid_switch), as the reference's
 * hybrid does past its limit: ccp and soft to the interior point
 * (ref/ipm.c), coulomb to its fixed point over it (ref/fixed_point.c).
 * Where the second phase stalls above tol the sweeps go on from its
 * better iterate. The whole-problem kernel stops such a problem itself
 * (opencl/newton.c); a batch beyond those kernels (a problem past 4,096
 * contacts on a GPU, 16,384 on a CPU, or a solve keeping its history)
 * runs the sweeps' multi-launch loop, watched here at each check. */
#include "core/internal.h"
#include "core/newton_limits.h"
#include "opencl/dev_batch.h"
#include "ref/reference.h"
#include "cone.h"
#include "local_solve.h"
#include "newton_math.h"

#include <math.h>
#include <stdlib.h>

clcone_status clc_handover_prices(const clc_dev_batch *d, const cl_ulong *off, double *price, clcone_error *err)
{
    for (int p = 0; p < d->nprob; ++p) {
        int c0 = d->h.prob_off[p], c1 = d->h.prob_off[p + 1];
        clcone_status s;
        price[p] = 0;
        if (off ? off[p + 1] > off[p] : c1 - c0 <= CLCONE_NEWTON_REF_MAX_CONTACTS) continue;
        s = clc_ref_past_dense_price(d->p, d->model, c0, c1, &price[p], err);
        if (s == CLCONE_ENOTSUP) price[p] = 0;
        else if (s) return s;
    }
    return CLCONE_OK;
}

int clc_handover_run(clc_dev_batch *d, int p, double *r, clcone_status *s, clcone_error *err)
{
    clcone_prob_result *out = &d->res->items[p];
    int sweeps = out->inner_iters;
    *s = clc_ref_past_dense_from(d->p, d->o, d->h.prob_off[p], d->h.prob_off[p + 1], r, out->iters, d->t0, out, err);
    out->inner_iters = sweeps;
    return !*s && out->status == CLCONE_FAILED && out->iters < d->o->max_iter
           && !clc_time_is_up(d->o, clc_now_ms() - d->t0);
}

/* The switch's marks per problem and which problems it stopped. */
typedef struct loop_switch {
    const double *price;
    double tol, *mark_e;
    int *mark_it, *handed;
} loop_switch;

static int loop_switch_says(void *state, int k, int it, double e)
{
    loop_switch *S = state;
    if (!(S->price[k] > 0) || !newton_hybrid_switch(it, e, S->tol, S->price[k], 0, &S->mark_it[k], &S->mark_e[k]))
        return 0;
    S->handed[k] = 1;
    return 1;
}

/* Problem p's sweeps again, alone, from r and the iteration its second
 * phase stopped at, to the caps (no second hand-over). */
static clcone_status loop_resume(clc_dev_batch *d, clc_dev_fn *sweeps, int p, int *skip, double *r, clcone_error *err)
{
    clcone_prob_result *out = &d->res->items[p];
    int before = out->inner_iters, it0 = out->iters;
    clc_dev_watch resume = {NULL, NULL, skip, it0, d->t0};
    clcone_status s;
    for (int k = 0; k < d->nprob; ++k) skip[k] = k != p;
    d->watch = &resume;
    s = sweeps(d, r, err);
    d->watch = NULL;
    out->inner_iters = before + out->iters - it0;
    return s;
}

clcone_status clc_handover_loop(clc_dev_batch *d, clc_dev_fn *sweeps, double *r, clcone_error *err)
{
    int np = d->nprob, any = 0;
    double *price = clc_calloc((size_t)np, sizeof *price, err, "second phase prices");
    double *mark_e = clc_calloc((size_t)np, sizeof *mark_e, err, "switch marks");
    int *mark_it = clc_calloc((size_t)np, sizeof *mark_it, err, "switch marks");
    int *handed = clc_calloc((size_t)np, sizeof *handed, err, "handed-over problems");
    int *skip = clc_calloc((size_t)np, sizeof *skip, err, "resumed problems");
    clcone_status s = CLCONE_ENOMEM;
    if (!price || !mark_e || !mark_it || !handed || !skip || (s = clc_handover_prices(d, NULL, price, err)))
        goto out;
    for (int p = 0; p < np; ++p) {
        mark_e[p] = INFINITY;
        any |= price[p] > 0;
    }
    if (!any) {
        s = sweeps(d, r, err);
        goto out;
    }
    {
        loop_switch S = {price, d->o->tol, mark_e, mark_it, handed};
        clc_dev_watch watch = {loop_switch_says, &S, NULL, 0, 0};
        d->watch = &watch;
        s = sweeps(d, r, err);
        d->watch = NULL;
    }
    for (int p = 0; !s && p < np; ++p) {
        d->res->items[p].inner_iters = d->res->items[p].iters;
        if (handed[p] && clc_handover_run(d, p, r, &s, err)) s = loop_resume(d, sweeps, p, skip, r, err);
    }
out:
    free(price);
    free(mark_e);
    free(mark_it);
    free(handed);
    free(skip);
    return s;
}
