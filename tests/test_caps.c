/* Every run stops: --max-iter bounds the Newton rescue's sweeps as well
 * as the outer loop, a device's time cap holds to a slice of device time
 * (not to a launch or to what the host queued), a plan's cap can change
 * between solves, and a device batch of scenes shares the batch's cap.
 * The time bounds are the cap plus a second: the paths they guard ran
 * 1.1-2.4 s past a 0.5-1 s cap before. */
#include "testutil.h"
#include "core/internal.h"
#include "world/world_parts.h"
#include "cone.h"
#include "local_solve.h"
#include "newton_math.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The rescue's length never passes the iteration cap, on either backend
 * (both take it from newton_math.h). */
START_TEST(rescue_length_within_max_iter)
{
    static const int caps[] = {1, 7, 50, 51, 2000, 1000000, 2000000000};
    for (size_t i = 0; i < sizeof caps / sizeof *caps; ++i) {
        int burst = newton_first_burst(caps[i]);
        ck_assert_int_le(burst, caps[i]);
        for (int k = 0; k < 40; ++k) {
            int next = newton_next_burst(burst, caps[i]);
            ck_assert_int_le(next, caps[i]);
            ck_assert_int_le(next, NEWTON_GS_MAX_SWEEPS);
            ck_assert_int_ge(next, burst);
            burst = next;
        }
    }
    ck_assert_int_eq(newton_first_burst(1000000), NEWTON_GS_SWEEPS);
}
END_TEST

/* Confeti-ex03 at tol 1e-300 stalls Newton on the reference at round-off
 * and calls the rescue: with --max-iter M no rescue runs more than M
 * sweeps (they started at 50 and doubled to 2^20 whatever M said). */
START_TEST(reference_rescue_obeys_max_iter)
{
    clcone_problem p;
    clcone_error e;
    clcone_prob_result out;
    double *r;
    const int M = 20;
    ck_assert_msg(clcone_read_problem(test_problem_path("Confeti-ex03-Fc3D-SBM.dat"), &p, &e) == CLCONE_OK,
                  "%s", e.msg);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    out = test_solve_one(NULL, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-300, M, 0, r);
    ck_assert_int_eq(out.status, CLCONE_MAXITER);
    ck_assert_int_le(out.iters, M);
    ck_assert_msg(out.inner_iters > 0, "no rescue ran: the case no longer covers the rescue");
    /* one rescue of the old length alone would be NEWTON_GS_SWEEPS */
    ck_assert_msg(out.inner_iters < NEWTON_GS_SWEEPS, "%d rescue sweeps in %d Newton steps, cap %d", out.inner_iters,
                  out.iters, M);
    free(r);
    clcone_problem_free(&p);
}
END_TEST

/* A scene whose W passes the block limit is refused once the count
 * passes it: 16,000 contacts between two bodies couple into 2.56e8
 * blocks, 7% past the limit; a heap of 3,000 spheres on one spot (2.7e10)
 * took 100 s to count in full. */
START_TEST(scene_block_limit_counted_to_the_limit)
{
    clcone_scene s;
    clcone_problem p;
    clcone_error e;
    char want[128];
    const int n = 16000;
    ck_assert_msg(clc_gen_pile(2, 0.5, 0.01, 0.1, 5, &s, &e) == CLCONE_OK, "%s", e.msg);
    free(s.contacts);
    s.contacts = calloc((size_t)n, sizeof *s.contacts);
    ck_assert_ptr_nonnull(s.contacts);
    s.ncontacts = n;
    for (int c = 0; c < n; ++c) {
        s.contacts[c].a = 0;
        s.contacts[c].b = 1;
        for (int k = 0; k < 3; ++k) s.contacts[c].point[k] = 0.5 * (s.bodies[0].x[k] + s.bodies[1].x[k]);
        s.contacts[c].normal[2] = 1;
        s.contacts[c].mu = 0.5;
    }
    ck_assert_int_eq(clcone_scene_to_local(&s, &p, &e), CLCONE_EINVAL);
    snprintf(want, sizeof want, "scene couples too many contacts: W would hold more than %d blocks", INT_MAX / 9);
    ck_assert_msg(strstr(e.msg, want) && strstr(e.msg, "of 16000 contacts"), "%s", e.msg);
    clcone_scene_free(&s);
}
END_TEST

