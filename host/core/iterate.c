/* The one iteration loop of the iterative solvers (Jacobi, PGS, NSGS, CGS,
 * APGD), on the reference and on the device's multi-launch path alike: a
 * backend supplies one iteration and the errors at a check through
 * clc_iter_ops; the loop owns the check schedule, the time cap, the
 * stopping rule, the history and the progress callback, so that every
 * backend stops at the same iteration for the same reason. (The device's
 * whole-problem kernels run this schedule inside the kernel, see
 * kernels/group_solve.cl.) */
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>

clcone_status clc_iterate(const clc_iter_ops *ops, const clcone_options *o, clcone_prob_result *out,
                             clcone_error *err)
{
    return clc_iterate_on(ops, o, clc_is_check_iteration, out, err);
}

clcone_status clc_iterate_on(const clc_iter_ops *ops, const clcone_options *o,
                                int (*is_check)(const clcone_options *o, int it), clcone_prob_result *out,
                                clcone_error *err)
{
    int n = ops->nprob, remaining = ops->nprob, queued = 0, window = 1;
    double slice = ops->sync ? clc_cap_slice_ms(o) : INFINITY, synced;
    int *active = clc_calloc((size_t)n, sizeof *active, err, "active problems");
    double *errors = clc_calloc((size_t)n, sizeof *errors, err, "problem errors");
    double t0 = ops->t0_ms > 0 ? ops->t0_ms : clc_now_ms();
    clcone_status s = CLCONE_ENOMEM;
    if (!active || !errors) goto out;
    for (int k = 0; k < n; ++k) {
        active[k] = !(ops->skip && ops->skip[k]);
        remaining -= !active[k];
    }
    s = CLCONE_OK;
    synced = clc_now_ms();
    for (int it = 1; remaining > 0; ++it) {
        int changed = 0;
        double elapsed;
        if ((s = ops->step(ops->ctx, it, err))) break;
        /* under a cap a device's queue is drained every `window`
         * iterations, grown while a window takes less than the slice, so
         * that the host clock the cap reads is the device's */
        if (!isinf(slice) && ++queued >= window) {
            double now;
            if ((s = ops->sync(ops->ctx, err))) break;
            now = clc_now_ms();
            if (now - synced < 0.5 * slice && window < (1 << 20)) window *= 2;
            else if (now - synced > slice && window > 1) window /= 2;
            synced = now;
            queued = 0;
        }
        /* a check is due on the schedule, or early once the time cap has
         * passed (processes that share a solve check on the schedule
         * alone: their clocks differ) */
        if (!is_check(o, it) && (ops->agree_ms || !clc_time_is_up(o, clc_now_ms() - t0))) continue;
        if ((s = ops->measure(ops->ctx, it, active, errors, err))) break;
        queued = 0;
        synced = clc_now_ms();
        elapsed = synced - t0;
        if (ops->agree_ms && (s = ops->agree_ms(ops->ctx, &elapsed, err))) break;
        for (int k = 0, at = ops->it0 + it; k < n; ++k) {
            if (!active[k]) continue;
            out[k].time_ms = elapsed;
            clc_history_add(o->history, ops->prob0 + k, at, elapsed, errors[k]);
            if (o->progress) o->progress(o->progress_user, ops->prob0 + k, at, errors[k]);
            if (clc_stop_rule(o, at, errors[k], elapsed, &out[k])
                || (ops->hand_over && ops->hand_over(ops->ctx, k, at, errors[k]))) {
                active[k] = 0;
                --remaining;
                changed = 1;
            }
        }
        if (remaining > 0 && ops->checked && (s = ops->checked(ops->ctx, it, active, errors, changed, err))) break;
    }
out:
    free(active);
    free(errors);
    return s;
}
