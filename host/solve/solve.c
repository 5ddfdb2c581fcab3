/* The one front door of a solve: options checked against what each model
 * and backend offers, then the reference or the device. */
#include "core/internal.h"
#include "ref/reference.h"
#include "core/sap.h"
#include "opencl/device_solve.h"
#include "solve/solve_entries.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Zeroes r unless warm-started; a warm start must be finite. */
static clcone_status start_reactions(const clcone_options *o, int n, double *r, clcone_error *err)
{
    if (!o->warm_start && n > 0) memset(r, 0, sizeof(double) * 3 * (size_t)n); /* r may be NULL at n = 0 */
    for (int i = 0; i < 3 * n; ++i)
        if (!isfinite(r[i]))
            return clcone_fail(err, CLCONE_EINVAL, "warm start r[%d] (contact %d) is not finite", i, i / 3);
    return CLCONE_OK;
}

/* Checks shared by every backend; zeroes r unless warm-started. */
static clcone_status prepare(const clcone_context *ctx, const clcone_problem *p, const clcone_options *o,
                             double *r, clcone_result *res, clcone_error *err)
{
    clcone_status s;
    res->items = NULL;
    res->nprob = 0;
    if ((s = clcone_options_validate(o, ctx, err)) || (s = clcone_problem_validate(p, err))) return s;
    if ((s = start_reactions(o, p->n, r, err))) return s;
    return clcone_result_init(res, p->nprob, err);
}

/* One backend on a prepared problem: the reference problem by problem,
 * or the device on the whole batch. */
static clcone_status run_backend(clcone_context *ctx, const clcone_problem *p, const clcone_options *o, double *r,
                                 clcone_result *res, clcone_error *err)
{
    clcone_status s;
    if (ctx) return clcone_solve_device(ctx, p, o, r, res, err);
    for (int k = 0; k < p->nprob; ++k) {
        double tk = clcone_now_ms();
        s = clcone_contract_ref(o->model, o->solver)(p, o, p->prob_off[k], p->prob_off[k + 1], r, &res->items[k], err);
        res->items[k].time_ms = clcone_now_ms() - tk;
        if (s) {
            clcone_error_prefix(err, "problem %d of the batch", k);
            return s;
        }
    }
    return CLCONE_OK;
}

/* Solves p, for soft through the ccp solvers on W + R, q - a_ref (gap:
 * per-contact gaps for a_ref, NULL = 0), and reports the QP cost of the
 * convex models. */
static clcone_status solve_local(clcone_context *ctx, const clcone_problem *p, const double *gap,
                                 const clcone_options *o, double *r, clcone_result *res, clcone_error *err)
{
    clcone_status s;
    clcone_problem soft;
    clcone_options oc = *o;
    const clcone_problem *P = p;
    double t0 = clcone_now_ms();
    memset(&soft, 0, sizeof soft);
    if ((s = prepare(ctx, p, o, r, res, err))) return s;
    if (p->n == 0) { /* nothing to solve: every (empty) problem holds */
        res->time_ms = clcone_now_ms() - t0;
        return CLCONE_OK;
    }
    if (o->model == CLCONE_MODEL_SOFT) {
        if ((s = clcone_soft_local(p, o, gap, &soft, err))) goto out;
        oc.model = clcone_model_solved_as(o->model);
        P = &soft;
    }
    if ((s = run_backend(ctx, P, &oc, r, res, err))) goto out;
    if (oc.model == CLCONE_MODEL_CCP)
        for (int k = 0; k < p->nprob; ++k) res->items[k].cost = clcone_qp_cost(P, r, p->prob_off[k], p->prob_off[k + 1]);
    res->time_ms = clcone_now_ms() - t0;
out:
    clcone_problem_free(&soft);
    if (s) clcone_result_free(res);
    return s;
}

clcone_status clcone_solve(clcone_context *ctx, const clcone_problem *p, const clcone_options *o,
                           double *r, clcone_result *res, clcone_error *err)
{
    CLCONE_REQUIRE(err, res);
    res->items = NULL;
    res->nprob = 0;
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o);
    if (p->n > 0) CLCONE_REQUIRE(err, r);
    clcone_options oc = *o;
    clcone_options_resolve(&oc, ctx);
    return solve_local(ctx, p, NULL, &oc, r, res, err);
}

