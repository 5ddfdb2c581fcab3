/* A scene in parts (clcone_dev_part, clcone_plan_create_part; what
 * host/mpi runs over ranks, tests/mpi/ against one process): one part
 * holding the whole scene, with plain sums for the parts' sums, gives the
 * whole scene's plan's reactions and iterations bit for bit, calling the
 * exchange after every gather and the sums at every decision; a time cap
 * is read on the clock the parts agree on; what does not run in parts is
 * refused. */
#include "testutil.h"
#include "core/body_form.h"
#include "solve/solve_entries.h"

#include <stdlib.h>
#include <string.h>

typedef struct calls {
    int exchanges, sums, maxes;
} calls;

static clcone_status no_halo(void *ctx, const void *send, void *recv, size_t real_size, clcone_error *err)
{
    (void)send, (void)recv, (void)real_size, (void)err;
    ((calls *)ctx)->exchanges++;
    return CLCONE_OK;
}

static clcone_status plain_sum(void *ctx, const double *terms, int n, int K, double *sums, clcone_error *err)
{
    (void)err;
    ((calls *)ctx)->sums++;
    for (int k = 0; k < K; ++k) {
        sums[k] = 0;
        for (int c = 0; c < n; ++c) sums[k] += terms[K * c + k];
    }
    return CLCONE_OK;
}

static clcone_status one_max(void *ctx, double *x, clcone_error *err)
{
    (void)x, (void)err;
    ((calls *)ctx)->maxes++;
    return CLCONE_OK;
}

