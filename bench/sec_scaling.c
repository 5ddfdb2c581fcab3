/* Section 1: scaling on grid and pile scenes, device Jacobi and APGD in
 * float against the CPU reference's Jacobi and APGD (double, one thread)
 * on the same scenes, model ccp. Sizes grow by 10x until the section's
 * time budget would be exceeded (estimated from the previous size's
 * measured times); where that happens the report says so. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NSIZES 4
#define NCONF 4

typedef struct conf {
    int device;            /* 1 = OpenCL float, 0 = reference */
    clcone_solver solver;
    const char *name;
} conf;

static const conf CONFS[NCONF] = {
    {1, CLCONE_SOLVER_JACOBI, "device jacobi"},
    {1, CLCONE_SOLVER_APGD, "device apgd"},
    {0, CLCONE_SOLVER_JACOBI, "ref jacobi"},
    {0, CLCONE_SOLVER_APGD, "ref apgd"},
};

typedef struct cell {
    int done;              /* measured */
    int n;                 /* contacts */
    double per_iter_ms;    /* time of one iteration, no checks */
    int flag;              /* BENCH_TIME_* */
    clcone_prob_result tol;/* run to 1e-4 */
    char note[300];        /* why missing */
} cell;

static clcone_status make_scene(int pile, int target, clcone_scene *s, char *desc, size_t len, clcone_error *err)
{
    if (pile) {
        int n = target / 3;
        snprintf(desc, len, "pile of %d spheres (clc_gen_pile, spread 0.1, seed 1)", n);
        return clc_gen_pile(n, 0.5, 0.01, 0.1, 1, s, err);
    } else {
        int L = (int)lround(sqrt((double)target / 6.0));
        snprintf(desc, len, "grid %dx%dx2 (clc_gen_grid)", L, L);
        return clc_gen_grid(L, 2, 0.5, 0.01, s, err);
    }
}

/* Time to 1e-4 on piles by method, the old ones (CGS, APGD) beside the
 * accelerated CGS, in one run: piles of about 5,000, 20,000 and 60,000
 * contacts (quick: 5,000), cold start, ccp. A method that did not reach
 * 1e-4 within the cap at one size is not run at the next (it would only
 * spend the cap again) and the row says so. */
#define NPM 5
static void bench_pile_methods(bench *b, FILE *f)
{
    static const conf PM[NPM] = {
        {1, CLCONE_SOLVER_CGS, "device cgs"},   {1, CLCONE_SOLVER_APGD, "device apgd"},
        {1, CLCONE_SOLVER_ACGS, "device acgs"}, {0, CLCONE_SOLVER_APGD, "ref apgd"},
        {0, CLCONE_SOLVER_ACGS, "ref acgs"},
    };
    static const int spheres[3] = {1700, 6700, 20000};
    int nsizes = b->quick ? 1 : 3, capped[NPM] = {0};
    double cap = b->quick ? 5.0 : 20.0;
    char buf[64];
    fprintf(f, "### Time to 1e-4 on piles, by method\n\n"
               "Piles of spheres (`clc_gen_pile`, spread 0.1, seed 1), model ccp, cold start (r = 0), tol 1e-4, "
               "error checked every iteration up to 100 and every 10 after, cap %.0f s per run; plan set-up "
               "and kernel compilation untimed (a 1-iteration run first). acgs = coloured Gauss-Seidel with "
               "Nesterov momentum, gradient and function restarts (kernels/local_solve.h). A method that hit "
               "the cap at one size is not run at the larger ones.\n\n"
               "| device | precision | solver | contacts | status | iterations | error | time | time/iteration |\n"
               "|---|---|---|---|---|---|---|---|---|\n", cap);
    for (int si = 0; si < nsizes; ++si) {
        clcone_scene s;
        clcone_error err;
        if (clc_gen_pile(spheres[si], 0.5, 0.01, 0.1, 1, &s, &err)) {
            bench_fail(b, f, "pile of %d spheres: %s", spheres[si], err.msg);
            continue;
        }
        fprintf(stderr, "bench:   pile methods: %d contacts (%.0f s)\n", s.ncontacts, bench_elapsed(b));
        for (int k = 0; k < NPM; ++k) {
            clcone_context *ctx = PM[k].device ? b->fctx : NULL;
            const char *dev = PM[k].device ? b->dev_short : "CPU reference";
            const char *prec = PM[k].device ? "float" : "double";
            clcone_options o;
            clcone_prob_result r;
            if (PM[k].device && !ctx) continue;
            if (capped[k]) {
                fprintf(f, "| %s | %s | %s | %d | not run: capped at a smaller pile | | | | |\n", dev, prec,
                        clcone_solver_name(PM[k].solver), s.ncontacts);
                continue;
            }
            clcone_options_default(&o);
            o.model = CLCONE_MODEL_CCP;
            o.solver = PM[k].solver;
            if (ctx) { /* compile the kernels outside the timed run */
                o.max_iter = 1;
                o.tol = 0;
                if (bench_solve_scene(ctx, &s, &o, &r, NULL, &err)) {
                    bench_fail(b, f, "%s warm-up on %d contacts: %s", PM[k].name, s.ncontacts, err.msg);
                    continue;
                }
            }
            o.max_iter = 1000000;
            o.tol = 1e-4;
            o.check_every = 10;
            o.max_seconds = cap;
            if (bench_solve_scene(ctx, &s, &o, &r, NULL, &err)) {
                bench_fail(b, f, "%s on %d contacts: %s", PM[k].name, s.ncontacts, err.msg);
                continue;
            }
            capped[k] = r.status != CLCONE_CONVERGED;
            fprintf(f, "| %s | %s | %s | %d | %s | %d | %.2e | %s | %.3g ms |\n", dev, prec,
                    clcone_solver_name(PM[k].solver), s.ncontacts, clcone_run_status_name(r.status), r.iters,
                    r.error, bench_fmt_ms(r.time_ms, buf, sizeof buf), r.iters > 0 ? r.time_ms / r.iters : 0.0);
        }
        clcone_scene_free(&s);
    }
    fprintf(f, "\n(time/iteration here includes the error checks.)\n\n");
}

