/* Section 4: the Siconos problems. Each file solved by the reference NSGS
 * and by the device's cgs, jacobi and apgd (model coulomb) in float and
 * double; iterations and time to tolerance, and Dolan-More performance
 * profiles. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXFILES 64
#define NCONF 8

typedef struct sconf {
    int dev;               /* 0 ref, 1 float, 2 double */
    clcone_solver solver;
    double tol;
    int profile;           /* 0: tolerance 1e-8 profile, 1: 1e-5 */
    const char *label;
} sconf;

static const sconf CONFS[NCONF] = {
    {0, CLCONE_SOLVER_NSGS, 1e-8, 0, "ref nsgs double 1e-8"},
    {2, CLCONE_SOLVER_CGS, 1e-8, 0, "device cgs double 1e-8"},
    {2, CLCONE_SOLVER_JACOBI, 1e-8, 0, "device jacobi double 1e-8"},
    {2, CLCONE_SOLVER_APGD, 1e-8, 0, "device apgd double 1e-8"},
    {0, CLCONE_SOLVER_NSGS, 1e-5, 1, "ref nsgs double 1e-5"},
    {1, CLCONE_SOLVER_CGS, 1e-5, 1, "device cgs float 1e-5"},
    {1, CLCONE_SOLVER_JACOBI, 1e-5, 1, "device jacobi float 1e-5"},
    {1, CLCONE_SOLVER_APGD, 1e-5, 1, "device apgd float 1e-5"},
};

typedef struct srun {
    int ok;                /* ran */
    clcone_prob_result r;
    double call_ms;        /* whole clcone_solve call */
    char note[200];
} srun;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int wanted(const char *name, int dat_only)
{
    size_t n = strlen(name);
    if (name[0] == '.') return 0;
    if (n > 4 && strcmp(name + n - 4, ".dat") == 0) return 1;
    if (!dat_only && n > 5 && strcmp(name + n - 5, ".hdf5") == 0) return 1;
    return 0;
}

int bench_problem_files(bench *b, FILE *f, int dat_only, char **files, int max)
{
    DIR *dir = opendir(b->problems);
    int nf = 0;
    if (!dir) {
        bench_fail(b, f, "cannot open the problems directory %s (set CLCONE_PROBLEMS)", b->problems);
        return -1;
    }
    for (struct dirent *e; (e = readdir(dir)) && nf < max;)
        if (wanted(e->d_name, dat_only) && (files[nf] = strdup(e->d_name))) nf++;
    closedir(dir);
    qsort(files, (size_t)nf, sizeof *files, cmp_str);
    return nf;
}

clcone_status bench_coulomb_plan(clcone_context *ctx, const clcone_problem *p, clcone_solver solver, double tol,
                                 int max_iter, double cap, clcone_plan **plan, clcone_error *err)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    o.solver = solver;
    o.tol = tol;
    if (max_iter > 0) o.max_iter = max_iter;
    o.max_seconds = cap;
    return clcone_plan_create(ctx, p, &o, plan, err);
}

static void profile(bench *b, FILE *f, srun (*runs)[NCONF], int nf, int which, const char *name)
{
    FILE *d;
    char fn[64], body[4096];
    int m = 0, idx = 0;
    double tmax = 1;
    snprintf(fn, sizeof fn, "%s.dat", name);
    d = bench_data(b, f, fn);
    if (!d) return;
    fprintf(d, "# Dolan-More profile: per solver, sorted ratios t/t_best and the fraction of problems solved within\n");
    for (int k = 0; k < NCONF; ++k) {
        double *rat;
        int cnt = 0;
        if (CONFS[k].profile != which) continue;
        rat = calloc((size_t)nf + 1, sizeof *rat);
        if (!rat) continue;
        for (int i = 0; i < nf; ++i) {
            double best = INFINITY;
            srun *s = &runs[i][k];
            for (int j = 0; j < NCONF; ++j)
                if (CONFS[j].profile == which && runs[i][j].ok && runs[i][j].r.status == CLCONE_CONVERGED)
                    best = fmin(best, fmax(runs[i][j].call_ms, 1e-3));
            if (s->ok && s->r.status == CLCONE_CONVERGED && isfinite(best))
                rat[cnt++] = fmax(s->call_ms, 1e-3) / best;
        }
        qsort(rat, (size_t)cnt, sizeof *rat, cmp_dbl);
        fprintf(d, "# %s\n1 0\n", CONFS[k].label);
        for (int i = 0; i < cnt; ++i) {
            fprintf(d, "%.6g %.6g\n", rat[i], (double)(i + 1) / nf);
            tmax = fmax(tmax, rat[i]);
        }
        fprintf(d, "\n\n");
        free(rat);
    }
    fclose(d);
    m += snprintf(body + m, sizeof body - (size_t)m,
                  "set logscale x 2\nset grid\nset key bottom right\nset yrange [0:1.05]\nset xrange [0.95:%g]\n"
                  "set xlabel 'tau (time / best time on the problem)'\nset ylabel 'fraction of problems solved within tau'\n"
                  "set title 'Performance profile, Siconos problems, tolerance %s'\nplot ",
                  tmax * 2, which ? "1e-5" : "1e-8");
    for (int k = 0; k < NCONF; ++k) {
        if (CONFS[k].profile != which) continue;
        m += snprintf(body + m, sizeof body - (size_t)m, "%s'%s' index %d using 1:2 with steps lw 2 title '%s'",
                      idx ? ", " : "", fn, idx, CONFS[k].label);
        idx++;
    }
    m += snprintf(body + m, sizeof body - (size_t)m, "\n");
    bench_plot(b, f, name, body);
}

