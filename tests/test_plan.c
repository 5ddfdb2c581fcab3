/* Plans (set up once, solve many): a plan's solves give exactly what
 * clcone_solve / clcone_solve_scene give on the same data, after new q,
 * new free velocities or new contacts; misuse is refused. */
#include "testutil.h"
#include "core/internal.h"
#include "solve/solve_entries.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static clcone_options options(clcone_model m, clcone_solver v, double tol)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = m;
    o.solver = v;
    o.tol = tol;
    o.max_iter = 20000;
    return o;
}

/* One solve through the plan and one through the front door on the same
 * data: the same reactions to the bit, iterations and status. */
static void expect_same(clcone_plan *pl, clcone_context *c, const clcone_problem *p, const clcone_scene *s,
                        const clcone_options *o)
{
    int n = p ? p->n : s->ncontacts;
    double *ra = calloc(3 * (size_t)n + 1, sizeof *ra), *rb = calloc(3 * (size_t)n + 1, sizeof *rb);
    clcone_result a, b;
    clcone_error e;
    ck_assert_msg(clcone_plan_solve(pl, ra, &a, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg((p ? clcone_solve(c, p, o, rb, &b, &e) : clcone_solve_scene(c, s, o, rb, &b, &e)) == CLCONE_OK,
                  "%s", e.msg);
    ck_assert_int_eq(a.nprob, b.nprob);
    for (int k = 0; k < a.nprob; ++k) {
        ck_assert_int_eq(a.items[k].iters, b.items[k].iters);
        ck_assert_int_eq(a.items[k].status, b.items[k].status);
    }
    ck_assert_msg(memcmp(ra, rb, sizeof *ra * 3 * (size_t)n) == 0, "plan and clcone_solve differ");
    clcone_result_free(&a);
    clcone_result_free(&b);
    free(ra);
    free(rb);
}

static void read_problem(const char *name, clcone_problem *p)
{
    clcone_error e;
    ck_assert_msg(clcone_read_problem_hdf5(test_problem_path(name), p, &e) == CLCONE_OK, "%s", e.msg);
}

START_TEST(plan_local_matches_solve_after_new_q)
{
    static const struct {
        clcone_model m;
        clcone_solver v;
    } cases[] = {{CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS},
                 {CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD},
                 {CLCONE_MODEL_CCP, CLCONE_SOLVER_JACOBI},
                 {CLCONE_MODEL_SOFT, CLCONE_SOLVER_CGS},
                 {CLCONE_MODEL_CCP, CLCONE_SOLVER_ACGS},
                 {CLCONE_MODEL_SOFT, CLCONE_SOLVER_ACGS}};
    clcone_context *c = test_context(CLCONE_DOUBLE);
    clcone_problem p;
    read_problem("Capsules-i100-1090.dat", &p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (int dev = 0; dev < 2; ++dev) {
            clcone_options o = options(cases[i].m, cases[i].v, 1e-7);
            clcone_context *ctx = dev ? c : NULL;
            clcone_plan *pl;
            clcone_error e;
            double *q2 = malloc(sizeof *q2 * 3 * (size_t)p.n), *q0 = malloc(sizeof *q0 * 3 * (size_t)p.n);
            ck_assert_msg(clcone_plan_create(ctx, &p, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
            expect_same(pl, ctx, &p, NULL, &o);
            expect_same(pl, ctx, &p, NULL, &o); /* a second solve starts afresh */
            memcpy(q0, p.q, sizeof *q0 * 3 * (size_t)p.n);
            for (int k = 0; k < 3 * p.n; ++k) q2[k] = p.q[k] * (1.0 + 0.25 * ((k % 7) - 3) / 3.0);
            ck_assert_msg(clcone_plan_set_q(pl, q2, &e) == CLCONE_OK, "%s", e.msg);
            memcpy(p.q, q2, sizeof *q2 * 3 * (size_t)p.n);
            expect_same(pl, ctx, &p, NULL, &o);
            memcpy(p.q, q0, sizeof *q0 * 3 * (size_t)p.n);
            clcone_plan_free(pl);
            free(q2);
            free(q0);
        }
    clcone_problem_free(&p);
    clcone_context_free(c);
}
END_TEST

START_TEST(plan_batch_matches_solve)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_problem a, b, batch;
    const clcone_problem *parts[3];
    clcone_options o = options(CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, 1e-5);
    clcone_plan *pl;
    clcone_error e;
    read_problem("Capsules-i125-1213.hdf5", &a);
    read_problem("OneObject-i1028-138.hdf5.dat", &b);
    parts[0] = &a;
    parts[1] = &b;
    parts[2] = &a;
    ck_assert_msg(clcone_batch_concat(parts, 3, &batch, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_plan_create(c, &batch, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, &batch, NULL, &o);
    clcone_plan_free(pl);
    clcone_problem_free(&batch);
    clcone_problem_free(&a);
    clcone_problem_free(&b);
    clcone_context_free(c);
}
END_TEST

/* The launch sizing of the whole-problem kernels (clc_next_budget):
 * without a time cap the launches double up to the most; with one, a
 * launch holds no more iterations than fit in the time left at the last
 * launch's pace and no longer than a twentieth of the cap (a cancel flag:
 * 50 ms). Before, the launches only doubled: 300 copies of
 * Capsules-i101 in double stopped at 52-56 s of a 30 s cap (measured here:
 * 40 copies, 5.30 s of a 3 s cap; now 3.00 s). */
START_TEST(plan_batch_launches_end_at_the_time_cap)
{
    clcone_options o;
    clcone_options_default(&o);
    o.max_seconds = 0;
    ck_assert_int_eq(clc_next_budget(&o, 128, 1 << 14, 5.0, 1e9), 256);
    ck_assert_int_eq(clc_next_budget(&o, 1 << 14, 1 << 14, 5.0, 1e9), 1 << 14);
    o.max_seconds = 30;
    /* plenty of time: doubling, up to a launch of a twentieth of the cap
     * (1.5 s: 6144 iterations at the last launch's pace) */
    ck_assert_int_eq(clc_next_budget(&o, 128, 1 << 14, 5.0, 10000.0), 256);
    ck_assert_int_eq(clc_next_budget(&o, 4096, 1 << 14, 1000.0, 10000.0), 6144);
    /* 29.5 s in, 4096 iterations took 13 s: 0.5 s left holds 157, not 8192 */
    ck_assert_int_eq(clc_next_budget(&o, 4096, 1 << 14, 13000.0, 29500.0), 157);
    /* less than one iteration's time left, or none: stop */
    ck_assert_int_eq(clc_next_budget(&o, 100, 1 << 14, 1000.0, 29995.0), 0);
    ck_assert_int_eq(clc_next_budget(&o, 100, 1 << 14, 1.0, 30000.0), 0);
    ck_assert_int_eq(clc_next_budget(&o, 100, 1 << 14, 1.0, 31000.0), 0);
    /* a launch too quick for the clock: doubling */
    ck_assert_int_eq(clc_next_budget(&o, 128, 1 << 14, 0.0, 10.0), 256);
}
END_TEST

/* A device batch that cannot converge (tol 1e-300) stops at its time cap
 * with status maxiter and the reason, every problem of it. */
START_TEST(plan_batch_stops_at_the_time_cap)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_problem a, batch;
    const clcone_problem *parts[4];
    clcone_options o = options(CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, 1e-300);
    clcone_result res;
    clcone_error e;
    double *r;
    read_problem("Capsules-i101-404.dat", &a);
    for (int k = 0; k < 4; ++k) parts[k] = &a;
    ck_assert_msg(clcone_batch_concat(parts, 4, &batch, &e) == CLCONE_OK, "%s", e.msg);
    o.max_iter = 1000000000;
    o.max_seconds = 0.3;
    r = calloc(3 * (size_t)batch.n, sizeof *r);
    ck_assert_msg(clcone_solve(c, &batch, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    for (int k = 0; k < res.nprob; ++k) {
        ck_assert_int_eq(res.items[k].status, CLCONE_MAXITER);
        ck_assert_msg(strstr(res.items[k].reason, "time cap") != NULL, "%s", res.items[k].reason);
    }
    clcone_result_free(&res);
    free(r);
    clcone_problem_free(&batch);
    clcone_problem_free(&a);
    clcone_context_free(c);
}
END_TEST

START_TEST(plan_scene_follows_velocities_and_contacts)
{
    clcone_context *c = test_context(CLCONE_DOUBLE);
    clcone_scene s, t;
    clcone_options o = options(CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-7);
    clcone_plan *pl;
    clcone_error e;
    ck_assert_msg(clc_gen_pile(60, 0.5, 0.01, 0.1, 3, &s, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_plan_create_scene(c, &s, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &s, &o);
    /* new free velocities, same contacts: only q changes on the device */
    for (int i = 0; i < s.nbodies; ++i)
        if (s.bodies[i].inv_mass > 0) s.bodies[i].v[i % 3] += 0.05 * ((i % 5) - 2);
    ck_assert_msg(clcone_plan_set_scene(pl, &s, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &s, &o);
    /* another scene altogether */
    ck_assert_msg(clc_gen_stack(5, 0.3, 0.01, &t, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_plan_set_scene(pl, &t, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &t, &o);
    clcone_plan_free(pl);
    clcone_scene_free(&s);
    clcone_scene_free(&t);
    clcone_context_free(c);
}
END_TEST

/* A reference scene plan keeps the scene's assembled local form (and
 * soft's W + R) and makes it again at each new scene: its solves give
 * what clcone_solve_scene gives, which assembles afresh. */
START_TEST(plan_scene_on_the_reference_follows_scenes)
{
    static const clcone_model models[] = {CLCONE_MODEL_CCP, CLCONE_MODEL_SOFT, CLCONE_MODEL_COULOMB};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i) {
        clcone_scene s, t;
        clcone_options o = options(models[i], CLCONE_SOLVER_CGS, 1e-7);
        clcone_plan *pl;
        clcone_error e;
        o.max_iter = 300;
        ck_assert_msg(clc_gen_pile(40, 0.5, 0.01, 0.1, 5, &s, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert_msg(clcone_plan_create_scene(NULL, &s, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
        expect_same(pl, NULL, NULL, &s, &o);
        for (int b = 0; b < s.nbodies; ++b)
            if (s.bodies[b].inv_mass > 0) s.bodies[b].v[b % 3] += 0.05 * ((b % 5) - 2);
        ck_assert_msg(clcone_plan_set_scene(pl, &s, &e) == CLCONE_OK, "%s", e.msg);
        expect_same(pl, NULL, NULL, &s, &o);
        ck_assert_msg(clc_gen_stack(4, 0.3, 0.01, &t, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert_msg(clcone_plan_set_scene(pl, &t, &e) == CLCONE_OK, "%s", e.msg);
        expect_same(pl, NULL, NULL, &t, &o);
        clcone_plan_free(pl);
        clcone_scene_free(&s);
        clcone_scene_free(&t);
    }
}
END_TEST

/* A scene plan keeps its device buffers from scene to scene: a scene
 * with more contacts grows them, one with fewer (or none) makes none, the
 * same scene again uploads nothing and new free velocities only q; every
 * solve still gives what clcone_solve_scene gives. */
START_TEST(plan_scene_buffers_follow_contacts)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_scene small, big, mid, none;
    clcone_options o = options(CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, 1e-5);
    clcone_plan *pl;
    clc_dev_counts k0, k;
    clcone_error e;
    ck_assert_msg(clc_gen_pile(40, 0.5, 0.01, 0.1, 3, &small, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clc_gen_pile(200, 0.5, 0.01, 0.1, 4, &big, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clc_gen_pile(120, 0.5, 0.01, 0.1, 5, &mid, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert(small.ncontacts < mid.ncontacts && mid.ncontacts < big.ncontacts);
    none = mid;
    none.ncontacts = 0;
    ck_assert_msg(clcone_plan_create_scene(c, &small, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &small, &o);
    k0 = clc_plan_device_counts(pl);
    ck_assert_int_gt(k0.buffers, 0);

    ck_assert_msg(clcone_plan_set_scene(pl, &big, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &big, &o);
    k = clc_plan_device_counts(pl);
    ck_assert_int_gt(k.buffers, k0.buffers);
    k0 = k;

    ck_assert_msg(clcone_plan_set_scene(pl, &big, &e) == CLCONE_OK, "%s", e.msg);
    k = clc_plan_device_counts(pl);
    ck_assert_int_eq(k.buffers, k0.buffers);
    ck_assert_int_eq(k.uploads, k0.uploads);
    for (int i = 0; i < big.nbodies; ++i)
        if (big.bodies[i].inv_mass > 0) big.bodies[i].v[i % 3] += 0.05 * ((i % 5) - 2);
    ck_assert_msg(clcone_plan_set_scene(pl, &big, &e) == CLCONE_OK, "%s", e.msg);
    k = clc_plan_device_counts(pl);
    ck_assert_int_eq(k.buffers, k0.buffers);
    ck_assert_int_eq(k.uploads, k0.uploads + 1);
    expect_same(pl, c, NULL, &big, &o);

    ck_assert_msg(clcone_plan_set_scene(pl, &none, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &none, &o);
    ck_assert_msg(clcone_plan_set_scene(pl, &mid, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &mid, &o);
    ck_assert_msg(clcone_plan_set_scene(pl, &small, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &small, &o);
    ck_assert_int_eq(clc_plan_device_counts(pl).buffers, k0.buffers);
    clcone_plan_free(pl);
    clcone_scene_free(&small);
    clcone_scene_free(&big);
    clcone_scene_free(&mid);
    clcone_context_free(c);
}
END_TEST

START_TEST(plan_refuses_misuse)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_scene s;
    clcone_problem p;
    clcone_options o = options(CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NSGS, 1e-5);
    clcone_plan *pl = NULL;
    clcone_error e;
    double q[12] = {0};
    ck_assert_msg(clc_gen_stack(1, 0.5, 0.01, &s, &e) == CLCONE_OK, "%s", e.msg);
    /* nsgs does not run on a device */
    ck_assert_int_eq(clcone_plan_create_scene(c, &s, &o, &pl, &e), CLCONE_ENOTSUP);
    ck_assert_ptr_null(pl);
    o.solver = CLCONE_SOLVER_CGS;
    ck_assert_msg(clcone_plan_create_scene(c, &s, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(clcone_plan_set_q(pl, q, &e), CLCONE_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "clcone_plan_set_scene"));
    clcone_plan_free(pl);
    ck_assert_msg(clcone_scene_to_local(&s, &p, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_plan_create(c, &p, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(clcone_plan_set_scene(pl, &s, &e), CLCONE_EINVAL);
    q[4] = NAN;
    ck_assert_int_eq(clcone_plan_set_q(pl, q, &e), CLCONE_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "q[4] (contact 1)"));
    clcone_plan_free(pl);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    clcone_context_free(c);
}
END_TEST

/* A set_q or set_scene the device refuses after the plan took the input
 * (a float device refuses what float cannot hold: here a W block of 1e40
 * and a q of 1e39) leaves no half-set plan to solve: solves are refused
 * naming the call until one succeeds, and then give what clcone_solve
 * gives. */
START_TEST(plan_refused_input_leaves_no_half_set_plan)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_scene s, light;
    clcone_problem p;
    clcone_options o = options(CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-5);
    clcone_plan *pl;
    clcone_result res;
    clcone_error e;
    double *r, *q;
    ck_assert_msg(clc_gen_pile(20, 0.5, 0.01, 0.1, 1, &s, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clc_gen_stack(1, 0.5, 0.01, &light, &e) == CLCONE_OK, "%s", e.msg);
    light.bodies[0].inv_mass = 1e40;
    r = calloc(3 * (size_t)s.ncontacts, sizeof *r);
    ck_assert_msg(clcone_plan_create_scene(c, &s, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(clcone_plan_set_scene(pl, &light, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "float range"), "%s", e.msg);
    ck_assert_int_eq(clcone_plan_solve(pl, r, &res, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "last clcone_plan_set_scene failed"), "%s", e.msg);
    ck_assert_msg(clcone_plan_set_scene(pl, &s, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, NULL, &s, &o);
    clcone_plan_free(pl);

    ck_assert_msg(clcone_scene_to_local(&s, &p, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_plan_create(c, &p, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
    q = malloc(sizeof *q * 3 * (size_t)p.n);
    memcpy(q, p.q, sizeof *q * 3 * (size_t)p.n);
    q[0] = -1e39;
    ck_assert_int_eq(clcone_plan_set_q(pl, q, &e), CLCONE_EINVAL);
    ck_assert_int_eq(clcone_plan_solve(pl, r, &res, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "last clcone_plan_set_q failed"), "%s", e.msg);
    ck_assert_msg(clcone_plan_set_q(pl, p.q, &e) == CLCONE_OK, "%s", e.msg);
    expect_same(pl, c, &p, NULL, &o);
    clcone_plan_free(pl);
    free(q);
    free(r);
    clcone_problem_free(&p);
    clcone_scene_free(&light);
    clcone_scene_free(&s);
    clcone_context_free(c);
}
END_TEST

/* The cancel flag, set by the progress callback at the first check at or
 * after iteration `at` (a stand-in for another thread or a signal
 * handler, made deterministic). */
typedef struct cancel_at {
    volatile int flag;
    int at;
} cancel_at;

static void cancel_progress(void *user, int prob, int iter, double error)
{
    cancel_at *c = user;
    (void)prob;
    (void)error;
    if (iter >= c->at) c->flag = 1;
}

/* A cancelled solve stops where the time cap would (the same check on
 * the host loops, the next launch boundary on the device's whole-problem
 * kernels) with status maxiter and reason "cancelled", on the reference,
 * the device's one-work-group path (local form) and its multi-launch
 * body-form path; a flag left at 0 changes nothing. */
START_TEST(plan_cancel_flag_stops_solves)
{
    clcone_context *c = test_context(CLCONE_DOUBLE);
    clcone_scene s;
    clcone_problem p;
    clcone_error e;
    static const struct {
        int device, scene, at, most;
        clcone_solver v;
    } cases[] = {
        {0, 0, 20, 20, CLCONE_SOLVER_NSGS},   {0, 1, 1, 1, CLCONE_SOLVER_NSGS},
        {1, 0, 20, 256, CLCONE_SOLVER_CGS},   /* one work-group per problem */
        {1, 1, 20, 20, CLCONE_SOLVER_CGS},    /* body form, host loop */
    };
    ck_assert_msg(clc_gen_pile(60, 0.5, 0.01, 0.1, 3, &s, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_scene_to_local(&s, &p, &e) == CLCONE_OK, "%s", e.msg);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        clcone_options o = options(CLCONE_MODEL_COULOMB, cases[i].v, 1e-14);
        clcone_context *ctx = cases[i].device ? c : NULL;
        cancel_at ca = {0, cases[i].at};
        double *r = calloc(3 * (size_t)p.n, sizeof *r), *r0 = calloc(3 * (size_t)p.n, sizeof *r0);
        clcone_result res, res0;
        clcone_plan *pl;
        o.max_iter = 3000;
        o.cancel = &ca.flag;
        o.progress = cancel_progress;
        o.progress_user = &ca;
        ck_assert_msg((cases[i].scene ? clcone_plan_create_scene(ctx, &s, &o, &pl, &e)
                                      : clcone_plan_create(ctx, &p, &o, &pl, &e)) == CLCONE_OK,
                      "%s", e.msg);
        ck_assert_msg(clcone_plan_solve(pl, r, &res, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert_msg(res.items[0].status == CLCONE_MAXITER, "case %zu: status %d", i, res.items[0].status);
        ck_assert_str_eq(res.items[0].reason, "cancelled");
        ck_assert_msg(res.items[0].iters >= cases[i].at && res.items[0].iters <= cases[i].most,
                      "case %zu: stopped at %d", i, res.items[0].iters);
        ck_assert_msg(isfinite(res.items[0].error), "case %zu", i);
        clcone_result_free(&res);
        clcone_plan_free(pl);
        /* the flag down: the solve runs to its cap as without one */
        ca.at = 1 << 30;
        ca.flag = 0;
        ck_assert_msg((cases[i].scene ? clcone_solve_scene(ctx, &s, &o, r, &res, &e)
                                      : clcone_solve(ctx, &p, &o, r, &res, &e)) == CLCONE_OK,
                      "%s", e.msg);
        o.cancel = NULL;
        ck_assert_msg((cases[i].scene ? clcone_solve_scene(ctx, &s, &o, r0, &res0, &e)
                                      : clcone_solve(ctx, &p, &o, r0, &res0, &e)) == CLCONE_OK,
                      "%s", e.msg);
        ck_assert_int_eq(res.items[0].iters, res0.items[0].iters);
        ck_assert_str_eq(res.items[0].reason, res0.items[0].reason);
        ck_assert_msg(memcmp(r, r0, 3 * sizeof *r * (size_t)p.n) == 0, "case %zu", i);
        clcone_result_free(&res);
        clcone_result_free(&res0);
        free(r);
        free(r0);
    }
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    clcone_context_free(c);
}
END_TEST

/* Files under dir (POCL's kernel cache holds one per compiled kernel and
 * work-group size, besides its bookkeeping). */
static int count_files(const char *dir)
{
    char cmd[512], out[64] = "", err[64];
    snprintf(cmd, sizeof cmd, "find '%s' -type f -name '*.so' | wc -l", dir);
    ck_assert_int_eq(test_sh(cmd, out, sizeof out, err, sizeof err), 0);
    return atoi(out);
}

/* A float context whose POCL kernel cache is the fresh directory dir
 * (and clcone's own cache off, so that every kernel is compiled). Call it
 * before any other OpenCL use in the process (Check forks a process per
 * test), since POCL reads the variable when it starts. */
static clcone_context *fresh_cache_context(char *dir)
{
    clcone_context *c;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    setenv("POCL_CACHE_DIR", dir, 1);
    setenv("CLCONE_CACHE_DIR", "off", 1);
    c = test_context(CLCONE_FLOAT);
    ck_assert_msg(strstr(clcone_context_device(c)->platform, "Portable Computing Language"),
                  "this check watches POCL's kernel cache; the device is on %s", clcone_context_device(c)->platform);
    return c;
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Kernel compilation is set-up, never solve time: POCL compiles a kernel
 * at its first launch for each work-group size, into the cache named by
 * POCL_CACHE_DIR. With a fresh cache, making a plan compiles what its
 * solves use, and the solves (another q, another start) compile nothing. */
START_TEST(plan_compiles_at_creation_not_in_solves)
{
    char dir[] = "/tmp/clcone-pocl-XXXXXX";
    clcone_context *c = fresh_cache_context(dir);
    clcone_problem p;
    clcone_error e;
    static const clcone_solver solvers[2] = {CLCONE_SOLVER_CGS, CLCONE_SOLVER_APGD};
    read_problem("Capsules-i125-1213.hdf5", &p);
    for (int k = 0; k < 2; ++k) {
        clcone_options o = options(CLCONE_MODEL_COULOMB, solvers[k], 1e-5);
        clcone_plan *pl;
        clcone_result res;
        double *r = calloc(3 * (size_t)p.n, sizeof *r);
        int before = count_files(dir), made;
        ck_assert_msg(clcone_plan_create(c, &p, &o, &pl, &e) == CLCONE_OK, "%s", e.msg);
        made = count_files(dir);
        ck_assert_msg(made > before, "no kernel compiled making the %s plan", clcone_solver_name(solvers[k]));
        for (int rep = 0; rep < 2; ++rep) {
            ck_assert_msg(clcone_plan_solve(pl, r, &res, &e) == CLCONE_OK, "%s", e.msg);
            clcone_result_free(&res);
            ck_assert_msg(clcone_plan_set_q(pl, p.q, &e) == CLCONE_OK, "%s", e.msg);
        }
        ck_assert_int_eq(count_files(dir), made);
        clcone_plan_free(pl);
        free(r);
    }
    clcone_problem_free(&p);
    clcone_context_free(c);
    remove_dir(dir);
}
END_TEST

/* The stepper's plan is made at its first step, which compiles every
 * kernel; the steps after it, whose contacts differ in number and
 * bodies, compile nothing. */
START_TEST(plan_stepper_compiles_at_first_step_only)
{
    char dir[] = "/tmp/clcone-pocl-XXXXXX";
    clcone_context *c = fresh_cache_context(dir);
    clcone_gen_params gp;
    clcone_world w;
    clcone_sim_options so;
    clcone_sim *sim;
    clcone_step_info in;
    clcone_error e;
    int made, first;
    clcone_gen_params_default(&gp);
    gp.n = 150;
    ck_assert_msg(clcone_world_generate("pile", &gp, &w, &e) == CLCONE_OK, "%s", e.msg);
    clcone_sim_options_default(&so);
    so.solve.model = CLCONE_MODEL_CCP;
    so.solve.max_iter = 50;
    ck_assert_msg(clcone_sim_create(&w, c, &so, &sim, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_sim_step(sim, &in, &e) == CLCONE_OK, "%s", e.msg);
    made = count_files(dir);
    first = in.contacts;
    ck_assert_int_gt(made, 0);
    for (int k = 0; k < 10; ++k) ck_assert_msg(clcone_sim_step(sim, &in, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(in.contacts != first, "the pile kept its %d contacts: pick a livelier one", first);
    ck_assert_int_eq(count_files(dir), made);
    clcone_sim_free(sim);
    clcone_world_free(&w);
    clcone_context_free(c);
    remove_dir(dir);
}
END_TEST

Suite *suite_plan(void)
{
    Suite *s = suite_create("plan");
    TCase *t = tcase_create("plan");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, plan_compiles_at_creation_not_in_solves);
    tcase_add_test(t, plan_stepper_compiles_at_first_step_only);
    tcase_add_test(t, plan_local_matches_solve_after_new_q);
    tcase_add_test(t, plan_batch_matches_solve);
    tcase_add_test(t, plan_batch_launches_end_at_the_time_cap);
    tcase_add_test(t, plan_batch_stops_at_the_time_cap);
    tcase_add_test(t, plan_scene_follows_velocities_and_contacts);
    tcase_add_test(t, plan_scene_on_the_reference_follows_scenes);
    tcase_add_test(t, plan_scene_buffers_follow_contacts);
    tcase_add_test(t, plan_refuses_misuse);
    tcase_add_test(t, plan_refused_input_leaves_no_half_set_plan);
    tcase_add_test(t, plan_cancel_flag_stops_solves);
    suite_add_tcase(s, t);
    return s;
}
