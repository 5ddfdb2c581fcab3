/* The one front door of a solve: a plan. Its options are resolved and
 * checked once, at creation, against the solver table's rows of its form
 * (local: a problem, body: a scene); then the backend of the row's kind
 * (plan_backend) does the rest: the CPU reference, which keeps the
 * assembled local form of a scene, the device, which keeps its uploaded
 * batch (opencl/dev_plan.c), or sap's Newton solve. clcone_solve and
 * clcone_solve_scene are a plan made, solved and freed. */
#include "core/internal.h"
#include "core/parallel.h"
#include "ref/reference.h"
#include "core/sap.h"
#include "opencl/device_solve.h"
#include "solve/solve_entries.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct clcone_plan {
    clcone_context *ctx;
    clcone_options o;     /* resolved and validated at creation */
    const clc_contract_row *row; /* the solver table's row that runs it */
    const struct plan_backend *be; /* the row's kind on the plan's backend */
    clcone_form form;     /* local (a problem) or body (a scene) */
    clcone_problem p;     /* the local form: as given (own copy), or a
                             scene's, assembled on the reference */
    clcone_problem soft;  /* soft model: the ccp on W + R, q - a_ref */
    double *gap;          /* reference scene: each contact's gap (a_ref) */
    clcone_scene s;       /* body form (own copy) */
    int bodies_cap, contacts_cap; /* of s's arrays */
    clc_dev_plan *dev; /* device: NULL while a scene has no contacts */
    int local;            /* dev solves the scene's local form, in p (solve/scene_local.c) */
    int warm_up;          /* WARM_* bits: the device side, in the form(s)
                             set, runs its kernels once when first made */
    const clcone_dev_part *part; /* the scene is a part of a larger one (NULL: whole) */
    const char *stale;    /* the set_* call that failed after the plan took
                             part of its input (NULL: none): the backend may
                             hold half of it, so solves are refused until a
                             set_* call succeeds */
};

/* What a backend does for a plan; set_q comes after pl->p (and pl->soft)
 * took the new q, set_scene after pl->s took the new scene. */
typedef struct plan_backend {
    clcone_status (*create)(clcone_plan *pl, clcone_error *err);
    clcone_status (*set_q)(clcone_plan *pl, clcone_error *err);
    clcone_status (*set_scene)(clcone_plan *pl, clcone_error *err);
    /* r is checked and started, res made for the plan's problems, unless
     * own_start: the solve does both itself */
    clcone_status (*solve)(clcone_plan *pl, double *r, clcone_result *res, clcone_error *err);
    int own_start;
    void (*release)(clcone_plan *pl);
} plan_backend;

/* The device sides a plan warms up, each the first time it is made. */
enum { WARM_BODY = 1, WARM_LOCAL = 2 };

/* The local form a backend solves: soft's ccp on W + R, else p. */
static const clcone_problem *solved_problem(const clcone_plan *pl)
{
    return pl->o.model == CLCONE_MODEL_SOFT ? &pl->soft : &pl->p;
}

static int plan_contacts(const clcone_plan *pl)
{
    return pl->form == CLCONE_FORM_BODY ? pl->s.ncontacts : pl->p.n;
}

/* ------------------------------------------------------------------ */
/* The reference                                                       */
/* ------------------------------------------------------------------ */

/* soft's ccp on W + R, q - a_ref from the plan's local form. */
static clcone_status soft_make(clcone_plan *pl, clcone_error *err)
{
    clcone_problem_free(&pl->soft);
    return pl->o.model == CLCONE_MODEL_SOFT ? clc_soft_local(&pl->p, &pl->o, pl->gap, &pl->soft, err) : CLCONE_OK;
}

/* A scene's local form and gaps, assembled once per scene. */
static clcone_status ref_assemble(clcone_plan *pl, clcone_error *err)
{
    clcone_status s;
    free(pl->gap);
    pl->gap = clc_calloc((size_t)pl->s.ncontacts + 1, sizeof *pl->gap, err, "gaps");
    if (!pl->gap) return CLCONE_ENOMEM;
    for (int c = 0; c < pl->s.ncontacts; ++c) pl->gap[c] = pl->s.contacts[c].gap;
    return (s = clc_scene_local_assemble(&pl->s, &pl->p, err)) ? s : soft_make(pl, err);
}

