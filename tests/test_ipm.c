/* The interior point for ccp and soft (ref/ipm.c, the ipm rows): it reaches
 * 1e-8 on every shared problem, W symmetric or not, and on a pile past the
 * dense Newton's limit where apgd and acgs stall within its time; a batch
 * gives each problem the bits it gets alone; what it cannot take (a
 * contact without friction) and where it breaks down (W not positive
 * semi-definite) end with a clear status and a finite best iterate; the
 * ccp hybrid hands a large pile to it, the reference's and a double
 * device's (opencl/newton.c). */
#include "testutil.h"
#include "ref/reference.h"
#include <clcone/output.h>

/* A shared problem, .dat or FCLib .hdf5. */
static clcone_problem read_problem(const char *name)
{
    clcone_problem p;
    clcone_error e;
    const char *path = test_problem_path(name);
    size_t len = strlen(path);
    int hdf5 = len > 5 && strcmp(path + len - 5, ".hdf5") == 0;
    ck_assert_msg((hdf5 ? clcone_read_problem_hdf5(path, &p, &e) : clcone_read_problem(path, &p, &e)) == CLCONE_OK,
                  "%s", e.msg);
    return p;
}

/* Every shared local problem, at 1e-8: the Rover, Capsules and OneObject
 * files' W is not symmetric (1e-5 to 4e-4), where the factor of its
 * symmetric part preconditions the steps' refinement. */
START_TEST(ipm_solves_every_shared_problem)
{
    static const char *const files[] = {
        "BoxesStack1-i100000-32.hdf5.dat", "Capsules-i100-1090.dat", "Capsules-i101-404.dat",
        "Capsules-i125-1213.hdf5", "Confeti-ex03-Fc3D-SBM.dat", "Confeti-ex13-4contact-Fc3D-SBM.dat",
        "FC3D_Example1.dat", "FrictionContact3D_1c.dat", "FrictionContact3D_RR_1c.dat",
        "GFC3D_TwoRods1-condensed.dat", "NESpheres_10_1.dat", "OneObject-i100000-499.hdf5.dat",
        "OneObject-i1028-138.hdf5.dat", "Rover1039.dat", "Rover1040.dat", "Rover11035.dat", "Rover3865.dat",
        "Rover4144.dat", "Rover4396.dat", "Rover4493.dat", "Rover4609.dat", "Rover4622.dat"};
    clcone_options o;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    for (size_t k = 0; k < sizeof files / sizeof *files; ++k) {
        clcone_problem p = read_problem(files[k]);
        double *r = calloc(3 * (size_t)p.n, sizeof *r);
        clcone_prob_result out = test_solve_one(NULL, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_IPM, 1e-8, 100, 0, r);
        ck_assert_msg(out.status == CLCONE_CONVERGED, "%s: %s after %d steps, error %g (%s)", files[k],
                      clcone_run_status_name(out.status), out.iters, out.error, out.reason);
        ck_assert_double_le(clcone_error_of(&p, &o, r, 0, p.n), 1e-8);
        free(r);
        clcone_problem_free(&p);
    }
}
END_TEST

/* ccp's error of r on p, measured here. */
static double ccp_error(const clcone_problem *p, const double *r)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    return clcone_error_of(p, &o, r, 0, p->n);
}

/* `gen pile --n N --seed S`'s local form. */
static clcone_problem pile(int n, unsigned seed)
{
    clcone_scene s;
    clcone_problem p;
    test_gen_pile(n, seed, &s, &p);
    clcone_scene_free(&s);
    return p;
}

/* A pile past the dense limit at 1e-8: ipm, and the hybrid that hands it
 * over after its sweeps, converge, on the reference and (the hybrid; its
 * factor on the host) on a double device; apgd within ipm's own
 * iterations' worth of sweeps many times over does not. */
START_TEST(ipm_and_hybrid_past_the_dense_limit)
{
    clcone_context *ctx = _i ? test_context(CLCONE_DOUBLE) : NULL;
    clcone_problem p = pile(300, 5);
    double *r = calloc(3 * (size_t)p.n, sizeof *r);
    clcone_prob_result out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-8, 20000, 0, r);
    ck_assert_int_ne(out.status, CLCONE_CONVERGED);
    ck_assert_int_gt(p.n, CLCONE_NEWTON_REF_MAX_CONTACTS);
    test_ipm_and_hybrid_converge(ctx, &p, CLCONE_MODEL_CCP, !_i, r);
    free(r);
    clcone_problem_free(&p);
    if (ctx) clcone_context_free(ctx);
}
END_TEST

