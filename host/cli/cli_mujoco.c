/* `clcone mujoco`: a MuJoCo model stepped with clcone as its constraint
 * solver (mujoco/adapter.h), optionally beside MuJoCo's own solver. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const USAGE_MUJOCO =
    "usage: clcone mujoco MODEL.xml --steps K [--device D] [--precision float|double]\n"
    "                     [--model soft|coulomb] [--solver S] [--tol T] [--max-iter K]\n"
    "                     [--check-every K] [--max-seconds S] [--compare mujoco]\n"
    "                     [--worlds N [--seed S] [--perturb V] [--threads T]]\n"
    "                     [--csv LOG] [--qpos FILE [--qpos-every K]]\n"
    "                     [--png FILE [--png-size WxH]]\n"
    "Steps a MuJoCo model (MJCF) K times as mj_step does, with clcone solving\n"
    "MuJoCo's constraint problem at every step (warm-started from the last\n"
    "step's forces) and MuJoCo doing the rest (collision, dynamics, sensors,\n"
    "the Euler or implicit integrator).\n"
    "  --model soft     MuJoCo's own problem: its R and a_ref (default); every row\n"
    "                   kind (equality, friction loss, limits, frictionless,\n"
    "                   pyramidal and elliptic contacts of condim 3, 4 or 6);\n"
    "                   by default MuJoCo's Newton method on its primal problem\n"
    "                   (every kind, by islands), on the reference in double\n"
    "                   where no --device is given (on a CPU the faster), else\n"
    "                   on that device, an island a work-group (an island past\n"
    "                   1,024 dofs on the reference); --solver apgd or pgs for\n"
    "                   the dual solvers\n"
    "  --model coulomb  hard contact: R = 0 on the contact rows, the rest as\n"
    "                   MuJoCo; exact Coulomb (De Saxce's law) on elliptic\n"
    "                   contacts, hard pyramids. Elliptic condim-3 contacts\n"
    "                   with one friction beside limits and frictionless\n"
    "                   contacts: the 3-row form; every other state by\n"
    "                   default (and with --solver newton, which is Alart-\n"
    "                   Curnier's on the 3-row form) MuJoCo's Newton on its\n"
    "                   primal problem in proximal rounds (each a soft problem,\n"
    "                   R shrinking toward 0 on the contacts, an elliptic\n"
    "                   normal shifted by De Saxce's term), any row kind and\n"
    "                   condim; --solver apgd (or pgs on ref) on the general-\n"
    "                   block form without elliptic contacts; other states are\n"
    "                   refused, naming the rows (exit 2)\n"
    "  --compare mujoco also run MuJoCo's Newton solver (tolerance 1e-10) at each\n"
    "                   step's state and print the force and qacc differences\n"
    "  --worlds N       step N copies of the model (1 to 100000), all their\n"
    "                   problems solved as one batch a step; world 0 starts from\n"
    "                   the model's state, world k >= 1 with each qvel[i] + V (2u - 1),\n"
    "                   u uniform in [0, 1) from splitmix64 at S + k 0x9E3779B97F4A7C15\n"
    "                   (--seed S, default 1; --perturb V, default 0.01); MuJoCo's\n"
    "                   stages and the batch's host work a world on T threads (1 to\n"
    "                   256, default 1; the same results for any T). With\n"
    "                   --compare mujoco, MuJoCo's mj_step (its\n"
    "                   own solver and options) then steps the same worlds one\n"
    "                   after another. N worlds whose MuJoCo data would not fit\n"
    "                   in memory (MemAvailable, a cgroup's or ulimit's limit)\n"
    "                   are refused before any is made (exit 2)\n"
    "  --csv LOG        a line a step: step,time,potential,kinetic,energy (MuJoCo's\n"
    "                   time and energy of the state the step started from),\n"
    "                   rows,contacts,blocks,status,iters,error,solve_ms\n"
    "  --qpos FILE      qpos after every K-th step (--qpos-every K, default 1):\n"
    "                   FILE.npy a numpy array (rows, nq) of doubles, any other\n"
    "                   name CSV of step,time,qpos0,...\n"
    "  --png FILE       the last state drawn by clcone's renderer (--png-size WxH,\n"
    "                   default 1200x900, each side 96 .. 8192): capsules as rows\n"
    "                   of spheres, cylinders, ellipsoids and meshes as their\n"
    "                   boxes, bodies coloured by their contact forces (--csv,\n"
    "                   --qpos, --png: not with --worlds)\n"
    "Ctrl-C (SIGINT) or SIGTERM stops a run of one world after the current step;\n"
    "--csv and --qpos then hold the finished steps (exit 130; a second signal\n"
    "stops at once and leaves the old files).\n"
    "A warning of MuJoCo's that loses physics (a full contact list or constraint\n"
    "arena, a NaN or huge qpos, qvel or qacc that it resets) and an error inside\n"
    "MuJoCo stop the run with its message (exit 2). A --solver that neither form\n"
    "of the problem runs on the backend is refused before the model is loaded.\n"
    "  --max-seconds S  caps each step's solve (the batch's with --worlds): default\n"
    "                   30, 0 = none; a capped solve ends maxiter, the run exit 1\n"
    "                   (MuJoCo's Newton on a device: checked between launches\n"
    "                   only, a step being one launch; --max-iter bounds it).\n"
    "                   A long solve shows its iterations on stderr (on a\n"
    "                   terminal, or with --progress)\n"
    "A line per step, then status=... error=... iters=... time_ms=...\n"
    "contacts=... [force_rel_diff=... qacc_rel_diff=...]: the worst status,\n"
    "the largest error, iterations and solve time summed, the most contacts,\n"
    "the largest differences. With --worlds: iters sums each step's most of\n"
    "any world, contacts is the most of a step summed over the worlds, then\n"
    "worlds=N worlds_per_s=... (world steps a second, N K over the steps'\n"
    "wall time) [mujoco_worlds_per_s=... speedup=... solve_ms_per_step=...\n"
    "mujoco_constraint_ms_per_step=...: clcone's solve of a step's batch and\n"
    "MuJoCo's constraint solver on all the worlds' step, its own timer].\n"
    "Device, precision, solver, tolerance and caps as for `clcone solve`.\n";

/* Each step's solve stops after this many seconds unless --max-seconds
 * says otherwise (a step that cannot converge ran 10^6 iterations, 9-15 s,
 * and a run of such steps for hours). */
