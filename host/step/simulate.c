/* Time stepping of a world: semi-implicit Euler, every contact solve by
 * clcone_solve_scene (device or reference).
 *
 * Step n: contacts are detected at x_n; penetration beyond a slop is
 * reduced by moving the bodies apart (position projection, below); the
 * free velocity v* = v_n + h g is corrected by the contact impulses r,
 * v_{n+1} = v* + M^-1 J^T r; then x_{n+1} = x_n + h v_{n+1} and the
 * orientations turn by h omega_{n+1}.
 *
 * Stabilisation is by position projection, not a Baumgarte bias in q:
 * clcone_solve_scene forms q = J v* from the bodies and takes no per-
 * contact bias, and a bias would also feed energy into the velocities
 * (the solve could then raise the kinetic energy), whereas moving
 * positions leaves the velocities, and the energy, alone. The soft model
 * is the exception: its a_ref already pulls penetration back with the
 * stiffness k, and projecting as well would fight its rest penetration
 * (the bodies would move every step), so soft steps are not projected. */
#include "core/internal.h"
#include "core/sap.h"
#include "core/body_form.h"
#include "core/parallel.h"
#include "world/world_parts.h"
#include "solve/solve_entries.h"
#include <clcone/ext.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct keyed {
    unsigned long long key;
    int index;
} keyed;

struct clcone_sim {
    clcone_world *w;
    clcone_context *ctx;
    clcone_sim_options o;
    double *r;          /* 3 per contact of w->s, last solve */
    keyed *prev;        /* last step's keys, sorted, indexing r */
    int nprev;
    int step;
    clcone_scene last;  /* last step's contact problem and warm start */
    double *last_r0;
    /* the solver's state for the whole run, made at the first step with
     * contacts (its kernels run once then) and given each step's scene:
     * device buffers are kept, and only what changed is uploaded */
    clcone_plan *plan;
    /* the same for the steps solved in their local form (step_joins);
     * in clcone_sim_step_many, the batch's, on its first world's */
    clcone_plan *local_plan;
    double *vn;         /* soft model: normal velocities, vn_cap contacts */
    int vn_cap;
    clcone_sim_hooks h; /* clcone_sim_set_hooks */
};

void clcone_sim_set_hooks(clcone_sim *sim, const clcone_sim_hooks *h)
{
    memset(&sim->h, 0, sizeof sim->h);
    if (h) sim->h = *h;
}

clcone_world *clcone_sim_world(clcone_sim *sim)
{
    return sim->w;
}

const clcone_sim_options *clcone_sim_get_options(const clcone_sim *sim)
{
    return &sim->o;
}

void clcone_sim_set_reactions(clcone_sim *sim, double *r)
{
    free(sim->r);
    sim->r = r;
}

/* The step's kinetic energy at v (NULL: the bodies'), or the hook's. */
static double energy(const clcone_sim *sim, const double *v)
{
    return sim->h.energy ? sim->h.energy(sim->h.ctx, sim->w, v) : clcone_world_kinetic_energy(sim->w, v);
}

void clcone_sim_options_default(clcone_sim_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    clcone_options_default(&o->solve);
    o->solve.model = CLCONE_MODEL_CCP;
    o->solve.max_iter = 1000;
    o->margin = 1e-3;
    o->projection = 0.2;
    o->slop = 1e-4;
    o->warm_start = 1;
    o->threads = 1;
}

/* The solver table's stepping defaults (solve/contract.c: ccp's acgs at
 * 1e-4), then the solve's. */
void clcone_sim_options_resolve(clcone_options *o, const clcone_context *ctx)
{
    if (o) clc_contract_resolve_step(CLCONE_FORM_BIT(CLCONE_FORM_BODY), o, ctx);
}

