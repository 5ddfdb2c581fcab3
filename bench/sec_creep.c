/* Section 8: hard contact without creep (issue 21 item 4). The pinched
 * capsule of bench/models/pinch.xml (MuJoCo issue #3328) stepped with
 * MuJoCo's own solvers (Newton, CG, PGS; elliptic cones with impratio 1
 * and 10, pyramidal cones) and with clcone as the solver through the
 * adapter (host/mujoco/adapter.c): --model coulomb (exact Coulomb, R = 0
 * on the contacts) and --model soft (MuJoCo's own problem), on the
 * reference and the device in double. The slip rate is the capsule's
 * fall over a window after the grip settled. Built with MuJoCo only
 * (-DBENCH_MUJOCO), as section 5. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <math.h>
#include <string.h>

#ifndef BENCH_MUJOCO

void bench_section_creep(bench *b, FILE *f)
{
    (void)b;
    fprintf(f, "**Skipped**: the bench was built without MuJoCo (see section 5 for how `make bench` gets it).\n\n");
}

#else

#include <mujoco/mujoco.h>
#include "mujoco/adapter.h"

#define PINCH_MODEL "bench/models/pinch.xml"

/* One run: MuJoCo's solver (mj) or clcone's (model, on the device or
 * not), with the cone and impratio set on the loaded model. */
typedef struct creep_run {
    const char *solver; /* the row's name */
    int mj;             /* mjtSolver, or -1: clcone through the adapter */
    clcone_model model;
    int device;
    int cone;
    double impratio;
    int noslip; /* MuJoCo's noslip_iterations */
} creep_run;

typedef struct creep_result {
    double rate_ums;  /* fall over the window / its length, um/s */
    double settle_mm; /* fall during the settling time */
    double normal_n;  /* normal forces summed over the contacts at the end */
    double step_ms;   /* wall time of a whole step, mean */
    int ncon;         /* contacts at the end */
    const char *clcone_solver; /* the solver clcone's options resolved to */
} creep_result;

static const creep_run RUNS[] = {
    {"MuJoCo Newton", mjSOL_NEWTON, 0, 0, mjCONE_ELLIPTIC, 10, 0},
    {"MuJoCo CG", mjSOL_CG, 0, 0, mjCONE_ELLIPTIC, 10, 0},
    {"MuJoCo PGS", mjSOL_PGS, 0, 0, mjCONE_ELLIPTIC, 10, 0},
    {"MuJoCo Newton", mjSOL_NEWTON, 0, 0, mjCONE_ELLIPTIC, 1, 0},
    {"MuJoCo CG", mjSOL_CG, 0, 0, mjCONE_ELLIPTIC, 1, 0},
    {"MuJoCo PGS", mjSOL_PGS, 0, 0, mjCONE_ELLIPTIC, 1, 0},
    {"MuJoCo Newton", mjSOL_NEWTON, 0, 0, mjCONE_PYRAMIDAL, 1, 0},
    {"MuJoCo CG", mjSOL_CG, 0, 0, mjCONE_PYRAMIDAL, 1, 0},
    {"MuJoCo PGS", mjSOL_PGS, 0, 0, mjCONE_PYRAMIDAL, 1, 0},
    {"MuJoCo Newton", mjSOL_NEWTON, 0, 0, mjCONE_PYRAMIDAL, 10, 0},
    {"MuJoCo Newton, noslip 10", mjSOL_NEWTON, 0, 0, mjCONE_ELLIPTIC, 10, 10},
    {"clcone soft, reference", -1, CLCONE_MODEL_SOFT, 0, mjCONE_ELLIPTIC, 10, 0},
    {"clcone soft, device", -1, CLCONE_MODEL_SOFT, 1, mjCONE_ELLIPTIC, 10, 0},
    {"clcone coulomb, reference", -1, CLCONE_MODEL_COULOMB, 0, mjCONE_ELLIPTIC, 10, 0},
    {"clcone coulomb, device", -1, CLCONE_MODEL_COULOMB, 1, mjCONE_ELLIPTIC, 10, 0},
};
#define NRUNS (int)(sizeof RUNS / sizeof RUNS[0])

/* The rows of the goal: clcone's exact Coulomb (model 0 is coulomb, so
 * MuJoCo's rows are told by their solver). */
static int clc_coulomb(const creep_run *r) { return r->mj < 0 && r->model == CLCONE_MODEL_COULOMB; }

/* Steps m (a copy with run r's options) for settle + window steps; the
 * capsule's height is its free joint's z. 0, or -1 with msg. */