clcone_status clcone_solve_scene(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o_in,
                                 double *r, clcone_result *res, clcone_error *err)
{
    CLCONE_REQUIRE(err, res);
    res->items = NULL;
    res->nprob = 0;
    CLCONE_REQUIRE(err, sc);
    CLCONE_REQUIRE(err, o_in);
    if (sc->ncontacts > 0) CLCONE_REQUIRE(err, r);
    clcone_status s;
    double t0 = clcone_now_ms();
    clcone_options oc = *o_in;
    const clcone_options *o = &oc;
    clcone_options_resolve(&oc, ctx);
    res->items = NULL;
    res->nprob = 0;
    if (o->model == CLCONE_MODEL_SAP) return clcone_sap_solve(ctx, sc, o, r, res, err); /* solve/sap_solve.c */
    if ((s = clcone_scene_validate(sc, err))) return s;
    if (!ctx) {
        /* the reference works on the assembled local form */
        clcone_problem p;
        double *gap = clcone_calloc((size_t)sc->ncontacts, sizeof *gap, err, "gaps");
        if (!gap) return CLCONE_ENOMEM;
        for (int c = 0; c < sc->ncontacts; ++c) gap[c] = sc->contacts[c].gap;
        if (!(s = clcone_scene_to_local(sc, &p, err))) {
            s = solve_local(NULL, &p, gap, o, r, res, err);
            clcone_problem_free(&p);
        }
        free(gap);
        return s;
    }
    if ((s = clcone_options_validate(o, ctx, err)) || (s = start_reactions(o, sc->ncontacts, r, err))
        || (s = clcone_result_init(res, 1, err)))
        return s;
    if (sc->ncontacts == 0) return CLCONE_OK; /* converged, nothing to solve */
    {
        clcone_dev_plan *pl;
        if (!(s = clcone_dev_plan_scene(ctx, sc, o, &pl, err))) {
            s = clcone_dev_plan_solve(pl, r, res, err);
            clcone_dev_plan_free(pl);
        }
    }
    if (s) {
        clcone_result_free(res);
        return s;
    }
    res->time_ms = clcone_now_ms() - t0;
    return CLCONE_OK;
}

/* ------------------------------------------------------------------ */
/* Plans: set up once, solve many                                      */
/* ------------------------------------------------------------------ */

struct clcone_plan {
    clcone_context *ctx;
    clcone_options o;
    int is_scene;
    clcone_problem p;     /* local form as given (own copy) */
    clcone_problem soft;  /* soft model: the ccp on W + R, q - a_ref */
    clcone_scene s;       /* body form (own copy) */
    int bodies_cap, contacts_cap; /* of s's arrays */
    clcone_dev_plan *dev; /* NULL on the reference, and for sap */
    int warmed;           /* a device side has run its kernels once */
};

/* The plan's own copy of a scene, in the arrays of the last one when
 * they are large enough: a stepper's scenes keep their size, and fresh
 * arrays would cost a page fault per page every step. */
static clcone_status scene_copy(clcone_plan *pl, const clcone_scene *in, clcone_error *err)
{
    clcone_scene *out = &pl->s;
    if (in->nbodies > pl->bodies_cap || in->ncontacts > pl->contacts_cap) {
        int nb = in->nbodies > pl->bodies_cap ? in->nbodies : pl->bodies_cap;
        int nc = in->ncontacts > pl->contacts_cap ? in->ncontacts : pl->contacts_cap;
        clcone_scene_free(out);
        pl->bodies_cap = pl->contacts_cap = 0;
        out->bodies = clcone_calloc((size_t)nb + 1, sizeof *out->bodies, err, "plan bodies");
        out->contacts = clcone_calloc((size_t)nc + 1, sizeof *out->contacts, err, "plan contacts");
        if (!out->bodies || !out->contacts) {
            clcone_scene_free(out);
            return CLCONE_ENOMEM;
        }
        pl->bodies_cap = nb;
        pl->contacts_cap = nc;
    }
    out->nbodies = in->nbodies;
    out->ncontacts = in->ncontacts;
    memcpy(out->bodies, in->bodies, sizeof *in->bodies * (size_t)in->nbodies);
    memcpy(out->contacts, in->contacts, sizeof *in->contacts * (size_t)in->ncontacts);
    return CLCONE_OK;
}

