/* Semismooth Newton for ccp and soft (kernels/newton_math.h,
 * newton_ccp_contact; the newton and hybrid rows of both models): on
 * tiny piles where apgd stalls within a budget, newton and the hybrid
 * reach 1e-8 by ccp's own error measure (clcone_error_of) on the
 * reference and on a double device, as local problems and as scenes; on
 * the device a batch gives each problem the bits it gets alone, run after
 * run, and so do the reference's threads; at tol >= 1e-6 on a double
 * device (1e-5 in float) the hybrid is acgs, bit for bit; float's newton
 * reaches 1e-6, and so does float's hybrid where acgs's sweeps stall
 * above it. */
#include "testutil.h"
#include "core/internal.h"
#include "ref/reference.h"

/* The reference (ctx NULL) and a double device. */
static clcone_context *backend(int i)
{
    return i ? test_context(CLCONE_DOUBLE) : NULL;
}

/* ccp's error of r on p, measured here. */
static double ccp_error(const clcone_problem *p, const double *r)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    return clcone_error_of(p, &o, r, 0, p->n);
}

/* The tiny piles of the 256-scene batch on which apgd crept for 1e6
 * iterations at 7e-7 and 2e-6 (`gen pile --n 11 --seed 8`, `--n 3 --seed
 * 250`): ccp's infimum lies far out there (the reactions grow as the
 * error falls), which is why the rescues are accelerated. */
static const struct {
    int n;
    unsigned seed;
} STALLS[] = {{11, 8}, {3, 250}};
#define NSTALLS 2

/* A budget of iterations (the hybrid's sweeps and Newton steps; each
 * rescue's sweeps are capped by it too) within which apgd stalls and
 * the new rows converge (both backends took at most 590 here, counting
 * a rescue's sweeps apart). */
enum { BUDGET = 20000 };

START_TEST(ccp_converges_where_apgd_stalls)
{
    static const clcone_solver solvers[2] = {CLCONE_SOLVER_HYBRID, CLCONE_SOLVER_NEWTON};
    clcone_context *ctx = backend(_i);
    for (int k = 0; k < NSTALLS; ++k) {
        clcone_scene s;
        clcone_problem p;
        double *r;
        clcone_prob_result out;
        test_gen_pile(STALLS[k].n, STALLS[k].seed, &s, &p);
        r = calloc(3 * (size_t)p.n, sizeof *r);
        out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-8, BUDGET, 0, r);
        ck_assert_int_ne(out.status, CLCONE_CONVERGED);
        ck_assert_double_gt(ccp_error(&p, r), 1e-8);
        for (int v = 0; v < 2; ++v) {
            /* the local problem, then the scene (solve/scene_local.c) */
            for (int scene = 0; scene < 2; ++scene) {
                memset(r, 0, 3 * (size_t)p.n * sizeof *r);
                out = test_solve_one(ctx, scene ? NULL : &p, &s, CLCONE_MODEL_CCP, solvers[v], 1e-8, BUDGET, 0, r);
                ck_assert_msg(out.status == CLCONE_CONVERGED, "pile %d %s: %s after %d iterations, error %g (%s)", k,
                              clcone_solver_name(solvers[v]), clcone_run_status_name(out.status), out.iters,
                              out.error, out.reason);
                ck_assert_double_le(ccp_error(&p, r), 1.01e-8);
            }
        }
        free(r);
        clcone_problem_free(&p);
        clcone_scene_free(&s);
    }
    clcone_context_free(ctx);
}
END_TEST

/* soft near the rigid limit (impedance 0.9999, R = 1e-4 W's diagonal) is
 * almost ccp: apgd needs 96,600 iterations on the 33-contact pile, the
 * hybrid 552. Measured on the ccp that soft is solved as. */
