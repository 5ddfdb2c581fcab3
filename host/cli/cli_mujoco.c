/* `clcone mujoco`: a MuJoCo model stepped with clcone as its constraint
 * solver (mujoco/adapter.h), optionally beside MuJoCo's own solver. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const USAGE_MUJOCO =
    "usage: clcone mujoco MODEL.xml --steps K [--device D] [--precision float|double]\n"
    "                     [--model soft|coulomb] [--solver S] [--tol T] [--max-iter K]\n"
    "                     [--check-every K] [--max-seconds S] [--compare mujoco]\n"
    "Steps a MuJoCo model (MJCF) K times as mj_step does, with clcone solving\n"
    "MuJoCo's constraint problem at every step (warm-started from the last\n"
    "step's forces) and MuJoCo doing the rest (collision, dynamics, sensors,\n"
    "the Euler or implicit integrator).\n"
    "  --model soft     MuJoCo's own problem: its R and a_ref (default); every row\n"
    "                   kind (equality, friction loss, limits, frictionless,\n"
    "                   pyramidal and elliptic contacts of condim 3, 4 or 6);\n"
    "                   with rows beyond elliptic condim-3 contacts, limits and\n"
    "                   frictionless contacts the solver is apgd (or pgs on ref)\n"
    "  --model coulomb  exact Coulomb: R = 0 on the contact rows; elliptic\n"
    "                   condim-3 contacts, limits and frictionless contacts only,\n"
    "                   other rows are refused, naming them (exit 2)\n"
    "  --compare mujoco also run MuJoCo's Newton solver (tolerance 1e-10) at each\n"
    "                   step's state and print the force and qacc differences\n"
    "A line per step, then status=... error=... iters=... time_ms=...\n"
    "contacts=... [force_rel_diff=... qacc_rel_diff=...]: the worst status,\n"
    "the largest error, iterations and solve time summed, the most contacts,\n"
    "the largest differences.\n"
    "Device, precision, solver, tolerance and caps as for `clcone solve`.\n";

#ifndef CLCONE_MUJOCO

int cmd_mujoco(int argc, char **argv)
{
    if (cli_want_help(argc, argv, USAGE_MUJOCO)) return 0;
    fprintf(stderr, "clcone: this clcone was built without MuJoCo. `make mujoco` installs MuJoCo 4 "
                    "(the PyPI wheel mujoco-core) into build/venv and rebuilds the CLI with it (needs "
                    "python3-venv and network; `make test` does the same); Debian's libmujoco-dev works too.\n");
    return EXIT_USAGE;
}

#else

#include "mujoco/adapter.h"

/* The step's figures, and the run's totals in t (status worst, error and
 * differences largest, iterations and time summed, contacts most). */
static void report_step(int k, const clcone_mujoco_stats *st, clcone_mujoco_stats *t)
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

