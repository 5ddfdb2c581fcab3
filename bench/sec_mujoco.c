/* Section 5: MuJoCo as a peer (built only with -DBENCH_MUJOCO, i.e. when
 * the Makefile found MuJoCo: the PyPI wheel in a venv under the build
 * folder, else Debian's libmujoco-dev). Piles of spheres (clc_gen_pile)
 * and of cubes are written as MJCF (free bodies, unit density, condim 3,
 * elliptic cones) and MuJoCo's own constraint problem at that state is
 * taken as it is: its dual W = efc_AR = J M^-1 J' + R, q = efc_b =
 * J qacc_smooth - aref, min 1/2 f'Wf + q'f over the friction cones.
 * MuJoCo's PGS, CG and Newton mj_fwdConstraint are timed on it, and every
 * solution is judged by its force accuracy against Newton run to 1e-10;
 * clcone (model ccp on W, or soft on the bodies; reference and device) is
 * timed to CG's force accuracy. The natural-map error is shown, not used
 * as the target: at CG's natural-map error clcone's forces are 20-60x
 * further from the solution than CG's on these piles. The shared models
 * (Stonehenge, 100 humanoids) are stepped by MuJoCo to a state whose
 * whole problem, every row kind, clcone solves in the general-block form
 * (clc_solve_blocks), measured the same way. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "cone.h"
#include "solve/blocks_solve.h"
#ifdef BENCH_MUJOCO
#include "mujoco/mj_primal.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_MUJOCO

void bench_section_mujoco(bench *b, FILE *f)
{
    (void)b;
    fprintf(f, "**Skipped**: the bench was built without MuJoCo. `make bench` installs the PyPI wheel `mujoco` "
               "into a virtual environment under the build folder and links against its `libmujoco.so`; that "
               "failed (no network or no `python3 -m venv`) and Debian's `libmujoco-dev` headers were not "
               "installed either. Fix one of the two and run `make bench` again for this section.\n\n");
}

#else

#include <mujoco/mujoco.h>
#include "mujoco_models.h"

#ifndef BENCH_MUJOCO_FROM
#define BENCH_MUJOCO_FROM "an unnamed installation"
#endif

/* MuJoCo's solvers at the model's defaults, then Newton run tight: the
 * forces every accuracy is measured against. */
#define NSOL 3
#define TIGHT NSOL
#define TIGHT_TOL 1e-10
#define TIGHT_ITERS 1000
#define CG 1
#define NEWTON 2

static const char *const sol_name[NSOL + 1] = {"PGS", "CG", "Newton", "Newton, tight"};
static const int sol_id[NSOL + 1] = {mjSOL_PGS, mjSOL_CG, mjSOL_NEWTON, mjSOL_NEWTON};

typedef struct mj_scene {
    int cubes; /* 0: spheres of clc_gen_pile, 1: a lattice pile of cubes */
    int n;     /* spheres asked of clc_gen_pile, or cubes along an edge */
    const char *file, *label; /* else a shared model, stepped MJ_STEPS by MuJoCo */
} mj_scene;

#define MJ_STEPS 200
#define MJ_MODELS "tests/data/models/mujoco/"

/* clcone's side: the reference (dev 0) and the device in float (1) and
 * double (2), on MuJoCo's W as it is, or (body) on the same problem in
 * clcone's body form (mj_body_form): matrix-free J M^-1 J' + R on the
 * device, W + R assembled from the bodies on the reference. quick: also
 * in the quick run. Jacobi is left out: it is the slowest of them on
 * every scene here. newton: MuJoCo's primal problem (see gcfgs). */
typedef struct ccfg {
    int dev;
    clcone_solver solver;
    int body, quick;
} ccfg;

static const ccfg cfgs[] = {
    {0, CLCONE_SOLVER_PGS, 0, 0},  {0, CLCONE_SOLVER_CGS, 0, 0},  {0, CLCONE_SOLVER_APGD, 0, 1},
    {0, CLCONE_SOLVER_ACGS, 0, 1}, {0, CLCONE_SOLVER_APGD, 1, 0}, {0, CLCONE_SOLVER_ACGS, 1, 0},
    {1, CLCONE_SOLVER_APGD, 0, 0}, {1, CLCONE_SOLVER_CGS, 0, 0},  {1, CLCONE_SOLVER_ACGS, 0, 1},
    {2, CLCONE_SOLVER_APGD, 0, 0}, {2, CLCONE_SOLVER_CGS, 0, 0},  {2, CLCONE_SOLVER_ACGS, 0, 0},
    {1, CLCONE_SOLVER_APGD, 1, 1}, {1, CLCONE_SOLVER_CGS, 1, 0},  {1, CLCONE_SOLVER_ACGS, 1, 0},
    {2, CLCONE_SOLVER_APGD, 1, 0}, {2, CLCONE_SOLVER_CGS, 1, 0},  {2, CLCONE_SOLVER_ACGS, 1, 0},
    {0, CLCONE_SOLVER_NEWTON, 0, 1}, {1, CLCONE_SOLVER_NEWTON, 0, 1}, {2, CLCONE_SOLVER_NEWTON, 0, 1}};
#define NCFG ((int)(sizeof cfgs / sizeof *cfgs))

/* The shared models' general-block form (what clc_solve_blocks runs) and,
 * for newton, their primal problem (MuJoCo's Newton method,
 * clc_mj_primal_solve, on the reference or a device): the solver table's
 * rows of those forms. */
