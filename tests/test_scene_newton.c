/* Newton on scenes (solve/scene_local.c): coulomb's hybrid on a scene
 * within the dense Newton's limit runs on the scene's local form, on the
 * reference and on a double device (also keeping its history), where the
 * body form's sweeps stall;
 * its reactions are the scene's; past the limit, in float and for the
 * other solvers the body form's path is unchanged. */
#include "testutil.h"
#include "ref/reference.h"

/* The reference (ctx NULL) and a double device: the backends the local
 * form's Newton serves on scenes. */
static clcone_context *backend(int i)
{
    return i ? test_context(CLCONE_DOUBLE) : NULL;
}

/* The contact problem of a generated world, as `clcone solve` reads the
 * file `clcone gen NAME --n N [--seed SEED]` writes: its bodies carry the
 * free velocity v* = v + dt g. */
static void gen_scene(const char *name, int n, unsigned seed, clcone_scene *s)
{
    test_gen_scene(name, n, seed ? seed : 1, s, NULL);
}

/* The scene's coulomb error at r, measured on its own local form (W r + q
 * is u = J (v* + M^-1 J' r)), not read from the solver. */
static double scene_error(const clcone_scene *s, const double *r)
{
    clcone_problem p;
    clcone_options o;
    clcone_error e;
    double err;
    clcone_options_default(&o);
    ck_assert_msg(clcone_scene_to_local(s, &p, &e) == CLCONE_OK, "%s", e.msg);
    err = clcone_error_of(&p, &o, r, 0, p.n);
    clcone_problem_free(&p);
    return err;
}

enum { BUDGET = 5000 };

/* A 36-contact pile (`gen pile --n 12 --seed 219`; cgs stalled near 1e-3
 * for 30 s on it) and an 80-contact stack (`gen stack --n 20`): the
 * default reaches 1e-8 within the budget, the sweeps alone do not, and
 * the reactions meet the scene's own measure. */
START_TEST(scene_newton_converges_where_sweeps_stall)
{
    clcone_context *ctx = backend(_i);
    clcone_scene w[2];
    gen_scene("pile", 12, 219, &w[0]);
    gen_scene("stack", 20, 0, &w[1]);
    for (int k = 0; k < 2; ++k) {
        const clcone_scene *s = &w[k];
        double *r = calloc(3 * (size_t)s->ncontacts, sizeof *r);
        clcone_prob_result hy, gs;
        ck_assert_int_le(s->ncontacts, CLCONE_NEWTON_REF_MAX_CONTACTS);
        gs = test_solve_one(ctx, NULL, s, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, 1e-8, BUDGET, 0, r);
        ck_assert_int_ne(gs.status, CLCONE_CONVERGED);
        ck_assert_double_gt(gs.error, 1e-7);
        hy = test_solve_one(ctx, NULL, s, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, 1e-8, BUDGET, 0, r);
        ck_assert_msg(hy.status == CLCONE_CONVERGED, "scene %d: error %g after %d iterations", k, hy.error,
                      hy.iters);
        /* Newton took over (the reference's count adds its rescues' sweeps) */
        if (ctx) ck_assert_int_lt(hy.inner_iters, hy.iters);
        ck_assert_double_le(hy.error, 1e-8);
        ck_assert_double_le(scene_error(s, r), 1.01e-8);
        /* newton alone too (20 and 14 steps here) */
        hy = test_solve_one(ctx, NULL, s, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-8, 100, 0, r);
        ck_assert_int_eq(hy.status, CLCONE_CONVERGED);
        ck_assert_double_le(scene_error(s, r), 1.01e-8);
        free(r);
        clcone_scene_free(&w[k]);
    }
    clcone_context_free(ctx);
}
END_TEST

