/* Many MuJoCo worlds in one batch a step (host/mujoco/worlds.c) and
 * `clcone mujoco --worlds N`: N worlds are N separate runs of the adapter
 * with the same perturbations. Built with MuJoCo when the Makefile found
 * it; without it the suite is empty (the mujoco suite checks the CLI's
 * message). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clcone/clcone.h>
#include "testutil.h"

#ifdef CLCONE_MUJOCO
#include "mujoco/worlds.h"

/* Spheres and a box on a plane with elliptic condim-3 contacts, a hinged
 * arm swinging into its joint limit: contacts and 1-row limit blocks. */
static const char WORLDS_XML[] =
    "<mujoco model=\"clc_worlds\">\n"
    "  <option timestep=\"0.005\" cone=\"elliptic\" impratio=\"3\"/>\n"
    "  <default><geom condim=\"3\" friction=\"0.6 0.005 0.0001\"/></default>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 0.1\"/>\n"
    "    <body pos=\"0 0 0.1\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"0.15 0 0.3\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"0.6 0 0.1\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n"
    "    <body pos=\"0 2 1\"><joint type=\"hinge\" axis=\"0 1 0\" limited=\"true\" range=\"-20 20\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.5 0 0\" size=\"0.05\" contype=\"0\" conaffinity=\"0\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static const char RK4_XML[] =
    "<mujoco model=\"clc_rk4\">\n"
    "  <option integrator=\"RK4\"/>\n"
    "  <worldbody><body pos=\"0 0 1\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body></worldbody>\n"
    "</mujoco>\n";

static const char DISCRETE_XML[] =
    "<mujoco model=\"clc_discrete\">\n"
    "  <option integrator=\"discrete\"/>\n"
    "  <worldbody><geom type=\"plane\" size=\"1 1 0.1\"/>\n"
    "    <body pos=\"0 0 0.1\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body></worldbody>\n"
    "</mujoco>\n";

typedef struct worlds_fixture {
    char path[4096];
    int temp; /* path is a temporary file of ours */
    mjModel *m;
} worlds_fixture;

static void load_model(worlds_fixture *f)
{
    char err[1000];
    f->m = mj_loadXML(f->path, NULL, err, sizeof err);
    ck_assert_msg(f->m != NULL, "MuJoCo cannot load %s: %s", f->path, err);
}

static void open_model(worlds_fixture *f, const char *xml)
{
    snprintf(f->path, sizeof f->path, "%s", test_write_temp(xml, strlen(xml)));
    f->temp = 1;
    load_model(f);
}

/* One of MuJoCo's example models (tests/data/models/mujoco/REL);
 * missing is a failure. */
static void open_shared_model(worlds_fixture *f, const char *rel)
{
    snprintf(f->path, sizeof f->path, "%s", test_model_path(rel));
    f->temp = 0;
    load_model(f);
}

static void close_model(worlds_fixture *f)
{
    mj_deleteModel(f->m);
    if (f->temp) unlink(f->path);
}

static void soft_options(clcone_options *o, double tol)
{
    clcone_options_default(o);
    o->model = CLCONE_MODEL_SOFT;
    o->tol = tol;
}

/* World 1 lifted by 0.5 (its bodies fall free for the first steps: a
 * world without contacts beside worlds with them in one batch). */
static void lift(const mjModel *m, mjData *d)
{
    for (int j = 0; j < (int)m->njnt; ++j)
        if (m->jnt_type[j] == mjJNT_FREE) d->qpos[m->jnt_qposadr[j] + 2] += 0.5;
}

/* n worlds of f's model stepped K times in one batch a step on ctx
 * (MuJoCo's stages on `threads` threads), against n separate
 * adapters on the same perturbed states stepping alone: every step, the
 * largest relative difference of efc_force and of qpos, qvel (over the
 * largest |value|, or absolute below 1); returns it, and checks that the
 * batch held worlds with and without rows and that rows and iterations
 * agree world by world. */