static const ccfg gcfgs[] = {{0, CLCONE_SOLVER_NEWTON, 0, 1}, {0, CLCONE_SOLVER_APGD, 0, 1},
                             {0, CLCONE_SOLVER_PGS, 0, 1},    {1, CLCONE_SOLVER_APGD, 0, 1},
                             {2, CLCONE_SOLVER_APGD, 0, 1},   {1, CLCONE_SOLVER_NEWTON, 0, 1},
                             {2, CLCONE_SOLVER_NEWTON, 0, 1}};
#define NGCFG ((int)(sizeof gcfgs / sizeof *gcfgs))

/* Seconds of CPU time of the whole process, every thread (POCL's
 * workers are threads of it): unlike wall time, hardly moved by other
 * processes on the machine, so a ratio of them holds on a loaded one. */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A timed call: wall and CPU milliseconds. */
typedef struct timing {
    double ms, cpu;
} timing;

/* Best wall time (ms) of the calls of run made within tmin seconds: at
 * least one, at most max_runs, and (*cpu) the least CPU time of them.
 * With warm, a first call is a warm-up, not counted, unless it took tmin
 * or more: a call that long is timed once, by that first call (then
 * *runs = 0). run returns 0 when it may be repeated, 1 when once is
 * enough (a capped run that did not converge), -1 on failure (then NaN). */
static timing best_ms(int (*run)(void *), void *arg, int warm, int max_runs, double tmin, int *runs)
{
    timing best = {INFINITY, INFINITY};
    double t0 = bench_now(), c0 = cpu_now();
    int k = 0, rc = 0;
    if (warm) {
        if (run(arg) < 0) return (timing){NAN, NAN};
        *runs = 0;
        if (bench_now() - t0 >= tmin) return (timing){(bench_now() - t0) * 1e3, (cpu_now() - c0) * 1e3};
        t0 = bench_now();
    }
    while (rc == 0 && k < max_runs && (k == 0 || bench_now() - t0 < tmin)) {
        double t = bench_now(), c = cpu_now();
        rc = run(arg);
        if (rc < 0) return (timing){NAN, NAN};
        best.ms = fmin(best.ms, (bench_now() - t) * 1e3);
        best.cpu = fmin(best.cpu, (cpu_now() - c) * 1e3);
        ++k;
    }
    *runs = k;
    return best;
}

typedef struct mj_call {
    const mjModel *m;
    mjData *d;
} mj_call;

static int mj_once(void *arg)
{
    mj_call *c = arg;
    mj_fwdConstraint(c->m, c->d);
    return 0;
}

static int mj_iterations(const mjData *d)
{
#if mjVERSION_HEADER >= 300
    /* MuJoCo solves each constraint island apart: the slowest counts */
    int it = 0, ni = d->nisland < 1 ? 1 : d->nisland < mjNISLAND ? d->nisland : mjNISLAND;
    for (int i = 0; i < ni; ++i) it = it > d->solver_niter[i] ? it : d->solver_niter[i];
    return it;
#else
    return d->solver_iter;
#endif
}

static int mj_islands(const mjData *d)
{
#if mjVERSION_HEADER >= 300
    return d->nisland;
#else
    (void)d;
    return 1;
#endif
}

/* A clcone solve from r = 0 (m rows): on a plan, the general-block
 * problem bp on ctx with o (no plan: each call sets itself up), or the
 * primal problem pr from qacc_smooth. */
typedef struct cc_call {
    clcone_plan *plan;
    const clc_bproblem *bp;
    clc_mj_primal *pr;
    clcone_context *ctx;
    const clcone_options *o;
    int m;
    double *r;
    clcone_prob_result res;
    clcone_error err;
} cc_call;

static int cc_once(void *arg)
{
    cc_call *c = arg;
    clcone_result res;
    memset(c->r, 0, sizeof(double) * (size_t)c->m);
    if (c->pr) {
        if (clc_mj_primal_solve(c->ctx, c->pr, c->o, &c->res, &c->err)) return -1;
    } else if (c->bp) {
        if (clc_solve_blocks(c->ctx, c->bp, c->o, c->r, &c->res, &c->err)) return -1;
    } else {
        if (clcone_plan_solve(c->plan, c->r, &res, &c->err)) return -1;
        c->res = res.items[0];
        clcone_result_free(&res);
    }
    return c->res.status == CLCONE_CONVERGED ? 0 : 1;
}

/* Force accuracy: max |f - f_tight| / max |f_tight|. */
static double force_acc(const double *f, const double *tight, int n)
{
    double d = 0, m = 0;
    for (int i = 0; i < n; ++i) {
        d = fmax(d, fabs(f[i] - tight[i]));
        m = fmax(m, fabs(tight[i]));
    }
    return d / fmax(m, 1e-300);
}

/* Settings of the runs, in one place for the text of the report. */
typedef struct mj_settings {
    int max_runs; /* best of the calls made in tmin s, at most max_runs */
    double tmin;
    double cap;             /* clcone: seconds per solve */
    double budget;          /* section: seconds; later scenes are skipped */
    int iterations;         /* MuJoCo's defaults, read from the models */
    double tolerance;
    int probes;             /* clcone: solves at most, per configuration */
    double newton_skip;     /* s: Newton at the default tolerance is left out when the tight one took longer */
} mj_settings;

/* Whether MuJoCo 2.2 would need more than a quarter of the machine's
 * memory for the scene (then a line says so, in place of a failure). */
