/* MuJoCo runs that must stop with a clear error, never end "converged"
 * when MuJoCo lost physics or ended the process (host/mujoco/guard.c),
 * valid models the adapter must take (a zero diagonal of J M^-1 J'), and
 * `clcone mujoco`'s checks before it loads a model. Built with MuJoCo
 * when the Makefile found it; without it the suite is empty (the mujoco
 * suite checks the CLI's message). */
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
#include "mujoco/guard.h"
#include "mujoco/hard_aref.h"
#include "mujoco_fixture.h"

/* A sphere on the floor in a constraint arena of 1 KB: MuJoCo warns that
 * the arena is too small for the constraints and drops them all (nefc 0,
 * ncon 1), a step without any contact force. */
static const char TINY_ARENA_XML[] =
    "<mujoco model=\"clc_tiny_arena\">\n"
    "  <size memory=\"1K\"/>\n"
    "  <option cone=\"elliptic\"/>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 1\"/>\n"
    "    <body pos=\"0 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* Gravity of 1e12: qacc over MuJoCo's mjMAXVAL, so mj_checkAcc warns and
 * resets the state to the initial one. */
static const char BAD_QACC_XML[] =
    "<mujoco model=\"clc_bad_qacc\">\n"
    "  <option gravity=\"0 0 -1e12\"/>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 1\"/>\n"
    "    <body pos=\"0 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static clc_mujoco *soft_adapter(clcone_context *ctx, clcone_model model, const char *label)
{
    clcone_options o;
    clc_mujoco *a;
    clcone_error e;
    clcone_options_default(&o);
    o.model = model;
    ck_assert_msg(clc_mujoco_create(ctx, &o, label, &a, &e) == CLCONE_OK, "%s", e.msg);
    return a;
}

/* A warning that lost physics is the step's error with MuJoCo's text and
 * what MuJoCo did, MuJoCo's handlers are the caller's again afterwards
 * (none: nothing printed to stdout or MUJOCO_LOG.TXT in between), and the
 * CLI exits 2 saying so, in one world as in many. */
static void lost_physics(const char *xml, const char *text, const char *did)
{
    mj_fixture f;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    char args[256], out[8192], err[8192];
    clcone_status s = CLCONE_OK;
    mj_open(&f, xml, -1);
    a = soft_adapter(NULL, CLCONE_MODEL_SOFT, f.path);
    for (int k = 0; k < 3 && !s; ++k) s = clc_mujoco_step(a, f.m, f.d, NULL, &st, &e);
    ck_assert_int_eq(s, CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, f.path) && strstr(e.msg, "MuJoCo warned: ") && strstr(e.msg, text) &&
                      strstr(e.msg, did),
                  "%s", e.msg);
    ck_assert_ptr_null(mju_user_error);
    ck_assert_ptr_null(mju_user_warning);
    clc_mujoco_free(a);
    snprintf(args, sizeof args, "mujoco %s --steps 3 --device ref", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, text) && !strstr(out, "status=converged") && !strstr(out, "WARNING"), "%s\n%s", out, err);
    snprintf(args, sizeof args, "mujoco %s --steps 3 --device ref --worlds 3 --threads 2", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "world 0: ") && strstr(err, text) && !strstr(out, "WARNING"), "%s\n%s", out, err);
    mj_close(&f);
}

/* A constraint arena of 1 KB: MuJoCo drops every row (rows 0, contacts 1;
 * the old adapter ran on, "converged", exit 0). */
START_TEST(full_arena_is_an_error)
{
    lost_physics(TINY_ARENA_XML, "Insufficient arena memory", "constraints were dropped");
}
END_TEST

/* A huge qacc: MuJoCo resets the state (the old adapter ran on from the
 * initial state, "converged", exit 0). */
START_TEST(bad_qacc_is_an_error)
{
    lost_physics(BAD_QACC_XML, "QACC", "MuJoCo reset the state");
}
END_TEST

/* An allocator that fails from its (fail_at + 1)-th call on: MuJoCo then
 * stops in mju_malloc with mju_error, which without clcone's handler
 * prints and exits the process with code 1. */