static int pinch_run(bench *b, const mjModel *m0, const creep_run *r, int settle, int window, creep_result *out,
                     char *msg, size_t len)
{
    mjModel *m = mj_copyModel(NULL, m0);
    mjData *d = m ? mj_makeData(m) : NULL;
    clc_mujoco *ad = NULL;
    clc_mujoco_stats st;
    clcone_error e;
    double z0, zs = 0, t0;
    int zadr, rc = -1;
    memset(out, 0, sizeof *out);
    if (!d) {
        snprintf(msg, len, "out of memory for MuJoCo's model or data");
        goto done;
    }
    m->opt.cone = r->cone;
    m->opt.impratio = r->impratio;
    m->opt.noslip_iterations = r->noslip;
    if (r->mj >= 0) m->opt.solver = r->mj;
    else {
        clcone_context *ctx = r->device ? b->dctx : NULL;
        clcone_options o;
        if (r->device && !ctx) {
            snprintf(msg, len, "no double context: %.900s", b->dctx_err);
            goto done;
        }
        clcone_options_default(&o);
        o.model = r->model;
        clcone_options_resolve(&o, ctx);
        out->clcone_solver = clcone_solver_name(o.solver);
        if (clc_mujoco_create(ctx, &o, PINCH_MODEL, &ad, &e)) {
            snprintf(msg, len, "%.900s", e.msg);
            goto done;
        }
    }
    zadr = m->jnt_qposadr[mj_name2id(m, mjOBJ_JOINT, "capsule")] + 2;
    z0 = d->qpos[zadr];
    t0 = bench_now();
    for (int k = 0; k < settle + window; ++k) {
        if (k == settle) zs = d->qpos[zadr];
        if (!ad) mj_step(m, d);
        else if (clc_mujoco_step(ad, m, d, NULL, &st, &e)) {
            snprintf(msg, len, "step %d: %.900s", k, e.msg);
            goto done;
        }
    }
    out->step_ms = (bench_now() - t0) * 1e3 / (settle + window);
    out->rate_ums = (zs - d->qpos[zadr]) / (window * m->opt.timestep) * 1e6;
    out->settle_mm = (z0 - zs) * 1e3;
    out->ncon = d->ncon;
    for (int i = 0; i < d->ncon; ++i) {
        mjtNum f[6];
        mj_contactForce(m, d, i, f);
        out->normal_n += f[0];
    }
    rc = 0;
done:
    clc_mujoco_free(ad);
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
    return rc;
}

void bench_section_creep(bench *b, FILE *f)
{
    char err[1000];
    mjModel *m = mj_loadXML(PINCH_MODEL, NULL, err, sizeof err);
    double settle_s = b->quick ? 0.5 : 1.0, window_s = b->quick ? 0.5 : 2.0, weight, best[2] = {-1, -1};
    int settle, window;
    if (!m) {
        bench_fail(b, f, "MuJoCo cannot load %s: %s", PINCH_MODEL, err);
        return;
    }
    settle = (int)lround(settle_s / m->opt.timestep);
    window = (int)lround(window_s / m->opt.timestep);
    weight = m->body_mass[mj_name2id(m, mjOBJ_BODY, "capsule")] * fabs(m->opt.gravity[2]);
    fprintf(f, "A capsule pinched between two pads (`%s`, after MuJoCo issue #3328: a %.0f g capsule, weight "
               "%.2f N, held only by friction 0.7 between pads on slide joints squeezed by position actuators). "
               "MuJoCo %s steps it with its own solvers at their default tolerance and iterations, and with "
               "clcone as the solver through the adapter (`clcone mujoco --model soft|coulomb`, the library's "
               "default solver and tolerance; device %s in double). Slip rate: the capsule's fall over %.1f s "
               "after %.1f s of settling, time step %g s; settling fall: during those first %.1f s; normal force: "
               "summed over the contacts at the end (Coulomb's capacity is 0.7 times it); ms per step: the whole "
               "step, collision and integration included.\n\n",
            PINCH_MODEL, 1e3 * weight / fabs(m->opt.gravity[2]), weight, mj_versionString(), b->dev_short, window_s,
            settle_s, m->opt.timestep, settle_s);
    fprintf(f, "| solver | cone | impratio | slip rate (um/s) | settling fall (mm) | normal force (N) | contacts "
               "| ms per step |\n|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < NRUNS; ++i) {
        const creep_run *r = &RUNS[i];
        creep_result res;
        char msg[1100];
        if (pinch_run(b, m, r, settle, window, &res, msg, sizeof msg)) {
            bench_fail(b, f, "%s: %s", r->solver, msg);
            continue;
        }
        fprintf(f, "| %s%s%s%s | %s | %g | %s%.3g%s | %.3g | %.3g | %d | %.3f |\n", r->solver,
                res.clcone_solver ? " (" : "", res.clcone_solver ? res.clcone_solver : "", res.clcone_solver ? ")" : "",
                r->cone == mjCONE_ELLIPTIC ? "elliptic" : "pyramidal", r->impratio, clc_coulomb(r) ? "**" : "",
                res.rate_ums, clc_coulomb(r) ? "**" : "", res.settle_mm, res.normal_n, res.ncon, res.step_ms);
        /* a capsule out of the grip (no contact) has no slip rate to meet */
        if (clc_coulomb(r)) best[r->device] = res.ncon ? fabs(res.rate_ums) : INFINITY;
    }
    fprintf(f, "\nThe goal, clcone coulomb below 0.1 um/s: %s on the reference, %s on the device.\n\n",
            best[0] < 0 ? "not measured" : best[0] < 0.1 ? "met" : "**not met**",
            best[1] < 0 ? "not measured" : best[1] < 0.1 ? "met" : "**not met**");
    mj_deleteModel(m);
    bench_hard_models(b, f);
}

#endif
