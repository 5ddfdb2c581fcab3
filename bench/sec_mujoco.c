/* Section 5: MuJoCo as a peer (built only with -DBENCH_MUJOCO, i.e. when
 * MuJoCo's headers were found). The pile of clcone_gen_pile written as an
 * MJCF model (free spheres, unit density, floor and walls as planes,
 * condim 3, elliptic cones); MuJoCo's constraint problem at that state;
 * its PGS, CG and Newton mj_fwdConstraint timed; the same dual problem
 * (W = efc_AR = A + R, q = efc_b = J qacc_smooth - aref, a cone QP)
 * solved by clcone (model ccp) on the reference and the device. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef BENCH_MUJOCO

void bench_section_mujoco(bench *b, FILE *f)
{
    (void)b;
    fprintf(f, "**Skipped**: the bench was built without MuJoCo (its headers, Debian package `libmujoco-dev`, "
               "were not found when `make bench` built it). Install it (`apt-get install libmujoco-dev`) and "
               "run `make bench` again for this section.\n\n");
}

#else

#include <mujoco/mujoco.h>

#define PI 3.14159265358979323846

static int write_mjcf(const char *path, const clcone_scene *s, double mu, double dt, int njmax, int nconmax)
{
    FILE *x = fopen(path, "w");
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    if (!x) return -1;
    for (int i = 0; i < s->nbodies; ++i) {
        const clcone_body *bd = &s->bodies[i];
        double r = bd->inv_mass > 0 ? cbrt(3.0 / (4.0 * PI * bd->inv_mass)) : 0;
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], bd->x[k] - r);
            hi[k] = fmax(hi[k], bd->x[k] + r);
        }
    }
    fprintf(x, "<mujoco model=\"clcone_pile\">\n"
               "  <option timestep=\"%.17g\" gravity=\"0 0 -9.81\" cone=\"elliptic\" jacobian=\"dense\"/>\n"
               "  <size njmax=\"%d\" nconmax=\"%d\"/>\n"
               "  <default><geom condim=\"3\" friction=\"%.17g 0.005 0.0001\" margin=\"1e-6\"/></default>\n"
               "  <worldbody>\n",
            dt, njmax, nconmax, mu);
    /* the container: floor z = 0, walls at the pile's extent (the
     * generator's walls x = 0, wx, y = 0, wy touch the outer spheres) */
    fprintf(x, "    <geom name=\"floor\" type=\"plane\" pos=\"0 0 0\" zaxis=\"0 0 1\" size=\"100 100 1\"/>\n");
    fprintf(x, "    <geom name=\"wx0\" type=\"plane\" pos=\"%.17g 0 0\" zaxis=\"1 0 0\" size=\"100 100 1\"/>\n", lo[0]);
    fprintf(x, "    <geom name=\"wx1\" type=\"plane\" pos=\"%.17g 0 0\" zaxis=\"-1 0 0\" size=\"100 100 1\"/>\n", hi[0]);
    fprintf(x, "    <geom name=\"wy0\" type=\"plane\" pos=\"0 %.17g 0\" zaxis=\"0 1 0\" size=\"100 100 1\"/>\n", lo[1]);
    fprintf(x, "    <geom name=\"wy1\" type=\"plane\" pos=\"0 %.17g 0\" zaxis=\"0 -1 0\" size=\"100 100 1\"/>\n", hi[1]);
    for (int i = 0; i < s->nbodies; ++i) {
        const clcone_body *bd = &s->bodies[i];
        double r;
        if (!(bd->inv_mass > 0)) continue;
        r = cbrt(3.0 / (4.0 * PI * bd->inv_mass));
        fprintf(x, "    <body pos=\"%.17g %.17g %.17g\"><freejoint/><geom type=\"sphere\" size=\"%.17g\" "
                   "density=\"1\"/></body>\n",
                bd->x[0], bd->x[1], bd->x[2], r);
    }
    fprintf(x, "  </worldbody>\n</mujoco>\n");
    return fclose(x) == 0 ? 0 : -1;
}

/* Mean time of one mj_fwdConstraint with solver `sol`, repeated for at
 * least `tmin` seconds; the forces of the last call in f. */