static int too_big(FILE *f, int ncon_est, const char *path)
{
    double need = mj_dense_ar_bytes(ncon_est), mem = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (need <= mem / 4) return 0;
    fprintf(f, "`%s` left out: MuJoCo %s would allocate %.1f GB for its dense AR, more than a quarter of the %.1f GB "
               "of memory (MuJoCo 3 and later size it sparsely).\n\n",
            strrchr(path, '/') + 1, mj_versionString(), need / 1e9, mem / 1e9);
    return 1;
}

/* One scene's run: MuJoCo's model and data, its dual problem p, its
 * solvers' times, errors, force accuracies and forces (the tight Newton's
 * last), and clcone's buffers and best configurations. */
typedef struct mj_run {
    bench *b;
    FILE *f;
    mj_settings *S;
    char path[4096], label[64];
    int nbodies, nc, nefc, body_state; /* body form: 0 not built, 1 built, -1 failed */
    int general;                       /* a shared model: bp, not p */
    int primal_state;                  /* primal: 0 not built, 1 built, -1 failed */
    clc_mj_primal primal;
    int runs[NSOL + 1], iters[NSOL + 1];
    timing tmj[NSOL + 1];
    double emj[NSOL + 1], amj[NSOL + 1], *fmj[NSOL + 1], *r, *rmj, *bR, *baref, *bmap;
    timing best[2];     /* fastest (wall) to CG's force accuracy: reference, device */
    char best_cfg[2][96];
    clcone_scene s, bs;
    clcone_problem p;
    clc_bproblem bp;
    mjModel *m;
    mjData *d;
} mj_run;

/* The scene's MJCF file written and loaded, and MuJoCo's dual problem
 * read; 0, or -1 after a failure noted (or a scene too big, said). */
static int mj_load(mj_run *R, const mj_scene *sc, double mu, double dt)
{
    bench *b = R->b;
    FILE *f = R->f;
    char errbuf[1000] = "";
    clcone_error err;
    int ncon_est;
    if (sc->file) {
        snprintf(R->path, sizeof R->path, "%s", sc->file);
        snprintf(R->label, sizeof R->label, "%s", sc->label);
        fprintf(stderr, "bench: mujoco: %s\n", R->label);
        if (mj_load_stepped(sc->file, MJ_STEPS, &R->m, &R->d, &R->bp, &err)) {
            bench_fail(b, f, "%s", err.msg);
            return -1;
        }
        R->general = 1;
        R->nbodies = R->m->nbody - 1;
    } else if (sc->cubes) {
        /* up to four cubes below and four above, four corners each */
        ncon_est = 20 * sc->n * sc->n * sc->n;
        snprintf(R->path, sizeof R->path, "%s/mujoco_cubes_%d.xml", b->out, sc->n * sc->n * sc->n);
        if (too_big(f, ncon_est, R->path)) return -1;
        if (write_cubes(R->path, sc->n, mu, dt, ncon_est, &R->nbodies)) {
            bench_fail(b, f, "cannot write %s", R->path);
            return -1;
        }
        snprintf(R->label, sizeof R->label, "%d cubes", R->nbodies);
    } else {
        if (clc_gen_pile(sc->n, mu, dt, 0.1, 1, &R->s, &err)) {
            bench_fail(b, f, "pile of %d: %s", sc->n, err.msg);
            return -1;
        }
        /* headroom for MuJoCo finding more contacts than clcone did */
        ncon_est = 2 * R->s.ncontacts + 64;
        snprintf(R->path, sizeof R->path, "%s/mujoco_spheres_%d.xml", b->out, sc->n);
        if (too_big(f, ncon_est, R->path)) return -1;
        if (write_spheres(R->path, &R->s, mu, dt, ncon_est, &R->nbodies)) {
            bench_fail(b, f, "cannot write %s", R->path);
            return -1;
        }
        snprintf(R->label, sizeof R->label, "%d spheres", R->nbodies);
    }
    if (!R->general) fprintf(stderr, "bench: mujoco: %s\n", R->label);
    if (!R->general && !(R->m = mj_loadXML(R->path, NULL, errbuf, sizeof errbuf))) {
        bench_fail(b, f, "MuJoCo could not load %s: %s", R->path, errbuf);
        return -1;
    }
    if (!R->general && !(R->d = mj_makeData(R->m))) {
        bench_fail(b, f, "mj_makeData failed on %s", R->path);
        return -1;
    }
    /* every call then starts from qacc_smooth: the same problem each time */
    R->m->opt.disableflags |= mjDSBL_WARMSTART;
    R->S->iterations = R->m->opt.iterations;
    R->S->tolerance = R->m->opt.tolerance;
    if (R->general) {
        R->nc = R->d->ncon;
        R->nefc = R->d->nefc;
        return 0;
    }
    if (mj_read_dual(R->m, R->d, &R->p, &err)) {
        bench_fail(b, f, "%s: %s", R->label, err.msg);
        return -1;
    }
    R->nc = R->p.n;
    R->nefc = 3 * R->nc;
    return 0;
}

/* The natural-map error of forces f in MuJoCo's rows: clcone's ccp error
 * on the piles' (W, q, mu), the general-block measure on a shared model's. */
static double nat_err(const mj_run *R, const double *f)
{
    if (R->general) return clc_bproblem_error(&R->bp, f, NULL);
    return clcone_error_of(&R->p, &(clcone_options){.model = CLCONE_MODEL_CCP}, f, 0, R->nc);
}

/* MuJoCo's solvers on the scene: Newton run tight first (the forces every
 * accuracy is measured against), then PGS, CG and Newton at the model's
 * defaults; each timed, its forces kept, its error measured as clcone
 * measures ccp's. The MuJoCo table's rows. 0, or -1 out of memory. */