clcone_status clcone_sim_create(clcone_world *w, clcone_context *ctx, const clcone_sim_options *o, clcone_sim **out,
                                clcone_error *err)
{
    CLCONE_REQUIRE(err, w);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, out);
    clcone_sim *s;
    clcone_status st;
    clcone_options so = o->solve;
    const clc_contract_row *row;
    *out = NULL;
    clcone_sim_options_resolve(&so, ctx);
    so.soft_dt = w->dt;
    if ((st = clcone_world_validate(w, err))
        || (st = clc_contract_validate(CLCONE_FORM_BIT(CLCONE_FORM_BODY), &so, ctx, &row, err)))
        return st;
    if (o->threads < 0 || o->threads > CLCONE_SIM_THREADS)
        return clc_fail(err, CLCONE_EINVAL, "simulation options: threads %d: 1 to %d (0: 1)", o->threads,
                           CLCONE_SIM_THREADS);
    if (!isfinite(o->margin) || o->margin < 0 || !isfinite(o->slop) || o->slop < 0 || !isfinite(o->projection) ||
        o->projection < 0 || o->projection > 1)
        return clc_fail(err, CLCONE_EINVAL,
                           "simulation options: margin %g and slop %g must be >= 0, projection %g in [0, 1]",
                           o->margin, o->slop, o->projection);
    s = clc_calloc(1, sizeof *s, err, "simulation");
    if (!s) return CLCONE_ENOMEM;
    s->w = w;
    s->ctx = ctx;
    s->o = *o;
    s->o.solve = so;
    *out = s;
    return CLCONE_OK;
}

void clcone_sim_free(clcone_sim *s)
{
    if (!s) return;
    free(s->r);
    free(s->prev);
    clcone_scene_free(&s->last);
    free(s->last_r0);
    clcone_plan_free(s->plan);
    clcone_plan_free(s->local_plan);
    free(s->vn);
    free(s);
}

const double *clcone_sim_reactions(const clcone_sim *s)
{
    return s ? s->r : NULL;
}

const clcone_scene *clcone_sim_last_scene(const clcone_sim *s, const double **r0)
{
    if (!s) return NULL;
    if (r0) *r0 = s->last_r0;
    return &s->last;
}

/* q <- normalize(q + h/2 (0, omega) q): one explicit step of the
 * orientation under world angular velocity omega. */
static void quat_integrate(double q[4], const double om[3], double h)
{
    double w = q[0], x = q[1], y = q[2], z = q[3], n;
    double a = 0.5 * h;
    q[0] = w + a * (-om[0] * x - om[1] * y - om[2] * z);
    q[1] = x + a * (om[0] * w + om[1] * z - om[2] * y);
    q[2] = y + a * (om[1] * w + om[2] * x - om[0] * z);
    q[3] = z + a * (om[2] * w + om[0] * y - om[1] * x);
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; ++k) q[k] /= n;
}

static int cmp_keyed(const void *a, const void *b)
{
    unsigned long long x = ((const keyed *)a)->key, y = ((const keyed *)b)->key;
    return (x > y) - (x < y);
}

int clcone_sim_warm_has(const clcone_sim *sim, unsigned long long key)
{
    keyed k = {key, 0};
    return sim->o.warm_start && sim->nprev && bsearch(&k, sim->prev, (size_t)sim->nprev, sizeof k, cmp_keyed);
}

int clcone_sim_warm_count(const clcone_sim *sim)
{
    return sim->nprev;
}

void clcone_sim_warm_entry(const clcone_sim *sim, int i, unsigned long long *key, double r[3])
{
    *key = sim->prev[i].key;
    memcpy(r, sim->r + 3 * (size_t)sim->prev[i].index, 3 * sizeof *r);
}