static int allocs, fail_at, nlive;
static void *live[256]; /* what MuJoCo holds: a stopped mj_makeData leaves its first parts */
static void *failing_malloc(size_t n)
{
    void *p;
    if (allocs++ >= fail_at || nlive == (int)(sizeof live / sizeof *live)) return NULL;
    p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (p) live[nlive++] = p;
    return p;
}

static void tracked_free(void *p)
{
    for (int i = 0; i < nlive; ++i)
        if (live[i] == p) {
            live[i] = live[--nlive];
            break;
        }
    free(p);
}

/* mj_makeData out of memory inside the worlds' creation and alone: a
 * status naming the world and MuJoCo's message, the process goes on, the
 * handlers are the caller's again. */
START_TEST(allocation_failure_is_a_status)
{
    mj_fixture f;
    clc_worlds *w = NULL;
    clcone_options o;
    clcone_error e;
    mjData *d = NULL;
    mj_open(&f, TINY_ARENA_XML, -1);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    allocs = 0;
    fail_at = 0;
    nlive = 0;
    mju_user_malloc = failing_malloc;
    mju_user_free = tracked_free;
    ck_assert_int_eq(clc_mujoco_make_data(f.m, f.path, &d, &e), CLCONE_ENOMEM);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(e.msg, f.path) && strstr(e.msg, "MuJoCo stopped with an error") && strstr(e.msg, "allocate"),
                  "%s", e.msg);
    /* the memory check's scratch data, worlds 0 and 1, then world 2's
     * fails: at the allocation 3 data take after the first of the next */
    allocs = 0;
    fail_at = 1 << 30;
    ck_assert_int_eq(clc_mujoco_make_data(f.m, f.path, &d, &e), CLCONE_OK);
    mj_deleteData(d);
    fail_at = 3 * allocs + 1;
    allocs = 0;
    ck_assert_int_eq(clc_worlds_create(NULL, &o, f.path, f.m, 4, 1, 1, 0.01, &w, &e), CLCONE_ENOMEM);
    mju_user_malloc = NULL;
    mju_user_free = NULL;
    /* MuJoCo's error jumped out of mj_makeData before it freed its first
     * parts (mujoco/guard.h says so): the test's to free */
    ck_assert_int_gt(nlive, 0);
    while (nlive) free(live[--nlive]);
    ck_assert_ptr_null(w);
    ck_assert_msg(strstr(e.msg, "world 2: ") == e.msg && strstr(e.msg, "allocate"), "%s", e.msg);
    ck_assert_ptr_null(mju_user_error);
    ck_assert_ptr_null(mju_user_warning);
    mj_close(&f);
}
END_TEST

/* Worlds beyond memory are refused before any is made, saying how much
 * they need (the humanoid's --worlds 100000 was killed by the OOM killer,
 * no message): in resident memory (2^40 data: more than any machine has)
 * and in address space under ulimit -v, through the CLI (exit 2). */
START_TEST(worlds_memory_checked)
{
    mj_fixture f;
    clcone_error e;
    mj_open(&f, TINY_ARENA_XML, -1);
    ck_assert_int_eq(clc_worlds_check_memory(f.m, 1LL << 40, f.path, &e), CLCONE_ENOMEM);
    ck_assert_msg(strstr(e.msg, f.path) && strstr(e.msg, "GiB") && strstr(e.msg, "use fewer worlds"), "%s", e.msg);
    ck_assert_int_eq(clc_worlds_check_memory(f.m, 4, f.path, &e), CLCONE_OK);
    mj_close(&f);
#if !defined(__SANITIZE_ADDRESS__)
    /* (AddressSanitizer reserves terabytes of address space: no ulimit -v) */
    char args[512], out[8192], err[8192];
    snprintf(args, sizeof args, "mujoco %s --steps 1 --device ref --worlds 1000", test_model_path("humanoid/humanoid.xml"));
    ck_assert_int_eq(test_run_cli("ulimit -v 2000000;", args, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "1000 MuJoCo data take") && strstr(err, "ulimit -v"), "%s", err);
#endif
}
END_TEST

/* The hinged sphere's zero diagonal in A: soft solves it on the
 * general-block form (W = A + R) and matches MuJoCo's Newton at every
 * state, on the reference and on the device (the old adapter refused the
 * elliptic model: "normal entry W[0][0] = 0 must be > 0"). */