static int mj_solvers(mj_run *R, FILE *t_mj)
{
    static const int order[NSOL + 1] = {TIGHT, 0, 1, 2};
    char buf[64], buf2[64];
    for (int kk = 0; kk <= NSOL; ++kk) {
        int k = order[kk], tight = k == TIGHT;
        mj_call c = {R->m, R->d};
        if (k == 2 && R->tmj[TIGHT].ms > 1e3 * R->S->newton_skip) {
            /* its default tolerance saves no Newton step worth the wait */
            fprintf(t_mj, "| %s | %s | %g | not run: the tight Newton took %s | | | | | |\n", R->label, sol_name[k],
                    R->S->tolerance, bench_fmt_ms(R->tmj[TIGHT].ms, buf, sizeof buf));
            continue;
        }
        R->fmj[k] = malloc(sizeof(double) * (size_t)R->nefc);
        if (!R->fmj[k]) {
            bench_fail(R->b, R->f, "out of memory");
            return -1;
        }
        R->m->opt.solver = sol_id[k];
        R->m->opt.tolerance = tight ? TIGHT_TOL : R->S->tolerance;
        R->m->opt.iterations = tight ? TIGHT_ITERS : R->S->iterations;
        /* the tight solve only sets the yardstick: once, untimed warm-up */
        R->tmj[k] = best_ms(mj_once, &c, !tight, tight ? 1 : R->S->max_runs, R->S->tmin, &R->runs[k]);
        R->iters[k] = mj_iterations(R->d);
        memcpy(R->fmj[k], R->d->efc_force, sizeof(double) * (size_t)R->nefc);
        R->emj[k] = nat_err(R, R->fmj[k]);
        R->amj[k] = force_acc(R->fmj[k], R->fmj[TIGHT], R->nefc);
        if (tight && R->iters[k] >= TIGHT_ITERS)
            bench_fail(R->b, R->f, "%s: MuJoCo Newton did not reach tolerance %g in %d iterations", R->label, TIGHT_TOL,
                       TIGHT_ITERS);
        fprintf(t_mj, "| %s | %s | %g | %d | %s | %.3g ms | %s | %.2e | %.2e |\n", R->label, sol_name[k],
                R->m->opt.tolerance, R->iters[k], bench_fmt_ms(R->tmj[k].ms, buf, sizeof buf), R->tmj[k].cpu,
                R->runs[k] ? (snprintf(buf2, sizeof buf2, "%d", R->runs[k]), buf2) : "1, its warm-up", R->emj[k],
                R->amj[k]);
    }
    R->m->opt.tolerance = R->S->tolerance;
    R->m->opt.iterations = R->S->iterations;
    return 0;
}

/* The body form of MuJoCo's problem, built once, for the first
 * configuration that needs it. */
static void mj_body_form_once(mj_run *R)
{
    clcone_error err;
    if (R->body_state != 0) return;
    R->bR = malloc(sizeof(double) * (size_t)R->nefc);
    R->baref = malloc(sizeof(double) * (size_t)R->nefc);
    R->bmap = malloc(sizeof(double) * 3 * (size_t)R->nefc);
    R->body_state = R->bR && R->baref && R->bmap && mj_body_form(R->m, R->d, &R->bs, R->bR, R->baref, R->bmap, &err) == 0 ? 1 : -1;
    if (R->body_state < 0)
        bench_fail(R->b, R->f, "%s: body form: %s", R->label, R->bR && R->baref && R->bmap ? err.msg : "out of memory");
}

/* One solve of clcone at options o. */
typedef struct probe {
    double tol, err, acc; /* err: ccp natural-map error on MuJoCo's (W, q, mu) */
    timing t;
    double setup_ms; /* general form: its best 1-iteration solve, the set-up's cost; else 0 */
    int iters, runs;
    clcone_run_status status;
} probe;

/* The general form's set-up (validation, scaling, the Lipschitz estimate,
 * upload), which a plan would leave out of the solve: the best of three
 * solves stopped after one iteration, or NaN when one fails. */
static double setup_ms(cc_call *c)
{
    const clcone_options *o = c->o;
    clcone_options one = *o;
    double best = INFINITY;
    one.max_iter = 1;
    c->o = &one;
    for (int k = 0; k < 3 && best == best; ++k) {
        double t = bench_now();
        best = cc_once(c) < 0 ? NAN : fmin(best, (bench_now() - t) * 1e3);
    }
    c->o = o;
    return best;
}

/* A solve of configuration cf at o->tol from r = 0, on a plan made for it
 * untimed (upload, colouring, first launches; a shared model's general
 * form has no plan: its set-up is timed with it): its time, its forces in
 * MuJoCo's rows (R->rmj), their natural-map error and force accuracy.
 * When the forces are within target, the best of more solves on the plan
 * is its time (the first one their warm-up). 0, or -1 after a failure. */