#define MUJOCO_SOLVE_MAX_SECONDS 30.0

#ifndef CLCONE_MUJOCO

int cmd_mujoco(int argc, char **argv)
{
    if (cli_want_help(argc, argv, USAGE_MUJOCO)) return 0;
#ifdef CLCONE_MUJOCO_SKIPPED /* what the build found, and why it was not used */
    fprintf(stderr, "clcone: this clcone was built without MuJoCo: %s, the oldest the adapter compiles against.\n",
            CLCONE_MUJOCO_SKIPPED);
#else
    fprintf(stderr, "clcone: this clcone was built without MuJoCo.\n");
#endif
    fprintf(stderr, "clcone: `make mujoco` installs MuJoCo 4 (the PyPI wheel mujoco-core) into build/venv and "
                    "rebuilds the CLI with it (needs python3-venv and network; `make test` does the same); "
                    "a system MuJoCo %s or newer works too.\n",
            CLCONE_MUJOCO_MIN);
    return EXIT_USAGE;
}

#else

#include "mujoco/worlds.h"
#include "mujoco/guard.h"
#include "mujoco/traj.h"
#include "mujoco/picture.h"

/* --csv, --qpos, --qpos-every, --png and --png-size */
typedef struct traj_args {
    const char *csv, *qpos, *png;
    int every, png_w, png_h;
} traj_args;

/* The step's figures, and the run's totals in t (status worst, error and
 * differences largest, iterations and time summed, contacts most). */