static double worlds_against_alone(clcone_context *ctx, const worlds_fixture *f, int n, int threads, int K,
                                   double tol, clcone_solver solver)
{
    clc_worlds *w;
    clc_worlds_stats ws;
    clc_mujoco **ad = calloc((size_t)n, sizeof *ad);
    mjData **d = calloc((size_t)n, sizeof *d);
    clcone_options o;
    clcone_error e;
    double worst = 0;
    int partial = 0, full = 0;
    ck_assert_ptr_nonnull(ad);
    ck_assert_ptr_nonnull(d);
    soft_options(&o, tol);
    o.solver = solver;
    ck_assert_msg(clc_worlds_create(ctx, &o, f->path, f->m, n, threads, 7, 0.05, &w, &e) == CLCONE_OK, "%s", e.msg);
    lift(f->m, clc_worlds_data(w, 1));
    for (int k = 0; k < n; ++k) {
        ck_assert_int_eq(clc_mujoco_create(ctx, &o, f->path, &ad[k], &e), CLCONE_OK);
        d[k] = mj_makeData(f->m);
        clc_worlds_perturb(f->m, d[k], 7, k, 0.05);
        if (k == 1) lift(f->m, d[k]);
    }
    for (int s = 0; s < K; ++s) {
        ck_assert_msg(clc_worlds_step(w, &ws, &e) == CLCONE_OK, "step %d: %s", s, e.msg);
        partial += ws.solved > 0 && ws.solved < n;
        full += ws.solved == n;
        for (int k = 0; k < n; ++k) {
            clc_mujoco_stats st;
            const clc_mujoco_stats *wst = clc_worlds_stats_of(w, k);
            mjData *dw = clc_worlds_data(w, k);
            ck_assert_msg(clc_mujoco_step(ad[k], f->m, d[k], NULL, &st, &e) == CLCONE_OK, "%s", e.msg);
            ck_assert_int_eq(dw->nefc, d[k]->nefc);
            ck_assert_int_eq(wst->blocks, st.blocks);
            ck_assert_int_eq(wst->warm_matched, st.warm_matched);
            if (st.blocks) ck_assert_int_eq(wst->res.status, CLCONE_CONVERGED);
            if (ctx == NULL) ck_assert_int_eq(wst->res.iters, st.res.iters);
            worst = fmax(worst, test_rel_diff(dw->efc_force, d[k]->efc_force, (size_t)d[k]->nefc));
            worst = fmax(worst, test_rel_diff(dw->qpos, d[k]->qpos, (size_t)f->m->nq));
            worst = fmax(worst, test_rel_diff(dw->qvel, d[k]->qvel, (size_t)f->m->nv));
        }
    }
    ck_assert_msg(partial > 0 && full > 0, "the batch never mixed worlds with and without rows (%d, %d)", partial,
                  full);
    for (int k = 0; k < n; ++k) {
        clc_mujoco_free(ad[k]);
        mj_deleteData(d[k]);
    }
    free(ad);
    free(d);
    clc_worlds_free(w);
    return worst;
}

/* worlds_against_alone on the test's own model (WORLDS_XML). */
static double own_worlds_against_alone(clcone_context *ctx, int n, int threads, int K)
{
    worlds_fixture f;
    double worst;
    open_model(&f, WORLDS_XML);
    worst = worlds_against_alone(ctx, &f, n, threads, K, 1e-10, CLCONE_SOLVER_DEFAULT);
    close_model(&f);
    return worst;
}

/* On the reference the batch's problems are solved one after another,
 * each as alone: every world bitwise its separate run. */
START_TEST(worlds_are_separate_runs_on_reference)
{
    ck_assert_double_eq(own_worlds_against_alone(NULL, 4, 1, 80), 0);
}
END_TEST

/* MuJoCo's stages on 3 threads (5 worlds: threads with two worlds and
 * with one): the same bits, whatever the threads. */
START_TEST(threads_change_nothing)
{
    ck_assert_double_eq(own_worlds_against_alone(NULL, 5, 3, 60), 0);
}
END_TEST

/* On POCL in double too: a device batch solves each problem in its own
 * work-group with the same arithmetic as a batch of one (batch = alone,
 * docs/architecture.md), so the tolerance is 0, measured so; a device
 * whose batch changed a problem's bits would fail here, not pass within a
 * bound. */