/* All files as one device batch against the reference NSGS solving them
 * one after another, with a cap that lets the slowest file finish. */
static void siconos_batch(bench *b, FILE *f, char **files, int nf)
{
    static const struct {
        int dev;           /* 1 float, 2 double */
        clcone_solver solver;
        double tol;
    } rows[3] = {{2, CLCONE_SOLVER_CGS, 1e-8}, {1, CLCONE_SOLVER_CGS, 1e-5}, {1, CLCONE_SOLVER_APGD, 1e-5}};
    double cap = b->quick ? 1.0 : 8.0, seq[2] = {0, 0};
    int conv_seq[2] = {0, 0}, n = 0, np = 0;
    clcone_problem probs[MAXFILES], batch;
    const clcone_problem *parts[MAXFILES];
    clcone_error err;
    char buf[64], buf2[64];
    memset(&batch, 0, sizeof batch);
    for (int i = 0; i < nf; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", b->problems, files[i]);
        if (clcone_read_problem_hdf5(path, &probs[np], &err)) continue; /* named in the table above */
        parts[np] = &probs[np];
        n += probs[np++].n;
    }
    fprintf(f, "\n**All %d files as one batch** (clcone_batch_concat, %d contacts; each problem a work-group) on the "
               "device, against the reference NSGS (double, one thread) solving the files one after another, both "
               "capped at %.0f s per call so that the slowest file can finish. Time = clcone_plan_solve of the "
               "batch; reference = the sum of the %d clcone_plan_solve calls.\n\n",
            np, n, cap, np);
    if (np == 0 || clcone_batch_concat(parts, np, &batch, &err)) {
        bench_fail(b, f, "Siconos batch: %s", np ? err.msg : "no readable file");
        goto out;
    }
    for (int t = 0; t < 2; ++t)
        for (int i = 0; i < np; ++i) {
            clcone_plan *pl;
            clcone_result res;
            double *r = calloc(3 * (size_t)probs[i].n + 3, sizeof *r), t0;
            if (!r || bench_coulomb_plan(NULL, &probs[i], CLCONE_SOLVER_NSGS, t == 0 ? 1e-8 : 1e-5, 0, cap, &pl, &err)) {
                free(r);
                continue;
            }
            t0 = bench_now();
            if (!clcone_plan_solve(pl, r, &res, &err)) {
                seq[t] += (bench_now() - t0) * 1e3;
                conv_seq[t] += res.items[0].status == CLCONE_CONVERGED;
                clcone_result_free(&res);
            }
            clcone_plan_free(pl);
            free(r);
        }
    fprintf(f, "| device | precision | model | solver | tolerance | problems converged | batch time | reference "
               "NSGS one after another (converged) | batch / reference |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < 3; ++k) {
        clcone_context *ctx = rows[k].dev == 1 ? b->fctx : b->dctx;
        int t = rows[k].tol < 1e-6 ? 0 : 1, conv = 0;
        clcone_plan *pl;
        clcone_result res;
        double *r = calloc(3 * (size_t)batch.n + 3, sizeof *r), t0, ms;
        if (!ctx || !r) {
            free(r);
            continue;
        }
        if (bench_coulomb_plan(ctx, &batch, rows[k].solver, rows[k].tol, 0, cap, &pl, &err)) {
            bench_fail(b, f, "Siconos batch (set-up): %s", err.msg);
            free(r);
            continue;
        }
        t0 = bench_now();
        if (clcone_plan_solve(pl, r, &res, &err)) {
            bench_fail(b, f, "Siconos batch: %s", err.msg);
        } else {
            ms = (bench_now() - t0) * 1e3;
            for (int i = 0; i < res.nprob; ++i) conv += res.items[i].status == CLCONE_CONVERGED;
            fprintf(f, "| %s | %s | coulomb | %s | %.0e | %d / %d | %s | %s (%d / %d) | %.2f |\n", b->dev_short,
                    rows[k].dev == 1 ? "float" : "double", clcone_solver_name(rows[k].solver), rows[k].tol, conv, np,
                    bench_fmt_ms(ms, buf, sizeof buf), bench_fmt_ms(seq[t], buf2, sizeof buf2), conv_seq[t], np,
                    ms / seq[t]);
            clcone_result_free(&res);
        }
        clcone_plan_free(pl);
        free(r);
    }
    fprintf(f, "\n");
out:
    clcone_problem_free(&batch);
    for (int i = 0; i < np; ++i) clcone_problem_free(&probs[i]);
}

