/* The device hybrid's hand-over to the host. A problem without the
 * kernel's dense Newton (all of a float device's, whose float Newton
 * passes Armijo while the error grows; those past the contact limit or
 * without room for their matrices) goes from the device's sweeps to the
 * host at the switch's first verdict (newton_hybrid_switch): within the
 * limit to its Newton in double (ref/newton.c), past it to the sparse
 * second phase, as the reference's hybrid does past its limit: ccp and
 * soft to the interior point (ref/ipm.c), coulomb to its fixed point
 * over it (ref/fixed_point.c);
 * where that stalls above tol the sweeps go on from its better iterate,
 * and coulomb's, watched by the switch again, go to the host's sparse
 * Newton at its next verdict, for good (the reference's hybrid_large).
 * The whole-problem kernel stops such a problem itself (opencl/newton.c).
 * A batch beyond those kernels (a problem past 4,096 contacts on a GPU,
 * 16,384 on a CPU, or a solve keeping its history) runs the sweeps'
 * multi-launch loop, watched here at each check, and there a problem
 * within the dense limit goes to the host's Newton (ref/newton.c) as the
 * kernel would run its own: a host's dense LU where a GPU's work-group
 * would factor, but the reference's answer where the loop's sweeps alone
 * stalled (BoxesStack1 with --plot: 3.6e-7 after 5 s, now 1e-8 in 1,086
 * iterations). */
#include "core/internal.h"
#include "core/newton_limits.h"
#include "opencl/dev_batch.h"
#include "ref/reference.h"
#include "cone.h"
#include "local_solve.h"
#include "newton_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int clc_hybrid_switches(const clc_dev_batch *d)
{
    return clc_device_hybrid_switches(d->o->tol, d->model == CLCONE_MODEL_COULOMB,
                                      clcone_context_precision(d->c) == CLCONE_DOUBLE);
}

void clc_handover_close(clc_dev_batch *d)
{
    for (int p = 0; p < d->nipm; ++p) clc_ref_ipm_release(d->ipm[p]);
    free(d->ipm);
    d->ipm = NULL;
    d->nipm = 0;
}

/* Past the dense limit a problem's price is its second phase's, from the
 * CHOLMOD analysis that phase runs on: made here, once for the batch
 * (10 ms on a 3,000-contact pile, 1 s on 60,000 contacts). */
clcone_status clc_handover_prices(clc_dev_batch *d, const cl_ulong *off, double *price, clcone_error *err)
{
    if (!d->ipm) {
        if (!(d->ipm = clc_calloc((size_t)d->nprob, sizeof *d->ipm, err, "second phase setups"))) return CLCONE_ENOMEM;
        d->nipm = d->nprob;
    }
    for (int p = 0; p < d->nprob; ++p) {
        int c0 = d->h.prob_off[p], c1 = d->h.prob_off[p + 1];
        clcone_status s;
        price[p] = 0;
        if (off && off[p + 1] > off[p]) continue; /* the kernel's own Newton */
        if (c1 - c0 <= CLCONE_NEWTON_REF_MAX_CONTACTS) {
            price[p] = clc_ref_newton_price(d->p, c0, c1);
            continue;
        }
        if (d->ipm[p]) {
            price[p] = clc_ref_past_dense_price(d->ipm[p], d->model);
            continue;
        }
        s = clc_ref_past_dense_prepare(d->p, d->model, c0, c1, &d->ipm[p], &price[p], err);
        if (s == CLCONE_ENOTSUP) price[p] = 0;
        else if (s) return s;
    }
    return CLCONE_OK;
}

/* Whether problem p's caps leave its sweeps more to do. */
static int caps_left(const clc_dev_batch *d, int p)
{
    return d->res->items[p].iters < d->o->max_iter && !clc_time_is_up(d->o, clc_now_ms() - d->t0);
}

int clc_handover_run(clc_dev_batch *d, int p, int second, double *r, clcone_status *s, clcone_error *err)
{
    clcone_prob_result *out = &d->res->items[p];
    int c0 = d->h.prob_off[p], c1 = d->h.prob_off[p + 1], sweeps = out->inner_iters, gave_up = 0;
    if (c1 - c0 <= CLCONE_NEWTON_REF_MAX_CONTACTS || second) {
        *s = clc_ref_newton_from(d->p, d->o, c0, c1, r, out->iters, d->t0, 0, &gave_up, out, err);
    } else {
        *s = clc_ref_past_dense_from(d->p, d->o, c0, c1, d->ipm ? d->ipm[p] : NULL, r, out->iters, d->t0, out, err);
        if (d->ipm) clc_ref_ipm_trim(d->ipm[p]); /* the analysis stays for the next solve, not the factor */
    }
    out->inner_iters = sweeps;
    return !second && !*s && out->status == CLCONE_FAILED && caps_left(d, p);
}

double clc_handover_newton_price(const clc_dev_batch *d, int p)
{
    int c0 = d->h.prob_off[p], c1 = d->h.prob_off[p + 1];
    return d->model == CLCONE_MODEL_COULOMB && c1 - c0 > CLCONE_NEWTON_REF_MAX_CONTACTS
               ? clc_ref_newton_price(d->p, c0, c1)
               : 0;
}

/* The switch of each problem on the multi-launch loop: its price, marks,
 * whether its early try was spent, and its last verdict (not 0: it
 * stopped the problem). */
