/* The soft (MuJoCo-style regularised) model on the reference and the
 * device, and the pyramid model on the device. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static clcone_prob_result run(clcone_context *c, const clcone_problem *p, const clcone_options *o, double *r)
{
    clcone_result res;
    clcone_error e;
    clcone_prob_result out;
    ck_assert_msg(clcone_solve(c, p, o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    out = res.items[0];
    clcone_result_free(&res);
    return out;
}

/* NESpheres_10_1 has a full-rank W, so the cone QP has one solution; the
 * soft solution with R = eps diag(W) approaches it as eps -> 0. */
START_TEST(soft_tends_to_ccp)
{
    clcone_problem p;
    clcone_error e;
    clcone_options o;
    double *rc, *rs, *R, prev = INFINITY;
    ck_assert(clcone_read_problem_hdf5(test_problem_path("NESpheres_10_1.dat"), &p, &e) == CLCONE_OK);
    rc = calloc(3 * (size_t)p.n, sizeof *rc);
    rs = calloc(3 * (size_t)p.n, sizeof *rs);
    R = calloc(3 * (size_t)p.n, sizeof *R);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    o.solver = CLCONE_SOLVER_APGD;
    o.tol = 1e-12;
    ck_assert_int_eq(run(NULL, &p, &o, rc).status, CLCONE_CONVERGED);
    o.model = CLCONE_MODEL_SOFT;
    o.soft_R = R;
    for (double eps = 1e-1; eps >= 1e-7; eps *= 1e-2) {
        clcone_prob_result out;
        double d;
        for (int c = 0; c < p.n; ++c)
            for (int k = p.row_ptr[c]; k < p.row_ptr[c + 1]; ++k)
                if (p.col[k] == c)
                    for (int a = 0; a < 3; ++a) R[3 * c + a] = eps * p.blocks[9 * k + 4 * a];
        out = run(NULL, &p, &o, rs);
        ck_assert_int_eq(out.status, CLCONE_CONVERGED);
        d = test_rel_diff(rs, rc, 3 * p.n);
        ck_assert_msg(d < prev, "eps %g: distance %g did not shrink (%g)", eps, d, prev);
        prev = d;
    }
    ck_assert_msg(prev < 1e-5, "at eps 1e-7 still %g from the ccp solution", prev);
    free(rc);
    free(rs);
    free(R);
    clcone_problem_free(&p);
}
END_TEST

/* Reference and device solve the same soft problem; the reported cost is
 * the QP's objective at the reactions. */
START_TEST(soft_device_matches_reference)
{
    static const clcone_solver solvers[] = {CLCONE_SOLVER_APGD, CLCONE_SOLVER_JACOBI, CLCONE_SOLVER_CGS};
    clcone_problem p;
    clcone_error e;
    clcone_options o;
    clcone_context *c = test_context(CLCONE_DOUBLE);
    double *rr, *rd;
    clcone_prob_result ref;
    ck_assert(clcone_read_problem_hdf5(test_problem_path("Capsules-i125-1213.hdf5"), &p, &e) == CLCONE_OK);
    rr = calloc(3 * (size_t)p.n, sizeof *rr);
    rd = calloc(3 * (size_t)p.n, sizeof *rd);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.solver = CLCONE_SOLVER_APGD;
    o.tol = 1e-10;
    ref = run(NULL, &p, &o, rr);
    ck_assert_int_eq(ref.status, CLCONE_CONVERGED);
    ck_assert(ref.cost < 0); /* the contacts do work against q */
    for (size_t k = 0; k < sizeof solvers / sizeof solvers[0]; ++k) {
        clcone_prob_result dv;
        o.solver = solvers[k];
        dv = run(c, &p, &o, rd);
        ck_assert_msg(dv.status == CLCONE_CONVERGED, "%s: %g after %d", clcone_solver_name(solvers[k]), dv.error,
                      dv.iters);
        /* R > 0 makes the QP strictly convex: one solution */
        ck_assert_msg(test_rel_diff(rd, rr, 3 * p.n) < 1e-7, "%s: differs by %g", clcone_solver_name(solvers[k]),
                      test_rel_diff(rd, rr, 3 * p.n));
        ck_assert_double_eq_tol(dv.cost, ref.cost, 1e-8 * fabs(ref.cost));
    }
    free(rr);
    free(rd);
    clcone_problem_free(&p);
    clcone_context_free(c);
}
END_TEST

/* Body form: matrix-free W + R on the device against the assembled
 * reference; a penetrating contact is pushed out by a_ref. */