static void zero_diagonal_matches(clcone_context *ctx, const char *xml)
{
    mj_fixture f;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    mj_open(&f, xml, 0);
    a = soft_adapter(ctx, CLCONE_MODEL_SOFT, f.path);
    for (int k = 0; k < 40; ++k) {
        ck_assert_msg(clc_mujoco_step(a, f.m, f.d, f.mc, &st, &e) == CLCONE_OK, "step %d: %s", k, e.msg);
        ck_assert_int_eq(st.ncon, 2);
        ck_assert_msg(st.res.status == CLCONE_CONVERGED, "step %d: %s", k, st.res.reason);
        ck_assert_msg(st.force_rel_diff < 1e-6 && st.qacc_rel_diff < 1e-6, "step %d: force %g qacc %g", k,
                      st.force_rel_diff, st.qacc_rel_diff);
    }
    /* the hinge spins on, without friction about the normal (condim 3) */
    ck_assert_double_gt(f.d->qvel[0], 2.9);
    clc_mujoco_free(a);
    mj_close(&f);
}

START_TEST(zero_diagonal_soft_matches_mujoco)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    zero_diagonal_matches(NULL, HINGE_SPHERE_XML("elliptic"));
    zero_diagonal_matches(NULL, HINGE_SPHERE_XML("pyramidal"));
    zero_diagonal_matches(ctx, HINGE_SPHERE_XML("elliptic"));
    clcone_context_free(ctx);
}
END_TEST

/* --model coulomb (R = 0 on contact rows) leaves the hinged sphere's
 * force undetermined: refused, saying why and what solves it (the old
 * adapter: "W_ii = 0, not > 0" on the pyramidal twin). */
START_TEST(coulomb_zero_diagonal_explained)
{
    static const char *const xml[] = {HINGE_SPHERE_XML("elliptic"), HINGE_SPHERE_XML("pyramidal")};
    for (int i = 0; i < 2; ++i) {
        mj_fixture f;
        clc_mujoco_stats st;
        clcone_error e;
        clc_mujoco *a;
        mj_open(&f, xml[i], 0);
        a = soft_adapter(NULL, CLCONE_MODEL_COULOMB, f.path);
        ck_assert_int_eq(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e), CLCONE_ENOTSUP);
        ck_assert_msg(strstr(e.msg, f.path) && strstr(e.msg, i ? "pyramidal contact 0" : "elliptic contact 0") &&
                          strstr(e.msg, "cannot move along its constraint row 0") && strstr(e.msg, "--model soft"),
                      "%s", e.msg);
        clc_mujoco_free(a);
        mj_close(&f);
    }
}
END_TEST

/* Three conflicting connects between two 1 cm bodies: the forces fight
 * and grow step by step, and float's rounding of W g + q and of g stalled
 * the device's APGD above float's tol (the old device: 10^6 iterations a
 * step: steps 12 and 15-18 of 20 ran to a cap of 200,000 iterations; the
 * reference converged).
 * Each step now converges on the float device within 10^5 iterations. */
static const char CONFLICT_XML[] =
    "<mujoco model=\"clc_conflict\">\n"
    "  <worldbody>\n"
    "    <body name=\"a\" pos=\"0 0 1\"><freejoint/><geom type=\"box\" size=\"0.01 0.01 0.01\"/></body>\n"
    "    <body name=\"b\" pos=\"0.5 0 1\"><freejoint/><geom type=\"sphere\" size=\"0.01\"/></body>\n"
    "  </worldbody>\n"
    "  <equality>\n"
    "    <connect body1=\"a\" body2=\"b\" anchor=\"0 0 0\"/>\n"
    "    <connect body1=\"a\" body2=\"b\" anchor=\"0.5 0 0\"/>\n"
    "    <connect body1=\"a\" anchor=\"0.2 0.1 0\"/>\n"
    "  </equality>\n"
    "</mujoco>\n";