static void report_step(int k, const clc_mujoco_stats *st, clc_mujoco_stats *t)
{
    printf("step %d: rows %d contacts %d blocks %d warm %d", k, st->nefc, st->ncon, st->blocks, st->warm_matched);
    if (st->blocks)
        printf(" %s iters %d error %.3e solve_ms %.3f setup_ms %.3f", clcone_run_status_name(st->res.status),
               st->res.iters, st->res.error, st->res.time_ms, st->setup_ms);
    if (st->force_rel_diff >= 0)
        printf(" force_rel_diff %.3e qacc_rel_diff %.3e mujoco_ms %.3f", st->force_rel_diff, st->qacc_rel_diff,
               st->mujoco_ms);
    printf("\n");
    if (st->res.status > t->res.status) t->res.status = st->res.status;
    t->res.error = fmax(t->res.error, st->blocks ? st->res.error : 0);
    t->res.iters += st->res.iters;
    t->res.time_ms += st->res.time_ms;
    if (st->ncon > t->ncon) t->ncon = st->ncon;
    t->force_rel_diff = fmax(t->force_rel_diff, st->force_rel_diff);
    t->qacc_rel_diff = fmax(t->qacc_rel_diff, st->qacc_rel_diff);
}

/* MuJoCo's model from path, or an exit code (the message printed). */
static int load_model(const char *path, mjModel **m)
{
    char errbuf[1000];
    FILE *f = fopen(path, "r");
    *m = NULL;
    if (!f) {
        fprintf(stderr, "clcone: %s: cannot open: %s\n", path, strerror(errno));
        return EXIT_USAGE;
    }
    fclose(f);
    *m = mj_loadXML(path, NULL, errbuf, sizeof errbuf);
    if (!*m) {
        fprintf(stderr, "clcone: %s: MuJoCo cannot load it: %s\n", path, errbuf);
        return EXIT_USAGE;
    }
    return 0;
}

/* The solver table's default for model m on forms on a backend (dev),
 * CLCONE_SOLVER_DEFAULT where none. */
static clcone_solver default_of(clcone_form form, clcone_model m, int dev)
{
    const clcone_offer *f;
    for (int i = 0; (f = clcone_offer_at(i)) != NULL; ++i)
        if ((f->forms & CLCONE_FORM_BIT(form)) && f->model == m && (dev ? f->device_default : f->reference_default))
            return f->solver;
    return CLCONE_SOLVER_DEFAULT;
}

/* Whether the table sends MuJoCo's soft problem under solver s
 * (CLCONE_SOLVER_DEFAULT: the reference's default) to its primal form,
 * whose solvers run on the reference where no device is named (on a CPU
 * the reference is the faster: docs/mujoco.md); a device named runs
 * them itself. coulomb keeps the device's default: its states with
 * elliptic cones go to the 3-row form. */
static int primal_form(clcone_model m, clcone_solver s)
{
    const clcone_offer *f;
    for (int i = 0; (f = clcone_offer_at(i)) != NULL; ++i)
        if ((f->forms & CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL)) && f->model == m && m == CLCONE_MODEL_SOFT &&
            f->reference_default &&
            (f->solver == s || (s == CLCONE_SOLVER_DEFAULT && f->reference_default)))
            return 1;
    return 0;
}

/* The device (ctx NULL: the reference) and the resolved options, with
 * the run's header lines and prog's progress line on stderr (a long
 * solve's iterations, on a terminal or with --progress); an exit code on
 * failure. A solver not given is the primal form's default where it has
 * one for soft (the adapter's rule), else it stays the default, which each
 * step's form resolves: coulomb's is hybrid on the 3-row form and the
 * primal form's proximal rounds where the general-block form would take
 * the state. */