/* Run after run, the same bits and iterations. */
START_TEST(scene_newton_bitwise_run_to_run)
{
    clcone_context *ctx = backend(_i);
    clcone_scene w;
    double *r[2];
    clcone_prob_result res[2];
    size_t m;
    gen_scene("pile", 12, 219, &w);
    m = 3 * (size_t)w.ncontacts;
    for (int t = 0; t < 2; ++t) {
        r[t] = calloc(m, sizeof *r[t]);
        res[t] = test_solve_one(ctx, NULL, &w, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, 1e-8, BUDGET, 0, r[t]);
    }
    ck_assert_int_eq(res[0].status, CLCONE_CONVERGED);
    ck_assert_int_eq(res[0].iters, res[1].iters);
    ck_assert(memcmp(r[0], r[1], m * sizeof *r[0]) == 0);
    free(r[0]);
    free(r[1]);
    clcone_scene_free(&w);
    clcone_context_free(ctx);
}
END_TEST

/* A scene within the dense limit on a float device, which refuses newton
 * on scenes, and one past the limit on a double device are their local
 * forms' hybrid (sweeps, then the host's Newton or fixed point), bit for
 * bit. */
START_TEST(scene_newton_elsewhere_goes_local)
{
    clcone_context *ctx = test_context(_i ? CLCONE_FLOAT : CLCONE_DOUBLE);
    clcone_scene w;
    double *r[2];
    clcone_prob_result res[2];
    size_t m;
    gen_scene("pile", _i ? 12 : 200, _i ? 219 : 0, &w);
    ck_assert(_i ? w.ncontacts <= CLCONE_NEWTON_REF_MAX_CONTACTS : w.ncontacts > CLCONE_NEWTON_REF_MAX_CONTACTS);
    m = 3 * (size_t)w.ncontacts;
    for (int t = 0; t < 2; ++t) {
        clcone_problem local;
        clcone_error e;
        r[t] = calloc(m, sizeof *r[t]);
        if (!t) {
            res[t] = test_solve_one(ctx, NULL, &w, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, 1e-8, 200, 0, r[t]);
            continue;
        }
        ck_assert_msg(clcone_scene_to_local(&w, &local, &e) == CLCONE_OK, "%s", e.msg);
        res[t] = test_solve_one(ctx, &local, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_HYBRID, 1e-8, 200, 0, r[t]);
        clcone_problem_free(&local);
    }
    ck_assert_int_eq(res[0].status, res[1].status);
    ck_assert_int_eq(res[0].iters, res[1].iters);
    ck_assert_int_eq(res[0].inner_iters, res[1].inner_iters);
    ck_assert(memcmp(r[0], r[1], m * sizeof *r[0]) == 0);
    if (_i) { /* float: newton is refused on scenes, and says where it goes */
        clcone_options o;
        clcone_result res;
        clcone_error e;
        clcone_options_default(&o);
        o.solver = CLCONE_SOLVER_NEWTON;
        ck_assert_int_eq(clcone_solve_scene(ctx, &w, &o, r[0], &res, &e), CLCONE_ENOTSUP);
        ck_assert_ptr_nonnull(strstr(e.msg, "in double"));
    }
    free(r[0]);
    free(r[1]);
    clcone_scene_free(&w);
    clcone_context_free(ctx);
}
END_TEST

/* A solve keeping its history (--plot) on a double device runs the
 * multi-launch loop, which hands a problem within the dense limit to the
 * host's Newton: the 36-contact pile as a scene goes to its local form
 * for it and converges with its history (the body form's sweeps stood at
 * 1.0e-3 after 5 s), the same status, iterations and reactions as its
 * local form solved with its history. */
