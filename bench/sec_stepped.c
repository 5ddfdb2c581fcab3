/* Section 3, second part: N small worlds stepped together
 * (clcone_sim_step_many: their small steps' local forms one device batch)
 * against the same worlds stepped one after another on the device and on
 * the reference; world-steps per second, wall and CPU time, and whether
 * every world of the batch ends in the state it reaches alone. Then where
 * a scene's local form stops paying: one scene solved in its body form
 * and in its local form, the boundary of CLCONE_SCENES_MAX_CONTACTS. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <clcone/ext.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The worlds of a row: piles of 3-12 spheres, or of 20 spheres. */
typedef enum { SMALL_PILES, PILES_OF_20 } world_kind;

static clcone_status make_world(world_kind kind, int k, clcone_world *w, clcone_error *err)
{
    clcone_gen_params gp;
    clcone_gen_params_default(&gp);
    gp.n = kind == SMALL_PILES ? 3 + k % 10 : 20;
    gp.seed = (unsigned)k + 1;
    return clcone_world_generate("pile", &gp, w, err);
}

/* One way to step n worlds `steps` times: together (one call a step) or
 * each alone in turn, on ctx (NULL: the reference). Wall and CPU seconds
 * into *wall and *cpu; the worlds are left in w. 0, or -1 after a
 * failure noted. */
static int step_worlds(bench *b, FILE *f, clcone_context *ctx, world_kind kind, int n, int steps, int together,
                       clcone_world *w, double *wall, double *cpu, size_t *held)
{
    clcone_sim **sims = calloc((size_t)n, sizeof *sims);
    clcone_step_info *in = calloc((size_t)n, sizeof *in);
    clcone_sim_options so;
    clcone_error e;
    double t0;
    clock_t c0;
    int rc = -1;
    if (!sims || !in) {
        bench_fail(b, f, "out of memory for %d worlds", n);
        goto out;
    }
    clcone_sim_options_default(&so);
    /* the caller frees the worlds, made or not */
    for (int k = 0; k < n; ++k)
        if (make_world(kind, k, &w[k], &e) || clcone_sim_create(&w[k], ctx, &so, &sims[k], &e)) {
            bench_fail(b, f, "world %d: %s", k, e.msg);
            goto out;
        }
    t0 = bench_now();
    c0 = clock();
    for (int t = 0; t < steps; ++t) {
        if (together && clcone_sim_step_many(sims, n, in, &e)) {
            bench_fail(b, f, "%d worlds together, step %d: %s", n, t + 1, e.msg);
            goto out;
        }
        for (int k = 0; !together && k < n; ++k)
            if (clcone_sim_step(sims[k], &in[k], &e)) {
                bench_fail(b, f, "world %d alone, step %d: %s", k, t + 1, e.msg);
                goto out;
            }
    }
    *wall = bench_now() - t0;
    *cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    *held = clcone_context_memory(ctx);
    rc = 0;
out:
    for (int k = 0; k < n && sims; ++k) clcone_sim_free(sims[k]);
    free(sims);
    free(in);
    return rc;
}

/* Whether every world of a equals b's, bit for bit (positions, velocities). */
static int same_worlds(const clcone_world *a, const clcone_world *b, int n)
{
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < a[k].s.nbodies; ++i)
            if (memcmp(a[k].s.bodies[i].x, b[k].s.bodies[i].x, sizeof a[k].s.bodies[i].x)
                || memcmp(a[k].s.bodies[i].v, b[k].s.bodies[i].v, sizeof a[k].s.bodies[i].v))
                return 0;
    return 1;
}

static void free_worlds(clcone_world *w, int n)
{
    for (int k = 0; k < n; ++k) clcone_world_free(&w[k]);
    memset(w, 0, (size_t)n * sizeof *w);
}

/* A row: n worlds of a kind, stepped together on the device, one after
 * another on the device, and on the reference. */
static void stepped_row(bench *b, FILE *f, world_kind kind, int n, int steps)
{
    clcone_world *wt = calloc((size_t)n, sizeof *wt), *wa = calloc((size_t)n, sizeof *wa);
    double tw = 0, tc = 0, aw = 0, ac = 0, rw = 0, rc = 0;
    size_t held = 0, unused;
    int ok;
    if (!wt || !wa) {
        bench_fail(b, f, "out of memory for %d worlds", n);
        free(wt);
        free(wa);
        return;
    }
    ok = step_worlds(b, f, b->fctx, kind, n, steps, 1, wt, &tw, &tc, &held) == 0
         && step_worlds(b, f, b->fctx, kind, n, steps, 0, wa, &aw, &ac, &unused) == 0;
    if (ok) {
        int same = same_worlds(wt, wa, n);
        free_worlds(wa, n);
        ok = step_worlds(b, f, NULL, kind, n, steps, 1, wa, &rw, &rc, &unused) == 0;
        if (ok)
            fprintf(f,
                    "| %s | %d | %.0f | %.0f | %.0f | %.0f / %.0f ms | %.0f / %.0f ms | %.0f / %.0f ms | %.2fx | %.1f "
                    "| %s |\n",
                    kind == SMALL_PILES ? "piles of 3-12" : "piles of 20", n, n * steps / tw, n * steps / aw,
                    n * steps / rw, 1e3 * tw, 1e3 * tc, 1e3 * aw, 1e3 * ac, 1e3 * rw, 1e3 * rc, rw / tw,
                    held / 1024.0 / n, same ? "yes" : "**no**");
    }
    free_worlds(wt, n);
    free_worlds(wa, n);
    free(wt);
    free(wa);
}

