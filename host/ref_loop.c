/* Bookkeeping shared by the CPU reference solvers. */
#include "internal.h"
#include "reference.h"
#include "schedule.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define REF_PI 3.14159265358979323846

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

void clcone_history_add(clcone_history *h, int prob, int iter, double time_ms, double error)
{
    clcone_history_point *pt;
    if (!h || h->truncated) return;
    /* ref_loop_finish measures again the iteration the loop just checked */
    if (h->count > 0 && h->points[h->count - 1].prob == prob && h->points[h->count - 1].iter == iter) {
        pt = &h->points[h->count - 1];
    } else {
        if (h->count == h->capacity) {
            int cap = h->capacity ? 2 * h->capacity : 256;
            void *grown = h->capacity < INT_MAX / 2 ? realloc(h->points, (size_t)cap * sizeof *h->points) : NULL;
            if (!grown) {
                h->truncated = 1;
                return;
            }
            h->points = grown;
            h->capacity = cap;
        }
        pt = &h->points[h->count++];
    }
    pt->prob = prob;
    pt->iter = iter;
    pt->time_ms = time_ms;
    pt->error = error;
}

void clcone_history_free(clcone_history *h)
{
    if (!h) return;
    free(h->points);
    h->points = NULL;
    h->count = h->capacity = h->truncated = 0;
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

int clcone_is_check_iteration(const clcone_options *o, int it)
{
    return cone_is_check(it, o->check_every, o->max_iter);
}

int ref_loop_check(ref_loop *L, int iter, const double *r, clcone_prob_result *out)
{
    int measure = clcone_is_check_iteration(L->o, iter);
    double e;
    if (!measure) {
        if (L->o->max_seconds > 0 && iter % 64 == 0
            && clcone_now_ms() - L->t0_ms > 1e3 * L->o->max_seconds) {
            out->status = CLCONE_MAXITER;
            out->iters = iter;
            out->error = ref_measure(L, iter, r);
            snprintf(out->reason, sizeof out->reason, "time cap %.3g s reached", L->o->max_seconds);
            return 1;
        }
        return 0;
    }
    out->iters = iter;
    if (!all_finite(r, L->c0, L->c1)) {
        out->status = CLCONE_DIVERGED;
        out->error = INFINITY;
        snprintf(out->reason, sizeof out->reason, "non-finite reactions after %d iterations", iter);
        return 1;
    }
    e = ref_measure(L, iter, r);
    out->error = e;
    if (!isfinite(e)) {
        out->status = CLCONE_DIVERGED;
        snprintf(out->reason, sizeof out->reason, "non-finite error after %d iterations", iter);
        return 1;
    }
    if (e <= L->o->tol) {
        out->status = CLCONE_CONVERGED;
        out->reason[0] = 0;
        return 1;
    }
    if (L->o->max_seconds > 0 && clcone_now_ms() - L->t0_ms > 1e3 * L->o->max_seconds) {
        out->status = CLCONE_MAXITER;
        snprintf(out->reason, sizeof out->reason, "time cap %.3g s reached", L->o->max_seconds);
        return 1;
    }
    return 0;
}

void ref_loop_finish(ref_loop *L, int iter, const double *r, clcone_prob_result *out)
{
    if (ref_loop_check(L, iter, r, out)) return;
    out->status = CLCONE_MAXITER;
    snprintf(out->reason, sizeof out->reason, "iteration cap %d reached", L->o->max_iter);
}

void ref_sym3_eig_range(const double A0[9], double *lo, double *hi)
{
    double A[9], p1, qm, p2, pp, B[9], detB, rr, phi;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) A[3 * a + b] = 0.5 * (A0[3 * a + b] + A0[3 * b + a]);
    p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
    qm = (A[0] + A[4] + A[8]) / 3.0;
    if (p1 == 0.0) {
        *lo = fmin(A[0], fmin(A[4], A[8]));
        *hi = fmax(A[0], fmax(A[4], A[8]));
        return;
    }
    p2 = (A[0] - qm) * (A[0] - qm) + (A[4] - qm) * (A[4] - qm) + (A[8] - qm) * (A[8] - qm) + 2 * p1;
    pp = sqrt(p2 / 6.0);
    for (int i = 0; i < 9; ++i) B[i] = (A[i] - ((i % 4) == 0 ? qm : 0.0)) / pp;
    detB = B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6])
           + B[2] * (B[3] * B[7] - B[4] * B[6]);
    rr = detB / 2.0;
    phi = rr <= -1 ? REF_PI / 3.0 : rr >= 1 ? 0.0 : acos(rr) / 3.0;
    *hi = qm + 2 * pp * cos(phi);
    *lo = qm + 2 * pp * cos(phi + 2.0 * REF_PI / 3.0);
}

double ref_row_block_norm(const clcone_problem *p, int c)
{
    double s = 0;
    for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
        double f = 0;
        for (int a = 0; a < 9; ++a) f += p->blocks[9 * k + a] * p->blocks[9 * k + a];
        s += sqrt(f);
    }
    return s;
}

double ref_lane_sum(const double *v, int n)
{
    double lane[CONE_REDUCE_WG];
    for (int l = 0; l < CONE_REDUCE_WG; ++l) {
        lane[l] = 0;
        for (int i = l; i < n; i += CONE_REDUCE_WG) lane[l] += v[i];
    }
    for (int w = CONE_REDUCE_WG / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
    return lane[0];
}
