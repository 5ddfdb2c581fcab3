/* Coulomb's fixed point over ipm (ref/fixed_point.c, coulomb's ipm row)
 * and the coulomb hybrid's second phase past the dense Newton's limit:
 * a stack of 600 contacts, where NSGS crawls, converges to 1e-8 by the
 * fixed point and by the hybrid, on the reference and (the hybrid,
 * handing the problem to the host) on a device, problem or scene in
 * double, problem in float; a batch gives each problem its bits alone; on a pile, where the
 * shift does not settle, it stops with a clear status and its best
 * iterate. */
#include "testutil.h"
#include "ref/reference.h"

static double coulomb_error(const clcone_problem *p, const double *r)
{
    clcone_options o;
    clcone_options_default(&o);
    return clcone_error_of(p, &o, r, 0, p->n);
}

/* `gen stack --n 150`: 600 contacts, all sticking at the answer. */
static void stack(clcone_scene *s, clcone_problem *p)
{
    test_gen_scene("stack", 150, 1, s, p);
    ck_assert_int_gt(p->n, CLCONE_NEWTON_REF_MAX_CONTACTS);
}

START_TEST(fixed_point_and_hybrid_solve_a_tall_stack)
{
    clcone_scene s;
    clcone_problem p;
    double *r;
    clcone_prob_result out;
    stack(&s, &p);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    out = test_solve_one(NULL, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NSGS, 1e-8, 20000, 0, r);
    ck_assert_int_ne(out.status, CLCONE_CONVERGED);
    test_ipm_and_hybrid_converge(NULL, &p, CLCONE_MODEL_COULOMB, 1, r);
    free(r);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
}
END_TEST

/* The device hybrid hands the stack to the host's fixed point after its
 * sweeps: in double as a problem and as a scene (its local form), in
 * float (scenes stay in the body form there) as a problem at 1e-7, below
 * the float sweeps' floor (they stood at 6.7e-7 after 20 s). */
START_TEST(device_hybrid_hands_a_tall_stack_over)
{
    clcone_context *ctx = test_context(_i ? CLCONE_FLOAT : CLCONE_DOUBLE);
    clcone_scene s;
    clcone_problem p;
    double *r;
    stack(&s, &p);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    for (int scene = 0; scene < 2 - _i; ++scene) {
        clcone_prob_result out;
        memset(r, 0, 3 * (size_t)p.n * sizeof *r);
        out = test_solve_one(ctx, scene ? NULL : &p, &s, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_HYBRID,
                             _i ? 1e-7 : 1e-8, 0, 0, r);
        ck_assert_msg(out.status == CLCONE_CONVERGED, "%s: %s after %d iterations, error %g (%s)",
                      scene ? "scene" : "problem", clcone_run_status_name(out.status), out.iters, out.error,
                      out.reason);
        ck_assert_double_le(coulomb_error(&p, r), _i ? 1e-7 : 1e-8);
        ck_assert(out.inner_iters > 0 && out.iters > out.inner_iters);
    }
    free(r);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    clcone_context_free(ctx);
}
END_TEST

/* The stack and a tiny pile as one batch on a double device: each gets
 * the status, iterations, error and bits it gets alone, run after run. */
START_TEST(device_batch_is_alone)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_scene s[2];
    clcone_problem parts[2];
    stack(&s[0], &parts[0]);
    test_gen_pile(11, 8, &s[1], &parts[1]);
    clcone_scene_free(&s[0]);
    clcone_scene_free(&s[1]);
    test_converged_batch_is_alone(ctx, parts, 2, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_HYBRID, 1e-8);
    clcone_context_free(ctx);
}
END_TEST

/* On a close-packed pile the shift does not settle: the method stops,
 * failed, saying why, with its best iterate (finite, its error measured
 * and well below the start's); a contact without friction is refused by
 * name, as ipm refuses it. */
START_TEST(fixed_point_fails_safe)
{
    clcone_scene s;
    clcone_problem p;
    double *r;
    clcone_prob_result out;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    test_gen_pile(300, 5, &s, &p);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    out = test_solve_one(NULL, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_IPM, 1e-8, 0, 0, r);
    ck_assert_msg(out.status == CLCONE_FAILED, "%s (%s)", clcone_run_status_name(out.status), out.reason);
    ck_assert_msg(strstr(out.reason, "fixed point stops"), "%s", out.reason);
    for (int i = 0; i < 3 * p.n; ++i) ck_assert(isfinite(r[i]));
    ck_assert_double_eq(out.error, coulomb_error(&p, r));
    ck_assert_double_lt(out.error, 1e-2);
    p.mu[7] = 0;
    clcone_options_default(&o);
    o.solver = CLCONE_SOLVER_IPM;
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "contact 7 has mu 0"), "%s", e.msg);
    free(r);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
}
END_TEST

Suite *suite_fixed_point(void)
{
    Suite *s = suite_create("fixed_point");
    TCase *t = tcase_create("fixed_point");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, fixed_point_and_hybrid_solve_a_tall_stack);
    tcase_add_loop_test(t, device_hybrid_hands_a_tall_stack_over, 0, 2);
    tcase_add_test(t, device_batch_is_alone);
    tcase_add_test(t, fixed_point_fails_safe);
    suite_add_tcase(s, t);
    return s;
}