static clcone_status ref_create(clcone_plan *pl, clcone_error *err)
{
    return pl->form == CLCONE_FORM_BODY ? ref_assemble(pl, err) : soft_make(pl, err);
}

static clcone_status ref_set_q(clcone_plan *pl, clcone_error *err)
{
    return soft_make(pl, err);
}

/* The reference's batch, its problems items on the options' threads:
 * each touches only its own contacts' reactions and its own result. */
typedef struct ref_batch {
    const clcone_problem *P;
    const clcone_options *o;
    clc_ref_fn *fn;
    double *r;
    clcone_result *res;
} ref_batch;

static clcone_status ref_problem(void *job, int k, clcone_error *err)
{
    ref_batch *b = job;
    double tk = clc_now_ms();
    clcone_status s = b->fn(b->P, b->o, b->P->prob_off[k], b->P->prob_off[k + 1], b->r, &b->res->items[k], err);
    b->res->items[k].time_ms = clc_now_ms() - tk;
    if (s) clc_error_prefix(err, "problem %d of the batch", k);
    return s;
}

static clcone_status ref_solve(clcone_plan *pl, double *r, clcone_result *res, clcone_error *err)
{
    clcone_options oc = pl->o;
    ref_batch b = {solved_problem(pl), &oc, pl->row->run.local.ref, r, res};
    oc.model = clc_model_solved_as(pl->o.model);
    return clc_each_problem(&oc, b.P->nprob, ref_problem, &b, err);
}

static void ref_release(clcone_plan *pl)
{
    (void)pl; /* the plan's own copies are freed with it */
}

static const plan_backend REFERENCE = {ref_create, ref_set_q, ref_assemble, ref_solve, 0, ref_release};

/* ------------------------------------------------------------------ */
/* The device                                                          */
/* ------------------------------------------------------------------ */

/* A scene solved in its local form (where: solve/scene_local.c),
 * assembled here, on the local form's solvers. */
static clcone_status dev_local(clcone_plan *pl, clcone_error *err)
{
    clcone_status s = clc_scene_local_assemble(&pl->s, &pl->p, err);
    return s ? s : clc_dev_plan_local(pl->ctx, &pl->p, &pl->o, pl->row->run.local.dev, &pl->dev, err);
}

/* The device side from the plan's problem or scene, warmed up (each
 * kernel run once, so that first-launch compilation is never solve time)
 * the first time it is made in its form. A device side made again for new
 * contacts launches the same kernels with the same work-group sizes,
 * which a device compiles once. */
static clcone_status dev_create(clcone_plan *pl, clcone_error *err)
{
    clcone_status s;
    int form;
    if (plan_contacts(pl) == 0) return CLCONE_OK;
    pl->local = pl->form == CLCONE_FORM_BODY && clc_scene_local_fits(pl->ctx, &pl->o, &pl->s, pl->part);
    if (pl->local) {
        s = dev_local(pl, err);
    } else if (pl->form == CLCONE_FORM_BODY) {
        s = clc_dev_plan_scene(pl->ctx, &pl->s, &pl->o, pl->row->run.local.dev, pl->part, &pl->dev, err);
    } else {
        clcone_options oc = pl->o;
        oc.model = clc_model_solved_as(pl->o.model);
        if ((s = soft_make(pl, err))) return s;
        s = clc_dev_plan_local(pl->ctx, solved_problem(pl), &oc, pl->row->run.local.dev, &pl->dev, err);
    }
    form = pl->form == CLCONE_FORM_BODY && !pl->local ? WARM_BODY : WARM_LOCAL;
    if (s || !(pl->warm_up & form)) return s;
    pl->warm_up &= ~form;
    return clc_dev_plan_warm_up(pl->dev, err);
}