/* One run of the section: its settings and the measured cells. */
typedef struct scaling {
    bench *b;
    FILE *f;
    int nsizes;
    double budget, cap, tol, t_start;
    cell cells[2][NSIZES][NCONF];
} scaling;

static const int TARGETS[NSIZES] = {1000, 10000, 100000, 1000000};

static void scaling_intro(const scaling *S)
{
    bench *b = S->b;
    FILE *f = S->f;
    fprintf(f, "Scenes: grids of spheres 2 layers high (L x L x 2, about 6 L^2 contacts) and piles of spheres "
               "(about 3 contacts per sphere), mu = 0.5, dt = 0.01, sizes 10^3 .. 10^%d contacts%s. Model **ccp** "
               "everywhere (the convex cone QP): the coulomb Jacobi iteration does not converge on the piles, see "
               "the model check below. Device: %s, **float**, body form (matrix-free). Reference: `clcone_solve_scene` "
               "with a NULL context, **double**, one thread, local form (W assembled; its Jacobi steps are block "
               "Gershgorin, the device's mass splitting, so iteration counts differ).\n\n",
            b->quick ? 4 : 6, b->quick ? " (quick mode: up to 10^4)" : "", b->dev_name);
    fprintf(f, "- time/iteration: (T(100 + M) - T(100)) / M from two runs with no error check after the "
               "library's fixed first 100 iterations, after one untimed 1-iteration warm-up run (POCL compiles "
               "kernels at their first launch per work-group size).\n"
               "- time to 1e-4: a run with tol 1e-4, error checked every iteration up to 100 and every 10 "
               "after, wall-clock cap %.0f s per run (`max_seconds`); 'cap' rows did not reach 1e-4 and show the "
               "error reached.\n"
               "- speed-up = reference time / device time, for the same solver on the same scene.\n"
               "- section budget %.0f s: a size whose estimated cost (previous size's measured times x 10) "
               "does not fit what is left is skipped and named below.\n\n",
            S->cap, S->budget);
}

/* Each configuration's cost at size si, estimated from the previous size;
 * a cell that will not fit the budget left gets its note. Returns whether
 * any configuration fits. */