START_TEST(worlds_are_separate_runs_on_device)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    ck_assert_double_eq(own_worlds_against_alone(ctx, 3, 1, 60), 0);
    clcone_context_free(ctx);
}
END_TEST

/* The shared humanoid (pyramidal contacts, joint limits: the
 * general-block form by apgd, whose worlds make their own batch) as 3
 * worlds, world 1 falling free at first: each world bitwise its
 * separate run, on the reference and on POCL in double (loop index bit
 * 0), on 1 thread and on 3 (bit 1: the batch's host work, and the
 * reference's solves, a world a thread). */
START_TEST(general_form_worlds_are_separate_runs)
{
    worlds_fixture f;
    clcone_context *ctx = _i & 1 ? test_context(CLCONE_DOUBLE) : NULL;
    open_shared_model(&f, "humanoid/humanoid.xml");
    ck_assert_double_eq(worlds_against_alone(ctx, &f, 3, _i & 2 ? 3 : 1, 80, 1e-10, CLCONE_SOLVER_APGD), 0);
    close_model(&f);
    if (ctx) clcone_context_free(ctx);
}
END_TEST

/* World 0 is the model's state; the others differ from it and from each
 * other, the same for the same seed, otherwise for another; scale 0
 * perturbs nothing. */
START_TEST(perturbation_is_seeded)
{
    worlds_fixture f;
    mjData *a, *b, *c;
    open_model(&f, WORLDS_XML);
    a = mj_makeData(f.m);
    b = mj_makeData(f.m);
    c = mj_makeData(f.m);
    clc_worlds_perturb(f.m, a, 1, 0, 0.01);
    for (int i = 0; i < (int)f.m->nv; ++i) ck_assert_double_eq(a->qvel[i], 0);
    clc_worlds_perturb(f.m, a, 1, 3, 0.01);
    clc_worlds_perturb(f.m, b, 1, 3, 0.01);
    clc_worlds_perturb(f.m, c, 2, 3, 0.01);
    ck_assert_mem_eq(a->qvel, b->qvel, sizeof(double) * (size_t)f.m->nv);
    for (int i = 0; i < (int)f.m->nv; ++i) {
        ck_assert_double_le(fabs(a->qvel[i]), 0.01);
        ck_assert_double_ne(a->qvel[i], c->qvel[i]);
    }
    mj_resetData(f.m, b);
    clc_worlds_perturb(f.m, b, 1, 4, 0.01);
    for (int i = 0; i < (int)f.m->nv; ++i) ck_assert_double_ne(a->qvel[i], b->qvel[i]);
    mj_resetData(f.m, b);
    clc_worlds_perturb(f.m, b, 1, 4, 0);
    for (int i = 0; i < (int)f.m->nv; ++i) ck_assert_double_eq(b->qvel[i], 0);
    mj_deleteData(a);
    mj_deleteData(b);
    mj_deleteData(c);
    close_model(&f);
}
END_TEST

static void quiet(const char *msg) { (void)msg; }

/* A bad input in one world is an error naming that world (and where
 * the default solver, Newton on the reference, found it: the island and
 * dof); N out of range is refused. */