static int cc_probe(mj_run *R, const ccfg *cf, const clcone_options *o, double target, probe *pr)
{
    bench *b = R->b;
    clcone_context *ctx = cf->dev == 0 ? NULL : cf->dev == 1 ? b->fctx : b->dctx;
    int primal = cf->solver == CLCONE_SOLVER_NEWTON;
    cc_call c = {NULL, R->general && !primal ? &R->bp : NULL, primal ? &R->primal : NULL, ctx, o, R->nefc, R->r,
                 {0}, {0}};
    double t0, c0;
    int rc;
    if (!R->general && !primal && (cf->body ? clcone_plan_create_scene(ctx, &R->bs, o, &c.plan, &c.err)
                                 : clcone_plan_create(ctx, &R->p, o, &c.plan, &c.err))) {
        bench_fail(b, R->f, "%s: %s %s (set-up): %s", R->label, cf->dev ? b->dev_short : "reference",
                   clcone_solver_name(cf->solver), c.err.msg);
        return -1;
    }
    t0 = bench_now();
    c0 = cpu_now();
    rc = cc_once(&c);
    pr->t = (timing){(bench_now() - t0) * 1e3, (cpu_now() - c0) * 1e3};
    pr->runs = 1;
    if (rc >= 0) {
        if (cf->body) mj_rows_from_body(R->nc, R->bmap, R->r, R->rmj);
        else if (primal)
            for (int x = 0; x < R->nefc; ++x) R->rmj[R->primal.row[x]] = R->primal.f[x];
        else memcpy(R->rmj, R->r, sizeof(double) * (size_t)R->nefc);
        pr->tol = o->tol;
        pr->iters = c.res.iters;
        pr->status = c.res.status;
        pr->err = nat_err(R, R->rmj);
        pr->acc = force_acc(R->rmj, R->fmj[TIGHT], R->nefc);
        if (rc == 0 && pr->acc <= target) {
            timing more = best_ms(cc_once, &c, 0, R->S->max_runs, R->S->tmin, &pr->runs);
            pr->t = (timing){fmin(pr->t.ms, more.ms), fmin(pr->t.cpu, more.cpu)};
            if (c.bp) pr->setup_ms = setup_ms(&c);
        }
    }
    if (c.plan) clcone_plan_free(c.plan);
    if (rc < 0 || !(pr->t.ms == pr->t.ms)) {
        bench_fail(b, R->f, "%s: %s %s on MuJoCo's problem: %s", R->label, cf->dev ? b->dev_short : "reference",
                   clcone_solver_name(cf->solver), c.err.msg);
        return -1;
    }
    return 0;
}

/* Configuration cf to CG's force accuracy. Solves from r = 0 at tolerances
 * tol_0 = CG's natural-map error, then tol_k+1 = tol_k * s with s = 0.7
 * target / acc_k kept in [0.01, 0.7] (near the solution the force error
 * falls about as the tolerance), until the forces are within CG's
 * accuracy of Newton's tight ones (met), a solve stops at the cap, the
 * tolerance passes the precision's floor, or S->probes solves were made;
 * then one more solve halfway back towards the last miss. The clcone
 * table's row. */
static void mj_clcone_config(mj_run *R, const ccfg *cf, FILE *t_cc)
{
    bench *b = R->b;
    const char *eng = cf->dev ? b->dev_short : "CPU reference", *prec = cf->dev == 1 ? "float" : "double";
    int primal = cf->solver == CLCONE_SOLVER_NEWTON;
    const char *sname = clcone_solver_name(cf->solver),
               *form = primal ? "primal" : R->general ? "general" : cf->body ? "body" : "local";
    const double target = R->amj[CG], tol_floor = cf->dev == 1 ? 1e-7 : 1e-13;
    char buf[64], buf2[64], why[64] = "";
    probe first = {0}, pr = {0};
    int k, met = 0, solves;
    double missed = 0, last_acc = NAN;
    clcone_options o;
    if (cf->dev && !(cf->dev == 1 ? b->fctx : b->dctx)) return;
    if (b->quick && !cf->quick) return;
    if (cf->body) mj_body_form_once(R);
    if (cf->body && R->body_state < 0) return;
    if (primal && !R->primal_state) {
        clcone_error e;
        R->primal_state = clc_mj_primal_build(R->m, R->d, R->label, 0, &R->primal, &e) ? -1 : 1;
        if (R->primal_state < 0) bench_fail(b, R->f, "%s: the primal problem: %s", R->label, e.msg);
    }
    if (primal && R->primal_state < 0) return;
    clcone_options_default(&o);
    /* MuJoCo's problem is soft's: its own R and a_ref in the general and
     * primal forms and in the body form's arrays; ccp on its W + R */
    o.model = cf->body || primal || R->general ? CLCONE_MODEL_SOFT : CLCONE_MODEL_CCP;
    o.soft_R = cf->body ? R->bR : NULL;
    o.soft_aref = cf->body ? R->baref : NULL;
    o.solver = cf->solver;
    o.max_seconds = R->S->cap;
    o.tol = R->emj[CG];
    for (k = 0; k < R->S->probes; ++k) {
        if (cc_probe(R, cf, &o, target, &pr)) return;
        if (k == 0) first = pr;
        if (pr.status != CLCONE_CONVERGED) {
            snprintf(why, sizeof why, "%s at %.1f s", clcone_run_status_name(pr.status), R->S->cap);
            break;
        }
        if ((met = pr.acc <= target)) break;
        /* forces the last, looser tolerance gave again (a Newton method
         * stopping at the same step): the next probe goes the furthest */
        missed = o.tol;
        o.tol *= k > 0 && pr.acc == last_acc ? 0.01 : fmax(0.01, fmin(0.7, 0.7 * target / pr.acc));
        last_acc = pr.acc;
        if (o.tol < tol_floor) {
            snprintf(why, sizeof why, "tolerance below %s's %.0e", prec, tol_floor);
            break;
        }
    }
    solves = k + (k < R->S->probes);
    if (!met && !why[0]) snprintf(why, sizeof why, "%d solves, the last at tol %.2e", solves, pr.tol);
    /* the step may have overshot: one try halfway (in log) back to the
     * tolerance that missed, kept when it meets the target too */
    if (met && k > 0) {
        probe back;
        o.tol = sqrt(o.tol * missed);
        if (cc_probe(R, cf, &o, target, &back)) return;
        ++solves;
        if (back.status == CLCONE_CONVERGED && back.acc <= target) pr = back;
    }
    if (met && pr.t.ms < R->best[cf->dev != 0].ms) {
        R->best[cf->dev != 0] = pr.t;
        snprintf(R->best_cfg[cf->dev != 0], sizeof R->best_cfg[0], "%s %s %s", prec, form, sname);
    }
    fprintf(t_cc, "| %s | %s | %s | %s | %s | %d, %.2e | ", R->label, eng, form, prec, sname, first.iters, first.acc);
    if (met)
        fprintf(t_cc, "%.2e (%.2gx) | %d | %d | %.2e | %.2e | %s (best of %d)%s%s | %.3g ms | %.3g | %.3g |\n",
                pr.tol, pr.tol / R->emj[CG], solves, pr.iters, pr.err, pr.acc, bench_fmt_ms(pr.t.ms, buf, sizeof buf),
                pr.runs, R->general && !primal ? "; 1 iteration: " : "",
                R->general && !primal ? bench_fmt_ms(pr.setup_ms, buf2, sizeof buf2) : "", pr.t.cpu,
                pr.t.ms / R->tmj[CG].ms, pr.t.cpu / R->tmj[CG].cpu);
    else
        fprintf(t_cc, "not met: %s | %d | %d | %.2e | %.2e | %s | %.3g ms | >= %.3g | >= %.3g |\n", why, solves,
                pr.iters, pr.err, pr.acc, bench_fmt_ms(pr.t.ms, buf, sizeof buf), pr.t.cpu, pr.t.ms / R->tmj[CG].ms,
                pr.t.cpu / R->tmj[CG].cpu);
}