static int run(const cli_args *a, int steps, int compare)
{
    static const double cmp_tol = 1e-10;
    char errbuf[1000], backend[400];
    clcone_context *ctx = NULL;
    clcone_mujoco *ad = NULL;
    clcone_mujoco_stats st, tot;
    clcone_error e;
    mjModel *m = NULL, *mc = NULL;
    mjData *d = NULL;
    clcone_options o = a->o;
    const char *path = a->positional[0];
    int rc = EXIT_USAGE;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "clcone: %s: cannot open: %s\n", path, strerror(errno));
        return EXIT_USAGE;
    }
    fclose(f);
    m = mj_loadXML(path, NULL, errbuf, sizeof errbuf);
    if (!m) {
        fprintf(stderr, "clcone: %s: MuJoCo cannot load it: %s\n", path, errbuf);
        return EXIT_USAGE;
    }
    d = mj_makeData(m);
    if (compare) mc = mj_copyModel(NULL, m);
    if (!d || (compare && !mc)) {
        fprintf(stderr, "clcone: %s: out of memory for MuJoCo's data\n", path);
        goto out;
    }
    if (mc) {
        mc->opt.solver = mjSOL_NEWTON;
        mc->opt.tolerance = cmp_tol;
        mc->opt.iterations = 1000;
    }
    if (!is_ref(a->device) && cli_open_device(a->device, a->prec, &ctx, &e)) {
        rc = lib_error(&e);
        goto out;
    }
    clcone_options_resolve(&o, ctx);
    if (clcone_mujoco_create(ctx, &o, path, &ad, &e)) {
        rc = lib_error(&e);
        goto out;
    }
    describe_backend(ctx, backend, sizeof backend);
    printf("model: %s (MuJoCo %s; nv %d, timestep %g, %s cones)\nbackend: %s, model %s, solver %s, tol %g\n", path,
           mj_versionString(), (int)m->nv, m->opt.timestep, m->opt.cone == mjCONE_ELLIPTIC ? "elliptic" : "pyramidal",
           backend, clcone_model_name(o.model), clcone_solver_name(o.solver), o.tol);
    if (mc) printf("compare: MuJoCo Newton, tolerance %g, at most %d iterations, at each step's state\n", cmp_tol,
                   mc->opt.iterations);
    memset(&tot, 0, sizeof tot);
    tot.force_rel_diff = tot.qacc_rel_diff = -1;
    for (int k = 0; k < steps; ++k) {
        if (clcone_mujoco_step(ad, m, d, mc, &st, &e)) {
            char msg[sizeof e.msg];
            snprintf(msg, sizeof msg, "%s", e.msg);
            snprintf(e.msg, sizeof e.msg, "step %d: %.990s", k, msg);
            rc = lib_error(&e);
            goto out;
        }
        report_step(k, &st, &tot);
    }
    printf("status=%s error=%.6e iters=%d time_ms=%.3f contacts=%d", clcone_run_status_name(tot.res.status),
           tot.res.error, tot.res.iters, tot.res.time_ms, tot.ncon);
    if (compare) printf(" force_rel_diff=%.6e qacc_rel_diff=%.6e", tot.force_rel_diff, tot.qacc_rel_diff);
    printf("\n");
    rc = tot.res.status == CLCONE_CONVERGED ? 0 : EXIT_NOTCONV;
out:
    clcone_mujoco_free(ad);
    if (d) mj_deleteData(d);
    if (mc) mj_deleteModel(mc);
    if (m) mj_deleteModel(m);
    clcone_context_free(ctx);
    return rc;
}

int cmd_mujoco(int argc, char **argv)
{
    static const char *const unused[] = {"--warm",           "--out",           "--plot",          "--dir",
                                         "--facets",         "--fit",           "--soft-timeconst", "--soft-dampratio",
                                         "--soft-impedance", "--soft-dt",       "--sap-beta",      NULL};
    cli_args a;
    const char *v, *cmp;
    char **args;
    int missing = 0, steps = -1, rc;
    if (cli_want_help(argc, argv, USAGE_MUJOCO)) return 0;
    args = malloc(((size_t)argc + 1) * sizeof *args);
    if (!args) return EXIT_USAGE;
    memcpy(args, argv, (size_t)argc * sizeof *args);
    v = cli_take_opt(&argc, args, "--steps", &missing);
    cmp = cli_take_opt(&argc, args, "--compare", &missing);
    rc = missing ? usage_error(USAGE_MUJOCO, "an option is missing its value%s", "") : parse_args(argc, args, USAGE_MUJOCO, 1, &a);
    free(args);
    if (rc) return rc < 0 ? 0 : rc;
    if (!v) return usage_error(USAGE_MUJOCO, "mujoco needs --steps K%s", "");
    if (!parse_int(v, &steps) || steps < 1) return usage_error(USAGE_MUJOCO, "--steps needs an integer >= 1, got '%s'", v);
    if (cmp && strcmp(cmp, "mujoco") != 0)
        return usage_error(USAGE_MUJOCO, "--compare takes 'mujoco' (MuJoCo's own solver), got '%s'", cmp);
    if (a.npos != 1) return usage_error(USAGE_MUJOCO, "mujoco needs one MODEL.xml%s", "");
    if ((rc = cli_refuse(&a, USAGE_MUJOCO, unused, "the MuJoCo model gives R, a_ref and the time step")))
        return rc;
    if (!cli_given(&a, "--model")) a.o.model = CLCONE_MODEL_SOFT;
    if (a.o.model != CLCONE_MODEL_SOFT && a.o.model != CLCONE_MODEL_COULOMB)
        return usage_error(USAGE_MUJOCO, "--model %s does not apply: MuJoCo's problem is solved as soft or coulomb",
                           clcone_model_name(a.o.model));
    if ((rc = cli_check_applicable(&a, USAGE_MUJOCO, 0))) return rc;
    return run(&a, steps, cmp != NULL);
}

#endif