START_TEST(errors_name_the_world)
{
    worlds_fixture f;
    clc_worlds *w;
    clc_worlds_stats ws;
    clcone_options o;
    clcone_error e;
    open_model(&f, WORLDS_XML);
    soft_options(&o, 1e-8);
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, 0, 1, 1, 0.01, &w, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "0 worlds"), "%s", e.msg);
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, CLCONE_WORLDS_MAX + 1, 1, 1, 0.01, &w, &e),
                     CLCONE_EINVAL);
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, 2, 0, 1, 0.01, &w, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "0 threads"), "%s", e.msg);
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, 3, 1, 1, 0.01, &w, &e), CLCONE_OK);
    for (int k = 0; k < 20; ++k) ck_assert_int_eq(clc_worlds_step(w, &ws, &e), CLCONE_OK);
    ck_assert_int_eq(ws.solved, 3);
    clc_worlds_data(w, 2)->qfrc_applied[0] = NAN;
    ck_assert_int_eq(clc_worlds_step(w, &ws, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "world 2: ") == e.msg && strstr(e.msg, f.path) && strstr(e.msg, "island 0 (") &&
                      strstr(e.msg, "dof 0: a0 nan"),
                  "%s", e.msg);
    clc_worlds_free(w);
    /* options no form runs (soft takes no nsgs) or out of range: refused
     * when the worlds are made, not at their first contact */
    o.solver = CLCONE_SOLVER_NSGS;
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, 3, 1, 1, 0.01, &w, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "solver nsgs: MuJoCo's problem (model soft) is solved on the reference by"), "%s",
                  e.msg);
    o.solver = CLCONE_SOLVER_DEFAULT;
    o.max_iter = 0;
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, 3, 1, 1, 0.01, &w, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "max_iter=0 >= 1"), "%s", e.msg);
    soft_options(&o, 1e-8);
    /* two bad worlds on two threads: the lower one's error, as one
     * thread stopping at the first gives */
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, 4, 2, 1, 0.01, &w, &e), CLCONE_OK);
    clc_worlds_data(w, 1)->qvel[0] = NAN;
    clc_worlds_data(w, 2)->qvel[0] = NAN;
    mju_user_warning = quiet; /* MuJoCo's own warning about the reset */
    ck_assert_int_eq(clc_worlds_step(w, &ws, &e), CLCONE_EINVAL);
    mju_user_warning = NULL;
    ck_assert_msg(strstr(e.msg, "world 1: ") == e.msg && strstr(e.msg, "QVEL"), "%s", e.msg);
    clc_worlds_free(w);
    close_model(&f);
}
END_TEST

/* Spheres resting on a plane in an arena too small for their contacts:
 * MuJoCo's collision stops with mju_error in every world. */
static void small_arena(char *xml, size_t len)
{
    size_t n = (size_t)snprintf(xml, len, "<mujoco><size memory=\"16K\"/><option cone=\"elliptic\"/><worldbody>"
                                          "<geom type=\"plane\" size=\"5 5 1\"/>");
    for (int i = 0; i < 10 && n < len; ++i)
        n += (size_t)snprintf(xml + n, len - n,
                              "<body pos=\"%g 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>",
                              0.3 * i);
    if (n < len) snprintf(xml + n, len - n, "</worldbody></mujoco>");
}

/* A MuJoCo error inside the worlds' stages on 3 threads: a status naming
 * world 0 (the lowest), the process goes on, and MuJoCo's handler is the
 * caller's again afterwards. */
START_TEST(mujoco_error_on_threads)
{
    worlds_fixture f;
    clc_worlds *w;
    clc_worlds_stats ws;
    clcone_options o;
    clcone_error e;
    char xml[4096];
    small_arena(xml, sizeof xml);
    open_model(&f, xml);
    soft_options(&o, 1e-8);
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, 6, 3, 1, 0.01, &w, &e), CLCONE_OK);
    ck_assert_ptr_null(mju_user_error);
    ck_assert_int_eq(clc_worlds_step(w, &ws, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "world 0: ") == e.msg && strstr(e.msg, "MuJoCo stopped with an error") &&
                      strstr(e.msg, "mj_stackAlloc"),
                  "%s", e.msg);
    ck_assert_ptr_null(mju_user_error);
    clc_worlds_free(w);
    close_model(&f);
}
END_TEST

/* The CLI: --worlds 1 is the plain run (same error and iterations), the
 * last line with worlds/s and MuJoCo's beside it, and the usage errors. */