static clcone_status dev_set_q(clcone_plan *pl, clcone_error *err)
{
    clcone_problem fresh;
    clcone_status s;
    if (pl->o.model == CLCONE_MODEL_SOFT && pl->p.n > 0) {
        /* a new q moves only soft's q - a_ref; the device side reads the
         * rest of pl->soft where it is */
        if ((s = clc_soft_local(&pl->p, &pl->o, NULL, &fresh, err))) return s;
        memcpy(pl->soft.q, fresh.q, sizeof *fresh.q * 3 * (size_t)fresh.n);
        clcone_problem_free(&fresh);
    }
    return pl->dev ? clc_dev_plan_set_q(pl->dev, solved_problem(pl)->q, err) : CLCONE_OK;
}

/* A new scene where the device side is or becomes the local form's: W
 * moved with the bodies, so the device side is made again. */
static clcone_status dev_local_again(clcone_plan *pl, clcone_error *err)
{
    clc_dev_plan_free(pl->dev);
    pl->dev = NULL;
    return dev_create(pl, err);
}

static clcone_status dev_set_scene(clcone_plan *pl, clcone_error *err)
{
    clcone_status s;
    /* a scene without contacts leaves the device side as it is, for the
     * next one; solves of it need no device */
    if (!pl->dev || pl->s.ncontacts == 0) return pl->dev ? CLCONE_OK : dev_create(pl, err);
    if (pl->local || clc_scene_local_fits(pl->ctx, &pl->o, &pl->s, pl->part)) return dev_local_again(pl, err);
    if ((s = clc_dev_plan_set_scene(pl->dev, &pl->s, &pl->o, err))) {
        clc_dev_plan_free(pl->dev);
        pl->dev = NULL;
    }
    return s;
}

static clcone_status dev_solve(clcone_plan *pl, double *r, clcone_result *res, clcone_error *err)
{
    return clc_dev_plan_solve(pl->dev, r, res, err);
}

static void dev_release(clcone_plan *pl)
{
    clc_dev_plan_free(pl->dev);
}

static const plan_backend DEVICE = {dev_create, dev_set_q, dev_set_scene, dev_solve, 0, dev_release};

/* ------------------------------------------------------------------ */
/* sap: Newton on body velocities, set up per solve on either backend  */
/* ------------------------------------------------------------------ */

static clcone_status sap_create(clcone_plan *pl, clcone_error *err)
{
    return pl->ctx ? clc_sap_device_prepare(pl->ctx, err) : CLCONE_OK;
}

static clcone_status sap_set_scene(clcone_plan *pl, clcone_error *err)
{
    (void)pl;
    (void)err; /* read again by the next solve */
    return CLCONE_OK;
}

static clcone_status sap_plan_solve(clcone_plan *pl, double *r, clcone_result *res, clcone_error *err)
{
    clcone_result_free(res); /* clc_sap_solve makes its own */
    return clc_sap_solve(pl->ctx, &pl->s, &pl->o, r, res, err);
}

static const plan_backend SAP = {sap_create, NULL, sap_set_scene, sap_plan_solve, 1, ref_release};

/* The backend of a row's kind on the reference and on devices (the
 * plans' kinds: blocks and primal problems are solved by
 * solve/blocks_solve.c). */
static const plan_backend *const BACKENDS[][2] = {
    [CLC_RUN_LOCAL] = {&REFERENCE, &DEVICE},
    [CLC_RUN_SAP] = {&SAP, &SAP},
};

/* ------------------------------------------------------------------ */
/* Plans                                                               */
/* ------------------------------------------------------------------ */

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
        out->bodies = clc_calloc((size_t)nb + 1, sizeof *out->bodies, err, "plan bodies");
        out->contacts = clc_calloc((size_t)nc + 1, sizeof *out->contacts, err, "plan contacts");
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
    if (pl->be) pl->be->release(pl);
    clcone_problem_free(&pl->p);
    clcone_problem_free(&pl->soft);
    free(pl->gap);
    clcone_scene_free(&pl->s);
    free(pl);
}

/* A plan with its options resolved and checked for ctx's backend. */
static clcone_status plan_new(clcone_context *ctx, const clcone_options *o_in, clcone_form form, int warm_up,
                              clcone_plan **out, clcone_error *err)
{
    clcone_options o = *o_in;
    const clc_contract_row *row;
    clcone_plan *pl;
    clcone_status s;
    clc_contract_resolve(CLCONE_FORM_BIT(form), &o, ctx);
    if ((s = clc_contract_validate(CLCONE_FORM_BIT(form), &o, ctx, &row, err))) return s;
    if (!(pl = clc_calloc(1, sizeof *pl, err, "plan"))) return CLCONE_ENOMEM;
    pl->ctx = ctx;
    pl->o = o;
    pl->form = form;
    pl->warm_up = warm_up ? WARM_BODY | WARM_LOCAL : 0;
    pl->row = row;
    pl->be = BACKENDS[row->kind][ctx != NULL];
    *out = pl;
    return CLCONE_OK;
}