clcone_status clcone_sim_warm_add(clcone_sim *sim, const unsigned long long *keys, const double *r, int n,
                                  clcone_error *err)
{
    size_t cap = (size_t)sim->nprev + (size_t)n + 1;
    double *rr = clc_calloc(3 * cap, sizeof *rr, err, "warm starts");
    keyed *kk = rr ? clc_calloc(cap, sizeof *kk, err, "warm start keys") : NULL;
    int m = sim->nprev, u = 0;
    if (!kk) {
        free(rr);
        return CLCONE_ENOMEM;
    }
    if (m) {
        memcpy(rr, sim->r, 3 * (size_t)m * sizeof *rr);
        memcpy(kk, sim->prev, (size_t)m * sizeof *kk);
    }
    for (int i = 0; i < n; ++i) {
        keyed k = {keys[i], m};
        if (sim->nprev && bsearch(&k, sim->prev, (size_t)sim->nprev, sizeof k, cmp_keyed)) continue;
        memcpy(rr + 3 * (size_t)m, r + 3 * (size_t)i, 3 * sizeof *rr);
        kk[m++] = k;
    }
    /* a contact of two bodies that came from two ranks comes twice, the same */
    qsort(kk, (size_t)m, sizeof *kk, cmp_keyed);
    for (int i = 0; i < m; ++i)
        if (u == 0 || kk[u - 1].key != kk[i].key) kk[u++] = kk[i];
    free(sim->r);
    free(sim->prev);
    sim->r = rr;
    sim->prev = kk;
    sim->nprev = u;
    return CLCONE_OK;
}

/* Moves the bodies of penetrating contacts apart along the normals, by
 * `projection` of the depth beyond `slop`, shared by inverse mass. Each
 * body takes the mean of its corrections (Jacobi with averaging), so a
 * body squeezed from several sides is not pushed too far. */
static clcone_status project(clcone_world *w, const clcone_sim_options *o, clcone_error *err)
{
    int nb = w->s.nbodies;
    double *dx = NULL;
    int *cnt = NULL;
    if (o->projection == 0 || w->s.ncontacts == 0) return CLCONE_OK;
    dx = clc_calloc(3 * (size_t)nb + 1, sizeof *dx, err, "projection");
    cnt = dx ? clc_calloc((size_t)nb + 1, sizeof *cnt, err, "projection counts") : NULL;
    if (!cnt) {
        free(dx);
        return CLCONE_ENOMEM;
    }
    for (int c = 0; c < w->s.ncontacts; ++c) {
        const clcone_contact *ct = &w->s.contacts[c];
        double depth = -ct->gap - o->slop, ia, ib, corr;
        if (depth <= 0) continue;
        ia = w->s.bodies[ct->a].inv_mass;
        ib = ct->b >= 0 ? w->s.bodies[ct->b].inv_mass : 0.0;
        if (ia + ib == 0) continue;
        corr = o->projection * depth / (ia + ib);
        for (int k = 0; k < 3; ++k) dx[3 * (size_t)ct->a + k] += corr * ia * ct->normal[k];
        cnt[ct->a]++;
        if (ct->b >= 0 && ib > 0) {
            for (int k = 0; k < 3; ++k) dx[3 * (size_t)ct->b + k] -= corr * ib * ct->normal[k];
            cnt[ct->b]++;
        }
    }
    for (int i = 0; i < nb; ++i)
        if (cnt[i])
            for (int k = 0; k < 3; ++k) w->s.bodies[i].x[k] += dx[3 * (size_t)i + k] / cnt[i];
    free(dx);
    free(cnt);
    return CLCONE_OK;
}

static int usable(clcone_run_status st)
{
    return st == CLCONE_CONVERGED || st == CLCONE_MAXITER;
}

/* A step whose solve failed or diverged (info->solve) solved again from
 * the same warm start with the model's fallback, alone (see
 * clcone_step_info); the run's plans stay as they are. */