START_TEST(soft_converges_where_apgd_stalls)
{
    clcone_context *ctx = backend(_i);
    clcone_scene s;
    clcone_problem p, sp;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double *r;
    test_gen_pile(STALLS[0].n, STALLS[0].seed, &s, &p);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.soft_impedance = 0.9999;
    o.tol = 1e-8;
    o.max_iter = BUDGET;
    ck_assert_msg(clc_soft_local(&p, &o, NULL, &sp, &e) == CLCONE_OK, "%s", e.msg);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    for (int v = 0; v < 3; ++v) {
        o.solver = v == 0 ? CLCONE_SOLVER_APGD : v == 1 ? CLCONE_SOLVER_HYBRID : CLCONE_SOLVER_NEWTON;
        memset(r, 0, 3 * (size_t)p.n * sizeof *r);
        ck_assert_msg(clcone_solve(ctx, &p, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
        if (v == 0) {
            ck_assert_int_ne(res.items[0].status, CLCONE_CONVERGED);
            ck_assert_double_gt(ccp_error(&sp, r), 1e-8);
        } else {
            ck_assert_msg(res.items[0].status == CLCONE_CONVERGED, "%s: error %g after %d iterations",
                          clcone_solver_name(o.solver), res.items[0].error, res.items[0].iters);
            ck_assert_double_le(ccp_error(&sp, r), 1.01e-8);
        }
        clcone_result_free(&res);
    }
    free(r);
    clcone_problem_free(&sp);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    clcone_context_free(ctx);
}
END_TEST

/* On the device the piles as one batch, twice: each problem gets the
 * status, iterations, error and bits it gets alone, and the second run
 * repeats the first. */
START_TEST(ccp_device_batch_is_alone_and_repeats)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem parts[NSTALLS];
    clcone_scene s[NSTALLS];
    clcone_prob_result alone[NSTALLS];
    double *r[NSTALLS];
    for (int k = 0; k < NSTALLS; ++k) {
        test_gen_pile(STALLS[k].n, STALLS[k].seed, &s[k], &parts[k]);
        r[k] = calloc(3 * (size_t)parts[k].n, sizeof *r[k]);
        alone[k] = test_solve_one(ctx, &parts[k], NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_HYBRID, 1e-8, BUDGET, 0, r[k]);
    }
    test_batch_is_alone(ctx, parts, NSTALLS, CLCONE_MODEL_CCP, CLCONE_SOLVER_HYBRID, 1e-8, BUDGET, alone, r);
    for (int k = 0; k < NSTALLS; ++k) clcone_scene_free(&s[k]);
    clcone_context_free(ctx);
}
END_TEST

/* The reference's threads give each problem the bits it gets alone,
 * where its sparse Newton (from 48 contacts) factors by CHOLMOD: the
 * supernodal factors call a BLAS that need not bear two threads at once
 * (Debian's serial OpenBLAS gave a threaded batch of these piles other
 * bits in about one run of two; core/parallel.h). Three batches of six
 * 120-contact piles, each on one thread and on three. */
START_TEST(ccp_reference_threads_give_the_bits_alone)
{
    for (int rep = 0; rep < 3; ++rep) {
        clcone_problem parts[6];
        for (int k = 0; k < 6; ++k) {
            clcone_scene s;
            test_gen_pile(40, (unsigned)(6 * rep + k), &s, &parts[k]);
            clcone_scene_free(&s);
        }
        test_converged_batch_is_alone(NULL, parts, 6, CLCONE_MODEL_CCP, CLCONE_SOLVER_NEWTON, 1e-8);
    }
}
END_TEST

/* Where Newton has no part the hybrid is its sweeps alone, acgs, bit
 * for bit, for the problem and for its scene (the body form): on a
 * device at tol >= 1e-6 (a pile of 600 contacts), on a float device at
 * its default tolerance. (Past the dense limit in double the hybrid
 * hands over to ipm: test_ipm.c.) */
START_TEST(ccp_hybrid_is_its_sweeps_where_newton_has_no_part)
{
    clcone_context *ctx = _i == 2 ? test_context(CLCONE_FLOAT) : backend(_i);
    double tol = _i == 2 ? 1e-5 : 1e-6;
    clcone_scene s;
    clcone_problem p;
    if (_i == 2) test_gen_pile(STALLS[0].n, STALLS[0].seed, &s, &p);
    else test_gen_pile(200, 1, &s, &p);
    test_solvers_agree(ctx, &p, &s, CLCONE_MODEL_CCP, CLCONE_SOLVER_ACGS, CLCONE_SOLVER_HYBRID, tol, 2000);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    clcone_context_free(ctx);
}
END_TEST

/* A float device asked for 1e-6, tighter than its default: on `gen wall
 * --n 8` (256 contacts, statically indeterminate) acgs's float sweeps
 * stall near 1.6e-6 (10 s, 54,000 sweeps, before the hybrid switched
 * there), and the hybrid, whose switch now decides below float's
 * default, hands the problem to the host's Newton in double and
 * converges, as the scene and as its local form. */
START_TEST(ccp_float_hybrid_reaches_tol_where_sweeps_stall)
{
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_scene s;
    clcone_problem p;
    double *r;
    clcone_prob_result out;
    test_gen_scene("wall", 8, 0, &s, &p);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_ACGS, 1e-6, BUDGET, 0, r);
    ck_assert_msg(out.status != CLCONE_CONVERGED, "acgs converged in %d sweeps", out.iters);
    for (int scene = 0; scene < 2; ++scene) {
        memset(r, 0, 3 * (size_t)p.n * sizeof *r);
        out = test_solve_one(ctx, scene ? NULL : &p, &s, CLCONE_MODEL_CCP, CLCONE_SOLVER_HYBRID, 1e-6, BUDGET, 0, r);
        ck_assert_msg(out.status == CLCONE_CONVERGED, "%s: %s after %d iterations, error %g", scene ? "scene" : "local",
                      clcone_run_status_name(out.status), out.iters, out.error);
        ck_assert_double_le(ccp_error(&p, r), 1e-6);
    }
    free(r);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    clcone_context_free(ctx);
}
END_TEST