START_TEST(conflicting_equalities_converge_in_float)
{
    mj_fixture f;
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    int most = 0;
    mj_open(&f, CONFLICT_XML, -1);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.solver = CLCONE_SOLVER_APGD; /* the device's dual solver (its default is the primal Newton) */
    o.max_iter = 100000;
    ck_assert_int_eq(clc_mujoco_create(ctx, &o, f.path, &a, &e), CLCONE_OK);
    for (int k = 0; k < 20; ++k) {
        ck_assert_msg(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e) == CLCONE_OK, "step %d: %s", k, e.msg);
        ck_assert_int_eq(st.nefc, 9);
        ck_assert_msg(st.res.status == CLCONE_CONVERGED, "step %d: %s after %d iterations, error %g", k,
                      st.res.reason, st.res.iters, st.res.error);
        if (st.res.iters > most) most = st.res.iters;
    }
    fprintf(stderr, "mujoco_robust conflicting connects, float device: at most %d iterations a step\n", most);
    clc_mujoco_free(a);
    clcone_context_free(ctx);
    mj_close(&f);
}
END_TEST

/* A solver neither form runs is refused before the model is loaded (the
 * old CLI loaded it and failed at step 0), naming what runs. */
START_TEST(cli_solver_checked_first)
{
    static const struct {
        const char *args, *want;
    } cases[] = {
        {"--solver lemke", "--solver lemke: MuJoCo's problem (--model soft) is solved on a device by apgd (default)"},
        {"--solver pgs", "--solver pgs: MuJoCo's problem (--model soft) is solved on a device"},
        {"--solver lemke --device ref", "; apgd (default), pgs on the general-block form; newton (default) on its primal problem"},
        {"--solver nsgs --model coulomb", "--solver nsgs: MuJoCo's problem (--model coulomb) is solved on a device"},
    };
    char args[512], out[8192], err[8192];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        snprintf(args, sizeof args, "mujoco /nonexistent/m.xml --steps 1 %s", cases[i].args);
        ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
        ck_assert_msg(strstr(err, cases[i].want) && !strstr(err, "cannot open"), "%s: %s", cases[i].args, err);
    }
    /* the solvers that run get as far as the model */
    ck_assert_int_eq(test_run_cli(NULL, "mujoco /nonexistent/m.xml --steps 1 --solver pgs --device ref", out,
                                  sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "cannot open"), "%s", err);
}
END_TEST

/* Each step's solve is capped at 30 s unless --max-seconds says
 * otherwise (the old CLI had no cap: a step that could not converge ran
 * its 10^6 iterations), and the help says so; a cap that stops the solves
 * ends the run not converged (exit 1), its progress on stderr with
 * --progress (apgd: Newton converges here in a few iterations). */