void clcone_plan_free(clcone_plan *pl)
{
    if (!pl) return;
    clcone_dev_plan_free(pl->dev);
    clcone_problem_free(&pl->p);
    clcone_problem_free(&pl->soft);
    clcone_scene_free(&pl->s);
    free(pl);
}

/* The device side of a plan from its current problem or scene, the first
 * one warmed up: each kernel run once. A device side made again for new
 * contacts launches the same kernels with the same work-group sizes,
 * which a device compiles once. */
static clcone_status plan_device(clcone_plan *pl, clcone_error *err)
{
    clcone_status s;
    clcone_options oc = pl->o;
    if (!pl->ctx) return CLCONE_OK;
    if (pl->o.model == CLCONE_MODEL_SAP) return clcone_sap_device_prepare(pl->ctx, err);
    if (pl->is_scene) {
        if (pl->s.ncontacts == 0) return CLCONE_OK;
        s = clcone_dev_plan_scene(pl->ctx, &pl->s, &pl->o, &pl->dev, err);
    } else {
        if (pl->p.n == 0) return CLCONE_OK;
        oc.model = clcone_model_solved_as(pl->o.model);
        s = clcone_dev_plan_local(pl->ctx, pl->o.model == CLCONE_MODEL_SOFT ? &pl->soft : &pl->p, &oc, &pl->dev, err);
    }
    if (s || pl->warmed) return s;
    pl->warmed = 1;
    return clcone_dev_plan_warm_up(pl->dev, err);
}

static clcone_status plan_new(clcone_context *ctx, const clcone_options *o, clcone_plan **out, clcone_error *err)
{
    clcone_plan *pl = clcone_calloc(1, sizeof *pl, err, "plan");
    *out = pl;
    if (!pl) return CLCONE_ENOMEM;
    pl->ctx = ctx;
    pl->o = *o;
    return CLCONE_OK;
}

clcone_status clcone_plan_create(clcone_context *ctx, const clcone_problem *p, const clcone_options *o_in,
                                 clcone_plan **out, clcone_error *err)
{
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o_in);
    CLCONE_REQUIRE(err, out);
    const clcone_problem *one[1] = {p};
    clcone_options oc = *o_in;
    const clcone_options *o = &oc;
    clcone_plan *pl;
    clcone_status s;
    *out = NULL;
    clcone_options_resolve(&oc, ctx);
    if ((s = clcone_options_validate(o, ctx, err)) || (s = clcone_problem_validate(p, err))
        || (s = plan_new(ctx, o, &pl, err)))
        return s;
    if (!(s = clcone_batch_concat(one, 1, &pl->p, err))
        && !(o->model == CLCONE_MODEL_SOFT && (s = clcone_soft_local(&pl->p, o, NULL, &pl->soft, err))))
        s = plan_device(pl, err);
    if (s) {
        clcone_plan_free(pl);
        return s;
    }
    *out = pl;
    return CLCONE_OK;
}

clcone_status clcone_plan_create_scene(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o_in,
                                       clcone_plan **out, clcone_error *err)
{
    CLCONE_REQUIRE(err, sc);
    CLCONE_REQUIRE(err, o_in);
    CLCONE_REQUIRE(err, out);
    clcone_options oc = *o_in;
    const clcone_options *o = &oc;
    clcone_plan *pl;
    clcone_status s;
    *out = NULL;
    clcone_options_resolve(&oc, ctx);
    if (o->model != CLCONE_MODEL_SAP && (s = clcone_options_validate(o, ctx, err))) return s;
    if ((s = clcone_scene_validate(sc, err)) || (s = plan_new(ctx, o, &pl, err))) return s;
    pl->is_scene = 1;
    if (!(s = scene_copy(pl, sc, err))) s = plan_device(pl, err);
    if (s) {
        clcone_plan_free(pl);
        return s;
    }
    *out = pl;
    return CLCONE_OK;
}