static clcone_status fall_back(clcone_sim *sim, const clcone_scene *sc, const clcone_options *so, double *r,
                               clcone_step_info *info, clcone_error *err)
{
    clcone_result res;
    clcone_options fo = *so;
    clcone_status st;
    if (usable(info->solve.status)) return CLCONE_OK;
    fo.solver = clc_contract_fallback(so, sim->ctx); /* the solver table's */
    if (fo.solver == CLCONE_SOLVER_DEFAULT) return CLCONE_OK;
    info->fell_back = 1;
    info->failed = info->solve;
    info->fallback = fo.solver;
    memcpy(r, sim->last_r0, 3 * (size_t)sc->ncontacts * sizeof *r);
    st = sim->h.solve ? sim->h.solve(sim->h.ctx, sc, &fo, r, &res, err)
                      : clcone_solve_scene(sim->ctx, sc, &fo, r, &res, err);
    if (st) return st;
    info->solve = res.items[0];
    info->solve.time_ms += info->failed.time_ms;
    info->solve.iters += info->failed.iters;
    clcone_result_free(&res);
    return CLCONE_OK;
}

/* Solves sc from the warm start r0 into r (3n) on the run's body-form
 * plan (or the hook); falls back when the solve fails or diverges. */
static clcone_status solve_step(clcone_sim *sim, const clcone_scene *sc, const clcone_options *so, double *r,
                                clcone_step_info *info, clcone_error *err)
{
    clcone_result res;
    clcone_status st;
    double t0 = clc_now_ms();
    if (sim->h.solve) {
        st = sim->h.solve(sim->h.ctx, sc, so, r, &res, err);
    } else if (!sim->plan) {
        st = clcone_plan_create_scene(sim->ctx, sc, so, &sim->plan, err);
    } else {
        clcone_plan_set_start(sim->plan, so->warm_start, so->soft_v0);
        st = clcone_plan_set_scene(sim->plan, sc, err);
    }
    if (st || (!sim->h.solve && (st = clcone_plan_solve(sim->plan, r, &res, err)))) return st;
    info->solve = res.items[0];
    info->setup_ms = clc_now_ms() - t0 - info->solve.time_ms;
    clcone_result_free(&res);
    return fall_back(sim, sc, so, r, info, err);
}

/* The step's reactions r (3 a contact) start from the last step's where a
 * contact has the same pair and feature (key) as one of its contacts (the
 * frame follows the normal, which turns little in a step), zero elsewhere;
 * cur receives this step's keys, unsorted. */
static void warm_start(const clcone_sim *sim, const unsigned long long *keys, int n, keyed *cur, double *r,
                       clcone_step_info *info)
{
    for (int c = 0; c < n; ++c) {
        keyed k = {keys[c], c}, *hit;
        cur[c] = k;
        if (!sim->o.warm_start || !sim->nprev) continue;
        hit = bsearch(&k, sim->prev, (size_t)sim->nprev, sizeof *hit, cmp_keyed);
        if (!hit) continue;
        memcpy(r + 3 * (size_t)c, sim->r + 3 * (size_t)hit->index, 3 * sizeof *r);
        info->warm_matched++;
    }
}

/* v_{n+1} = v* + dv, then x and the orientations move by h v_{n+1} (static
 * bodies stay); returns the kinetic energy at v_{n+1}. */
static double advance(const clcone_sim *sim, const clcone_scene *sc, const double *dv)
{
    clcone_world *w = sim->w;
    int nb = w->s.nbodies;
    double ke;
    for (int i = 0; i < nb; ++i) {
        clcone_body *b = &w->s.bodies[i];
        if (w->shapes[i].mass == 0.0) continue;
        for (int k = 0; k < 6; ++k) b->v[k] = sc->bodies[i].v[k] + dv[6 * (size_t)i + k];
    }
    ke = energy(sim, NULL);
    for (int i = 0; i < nb; ++i) {
        clcone_body *b = &w->s.bodies[i];
        if (w->shapes[i].mass == 0.0) continue;
        for (int k = 0; k < 3; ++k) b->x[k] += w->dt * b->v[k];
        quat_integrate(w->shapes[i].quat, b->v + 3, w->dt);
        clc_body_set_mass(b, &w->shapes[i]);
    }
    return ke;
}

/* One world's step between its detection (step_begin) and its update
 * (step_end): the contact problem, its warm start and what the update
 * needs. */