/* The local form of a 9,000-contact pile: large enough that 128
 * iterations of a whole-problem kernel take seconds on a CPU device. */
static void big_pile(clcone_problem *p)
{
    clcone_scene s;
    clcone_error e;
    ck_assert_msg(clc_gen_pile(3000, 0.5, 0.01, 0.1, 5, &s, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_scene_to_local(&s, p, &e) == CLCONE_OK, "%s", e.msg);
    clcone_scene_free(&s);
}

/* One solve through pl from r = 0 (n contacts) that must stop at its time
 * cap, the reason holding `reason`; returns its wall time (ms). */
static double solve_capped(clcone_plan *pl, int n, const char *reason)
{
    double *r = calloc(3 * (size_t)n, sizeof *r), t0 = clc_now_ms(), wall;
    clcone_result res;
    clcone_error e;
    ck_assert_msg(clcone_plan_solve(pl, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    wall = clc_now_ms() - t0;
    ck_assert_int_eq(res.items[0].status, CLCONE_MAXITER);
    ck_assert_msg(strstr(res.items[0].reason, reason), "%s", res.items[0].reason);
    clcone_result_free(&res);
    free(r);
    return wall;
}

/* A device solve that cannot converge (tol 0) stops within a second of
 * its 0.5 s cap, timed around the plan's solve alone (compilation is the
 * plan's): pyramid cgs runs the whole-problem kernels, whose first launch
 * was 128 iterations; soft apgd the multi-launch path, where the host
 * queued launches ahead of the device. */
START_TEST(device_time_cap_holds)
{
    static const struct {
        clcone_model m;
        clcone_solver v;
    } cases[] = {{CLCONE_MODEL_PYRAMID, CLCONE_SOLVER_CGS}, {CLCONE_MODEL_SOFT, CLCONE_SOLVER_APGD}};
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_problem p;
    big_pile(&p);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        clcone_options o;
        clcone_plan *pl;
        clcone_error e;
        double wall;
        clcone_options_default(&o);
        o.model = cases[i].m;
        o.solver = cases[i].v;
        o.tol = 1e-300;
        o.max_seconds = 0.5;
        ck_assert_msg(clcone_plan_create(c, &p, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
        wall = solve_capped(pl, p.n, "time cap 0.5 s");
        ck_assert_msg(wall < 1500, "%s %s: %.0f ms for a 500 ms cap", clcone_model_name(o.model),
                      clcone_solver_name(o.solver), wall);
        clcone_plan_free(pl);
    }
    clcone_problem_free(&p);
    clcone_context_free(c);
}
END_TEST

/* The device's newton in float (the kernel's, with its Gauss-Seidel
 * rescues) on 40 tiny piles at tol 1e-8, which float does not reach on
 * some: Newton's rescues grew to seconds of sweeps in one launch, and a
 * 3 s cap returned after 4.6 s (then in the float hybrid, which now hands
 * Newton to the host). Rescues now run in
 * pieces the launch has room for, and past the cap each problem hands
 * back its best iterate with that iterate's error. */
START_TEST(device_hybrid_rescues_keep_the_cap)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_problem parts[40], batch;
    const clcone_problem *pp[40];
    clcone_options o;
    clcone_plan *pl;
    clcone_result res;
    clcone_error e;
    double *r, t0, wall;
    int capped = 0;
    for (int i = 0; i < 40; ++i) {
        clcone_scene s;
        ck_assert_msg(clc_gen_pile(3 + i % 10, 0.5, 0.01, 0.1, (unsigned)i, &s, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert_msg(clcone_scene_to_local(&s, &parts[i], &e) == CLCONE_OK, "%s", e.msg);
        clcone_scene_free(&s);
        pp[i] = &parts[i];
    }
    ck_assert_msg(clcone_batch_concat(pp, 40, &batch, &e) == CLCONE_OK, "%s", e.msg);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    o.solver = CLCONE_SOLVER_NEWTON;
    o.tol = 1e-8;
    o.max_seconds = 1;
    ck_assert_msg(clcone_plan_create(c, &batch, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    r = calloc(3 * (size_t)batch.n, sizeof *r);
    t0 = clc_now_ms();
    ck_assert_msg(clcone_plan_solve(pl, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    wall = clc_now_ms() - t0;
    ck_assert_msg(wall < 2000, "%.0f ms for a 1 s cap", wall);
    for (int k = 0; k < res.nprob; ++k) {
        int c0 = batch.prob_off[k], c1 = batch.prob_off[k + 1];
        double mine = clcone_error_coulomb(&batch, r, c0, c1, NULL), said = res.items[k].error;
        if (res.items[k].status == CLCONE_CONVERGED) continue;
        ++capped;
        ck_assert_msg(fabs(mine - said) <= 1e-2 * said + 1e-6, "problem %d: error %g said, %g of its reactions", k,
                      said, mine);
    }
    ck_assert_msg(capped > 0, "every problem converged: the case no longer reaches the cap");
    clcone_result_free(&res);
    clcone_plan_free(pl);
    free(r);
    clcone_problem_free(&batch);
    for (int i = 0; i < 40; ++i) clcone_problem_free(&parts[i]);
    clcone_context_free(c);
}
END_TEST

/* clcone_plan_set_max_seconds: refused where not a cap, then obeyed by
 * the next solve on both backends. */
START_TEST(plan_cap_changes_between_solves)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_problem p;
    clcone_error e;
    const double bad[] = {-1, NAN, INFINITY};
    ck_assert_msg(clcone_read_problem(test_problem_path("Capsules-i101-404.dat"), &p, &e) == CLCONE_OK, "%s",
                  e.msg);
    ck_assert_int_eq(clcone_plan_set_max_seconds(NULL, 1, &e), CLCONE_EINVAL);
    for (int dev = 0; dev < 2; ++dev) {
        clcone_options o;
        clcone_plan *pl;
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_COULOMB;
        o.solver = CLCONE_SOLVER_CGS;
        o.tol = 1e-300;
        o.max_iter = 1000000000;
        o.max_seconds = 0;
        ck_assert_msg(clcone_plan_create(dev ? c : NULL, &p, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
        for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
            ck_assert_int_eq(clcone_plan_set_max_seconds(pl, bad[i], &e), CLCONE_EINVAL);
            ck_assert_msg(strstr(e.msg, "max_seconds"), "%s", e.msg);
        }
        ck_assert_msg(clcone_plan_set_max_seconds(pl, 0.2, &e) == CLCONE_OK, "%s", e.msg);
        solve_capped(pl, p.n, "time cap 0.2 s");
        clcone_plan_free(pl);
    }
    clcone_problem_free(&p);
    clcone_context_free(c);
}
END_TEST

/* `clcone solve` of scenes on a device: the cap is the batch's, as the
 * docs say, not each scene's; every scene still reports its own status,
 * those reached after the cap saying so. */
START_TEST(cli_scene_batch_shares_the_cap)
{
    static char out[1 << 14], err[1 << 12], args[1 << 12];
    char dir[] = "/tmp/clcone-caps-XXXXXX";
    const char *last;
    double ms = -1;
    int n = 0;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (int k = 0; k < 4; ++k) {
        snprintf(args, sizeof args, "gen pile --n 400 --seed %d -o %s/p%d.scene", k + 1, dir, k);
        ck_assert_msg(test_run_cli(NULL, args, out, sizeof out, err, sizeof err) == 0, "%s", err);
    }
    snprintf(args, sizeof args,
             "solve %s/p0.scene %s/p1.scene %s/p2.scene %s/p3.scene --model coulomb --tol 1e-300 --max-seconds 1",
             dir, dir, dir, dir);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 1);
    for (const char *s = out; (s = strstr(s, "reason=")); ++s) {
        ck_assert_msg(!strncmp(s, "reason=time cap 1 s reached", 27)
                          || !strncmp(s, "reason=the batch's time cap 1 s was spent before it", 51),
                      "%s", out);
        ++n;
    }
    ck_assert_msg(n == 4 && strstr(out, "was spent before it"), "%s", out);
    last = test_last_line(out);
    ck_assert_msg(sscanf(strstr(last, "time_ms="), "time_ms=%lf", &ms) == 1 && ms < 2000, "%s", out);
    for (int k = 0; k < 4; ++k) {
        snprintf(args, sizeof args, "%s/p%d.scene", dir, k);
        unlink(args);
    }
    rmdir(dir);
}
END_TEST

/* A coulomb solve stopped by its cap near the error that rounding alone
 * leaves at a huge friction says so, on the reference and a double
 * device: with mu 1e8 a 30-sphere pile's error stops near 8e-8 in double
 * whatever the solver does. At mu 0.5, stopped far above that floor by
 * the iteration cap, the reason is the cap alone. */
START_TEST(rounding_floor_named_at_huge_friction)
{
    static const double mus[] = {1e8, 0.5};
    clcone_context *dev = test_context(CLCONE_DOUBLE);
    for (int d = 0; d < 2; ++d)
        for (int m = 0; m < 2; ++m) {
            clcone_scene sc;
            clcone_problem p;
            clcone_options o;
            clcone_plan *pl;
            clcone_error e;
            ck_assert_msg(clc_gen_pile(30, mus[m], 0.01, 0.1, 2, &sc, &e) == CLCONE_OK, "%s", e.msg);
            ck_assert_msg(clcone_scene_to_local(&sc, &p, &e) == CLCONE_OK, "%s", e.msg);
            clcone_options_default(&o);
            o.tol = 1e-8;
            if (m == 0) o.max_seconds = 0.5;
            else o.max_iter = 5;
            ck_assert_msg(clcone_plan_create(d ? dev : NULL, &p, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
            {
                double *r = calloc(3 * (size_t)p.n, sizeof *r);
                clcone_result res;
                ck_assert_msg(clcone_plan_solve(pl, r, &res, &e) == CLCONE_OK, "%s", e.msg);
                ck_assert_int_eq(res.items[0].status, CLCONE_MAXITER);
                ck_assert_msg(!strstr(res.items[0].reason, "rounding alone") == (m == 1), "mu %g, %s: %s (error %g)",
                              mus[m], d ? "device" : "reference", res.items[0].reason, res.items[0].error);
                clcone_result_free(&res);
                free(r);
            }
            clcone_plan_free(pl);
            clcone_problem_free(&p);
            clcone_scene_free(&sc);
        }
    clcone_context_free(dev);
}
END_TEST

/* Two contacts whose normals push each other in (W indefinite) have no
 * solution, and the first-order solvers' iterates grow until the error
 * overflows: a diverged status whose reason says why, finite reactions,
 * on the reference and on the device in float and double. */
START_TEST(divergence_named)
{
    const double W[36] = {1, 0, 0, -2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                          -2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    const double q[6] = {-1, 0.1, 0, -1, 0, 0.1}, mu[2] = {0.5, 0.5};
    clcone_context *ctx[3] = {NULL, test_context(CLCONE_FLOAT), test_context(CLCONE_DOUBLE)};
    clcone_problem p;
    clcone_error e;
    ck_assert_int_eq(clcone_problem_from_dense(&p, 2, W, q, mu, &e), CLCONE_OK);
    for (int d = 0; d < 3; ++d) {
        double r[6] = {0};
        clcone_prob_result out = test_solve_one(ctx[d], &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_JACOBI, 1e-8, 0, 0, r);
        ck_assert_msg(out.status == CLCONE_DIVERGED, "backend %d: status %d, %s", d, out.status, out.reason);
        ck_assert_msg(strstr(out.reason, "grew without bound") && strstr(out.reason, "not positive semidefinite"),
                      "backend %d: %s", d, out.reason);
        assert_finite(r, 6);
    }
    clcone_problem_free(&p);
    clcone_context_free(ctx[1]);
    clcone_context_free(ctx[2]);
}
END_TEST

Suite *suite_caps(void)
{
    Suite *s = suite_create("caps");
    TCase *t = tcase_create("caps");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, rescue_length_within_max_iter);
    tcase_add_test(t, scene_block_limit_counted_to_the_limit);
    tcase_add_test(t, reference_rescue_obeys_max_iter);
    tcase_add_test(t, device_time_cap_holds);
    tcase_add_test(t, device_hybrid_rescues_keep_the_cap);
    tcase_add_test(t, plan_cap_changes_between_solves);
    tcase_add_test(t, cli_scene_batch_shares_the_cap);
    tcase_add_test(t, rounding_floor_named_at_huge_friction);
    tcase_add_test(t, divergence_named);
    suite_add_tcase(s, t);
    return s;
}
