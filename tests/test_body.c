/* Body-form scenes on the device (matrix-free) against the CPU reference
 * on the assembled local form: a tall stack and a dense pile. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static int max_iter = 200000;

static clcone_prob_result solve_scene(clcone_context *c, const clcone_scene *s, clcone_model m, clcone_solver v,
                                      double tol, double *r)
{
    return test_solve_one(c, NULL, s, m, v, tol, max_iter, 0, r);
}

/* Post-impulse body velocities v* + M^-1 J^T r: unique for the convex
 * model even where W is singular and r is not. */
static void velocities(const clcone_scene *s, const double *r, double *v)
{
    clcone_scene_apply_impulses(s, r, v);
    for (int b = 0; b < s->nbodies; ++b)
        for (int k = 0; k < 6; ++k) v[6 * b + k] += s->bodies[b].v[k];
}

/* A stack of k boxes and a dense (FCC, about 4.8 contacts a sphere) pile
 * of 150 spheres. */
static void make_scenes(int k, clcone_scene *stack, clcone_scene *pile)
{
    clcone_error e;
    ck_assert_msg(clc_gen_stack(k, 0.5, 0.01, stack, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clc_gen_pile(150, 0.5, 0.01, 0.0, 7, pile, &e) == CLCONE_OK, "%s", e.msg);
}

/* Coloured Gauss-Seidel: device (bodies coloured, matrix-free) and
 * reference (W coloured, assembled) visit contacts in the same order.
 * Gauss-Seidel is slow on stacks (an 8-box stack needs 13,200 sweeps to
 * 1e-6, a 20-box one 223,390), hence the short stack here. */
START_TEST(body_cgs_follows_reference)
{
    clcone_scene sc[2];
    clcone_context *c = test_context(CLCONE_DOUBLE);
    make_scenes(8, &sc[0], &sc[1]);
    for (int i = 0; i < 2; ++i) {
        size_t m = 3 * (size_t)sc[i].ncontacts;
        double *rd = calloc(m, sizeof *rd), *rr = calloc(m, sizeof *rr), tol = i == 0 ? 1e-6 : 1e-8;
        clcone_prob_result dv = solve_scene(c, &sc[i], CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, tol, rd);
        clcone_prob_result rf = solve_scene(NULL, &sc[i], CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, tol, rr);
        ck_assert_msg(dv.status == CLCONE_CONVERGED, "scene %d: %g after %d", i, dv.error, dv.iters);
        ck_assert_int_eq(dv.iters, rf.iters);
        ck_assert_msg(test_rel_diff(rd, rr, m) <= 1e-8, "scene %d: %g", i, test_rel_diff(rd, rr, m));
        free(rd);
        free(rr);
    }
    clcone_context_free(c);
    clcone_scene_free(&sc[0]);
    clcone_scene_free(&sc[1]);
}
END_TEST

/* Jacobi with mass splitting and APGD converge on both scenes (plain
 * Jacobi does not: see kernels/body_form.cl and host/opencl/device_solve.c), and
 * reach the reference's solution of the convex model. */
START_TEST(body_jacobi_and_apgd_reach_reference)
{
    static const clcone_solver solvers[] = {CLCONE_SOLVER_JACOBI, CLCONE_SOLVER_APGD};
    clcone_scene sc[2];
    clcone_context *c = test_context(CLCONE_DOUBLE);
    make_scenes(20, &sc[0], &sc[1]);
    for (int i = 0; i < 2; ++i) {
        size_t m = 3 * (size_t)sc[i].ncontacts, nv = 6 * (size_t)sc[i].nbodies;
        double *rr = calloc(m, sizeof *rr), *vr = calloc(nv, sizeof *vr);
        clcone_prob_result rf = solve_scene(NULL, &sc[i], CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-11, rr);
        ck_assert_int_eq(rf.status, CLCONE_CONVERGED);
        velocities(&sc[i], rr, vr);
        for (size_t k = 0; k < sizeof solvers / sizeof solvers[0]; ++k) {
            double *rd = calloc(m, sizeof *rd), *vd = calloc(nv, sizeof *vd);
            clcone_prob_result dv = solve_scene(c, &sc[i], CLCONE_MODEL_CCP, solvers[k], 1e-9, rd);
            ck_assert_msg(dv.status == CLCONE_CONVERGED, "scene %d %s: %g after %d", i,
                          clcone_solver_name(solvers[k]), dv.error, dv.iters);
            velocities(&sc[i], rd, vd);
            ck_assert_msg(test_vel_diff(&sc[i], vd, vr) <= 1e-6, "scene %d %s: velocities differ by %g", i,
                          clcone_solver_name(solvers[k]), test_vel_diff(&sc[i], vd, vr));
            free(rd);
            free(vd);
        }
        /* and the coulomb law by Jacobi and by APGD inner solves */
        for (size_t k = 0; k < sizeof solvers / sizeof solvers[0]; ++k) {
            double *rd = calloc(m, sizeof *rd);
            clcone_prob_result dv = solve_scene(c, &sc[i], CLCONE_MODEL_COULOMB, solvers[k], 1e-6, rd);
            ck_assert_msg(dv.status == CLCONE_CONVERGED, "scene %d coulomb %s: %g after %d", i,
                          clcone_solver_name(solvers[k]), dv.error, dv.iters);
            free(rd);
        }
        free(rr);
        free(vr);
    }
    clcone_context_free(c);
    clcone_scene_free(&sc[0]);
    clcone_scene_free(&sc[1]);
}
END_TEST

/* Accelerated CGS on the cone QP: the device (matrix-free, dv regathered
 * from y before every sweep) follows the reference's iterations in
 * double, both reach the solution APGD finds, and float converges (and
 * on the pile lands near it).
 * On this pile it takes a fraction of plain CGS's sweeps (checked loosely:
 * fewer than half). */
START_TEST(body_acgs_follows_reference)
{
    clcone_scene sc[2];
    clcone_context *c = test_context(CLCONE_DOUBLE), *cf = test_context(CLCONE_FLOAT);
    make_scenes(20, &sc[0], &sc[1]);
    for (int i = 0; i < 2; ++i) {
        size_t m = 3 * (size_t)sc[i].ncontacts, nv = 6 * (size_t)sc[i].nbodies;
        double *rd = calloc(m, sizeof *rd), *rr = calloc(m, sizeof *rr), *rf = calloc(m, sizeof *rf);
        double *ra = calloc(m, sizeof *ra), *va = calloc(nv, sizeof *va), *vd = calloc(nv, sizeof *vd);
        clcone_prob_result dv = solve_scene(c, &sc[i], CLCONE_MODEL_CCP, CLCONE_SOLVER_ACGS, 1e-10, rd);
        clcone_prob_result rg = solve_scene(NULL, &sc[i], CLCONE_MODEL_CCP, CLCONE_SOLVER_ACGS, 1e-10, rr);
        clcone_prob_result fl = solve_scene(cf, &sc[i], CLCONE_MODEL_CCP, CLCONE_SOLVER_ACGS, 1e-5, rf);
        clcone_prob_result ap = solve_scene(NULL, &sc[i], CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-11, ra);
        ck_assert_msg(dv.status == CLCONE_CONVERGED && rg.status == CLCONE_CONVERGED && fl.status == CLCONE_CONVERGED,
                      "scene %d: device %g after %d, reference %g after %d, float %g after %d", i, dv.error, dv.iters,
                      rg.error, rg.iters, fl.error, fl.iters);
        ck_assert_msg(dv.iters == rg.iters, "scene %d: %d device iterations, %d reference", i, dv.iters, rg.iters);
        ck_assert_msg(test_rel_diff(rd, rr, m) <= 1e-6, "scene %d: %g", i, test_rel_diff(rd, rr, m));
        ck_assert_int_eq(ap.status, CLCONE_CONVERGED);
        velocities(&sc[i], ra, va);
        velocities(&sc[i], rd, vd);
        ck_assert_msg(test_vel_diff(&sc[i], vd, va) <= 1e-6, "scene %d: velocities differ by %g", i,
                      test_vel_diff(&sc[i], vd, va));
        if (i == 1) { /* the stack's conditioning is beyond float's 1e-4 (APGD's too) */
            velocities(&sc[i], rf, vd);
            ck_assert_msg(test_vel_diff(&sc[i], vd, va) <= 1e-4, "pile float: velocities differ by %g",
                          test_vel_diff(&sc[i], vd, va));
            memset(rr, 0, m * sizeof *rr);
            clcone_prob_result cg = solve_scene(NULL, &sc[i], CLCONE_MODEL_CCP, CLCONE_SOLVER_CGS, 1e-10, rr);
            ck_assert_msg(2 * rg.iters < cg.iters, "pile: acgs %d sweeps, cgs %d", rg.iters, cg.iters);
        }
        free(rd);
        free(rr);
        free(rf);
        free(ra);
        free(va);
        free(vd);
    }
    clcone_context_free(c);
    clcone_context_free(cf);
    clcone_scene_free(&sc[0]);
    clcone_scene_free(&sc[1]);
}
END_TEST

/* The stack's ground contacts carry the whole tower's weight impulse. */
START_TEST(body_stack_carries_its_weight)
{
    clcone_scene s;
    clcone_error e;
    clcone_context *c = test_context(CLCONE_DOUBLE);
    double *r, ground = 0;
    ck_assert(clc_gen_stack(20, 0.5, 0.01, &s, &e) == CLCONE_OK);
    r = calloc(3 * (size_t)s.ncontacts, sizeof *r);
    ck_assert_int_eq(solve_scene(c, &s, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_APGD, 1e-10, r).status, CLCONE_CONVERGED);
    for (int k = 0; k < s.ncontacts; ++k)
        if (s.contacts[k].b < 0) ground += r[3 * k];
    ck_assert_double_eq_tol(ground, 20 * 9.81 * 0.01, 1e-8);
    free(r);
    clcone_scene_free(&s);
    clcone_context_free(c);
}
END_TEST

START_TEST(body_float_close_to_reference)
{
    clcone_scene s;
    clcone_error e;
    clcone_context *c = NULL;
    size_t m, nv;
    double *rd, *rr, *vd, *vr;
    clcone_prob_result dv;
    ck_assert(clc_gen_pile(150, 0.5, 0.01, 0.0, 7, &s, &e) == CLCONE_OK);
    ck_assert(clcone_context_create(NULL, CLCONE_FLOAT, &c, &e) == CLCONE_OK);
    m = 3 * (size_t)s.ncontacts;
    nv = 6 * (size_t)s.nbodies;
    rd = calloc(m, sizeof *rd);
    rr = calloc(m, sizeof *rr);
    vd = calloc(nv, sizeof *vd);
    vr = calloc(nv, sizeof *vr);
    dv = solve_scene(c, &s, CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-5, rd);
    ck_assert_msg(dv.status == CLCONE_CONVERGED, "float apgd: %g", dv.error);
    solve_scene(NULL, &s, CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-11, rr);
    velocities(&s, rd, vd);
    velocities(&s, rr, vr);
    ck_assert_msg(test_vel_diff(&s, vd, vr) <= 1e-4, "float velocities differ by %g", test_vel_diff(&s, vd, vr));
    free(rd);
    free(rr);
    free(vd);
    free(vr);
    clcone_scene_free(&s);
    clcone_context_free(c);
}
END_TEST

START_TEST(body_runs_bitwise_identical)
{
    clcone_scene s;
    clcone_error e;
    clcone_context *c = NULL;
    static const clcone_solver solvers[] = {CLCONE_SOLVER_JACOBI, CLCONE_SOLVER_CGS, CLCONE_SOLVER_APGD};
    ck_assert(clc_gen_pile(150, 0.5, 0.01, 0.1, 7, &s, &e) == CLCONE_OK);
    ck_assert(clcone_context_create(NULL, CLCONE_FLOAT, &c, &e) == CLCONE_OK);
    max_iter = 300;
    for (size_t k = 0; k < sizeof solvers / sizeof solvers[0]; ++k) {
        size_t m = 3 * (size_t)s.ncontacts;
        double *a = calloc(m, sizeof *a), *b = calloc(m, sizeof *b);
        solve_scene(c, &s, CLCONE_MODEL_COULOMB, solvers[k], 1e-30, a);
        solve_scene(c, &s, CLCONE_MODEL_COULOMB, solvers[k], 1e-30, b);
        ck_assert(memcmp(a, b, sizeof(double) * m) == 0);
        free(a);
        free(b);
    }
    max_iter = 200000;
    clcone_scene_free(&s);
    clcone_context_free(c);
}
END_TEST

Suite *suite_body(void)
{
    Suite *s = suite_create("body");
    TCase *t = tcase_create("body");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, body_cgs_follows_reference);
    tcase_add_test(t, body_jacobi_and_apgd_reach_reference);
    tcase_add_test(t, body_acgs_follows_reference);
    tcase_add_test(t, body_stack_carries_its_weight);
    tcase_add_test(t, body_float_close_to_reference);
    tcase_add_test(t, body_runs_bitwise_identical);
    suite_add_tcase(s, t);
    return s;
}
