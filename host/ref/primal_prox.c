/* MuJoCo's model coulomb on its primal problem: the hard rows' forces by
 * the proximal point method (Rockafellar 1976) on the dual,
 *
 *   f_{k+1} = argmin 1/2 f'(A + R) f + q'f + 1/2 (f - f_k)' P_k (f - f_k),
 *
 * P_k = c_k diag(hard) on the hard rows (0 elsewhere). Each round is
 * MuJoCo's own soft problem with R = P_k and a_ref + P_k f_k on the hard
 * rows (clc_pproblem_round), which MuJoCo's Newton solves in a step or
 * two from the last round's accelerations; the rounds' fixed point is the
 * hard problem's answer, whatever c. c starts below MuJoCo's own softness
 * and shrinks a round, each round's pull to f_k weaker, down to the floor
 * that the precision bears. Frictionless and pyramidal contacts make the
 * hard problem a QP, and A's null space (a pyramid's four edges on three
 * directions) costs nothing: the pull picks the answer nearest f_k. An
 * elliptic cone with R = 0 is exact Coulomb, which is no QP: each round
 * also shifts its normal row by De Saxce's ||friction .* u_T|| at the
 * last round's accelerations (clc_pproblem_round), so that the rounds'
 * fixed point is the cone complementarity of u + shift, De Saxce's form
 * of Coulomb's law. Measured in docs/mujoco.md. */