static clcone_scene pile(int n)
{
    clcone_gen_params gp;
    clcone_world w;
    clcone_scene s;
    clcone_error e;
    clcone_gen_params_default(&gp);
    gp.n = n;
    ck_assert_msg(clcone_world_generate("pile", &gp, &w, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_world_contact_scene(&w, &s, &e) == CLCONE_OK, "%s", e.msg);
    clcone_world_free(&w);
    return s;
}

/* The whole scene as one part: every body its own, each body's contacts
 * counted from the scene. */
static clcone_dev_part whole_part(const clcone_scene *s, int *counts, calls *k)
{
    clcone_dev_part p = {s->nbodies, s->nbodies, 0, counts, k, no_halo, plain_sum, one_max};
    memset(counts, 0, sizeof *counts * (size_t)s->nbodies);
    for (int c = 0; c < s->ncontacts; ++c) {
        const clcone_contact *x = &s->contacts[c];
        if (!clc_body_is_static(&s->bodies[x->a])) counts[x->a]++;
        if (x->b >= 0 && !clc_body_is_static(&s->bodies[x->b])) counts[x->b]++;
    }
    return p;
}

static void expect_part_is_whole(clcone_solver solver)
{
    clcone_context *c = test_context(CLCONE_DOUBLE);
    clcone_scene s = pile(300);
    int *counts = calloc((size_t)s.nbodies, sizeof *counts);
    double *ra = calloc(3 * (size_t)s.ncontacts, sizeof *ra), *rb = calloc(3 * (size_t)s.ncontacts, sizeof *rb);
    calls k = {0, 0, 0};
    clcone_dev_part part = whole_part(&s, counts, &k);
    clcone_options o;
    clcone_plan *pl = NULL;
    clcone_result a, b;
    clcone_error e;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    o.solver = solver;
    o.max_iter = 120;
    o.max_seconds = 0;
    ck_assert_msg(clcone_solve_scene(c, &s, &o, ra, &a, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_plan_create_part(c, &s, &o, &part, &pl, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_plan_warm_up(pl, &e) == CLCONE_OK, "%s", e.msg);
    k = (calls){0, 0, 0};
    ck_assert_msg(clcone_plan_solve(pl, rb, &b, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(a.items[0].iters, b.items[0].iters);
    ck_assert_int_eq(a.items[0].status, b.items[0].status);
    ck_assert_msg(memcmp(ra, rb, 3 * (size_t)s.ncontacts * sizeof *ra) == 0, "reactions differ");
    /* a gather an iteration at least, a sum at every check */
    ck_assert_int_ge(k.exchanges, b.items[0].iters);
    ck_assert_int_ge(k.sums, b.items[0].iters / o.check_every);
    clcone_result_free(&a);
    clcone_result_free(&b);
    clcone_plan_free(pl);
    clcone_scene_free(&s);
    clcone_context_free(c);
    free(counts);
    free(ra);
    free(rb);
}

START_TEST(part_jacobi_is_the_whole_scene)
{
    expect_part_is_whole(CLCONE_SOLVER_JACOBI);
}
END_TEST

START_TEST(part_apgd_is_the_whole_scene)
{
    expect_part_is_whole(CLCONE_SOLVER_APGD);
}
END_TEST

START_TEST(part_refuses_what_does_not_run_in_parts)
{
    clcone_context *c = test_context(CLCONE_DOUBLE);
    clcone_scene s = pile(20);
    int *counts = calloc((size_t)s.nbodies, sizeof *counts);
    calls k = {0, 0, 0};
    clcone_dev_part part = whole_part(&s, counts, &k);
    clcone_options o;
    clcone_plan *pl = NULL;
    clcone_error e;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    o.max_seconds = 0;
    o.solver = CLCONE_SOLVER_CGS;
    ck_assert_int_eq(clcone_plan_create_part(c, &s, &o, &part, &pl, &e), CLCONE_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(e.msg, "jacobi or apgd"));
    o.solver = CLCONE_SOLVER_JACOBI;
    ck_assert_int_eq(clcone_plan_create_part(NULL, &s, &o, &part, &pl, &e), CLCONE_ENOTSUP);
    ck_assert_ptr_null(pl);
    clcone_scene_free(&s);
    clcone_context_free(c);
    free(counts);
}
END_TEST

/* A time cap in parts is read at the checks on the clock the parts agree
 * on (their largest, through the part's max), so that every part stops
 * at one iteration; it was refused before. */
START_TEST(part_time_cap_is_agreed)
{
    clcone_context *c = test_context(CLCONE_DOUBLE);
    clcone_scene s = pile(300);
    int *counts = calloc((size_t)s.nbodies, sizeof *counts);
    double *r = calloc(3 * (size_t)s.ncontacts, sizeof *r);
    calls k = {0, 0, 0};
    clcone_dev_part part = whole_part(&s, counts, &k);
    clcone_options o;
    clcone_plan *pl = NULL;
    clcone_result res;
    clcone_error e;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    o.solver = CLCONE_SOLVER_JACOBI;
    o.tol = 1e-300;
    o.max_iter = 1000000000;
    o.max_seconds = 0.2;
    ck_assert_msg(clcone_plan_create_part(c, &s, &o, &part, &pl, &e) == CLCONE_OK, "%s", e.msg);
    k = (calls){0, 0, 0};
    ck_assert_msg(clcone_plan_solve(pl, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_MAXITER);
    ck_assert_msg(strstr(res.items[0].reason, "time cap 0.2 s"), "%s", res.items[0].reason);
    /* the clock was agreed at the checks */
    ck_assert_int_gt(k.maxes, 0);
    clcone_result_free(&res);
    clcone_plan_free(pl);
    clcone_scene_free(&s);
    clcone_context_free(c);
    free(counts);
    free(r);
}
END_TEST

Suite *suite_part(void)
{
    Suite *s = suite_create("part");
    TCase *t = tcase_create("part");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, part_jacobi_is_the_whole_scene);
    tcase_add_test(t, part_apgd_is_the_whole_scene);
    tcase_add_test(t, part_refuses_what_does_not_run_in_parts);
    tcase_add_test(t, part_time_cap_is_agreed);
    suite_add_tcase(s, t);
    return s;
}