START_TEST(soft_scene_device_matches_reference)
{
    clcone_scene s;
    clcone_error e;
    clcone_options o;
    clcone_result res;
    clcone_context *c = test_context(CLCONE_DOUBLE);
    double *rr, *rd;
    ck_assert(clc_gen_pile(60, 0.5, 0.01, 0.0, 3, &s, &e) == CLCONE_OK);
    s.contacts[0].gap = -0.01;
    rr = calloc(3 * (size_t)s.ncontacts, sizeof *rr);
    rd = calloc(3 * (size_t)s.ncontacts, sizeof *rd);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.solver = CLCONE_SOLVER_APGD;
    o.tol = 1e-10;
    ck_assert(clcone_solve_scene(NULL, &s, &o, rr, &res, &e) == CLCONE_OK);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    {
        double cost = res.items[0].cost;
        clcone_result_free(&res);
        ck_assert_msg(clcone_solve_scene(c, &s, &o, rd, &res, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
        ck_assert_double_eq_tol(res.items[0].cost, cost, 1e-7 * fabs(cost));
        clcone_result_free(&res);
    }
    ck_assert_msg(test_rel_diff(rd, rr, 3 * s.ncontacts) < 1e-6, "scene soft differs by %g",
                  test_rel_diff(rd, rr, 3 * s.ncontacts));
    /* the penetrating contact pushes harder than with no gap */
    {
        double rn_pen = rr[0];
        s.contacts[0].gap = 0;
        ck_assert(clcone_solve_scene(NULL, &s, &o, rr, &res, &e) == CLCONE_OK);
        clcone_result_free(&res);
        ck_assert(rn_pen > rr[0]);
    }
    free(rr);
    free(rd);
    clcone_scene_free(&s);
    clcone_context_free(c);
}
END_TEST

START_TEST(soft_bad_parameters)
{
    clcone_problem p;
    clcone_error e;
    clcone_options o;
    clcone_result res;
    double *r, *R;
    ck_assert(clcone_read_problem_hdf5(test_problem_path("Rover4396.dat"), &p, &e) == CLCONE_OK);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    R = calloc(3 * (size_t)p.n, sizeof *R);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.solver = CLCONE_SOLVER_APGD;
    R[4] = -1e-3;
    o.soft_R = R;
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "negative compliance") != NULL && strstr(e.msg, "contact 1") != NULL, "%s", e.msg);
    o.soft_R = NULL;
    o.soft_impedance = 1.0;
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert(strstr(e.msg, "impedance") != NULL);
    o.soft_impedance = 0.9;
    o.soft_timeconst = -0.02;
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert(strstr(e.msg, "time constant") != NULL);
    o.soft_timeconst = 0.02;
    o.solver = CLCONE_SOLVER_NSGS;
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_ENOTSUP);
    free(r);
    free(R);
    clcone_problem_free(&p);
}
END_TEST

/* Device pyramid (CGS, Jacobi) against Lemke on small real problems. */
START_TEST(pyramid_device_matches_lemke)
{
    static const char *files[] = {"Rover4396.dat", "Rover1039.dat", "NESpheres_10_1.dat"};
    clcone_context *c = test_context(CLCONE_DOUBLE);
    for (size_t f = 0; f < sizeof files / sizeof files[0]; ++f)
        for (int inner = 0; inner < 2; ++inner) {
            clcone_problem p;
            clcone_error e;
            clcone_options o;
            double *rl, *rd;
            ck_assert(clcone_read_problem_hdf5(test_problem_path(files[f]), &p, &e) == CLCONE_OK);
            rl = calloc(3 * (size_t)p.n, sizeof *rl);
            rd = calloc(3 * (size_t)p.n, sizeof *rd);
            clcone_options_default(&o);
            o.model = CLCONE_MODEL_PYRAMID;
            o.facets = 8;
            o.fit = inner ? CLCONE_FIT_INNER : CLCONE_FIT_OUTER;
            o.solver = CLCONE_SOLVER_LEMKE;
            ck_assert_int_eq(run(NULL, &p, &o, rl).status, CLCONE_CONVERGED);
            o.solver = CLCONE_SOLVER_CGS;
            o.tol = 1e-8;
            ck_assert_int_eq(run(c, &p, &o, rd).status, CLCONE_CONVERGED);
            /* the pyramid law by the reference's measure */
            ck_assert_double_le(clcone_error_of(&p, &o, rd, 0, p.n), 1e-8);
            if (strcmp(files[f], "NESpheres_10_1.dat") == 0) /* full rank: unique */
                ck_assert_msg(test_rel_diff(rd, rl, 3 * p.n) < 1e-6, "%s: %g", files[f], test_rel_diff(rd, rl, 3 * p.n));
            o.solver = CLCONE_SOLVER_JACOBI;
            memset(rd, 0, sizeof(double) * 3 * (size_t)p.n);
            ck_assert_int_eq(run(c, &p, &o, rd).status, CLCONE_CONVERGED);
            free(rl);
            free(rd);
            clcone_problem_free(&p);
        }
    clcone_context_free(c);
}
END_TEST