static int open_backend(const cli_args *a, const mjModel *m, clcone_context **ctx, clcone_options *o,
                        cli_progress *prog)
{
    char backend[400], blocks[100] = "";
    clcone_error e;
    clcone_solver shown, primal, general;
    *ctx = NULL;
    *o = a->o;
    if (!is_ref(a->device) && cli_open_device(a->device, a->prec, ctx, &e)) return lib_error(&e);
    clcone_options_resolve(o, *ctx);
    shown = o->solver;
    o->solver = a->o.solver;
    primal = default_of(CLCONE_FORM_PRIMAL, o->model, *ctx != NULL);
    general = default_of(CLCONE_FORM_BLOCKS, o->model, *ctx != NULL);
    if (o->solver == CLCONE_SOLVER_DEFAULT && primal != CLCONE_SOLVER_DEFAULT && o->model == CLCONE_MODEL_SOFT)
        shown = primal;
    else if (o->solver == CLCONE_SOLVER_DEFAULT && primal != CLCONE_SOLVER_DEFAULT)
        snprintf(blocks, sizeof blocks,
                 " (%s in proximal rounds on the primal problem where the 3-row form does not hold a state)",
                 clcone_solver_name(primal));
    else if (o->solver == CLCONE_SOLVER_DEFAULT && general != shown)
        snprintf(blocks, sizeof blocks, " (%s on the general-block form)", clcone_solver_name(general));
    describe_backend(*ctx, backend, sizeof backend);
    printf("model: %s (MuJoCo %s; nv %d, timestep %g, %s cones)\nbackend: %s, model %s, solver %s%s, tol %g",
           a->positional[0], mj_versionString(), (int)m->nv, m->opt.timestep,
           m->opt.cone == mjCONE_ELLIPTIC ? "elliptic" : "pyramidal", backend, clcone_model_name(o->model),
           clcone_solver_name(shown), blocks, o->tol);
    /* a device's primal Newton runs a step in one launch (coulomb's rounds a
     * launch a round), which the time cap does not stop */
    if (o->max_seconds > 0 && *ctx && o->model == CLCONE_MODEL_COULOMB && primal != CLCONE_SOLVER_DEFAULT &&
        (shown == primal || o->solver == CLCONE_SOLVER_DEFAULT))
        printf(", at most %g s a solve, checked between launches (a proximal round is one launch)", o->max_seconds);
    else if (o->max_seconds > 0 && *ctx && shown == primal)
        printf(", at most %g s a solve between launches (a step is one launch)", o->max_seconds);
    else if (o->max_seconds > 0)
        printf(", at most %g s a solve", o->max_seconds);
    printf("\n");
    cli_progress_attach(a, o, prog);
    return 0;
}

/* "step k: " in front of e's message, then the CLI's error exit. */
static int step_error(clcone_error *e, int k)
{
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    snprintf(e->msg, sizeof e->msg, "step %d: %.990s", k, msg);
    return lib_error(e);
}

