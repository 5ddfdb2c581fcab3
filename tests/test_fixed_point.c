/* Coulomb's fixed point over ipm (ref/fixed_point.c, coulomb's ipm row)
 * and the coulomb hybrid's second phase past the dense Newton's limit:
 * a stack of 600 contacts, where NSGS crawls, converges to 1e-8 by the
 * fixed point and by the hybrid, on the reference and (the hybrid,
 * handing the problem to the host) on a device, problem or scene, in
 * double and float, on the whole-problem kernel and on the multi-launch
 * loop; a batch gives each problem its bits alone; on a pile, where the
 * shift does not settle, it stops with a clear status and its best
 * iterate, and the hybrid's sweeps hand the problem on to Newton. */
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
 * sweeps, as a problem and as a scene (its local form): in double, and in
 * float at 1e-7, below the float sweeps' floor (they stood at 6.7e-7
 * after 20 s, the scene's body form at 7.1e-7 after 10 s), and at the
 * float default's 1e-5, where the sweeps alone took 41,680 iterations. */
START_TEST(device_hybrid_hands_a_tall_stack_over)
{
    clcone_context *ctx = test_context(_i ? CLCONE_FLOAT : CLCONE_DOUBLE);
    clcone_scene s;
    clcone_problem p;
    double *r;
    stack(&s, &p);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    for (int k = 0; k < (_i ? 4 : 2); ++k) {
        int scene = k % 2;
        double tol = !_i ? 1e-8 : k < 2 ? 1e-7 : 1e-5;
        clcone_prob_result out;
        memset(r, 0, 3 * (size_t)p.n * sizeof *r);
        out = test_solve_one(ctx, scene ? NULL : &p, &s, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_HYBRID, tol, 0, 0, r);
        ck_assert_msg(out.status == CLCONE_CONVERGED, "%s at %g: %s after %d iterations, error %g (%s)",
                      scene ? "scene" : "problem", tol, clcone_run_status_name(out.status), out.iters, out.error,
                      out.reason);
        ck_assert_double_le(coulomb_error(&p, r), tol);
        ck_assert_msg(out.inner_iters > 0 && out.iters > out.inner_iters, "%s at %g: %d iterations, %d sweeps",
                      scene ? "scene" : "problem", tol, out.iters, out.inner_iters);
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

/* A solve that keeps its history (--plot) runs the sweeps' multi-launch
 * loop, as a batch with a problem past the whole-problem kernels (4,096
 * contacts on a GPU) does; its switch hands the stack to the host there
 * too, coulomb's (the fixed point) and ccp's (ipm). Two stacks past the
 * dense limit as one batch: each gets its history, result and bits
 * alone. */
START_TEST(device_hybrid_keeping_history_hands_over)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_scene s;
    clcone_problem parts[2], batch;
    const clcone_problem *ptr[2] = {&parts[0], &parts[1]};
    clcone_history h[3] = {{NULL, 0, 0, 0}, {NULL, 0, 0, 0}, {NULL, 0, 0, 0}};
    clcone_result res[3];
    clcone_options o;
    clcone_error e;
    double *r[3];
    stack(&s, &parts[0]);
    clcone_scene_free(&s);
    test_gen_scene("stack", 130, 1, &s, &parts[1]);
    clcone_scene_free(&s);
    ck_assert_int_gt(parts[1].n, CLCONE_NEWTON_REF_MAX_CONTACTS);
    ck_assert(clcone_batch_concat(ptr, 2, &batch, &e) == CLCONE_OK);
    clcone_options_default(&o);
    o.model = _i ? CLCONE_MODEL_CCP : CLCONE_MODEL_COULOMB;
    o.tol = 1e-8;
    for (int k = 0; k < 3; ++k) {
        const clcone_problem *p = k < 2 ? &parts[k] : &batch;
        r[k] = calloc(3 * (size_t)p->n, sizeof *r[k]);
        o.history = &h[k];
        ck_assert_msg(clcone_solve(ctx, p, &o, r[k], &res[k], &e) == CLCONE_OK, "%s", e.msg);
    }
    for (int k = 0; k < 2; ++k) {
        const clcone_prob_result *a = &res[k].items[0], *b = &res[2].items[k];
        int n = 0;
        ck_assert_msg(a->status == CLCONE_CONVERGED, "stack %d: %s after %d iterations, error %g (%s)", k,
                      clcone_run_status_name(a->status), a->iters, a->error, a->reason);
        ck_assert(a->inner_iters > 0 && a->iters > a->inner_iters);
        ck_assert_double_le(clcone_error_of(&parts[k], &o, r[k], 0, parts[k].n), 1e-8);
        ck_assert_int_eq(b->status, a->status);
        ck_assert_int_eq(b->iters, a->iters);
        ck_assert_int_eq(b->inner_iters, a->inner_iters);
        ck_assert_double_eq(b->error, a->error);
        ck_assert(memcmp(r[k], r[2] + 3 * batch.prob_off[k], sizeof(double) * 3 * (size_t)parts[k].n) == 0);
        for (int i = 0; i < h[2].count; ++i) {
            const clcone_history_point *pt = &h[2].points[i];
            if (pt->prob != k) continue;
            ck_assert_int_lt(n, h[k].count);
            ck_assert_int_eq(pt->iter, h[k].points[n].iter);
            ck_assert_double_eq(pt->error, h[k].points[n].error);
            ++n;
        }
        ck_assert_int_eq(n, h[k].count);
        ck_assert_int_gt(n, 0);
    }
    for (int k = 0; k < 3; ++k) {
        free(r[k]);
        clcone_result_free(&res[k]);
        clcone_history_free(&h[k]);
    }
    clcone_problem_free(&parts[0]);
    clcone_problem_free(&parts[1]);
    clcone_problem_free(&batch);
    clcone_context_free(ctx);
}
END_TEST

/* parts[0] and parts[1] as one batch on the multi-launch loop (history
 * kept), o's model and tol: each the status, iterations and bits it gets
 * alone there. */
static void batch_with_history_is_alone(clcone_context *ctx, const clcone_problem *parts, clcone_options *o)
{
    const clcone_problem *ptr[2] = {&parts[0], &parts[1]};
    clcone_problem batch;
    clcone_history h[3] = {{NULL, 0, 0, 0}, {NULL, 0, 0, 0}, {NULL, 0, 0, 0}};
    clcone_result res[3];
    clcone_error e;
    double *r[3];
    ck_assert(clcone_batch_concat(ptr, 2, &batch, &e) == CLCONE_OK);
    for (int k = 0; k < 3; ++k) {
        const clcone_problem *p = k < 2 ? &parts[k] : &batch;
        r[k] = calloc(3 * (size_t)p->n, sizeof *r[k]);
        o->history = &h[k];
        ck_assert_msg(clcone_solve(ctx, p, o, r[k], &res[k], &e) == CLCONE_OK, "%s", e.msg);
    }
    for (int k = 0; k < 2; ++k) {
        const clcone_prob_result *a = &res[k].items[0], *b = &res[2].items[k];
        ck_assert_msg(a->status == CLCONE_CONVERGED, "problem %d: %s (%s)", k, clcone_run_status_name(a->status),
                      a->reason);
        ck_assert_int_eq(b->status, a->status);
        ck_assert_int_eq(b->iters, a->iters);
        ck_assert_double_eq(b->error, a->error);
        ck_assert(memcmp(r[k], r[2] + 3 * batch.prob_off[k], sizeof(double) * 3 * (size_t)parts[k].n) == 0);
    }
    for (int k = 0; k < 3; ++k) {
        free(r[k]);
        clcone_result_free(&res[k]);
        clcone_history_free(&h[k]);
    }
    o->history = NULL;
    clcone_problem_free(&batch);
}

/* p solved twice through one plan (o): the second solve as the first,
 * to the bit, after a first whose resumes rewrote switches and prices
 * on the device. */
static void plan_solves_alike(clcone_context *ctx, const clcone_problem *p, const clcone_options *o)
{
    clcone_plan *pl;
    clcone_result res[2];
    clcone_error e;
    double *r[2];
    ck_assert_msg(clcone_plan_create(ctx, p, o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    for (int k = 0; k < 2; ++k) {
        r[k] = calloc(3 * (size_t)p->n, sizeof *r[k]);
        ck_assert_msg(clcone_plan_solve(pl, r[k], &res[k], &e) == CLCONE_OK, "%s", e.msg);
    }
    ck_assert_int_eq(res[0].items[0].status, CLCONE_CONVERGED);
    ck_assert_int_eq(res[1].items[0].status, res[0].items[0].status);
    ck_assert_int_eq(res[1].items[0].iters, res[0].items[0].iters);
    ck_assert(memcmp(r[0], r[1], sizeof(double) * 3 * (size_t)p->n) == 0);
    for (int k = 0; k < 2; ++k) {
        free(r[k]);
        clcone_result_free(&res[k]);
    }
    clcone_plan_free(pl);
}

/* On a boxed pile (`gen pile --n 200 --seed 3`, 600 contacts) the fixed
 * point stalls; a float device's sweeps, alone after it, stood at 1.1e-5
 * after 20 s at the float default's 1e-5. Watched by the switch again
 * they hand the problem to the host's sparse Newton, which converges
 * (about 1 s): on the whole-problem kernel and on the multi-launch loop
 * (history kept); a plan's second solve is its first; in a batch with a
 * tiny pile each gets its bits alone. */
START_TEST(device_hybrid_hands_over_again_after_the_fixed_point)
{
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_scene s;
    clcone_problem parts[2];
    clcone_history h = {NULL, 0, 0, 0};
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double *r;
    test_gen_pile(200, 3, &s, &parts[0]);
    clcone_scene_free(&s);
    ck_assert_int_gt(parts[0].n, CLCONE_NEWTON_REF_MAX_CONTACTS);
    r = malloc(3 * (size_t)parts[0].n * sizeof *r);
    clcone_options_default(&o);
    o.tol = 1e-5;
    for (int k = 0; k < 2; ++k) {
        const clcone_prob_result *out;
        memset(r, 0, 3 * (size_t)parts[0].n * sizeof *r);
        o.history = k ? &h : NULL;
        ck_assert_msg(clcone_solve(ctx, &parts[0], &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
        out = &res.items[0];
        ck_assert_msg(out->status == CLCONE_CONVERGED, "%s: %s after %d iterations, error %g (%s)",
                      k ? "multi-launch loop" : "kernel", clcone_run_status_name(out->status), out->iters,
                      out->error, out->reason);
        ck_assert_double_le(coulomb_error(&parts[0], r), 1e-5);
        clcone_result_free(&res);
    }
    ck_assert_int_gt(h.count, 0);
    plan_solves_alike(ctx, &parts[0], &o);
    test_gen_pile(11, 8, &s, &parts[1]);
    clcone_scene_free(&s);
    batch_with_history_is_alone(ctx, parts, &o);
    test_converged_batch_is_alone(ctx, parts, 2, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_HYBRID, 1e-5);
    clcone_history_free(&h);
    free(r);
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
    tcase_add_loop_test(t, device_hybrid_keeping_history_hands_over, 0, 2);
    tcase_add_test(t, device_hybrid_hands_over_again_after_the_fixed_point);
    tcase_add_test(t, fixed_point_fails_safe);
    suite_add_tcase(s, t);
    return s;
}