typedef struct pending {
    clcone_scene sc;
    clcone_options so;
    unsigned long long *keys;
    keyed *cur;
    double *r, *dv, *x0;
    clcone_problem local; /* joins: the scene's local form */
    int joins;            /* solved in its local form (step_joins) */
} pending;

static void pending_free(pending *pd)
{
    clcone_scene_free(&pd->sc);
    clcone_problem_free(&pd->local);
    free(pd->keys);
    free(pd->r);
    free(pd->cur);
    free(pd->dv);
    free(pd->x0);
}

/* Whether a step's contact problem is solved in its local form: on a
 * device, where the table offers the model and solver on a batch of
 * scenes (CLCONE_FORM_SCENES), up to CLCONE_SCENES_MAX_CONTACTS. Small
 * problems spend a body-form solve's time in launches; as local forms
 * the steps of many worlds share one device batch (clcone_sim_step_many),
 * and a world stepped alone takes the same path, so that it gets the same
 * bits. Two rows keep the body form: those that also run a scene in parts
 * over MPI ranks (row->parts), so that a run over ranks ends where one
 * process does, and soft's, whose a_ref reads each world's contact
 * velocities at the step's start (soft_v0), which the batch's one plan
 * does not take per world. */
static int step_joins(const clcone_sim *sim, const clcone_scene *sc, const clcone_options *so)
{
    const clc_contract_row *row = clc_contract_find(CLCONE_FORM_BIT(CLCONE_FORM_SCENES), so->model, so->solver);
    return sim->ctx && !sim->h.solve && row && row->offer.device && !row->parts && so->model != CLCONE_MODEL_SOFT
           && sc->ncontacts > 0 && sc->ncontacts <= CLCONE_SCENES_MAX_CONTACTS;
}

/* Detection, projection, warm start and the step's contact problem into
 * pd (zeroed on entry). */
static clcone_status step_begin(clcone_sim *sim, pending *pd, clcone_step_info *info, clcone_error *err)
{
    clcone_world *w = sim->w;
    double t0 = clc_now_ms();
    int n, nb, soft = sim->o.solve.model == CLCONE_MODEL_SOFT,
        projected = !soft && sim->o.solve.model != CLCONE_MODEL_SAP;
    clcone_status st;

    memset(info, 0, sizeof *info);
    pd->so = sim->o.solve;
    info->step = sim->step + 1;
    info->fallback = CLCONE_SOLVER_DEFAULT;
    if ((st = sim->h.detect ? sim->h.detect(sim->h.ctx, w, sim->o.margin, &pd->keys, err)
                            : clcone_world_detect(w, sim->o.margin, &pd->keys, err)))
        return st;
    n = w->s.ncontacts;
    nb = w->s.nbodies; /* a hook may have changed the bodies */
    info->contacts = n;
    for (int c = 0; c < n; ++c) info->max_penetration = fmax(info->max_penetration, -w->s.contacts[c].gap);
    /* positions before the projection, restored when the step is not applied */
    if (!(pd->x0 = clc_calloc(3 * (size_t)nb + 1, sizeof *pd->x0, err, "positions"))) return CLCONE_ENOMEM;
    for (int i = 0; i < nb; ++i) memcpy(pd->x0 + 3 * (size_t)i, w->s.bodies[i].x, sizeof w->s.bodies[i].x);
    if (projected && (st = project(w, &sim->o, err))) return st;
    info->detect_ms = clc_now_ms() - t0;

    pd->r = clc_calloc(3 * (size_t)n + 1, sizeof *pd->r, err, "reactions");
    pd->cur = pd->r ? clc_calloc((size_t)n + 1, sizeof *pd->cur, err, "contact keys") : NULL;
    pd->dv = pd->cur ? clc_calloc(6 * (size_t)nb + 1, sizeof *pd->dv, err, "velocity change") : NULL;
    if (pd->dv && soft && n > sim->vn_cap) {
        /* the plan reads them at the solve: kept in the stepper */
        free(sim->vn);
        sim->vn_cap = 0;
        if ((sim->vn = clc_calloc((size_t)n, sizeof *sim->vn, err, "normal velocities"))) sim->vn_cap = n;
    }
    if (!pd->dv || (soft && n > sim->vn_cap)) return CLCONE_ENOMEM;
    warm_start(sim, pd->keys, n, pd->cur, pd->r, info);
    pd->so.warm_start = info->warm_matched > 0;
    if (soft) {
        clc_scene_normal_velocities(&w->s, NULL, sim->vn);
        pd->so.soft_v0 = sim->vn;
    }

    if ((st = clcone_world_contact_scene(w, &pd->sc, err))) return st;
    /* kinetic energy at v* (dv is scratch until the solve fills it) */
    for (int i = 0; i < nb; ++i) memcpy(pd->dv + 6 * (size_t)i, pd->sc.bodies[i].v, 6 * sizeof *pd->dv);
    info->ke_free = energy(sim, pd->dv);
    free(sim->last_r0);
    if (!(sim->last_r0 = clc_calloc(3 * (size_t)n + 1, sizeof *pd->r, err, "warm start copy"))) return CLCONE_ENOMEM;
    memcpy(sim->last_r0, pd->r, 3 * (size_t)n * sizeof *pd->r);
    if ((pd->joins = info->local = step_joins(sim, &pd->sc, &pd->so))) {
        t0 = clc_now_ms();
        if ((st = clcone_scene_to_local(&pd->sc, &pd->local, err))) return st;
        info->setup_ms = clc_now_ms() - t0;
    }
    return CLCONE_OK;
}