static int run(const cli_args *a, int steps, int compare, const traj_args *ta)
{
    static const double cmp_tol = 1e-10;
    clcone_context *ctx = NULL;
    clc_mujoco *ad = NULL;
    clc_mj_traj *tr = NULL;
    clc_mujoco_stats st, tot;
    cli_progress prog = {0};
    clcone_error e;
    mjModel *m = NULL, *mc = NULL;
    mjData *d = NULL;
    clcone_options o;
    const char *path = a->positional[0];
    int rc = load_model(path, &m), caught = 0, done;
    if (rc) return rc;
    rc = EXIT_USAGE;
    if (clc_mujoco_make_data(m, path, &d, &e) || (compare && clc_mujoco_copy_model(m, path, &mc, &e))) {
        rc = lib_error(&e);
        goto out;
    }
    if (mc) {
        mc->opt.solver = mjSOL_NEWTON;
        mc->opt.tolerance = cmp_tol;
        mc->opt.iterations = 1000;
    }
    if ((rc = open_backend(a, m, &ctx, &o, &prog))) goto out;
    rc = EXIT_USAGE;
    if (clc_mujoco_create(ctx, &o, path, &ad, &e)) {
        rc = lib_error(&e);
        goto out;
    }
    if (mc) printf("compare: MuJoCo Newton, tolerance %g, at most %d iterations, at each step's state\n", cmp_tol,
                   mc->opt.iterations);
    /* caught before the outputs open: a signal then ends the run after
     * its step with the recorded steps kept, never beside a temporary */
    cli_catch_stop_signals();
    caught = 1;
    if ((ta->csv || ta->qpos) && clc_mj_traj_open(m, ta->csv, ta->qpos, ta->every, &tr, &e)) {
        rc = lib_error(&e);
        goto out;
    }
    memset(&tot, 0, sizeof tot);
    tot.force_rel_diff = tot.qacc_rel_diff = -1;
    for (done = 0; done < steps && !cli_stop_requested(); ++done) {
        double t0 = d->time;
        if (clc_mujoco_step(ad, m, d, mc, &st, &e)) {
            rc = step_error(&e, done);
            goto out;
        }
        report_step(done, &st, &tot);
        if (tr && clc_mj_traj_record(tr, m, d, done, t0, &st, &e)) {
            rc = lib_error(&e);
            goto out;
        }
    }
    if (cli_stop_requested()) {
        rc = cli_report_interrupted(done, steps);
        goto out;
    }
    if (ta->png) {
        char title[600];
        snprintf(title, sizeof title, "%.500s after %d steps, t = %g s", path, steps, d->time);
        if (clc_mj_render_png(m, d, ta->png, ta->png_w, ta->png_h, title, &e)) {
            rc = lib_error(&e);
            goto out;
        }
        printf("wrote %s\n", ta->png);
    }
    printf("status=%s error=%.6e iters=%d time_ms=%.3f contacts=%d", clcone_run_status_name(tot.res.status),
           tot.res.error, tot.res.iters, tot.res.time_ms, tot.ncon);
    if (compare) printf(" force_rel_diff=%.6e qacc_rel_diff=%.6e", tot.force_rel_diff, tot.qacc_rel_diff);
    printf("\n");
    rc = tot.res.status == CLCONE_CONVERGED ? 0 : EXIT_NOTCONV;
out:
    /* what was recorded is kept, a failed or stopped run's too */
    if (clc_mj_traj_close(tr, &e) && rc != EXIT_USAGE) rc = lib_error(&e);
    if (caught) cli_release_stop_signals();
    cli_progress_end(&prog);
    clc_mujoco_free(ad);
    if (d) mj_deleteData(d);
    if (mc) mj_deleteModel(mc);
    if (m) mj_deleteModel(m);
    clcone_context_free(ctx);
    return rc;
}

/* MuJoCo's own mj_step (the model's solver and options) on the worlds'
 * data, one after another, each step of every world before the next. */
typedef struct mj_steps_job {
    const mjModel *m;
    mjData **d;
    int n, steps;
} mj_steps_job;

static clcone_status mj_steps(void *arg)
{
    const mj_steps_job *j = arg;
    for (int k = 0; k < j->steps; ++k)
        for (int w = 0; w < j->n; ++w) mj_step(j->m, j->d[w]);
    return CLCONE_OK;
}

/* MuJoCo's timers read this clock (ms) while it is mjcb_time. */
static mjtNum mujoco_clock_ms(void)
{
    return cli_now_ms();
}

/* World steps a second of mj_steps on the same n perturbed worlds in
 * *rate, and the milliseconds a step its constraint solver took for all
 * of them (its own timer, mjTIMER_CONSTRAINT) in *constraint_ms; or an
 * error (out of memory, MuJoCo's). */
static clcone_status mujoco_worlds_per_s(const mjModel *m, const char *path, int n, int steps,
                                         unsigned long long seed, double scale, double *rate,
                                         double *constraint_ms, clcone_error *e)
{
    mj_steps_job j = {m, calloc((size_t)n, sizeof *j.d), n, steps};
    mjfTime clock = mjcb_time;
    double t0;
    int made = 0;
    clcone_status s = CLCONE_OK;
    if (!j.d) {
        e->code = CLCONE_ENOMEM;
        snprintf(e->msg, sizeof e->msg, "%s: out of memory for MuJoCo's data of %d worlds", path, n);
        return CLCONE_ENOMEM;
    }
    while (made < n && !(s = clc_mujoco_make_data(m, path, &j.d[made], e))) {
        clc_worlds_perturb(m, j.d[made], seed, made, scale);
        ++made;
    }
    mjcb_time = mujoco_clock_ms;
    t0 = cli_now_ms();
    if (!s) s = clc_mujoco_call(mj_steps, &j, path, e);
    *rate = 1e3 * n * (double)steps / (cli_now_ms() - t0);
    mjcb_time = clock;
    *constraint_ms = 0;
    for (int w = 0; w < made; ++w) *constraint_ms += j.d[w]->timer[mjTIMER_CONSTRAINT].duration / steps;
    for (int w = 0; w < made; ++w) mj_deleteData(j.d[w]);
    free(j.d);
    return s;
}