/* In float, as coulomb's: newton reaches 1e-6 where apgd does not
 * (OneObject-i100000-499: 27 steps; apgd crept at 1.26e-6 for 10^6
 * iterations); a smaller tol stops at the caps. */
START_TEST(ccp_device_float_newton)
{
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_problem p;
    clcone_error e;
    clcone_prob_result out;
    double *r;
    ck_assert_msg(clcone_read_problem(test_problem_path("OneObject-i100000-499.hdf5.dat"), &p, &e) == CLCONE_OK,
                  "%s", e.msg);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-6, BUDGET, 0, r);
    ck_assert_int_ne(out.status, CLCONE_CONVERGED);
    memset(r, 0, 3 * (size_t)p.n * sizeof *r);
    out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_NEWTON, 1e-6, 200, 0, r);
    ck_assert_msg(out.status == CLCONE_CONVERGED, "%s after %d steps, error %g", clcone_run_status_name(out.status),
                  out.iters, out.error);
    ck_assert_double_le(ccp_error(&p, r), 1e-5); /* float's reactions, measured in double */
    free(r);
    clcone_problem_free(&p);
    clcone_context_free(ctx);
}
END_TEST

/* newton and hybrid are offered for ccp and soft on both backends; the
 * hybrid is ccp's default, apgd soft's (the pyramid's: test_newton_pyramid.c). */
START_TEST(ccp_newton_offered)
{
    static const clcone_model models[2] = {CLCONE_MODEL_CCP, CLCONE_MODEL_SOFT};
    char buf[256];
    clcone_options o;
    for (int k = 0; k < 2; ++k) {
        clcone_options_default(&o);
        o.model = models[k];
        clcone_options_resolve(&o, NULL);
        ck_assert_int_eq(o.solver, k ? CLCONE_SOLVER_APGD : CLCONE_SOLVER_HYBRID);
    }
    for (int k = 0; k < 2; ++k)
        for (int dev = 0; dev < 2; ++dev) {
            clcone_offers_describe(CLCONE_FORM_BIT(CLCONE_FORM_LOCAL), models[k], dev, buf, sizeof buf);
            ck_assert_msg(strstr(buf, "newton") && strstr(buf, "hybrid"), "%s", buf);
        }
}
END_TEST

Suite *suite_newton_ccp(void)
{
    Suite *s = suite_create("newton_ccp");
    TCase *t = tcase_create("newton_ccp");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, ccp_newton_offered);
    tcase_add_loop_test(t, ccp_converges_where_apgd_stalls, 0, 2);
    tcase_add_loop_test(t, soft_converges_where_apgd_stalls, 0, 2);
    tcase_add_test(t, ccp_device_batch_is_alone_and_repeats);
    tcase_add_test(t, ccp_reference_threads_give_the_bits_alone);
    tcase_add_loop_test(t, ccp_hybrid_is_its_sweeps_where_newton_has_no_part, 1, 3);
    tcase_add_test(t, ccp_device_float_newton);
    tcase_add_test(t, ccp_float_hybrid_reaches_tol_where_sweeps_stall);
    suite_add_tcase(s, t);
    return s;
}