static int scaling_estimate(scaling *S, int pile, int si, double est[NCONF])
{
    double left = S->budget - (bench_now() - S->t_start);
    int any = 0;
    for (int k = 0; k < NCONF; ++k) {
        cell *pc = si > 0 ? &S->cells[pile][si - 1][k] : NULL;
        est[k] = 0;
        if (pc && pc->done)
            est[k] = 10.0 * fabs(pc->per_iter_ms) * 400 / 1e3 + (S->b->quick ? 0.6 : 3.0) +
                     fmin(S->cap, 10.0 * pc->tol.time_ms / 1e3);
        else if (pc)
            est[k] = INFINITY;
        if (est[k] > left)
            snprintf(S->cells[pile][si][k].note, sizeof S->cells[pile][si][k].note,
                     pc && !pc->done ? "skipped: not measured at the previous size"
                                     : "skipped: estimated %.0f s, %.0f s of the %.0f s budget left",
                     est[k], left, S->budget);
        else
            any = 1;
    }
    return any;
}

/* Configuration k on scene s (size si): time per iteration, then the run
 * to 1e-4. */
static void scaling_measure(scaling *S, int pile, int si, int k, double est, const clcone_scene *s,
                            const char *desc)
{
    bench *b = S->b;
    FILE *f = S->f;
    cell *c = &S->cells[pile][si][k];
    double left_now = S->budget - (bench_now() - S->t_start);
    clcone_context *ctx = CONFS[k].device ? b->fctx : NULL;
    clcone_options o;
    clcone_error err;
    double prev = si > 0 && S->cells[pile][si - 1][k].done ? S->cells[pile][si - 1][k].per_iter_ms * 10 : 0;
    /* about 1.5 s (quick 0.3 s) of extra iterations beyond the 100 */
    int M = prev > 0 ? (int)fmin(20000, fmax(20, (b->quick ? 300.0 : 1500.0) / prev)) : 300;
    c->n = s->ncontacts;
    if (CONFS[k].device && !ctx) {
        snprintf(c->note, sizeof c->note, "no device");
        return;
    }
    if (c->note[0]) return;
    if (est > left_now) {
        snprintf(c->note, sizeof c->note, "skipped: estimated %.0f s, %.0f s of the %.0f s budget left", est,
                 left_now, S->budget);
        return;
    }
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    o.solver = CONFS[k].solver;
    if (ctx) {
        clcone_prob_result w;
        o.max_iter = 1;
        o.tol = 0;
        if (bench_solve_scene(ctx, s, &o, &w, NULL, &err)) {
            bench_fail(b, f, "%s on %s: %s", CONFS[k].name, desc, err.msg);
            return;
        }
    }
    /* the device Jacobi on the biggest grid was timed in section 2 */
    if (ctx && k == 0 && !pile && b->bw_iter_ms > 0 && b->bw_scene_contacts == s->ncontacts) {
        c->per_iter_ms = b->bw_iter_ms;
        c->flag = b->bw_flag;
    } else if (bench_iter_time(ctx, s, &o, M, &c->per_iter_ms, NULL, &c->flag, &err)) {
        bench_fail(b, f, "%s on %s: %s", CONFS[k].name, desc, err.msg);
        return;
    }
    o.max_iter = 1000000;
    o.tol = S->tol;
    o.check_every = 10;
    o.max_seconds = S->cap;
    if (bench_solve_scene(ctx, s, &o, &c->tol, NULL, &err)) {
        bench_fail(b, f, "%s to 1e-4 on %s: %s", CONFS[k].name, desc, err.msg);
        return;
    }
    c->done = 1;
}

static void scaling_run_sizes(scaling *S)
{
    for (int si = 0; si < S->nsizes; ++si)
        for (int pile = 0; pile < 2; ++pile) {
            clcone_scene s;
            clcone_error err;
            char desc[200];
            double est[NCONF];
            if (!scaling_estimate(S, pile, si, est)) continue;
            if (make_scene(pile, TARGETS[si], &s, desc, sizeof desc, &err)) {
                bench_fail(S->b, S->f, "%s: %s", pile ? "pile" : "grid", err.msg);
                continue;
            }
            fprintf(stderr, "bench:   scaling %s: %d contacts (%.0f s)\n", desc, s.ncontacts, bench_elapsed(S->b));
            for (int k = 0; k < NCONF; ++k) scaling_measure(S, pile, si, k, est[k], &s, desc);
            clcone_scene_free(&s);
        }
}