/* Configuration k on problem p (file name for the messages) into s: a
 * plan made untimed, then its solve timed (short ones repeated,
 * bench_repeat). */
static void siconos_run(bench *b, FILE *f, const char *name, const clcone_problem *p, int k, double cap,
                        double budget, double t_start, srun *s)
{
    clcone_context *ctx = CONFS[k].dev == 0 ? NULL : CONFS[k].dev == 1 ? b->fctx : b->dctx;
    clcone_result res;
    clcone_plan *plan;
    clcone_status st;
    clcone_error err;
    double *r = calloc(3 * (size_t)p->n + 3, sizeof *r);
    if (!r) {
        bench_fail(b, f, "out of memory");
        return;
    }
    if (CONFS[k].dev && !ctx) {
        snprintf(s->note, sizeof s->note, "no %s context", CONFS[k].dev == 1 ? "float" : "double");
        free(r);
        return;
    }
    if (bench_now() - t_start > budget) {
        snprintf(s->note, sizeof s->note, "skipped (budget)");
        free(r);
        return;
    }
    if (bench_coulomb_plan(ctx, p, CONFS[k].solver, CONFS[k].tol, 0, cap, &plan, &err)) {
        bench_fail(b, f, "%s, %s (set-up): %s", name, CONFS[k].label, err.msg);
        free(r);
        return;
    }
    st = bench_plan_solve_best(plan, r, 3 * (size_t)p->n, &res, &s->call_ms, &err);
    clcone_plan_free(plan);
    if (st) {
        bench_fail(b, f, "%s, %s: %s", name, CONFS[k].label, err.msg);
        free(r);
        return;
    }
    s->r = res.items[0];
    s->ok = 1;
    clcone_result_free(&res);
    free(r);
}

/* One row per file, one column per configuration, and the totals. */
static void siconos_table(FILE *f, char *const *files, int nf, const int *nctc, srun (*runs)[NCONF])
{
    char buf[64];
    /* one row per (file, configuration) would be 184 rows */
    fprintf(f, "Cells: iterations / time, or `cap` (error reached) when the run did not reach its tolerance.\n\n"
               "| file | contacts |");
    for (int k = 0; k < NCONF; ++k) fprintf(f, " %s |", CONFS[k].label);
    fprintf(f, "\n|---|---|");
    for (int k = 0; k < NCONF; ++k) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int i = 0; i < nf; ++i) {
        fprintf(f, "| %s | %d |", files[i], nctc[i]);
        for (int k = 0; k < NCONF; ++k) {
            srun *s = &runs[i][k];
            if (!s->ok) fprintf(f, " %s |", s->note[0] ? s->note : "failed");
            else if (s->r.status == CLCONE_CONVERGED)
                fprintf(f, " %d / %s |", s->r.iters, bench_fmt_ms(s->call_ms, buf, sizeof buf));
            else
                fprintf(f, " %s %d (%.1e) |", s->r.status == CLCONE_MAXITER ? "cap" : clcone_run_status_name(s->r.status),
                        s->r.iters, s->r.error);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "| **solved** | |");
    for (int k = 0; k < NCONF; ++k) {
        int c = 0;
        for (int i = 0; i < nf; ++i) c += runs[i][k].ok && runs[i][k].r.status == CLCONE_CONVERGED;
        fprintf(f, " %d / %d |", c, nf);
    }
    fprintf(f, "\n| **time, solved ones** | |");
    for (int k = 0; k < NCONF; ++k) {
        double t = 0;
        for (int i = 0; i < nf; ++i)
            if (runs[i][k].ok && runs[i][k].r.status == CLCONE_CONVERGED) t += runs[i][k].call_ms;
        fprintf(f, " %s |", bench_fmt_ms(t, buf, sizeof buf));
    }
    fprintf(f, "\n\n");
}