/* One scene: MuJoCo's problem, its solvers, clcone to CG's force
 * accuracy. Rows go to the tables' streams. */
static void run_scene(bench *b, FILE *f, mj_settings *S, const mj_scene *sc, FILE *t_scene, FILE *t_mj,
                      FILE *t_cc, FILE *t_sum)
{
    const double mu = 0.5, dt = 0.01;
    char buf[64];
    mj_run *R = calloc(1, sizeof *R);
    if (!R) {
        bench_fail(b, f, "out of memory");
        return;
    }
    R->b = b;
    R->f = f;
    R->S = S;
    R->best[0] = R->best[1] = (timing){INFINITY, INFINITY};
    if (mj_load(R, sc, mu, dt)) goto out;
    if (sc->cubes || sc->file) snprintf(buf, sizeof buf, "- (MuJoCo's collision only)");
    else snprintf(buf, sizeof buf, "%d", R->s.ncontacts);
    fprintf(t_scene, "| %s | %d | %s | %d | %d | %d | %d | `%s` |\n", R->label, R->nbodies, buf, R->nc, R->nefc,
            R->general ? R->bp.nnzb : R->p.nnzb, mj_islands(R->d), strrchr(R->path, '/') + 1);
    if (mj_solvers(R, t_mj)) goto out;
    R->r = malloc(sizeof(double) * (size_t)R->nefc);
    R->rmj = malloc(sizeof(double) * (size_t)R->nefc);
    if (!R->r || !R->rmj) {
        bench_fail(b, f, "out of memory");
        goto out;
    }
    for (int j = 0; j < (R->general ? NGCFG : NCFG); ++j) mj_clcone_config(R, R->general ? &gcfgs[j] : &cfgs[j], t_cc);
    fprintf(t_sum, "| %s | %s, %.3g ms | %.2e | %.2e |", R->label, bench_fmt_ms(R->tmj[CG].ms, buf, sizeof buf),
            R->tmj[CG].cpu, R->amj[CG], R->emj[CG]);
    for (int d = 0; d < 2; ++d)
        if (R->best_cfg[d][0])
            fprintf(t_sum, " %s, %s, %.3g ms: %.3g, %.3g |", R->best_cfg[d], bench_fmt_ms(R->best[d].ms, buf, sizeof buf),
                    R->best[d].cpu, R->best[d].ms / R->tmj[CG].ms, R->best[d].cpu / R->tmj[CG].cpu);
        else
            fprintf(t_sum, " none |");
    fprintf(t_sum, " %s |", R->best[1].ms <= R->tmj[CG].ms ? "yes" : "no");
    /* issue 31's own target: either backend, at CG's force accuracy, in
     * at most the time of MuJoCo's Newton (the default one, not tight) */
    if (R->fmj[NEWTON]) {
        const timing *t = &R->best[R->best[1].ms < R->best[0].ms];
        fprintf(t_sum, " %s, %.3g ms | %.3g, %.3g: %s |\n", bench_fmt_ms(R->tmj[NEWTON].ms, buf, sizeof buf),
                R->tmj[NEWTON].cpu, t->ms / R->tmj[NEWTON].ms, t->cpu / R->tmj[NEWTON].cpu,
                t->ms <= R->tmj[NEWTON].ms ? "yes" : "no");
    } else
        fprintf(t_sum, " not run | - |\n");
out:
    if (R->d) mj_deleteData(R->d);
    if (R->m) mj_deleteModel(R->m);
    for (int k = 0; k <= NSOL; ++k) free(R->fmj[k]);
    free(R->r);
    free(R->rmj);
    free(R->bR);
    free(R->baref);
    free(R->bmap);
    clcone_problem_free(&R->p);
    clc_bproblem_free(&R->bp);
    if (R->primal_state > 0) clc_mj_primal_free(&R->primal);
    clcone_scene_free(&R->s);
    clcone_scene_free(&R->bs);
    free(R);
}