typedef struct loop_switch {
    double tol, *price, *mark_e;
    int max_iter;
    int *mark_it, *tried, *verdict;
    int *second; /* past the dense limit: the second phase has run, the next hand-over is the sparse Newton's */
} loop_switch;

static int loop_switch_says(void *state, int k, int it, double e)
{
    loop_switch *S = state;
    if (!(S->price[k] > 0)) return 0;
    S->verdict[k] =
        newton_hybrid_switch(it, e, S->tol, S->price[k], S->max_iter, S->tried[k], &S->mark_it[k], &S->mark_e[k]);
    return S->verdict[k] != 0;
}

/* Problem p's sweeps again, alone, watched by S, from r and the
 * iteration its second phase stopped at; counts them into *sweeps. The
 * others keep their reactions (a float device would round those the
 * host left in double on their way through it). */
static clcone_status loop_resume(clc_dev_batch *d, clc_dev_fn *sweeps_fn, loop_switch *S, int p, int *skip,
                                 double *r, int *sweeps, clcone_error *err)
{
    clcone_prob_result *out = &d->res->items[p];
    size_t nr = 3 * (size_t)d->n, r0 = 3 * (size_t)d->h.prob_off[p], r1 = 3 * (size_t)d->h.prob_off[p + 1];
    double *kept = clc_malloc(nr, sizeof *kept, err, "the other problems' reactions");
    int it0 = out->iters;
    clc_dev_watch resume = {loop_switch_says, S, skip, it0, d->t0};
    clcone_status s;
    if (!kept) return CLCONE_ENOMEM;
    memcpy(kept, r, nr * sizeof *r);
    for (int k = 0; k < d->nprob; ++k) skip[k] = k != p;
    d->watch = &resume;
    s = sweeps_fn(d, r, err);
    d->watch = NULL;
    *sweeps += out->iters - it0;
    memcpy(r, kept, r0 * sizeof *r);
    memcpy(r + r1, kept + r1, (nr - r1) * sizeof *r);
    free(kept);
    return s;
}

/* Problem p after its switch stopped it on the loop: within the dense
 * limit the host's Newton (an early try, and where that gives up the
 * sweeps again with no second try), past it the sparse second phase (the
 * sweeps again where that stalls, coulomb's watched for a second
 * hand-over to the host's sparse Newton, for good); the reference's
 * hybrid in either case (whose second hand-over may be an early try:
 * the switch gives its first verdict at the same point). */
static clcone_status loop_hand_over(clc_dev_batch *d, clc_dev_fn *sweeps_fn, loop_switch *S, int p, int *skip,
                                    double *r, clcone_error *err)
{
    clcone_prob_result *out = &d->res->items[p];
    int c0 = d->h.prob_off[p], c1 = d->h.prob_off[p + 1], sweeps = out->iters;
    clcone_status s = CLCONE_OK;
    if (!(S->price[p] > 0)) return CLCONE_OK; /* its sweeps alone, as the reference's */
    while (!s && S->verdict[p]) {
        int again = 0, trial = S->verdict[p] == 1;
        S->verdict[p] = 0;
        if (c1 - c0 <= CLCONE_NEWTON_REF_MAX_CONTACTS) {
            s = clc_ref_newton_from(d->p, d->o, c0, c1, r, out->iters, d->t0, trial, &again, out, err);
            again = again && caps_left(d, p);
            S->tried[p] = 1;
            S->mark_it[p] = 0;
            S->mark_e[p] = INFINITY;
        } else {
            again = clc_handover_run(d, p, S->second[p], r, &s, err);
            S->price[p] = S->second[p] ? 0 : clc_handover_newton_price(d, p);
            S->second[p] = 1;
            S->mark_it[p] = 0;
            S->mark_e[p] = INFINITY;
        }
        if (!s && again) s = loop_resume(d, sweeps_fn, S, p, skip, r, &sweeps, err);
    }
    out->inner_iters = sweeps;
    return s;
}

clcone_status clc_handover_loop(clc_dev_batch *d, clc_dev_fn *sweeps, double *r, clcone_error *err)
{
    size_t np = (size_t)d->nprob;
    double *reals = clc_calloc(2 * np, sizeof *reals, err, "the hybrid's switches");
    int *ints = clc_calloc(5 * np, sizeof *ints, err, "the hybrid's switches");
    loop_switch S;
    clcone_status s = CLCONE_ENOMEM;
    if (!reals || !ints) goto out;
    S = (loop_switch){d->o->tol, reals, reals + np, d->o->max_iter, ints, ints + np, ints + 2 * np, ints + 4 * np};
    if ((s = clc_handover_prices(d, NULL, S.price, err))) goto out;
    for (size_t p = 0; p < np; ++p) S.mark_e[p] = INFINITY;
    {
        clc_dev_watch watch = {loop_switch_says, &S, NULL, 0, 0};
        d->watch = &watch;
        s = sweeps(d, r, err);
        d->watch = NULL;
    }
    /* ints 3 np .. 4 np: the resumed loop's skip list */
    for (size_t p = 0; !s && p < np; ++p) s = loop_hand_over(d, sweeps, &S, (int)p, ints + 3 * np, r, err);
out:
    free(reals);
    free(ints);
    return s;
}