static double time_mj(const mjModel *m0, mjModel *m, mjData *d, int sol, double tmin, double *f, int nefc, int *reps)
{
    double t0, t;
    int k = 0;
    (void)m0;
    m->opt.solver = sol;
    m->opt.jacobian = mjJAC_AUTO; /* MuJoCo's own choice for the timing */
    mj_forward(m, d);
    t0 = bench_now();
    do {
        mj_fwdConstraint(m, d);
        k++;
        t = bench_now() - t0;
    } while (t < tmin && k < 100000);
    memcpy(f, d->efc_force, sizeof(double) * (size_t)nefc);
    *reps = k;
    m->opt.jacobian = mjJAC_DENSE;
    return t / k * 1e3;
}

typedef struct ccfg {
    int dev; /* 0 ref, 1 float, 2 double */
    clcone_solver solver;
    const char *label;
} ccfg;

void bench_section_mujoco(bench *b, FILE *f)
{
    static const ccfg cc[5] = {{0, CLCONE_SOLVER_APGD, "ref apgd"},
                               {0, CLCONE_SOLVER_PGS, "ref pgs"},
                               {1, CLCONE_SOLVER_APGD, "device apgd"},
                               {2, CLCONE_SOLVER_APGD, "device apgd"},
                               {2, CLCONE_SOLVER_CGS, "device cgs"}};
    static const char *const snames[3] = {"PGS", "CG", "Newton"};
    int nsph = b->quick ? 60 : 200, nefc = 0, ncon = 0, nc = 0;
    double mu = 0.5, dt = 0.01, tmin = b->quick ? 0.1 : 0.5;
    char path[4096], errbuf[1000] = "", buf[64], buf2[64];
    clcone_scene s;
    clcone_error err;
    mjModel *m = NULL;
    mjData *d = NULL;
    double *W = NULL, *q = NULL, *mus = NULL, *fmj[3] = {NULL, NULL, NULL}, *rt = NULL;
    double tmj[3], emj[3];
    int reps[3];
    clcone_problem p;
    memset(&p, 0, sizeof p);
    memset(&s, 0, sizeof s);
    if (clcone_gen_pile(nsph, mu, dt, 0.1, 1, &s, &err)) {
        bench_fail(b, f, "pile: %s", err.msg);
        return;
    }
    snprintf(path, sizeof path, "%s/mujoco_pile.xml", b->out);
    if (write_mjcf(path, &s, mu, dt, 6 * s.ncontacts + 600, 2 * s.ncontacts + 200) != 0) {
        bench_fail(b, f, "cannot write %s", path);
        goto out;
    }
    m = mj_loadXML(path, NULL, errbuf, sizeof errbuf);
    if (!m) {
        bench_fail(b, f, "MuJoCo could not load %s: %s", path, errbuf);
        goto out;
    }
    d = mj_makeData(m);
    if (!d) {
        bench_fail(b, f, "mj_makeData failed");
        goto out;
    }
    m->opt.disableflags |= mjDSBL_WARMSTART;
    m->opt.solver = mjSOL_PGS;
    mj_forward(m, d);
    mj_projectConstraint(m, d);
    nefc = d->nefc;
    ncon = d->ncon;
    if (nefc != 3 * ncon || ncon == 0) {
        bench_fail(b, f, "MuJoCo made %d constraint rows for %d contacts (expected 3 per contact, condim 3 elliptic)",
                   nefc, ncon);
        goto out;
    }
    for (int i = 0; i < ncon; ++i)
        if (d->contact[i].efc_address != 3 * i || d->contact[i].dim != 3) {
            bench_fail(b, f, "MuJoCo contact %d: efc_address %d dim %d (expected %d, 3)", i, d->contact[i].efc_address,
                       d->contact[i].dim, 3 * i);
            goto out;
        }
    nc = ncon;
    W = malloc(sizeof(double) * (size_t)nefc * (size_t)nefc);
    q = malloc(sizeof(double) * (size_t)nefc);
    mus = malloc(sizeof(double) * (size_t)nc);
    rt = calloc((size_t)nefc, sizeof(double));
    for (int k = 0; k < 3; ++k) fmj[k] = calloc((size_t)nefc, sizeof(double));
    if (!W || !q || !mus || !rt || !fmj[0] || !fmj[1] || !fmj[2]) {
        bench_fail(b, f, "out of memory");
        goto out;
    }
    memcpy(W, d->efc_AR, sizeof(double) * (size_t)nefc * (size_t)nefc);
    memcpy(q, d->efc_b, sizeof(double) * (size_t)nefc);
    for (int i = 0; i < nc; ++i) mus[i] = d->contact[i].friction[0];
    /* symmetrise exactly (AR is symmetric up to rounding) */
    for (int i = 0; i < nefc; ++i)
        for (int j = i + 1; j < nefc; ++j) {
            double a = 0.5 * (W[(size_t)i * nefc + j] + W[(size_t)j * nefc + i]);
            W[(size_t)i * nefc + j] = W[(size_t)j * nefc + i] = a;
        }
    if (clcone_problem_from_dense(&p, nc, W, q, mus, &err)) {
        bench_fail(b, f, "clcone_problem_from_dense on MuJoCo's efc_AR, efc_b: %s", err.msg);
        goto out;
    }
    for (int k = 0; k < 3; ++k) {
        int sol = k == 0 ? mjSOL_PGS : k == 1 ? mjSOL_CG : mjSOL_NEWTON;
        clcone_options o;
        tmj[k] = time_mj(m, m, d, sol, tmin, fmj[k], nefc, &reps[k]);
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_CCP;
        emj[k] = clcone_error_of(&p, &o, fmj[k], 0, nc);
    }
    /* a tight clcone solution for the force differences */
    {
        clcone_options o;
        clcone_result res;
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_CCP;
        o.solver = CLCONE_SOLVER_APGD;
        o.tol = 1e-10;
        o.max_seconds = 20;
        if (clcone_solve(NULL, &p, &o, rt, &res, &err)) {
            bench_fail(b, f, "tight reference solve: %s", err.msg);
            goto out;
        }
        fprintf(f, "Scene: clcone_gen_pile(%d spheres, spread 0.1, seed 1), %d clcone contacts, written as MJCF "
                   "(`mujoco_pile.xml` in this directory: free spheres of unit density, the container's floor and "
                   "walls as planes, condim 3, `cone=\"elliptic\"`, friction %.1f, margin 1e-6, timestep %.2f, dense "
                   "Jacobian to read the problem; MuJoCo's own `jacobian=auto` choice, sparse here, for its timings). MuJoCo %s (mj_version %d) finds **%d contacts** at that state (nefc = %d). Its dual "
                   "problem: W = `efc_AR` (J M^-1 J' + R, after mj_projectConstraint), q = `efc_b` (J qacc_smooth - "
                   "aref), min 1/2 f'Wf + q'f over f in the cones. With condim 3 and elliptic cones MuJoCo stores "
                   "each contact's rows contiguously at efc_address = 3i as (normal, tangent 1, tangent 2) in its "
                   "contact frame, and its cone is ||(f1/mu1, f2/mu2)|| <= f_n with mu1 = mu2 = mu: exactly "
                   "clcone's local form and K_mu, so the rows are used as they are (clcone_problem_from_dense, "
                   "model **ccp**, whose natural-map error measures every solution below).\n\n",
                nsph, s.ncontacts, mu, dt, mj_versionString(), mj_version(), ncon, nefc);
        fprintf(f, "A tight clcone solution (ref apgd, ccp, tol 1e-10) reached error %.2e in %d iterations; force "
                   "differences below are against it, relative to its largest |f|.\n\n",
                res.items[0].error, res.items[0].iters);
        clcone_result_free(&res);
    }
    {
        double fmax_t = 0;
        for (int i = 0; i < nefc; ++i) fmax_t = fmax(fmax_t, fabs(rt[i]));
        fprintf(f, "(largest |f| of the tight solution: %.6g)\n\n", fmax_t);
        fprintf(f, "MuJoCo mj_fwdConstraint, warm start disabled (each call starts from qacc_smooth), default "
                   "iterations %d and tolerance %g; mean time over repeated calls (at least %.1f s):\n\n",
                m->opt.iterations, m->opt.tolerance, tmin);
        fprintf(f, "| engine | precision | model | solver | contacts | time per solve | calls timed | error (clcone ccp "
                   "measure) | max abs force difference vs tight / max abs f |\n|---|---|---|---|---|---|---|---|---|\n");
        for (int k = 0; k < 3; ++k) {
            double df = 0;
            for (int i = 0; i < nefc; ++i) df = fmax(df, fabs(fmj[k][i] - rt[i]));
            fprintf(f, "| MuJoCo %s (CPU, 1 thread) | double | elliptic dual | %s | %d | %s | %d | %.2e | %.2e |\n",
                    mj_versionString(), snames[k], nc, bench_fmt_ms(tmj[k], buf, sizeof buf), reps[k], emj[k],
                    df / fmax(fmax_t, 1e-300));
        }
        fprintf(f, "\nclcone on the same problem, to the accuracy each MuJoCo solver reached (tol = that solver's "
                   "error; cap 3 s). Time = the whole clcone_solve call (device: upload included; an untimed "
                   "warm-up call first). ratio = clcone time / MuJoCo time at equal accuracy.\n\n");
        fprintf(f, "| engine | precision | model | solver | target (MuJoCo solver, error) | status | iterations | "
                   "time | ratio clcone / MuJoCo | max abs f difference vs MuJoCo / max abs f |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n");
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < 5; ++j) {
                clcone_context *ctx = cc[j].dev == 0 ? NULL : cc[j].dev == 1 ? b->fctx : b->dctx;
                clcone_options o;
                clcone_result res;
                double *r = calloc((size_t)nefc, sizeof *r), t, df = 0;
                const char *eng = cc[j].dev ? b->dev_short : "CPU reference";
                if (!r) continue;
                if (cc[j].dev && !ctx) {
                    free(r);
                    continue;
                }
                if (cc[j].dev == 1 && emj[k] < 1e-6) {
                    fprintf(f, "| %s | float | ccp | %s | %s, %.2e | not run: below float's reach (about 1e-6) | | | | |\n",
                            eng, clcone_solver_name(cc[j].solver), snames[k], emj[k]);
                    free(r);
                    continue;
                }
                clcone_options_default(&o);
                o.model = CLCONE_MODEL_CCP;
                o.solver = cc[j].solver;
                o.tol = emj[k];
                o.max_seconds = 3;
                if (ctx) {
                    clcone_options w = o;
                    w.max_iter = 1;
                    w.tol = 0;
                    if (clcone_solve(ctx, &p, &w, r, &res, &err)) {
                        bench_fail(b, f, "%s (warm-up): %s", cc[j].label, err.msg);
                        free(r);
                        continue;
                    }
                    clcone_result_free(&res);
                }
                t = bench_now();
                if (clcone_solve(ctx, &p, &o, r, &res, &err)) {
                    bench_fail(b, f, "%s on MuJoCo's problem: %s", cc[j].label, err.msg);
                    free(r);
                    continue;
                }
                t = (bench_now() - t) * 1e3;
                for (int i = 0; i < nefc; ++i) df = fmax(df, fabs(r[i] - fmj[k][i]));
                fprintf(f, "| %s | %s | ccp | %s | %s, %.2e | %s | %d | %s | %s | %.2e |\n", eng,
                        cc[j].dev == 1 ? "float" : "double", clcone_solver_name(cc[j].solver), snames[k], emj[k],
                        clcone_run_status_name(res.items[0].status), res.items[0].iters,
                        bench_fmt_ms(t, buf, sizeof buf),
                        res.items[0].status == CLCONE_CONVERGED ? (snprintf(buf2, sizeof buf2, "%.3g", t / tmj[k]), buf2)
                                                                : "- (not reached)",
                        df / fmax(fmax_t, 1e-300));
                clcone_result_free(&res);
                free(r);
            }
        fprintf(f, "\n");
    }
out:
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
    free(W);
    free(q);
    free(mus);
    free(rt);
    for (int k = 0; k < 3; ++k) free(fmj[k]);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
}

#endif