/* Runs the backend's create on a plan that holds its problem or scene. */
static clcone_status plan_finish(clcone_plan *pl, clcone_status s, clcone_plan **out, clcone_error *err)
{
    if (!s) s = pl->be->create(pl, err);
    if (s) {
        clcone_plan_free(pl);
        return s;
    }
    *out = pl;
    return CLCONE_OK;
}

static clcone_status create_local(clcone_context *ctx, const clcone_problem *p, const clcone_options *o,
                                  int warm_up, clcone_plan **out, clcone_error *err)
{
    const clcone_problem *one[1] = {p};
    clcone_plan *pl;
    clcone_status s;
    *out = NULL;
    if ((s = plan_new(ctx, o, CLCONE_FORM_LOCAL, warm_up, &pl, err))) return s;
    if ((s = clcone_problem_validate(p, err))) {
        clcone_plan_free(pl);
        return s;
    }
    return plan_finish(pl, clcone_batch_concat(one, 1, &pl->p, err), out, err);
}

static clcone_status create_scene(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o,
                                  int warm_up, clcone_plan **out, clcone_error *err)
{
    clcone_plan *pl;
    clcone_status s;
    *out = NULL;
    if ((s = plan_new(ctx, o, CLCONE_FORM_BODY, warm_up, &pl, err))) return s;
    if ((s = clcone_scene_validate(sc, err))) {
        clcone_plan_free(pl);
        return s;
    }
    return plan_finish(pl, scene_copy(pl, sc, err), out, err);
}

clcone_status clcone_plan_create(clcone_context *ctx, const clcone_problem *p, const clcone_options *o,
                                 clcone_plan **out, clcone_error *err)
{
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, out);
    return create_local(ctx, p, o, 1, out, err);
}

clcone_status clcone_plan_create_scene(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o,
                                       clcone_plan **out, clcone_error *err)
{
    CLCONE_REQUIRE(err, sc);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, out);
    return create_scene(ctx, sc, o, 1, out, err);
}

clcone_status clcone_plan_create_part(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o,
                                      const clcone_dev_part *part, clcone_plan **out, clcone_error *err)
{
    const clc_contract_row *row;
    clcone_options r;
    clcone_plan *pl;
    clcone_status s;
    CLCONE_REQUIRE(err, sc);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, part);
    CLCONE_REQUIRE(err, out);
    *out = NULL;
    r = *o;
    clc_contract_resolve(CLCONE_FORM_BIT(CLCONE_FORM_BODY), &r, ctx);
    if ((s = clc_contract_validate_parts(&r, ctx, &row, err))) return s;
    if ((s = plan_new(ctx, o, CLCONE_FORM_BODY, 0, &pl, err))) return s;
    pl->part = part;
    if ((s = clcone_scene_validate(sc, err))) {
        clcone_plan_free(pl);
        return s;
    }
    return plan_finish(pl, scene_copy(pl, sc, err), out, err);
}

clcone_status clcone_plan_warm_up(clcone_plan *pl, clcone_error *err)
{
    CLCONE_REQUIRE(err, pl);
    return pl->dev ? clc_dev_plan_warm_up(pl->dev, err) : CLCONE_OK;
}

/* The outcome s of a set_* call that has changed the plan: a failure
 * leaves it stale (its device side may hold part of the new input, or
 * none), a success fresh again. */
static clcone_status plan_taken(clcone_plan *pl, clcone_status s, const char *call)
{
    pl->stale = s ? call : NULL;
    return s;
}