/* Gondzio's correctors on a pile, whose factor costs about 40 of a
 * step's solves: the 900-contact pile to 1e-8 in 24 steps (33 with
 * Mehrotra's corrector alone, whose steps stopped at 20-70% of the way
 * to the boundary). */
START_TEST(ipm_correctors_shorten_the_piles_steps)
{
    clcone_problem p = pile(300, 5);
    double *r = calloc(3 * (size_t)p.n, sizeof *r);
    clcone_prob_result out = test_solve_one(NULL, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_IPM, 1e-8, 0, 0, r);
    ck_assert_msg(out.status == CLCONE_CONVERGED && out.iters <= 26, "%s after %d steps, error %.3g: %s",
                  clcone_run_status_name(out.status), out.iters, out.error, out.reason);
    ck_assert_double_le(ccp_error(&p, r), 1e-8);
    free(r);
    clcone_problem_free(&p);
}
END_TEST

/* On a double device, that pile and a tiny one as one batch: each gets
 * the status, iterations, error and bits it gets alone, run after run. */
START_TEST(device_hand_over_is_alone_and_repeats)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem parts[2] = {pile(300, 5), pile(11, 8)};
    test_converged_batch_is_alone(ctx, parts, 2, CLCONE_MODEL_CCP, CLCONE_SOLVER_HYBRID, 1e-8);
    clcone_context_free(ctx);
}
END_TEST

/* A plan keeps each problem's interior point set up from its first solve
 * (opencl/handover.c; its numeric factor freed between solves): a
 * second solve on the same q, with the analysis kept, gives the first's
 * bits, iterations and status, as clcone_solve does. */