START_TEST(cli_worlds)
{
    worlds_fixture f;
    char out[1 << 16], err[4096], args[8192], plain[1024];
    static const char *const bad[][2] = {
        {"--worlds 0", "--worlds needs an integer from 1 to 100000, got '0'"},
        {"--worlds -3", "got '-3'"},
        {"--worlds many", "got 'many'"},
        {"--worlds 100001", "got '100001'"},
        {"--worlds", "missing its value"},
        {"--seed 3", "--seed perturbs the worlds of --worlds N"},
        {"--perturb 0.1", "--perturb perturbs the worlds of --worlds N"},
        {"--threads 2", "--threads runs the worlds of --worlds N"},
        {"--worlds 2 --threads 0", "--threads needs an integer from 1 to 256, got '0'"},
        {"--worlds 2 --seed -1", "--seed needs an integer >= 0"},
        {"--worlds 2 --perturb -1", "--perturb needs a finite velocity >= 0"},
        {"--worlds 2 --perturb nan", "--perturb needs a finite velocity >= 0"},
    };
    double wps = -1, mps = -1, speedup = -1, solve_ms = -1, mj_constraint_ms = -1;
    open_model(&f, WORLDS_XML);
    snprintf(args, sizeof args, "mujoco %s --steps 30 --device ref --tol 1e-10", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 0);
    snprintf(plain, sizeof plain, "%s", test_last_line(out));
    *strstr(plain, " time_ms=") = 0;
    snprintf(args, sizeof args, "mujoco %s --steps 30 --device ref --tol 1e-10 --worlds 1", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(strncmp(test_last_line(out), plain, strlen(plain)) == 0, "%s\nagainst\n%s", out, plain);
    snprintf(args, sizeof args, "mujoco %s --steps 10 --device ref --worlds 3 --threads 2 --seed 5 --compare mujoco", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(strncmp(test_last_line(out), "status=converged ", 17) == 0, "%s", out);
    ck_assert_msg(sscanf(strstr(test_last_line(out), " worlds=3 "),
                         " worlds=3 worlds_per_s=%lf mujoco_worlds_per_s=%lf speedup=%lf solve_ms_per_step=%lf "
                         "mujoco_constraint_ms_per_step=%lf",
                         &wps, &mps, &speedup, &solve_ms, &mj_constraint_ms) == 5,
                  "%s", test_last_line(out));
    ck_assert_double_gt(wps, 0);
    ck_assert_double_gt(mps, 0);
    ck_assert_double_gt(solve_ms, 0);
    ck_assert_double_gt(mj_constraint_ms, 0); /* MuJoCo's timer ran: its clock was set */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        snprintf(args, sizeof args, "mujoco %s --steps 2 --device ref %s", f.path, bad[i][0]);
        ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
        ck_assert_msg(strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
    }
    close_model(&f);
    /* a model the adapter refuses (RK4 runs MuJoCo's solver at its
     * substeps): the first world's error, exit 2 */
    open_model(&f, RK4_XML);
    snprintf(args, sizeof args, "mujoco %s --steps 1 --device ref --worlds 2", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "world 0: ") && strstr(err, f.path) && strstr(err, "RK4"), "%s", err);
    close_model(&f);
    /* nor MuJoCo 4's discrete step map, named as such */
    open_model(&f, DISCRETE_XML);
    snprintf(args, sizeof args, "mujoco %s --steps 1 --device ref", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "integrator discrete") && !strstr(err, "flex"), "%s", err);
    close_model(&f);
}
END_TEST

Suite *suite_mujoco_worlds(void)
{
    Suite *s = suite_create("mujoco_worlds");
    TCase *tc = tcase_create("mujoco_worlds");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, worlds_are_separate_runs_on_reference);
    tcase_add_test(tc, threads_change_nothing);
    tcase_add_test(tc, worlds_are_separate_runs_on_device);
    tcase_add_loop_test(tc, general_form_worlds_are_separate_runs, 0, 4);
    tcase_add_test(tc, perturbation_is_seeded);
    tcase_add_test(tc, errors_name_the_world);
    tcase_add_test(tc, mujoco_error_on_threads);
    tcase_add_test(tc, cli_worlds);
    suite_add_tcase(s, tc);
    return s;
}

#else

Suite *suite_mujoco_worlds(void)
{
    Suite *s = suite_create("mujoco_worlds");
    fprintf(stderr, "mujoco_worlds suite: built without MuJoCo; nothing to test (the mujoco suite checks the CLI's "
                    "message)\n");
    return s;
}

#endif