/* The step applied from pd's solved reactions (info->solve), or, when
 * its solve is not usable, the positions put back. */
static void step_end(clcone_sim *sim, pending *pd, clcone_step_info *info)
{
    clcone_world *w = sim->w;
    int n = w->s.ncontacts, nb = w->s.nbodies;
    if (n > 0) {
        if (!usable(info->solve.status)) {
            /* never applied: the caller sees the status and the old state */
            for (int i = 0; i < nb; ++i) memcpy(w->s.bodies[i].x, pd->x0 + 3 * (size_t)i, sizeof w->s.bodies[i].x);
            info->ke_after = info->ke_free;
            return;
        }
        clcone_scene_apply_impulses(&pd->sc, pd->r, pd->dv);
    } else {
        info->solve.status = CLCONE_CONVERGED;
        memset(pd->dv, 0, 6 * (size_t)nb * sizeof *pd->dv);
    }
    info->applied = 1;
    info->ke_after = advance(sim, &pd->sc, pd->dv);
    qsort(pd->cur, (size_t)n, sizeof *pd->cur, cmp_keyed);
    free(sim->r);
    free(sim->prev);
    sim->r = pd->r;
    sim->prev = pd->cur;
    sim->nprev = n;
    pd->r = NULL;
    pd->cur = NULL;
    sim->step++;
    clcone_scene_free(&sim->last);
    sim->last = pd->sc;
    memset(&pd->sc, 0, sizeof pd->sc);
}

/* The local forms of the worlds whose steps join (pd[i].joins), as one
 * batch on the local plan of the first of them, warm-started from their
 * r (zeros where nothing matched, as a cold start gives); each world's
 * result and reactions back, then its fallback where it failed. */