START_TEST(device_plan_solves_again_on_its_kept_setup)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem p = pile(300, 5);
    size_t m = 3 * (size_t)p.n;
    double *r[3] = {calloc(m, sizeof(double)), calloc(m, sizeof(double)), calloc(m, sizeof(double))};
    clcone_options o;
    clcone_plan *pl;
    clcone_result res[3];
    clcone_error e;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    ck_assert_msg(clcone_plan_create(ctx, &p, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    for (int k = 0; k < 2; ++k) ck_assert_msg(clcone_plan_solve(pl, r[k], &res[k], &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_solve(ctx, &p, &o, r[2], &res[2], &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(res[0].items[0].status == CLCONE_CONVERGED, "%s", res[0].items[0].reason);
    ck_assert_int_gt(res[0].items[0].inner_iters, 0); /* its sweeps handed it over */
    for (int k = 1; k < 3; ++k) {
        ck_assert_int_eq(res[k].items[0].status, res[0].items[0].status);
        ck_assert_int_eq(res[k].items[0].iters, res[0].items[0].iters);
        ck_assert_msg(memcmp(r[k], r[0], m * sizeof(double)) == 0, "solve %d differs from the first", k);
    }
    for (int k = 0; k < 3; ++k) {
        clcone_result_free(&res[k]);
        free(r[k]);
    }
    clcone_plan_free(pl);
    clcone_problem_free(&p);
    clcone_context_free(ctx);
}
END_TEST

/* Below the interior point's floor (tol 1e-11 on the pile) it stalls and
 * the device's sweeps go on from its iterate, with no second hand-over,
 * to the iteration cap, which counts the sweeps and its steps; what comes
 * back is the best iterate, its error measured (well below what the
 * sweeps alone reach within the cap). */
START_TEST(device_sweeps_resume_where_ipm_stalls)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem p = pile(300, 5);
    double *r = calloc(3 * (size_t)p.n, sizeof *r);
    clcone_prob_result out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_HYBRID, 1e-11, 30000, 0, r);
    ck_assert_msg(out.status == CLCONE_MAXITER, "%s after %d iterations (%s)", clcone_run_status_name(out.status),
                  out.iters, out.reason);
    ck_assert_int_eq(out.iters, 30000);
    ck_assert(out.inner_iters > 0 && out.inner_iters < out.iters);
    for (int i = 0; i < 3 * p.n; ++i) ck_assert(isfinite(r[i]));
    ck_assert_double_eq_tol(ccp_error(&p, r), out.error, 1e-6 * out.error);
    ck_assert_double_lt(out.error, 1e-9);
    free(r);
    clcone_problem_free(&p);
    clcone_context_free(ctx);
}
END_TEST

/* Two problems as one batch: each gets the bits it gets alone. */
START_TEST(ipm_batch_is_alone)
{
    clcone_problem parts[2] = {read_problem("Capsules-i101-404.dat"), read_problem("BoxesStack1-i100000-32.hdf5.dat")};
    const clcone_problem *pp[2] = {&parts[0], &parts[1]};
    clcone_problem batch;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double *alone[2], *rb;
    ck_assert_msg(clcone_batch_concat(pp, 2, &batch, &e) == CLCONE_OK, "%s", e.msg);
    rb = calloc(3 * (size_t)batch.n, sizeof *rb);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    o.solver = CLCONE_SOLVER_IPM;
    ck_assert_msg(clcone_solve(NULL, &batch, &o, rb, &res, &e) == CLCONE_OK, "%s", e.msg);
    for (int k = 0; k < 2; ++k) {
        clcone_prob_result out;
        alone[k] = calloc(3 * (size_t)parts[k].n, sizeof *alone[k]);
        out = test_solve_one(NULL, &parts[k], NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_IPM, 1e-8, 0, 0, alone[k]);
        ck_assert_int_eq(res.items[k].status, CLCONE_CONVERGED);
        ck_assert_int_eq(res.items[k].iters, out.iters);
        ck_assert(memcmp(alone[k], rb + 3 * batch.prob_off[k], sizeof(double) * 3 * (size_t)parts[k].n) == 0);
        free(alone[k]);
        clcone_problem_free(&parts[k]);
    }
    clcone_result_free(&res);
    clcone_problem_free(&batch);
    free(rb);
}
END_TEST

static clcone_problem text_problem(const char *text)
{
    clcone_problem p;
    clcone_error e;
    const char *path = test_write_temp(text, strlen(text));
    ck_assert_msg(clcone_read_problem(path, &p, &e) == CLCONE_OK, "%s", e.msg);
    unlink(path);
    return p;
}

/* A contact without friction is refused by name (its cone has no
 * interior); a W that is not positive semi-definite (two contacts coupled
 * by 3 I, eigenvalues -2 and 4) ends the solve with status failed, the
 * reason, and a finite iterate; a non-finite start is replaced, never
 * returned. */
START_TEST(ipm_fails_safe)
{
    clcone_problem p = text_problem("3\n1\n0\n3\n3\n3\t3\n1 0 0 0 1 0 0 0 1\n-1 0.5 0\n0\n");
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double r[6] = {NAN, INFINITY, 1, 0, 0, 0};
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    o.solver = CLCONE_SOLVER_IPM;
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "contact 0 has mu 0"), "%s", e.msg);
    clcone_problem_free(&p);
    p = text_problem("3\n2\n0\n6\n6\n6\t6\n1 0 0 3 0 0\n0 1 0 0 3 0\n0 0 1 0 0 3\n3 0 0 1 0 0\n"
                     "0 3 0 0 1 0\n0 0 3 0 0 1\n-1 0.5 0 1 0 0.5\n0.5 0.5\n");
    ck_assert_msg(clcone_solve(NULL, &p, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_FAILED);
    /* which of the two shows first depends on rounding (a pivot near 0) */
    ck_assert_msg(strstr(res.items[0].reason, "Newton matrix is not positive definite")
                      || strstr(res.items[0].reason, "no step has lowered the error"),
                  "%s", res.items[0].reason);
    for (int k = 0; k < 6; ++k) ck_assert(isfinite(r[k]));
    ck_assert_double_eq(res.items[0].error, clcone_error_of(&p, &o, r, 0, p.n));
    clcone_result_free(&res);
    clcone_problem_free(&p);
}
END_TEST

Suite *suite_ipm(void)
{
    Suite *s = suite_create("ipm");
    TCase *t = tcase_create("ipm");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, ipm_solves_every_shared_problem);
    tcase_add_loop_test(t, ipm_and_hybrid_past_the_dense_limit, 0, 2);
    tcase_add_test(t, ipm_correctors_shorten_the_piles_steps);
    tcase_add_test(t, device_hand_over_is_alone_and_repeats);
    tcase_add_test(t, device_plan_solves_again_on_its_kept_setup);
    tcase_add_test(t, device_sweeps_resume_where_ipm_stalls);
    tcase_add_test(t, ipm_batch_is_alone);
    tcase_add_test(t, ipm_fails_safe);
    suite_add_tcase(s, t);
    return s;
}