clcone_status clcone_plan_set_q(clcone_plan *pl, const double *q, clcone_error *err)
{
    CLCONE_REQUIRE(err, pl);
    CLCONE_REQUIRE(err, q);
    clcone_status s;
    if (pl->form == CLCONE_FORM_BODY)
        return clc_fail(err, CLCONE_EINVAL, "a scene plan takes new free velocities (clcone_plan_set_scene), not q");
    for (int i = 0; i < 3 * pl->p.n; ++i)
        if (!isfinite(q[i])) return clc_fail(err, CLCONE_EINVAL, "q[%d] (contact %d) is not finite", i, i / 3);
    if ((s = clc_check_squares(q, 3 * (size_t)pl->p.n, DBL_MAX, "q", err))) return s;
    memcpy(pl->p.q, q, sizeof *q * 3 * (size_t)pl->p.n);
    return plan_taken(pl, pl->be->set_q(pl, err), "clcone_plan_set_q");
}

clcone_status clcone_plan_set_max_seconds(clcone_plan *pl, double seconds, clcone_error *err)
{
    CLCONE_REQUIRE(err, pl);
    if (!(seconds >= 0) || isinf(seconds))
        return clc_fail(err, CLCONE_EINVAL, "max_seconds=%g: a finite number >= 0 required (0 = no cap)", seconds);
    pl->o.max_seconds = seconds;
    if (pl->dev) clc_dev_plan_set_max_seconds(pl->dev, seconds);
    return CLCONE_OK;
}

clcone_status clcone_plan_set_scene(clcone_plan *pl, const clcone_scene *sc, clcone_error *err)
{
    CLCONE_REQUIRE(err, pl);
    CLCONE_REQUIRE(err, sc);
    clcone_status s;
    if (pl->form != CLCONE_FORM_BODY)
        return clc_fail(err, CLCONE_EINVAL, "a local-form plan takes a new q (clcone_plan_set_q), not a scene");
    if ((s = clcone_scene_validate(sc, err))) return s;
    if ((s = scene_copy(pl, sc, err))) return plan_taken(pl, s, "clcone_plan_set_scene");
    return plan_taken(pl, pl->be->set_scene(pl, err), "clcone_plan_set_scene");
}

clcone_status clc_plan_set_problems(clcone_plan *pl, const clcone_problem *const *parts, int k, clcone_error *err)
{
    clcone_status s;
    if (pl->form == CLCONE_FORM_BODY)
        return clc_fail(err, CLCONE_EINVAL, "a scene plan takes a new scene (clcone_plan_set_scene), not problems");
    for (int i = 0; i < k; ++i)
        if ((s = clcone_problem_validate(parts[i], err))) {
            clc_error_prefix(err, "problem %d", i);
            return s;
        }
    pl->be->release(pl);
    pl->dev = NULL;
    clcone_problem_free(&pl->p);
    if ((s = clcone_batch_concat(parts, k, &pl->p, err))) return plan_taken(pl, s, "setting the batch's problems");
    return plan_taken(pl, pl->be->create(pl, err), "setting the batch's problems");
}

void clcone_plan_set_start(clcone_plan *pl, int warm_start, const double *soft_v0)
{
    pl->o.warm_start = warm_start;
    pl->o.soft_v0 = soft_v0;
}

clc_dev_counts clc_plan_device_counts(const clcone_plan *pl)
{
    clc_dev_counts none = {0, 0};
    return pl->dev ? clc_dev_plan_counts(pl->dev) : none;
}

/* Zeroes r unless warm-started; a warm start must be finite. */
static clcone_status start_reactions(const clcone_options *o, int n, double *r, clcone_error *err)
{
    if (!o->warm_start && n > 0) memset(r, 0, sizeof(double) * 3 * (size_t)n); /* r may be NULL at n = 0 */
    for (int i = 0; i < 3 * n; ++i)
        if (!isfinite(r[i]))
            return clc_fail(err, CLCONE_EINVAL, "warm start r[%d] (contact %d) is not finite", i, i / 3);
    return CLCONE_OK;
}

/* A coulomb solve that stopped short near the error rounding alone
 * leaves at its friction says so, rather than a cap only: no solver
 * gets below that floor (core/residual.c). The device's body form holds
 * no local W here and says nothing. */