typedef struct worlds_args {
    int n, threads, steps, compare;
    unsigned long long seed;
    double scale;
} worlds_args;

static int run_worlds(const cli_args *a, const worlds_args *wa)
{
    clcone_context *ctx = NULL;
    clc_worlds *w = NULL;
    clc_worlds_stats st;
    cli_progress prog = {0};
    clcone_error e;
    mjModel *m = NULL;
    clcone_options o;
    clcone_run_status worst = CLCONE_CONVERGED;
    double error = 0, solve_ms = 0, t0, rate, mj_rate, mj_constraint_ms;
    int iters = 0, contacts = 0, rc = load_model(a->positional[0], &m);
    if (rc) return rc;
    if ((rc = open_backend(a, m, &ctx, &o, &prog))) goto out;
    /* MuJoCo's own run of the same worlds comes while these are held */
    if ((wa->compare && clc_worlds_check_memory(m, 2LL * wa->n, a->positional[0], &e))
        || clc_worlds_create(ctx, &o, a->positional[0], m, wa->n, wa->threads, wa->seed, wa->scale, &w, &e)) {
        rc = lib_error(&e);
        goto out;
    }
    printf("worlds: %d, seed %llu, qvel perturbed by up to %g; one batch a step; MuJoCo's stages on %d thread%s\n",
           wa->n, wa->seed, wa->scale, wa->threads, wa->threads > 1 ? "s" : "");
    t0 = cli_now_ms();
    for (int k = 0; k < wa->steps; ++k) {
        if (clc_worlds_step(w, &st, &e)) {
            rc = step_error(&e, k);
            goto out;
        }
        printf("step %d: worlds solved %d rows %d contacts %d blocks %d", k, st.solved, st.rows, st.contacts,
               st.blocks);
        if (st.solved)
            printf(" %s iters %d error %.3e host_ms %.3f build_ms %.3f batch_ms %.3f solve_ms %.3f",
                   clcone_run_status_name(st.status), st.iters, st.error, st.host_ms, st.build_ms, st.batch_ms,
                   st.solve_ms);
        printf("\n");
        if (st.solved && st.status > worst) worst = st.status;
        error = fmax(error, st.error);
        iters += st.iters;
        solve_ms += st.solve_ms;
        if (st.contacts > contacts) contacts = st.contacts;
    }
    rate = 1e3 * wa->n * (double)wa->steps / (cli_now_ms() - t0);
    printf("status=%s error=%.6e iters=%d time_ms=%.3f contacts=%d worlds=%d worlds_per_s=%.1f",
           clcone_run_status_name(worst), error, iters, solve_ms, contacts, wa->n, rate);
    if (wa->compare) {
        if (mujoco_worlds_per_s(m, a->positional[0], wa->n, wa->steps, wa->seed, wa->scale, &mj_rate,
                                &mj_constraint_ms, &e)) {
            rc = lib_error(&e);
            goto out;
        }
        printf(" mujoco_worlds_per_s=%.1f speedup=%.3f solve_ms_per_step=%.3f mujoco_constraint_ms_per_step=%.3f",
               mj_rate, rate / mj_rate, solve_ms / wa->steps, mj_constraint_ms);
    }
    printf("\n");
    rc = worst == CLCONE_CONVERGED ? 0 : EXIT_NOTCONV;
out:
    cli_progress_end(&prog);
    clc_worlds_free(w);
    if (m) mj_deleteModel(m);
    clcone_context_free(ctx);
    return rc;
}