/* A unit box on a plane with gravity tilted by theta in the direction phi
 * (the same as an incline): 4 corner contacts, sliding since tan theta >
 * mu. The friction impulse of the 64-facet pyramid is within 1% of the
 * exact cone's. */
static void incline_box(clcone_scene *s, double theta, double phi, double mu)
{
    const double dt = 0.01, g = 9.81;
    memset(s, 0, sizeof *s);
    s->nbodies = 1;
    s->ncontacts = 4;
    s->bodies = calloc(1, sizeof *s->bodies);
    s->contacts = calloc(4, sizeof *s->contacts);
    s->bodies[0].x[2] = 0.5;
    s->bodies[0].inv_mass = 1;
    for (int k = 0; k < 3; ++k) s->bodies[0].inv_inertia[4 * k] = 6.0; /* unit cube, mass 1 */
    s->bodies[0].v[0] = dt * g * sin(theta) * cos(phi);
    s->bodies[0].v[1] = dt * g * sin(theta) * sin(phi);
    s->bodies[0].v[2] = -dt * g * cos(theta);
    for (int k = 0; k < 4; ++k) {
        clcone_contact *c = &s->contacts[k];
        c->a = 0;
        c->b = -1;
        c->point[0] = k & 1 ? 0.5 : -0.5;
        c->point[1] = k & 2 ? 0.5 : -0.5;
        c->normal[2] = 1;
        c->mu = mu;
    }
}

static void friction_impulse(const clcone_scene *s, const double *r, double f[3])
{
    double dv[6];
    clcone_scene_apply_impulses(s, r, dv); /* inverse mass 1: dv_lin = impulse */
    memcpy(f, dv, 3 * sizeof(double));
}

START_TEST(pyramid64_within_1pc_of_cone_on_incline)
{
    clcone_scene s;
    clcone_error e;
    clcone_options o;
    clcone_result res;
    double r[12], fc[3], fp[3];
    for (int fit = 0; fit < 2; ++fit)
        for (double phi = 0.0; phi < 1.0; phi += 0.37) {
            incline_box(&s, 0.6, phi, 0.4); /* tan 0.6 = 0.68 > 0.4: slides */
            clcone_options_default(&o);
            ck_assert_msg(clcone_solve_scene(NULL, &s, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
            clcone_result_free(&res);
            friction_impulse(&s, r, fc);
            o.model = CLCONE_MODEL_PYRAMID;
            o.facets = 64;
            o.fit = fit ? CLCONE_FIT_INNER : CLCONE_FIT_OUTER;
            o.solver = CLCONE_SOLVER_LEMKE;
            ck_assert_msg(clcone_solve_scene(NULL, &s, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
            ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
            clcone_result_free(&res);
            friction_impulse(&s, r, fp);
            {
                double tc = hypot(fc[0], fc[1]), tp = hypot(fp[0], fp[1]);
                /* the exact cone slides: friction = mu * normal */
                ck_assert_double_eq_tol(tc, 0.4 * fc[2], 1e-9);
                ck_assert_msg(fabs(tp - tc) <= 0.01 * tc, "phi %g fit %d: pyramid %g vs cone %g", phi, fit, tp, tc);
                ck_assert(fabs(fp[2] - fc[2]) <= 0.01 * fc[2]);
            }
            clcone_scene_free(&s);
        }
}
END_TEST

START_TEST(pyramid_bad_facets_on_device)
{
    clcone_problem p;
    clcone_error e;
    clcone_options o;
    clcone_result res;
    clcone_context *c = test_context(CLCONE_DOUBLE);
    double *r;
    ck_assert(clcone_read_problem_hdf5(test_problem_path("Rover4396.dat"), &p, &e) == CLCONE_OK);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_PYRAMID;
    o.solver = CLCONE_SOLVER_CGS;
    o.facets = 2;
    ck_assert_int_eq(clcone_solve(c, &p, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert(strstr(e.msg, "at least 3 facets") != NULL);
    free(r);
    clcone_problem_free(&p);
    clcone_context_free(c);
}
END_TEST

Suite *suite_soft(void)
{
    Suite *s = suite_create("soft");
    TCase *t = tcase_create("soft");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, soft_tends_to_ccp);
    tcase_add_test(t, soft_device_matches_reference);
    tcase_add_test(t, soft_scene_device_matches_reference);
    tcase_add_test(t, soft_bad_parameters);
    tcase_add_test(t, pyramid_device_matches_lemke);
    tcase_add_test(t, pyramid64_within_1pc_of_cone_on_incline);
    tcase_add_test(t, pyramid_bad_facets_on_device);
    suite_add_tcase(s, t);
    return s;
}