clcone_status clcone_plan_set_q(clcone_plan *pl, const double *q, clcone_error *err)
{
    CLCONE_REQUIRE(err, pl);
    CLCONE_REQUIRE(err, q);
    if (pl->is_scene)
        return clcone_fail(err, CLCONE_EINVAL, "a scene plan takes new free velocities (clcone_plan_set_scene), not q");
    for (int i = 0; i < 3 * pl->p.n; ++i)
        if (!isfinite(q[i])) return clcone_fail(err, CLCONE_EINVAL, "q[%d] (contact %d) is not finite", i, i / 3);
    memcpy(pl->p.q, q, sizeof *q * 3 * (size_t)pl->p.n);
    if (pl->o.model == CLCONE_MODEL_SOFT) {
        clcone_status s;
        clcone_problem_free(&pl->soft);
        if ((s = clcone_soft_local(&pl->p, &pl->o, NULL, &pl->soft, err))) return s;
        return pl->dev ? clcone_dev_plan_set_q(pl->dev, pl->soft.q, err) : CLCONE_OK;
    }
    return pl->dev ? clcone_dev_plan_set_q(pl->dev, q, err) : CLCONE_OK;
}

clcone_status clcone_plan_set_scene(clcone_plan *pl, const clcone_scene *sc, clcone_error *err)
{
    CLCONE_REQUIRE(err, pl);
    CLCONE_REQUIRE(err, sc);
    clcone_status s;
    if (!pl->is_scene)
        return clcone_fail(err, CLCONE_EINVAL, "a local-form plan takes a new q (clcone_plan_set_q), not a scene");
    if ((s = clcone_scene_validate(sc, err))) return s;
    if ((s = scene_copy(pl, sc, err))) return s;
    /* a scene without contacts leaves the device side as it is, for the
     * next one; solves of it need no device */
    if (!pl->dev || pl->s.ncontacts == 0) return plan_device(pl, err);
    if ((s = clcone_dev_plan_set_scene(pl->dev, &pl->s, &pl->o, err))) {
        clcone_dev_plan_free(pl->dev);
        pl->dev = NULL;
    }
    return s;
}

void clcone_plan_set_start(clcone_plan *pl, int warm_start, const double *soft_v0)
{
    pl->o.warm_start = warm_start;
    pl->o.soft_v0 = soft_v0;
}

clcone_dev_counts clcone_plan_device_counts(const clcone_plan *pl)
{
    clcone_dev_counts none = {0, 0};
    return pl->dev ? clcone_dev_plan_counts(pl->dev) : none;
}

clcone_status clcone_plan_solve(clcone_plan *pl, double *r, clcone_result *res, clcone_error *err)
{
    CLCONE_REQUIRE(err, res);
    res->items = NULL;
    res->nprob = 0;
    CLCONE_REQUIRE(err, pl);
    clcone_status s;
    int n = pl->is_scene ? pl->s.ncontacts : pl->p.n, nprob = pl->is_scene ? 1 : pl->p.nprob;
    double t0 = clcone_now_ms();
    if (n > 0) CLCONE_REQUIRE(err, r);
    if (!pl->dev || n == 0) /* the reference, sap, or nothing to solve */
        return pl->is_scene ? clcone_solve_scene(pl->ctx, &pl->s, &pl->o, r, res, err)
                            : clcone_solve(NULL, &pl->p, &pl->o, r, res, err);
    if ((s = start_reactions(&pl->o, n, r, err)) || (s = clcone_result_init(res, nprob, err))) return s;
    if ((s = clcone_dev_plan_solve(pl->dev, r, res, err))) {
        clcone_result_free(res);
        return s;
    }
    if (!pl->is_scene && pl->o.model == CLCONE_MODEL_SOFT)
        for (int k = 0; k < nprob; ++k)
            res->items[k].cost = clcone_qp_cost(&pl->soft, r, pl->p.prob_off[k], pl->p.prob_off[k + 1]);
    else if (!pl->is_scene && pl->o.model == CLCONE_MODEL_CCP)
        for (int k = 0; k < nprob; ++k)
            res->items[k].cost = clcone_qp_cost(&pl->p, r, pl->p.prob_off[k], pl->p.prob_off[k + 1]);
    res->time_ms = clcone_now_ms() - t0;
    return CLCONE_OK;
}