/* The section's text around its tables t[0..4]. */
static void mj_report(bench *b, FILE *f, const mj_settings *S, char *const *t)
{
    fprintf(f, "MuJoCo **%s** (`mj_versionString()`; headers %d), from %s. Each scene is written as MJCF in this "
               "directory (free bodies of unit density, a floor plane, for the spheres also the container's walls "
               "as planes; condim 3, `cone=\"elliptic\"`, friction %.1f, margin 1e-6, timestep %.2f, default "
               "solref/solimp) and MuJoCo's own collision makes the contacts. The problem compared is MuJoCo's own "
               "dual at that state: W = `efc_AR` = J M^-1 J' + R (after `mj_projectConstraint`, read in MuJoCo's "
               "sparse layout), q = `efc_b` = J qacc_smooth - aref, min 1/2 f'Wf + q'f over the elliptic cones, "
               "whose rows (normal, tangent 1, tangent 2 at `efc_address` 3i) are clcone's local form and K_mu as "
               "they are (model **ccp**; W symmetrised, rounding only).\n\n"
               "The shared models `stonehenge.xml` and `100_humanoids.xml` (`%s`, as they are: their own cones, "
               "condims, solref and options) are stepped %d steps by MuJoCo's own `mj_step` (its default solver, "
               "warm-started) and compared at that state on MuJoCo's whole problem in clcone's general-block form "
               "(`clc_mujoco_bproblem`: every row kind, rows in MuJoCo's order, W = J M^-1 J' + R formed by the "
               "adapter, q = `efc_b`); its natural-map error is the general form's (`clc_bproblem_error`). "
               "The form `primal` (every scene) is MuJoCo's own primal problem at that state "
               "(`clc_mj_primal_build`: M, J, qacc_smooth, R, a_ref, no A) solved by clcone's MuJoCo Newton method "
               "on the reference or the device (`clc_mj_primal_solve`, every island one batch) from qacc_smooth, "
               "as MuJoCo's rows here start from it; its forces are measured in MuJoCo's rows as the dual forms' "
               "are, and its time leaves out building the problem, as the dual forms' leave out forming W.\n\n"
               "**The measure is force accuracy**: max |f - f_tight| / max |f_tight|, f_tight MuJoCo's Newton run "
               "to tolerance %g (at most %d iterations) on the same problem. The natural-map error (clcone's ccp "
               "error on that (W, q, mu)) is shown beside it: it flatters, since W + R is ill-conditioned where "
               "contacts outnumber the bodies' freedoms, and a small residual leaves forces far from the "
               "solution.%s\n\n",
            mj_versionString(), mj_version(), BENCH_MUJOCO_FROM, 0.5, 0.01, MJ_MODELS, MJ_STEPS, TIGHT_TOL, TIGHT_ITERS,
            b->quick ? " Quick mode: the 4096-sphere pile and the configurations not marked quick are left out." : "");
    fprintf(f, "| scene | bodies | clcone contacts (clc_gen_pile) | MuJoCo contacts | rows nefc | W blocks (3x3; shared models: stored blocks) | "
               "islands | MJCF |\n|---|---|---|---|---|---|---|---|\n%s\n(Shared models: MuJoCo's bodies but the world, its contacts, "
               "and the general form's stored blocks of W, a block a contact, limit, friction-loss row or "
               "equality.)\n\n",
            t[0]);
    fprintf(f, "MuJoCo `mj_fwdConstraint` on one thread of the CPU, warm start disabled (every call starts from "
               "qacc_smooth: the same problem each time), sparse Jacobian (MuJoCo's own choice at these sizes), "
               "the model's default iterations (%d) and tolerance (%g) but for the tight Newton. Time: after an "
               "untimed warm-up call, the best of the calls made in %.1f s (at least one, at most %d); a warm-up "
               "call that itself took longer is the one timed call; the tight Newton is one call, and Newton at the "
               "default tolerance is left out when the tight one took more than %.0f s. CPU time: the least of those "
               "calls', of the whole process (every thread, POCL's workers included): other work on the machine "
               "stretches wall times, far less CPU times, so where the machine is shared the CPU ratios are the "
               "steadier comparison (a device solve on the CPU pays there for all of its worker threads). "
               "Iterations: the largest over the islands.\n\n",
            S->iterations, S->tolerance, S->tmin, S->max_runs, S->newton_skip);
    fprintf(f, "| scene | MuJoCo solver | tolerance | iterations | time | CPU time | calls | natural-map error | force "
               "accuracy |\n|---|---|---|---|---|---|---|---|---|\n%s\n",
            t[1]);
    fprintf(f, "clcone on the same problem from r = 0, each configuration (engine, form, precision, solver) to CG's "
               "force accuracy: solves at tolerance tol_0 = CG's natural-map error, then each next tolerance the last "
               "times 0.7 target / accuracy (within [0.01, 0.7]), until the force accuracy is CG's or better (at "
               "most %d solves, each capped at %.1f s), then one solve halfway (in log) back to the last tolerance "
               "that missed, kept if it meets the target too. The first solve is the natural-map comparison "
               "(its iterations and force accuracy shown); the last is timed: `clcone_plan_solve` on a plan made "
               "untimed (upload, colouring, every kernel once), the best of the solves made in %.1f s (at most "
               "%d). Local form: MuJoCo's W as it is (model ccp). Body form: clcone's scene of MuJoCo's bodies "
               "(centre of mass, mass, world inverse inertia, free velocity = the centres' acceleration under "
               "qacc_smooth) and contacts, the soft model with MuJoCo's R = `efc_R` and a_ref = `efc_aref`: the "
               "device applies W = J M^-1 J' + R matrix-free, the reference assembles it; the reactions, in "
               "clcone's own tangents, are rotated back to MuJoCo's rows before they are measured. General form "
               "(the shared models): `clc_solve_blocks`, apgd on the reference and the device, pgs on the "
               "reference; it has no plan, so each timed solve includes its set-up (validation, scaling, the "
               "Lipschitz estimate, upload), and the best of three solves stopped after 1 iteration is shown "
               "beside it as that set-up's cost. Ratio: clcone time / CG's time.\n\n",
            S->probes, S->cap, S->tmin, S->max_runs);
    fprintf(f, "| scene | engine | form | precision | solver | at CG's natural-map error: iterations, force accuracy | "
               "tol to CG's force accuracy (x CG's natural-map error) | solves | iterations | natural-map error | "
               "force accuracy | time | CPU time | ratio to CG | CPU ratio to CG |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n%s\n",
            t[2]);
    fprintf(f, "Targets (reported, not tuned to): the device reaches MuJoCo CG's force accuracy in at most CG's "
               "time; and (issue 31) the faster of the reference and the device reaches it in at most the time "
               "of MuJoCo's Newton at its default tolerance, all measured above (ratios: wall time, CPU time)."
               "\n\n| scene | CG time, CPU time | CG force accuracy | CG natural-map error | "
               "fastest reference: configuration, time, CPU time: ratio, CPU ratio | fastest device: the same | "
               "device at or below CG's time | MuJoCo Newton time, CPU time | faster clcone over Newton: at or "
               "below |\n"
               "|---|---|---|---|---|---|---|---|---|\n%s\n%s",
            t[3], t[4]);
}

