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
        st = clcone_gen_stack(4 + kind, 0.5, 0.01, &s, err);
    } else {
        snprintf(desc, len, "pile of %d spheres", 6 + (kind - 13));
        st = clcone_gen_pile(6 + (kind - 13), 0.5, 0.01, 0.1, (unsigned)kind, &s, err);
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

void bench_section_batches(bench *b, FILE *f)
{
    static const int counts[4] = {1, 64, 1024, 8192};
    static const solver_pick picks[2] = {{CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-4},
                                         {CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, 1e-4}};
    clcone_problem kinds[NKINDS];
    int nk = 0, cmin = 1 << 30, cmax = 0;
    double one_cap = b->quick ? 1.5 : 4.0, budget = b->quick ? 25.0 : 120.0, t_start = bench_now();
    int ncounts = b->quick ? 3 : 4;
    clcone_error err;
    char desc[128], buf[64], buf2[64], buf3[64];
    FILE *dat = NULL;
    double warm_s = 0;
    int unconv[2] = {0, 0}, rows[2] = {0, 0};
    if (!b->fctx) return;
    memset(kinds, 0, sizeof kinds);
    for (int k = 0; k < NKINDS; ++k) {
        if (make_small(k, &kinds[k], desc, sizeof desc, &err)) {
            bench_fail(b, f, "%s: %s", desc, err.msg);
            goto out;
        }
        nk++;
        if (kinds[k].n < cmin) cmin = kinds[k].n;
        if (kinds[k].n > cmax) cmax = kinds[k].n;
    }
    fprintf(f, "Scenes: %d distinct small scenes, box stacks of 4..16 boxes (clcone_gen_stack) and piles of 6..20 "
               "spheres (clcone_gen_pile), %d..%d contacts each, converted with clcone_scene_to_local; a batch of K "
               "takes scene i mod %d for i < K and is one clcone_batch_concat. Device %s, float, tol 1e-4; the "
               "reference in double. Every time is clcone_plan_solve on plans made untimed first (one per batch, "
               "one per distinct scene on each backend: upload, colouring and each kernel's first launch are "
               "set-up, not solve). 'One batch' is one solve of the batch's plan; 'one by one' one solve per scene "
               "of that scene's plan, on the device or the reference (capped at %.0f s of solves: the scenes/s "
               "figure is over the scenes done).\n\n",
            NKINDS, cmin, cmax, NKINDS, b->dev_name, one_cap);
    fprintf(f, "| device | precision | model | solver | scenes | contacts | one batch | scenes/s batch | device one by "
               "one (scenes done) | scenes/s device one by one | batch / device one by one | reference one by one "
               "(scenes done) | scenes/s reference | batch / reference | same iterations as alone |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    dat = bench_data(b, f, "batches.dat");
    if (dat) fprintf(dat, "# per solver block: scenes scenes_per_s_batch scenes_per_s_one ratio scenes_per_s_ref\n");
    clcone_options opts[2];
    clcone_plan *dplan[2][NKINDS], *rplan[2][NKINDS];
    int alone[2][NKINDS], have[2][4];
    double rsb[2][4], rs1[2][4], rsr[2][4], prev_tb[2] = {0, 0};
    int prev_K[2] = {1, 1};
    memset(have, 0, sizeof have);
    memset(dplan, 0, sizeof dplan);
    memset(rplan, 0, sizeof rplan);
    for (int pi = 0; pi < 2; ++pi) {
        clcone_options *o = &opts[pi];
        clcone_options_default(o);
        o->model = picks[pi].model;
        o->solver = picks[pi].solver;
        o->tol = picks[pi].tol;
        o->max_iter = 1000; /* the same cap alone and in the batch */
        /* plans, and the per-scene iteration counts alone */
        for (int k = 0; k < nk; ++k) {
            double *r = calloc(3 * (size_t)kinds[k].n, sizeof *r), tw = bench_now();
            clcone_options ro = *o;
            clcone_result res;
            alone[pi][k] = -1;
            if (!r) continue;
            ro.solver = CLCONE_SOLVER_DEFAULT;
            ro.tol = o->tol;
            if (clcone_plan_create(b->fctx, &kinds[k], o, &dplan[pi][k], &err)
                || clcone_plan_create(NULL, &kinds[k], &ro, &rplan[pi][k], &err)
                || clcone_plan_solve(dplan[pi][k], r, &res, &err)) {
                bench_fail(b, f, "scene kind %d: %s", k, err.msg);
            } else {
                alone[pi][k] = res.items[0].iters;
                warm_s += bench_now() - tw;
                if (res.items[0].status != CLCONE_CONVERGED) unconv[pi]++;
                clcone_result_free(&res);
            }
            free(r);
        }
    }
    for (int ci = 0; ci < ncounts; ++ci)
        for (int pi = 0; pi < 2; ++pi) {
            clcone_options o = opts[pi];
            const int *alone_iters = alone[pi];
            int K = counts[ci], done = 0, doner = 0, same = 0;
            double est = prev_tb[pi] * K / prev_K[pi] * 2 + 2 * one_cap;
            const clcone_problem **parts = calloc((size_t)K, sizeof *parts);
            clcone_problem batch;
            clcone_plan *bplan = NULL;
            double *r = NULL, tb = 0, t1 = 0, tr = 0;
            clcone_result res;
            memset(&batch, 0, sizeof batch);
            if (bench_now() - t_start + est > budget) {
                fprintf(f, "| %s | float | %s | %s | %d | | skipped: estimated %.0f s, %.0f s of the %.0f s budget "
                           "left | | | | | | | | |\n",
                        b->dev_short, clcone_model_name(o.model), clcone_solver_name(o.solver), K, est,
                        budget - (bench_now() - t_start), budget);
                free(parts);
                continue;
            }
            if (!parts) {
                bench_fail(b, f, "out of memory");
                continue;
            }
            for (int i = 0; i < K; ++i) parts[i] = &kinds[i % nk];
            if (clcone_batch_concat(parts, K, &batch, &err)) {
                bench_fail(b, f, "batch of %d: %s", K, err.msg);
                free(parts);
                continue;
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
                double t = bench_now();
                if (clcone_plan_solve(bplan, r, &res, &err)) {
                    bench_fail(b, f, "batch of %d: %s", K, err.msg);
                    goto next;
                }
                tb = bench_now() - t;
                prev_tb[pi] = tb;
                prev_K[pi] = K;
            }
            for (int i = 0; i < K; ++i)
                if (res.items[i].iters == alone_iters[i % nk] && res.items[i].status == CLCONE_CONVERGED) same++;
            clcone_result_free(&res);
            for (int side = 0; side < 2; ++side) {
                double t = bench_now();
                int *count = side ? &doner : &done;
                for (int i = 0; i < K && bench_now() - t < one_cap; ++i) {
                    clcone_plan *pl = side ? rplan[pi][i % nk] : dplan[pi][i % nk];
                    clcone_result r1;
                    if (!pl || clcone_plan_solve(pl, r, &r1, &err)) {
                        bench_fail(b, f, "scene %d alone: %s", i, pl ? err.msg : "no plan");
                        break;
                    }
                    clcone_result_free(&r1);
                    ++*count;
                }
                *(side ? &tr : &t1) = bench_now() - t;
            }
            if (done > 0 && doner > 0) {
                double sb = K / tb, s1 = done / t1, sr = doner / tr;
                fprintf(f, "| %s | float | %s | %s | %d | %d | %s | %.4g | %s (%d) | %.4g | **%.2f** | %s (%d) | %.4g | "
                           "**%.2f** | %d / %d |\n",
                        b->dev_short, clcone_model_name(o.model), clcone_solver_name(o.solver), K, batch.n,
                        bench_fmt_ms(tb * 1e3, buf, sizeof buf), sb, bench_fmt_ms(t1 * 1e3, buf2, sizeof buf2), done,
                        s1, sb / s1, bench_fmt_ms(tr * 1e3, buf3, sizeof buf3), doner, sr, sb / sr, same, K);
                rsb[pi][ci] = sb;
                rs1[pi][ci] = s1;
                rsr[pi][ci] = sr;
                have[pi][ci] = 1;
                rows[pi]++;
            }
        next:
            clcone_plan_free(bplan);
            free(r);
            free(parts);
            clcone_problem_free(&batch);
        }
    for (int pi = 0; pi < 2; ++pi)
        for (int k = 0; k < nk; ++k) {
            clcone_plan_free(dplan[pi][k]);
            clcone_plan_free(rplan[pi][k]);
        }
    if (dat) {
        for (int pi = 0; pi < 2; ++pi) {
            fprintf(dat, "# %s %s\n", clcone_model_name(picks[pi].model), clcone_solver_name(picks[pi].solver));
            for (int ci = 0; ci < ncounts; ++ci)
                if (have[pi][ci])
                    fprintf(dat, "%d %.6g %.6g %.6g %.6g\n", counts[ci], rsb[pi][ci], rs1[pi][ci],
                            rsb[pi][ci] / rs1[pi][ci], rsr[pi][ci]);
            fprintf(dat, "\n\n");
        }
        fclose(dat);
    }
    if (dat && rows[0] > 0 && rows[1] > 0) {
        bench_plot(b, f, "batches",
                   "set logscale xy\nset grid\nset key top left\nset xlabel 'scenes in the batch'\n"
                   "set ylabel 'scenes per second'\nset title 'Batch vs one by one (device, float)'\n"
                   "plot 'batches.dat' index 0 using 1:2 with linespoints title 'ccp apgd: one batch', "
                   "'batches.dat' index 0 using 1:3 with linespoints title 'ccp apgd: one by one', "
                   "'batches.dat' index 1 using 1:2 with linespoints title 'coulomb cgs: one batch', "
                   "'batches.dat' index 1 using 1:3 with linespoints title 'coulomb cgs: one by one', "
                   "'batches.dat' index 0 using 1:5 with linespoints title 'ccp: reference apgd one by one', "
                   "'batches.dat' index 1 using 1:5 with linespoints title 'coulomb: reference nsgs one by one'\n");
    }
    fprintf(f, "\n'same iterations as alone': problems of the batch that converged (within the cap) at exactly the iteration at "
               "which the same scene converges when solved alone. Iteration cap 1000 alone and in the batch; scenes "
               "that hit it alone: %d of %d (ccp apgd), %d of %d (coulomb cgs). Making the plans of the %d distinct "
               "scenes and their first device solves took %.1f s in all (POCL's first-launch compiles, cached "
               "in ~/.cache/pocl on later runs).\n\n",
            unconv[0], nk, unconv[1], nk, nk, warm_s);
out:
    for (int k = 0; k < nk; ++k) clcone_problem_free(&kinds[k]);
}
