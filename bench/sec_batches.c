/* Section 3: batches of small scenes (16-64 contacts each: box stacks of
 * 4..16 boxes and piles of a few spheres, in local form) solved on the
 * device as one batch against one by one: throughput ratio, and whether
 * each problem of the batch stops where it stops alone. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NKINDS 28 /* 13 stacks (4..16 boxes) and 15 piles */

static clcone_status make_small(int kind, clcone_problem *p, char *desc, size_t len, clcone_error *err)
{
    clcone_scene s;
    clcone_status st;
    if (kind < 13) {
        snprintf(desc, len, "stack of %d boxes", 4 + kind);
        st = clc_gen_stack(4 + kind, 0.5, 0.01, &s, err);
    } else {
        snprintf(desc, len, "pile of %d spheres", 6 + (kind - 13));
        st = clc_gen_pile(6 + (kind - 13), 0.5, 0.01, 0.1, (unsigned)kind, &s, err);
    }
    if (st) return st;
    st = clcone_scene_to_local(&s, p, err);
    clcone_scene_free(&s);
    return st;
}

typedef struct solver_pick {
    clcone_model model;
    clcone_solver solver;
    double tol;
} solver_pick;

static const int COUNTS[4] = {1, 64, 1024, 8192};
static const solver_pick PICKS[2] = {{CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-4},
                                     {CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, 1e-4}};

/* One run of the section: the distinct scenes, their plans alone (device
 * and reference, per pick) and the measured rows. */
typedef struct batches {
    bench *b;
    FILE *f;
    clcone_problem kinds[NKINDS];
    int nk, ncounts;
    double one_cap, budget, t_start;
    clcone_options opts[2];
    clcone_plan *dplan[2][NKINDS], *rplan[2][NKINDS];
    int alone[2][NKINDS], have[2][4];
    double rsb[2][4], rs1[2][4], rsr[2][4], prev_tb[2];
    int prev_K[2];
    double warm_s;
    int unconv[2], rows[2];
} batches;

/* The distinct small scenes; 0, or -1 after a failure noted. */
static int batches_make_kinds(batches *S, int *cmin, int *cmax)
{
    char desc[128];
    clcone_error err;
    *cmin = 1 << 30;
    *cmax = 0;
    for (int k = 0; k < NKINDS; ++k) {
        if (make_small(k, &S->kinds[k], desc, sizeof desc, &err)) {
            bench_fail(S->b, S->f, "%s: %s", desc, err.msg);
            return -1;
        }
        S->nk++;
        if (S->kinds[k].n < *cmin) *cmin = S->kinds[k].n;
        if (S->kinds[k].n > *cmax) *cmax = S->kinds[k].n;
    }
    return 0;
}