/* A --solver that no form runs on the backend, refused before the model
 * is loaded (a usage error); one that only the 3-row form runs stops at
 * the first step with rows it does not hold, naming them. */
static int check_solver(const cli_args *a)
{
    clcone_error e;
    if (!clc_mujoco_check_solver(&a->o, !is_ref(a->device), 1, &e)) return 0;
    return usage_error(USAGE_MUJOCO, "%s", e.msg);
}

/* --csv, --qpos, --qpos-every, --png and --png-size (v: given or NULL)
 * into ta, checked against the model's path and --worlds (n); an exit
 * code when one is wrong. */
static int parse_traj(const char *const v[5], const char *model, int n, traj_args *ta)
{
    const char *csv = v[0], *qpos = v[1], *every = v[2];
    const cli_output outs[] = {{"--csv", csv, 0, NULL, NULL}, {"--qpos", qpos, 0, NULL, NULL},
                               {"--png", v[3], 0, NULL, NULL}};
    const cli_input in = {"MODEL.xml", model};
    int rc;
    ta->csv = csv;
    ta->qpos = qpos;
    ta->png = v[3];
    ta->every = 1;
    ta->png_w = 1200;
    ta->png_h = 900;
    if (v[4] && (rc = cli_png_size(USAGE_MUJOCO, v[3], v[4], &ta->png_w, &ta->png_h))) return rc;
    if (every && !qpos) return usage_error(USAGE_MUJOCO, "--qpos-every does not apply: %s", "no --qpos FILE");
    if (every && (rc = cli_int_opt(USAGE_MUJOCO, "--qpos-every", every, 1, INT_MAX, &ta->every))) return rc;
    if (n && (csv || qpos || v[3]))
        return usage_error(USAGE_MUJOCO, "%s records a run of one world, not of --worlds N",
                           csv ? "--csv" : qpos ? "--qpos" : "--png");
    return cli_check_outputs(outs, 3, &in, 1);
}

/* --worlds N, --seed S, --perturb V and --threads T (given or NULL) into
 * wa; an exit code when one is wrong. */
static int parse_worlds(const char *wv, const char *sv, const char *pv, const char *tv, worlds_args *wa)
{
    int seed = 1, rc;
    wa->n = 0;
    wa->threads = 1;
    wa->scale = 0.01;
    if (!wv && (sv || pv))
        return usage_error(USAGE_MUJOCO, "%s perturbs the worlds of --worlds N, which is not given", sv ? "--seed" : "--perturb");
    if (!wv && tv) return usage_error(USAGE_MUJOCO, "--threads runs the worlds of --worlds N, which is not given%s", "");
    if (!wv) return 0;
    if ((tv && (rc = cli_int_opt(USAGE_MUJOCO, "--threads", tv, 1, CLCONE_WORLDS_THREADS, &wa->threads)))
        || (rc = cli_int_opt(USAGE_MUJOCO, "--worlds", wv, 1, CLCONE_WORLDS_MAX, &wa->n))
        || (sv && (rc = cli_int_opt(USAGE_MUJOCO, "--seed", sv, 0, INT_MAX, &seed))))
        return rc;
    if (pv && (!parse_double(pv, &wa->scale) || wa->scale < 0))
        return usage_error(USAGE_MUJOCO, "--perturb needs a finite velocity >= 0, got '%s'", pv);
    wa->seed = (unsigned long long)seed;
    return 0;
}

