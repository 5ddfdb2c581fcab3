/* When a solve stops and what it says: the one writer of every iterative
 * solver's status and reason (reference, device and SAP's Newton loop),
 * so that the same stop reads the same on every backend. */
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void clc_stop(clcone_prob_result *out, clc_stop_why why, const clcone_options *o, int it)
{
    out->reason[0] = 0;
    switch (why) {
    case CLCONE_STOP_TOL: out->status = CLCONE_CONVERGED; return;
    case CLCONE_STOP_NONFINITE:
        out->status = CLCONE_DIVERGED;
        /* input is checked for range, so what overflows is the iterate */
        snprintf(out->reason, sizeof out->reason,
                 "non-finite error after %d iterations: the iterates grew without bound, as where W is not "
                 "positive semidefinite and no solution exists", it);
        return;
    case CLCONE_STOP_ITERS:
        out->status = CLCONE_MAXITER;
        snprintf(out->reason, sizeof out->reason, "iteration cap %d reached", o->max_iter);
        return;
    case CLCONE_STOP_TIME:
        out->status = CLCONE_MAXITER;
        if (clc_cancelled(o)) snprintf(out->reason, sizeof out->reason, "cancelled");
        else snprintf(out->reason, sizeof out->reason, "time cap %.3g s reached", o->max_seconds);
        return;
    }
}

int clc_cancelled(const clcone_options *o)
{
    return o->cancel && *o->cancel;
}

/* The cancel flag is read here, with the cap, so that every place that
 * honours the cap (the one iteration loop, the device's launches of
 * whole-problem kernels, SAP's Newton loop) also honours it. */
int clc_time_is_up(const clcone_options *o, double elapsed_ms)
{
    return clc_cancelled(o) || (o->max_seconds > 0 && elapsed_ms > 1e3 * o->max_seconds);
}

/* A cancel is answered within this much device time even without a cap. */
#define CLCONE_SLICE_MS 50.0

double clc_cap_slice_ms(const clcone_options *o)
{
    double slice = o->cancel ? CLCONE_SLICE_MS : INFINITY;
    if (o->max_seconds > 0 && 50 * o->max_seconds < slice) slice = 50 * o->max_seconds;
    return slice;
}

int clc_next_budget(const clcone_options *o, int last, int most, double last_ms, double elapsed_ms)
{
    int grown = last < most / 2 ? 2 * last : most;
    double left_ms = o->max_seconds > 0 ? 1e3 * o->max_seconds - elapsed_ms : INFINITY, fit;
    double slice = clc_cap_slice_ms(o);
    if (clc_cancelled(o)) return 0;
    if (!(left_ms > 0)) return 0;
    if (!(last_ms > 0) || isinf(slice)) return grown;
    /* the time left, in launches no longer than the slice: one iteration
     * at least while time is left, so that a slow iteration still runs */
    fit = floor((left_ms < slice ? left_ms : slice) / last_ms * last);
    if (fit < 1) fit = left_ms >= last_ms / last ? 1 : 0;
    return fit < grown ? (int)fit : grown;
}

int clc_stop_rule(const clcone_options *o, int it, double e, double elapsed_ms, clcone_prob_result *out)
{
    clc_stop_why why;
    out->iters = it;
    out->error = e;
    if (!isfinite(e)) why = CLCONE_STOP_NONFINITE;
    else if (e <= o->tol) why = CLCONE_STOP_TOL;
    else if (clc_time_is_up(o, elapsed_ms)) why = CLCONE_STOP_TIME;
    else if (it >= o->max_iter) why = CLCONE_STOP_ITERS;
    else return 0;
    clc_stop(out, why, o, it);
    return 1;
}

int clc_step_passes_cap(const clcone_options *o, int it, double elapsed_ms, double step_ms,
                        clcone_prob_result *out)
{
    size_t len;
    if (!(step_ms > 0) || !clc_time_is_up(o, elapsed_ms + step_ms)) return 0;
    clc_stop(out, CLCONE_STOP_TIME, o, it);
    len = strlen(out->reason);
    snprintf(out->reason + len, sizeof out->reason - len, " (the next step, %.2g s, would end past it)",
             1e-3 * step_ms);
    return 1;
}