static void batches_intro(const batches *S, int cmin, int cmax)
{
    FILE *f = S->f;
    fprintf(f, "Scenes: %d distinct small scenes, box stacks of 4..16 boxes (clc_gen_stack) and piles of 6..20 "
               "spheres (clc_gen_pile), %d..%d contacts each, converted with clcone_scene_to_local; a batch of K "
               "takes scene i mod %d for i < K and is one clcone_batch_concat. Device %s, float, tol 1e-4; the "
               "reference in double. Every time is clcone_plan_solve on plans made untimed first (one per batch, "
               "one per distinct scene on each backend: upload, colouring and each kernel's first launch are "
               "set-up, not solve). 'One batch' is one solve of the batch's plan; 'one by one' one solve per scene "
               "of that scene's plan, on the device or the reference (capped at %.0f s of solves: the scenes/s "
               "figure is over the scenes done).\n\n",
            NKINDS, cmin, cmax, NKINDS, S->b->dev_name, S->one_cap);
    fprintf(f, "| device | precision | model | solver | scenes | contacts | one batch | scenes/s batch | device one by "
               "one (scenes done) | scenes/s device one by one | batch / device one by one | reference one by one "
               "(scenes done) | scenes/s reference | batch / reference | same iterations as alone |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

/* Per pick, the plans of every distinct scene on both backends, and each
 * scene's iterations alone on the device. */
static void batches_plans(batches *S)
{
    clcone_error err;
    for (int pi = 0; pi < 2; ++pi) {
        clcone_options *o = &S->opts[pi];
        clcone_options_default(o);
        o->model = PICKS[pi].model;
        o->solver = PICKS[pi].solver;
        o->tol = PICKS[pi].tol;
        o->max_iter = 1000; /* the same cap alone and in the batch */
        for (int k = 0; k < S->nk; ++k) {
            double *r = calloc(3 * (size_t)S->kinds[k].n, sizeof *r), tw = bench_now();
            clcone_options ro = *o;
            clcone_result res;
            S->alone[pi][k] = -1;
            if (!r) continue;
            ro.solver = CLCONE_SOLVER_DEFAULT;
            ro.tol = o->tol;
            if (clcone_plan_create(S->b->fctx, &S->kinds[k], o, &S->dplan[pi][k], &err)
                || clcone_plan_create(NULL, &S->kinds[k], &ro, &S->rplan[pi][k], &err)
                || clcone_plan_solve(S->dplan[pi][k], r, &res, &err)) {
                bench_fail(S->b, S->f, "scene kind %d: %s", k, err.msg);
            } else {
                S->alone[pi][k] = res.items[0].iters;
                S->warm_s += bench_now() - tw;
                if (res.items[0].status != CLCONE_CONVERGED) S->unconv[pi]++;
                clcone_result_free(&res);
            }
            free(r);
        }
    }
}

/* The K scenes of a batch solved one by one with their own plans, on the
 * device (side 0) and the reference (side 1), each side until one_cap:
 * the scenes done and the time taken per side. */
static void batches_one_by_one(batches *S, int pi, int K, double *r, int done[2], double t[2])
{
    clcone_error err;
    for (int side = 0; side < 2; ++side) {
        double t0 = bench_now();
        for (int i = 0; i < K && bench_now() - t0 < S->one_cap; ++i) {
            clcone_plan *pl = side ? S->rplan[pi][i % S->nk] : S->dplan[pi][i % S->nk];
            clcone_result r1;
            if (!pl || clcone_plan_solve(pl, r, &r1, &err)) {
                bench_fail(S->b, S->f, "scene %d alone: %s", i, pl ? err.msg : "no plan");
                break;
            }
            clcone_result_free(&r1);
            ++done[side];
        }
        t[side] = bench_now() - t0;
    }
}

/* One row: a batch of COUNTS[ci] scenes with pick pi, against one by one. */
static void batches_row(batches *S, int ci, int pi)
{
    bench *b = S->b;
    FILE *f = S->f;
    clcone_options o = S->opts[pi];
    const int *alone_iters = S->alone[pi];
    int K = COUNTS[ci], done[2] = {0, 0}, same = 0;
    double est = S->prev_tb[pi] * K / S->prev_K[pi] * 2 + 2 * S->one_cap;
    const clcone_problem **parts = calloc((size_t)K, sizeof *parts);
    clcone_problem batch;
    clcone_plan *bplan = NULL;
    double *r = NULL, tb = 0, t[2] = {0, 0};
    clcone_result res;
    clcone_error err;
    char buf[64], buf2[64], buf3[64];
    memset(&batch, 0, sizeof batch);
    if (bench_now() - S->t_start + est > S->budget) {
        fprintf(f, "| %s | float | %s | %s | %d | | skipped: estimated %.0f s, %.0f s of the %.0f s budget "
                   "left | | | | | | | | |\n",
                b->dev_short, clcone_model_name(o.model), clcone_solver_name(o.solver), K, est,
                S->budget - (bench_now() - S->t_start), S->budget);
        free(parts);
        return;
    }
    if (!parts) {
        bench_fail(b, f, "out of memory");
        return;
    }
    for (int i = 0; i < K; ++i) parts[i] = &S->kinds[i % S->nk];
    if (clcone_batch_concat(parts, K, &batch, &err)) {
        bench_fail(b, f, "batch of %d: %s", K, err.msg);
        free(parts);
        return;
    }
    r = calloc(3 * (size_t)batch.n, sizeof *r);
    if (!r) {
        bench_fail(b, f, "out of memory for a batch of %d", K);
        goto next;
    }
    if (clcone_plan_create(b->fctx, &batch, &o, &bplan, &err)) {
        bench_fail(b, f, "batch of %d (set-up): %s", K, err.msg);
        goto next;
    }
    {
        double t0 = bench_now();
        if (clcone_plan_solve(bplan, r, &res, &err)) {
            bench_fail(b, f, "batch of %d: %s", K, err.msg);
            goto next;
        }
        tb = bench_now() - t0;
        S->prev_tb[pi] = tb;
        S->prev_K[pi] = K;
    }
    for (int i = 0; i < K; ++i)
        if (res.items[i].iters == alone_iters[i % S->nk] && res.items[i].status == CLCONE_CONVERGED) same++;
    clcone_result_free(&res);
    batches_one_by_one(S, pi, K, r, done, t);
    if (done[0] > 0 && done[1] > 0) {
        double sb = K / tb, s1 = done[0] / t[0], sr = done[1] / t[1];
        fprintf(f, "| %s | float | %s | %s | %d | %d | %s | %.4g | %s (%d) | %.4g | **%.2f** | %s (%d) | %.4g | "
                   "**%.2f** | %d / %d |\n",
                b->dev_short, clcone_model_name(o.model), clcone_solver_name(o.solver), K, batch.n,
                bench_fmt_ms(tb * 1e3, buf, sizeof buf), sb, bench_fmt_ms(t[0] * 1e3, buf2, sizeof buf2), done[0],
                s1, sb / s1, bench_fmt_ms(t[1] * 1e3, buf3, sizeof buf3), done[1], sr, sb / sr, same, K);
        S->rsb[pi][ci] = sb;
        S->rs1[pi][ci] = s1;
        S->rsr[pi][ci] = sr;
        S->have[pi][ci] = 1;
        S->rows[pi]++;
    }
next:
    clcone_plan_free(bplan);
    free(r);
    free(parts);
    clcone_problem_free(&batch);
}

/* batches.dat (opened before the rows, so a failure to open is noted
 * where it was) and its plot. */
static void batches_data_and_plot(batches *S, FILE *dat)
{
    if (!dat) return;
    for (int pi = 0; pi < 2; ++pi) {
        fprintf(dat, "# %s %s\n", clcone_model_name(PICKS[pi].model), clcone_solver_name(PICKS[pi].solver));
        for (int ci = 0; ci < S->ncounts; ++ci)
            if (S->have[pi][ci])
                fprintf(dat, "%d %.6g %.6g %.6g %.6g\n", COUNTS[ci], S->rsb[pi][ci], S->rs1[pi][ci],
                        S->rsb[pi][ci] / S->rs1[pi][ci], S->rsr[pi][ci]);
        fprintf(dat, "\n\n");
    }
    fclose(dat);
    if (S->rows[0] > 0 && S->rows[1] > 0) {
        bench_plot(S->b, S->f, "batches",
                   "set logscale xy\nset grid\nset key top left\nset xlabel 'scenes in the batch'\n"
                   "set ylabel 'scenes per second'\nset title 'Batch vs one by one (device, float)'\n"
                   "plot 'batches.dat' index 0 using 1:2 with linespoints title 'ccp apgd: one batch', "
                   "'batches.dat' index 0 using 1:3 with linespoints title 'ccp apgd: one by one', "
                   "'batches.dat' index 1 using 1:2 with linespoints title 'coulomb cgs: one batch', "
                   "'batches.dat' index 1 using 1:3 with linespoints title 'coulomb cgs: one by one', "
                   "'batches.dat' index 0 using 1:5 with linespoints title 'ccp: reference apgd one by one', "
                   "'batches.dat' index 1 using 1:5 with linespoints title 'coulomb: reference nsgs one by one'\n");
    }
}

void bench_section_batches(bench *b, FILE *f)
{
    batches S;
    int cmin, cmax;
    FILE *dat;
    memset(&S, 0, sizeof S);
    S.b = b;
    S.f = f;
    S.one_cap = b->quick ? 1.5 : 4.0;
    S.budget = b->quick ? 25.0 : 120.0;
    S.t_start = bench_now();
    S.ncounts = b->quick ? 3 : 4;
    S.prev_K[0] = S.prev_K[1] = 1;
    if (!b->fctx) return;
    if (batches_make_kinds(&S, &cmin, &cmax) == 0) {
        batches_intro(&S, cmin, cmax);
        dat = bench_data(b, f, "batches.dat");
        if (dat) fprintf(dat, "# per solver block: scenes scenes_per_s_batch scenes_per_s_one ratio scenes_per_s_ref\n");
        batches_plans(&S);
        for (int ci = 0; ci < S.ncounts; ++ci)
            for (int pi = 0; pi < 2; ++pi) batches_row(&S, ci, pi);
        for (int pi = 0; pi < 2; ++pi)
            for (int k = 0; k < S.nk; ++k) {
                clcone_plan_free(S.dplan[pi][k]);
                clcone_plan_free(S.rplan[pi][k]);
            }
        batches_data_and_plot(&S, dat);
        fprintf(f, "\n'same iterations as alone': problems of the batch that converged (within the cap) at exactly the "
                   "iteration at which the same scene converges when solved alone. Iteration cap 1000 alone and in "
                   "the batch; scenes that hit it alone: %d of %d (ccp apgd), %d of %d (coulomb cgs). Making the "
                   "plans of the %d distinct scenes and their first device solves took %.1f s in all (POCL's "
                   "first-launch compiles, cached in ~/.cache/pocl on later runs).\n\n",
                S.unconv[0], S.nk, S.unconv[1], S.nk, S.nk, S.warm_s);
    }
    for (int k = 0; k < S.nk; ++k) clcone_problem_free(&S.kinds[k]);
    bench_worlds_stepped(b, f);
    bench_local_or_body(b, f);
}