void bench_worlds_stepped(bench *b, FILE *f)
{
    static const int counts[4] = {1, 16, 256, 1024};
    int steps = b->quick ? 10 : 50, ncounts = b->quick ? 2 : 4;
    if (!b->fctx) return;
    fprintf(f, "\n### Worlds stepped together\n\n"
               "N generated piles (`gen pile`, seed k+1) stepped %d times with `clcone_sim_step_many` (`simulate "
               "SCENE SCENE...`; ccp, acgs, tol 1e-4 a step, float) on %s: together (their steps of at most %d "
               "contacts one device batch), the same worlds one after another on the device, and on the CPU "
               "reference. World-steps per second; wall / CPU seconds; the last two columns: the reference's "
               "time over the batch's, the device memory a world's share of the batch holds after the last step "
               "(`clcone_context_memory` over N; a batch past the device's memory is refused before it is "
               "allocated), and whether every world of the batch ends in the state it reaches alone, to the "
               "bit.\n\n"
               "| worlds | N | together, world-steps/s | one after another | reference | together wall / CPU "
               "| one after another | reference | ref / together | KiB a world | same bits |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n",
            steps, b->dev_short, CLCONE_SCENES_MAX_CONTACTS);
    for (int kind = 0; kind < 2; ++kind)
        for (int i = 0; i < ncounts; ++i) stepped_row(b, f, (world_kind)kind, counts[i], steps);
}

/* ms of one solve of plan pl from r = 0 (its plan warmed up), its
 * iterations into *iters; -1 after a failure noted. */
static double solve_once(bench *b, FILE *f, clcone_plan *pl, int n, int *iters)
{
    double *r = calloc(3 * (size_t)n + 1, sizeof *r), t = -1;
    clcone_result res;
    clcone_error e;
    memset(&res, 0, sizeof res);
    if (!r) bench_fail(b, f, "out of memory for %d contacts", n);
    else if (clcone_plan_warm_up(pl, &e)) bench_fail(b, f, "warm-up: %s", e.msg);
    else {
        t = bench_now();
        if (clcone_plan_solve(pl, r, &res, &e)) {
            bench_fail(b, f, "solve: %s", e.msg);
            t = -1;
        } else {
            t = 1e3 * (bench_now() - t);
            *iters = res.items[0].iters;
        }
    }
    clcone_result_free(&res);
    free(r);
    return t;
}

/* A row: a pile of n spheres (seed 3) solved once as a scene and once
 * as its local form, with the model's sweeps (ccp acgs, coulomb cgs). */
static void local_or_body_row(bench *b, FILE *f, int n, clcone_model model)
{
    clcone_gen_params gp;
    clcone_world w;
    clcone_scene s;
    clcone_problem p;
    clcone_plan *pb = NULL, *pl = NULL;
    clcone_options o;
    clcone_error e;
    int ib = 0, il = 0;
    double tb, tl;
    memset(&w, 0, sizeof w);
    memset(&s, 0, sizeof s);
    memset(&p, 0, sizeof p);
    clcone_gen_params_default(&gp);
    gp.n = n;
    gp.seed = 3;
    clcone_options_default(&o);
    o.model = model;
    o.solver = model == CLCONE_MODEL_CCP ? CLCONE_SOLVER_ACGS : CLCONE_SOLVER_CGS;
    o.tol = 1e-4;
    o.max_seconds = 0;
    if (clcone_world_generate("pile", &gp, &w, &e) || clcone_world_contact_scene(&w, &s, &e)
        || clcone_scene_to_local(&s, &p, &e) || clcone_plan_create_scene(b->fctx, &s, &o, &pb, &e)
        || clcone_plan_create(b->fctx, &p, &o, &pl, &e))
        bench_fail(b, f, "pile of %d: %s", n, e.msg);
    else if ((tb = solve_once(b, f, pb, s.ncontacts, &ib)) >= 0 && (tl = solve_once(b, f, pl, s.ncontacts, &il)) >= 0)
        fprintf(f, "| %d | %s, %s | %.2f ms, %d | %.2f ms, %d | %.2fx |\n", s.ncontacts, clcone_model_name(model),
                clcone_solver_name(o.solver), tb, ib, tl, il, tb / tl);
    clcone_plan_free(pb);
    clcone_plan_free(pl);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    clcone_world_free(&w);
}

void bench_local_or_body(bench *b, FILE *f)
{
    static const int piles[] = {10, 40, 160, 320, 640};
    int npiles = b->quick ? 4 : 5;
    if (!b->fctx) return;
    fprintf(f, "\n### Where a scene stops joining in its local form\n\n"
               "One pile (`gen pile --n N --seed 3`) solved from r = 0 at tol 1e-4 on %s (float) as a scene (the "
               "body form's kernels) and as its local form W, q, mu (what a scene of at most %d contacts becomes "
               "in a batch of scenes, `CLCONE_SCENES_MAX_CONTACTS`), with the model's sweeps; ms and iterations, "
               "plans made and warmed up beforehand. coulomb's 1,920 contacts are left out: cgs there takes "
               "tens of seconds in either form.\n\n"
               "| contacts | model, solver | body form | local form | body / local |\n|---|---|---|---|---|\n",
            b->dev_short, CLCONE_SCENES_MAX_CONTACTS);
    for (int i = 0; i < npiles; ++i) local_or_body_row(b, f, piles[i], CLCONE_MODEL_CCP);
    for (int i = 0; i < npiles && piles[i] <= 320; ++i) local_or_body_row(b, f, piles[i], CLCONE_MODEL_COULOMB);
}