int cmd_mujoco(int argc, char **argv)
{
    static const char *const unused[] = {"--warm",           "--out",           "--plot",          "--dir",
                                         "--facets",         "--fit",           "--soft-timeconst", "--soft-dampratio",
                                         "--soft-impedance", "--soft-dt",       "--sap-beta",
                                         "--sap-stiffness", "--sap-dissipation",      NULL};
    cli_args a;
    const char *v, *cmp, *wv, *sv, *pv, *tv, *keep[5];
    char **args;
    worlds_args wa;
    traj_args ta;
    clc_mujoco_handlers outer;
    cli_opt_fault missing = {NULL, 0};
    int steps = -1, rc;
    /* a step's line as it comes, also into a pipe (a long run's progress) */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (cli_want_help(argc, argv, USAGE_MUJOCO)) return 0;
    args = malloc(((size_t)argc + 1) * sizeof *args);
    if (!args) return EXIT_USAGE;
    memcpy(args, argv, (size_t)argc * sizeof *args);
    v = cli_take_opt(&argc, args, "--steps", &missing);
    cmp = cli_take_opt(&argc, args, "--compare", &missing);
    wv = cli_take_opt(&argc, args, "--worlds", &missing);
    sv = cli_take_opt(&argc, args, "--seed", &missing);
    pv = cli_take_opt(&argc, args, "--perturb", &missing);
    tv = cli_take_opt(&argc, args, "--threads", &missing);
    keep[0] = cli_take_opt(&argc, args, "--csv", &missing);
    keep[1] = cli_take_opt(&argc, args, "--qpos", &missing);
    keep[2] = cli_take_opt(&argc, args, "--qpos-every", &missing);
    keep[3] = cli_take_opt(&argc, args, "--png", &missing);
    keep[4] = cli_take_opt(&argc, args, "--png-size", &missing);
    rc = missing.opt ? cli_opt_fault_error(USAGE_MUJOCO, &missing) : parse_args(argc, args, USAGE_MUJOCO, 1, &a);
    free(args);
    if (rc) return rc < 0 ? 0 : rc;
    if (!v) return usage_error(USAGE_MUJOCO, "mujoco needs --steps K%s", "");
    if ((rc = cli_int_opt(USAGE_MUJOCO, "--steps", v, 1, INT_MAX, &steps))) return rc;
    if (cmp && strcmp(cmp, "mujoco") != 0)
        return usage_error(USAGE_MUJOCO, "--compare takes 'mujoco' (MuJoCo's own solver), got '%s'", cmp);
    if ((rc = parse_worlds(wv, sv, pv, tv, &wa))) return rc;
    if (a.npos != 1) return usage_error(USAGE_MUJOCO, "mujoco needs one MODEL.xml%s", "");
    if ((rc = parse_traj(keep, a.positional[0], wa.n, &ta))) return rc;
    if ((rc = cli_refuse(&a, USAGE_MUJOCO, unused, "the MuJoCo model gives R, a_ref and the time step")))
        return rc;
    if (!cli_given(&a, "--model")) a.o.model = CLCONE_MODEL_SOFT;
    if (a.o.model != CLCONE_MODEL_SOFT && a.o.model != CLCONE_MODEL_COULOMB)
        return usage_error(USAGE_MUJOCO, "--model %s does not apply: MuJoCo's problem is solved as soft or coulomb",
                           clcone_model_name(a.o.model));
    /* the primal form's solvers, the reference's default there, run on
     * the reference without a device given; a precision given asks for
     * a device */
    if (primal_form(a.o.model, a.o.solver) && !cli_given(&a, "--device") && !cli_given(&a, "--precision")
        && !(getenv("CLCONE_DEVICE") && *getenv("CLCONE_DEVICE"))) {
        a.device = "ref";
        a.prec = CLCONE_DOUBLE;
    }
    if ((rc = cli_check_applicable(&a, USAGE_MUJOCO, 0)) || (rc = check_solver(&a))) return rc;
    if (!cli_given(&a, "--max-seconds")) a.o.max_seconds = MUJOCO_SOLVE_MAX_SECONDS;
    wa.steps = steps;
    wa.compare = cmp != NULL;
    /* MuJoCo's errors and warnings are clcone's from here to the end:
     * every MuJoCo call runs under clc_mujoco_call */
    outer = clc_mujoco_hold();
    rc = wa.n ? run_worlds(&a, &wa) : run(&a, steps, cmp != NULL, &ta);
    clc_mujoco_release(outer);
    return rc;
}

#endif