START_TEST(scene_newton_keeping_history)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_scene w;
    clcone_problem local;
    clcone_history h[2] = {{NULL, 0, 0, 0}, {NULL, 0, 0, 0}};
    clcone_result res[2];
    clcone_options o;
    clcone_error e;
    double *r[2];
    size_t m;
    gen_scene("pile", 12, 219, &w);
    ck_assert_msg(clcone_scene_to_local(&w, &local, &e) == CLCONE_OK, "%s", e.msg);
    m = 3 * (size_t)w.ncontacts;
    clcone_options_default(&o);
    o.tol = 1e-8;
    o.max_iter = BUDGET;
    for (int k = 0; k < 2; ++k) {
        r[k] = calloc(m, sizeof *r[k]);
        o.history = &h[k];
        ck_assert_msg((k ? clcone_solve(ctx, &local, &o, r[k], &res[k], &e)
                         : clcone_solve_scene(ctx, &w, &o, r[k], &res[k], &e)) == CLCONE_OK,
                      "%s", e.msg);
    }
    ck_assert_msg(res[0].items[0].status == CLCONE_CONVERGED, "%s after %d iterations, error %g",
                  clcone_run_status_name(res[0].items[0].status), res[0].items[0].iters, res[0].items[0].error);
    ck_assert_double_le(scene_error(&w, r[0]), 1.01e-8);
    ck_assert_int_gt(h[0].count, 0);
    ck_assert_int_eq(h[0].count, h[1].count);
    ck_assert_int_eq(res[0].items[0].status, res[1].items[0].status);
    ck_assert_int_eq(res[0].items[0].iters, res[1].items[0].iters);
    ck_assert(memcmp(r[0], r[1], m * sizeof *r[0]) == 0);
    for (int k = 0; k < 2; ++k) {
        free(r[k]);
        clcone_result_free(&res[k]);
        clcone_history_free(&h[k]);
    }
    clcone_problem_free(&local);
    clcone_scene_free(&w);
    clcone_context_free(ctx);
}
END_TEST

/* A device plan handed scenes in turn, within the limit, past it and
 * back, gives each what a solve of that scene alone gives, bit for bit. */
START_TEST(scene_newton_plan_follows_its_scenes)
{
    static const struct {
        const char *name;
        int n;
        unsigned seed;
    } scenes[] = {{"pile", 12, 219}, {"stack", 20, 0}, {"pile", 200, 0}, {"pile", 8, 3}};
    enum { NS = sizeof scenes / sizeof *scenes, CAP = 3000 };
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_plan *pl = NULL;
    clcone_options o;
    clcone_error e;
    clcone_options_default(&o);
    o.max_iter = CAP;
    for (int k = 0; k < NS; ++k) {
        clcone_scene w;
        clcone_result res;
        clcone_prob_result alone;
        size_t m;
        double *r, *ra;
        gen_scene(scenes[k].name, scenes[k].n, scenes[k].seed, &w);
        m = 3 * (size_t)w.ncontacts;
        r = calloc(m, sizeof *r);
        ra = calloc(m, sizeof *ra);
        if (k == 0) ck_assert_msg(clcone_plan_create_scene(ctx, &w, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
        else ck_assert_msg(clcone_plan_set_scene(pl, &w, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert_msg(clcone_plan_solve(pl, r, &res, &e) == CLCONE_OK, "%s", e.msg);
        alone = test_solve_one(ctx, NULL, &w, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, 0, CAP, 0, ra);
        ck_assert_int_eq(res.items[0].iters, alone.iters);
        ck_assert_int_eq(res.items[0].status, alone.status);
        ck_assert(memcmp(r, ra, m * sizeof *r) == 0);
        clcone_result_free(&res);
        free(r);
        free(ra);
        clcone_scene_free(&w);
    }
    clcone_plan_free(pl);
    clcone_context_free(ctx);
}
END_TEST

Suite *suite_scene_newton(void)
{
    Suite *s = suite_create("scene_newton");
    TCase *t = tcase_create("scene_newton");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, scene_newton_converges_where_sweeps_stall, 0, 2);
    tcase_add_loop_test(t, scene_newton_bitwise_run_to_run, 0, 2);
    tcase_add_loop_test(t, scene_newton_elsewhere_goes_local, 0, 2);
    tcase_add_test(t, scene_newton_plan_follows_its_scenes);
    tcase_add_test(t, scene_newton_keeping_history);
    suite_add_tcase(s, t);
    return s;
}