/* The speed-up table of one kind of scene. */
static void scaling_speedups(const scaling *S, int pile)
{
    FILE *f = S->f;
    fprintf(f, "\nSpeed-up of the device over the reference (reference time / device time, same solver):\n\n"
               "| scene | contacts | solver | per iteration | to 1e-4 |\n|---|---|---|---|---|\n");
    for (int si = 0; si < S->nsizes; ++si)
        for (int k = 0; k < 2; ++k) {
            const cell *d = &S->cells[pile][si][k], *r = &S->cells[pile][si][k + 2];
            char t[64] = "-";
            if (!d->done || !r->done) continue;
            if (d->tol.status == CLCONE_CONVERGED && r->tol.status == CLCONE_CONVERGED)
                snprintf(t, sizeof t, "%.2f", r->tol.time_ms / d->tol.time_ms);
            else
                snprintf(t, sizeof t, "- (%s 1e-4 within %.0f s)",
                         d->tol.status != CLCONE_CONVERGED && r->tol.status != CLCONE_CONVERGED
                             ? "neither reached"
                         : d->tol.status != CLCONE_CONVERGED ? "the device did not reach"
                                                             : "the reference did not reach",
                         S->cap);
            if (d->flag == BENCH_TIME_NOISY || r->flag == BENCH_TIME_NOISY)
                fprintf(f, "| %s | %d | %s | - (unreliable timing) | %s |\n", pile ? "pile" : "grid", d->n,
                        clcone_solver_name(CONFS[k].solver), t);
            else
                fprintf(f, "| %s | %d | %s | %.2f%s | %s |\n", pile ? "pile" : "grid", d->n,
                        clcone_solver_name(CONFS[k].solver), r->per_iter_ms / d->per_iter_ms,
                        d->flag || r->flag ? " (a)" : "", t);
        }
    fprintf(f, "\n");
}