/* Whether the scene is to be run: BENCH_MUJOCO_SCENES, when set, is a
 * comma-separated list of scene labels ("Stonehenge,100 humanoids") or
 * pile sizes ("512", "cubes"), so that the shared models' rows can be
 * measured before and after a change without the piles' minutes. */
static int scene_wanted(const mj_scene *sc)
{
    const char *env = getenv("BENCH_MUJOCO_SCENES");
    char name[64], list[512], *tok, *save = NULL;
    if (!env || !*env) return 1;
    if (sc->label) snprintf(name, sizeof name, "%s", sc->label);
    else if (sc->cubes) snprintf(name, sizeof name, "cubes");
    else snprintf(name, sizeof name, "%d", sc->n);
    snprintf(list, sizeof list, "%s", env);
    for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (strcmp(tok, name) == 0) return 1;
    return 0;
}

void bench_section_mujoco(bench *b, FILE *f)
{
    /* the largest last: the budget may leave it out */
    static const mj_scene full[] = {{0, 512, NULL, NULL},
                                    {1, 8, NULL, NULL},
                                    {0, 0, MJ_MODELS "replicate/stonehenge.xml", "Stonehenge"},
                                    {0, 0, MJ_MODELS "humanoid/100_humanoids.xml", "100 humanoids"},
                                    {0, 4096, NULL, NULL}};
    static const mj_scene quick[] = {{0, 512, NULL, NULL},
                                     {1, 8, NULL, NULL},
                                     {0, 0, MJ_MODELS "replicate/stonehenge.xml", "Stonehenge"},
                                     {0, 0, MJ_MODELS "humanoid/100_humanoids.xml", "100 humanoids"}};
    const mj_scene *sc = b->quick ? quick : full;
    int nsc = b->quick ? (int)(sizeof quick / sizeof *quick) : (int)(sizeof full / sizeof *full);
    mj_settings S = {10, b->quick ? 0.2 : 0.5, b->quick ? 1.0 : 3.0, b->quick ? 40 : 600, 0, 0, 6, 30};
    char *txt[5] = {NULL};
    size_t len[5];
    FILE *t[5];
    double t0 = bench_now();
    for (int i = 0; i < 5; ++i) {
        t[i] = open_memstream(&txt[i], &len[i]);
        if (!t[i]) {
            bench_fail(b, f, "open_memstream failed");
            for (int j = 0; j < i; ++j) fclose(t[j]);
            for (int j = 0; j < i; ++j) free(txt[j]);
            return;
        }
    }
    for (int i = 0; i < nsc; ++i) {
        if (!scene_wanted(&sc[i])) {
            fprintf(t[4], "Scene %d of %d skipped: not in BENCH_MUJOCO_SCENES.\n\n", i + 1, nsc);
            continue;
        }
        if (bench_now() - t0 > S.budget) {
            fprintf(t[4], "Scene %d of %d skipped: the section's budget of %.0f s was spent.\n\n", i + 1, nsc, S.budget);
            continue;
        }
        run_scene(b, t[4], &S, &sc[i], t[0], t[1], t[2], t[3]);
    }
    for (int i = 0; i < 5; ++i) fclose(t[i]);
    mj_report(b, f, &S, txt);
    for (int i = 0; i < 5; ++i) free(txt[i]);
}

#endif