static void explain_floor(const clcone_plan *pl, const double *r, clcone_result *res)
{
    double eps = !pl->ctx || clcone_context_precision(pl->ctx) == CLCONE_DOUBLE ? DBL_EPSILON : FLT_EPSILON;
    if (pl->o.model != CLCONE_MODEL_COULOMB || (pl->form == CLCONE_FORM_BODY && pl->ctx && !pl->local)) return;
    for (int k = 0; k < res->nprob; ++k) {
        clcone_prob_result *it = &res->items[k];
        double mu_max, floor;
        size_t len = strlen(it->reason);
        if (it->status != CLCONE_MAXITER || clc_cancelled(&pl->o)) continue;
        floor = clc_coulomb_rounding_floor(&pl->p, r, pl->p.prob_off[k], pl->p.prob_off[k + 1], eps, &mu_max);
        if (pl->o.tol < floor && it->error < 10 * floor)
            snprintf(it->reason + len, sizeof it->reason - len,
                     "; at friction up to %.3g rounding alone leaves an error of up to %.1e", mu_max, floor);
    }
}

clcone_status clcone_plan_solve(clcone_plan *pl, double *r, clcone_result *res, clcone_error *err)
{
    CLCONE_REQUIRE(err, res);
    res->items = NULL;
    res->nprob = 0;
    CLCONE_REQUIRE(err, pl);
    clcone_status s;
    int n = plan_contacts(pl), nprob = pl->form == CLCONE_FORM_BODY ? 1 : pl->p.nprob;
    double t0 = clc_now_ms();
    if (n > 0) CLCONE_REQUIRE(err, r);
    if (pl->stale)
        return clc_fail(err, CLCONE_EINVAL, "the plan's last %s failed, leaving it part set: it solves again once "
                        "a new one succeeds", pl->stale);
    if (pl->be->own_start) return pl->be->solve(pl, r, res, err);
    if ((s = start_reactions(&pl->o, n, r, err)) || (s = clc_result_init(res, nprob, err))) return s;
    if (n > 0 && (s = pl->be->solve(pl, r, res, err))) {
        clcone_result_free(res);
        return s;
    }
    /* the QP cost of the convex models; a device scene reports its own */
    if (n > 0 && clc_model_solved_as(pl->o.model) == CLCONE_MODEL_CCP && !(pl->form == CLCONE_FORM_BODY && pl->ctx))
        for (int k = 0; k < nprob; ++k)
            res->items[k].cost =
                clc_qp_cost(solved_problem(pl), r, pl->p.prob_off[k], pl->p.prob_off[k + 1]);
    if (n > 0) explain_floor(pl, r, res);
    res->time_ms = clc_now_ms() - t0;
    return CLCONE_OK;
}

/* clcone_solve and clcone_solve_scene: a plan without the warm-up. */
static clcone_status solve_once(clcone_plan *pl, double t0, double *r, clcone_result *res, clcone_error *err)
{
    clcone_status s = clcone_plan_solve(pl, r, res, err);
    clcone_plan_free(pl);
    if (!s) res->time_ms = clc_now_ms() - t0; /* the whole call */
    return s;
}

clcone_status clcone_solve(clcone_context *ctx, const clcone_problem *p, const clcone_options *o, double *r,
                           clcone_result *res, clcone_error *err)
{
    CLCONE_REQUIRE(err, res);
    res->items = NULL;
    res->nprob = 0;
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o);
    if (p->n > 0) CLCONE_REQUIRE(err, r);
    clcone_plan *pl = NULL;
    double t0 = clc_now_ms();
    clcone_status s = create_local(ctx, p, o, 0, &pl, err);
    return s ? s : solve_once(pl, t0, r, res, err);
}

clcone_status clcone_solve_scene(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o, double *r,
                                 clcone_result *res, clcone_error *err)
{
    CLCONE_REQUIRE(err, res);
    res->items = NULL;
    res->nprob = 0;
    CLCONE_REQUIRE(err, sc);
    CLCONE_REQUIRE(err, o);
    if (sc->ncontacts > 0) CLCONE_REQUIRE(err, r);
    clcone_plan *pl = NULL;
    double t0 = clc_now_ms();
    clcone_status s = create_scene(ctx, sc, o, 0, &pl, err);
    return s ? s : solve_once(pl, t0, r, res, err);
}