#include "ref/primal_prox.h"
#include "ref/primal_newton.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first round's weight and its shrink a round: a tenth of MuJoCo's
 * default softness (R = (1 - d) / d of A's diagonal, d 0.9-0.95), and a
 * tenth a round, fitted on the humanoid, 100 humanoids and Stonehenge at
 * 1e-8 (reference) and 1e-5 (float device) against 0.3-0.01 and 0.3-0.1
 * (docs/mujoco.md). */
#define PROX_C0 0.01
#define PROX_SHRINK 0.1

/* A problem's rounds: its round problem (p's with its own R and aref and
 * no hard rows), the pull's centre, its weight, the Newton steps so far,
 * the best answer by the hard error, and the round's start (restored
 * where another problem's failure makes the batch take a round again). */
typedef struct prox_item {
    clc_pproblem round;
    double *center, *best_a, *best_f, *start_a, *start_f, c, best_e;
    int *best_state, *start_state, newton, done, soft;
} prox_item;

static void item_best(prox_item *t, const clc_pproblem *p, const double *a, const double *f, const int *state,
                      double e)
{
    if (!(e < t->best_e) && isfinite(t->best_e)) return;
    t->best_e = e;
    memcpy(t->best_a, a, sizeof *a * (size_t)p->nv);
    memcpy(t->best_f, f, sizeof *f * (size_t)p->m);
    memcpy(t->best_state, state, sizeof *state * (size_t)p->m);
}

/* A problem's rounds end: its best answer, that answer's error and the
 * rounds' work (Newton's steps; rounds as inner iterations). */
static void prox_done(prox_item *t, const clc_pproblem *p, double *a, double *f, int *state, int round, double t0,
                      clcone_prob_result *res)
{
    t->done = 1;
    memcpy(a, t->best_a, sizeof *a * (size_t)p->nv);
    memcpy(f, t->best_f, sizeof *f * (size_t)p->m);
    memcpy(state, t->best_state, sizeof *state * (size_t)p->m);
    res->error = t->best_e;
    res->iters = t->newton;
    res->inner_iters = round + 1;
    res->time_ms = clc_now_ms() - t0;
}

static clcone_status item_init(prox_item *t, const clc_pproblem *p, clcone_error *err)
{
    size_t m = (size_t)p->m, nv = (size_t)p->nv;
    t->round = *p;
    t->round.hard = NULL;
    t->round.R = clc_calloc(5 * m + 2 * nv + 1, sizeof *t->round.R, err, "a proximal round's rows");
    t->best_state = clc_calloc(2 * m + 1, sizeof *t->best_state, err, "a proximal round's zones");
    if (!t->round.R || !t->best_state) return CLCONE_ENOMEM;
    t->round.aref = t->round.R + m;
    t->center = t->round.aref + m;
    t->best_f = t->center + m;
    t->start_f = t->best_f + m;
    t->best_a = t->start_f + m;
    t->start_a = t->best_a + nv;
    t->start_state = t->best_state + m;
    t->c = PROX_C0;
    t->best_e = INFINITY;
    t->soft = 1;
    for (int i = 0; p->hard && i < p->m; ++i) t->soft &= !(p->hard[i] > 0);
    return CLCONE_OK;
}

/* Problem k's round j done: its next weight and centre, or its end. A
 * problem without hard rows is MuJoCo's soft one: one round, its Newton's
 * own result. A round at the weight's floor that took no Newton step
 * would be taken again as it is: the rounds end there, failed. */
static void round_done(prox_item *q, const clc_pproblem *p, const clcone_options *o, double floor, int round,
                       double t0, const clcone_prob_result *rr, double *a, double *f, int *state,
                       clcone_prob_result *res)
{
    double e = clc_pproblem_hard_error(p, a, f);
    int stalled = !rr->iters && q->c <= floor, stop;
    q->newton += rr->iters;
    item_best(q, p, a, f, state, e);
    if (q->soft) {
        *res = *rr;
        q->done = 1;
        return;
    }
    stop = clc_stop_rule(o, q->newton, e, clc_now_ms() - t0, res);
    if (!stop && (rr->status == CLCONE_FAILED || stalled)) {
        /* a round that cannot converge, or one that cannot move, ends them */
        res->status = CLCONE_FAILED;
        if (rr->status == CLCONE_FAILED) snprintf(res->reason, sizeof res->reason, "%s", rr->reason);
        else snprintf(res->reason, sizeof res->reason, "the proximal rounds stalled at %.3g (weight %g)", e, q->c);
        stop = 1;
    }
    if (stop) {
        prox_done(q, p, a, f, state, round, t0, res);
        return;
    }
    memcpy(q->center, f, sizeof *f * (size_t)p->m);
    q->c = fmax(q->c * PROX_SHRINK, floor);
}

/* The live problems' a, f and zones at a round's start (save), or back to it. */
static void round_start(prox_item *t, const int *idx, int m, const clc_pproblem *const *p, double *const *a,
                        double *const *f, int *const *state, int save)
{
    for (int j = 0; j < m; ++j) {
        prox_item *q = &t[idx[j]];
        size_t nv = sizeof *q->start_a * (size_t)p[idx[j]]->nv, mr = (size_t)p[idx[j]]->m;
        if (q->done) continue;
        memcpy(save ? q->start_a : a[idx[j]], save ? a[idx[j]] : q->start_a, nv);
        memcpy(save ? q->start_f : f[idx[j]], save ? f[idx[j]] : q->start_f, sizeof *f[0] * mr);
        memcpy(save ? q->start_state : state[idx[j]], save ? state[idx[j]] : q->start_state, sizeof *state[0] * mr);
    }
}

clcone_status clc_primal_prox_rounds(int K, const clc_pproblem *const *p, const clcone_options *o, double floor,
                                     double *const *a, double *const *f, int *const *state,
                                     clcone_prob_result *res, clc_primal_batch_fn inner, void *solver,
                                     int *failed, clcone_error *err)
{
    size_t n = (size_t)K;
    prox_item *t = clc_calloc(n, sizeof *t, err, "the proximal rounds");
    const clc_pproblem **rp = clc_calloc(n, sizeof *rp, err, "the rounds' problems");
    double **ra = clc_calloc(2 * n, sizeof *ra, err, "the rounds' vectors"), t0 = clc_now_ms();
    int **rs = clc_calloc(n, sizeof *rs, err, "the rounds' zones"), *idx = clc_calloc(n, sizeof *idx, err, "the rounds' problems");
    clcone_prob_result *rr = clc_calloc(n, sizeof *rr, err, "the rounds' results");
    clcone_options io = *o;
    clcone_error lost;
    clcone_status s = CLCONE_ENOMEM;
    *failed = -1;
    if (!t || !rp || !ra || !rs || !idx || !rr) goto out;
    for (int k = 0; k < K; ++k)
        if ((s = item_init(&t[k], p[k], err))) goto out;
    io.model = CLCONE_MODEL_SOFT;
    io.solver = CLCONE_SOLVER_NEWTON;
    for (int round = 0;; ++round) {
        int m = 0, least = o->max_iter;
        for (int k = 0; k < K; ++k) {
            if (t[k].done) continue;
            /* the first round's shift at the start: a[k] where warm, else a0 */
            clc_pproblem_round(p[k], t[k].c, t[k].center, round || o->warm_start ? a[k] : p[k]->a0, t[k].round.R,
                               t[k].round.aref);
            rp[m] = &t[k].round;
            ra[m] = a[k];
            ra[n + m] = f[k];
            rs[m] = state[k];
            idx[m++] = k;
            if (t[k].newton < least) least = t[k].newton;
        }
        if (!m) break;
        /* rounds after the first start from the last one's accelerations;
         * the caps are the solve's, less what the rounds have spent */
        io.warm_start = round ? 1 : o->warm_start;
        io.max_iter = o->max_iter - least > 1 ? o->max_iter - least : 1;
        if (o->max_seconds > 0) io.max_seconds = fmax(o->max_seconds - 1e-3 * (clc_now_ms() - t0), 1e-9);
        round_start(t, idx, m, p, a, f, state, 1);
        if ((s = inner(solver, m, rp, &io, ra, ra + n, rs, rr, failed, &lost))) {
            /* a later round's Hessian lost to rounding (its R the smaller):
             * that problem ends failed with its best round, the others
             * take this round again from its start */
            int k = *failed >= 0 ? idx[*failed] : -1;
            if (k < 0 || s != CLCONE_EINVAL || !isfinite(t[k].best_e)) {
                *failed = k;
                if (err) *err = lost;
                goto out;
            }
            round_start(t, idx, m, p, a, f, state, 0);
            prox_done(&t[k], p[k], a[k], f[k], state[k], round, t0, &res[k]);
            res[k].status = CLCONE_FAILED;
            snprintf(res[k].reason, sizeof res->reason, "round %d's Newton: %.*s", round,
                     (int)sizeof res->reason - 40, lost.msg);
            *failed = -1;
            --round;
            continue;
        }
        for (int j = 0; j < m; ++j)
            round_done(&t[idx[j]], p[idx[j]], o, floor, round, t0, &rr[j], a[idx[j]], f[idx[j]], state[idx[j]],
                       &res[idx[j]]);
    }
    s = CLCONE_OK;
out:
    for (int k = 0; t && k < K; ++k) {
        free(t[k].round.R);
        free(t[k].best_state);
    }
    free(t);
    free(rp);
    free(ra);
    free(rs);
    free(idx);
    free(rr);
    return s;
}

/* The reference's soft Newton as a batch, one problem after another. */
static clcone_status ref_batch(void *solver, int K, const clc_pproblem *const *p, const clcone_options *o,
                               double *const *a, double *const *f, int *const *state, clcone_prob_result *res,
                               int *failed, clcone_error *err)
{
    (void)solver;
    for (int k = 0; k < K; ++k) {
        clcone_status s = clc_ref_primal_newton(p[k], o, a[k], f[k], state[k], &res[k], err);
        if (s) {
            *failed = k;
            return s;
        }
    }
    return CLCONE_OK;
}

clcone_status clc_ref_primal_prox(const clc_pproblem *p, const clcone_options *o, double *a, double *f,
                                     int *state, clcone_prob_result *res, clcone_error *err)
{
    int failed;
    memset(res, 0, sizeof *res);
    return clc_primal_prox_rounds(1, &p, o, CLC_PROX_FLOOR_DOUBLE, &a, &f, &state, res, ref_batch, NULL, &failed,
                                  err);
}