static clcone_status solve_joined(clcone_sim *const *sims, int n, pending *pd, clcone_step_info *info,
                                  clcone_error *err)
{
    const clcone_problem **parts = clc_calloc((size_t)n + 1, sizeof *parts, err, "batch of worlds");
    clcone_sim *owner = NULL;
    clcone_options so;
    clcone_result res;
    clcone_status st = parts ? CLCONE_OK : CLCONE_ENOMEM;
    double *r = NULL, t0 = clc_now_ms(), setup;
    size_t len = 0;
    int k = 0;
    memset(&res, 0, sizeof res);
    for (int i = 0; i < n && !st; ++i)
        if (pd[i].joins) {
            if (!owner) { /* the batch's plan and options are its first world's */
                owner = sims[i];
                so = pd[i].so;
            }
            parts[k++] = &pd[i].local;
            len += 3 * (size_t)pd[i].local.n;
        }
    if (st || k == 0) goto out;
    so.warm_start = 1;
    if (!(r = clc_calloc(len + 1, sizeof *r, err, "reactions of the batch"))) {
        st = CLCONE_ENOMEM;
        goto out;
    }
    len = 0;
    for (int i = 0; i < n; ++i)
        if (pd[i].joins) {
            memcpy(r + len, pd[i].r, 3 * (size_t)pd[i].local.n * sizeof *r);
            len += 3 * (size_t)pd[i].local.n;
        }
    if (owner->local_plan) {
        clcone_plan_set_start(owner->local_plan, 1, NULL);
        st = clc_plan_set_problems(owner->local_plan, parts, k, err);
    } else {
        clcone_problem one;
        memset(&one, 0, sizeof one);
        if (!(st = clcone_batch_concat(parts, k, &one, err)))
            st = clcone_plan_create(owner->ctx, &one, &so, &owner->local_plan, err);
        clcone_problem_free(&one);
    }
    setup = (clc_now_ms() - t0) / k;
    if (st || (st = clcone_plan_solve(owner->local_plan, r, &res, err))) {
        if (n > 1) clc_error_prefix(err, "the batch of %d worlds' steps (%zu contacts)", k, len / 3);
        goto out;
    }
    len = 0;
    for (int i = 0, j = 0; i < n && !st; ++i)
        if (pd[i].joins) {
            memcpy(pd[i].r, r + len, 3 * (size_t)pd[i].local.n * sizeof *r);
            len += 3 * (size_t)pd[i].local.n;
            info[i].solve = res.items[j++];
            info[i].setup_ms += setup;
            st = fall_back(sims[i], &pd[i].sc, &pd[i].so, pd[i].r, &info[i], err);
            if (st && n > 1) clc_error_prefix(err, "world %d", i);
        }
out:
    clcone_result_free(&res);
    free(parts);
    free(r);
    return st;
}

/* The worlds of one clcone_sim_step_many, for their host parts on
 * threads: item i touches world i, its stepper and its pending step only. */
typedef struct worlds_job {
    clcone_sim *const *sims;
    pending *pd;
    clcone_step_info *info;
} worlds_job;

static clcone_status begin_item(void *job, int i, clcone_error *err)
{
    worlds_job *J = job;
    return step_begin(J->sims[i], &J->pd[i], &J->info[i], err);
}

/* World i's step where it did not join the batch, on its own plan. */
static clcone_status solve_item(void *job, int i, clcone_error *err)
{
    worlds_job *J = job;
    pending *pd = &J->pd[i];
    if (pd->joins || pd->sc.ncontacts == 0) return CLCONE_OK;
    return solve_step(J->sims[i], &pd->sc, &pd->so, pd->r, &J->info[i], err);
}

/* The threads for the worlds' own solves: on the reference each world's
 * plan is its own, so they run side by side; a device's plans take turns
 * on it, hooks (MPI) solve over ranks, and a history or progress callback
 * shared by the worlds would be written from several threads. */
static int solve_threads(clcone_sim *const *sims, int n, int threads)
{
    const clcone_options *o = &sims[0]->o.solve;
    if (sims[0]->ctx || o->history || o->progress) return 1;
    for (int i = 0; i < n; ++i)
        if (sims[i]->h.solve) return 1;
    return threads;
}

static clcone_status end_item(void *job, int i, clcone_error *err)
{
    worlds_job *J = job;
    (void)err;
    step_end(J->sims[i], &J->pd[i], &J->info[i]);
    return CLCONE_OK;
}

/* Whether two worlds' solve options agree on what their steps' batch
 * reads (a world that does not join reads its own). */