/* Time ratio device / reference on the problems both solve. */
static void siconos_ratios(bench *b, FILE *f, int nf, srun (*runs)[NCONF])
{
    fprintf(f, "Time ratio device / reference NSGS at the same tolerance, geometric mean over the problems both "
               "solve:\n\n| device | precision | model | solver | tolerance | problems | geometric mean of t_device / t_nsgs |\n"
               "|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < NCONF; ++k) {
        int ref = CONFS[k].profile ? 4 : 0, c = 0;
        double lg = 0;
        if (!CONFS[k].dev) continue;
        for (int i = 0; i < nf; ++i)
            if (runs[i][k].ok && runs[i][k].r.status == CLCONE_CONVERGED && runs[i][ref].ok
                && runs[i][ref].r.status == CLCONE_CONVERGED) {
                lg += log(fmax(runs[i][k].call_ms, 1e-3) / fmax(runs[i][ref].call_ms, 1e-3));
                c++;
            }
        if (c) fprintf(f, "| %s | %s | coulomb | %s | %.0e | %d | %.3g |\n", b->dev_short,
                       CONFS[k].dev == 1 ? "float" : "double", clcone_solver_name(CONFS[k].solver), CONFS[k].tol, c,
                       exp(lg / c));
    }
}

void bench_section_siconos(bench *b, FILE *f)
{
    char *files[MAXFILES];
    int nf = bench_problem_files(b, f, 0, files, MAXFILES);
    double cap = b->quick ? 0.1 : 1.5, budget = b->quick ? 30.0 : 200.0, t_start = bench_now();
    srun (*runs)[NCONF] = NULL;
    int nctc[MAXFILES];
    if (nf < 0) return;
    runs = calloc((size_t)nf + 1, sizeof *runs);
    if (!runs) {
        bench_fail(b, f, "out of memory");
        goto out;
    }
    fprintf(f, "The %d problem files of `%s` (clcone_read_problem_hdf5), model **coulomb**. Tolerances: 1e-8 for the "
               "reference NSGS (double) and the device in double; 1e-5 for the device in float (float rounds at "
               "about 1e-7 relative, 1e-8 is out of its reach), where the reference NSGS is also run to 1e-5 so that "
               "the float profile compares like with like. Each run is capped at %.1f s (`max_seconds`); a capped "
               "run counts as not solved. Time = wall time of clcone_plan_solve on a plan made untimed before it "
               "(the plan uploads the problem, colours it and launches every kernel once, so first-launch "
               "compilation is not solve time; the solve uploads the start, iterates and reads the reactions "
               "back); a solve under %.0f ms runs again, up to %d runs in all, and its time is the shortest. "
               "Problems of up to 16384 contacts (4096 on a GPU) run as one work-group each (kernels/group_solve.cl). "
               "Device: %s.\n\n",
            nf, b->problems, cap, BENCH_REPEAT_MS, BENCH_REPEATS, b->dev_name);
    for (int i = 0; i < nf; ++i) {
        char path[4096];
        clcone_problem p;
        clcone_error err;
        snprintf(path, sizeof path, "%s/%s", b->problems, files[i]);
        nctc[i] = 0;
        if (clcone_read_problem_hdf5(path, &p, &err)) {
            bench_fail(b, f, "%s: %s", files[i], err.msg);
            for (int k = 0; k < NCONF; ++k) snprintf(runs[i][k].note, sizeof runs[i][k].note, "unreadable");
            continue;
        }
        nctc[i] = p.n;
        fprintf(stderr, "bench:   siconos %s (%d contacts, %.0f s)\n", files[i], p.n, bench_elapsed(b));
        for (int k = 0; k < NCONF; ++k) siconos_run(b, f, files[i], &p, k, cap, budget, t_start, &runs[i][k]);
        clcone_problem_free(&p);
    }
    siconos_table(f, files, nf, nctc, runs);
    siconos_ratios(b, f, nf, runs);
    fprintf(f, "\nDolan-More performance profiles: for each solver, the fraction of the %d problems it solves within "
               "tau times the best time any solver of the plot needs on that problem (time = clcone_plan_solve).\n",
            nf);
    profile(b, f, runs, nf, 0, "profile_1e-8");
    profile(b, f, runs, nf, 1, "profile_1e-5");
    siconos_batch(b, f, files, nf);
out:
    for (int i = 0; i < nf; ++i) free(files[i]);
    free(runs);
}