START_TEST(cli_solves_capped_by_default)
{
    mj_fixture f;
    char args[512], out[8192], err[8192];
    mj_open(&f, CONFLICT_XML, -1);
    snprintf(args, sizeof args, "mujoco %s --steps 1 --device ref", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(strstr(out, "tol 1e-08, at most 30 s a solve\n"), "%s", out);
    ck_assert_int_eq(test_run_cli(NULL, "mujoco --help", out, sizeof out, NULL, 0), 0);
    ck_assert_msg(strstr(out, "--max-seconds S  caps each step's solve") && strstr(out, "default\n                   30"),
                  "%s", out);
    snprintf(args, sizeof args, "mujoco %s --steps 1 --device ref --solver apgd --tol 1e-300 --max-iter 1000000000 --max-seconds 1.5 --progress", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 1);
    ck_assert_msg(strstr(out, "at most 1.5 s a solve") && strstr(test_last_line(out), "status=maxiter"), "%s", out);
    ck_assert_msg(strstr(err, "solving: iteration "), "%s", err);
    mj_close(&f);
}
END_TEST

/* Into a pipe, each step's line comes as it is printed: a run killed
 * after a second has left whole lines, the last one ended (block
 * buffering, the old CLI's, left nothing or a line cut at a 4 KiB
 * boundary). */
START_TEST(cli_lines_reach_a_pipe)
{
    mj_fixture f;
    char args[512], out[8192], *last;
    mj_open(&f, HINGE_SPHERE_XML("pyramidal"), -1);
    snprintf(args, sizeof args,
             "timeout -s KILL 1 %s mujoco %s --steps 100000000 --device ref | tail -c 300 | tr -c '[:print:]\\n' '?'",
             getenv("CLCONE_CLI") && *getenv("CLCONE_CLI") ? getenv("CLCONE_CLI") : "build/clcone", f.path);
    test_sh(args, out, sizeof out, NULL, 0);
    last = strrchr(out, '\n');
    ck_assert_msg(strstr(out, "step ") && last && !last[1], "%s", out);
    mj_close(&f);
}
END_TEST

/* q = J qacc_smooth - aref on d's contact rows (J dense, nefc x nv, in
 * J), and the norm of its part outside J's range over the norm of q: the
 * range by modified Gram-Schmidt on J's columns, twice over, a column
 * left with 1e-10 of its norm dropped as dependent. */
static double outside_range(const mjModel *m, mjData *d, double *J)
{
    int n = d->nefc, nv = (int)m->nv, rank = 0;
    double *Q = calloc((size_t)n * (size_t)nv, sizeof *Q), *q = calloc((size_t)n, sizeof *q), qq = 0, rr = 0;
    ck_assert_ptr_nonnull(Q);
    ck_assert_ptr_nonnull(q);
    mj_mulJacVec(m, d, q, d->qacc_smooth);
    for (int i = 0; i < n; ++i) q[i] -= d->efc_aref[i];
    for (int c = 0; c < nv; ++c) {
        double *x = Q + (size_t)rank * n, before = 0, after = 0;
        for (int i = 0; i < n; ++i) {
            x[i] = J[(size_t)i * nv + c];
            before += x[i] * x[i];
        }
        for (int pass = 0; pass < 2; ++pass)
            for (int k = 0; k < rank; ++k) {
                double dot = 0;
                for (int i = 0; i < n; ++i) dot += Q[(size_t)k * n + i] * x[i];
                for (int i = 0; i < n; ++i) x[i] -= dot * Q[(size_t)k * n + i];
            }
        for (int i = 0; i < n; ++i) after += x[i] * x[i];
        if (!(after > 1e-20 * before)) continue;
        for (int i = 0; i < n; ++i) x[i] /= sqrt(after);
        ++rank;
    }
    for (int i = 0; i < n; ++i) qq += q[i] * q[i];
    for (int k = 0; k < rank; ++k) {
        double dot = 0;
        for (int i = 0; i < n; ++i) dot += Q[(size_t)k * n + i] * q[i];
        for (int i = 0; i < n; ++i) q[i] -= dot * Q[(size_t)k * n + i];
    }
    for (int i = 0; i < n; ++i) rr += q[i] * q[i];
    free(Q);
    free(q);
    return sqrt(rr / qq);
}

/* Ten boxes stacked on a plane, elliptic: one component of 60 dofs,
 * past the dense fit's 48, so CHOLMOD fits it; face contacts of four
 * or more points each. */
static const char BOX_TOWER_XML[] =
    "<mujoco model=\"clc_box_tower\">\n"
    "  <option cone=\"elliptic\"/>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 0.1\"/>\n"
    "    <body pos=\"0 0 0.1\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"0.01 0 0.3\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"0 0.01 0.5\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"-0.01 0 0.7\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"0 -0.01 0.9\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"0.01 0 1.1\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"0 0.01 1.3\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"-0.01 0 1.5\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"0 -0.01 1.7\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "    <body pos=\"0 0 1.9\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* The part of q outside J's range on f's state, before and after
 * clc_mj_hard_aref. */
static void range_before_after(mj_fixture *f, const char *what, double *before, double *after)
{
    clcone_error e;
    double *J = calloc((size_t)f->d->nefc * (size_t)f->m->nv, sizeof *J);
    ck_assert_ptr_nonnull(J);
    if (mj_isSparse(f->m))
        mju_sparse2dense(J, f->d->efc_J, f->d->nefc, (int)f->m->nv, f->d->efc_J_rownnz, f->d->efc_J_rowadr,
                         f->d->efc_J_colind);
    else
        memcpy(J, f->d->efc_J, sizeof *J * (size_t)f->d->nefc * (size_t)f->m->nv);
    *before = outside_range(f->m, f->d, J);
    ck_assert_int_eq(clc_mj_hard_aref(f->m, f->d, what, &e), CLCONE_OK);
    *after = outside_range(f->m, f->d, J);
    fprintf(stderr, "mujoco hard a_ref on %s: outside J's range %.3g of q before, %.3g after\n", what, *before,
            *after);
    free(J);
}

/* The humanoid with elliptic cones, its feet down (MuJoCo's own steps):
 * eight contacts, four under each foot, 24 rows on the 12 dofs that move
 * them. MuJoCo's a_ref there asks for accelerations no motion gives
 * (its stiffness term's impedance differs from contact to contact);
 * clc_mj_hard_aref leaves only rounding outside J's range, and changes
 * nothing else: the tangent rows keep MuJoCo's a_ref but for that part. */
START_TEST(hard_aref_leaves_q_in_range)
{
    mj_fixture f = {{0}, 0, 0, 0};
    double before, after;
    mj_open_file(&f, "humanoid/humanoid.xml");
    f.m->opt.cone = mjCONE_ELLIPTIC;
    for (int k = 0; k < 60; ++k) mj_step(f.m, f.d);
    mj_forward(f.m, f.d);
    ck_assert_int_eq(f.d->nefc, 24);
    for (int i = 0; i < f.d->nefc; ++i) ck_assert_int_eq(f.d->efc_type[i], mjCNSTR_CONTACT_ELLIPTIC);
    range_before_after(&f, "the humanoid's feet", &before, &after);
    ck_assert_double_gt(before, 1e-6);
    ck_assert_double_lt(after, 1e-13);
    mj_close(&f);
    mj_open(&f, BOX_TOWER_XML, -1);
    for (int k = 0; k < 200; ++k) mj_step(f.m, f.d);
    mj_forward(f.m, f.d);
    ck_assert_int_ge(f.d->ncon, 40);
    range_before_after(&f, "a tower of ten boxes", &before, &after);
    ck_assert_double_gt(before, 1e-6);
    ck_assert_double_lt(after, 1e-12);
    mj_close(&f);
}
END_TEST

/* The same humanoid stepped under exact Coulomb on the reference to
 * 1e-8: every step converges with few Gauss-Seidel rescues of the
 * hybrid's Newton. Before clc_mj_hard_aref, steps from 58 on met the
 * out-of-range part: Newton stalled near 1.5e-8, its rescues grew to
 * millions of sweeps (5 s a step for eight contacts) and some steps
 * reached the cap. */
START_TEST(coulomb_feet_converge)
{
    mj_fixture f = {{0}, 0, 0, 0};
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    long sweeps = 0;
    mj_open_file(&f, "humanoid/humanoid.xml");
    f.m->opt.cone = mjCONE_ELLIPTIC;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    o.max_seconds = 10;
    ck_assert_msg(clc_mujoco_create(NULL, &o, "humanoid", &a, &e) == CLCONE_OK, "%s", e.msg);
    for (int k = 0; k < 100; ++k) {
        ck_assert_msg(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e) == CLCONE_OK, "step %d: %s", k, e.msg);
        ck_assert_msg(st.res.status == CLCONE_CONVERGED, "step %d: %s", k, st.res.reason);
        sweeps += st.res.inner_iters;
    }
    fprintf(stderr, "mujoco humanoid, elliptic coulomb on the reference: %ld rescue sweeps in 100 steps\n", sweeps);
    ck_assert_int_lt(sweeps, 100000);
    clc_mujoco_free(a);
    mj_close(&f);
}
END_TEST

Suite *suite_mujoco_robust(void)
{
    Suite *s = suite_create("mujoco_robust");
    TCase *tc = tcase_create("mujoco_robust");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, full_arena_is_an_error);
    tcase_add_test(tc, bad_qacc_is_an_error);
    tcase_add_test(tc, allocation_failure_is_a_status);
    tcase_add_test(tc, worlds_memory_checked);
    tcase_add_test(tc, zero_diagonal_soft_matches_mujoco);
    tcase_add_test(tc, coulomb_zero_diagonal_explained);
    tcase_add_test(tc, conflicting_equalities_converge_in_float);
    tcase_add_test(tc, cli_solver_checked_first);
    tcase_add_test(tc, cli_solves_capped_by_default);
    tcase_add_test(tc, cli_lines_reach_a_pipe);
    tcase_add_test(tc, hard_aref_leaves_q_in_range);
    tcase_add_test(tc, coulomb_feet_converge);
    suite_add_tcase(s, tc);
    return s;
}

#else

Suite *suite_mujoco_robust(void) { return suite_create("mujoco_robust"); }

#endif