static int same_batch_options(const clcone_options *a, const clcone_options *b)
{
    return a->model == b->model && a->solver == b->solver && a->facets == b->facets && a->fit == b->fit
           && a->tol == b->tol && a->max_iter == b->max_iter && a->check_every == b->check_every
           && a->max_seconds == b->max_seconds && a->history == b->history && a->progress == b->progress
           && a->progress_user == b->progress_user && a->cancel == b->cancel;
}

/* CLCONE_EINVAL when two of the n steppers step one world (the same
 * stepper twice, or two on one world): the worlds sorted by address, in
 * O(n log n), since a batch may hold thousands. */
static clcone_status distinct_worlds(clcone_sim *const *sims, int n, clcone_error *err)
{
    keyed *k;
    clcone_status st = CLCONE_OK;
    if (n < 2) return CLCONE_OK;
    if (!(k = clc_calloc((size_t)n, sizeof *k, err, "worlds of the batch"))) return CLCONE_ENOMEM;
    for (int i = 0; i < n; ++i) k[i] = (keyed){(unsigned long long)(uintptr_t)sims[i]->w, i};
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    for (int i = 1; i < n && !st; ++i)
        if (k[i].key == k[i - 1].key)
            st = clc_fail(err, CLCONE_EINVAL, "worlds %d and %d are the same world",
                             k[i].index < k[i - 1].index ? k[i].index : k[i - 1].index,
                             k[i].index > k[i - 1].index ? k[i].index : k[i - 1].index);
    free(k);
    return st;
}

clcone_status clcone_sim_step_many(clcone_sim *const *sims, int n, clcone_step_info *info, clcone_error *err)
{
    CLCONE_REQUIRE(err, sims);
    CLCONE_REQUIRE(err, info);
    pending *pd;
    worlds_job job;
    clcone_status st = CLCONE_OK;
    int threads, failed = -1;
    if (n < 1) return clc_fail(err, CLCONE_EINVAL, "a step of %d worlds: at least one needed", n);
    for (int i = 0; i < n; ++i) {
        if (!sims[i]) return clc_fail(err, CLCONE_EINVAL, "world %d: no simulation (NULL)", i);
        if (n > 1 && sims[i]->h.step)
            return clc_fail(err, CLCONE_ENOTSUP, "world %d: a simulation over MPI ranks steps alone", i);
        if (sims[i]->ctx != sims[0]->ctx)
            return clc_fail(err, CLCONE_EINVAL, "world %d: its device is not world 0's (one batch, one device)", i);
        if (!same_batch_options(&sims[i]->o.solve, &sims[0]->o.solve))
            return clc_fail(err, CLCONE_EINVAL,
                               "world %d: its solve options are not world 0's (one batch: one model, solver, "
                               "tolerance, caps and cancel flag)",
                               i);
    }
    if ((st = distinct_worlds(sims, n, err))) return st;
    if (n == 1 && sims[0]->h.step) return sims[0]->h.step(sims[0]->h.ctx, info, err);
    if (!(pd = clc_calloc((size_t)n, sizeof *pd, err, "steps of the worlds"))) return CLCONE_ENOMEM;
    job = (worlds_job){sims, pd, info};
    threads = sims[0]->o.threads > 1 ? sims[0]->o.threads : 1;
    if ((st = clc_each_item(threads, n, begin_item, &job, &failed, err)) && n > 1)
        clc_error_prefix(err, "world %d", failed);
    if (!st) st = solve_joined(sims, n, pd, info, err);
    if (!st && (st = clc_each_item(solve_threads(sims, n, threads), n, solve_item, &job, &failed, err)) && n > 1)
        clc_error_prefix(err, "world %d", failed);
    if (!st) clc_each_item(threads, n, end_item, &job, NULL, err);
    for (int i = 0; i < n; ++i) pending_free(&pd[i]);
    free(pd);
    return st;
}

clcone_status clcone_sim_step(clcone_sim *sim, clcone_step_info *info, clcone_error *err)
{
    CLCONE_REQUIRE(err, sim);
    return clcone_sim_step_many(&sim, 1, info, err);
}