static void scaling_tables(const scaling *S)
{
    bench *b = S->b;
    FILE *f = S->f;
    char buf[64], buf2[64];
    for (int pile = 0; pile < 2; ++pile) {
        fprintf(f, "### %s\n\n", pile ? "Piles" : "Grids (2 layers)");
        fprintf(f, "| device | precision | model | solver | contacts | time/iteration | contacts x iterations/s | "
                   "time to 1e-4 | iterations | status (error) |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (int si = 0; si < S->nsizes; ++si)
            for (int k = 0; k < NCONF; ++k) {
                const cell *c = &S->cells[pile][si][k];
                const char *dev = CONFS[k].device ? b->dev_short : "CPU reference";
                const char *prec = CONFS[k].device ? "float" : "double";
                if (!c->done) {
                    if (c->note[0])
                        fprintf(f, "| %s | %s | ccp | %s | ~%d | %s | | | | |\n", dev, prec,
                                clcone_solver_name(CONFS[k].solver), TARGETS[si], c->note);
                    continue;
                }
                fprintf(f, "| %s | %s | ccp | %s | %d | %s%s | %.3g | %s | %d | %s (%.2e) |\n", dev, prec,
                        clcone_solver_name(CONFS[k].solver), c->n, bench_fmt_ms(c->per_iter_ms, buf, sizeof buf),
                        bench_time_flag(c->flag),
                        c->n / (c->per_iter_ms * 1e-3),
                        c->tol.status == CLCONE_CONVERGED ? bench_fmt_ms(c->tol.time_ms, buf2, sizeof buf2) : "cap",
                        c->tol.iters,
                        c->tol.status == CLCONE_CONVERGED ? "converged" : clcone_run_status_name(c->tol.status),
                        c->tol.error);
            }
        fprintf(f, "\n(a) the 100-iteration timing run reached error exactly 0 (tol 0) and stopped early: the time is "
                   "that run's time / iterations, error checks included (every iteration below 100). (b) "
                   "**unreliable**: the extra iterations cost under a quarter of the 100-iteration run's mean "
                   "iteration over three tries; the machine was loaded by other processes.\n");
        scaling_speedups(S, pile);
    }
}

/* One plot of scaling.dat's column `col` for every (scene, config)
 * block; `extra` goes after the axis labels. */
static void scaling_plot(bench *b, FILE *f, const char *name, const char *ylabel, const char *extra,
                         const char *title, int col)
{
    char body[4096];
    int m = snprintf(body, sizeof body,
                     "set logscale xy\nset grid\nset key top left\nset xlabel 'contacts'\n"
                     "set ylabel '%s'\n%sset title '%s'\nplot ", ylabel, extra, title);
    for (int i = 0; i < 2 * NCONF; ++i)
        m += snprintf(body + m, sizeof body - (size_t)m,
                      "'scaling.dat' index %d using 1:%d with linespoints title '%s %s'%s", i, col,
                      i >= NCONF ? "pile" : "grid", CONFS[i % NCONF].name, i + 1 < 2 * NCONF ? ", " : "\n");
    bench_plot(b, f, name, body);
}

static void scaling_data_and_plots(const scaling *S)
{
    char buf[64];
    FILE *d = bench_data(S->b, S->f, "scaling.dat");
    if (!d) return;
    fprintf(d, "# block per (scene, config): contacts per_iter_ms contacts_iters_per_s time_to_tol_ms(nan=cap)\n");
    for (int pile = 0; pile < 2; ++pile)
        for (int k = 0; k < NCONF; ++k) {
            fprintf(d, "# %s %s\n", pile ? "pile" : "grid", CONFS[k].name);
            for (int si = 0; si < S->nsizes; ++si) {
                const cell *c = &S->cells[pile][si][k];
                if (!c->done || c->flag == BENCH_TIME_NOISY) continue;
                fprintf(d, "%d %.6g %.6g %s\n", c->n, c->per_iter_ms, c->n / (c->per_iter_ms * 1e-3),
                        c->tol.status == CLCONE_CONVERGED ? (snprintf(buf, sizeof buf, "%.6g", c->tol.time_ms), buf) : "nan");
            }
            fprintf(d, "\n\n");
        }
    fclose(d);
    scaling_plot(S->b, S->f, "scaling_iter", "time per iteration (ms)", "",
                 "Time per iteration, ccp (device float, reference double)", 2);
    scaling_plot(S->b, S->f, "scaling_throughput", "contacts x iterations per second", "", "Throughput, ccp", 3);
    scaling_plot(S->b, S->f, "scaling_tol", "time to error 1e-4 (ms)", "set datafile missing 'nan'\n",
                 "Time to 1e-4, ccp (runs that hit the cap are left out)", 4);
}

/* Model check: coulomb vs ccp Jacobi at the smallest size. */
static void scaling_model_check(bench *b, FILE *f, double tol)
{
    double mcap = b->quick ? 1.0 : 4.0;
    char buf[64];
    fprintf(f, "### Model check: coulomb vs ccp Jacobi on the device (~10^3 contacts, float, tol 1e-4, cap %.0f s)\n\n"
               "| device | precision | model | solver | scene | contacts | status | iterations | error | time |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n", mcap);
    for (int pile = 0; pile < 2 && b->fctx; ++pile)
        for (int m = 0; m < 2; ++m) {
            clcone_scene s;
            clcone_error err;
            clcone_options o;
            clcone_prob_result r;
            char desc[200];
            if (make_scene(pile, 1000, &s, desc, sizeof desc, &err)) {
                bench_fail(b, f, "%s", err.msg);
                continue;
            }
            clcone_options_default(&o);
            o.model = m ? CLCONE_MODEL_CCP : CLCONE_MODEL_COULOMB;
            o.solver = CLCONE_SOLVER_JACOBI;
            o.tol = tol;
            o.max_seconds = mcap;
            if (bench_solve_scene(b->fctx, &s, &o, &r, NULL, &err))
                bench_fail(b, f, "%s %s: %s", desc, clcone_model_name(o.model), err.msg);
            else
                fprintf(f, "| %s | float | %s | jacobi | %s | %d | %s | %d | %.2e | %s |\n", b->dev_short,
                        clcone_model_name(o.model), pile ? "pile" : "grid", s.ncontacts,
                        clcone_run_status_name(r.status), r.iters, r.error, bench_fmt_ms(r.time_ms, buf, sizeof buf));
            clcone_scene_free(&s);
        }
    fprintf(f, "\n");
}

void bench_section_scaling(bench *b, FILE *f)
{
    scaling S;
    memset(&S, 0, sizeof S);
    S.b = b;
    S.f = f;
    S.nsizes = b->quick ? 2 : NSIZES;
    S.budget = b->quick ? 35.0 : 480.0;
    S.cap = b->quick ? 1.5 : 12.0;
    S.tol = 1e-4;
    S.t_start = bench_now();
    scaling_intro(&S);
    scaling_run_sizes(&S);
    scaling_tables(&S);
    scaling_data_and_plots(&S);
    bench_pile_methods(b, f);
    scaling_model_check(b, f, S.tol);
}
