/* Lemke's method on the N-facet pyramid (host/ref/lemke.c): hand-worked single
 * contacts, random coupled problems checked against the pyramid law and
 * the LCP itself, the pivoting core on plain LCPs, and the failure
 * reports (pivot cap, secondary ray, size guard). */
#include "testutil.h"
#include "cone.h"
#include "ref/lemke.h"
#include "ref/reference.h"
#include "core/analysis.h"

#include <math.h>
#include <string.h>

static unsigned long long lk_rng = 2024;
static double lk_urand(void) /* uniform in [0, 1) */
{
    lk_rng = lk_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lk_rng >> 11) / 9007199254740992.0;
}

static clcone_options pyr_options(int N, clcone_fit fit)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_PYRAMID;
    o.solver = CLCONE_SOLVER_LEMKE;
    o.facets = N;
    o.fit = fit;
    clcone_options_resolve(&o, NULL); /* clc_ref_lemke_pyramid is called without clcone_solve */
    return o;
}

/* One contact with diagonal W = diag(wn, wt, wt). */
static void one_contact(clcone_problem *p, double wn, double wt, double qn,
                        double qt1, double qt2, double mu)
{
    double W[9] = {wn, 0, 0, 0, wt, 0, 0, 0, wt}, q[3] = {qn, qt1, qt2};
    clcone_error err;
    ck_assert_int_eq(clcone_problem_from_dense(p, 1, W, q, &mu, &err), CLCONE_OK);
}

/* Solves contacts [0, n) with Lemke; asserts the call itself succeeded. */
static clcone_prob_result solve(const clcone_problem *p, const clcone_options *o,
                                double *r)
{
    clcone_prob_result res;
    clcone_error err;
    clcone_status s;
    memset(&err, 0, sizeof err);
    s = clc_ref_lemke_pyramid(p, o, 0, p->n, r, &res, &err);
    ck_assert_msg(s == CLCONE_OK, "clc_ref_lemke_pyramid: %s", err.msg);
    return res;
}

static void assert_converged(const clcone_prob_result *res, double tol)
{
    ck_assert_msg(res->status == CLCONE_CONVERGED, "status %d: %s", (int)res->status,
                  res->reason);
    ck_assert_msg(res->error <= tol, "pyramid error %.3g > %.3g after %d pivots",
                  res->error, tol, res->iters);
}

/* W = A A^T + 0.1 I, dense and fully coupled; q_n mostly negative so most
 * contacts touch and several slide. */
static void random_problem(clcone_problem *p, int n, int zero_mu)
{
    int m = 3 * n, i, j, k;
    double *A = malloc(sizeof(double) * (size_t)m * (size_t)m);
    double *W = calloc((size_t)m * (size_t)m, sizeof(double));
    double *q = malloc(sizeof(double) * (size_t)m), *mu = malloc(sizeof(double) * (size_t)n);
    clcone_error err;
    ck_assert(A && W && q && mu);
    for (i = 0; i < m * m; ++i) A[i] = (2 * lk_urand() - 1) / sqrt((double)m);
    for (i = 0; i < m; ++i)
        for (j = 0; j < m; ++j) {
            double s = i == j ? 0.1 : 0;
            for (k = 0; k < m; ++k) s += A[i * m + k] * A[j * m + k];
            W[i * m + j] = s;
        }
    for (i = 0; i < n; ++i) {
        q[3 * i] = -1 + 1.3 * lk_urand();
        q[3 * i + 1] = 2 * lk_urand() - 1;
        q[3 * i + 2] = 2 * lk_urand() - 1;
        mu[i] = zero_mu && i % 4 == 0 ? 0 : 0.1 + 0.9 * lk_urand();
    }
    ck_assert_int_eq(clcone_problem_from_dense(p, n, W, q, mu, &err), CLCONE_OK);
    free(A);
    free(W);
    free(q);
    free(mu);
}

/* The pyramid law checked directly, independently of the natural map:
 * r in P, u + support(u_t) e_n in the dual of P, and the two orthogonal. */
static void assert_pyramid_law(const clcone_problem *p, const clcone_options *o,
                               const double *r, double rel)
{
    double rs = 0, us = 0;
    int c, k;
    for (c = 0; c < p->n; ++c) {
        double u[3];
        clc_contact_velocity(p, r, c, u);
        rs = fmax(rs, fabs(r[3 * c]) + hypot(r[3 * c + 1], r[3 * c + 2]));
        us = fmax(us, fabs(u[0]) + hypot(u[1], u[2]));
        /* u can vanish at a solution; q still sets the velocity scale */
        us = fmax(us, fabs(p->q[3 * c]) + hypot(p->q[3 * c + 1], p->q[3 * c + 2]));
    }
    rs = fmax(rs, 1e-300);
    us = fmax(us, 1e-300);
    for (c = 0; c < p->n; ++c) {
        cone_pyramid P = cone_pyramid_make(o->facets, o->fit == CLCONE_FIT_INNER, p->mu[c]);
        const double *rc = r + 3 * c;
        double u[3], uh[3], dot;
        clc_contact_velocity(p, r, c, u);
        uh[0] = u[0] + cone_pyramid_support(P, u[1], u[2]);
        uh[1] = u[1];
        uh[2] = u[2];
        ck_assert_msg(rc[0] >= -rel * rs, "contact %d: r_n = %g < 0", c, rc[0]);
        for (k = 0; k < P.N; ++k) {
            double a = P.phi0 + 2 * CONE_PI * k / P.N;
            double g = a + CONE_PI / P.N;
            double slack = cone_facet_slack(cos(a), sin(a), P.m, rc);
            double dual = uh[0] + P.rho * (cos(g) * uh[1] + sin(g) * uh[2]);
            ck_assert_msg(slack >= -rel * rs, "contact %d facet %d: slack %g", c, k, slack);
            ck_assert_msg(dual >= -rel * us, "contact %d edge %d: dual %g", c, k, dual);
        }
        dot = rc[0] * uh[0] + rc[1] * uh[1] + rc[2] * uh[2];
        ck_assert_msg(fabs(dot) <= rel * rs * us, "contact %d: r . u_hat = %g", c, dot);
    }
}

/* ------------------------------------------------------------------ */
/* Single contacts, worked by hand. With W = I the friction force is    */
/* the projection of -q_t on the pyramid's section at r_n = 1.          */
/* ------------------------------------------------------------------ */

START_TEST(stick_identity)
{
    static const int Ns[] = {4, 8, 16};
    int a, fit;
    for (a = 0; a < 3; ++a)
        for (fit = 0; fit < 2; ++fit) {
            clcone_problem p;
            clcone_options o = pyr_options(Ns[a], (clcone_fit)fit);
            double r[3] = {0, 0, 0}, u[3];
            clcone_prob_result res;
            one_contact(&p, 1, 1, -1, 0.2, 0, 0.5);
            res = solve(&p, &o, r);
            assert_converged(&res, 1e-14);
            ck_assert_double_eq_tol(r[0], 1, 1e-14);
            ck_assert_double_eq_tol(r[1], -0.2, 1e-14);
            ck_assert_double_eq_tol(r[2], 0, 1e-14);
            clc_contact_velocity(&p, r, 0, u);
            ck_assert_double_eq_tol(u[0], 0, 1e-14);
            ck_assert_double_eq_tol(u[1], 0, 1e-14);
            ck_assert_double_eq_tol(u[2], 0, 1e-14);
            clcone_problem_free(&p);
        }
}
END_TEST

/* q = (-1, 2, 0), mu = 0.5: -q_t points at 180 degrees, a facet normal of
 * the outer fits (N = 4, 8) and a vertex of the inner fits, and in both
 * cases the bound there is 0.5: r = (1, -0.5, 0), u = (0, 1.5, 0). */
START_TEST(slide_along_axis)
{
    static const int Ns[] = {4, 8};
    int a, fit;
    for (a = 0; a < 2; ++a)
        for (fit = 0; fit < 2; ++fit) {
            clcone_problem p;
            clcone_options o = pyr_options(Ns[a], (clcone_fit)fit);
            cone_pyramid P = cone_pyramid_make(Ns[a], fit == CLCONE_FIT_INNER, 0.5);
            double r[3] = {0, 0, 0}, u[3];
            clcone_prob_result res;
            one_contact(&p, 1, 1, -1, 2, 0, 0.5);
            res = solve(&p, &o, r);
            assert_converged(&res, 1e-14);
            ck_assert_double_eq_tol(r[0], 1, 1e-14);
            ck_assert_double_eq_tol(r[1], -0.5, 1e-14);
            ck_assert_double_eq_tol(r[2], 0, 1e-14);
            clc_contact_velocity(&p, r, 0, u);
            ck_assert_double_eq_tol(u[0], 0, 1e-14);
            ck_assert_double_eq_tol(u[1], 1.5, 1e-14);
            ck_assert_double_eq_tol(u[2], 0, 1e-14);
            /* on the boundary, and dissipating as much as the pyramid allows */
            ck_assert_double_eq_tol(cone_pyramid_score(P, r[1], r[2]), P.m * r[0], 1e-14);
            ck_assert_double_eq_tol(r[1] * u[1] + r[2] * u[2],
                                    -r[0] * cone_pyramid_support(P, u[1], u[2]), 1e-14);
            clcone_problem_free(&p);
        }
}
END_TEST

/* Outer fit, N = 4: the section is the square |x|, |y| <= 0.5. */
START_TEST(slide_outer_square)
{
    clcone_options o = pyr_options(4, CLCONE_FIT_OUTER);
    static const struct { double q[3], r[3], u[3]; } cases[] = {
        /* along the edge ray at 225 degrees: the square's corner */
        {{-1, 2, 2}, {1, -0.5, -0.5}, {0, 1.5, 1.5}},
        /* inside the corner's normal cone but not along the edge */
        {{-1, 2, 1}, {1, -0.5, -0.5}, {0, 1.5, 0.5}},
        /* on the facet x = -0.5 off its centre: u_t along the facet normal */
        {{-1, 2, 0.3}, {1, -0.5, -0.3}, {0, 1.5, 0}},
    };
    int k, i;
    for (k = 0; k < 3; ++k) {
        clcone_problem p;
        double r[3] = {0, 0, 0}, u[3];
        clcone_prob_result res;
        one_contact(&p, 1, 1, cases[k].q[0], cases[k].q[1], cases[k].q[2], 0.5);
        res = solve(&p, &o, r);
        assert_converged(&res, 1e-14);
        clc_contact_velocity(&p, r, 0, u);
        for (i = 0; i < 3; ++i) {
            ck_assert_double_eq_tol(r[i], cases[k].r[i], 1e-14);
            ck_assert_double_eq_tol(u[i], cases[k].u[i], 1e-14);
        }
        clcone_problem_free(&p);
    }
}
END_TEST

/* Inner fit, N = 4: facet normals at 45 + 90 k degrees with bound
 * m = 0.5 cos(45) = sqrt(2)/4. -q_t = -(sqrt 2, sqrt 2) points along the
 * facet normal at 225 degrees, so r_t = m (-cos 45, -sin 45) = -(1/4, 1/4). */
START_TEST(slide_inner_facet)
{
    clcone_options o = pyr_options(4, CLCONE_FIT_INNER);
    clcone_problem p;
    double r[3] = {0, 0, 0}, u[3], s2 = sqrt(2.0);
    clcone_prob_result res;
    one_contact(&p, 1, 1, -1, s2, s2, 0.5);
    res = solve(&p, &o, r);
    assert_converged(&res, 1e-14);
    clc_contact_velocity(&p, r, 0, u);
    ck_assert_double_eq_tol(r[0], 1, 1e-14);
    ck_assert_double_eq_tol(r[1], -0.25, 1e-14);
    ck_assert_double_eq_tol(r[2], -0.25, 1e-14);
    ck_assert_double_eq_tol(u[0], 0, 1e-14);
    ck_assert_double_eq_tol(u[1], s2 - 0.25, 1e-14);
    ck_assert_double_eq_tol(u[2], s2 - 0.25, 1e-14);
    clcone_problem_free(&p);
}
END_TEST

/* W_nn = 2 halves the normal force and with it the friction bound:
 * r = (0.5, -0.25, 0), u_t = 2 - 0.25. */
START_TEST(slide_scaled_normal)
{
    clcone_options o = pyr_options(4, CLCONE_FIT_OUTER);
    clcone_problem p;
    double r[3] = {0, 0, 0}, u[3];
    clcone_prob_result res;
    one_contact(&p, 2, 1, -1, 2, 0, 0.5);
    res = solve(&p, &o, r);
    assert_converged(&res, 1e-14);
    clc_contact_velocity(&p, r, 0, u);
    ck_assert_double_eq_tol(r[0], 0.5, 1e-14);
    ck_assert_double_eq_tol(r[1], -0.25, 1e-14);
    ck_assert_double_eq_tol(r[2], 0, 1e-14);
    ck_assert_double_eq_tol(u[0], 0, 1e-14);
    ck_assert_double_eq_tol(u[1], 1.75, 1e-14);
    clcone_problem_free(&p);
}
END_TEST

START_TEST(take_off)
{
    clcone_options o = pyr_options(8, CLCONE_FIT_OUTER);
    clcone_problem p;
    double r[3] = {5, 5, 5};
    clcone_prob_result res;
    one_contact(&p, 1, 1, 0.5, 0.3, -0.2, 0.5);
    res = solve(&p, &o, r);
    assert_converged(&res, 1e-14);
    ck_assert_double_eq(r[0], 0);
    ck_assert_double_eq(r[1], 0);
    ck_assert_double_eq(r[2], 0);
    clcone_problem_free(&p);
    /* q_t = 0: b >= 0 already, no pivot at all */
    one_contact(&p, 1, 1, 0.5, 0, 0, 0.5);
    res = solve(&p, &o, r);
    assert_converged(&res, 0);
    ck_assert_int_eq(res.iters, 0);
    ck_assert_double_eq(r[0], 0);
    clcone_problem_free(&p);
}
END_TEST

/* mu = 0: rho = 0 forces every beta to 0; a frictionless contact. */
START_TEST(frictionless)
{
    clcone_options o = pyr_options(6, CLCONE_FIT_INNER);
    clcone_problem p;
    double r[3] = {0, 0, 0};
    clcone_prob_result res;
    one_contact(&p, 1, 1, -2, 1, -3, 0);
    res = solve(&p, &o, r);
    assert_converged(&res, 1e-14);
    ck_assert_double_eq_tol(r[0], 2, 1e-14);
    ck_assert_double_eq_tol(r[1], 0, 1e-14);
    ck_assert_double_eq_tol(r[2], 0, 1e-14);
    clcone_problem_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Random coupled problems                                             */
/* ------------------------------------------------------------------ */

START_TEST(random_spd)
{
    static const int Ns[] = {4, 8, 16};
    int trial, a, fit;
    lk_rng = 77;
    for (trial = 0; trial < 4; ++trial) {
        clcone_problem p;
        int n = 5 + (int)(lk_urand() * 16);   /* 5..20 contacts */
        random_problem(&p, n, trial == 3);
        for (a = 0; a < 3; ++a)
            for (fit = 0; fit < 2; ++fit) {
                clcone_options o = pyr_options(Ns[a], (clcone_fit)fit);
                clc_lemke_lcp L;
                clc_lemke_info info;
                clcone_error err;
                clcone_prob_result res;
                double *r = calloc(3 * (size_t)n, sizeof(double));
                double *r2 = calloc(3 * (size_t)n, sizeof(double));
                double *z;
                int i;
                ck_assert(r && r2);
                res = solve(&p, &o, r);
                assert_converged(&res, 1e-10);
                assert_pyramid_law(&p, &o, r, 1e-9);
                ck_assert_msg(res.iters >= 1 && res.iters <= o.max_iter, "%d pivots", res.iters);

                /* the LCP underneath: complementary, and the same reactions */
                ck_assert_int_eq(clc_lemke_pyramid_lcp(&p, &o, 0, n, &L, &err), CLCONE_OK);
                ck_assert_int_eq(L.n, (Ns[a] + 2) * n);
                z = calloc((size_t)L.n, sizeof(double));
                ck_assert_ptr_nonnull(z);
                ck_assert_int_eq(clc_lemke_solve(&L, o.max_iter, 0, z, &info, &err), CLCONE_OK);
                ck_assert_int_eq(info.outcome, CLCONE_LEMKE_SOLVED);
                ck_assert_int_eq(info.pivots, res.iters);
                ck_assert_msg(clc_lemke_complementarity(&L, z) <= 1e-12,
                              "LCP complementarity %.3g", clc_lemke_complementarity(&L, z));
                for (i = 0; i < L.n; ++i) ck_assert(z[i] >= 0);
                clc_lemke_pyramid_reactions(&p, &o, 0, n, z, r2);
                for (i = 0; i < 3 * n; ++i) ck_assert_double_eq(r[i], r2[i]);
                clc_lemke_lcp_free(&L);
                free(z);
                free(r);
                free(r2);
            }
        clcone_problem_free(&p);
    }
}
END_TEST

/* Scene-like: W = J J^T of rank m < 3n (more contact directions than
 * degrees of freedom) and q = J v in its range, as clcone_scene_to_local
 * produces. Singular W makes the LCP highly degenerate; it still has a
 * solution and Lemke must find it. */
START_TEST(random_rank_deficient)
{
    static const int Ns[] = {4, 8};
    int trial, a, fit;
    lk_rng = 31337;
    for (trial = 0; trial < 3; ++trial) {
        int n = 8 + 4 * trial, m3 = 3 * n, m = n + 2 * trial, i, j, k;
        double *J = malloc(sizeof(double) * (size_t)m3 * (size_t)m);
        double *W = calloc((size_t)m3 * (size_t)m3, sizeof(double));
        double *q = calloc((size_t)m3, sizeof(double)), *mu = malloc(sizeof(double) * (size_t)n);
        double *v = malloc(sizeof(double) * (size_t)m);
        clcone_problem p;
        clcone_error err;
        ck_assert(J && W && q && mu && v);
        for (i = 0; i < m3 * m; ++i) J[i] = 2 * lk_urand() - 1;
        for (k = 0; k < m; ++k) v[k] = 2 * lk_urand() - 1;
        for (i = 0; i < m3; ++i) {
            for (j = 0; j < m3; ++j)
                for (k = 0; k < m; ++k) W[i * m3 + j] += J[i * m + k] * J[j * m + k];
            for (k = 0; k < m; ++k) q[i] += J[i * m + k] * v[k];
        }
        for (i = 0; i < n; ++i) mu[i] = 0.2 + 0.8 * lk_urand();
        ck_assert_int_eq(clcone_problem_from_dense(&p, n, W, q, mu, &err), CLCONE_OK);
        for (a = 0; a < 2; ++a)
            for (fit = 0; fit < 2; ++fit) {
                clcone_options o = pyr_options(Ns[a], (clcone_fit)fit);
                double *r = calloc((size_t)m3, sizeof(double));
                clcone_prob_result res;
                ck_assert_ptr_nonnull(r);
                res = solve(&p, &o, r);
                assert_converged(&res, 1e-10);
                assert_pyramid_law(&p, &o, r, 1e-9);
                free(r);
            }
        clcone_problem_free(&p);
        free(J); free(W); free(q); free(mu); free(v);
    }
}
END_TEST

/* Shared Siconos problems with singular W. BoxesStack1 (rank 78/156)
 * ended on a spurious secondary ray in every configuration before the
 * ratio test passed over tiny pivots; Capsules (rank 478/675, asymmetry
 * 6e-4) is the largest that stays quick. */
START_TEST(shared_problems)
{
    static const struct { const char *file; int N; int fit; } runs[] = {
        {"BoxesStack1-i100000-32.hdf5.dat", 4, 0}, {"BoxesStack1-i100000-32.hdf5.dat", 4, 1},
        {"BoxesStack1-i100000-32.hdf5.dat", 8, 0}, {"BoxesStack1-i100000-32.hdf5.dat", 8, 1},
        {"BoxesStack1-i100000-32.hdf5.dat", 16, 0}, {"BoxesStack1-i100000-32.hdf5.dat", 16, 1},
        {"Confeti-ex03-Fc3D-SBM.dat", 8, 0}, {"OneObject-i1028-138.hdf5.dat", 8, 1},
        {"Capsules-i101-404.dat", 4, 0},
    };
    int k;
    for (k = 0; k < (int)(sizeof runs / sizeof runs[0]); ++k) {
        clcone_problem p;
        clcone_error err;
        clcone_options o = pyr_options(runs[k].N, (clcone_fit)runs[k].fit);
        clcone_prob_result res;
        double *r;
        ck_assert_msg(clcone_read_problem_hdf5(test_problem_path(runs[k].file), &p, &err) == CLCONE_OK,
                      "%s", err.msg);
        r = calloc(3 * (size_t)p.n, sizeof(double));
        ck_assert_ptr_nonnull(r);
        res = solve(&p, &o, r);
        ck_assert_msg(res.status == CLCONE_CONVERGED && res.error <= 1e-10,
                      "%s N=%d fit=%d: status %d error %.3g after %d pivots: %s", runs[k].file,
                      runs[k].N, runs[k].fit, (int)res.status, res.error, res.iters, res.reason);
        assert_pyramid_law(&p, &o, r, 1e-9);
        free(r);
        clcone_problem_free(&p);
    }
}
END_TEST

/* Through the public entry point, with a warm start that Lemke must
 * ignore: the answer is bit-identical to the cold one. */
/* W and q scaled together leave r as it is: Lemke at 1e10 and 1e-10
 * (and 1e150, 1e-150) finds the unit-scale answer, where its absolute
 * pivot floors once ended on a ray or with complementarity off. */
START_TEST(scale_free)
{
    static const double factor[] = {1e10, 1e-10, 1e150, 1e-150};
    const unsigned long long seed = lk_rng;
    const int n = 4;
    clcone_options o = pyr_options(8, CLCONE_FIT_OUTER);
    clcone_problem p;
    clcone_prob_result res;
    double r0[12], r[12], rmax = 0;
    random_problem(&p, n, 0);
    res = solve(&p, &o, r0);
    assert_converged(&res, 1e-10);
    clcone_problem_free(&p);
    for (int i = 0; i < 3 * n; ++i) rmax = fmax(rmax, fabs(r0[i]));
    for (int k = 0; k < (int)(sizeof factor / sizeof *factor); ++k) {
        lk_rng = seed;
        random_problem(&p, n, 0);
        for (int i = 0; i < 9 * p.nnzb; ++i) p.blocks[i] *= factor[k];
        for (int i = 0; i < 3 * n; ++i) p.q[i] *= factor[k];
        res = solve(&p, &o, r);
        ck_assert_msg(res.status == CLCONE_CONVERGED, "scale %g: status %d: %s", factor[k], (int)res.status,
                      res.reason);
        for (int i = 0; i < 3 * n; ++i)
            ck_assert_msg(fabs(r[i] - r0[i]) <= 1e-9 * rmax, "scale %g: r[%d] %.17g against %.17g", factor[k], i,
                          r[i], r0[i]);
        clcone_problem_free(&p);
    }
}
END_TEST

START_TEST(public_entry_ignores_warm_start)
{
    clcone_problem p;
    clcone_options o = pyr_options(8, CLCONE_FIT_OUTER);
    clcone_result res;
    clcone_error err;
    double *cold, *warm;
    int i, n = 12;
    lk_rng = 4242;
    random_problem(&p, n, 0);
    cold = calloc(3 * (size_t)n, sizeof(double));
    warm = calloc(3 * (size_t)n, sizeof(double));
    ck_assert(cold && warm);
    ck_assert_msg(clcone_solve(NULL, &p, &o, cold, &res, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_int_eq(res.nprob, 1);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    ck_assert(res.items[0].error <= 1e-10);
    clcone_result_free(&res);
    for (i = 0; i < 3 * n; ++i) warm[i] = 3.0 - i;
    o.warm_start = 1;
    ck_assert_msg(clcone_solve(NULL, &p, &o, warm, &res, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    for (i = 0; i < 3 * n; ++i) ck_assert_double_eq(cold[i], warm[i]);
    clcone_result_free(&res);
    free(cold);
    free(warm);
    clcone_problem_free(&p);
}
END_TEST

/* Solving contacts [1, 2) of two touches nothing else. */
START_TEST(sub_range_only)
{
    double W[36] = {0}, q[6] = {-1, 0.2, 0, -1, 2, 0}, mu[2] = {0.5, 0.5};
    double r[6] = {7, 7, 7, 0, 0, 0};
    clcone_options o = pyr_options(4, CLCONE_FIT_OUTER);
    clcone_problem p;
    clcone_prob_result res;
    clcone_error err;
    int i;
    for (i = 0; i < 6; ++i) W[i * 6 + i] = 1;
    ck_assert_int_eq(clcone_problem_from_dense(&p, 2, W, q, mu, &err), CLCONE_OK);
    ck_assert_int_eq(clc_ref_lemke_pyramid(&p, &o, 1, 2, r, &res, &err), CLCONE_OK);
    assert_converged(&res, 1e-14);
    for (i = 0; i < 3; ++i) ck_assert_double_eq(r[i], 7);
    ck_assert_double_eq_tol(r[3], 1, 1e-14);
    ck_assert_double_eq_tol(r[4], -0.5, 1e-14);
    ck_assert_double_eq_tol(r[5], 0, 1e-14);
    /* an empty range is trivially solved */
    ck_assert_int_eq(clc_ref_lemke_pyramid(&p, &o, 2, 2, r, &res, &err), CLCONE_OK);
    ck_assert_int_eq(res.status, CLCONE_CONVERGED);
    ck_assert_int_eq(res.iters, 0);
    clcone_problem_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Failure reports                                                     */
/* ------------------------------------------------------------------ */

START_TEST(pivot_cap)
{
    clcone_problem p;
    clcone_options o = pyr_options(8, CLCONE_FIT_OUTER);
    clcone_prob_result res;
    double *r;
    int n = 10, cap;
    lk_rng = 99;
    random_problem(&p, n, 0);
    r = calloc(3 * (size_t)n, sizeof(double));
    ck_assert_ptr_nonnull(r);
    for (cap = 1; cap <= 5; cap += 4) {
        char want[64];
        o.max_iter = cap;
        res = solve(&p, &o, r);
        ck_assert_int_eq(res.status, CLCONE_FAILED);
        ck_assert_int_eq(res.iters, cap);
        snprintf(want, sizeof want, "pivot cap %d reached", cap);
        ck_assert_msg(strstr(res.reason, want) != NULL, "reason: %s", res.reason);
        ck_assert(isfinite(res.error) && res.error > 1e-6);
    }
    free(r);
    clcone_problem_free(&p);
}
END_TEST

/* Two contacts whose normals repel through an indefinite coupling
 * (W_n1n2 = -3, diagonal blocks fine): w1 = z1 - 3 z2 - 1,
 * w2 = -3 z1 + z2 + 1 has no complementary solution, so Lemke must end on
 * a secondary ray and say so. */
START_TEST(ray_termination)
{
    double W[36] = {0}, q[6] = {-1, 0, 0, 1, 0, 0}, mu[2] = {0.5, 0.5}, r[6] = {0};
    clcone_options o = pyr_options(4, CLCONE_FIT_OUTER);
    clcone_problem p;
    clcone_prob_result res;
    clcone_error err;
    int i;
    for (i = 0; i < 6; ++i) W[i * 6 + i] = 1;
    W[0 * 6 + 3] = W[3 * 6 + 0] = -3;
    ck_assert_int_eq(clcone_problem_from_dense(&p, 2, W, q, mu, &err), CLCONE_OK);
    res = solve(&p, &o, r);
    ck_assert_int_eq(res.status, CLCONE_FAILED);
    ck_assert_msg(strstr(res.reason, "ray termination after ") != NULL, "reason: %s", res.reason);
    ck_assert_int_ge(res.iters, 1);
    clcone_problem_free(&p);
}
END_TEST

START_TEST(too_large)
{
    clcone_problem p;
    clcone_options o = pyr_options(4, CLCONE_FIT_OUTER);
    clcone_prob_result res;
    clc_lemke_lcp L;
    clcone_error err;
    double *r;
    int n = 601, i;
    ck_assert_int_eq(clcone_problem_alloc(&p, n, n, &err), CLCONE_OK);
    for (i = 0; i < n; ++i) {
        p.row_ptr[i + 1] = i + 1;
        p.col[i] = i;
        p.blocks[9 * i] = p.blocks[9 * i + 4] = p.blocks[9 * i + 8] = 1;
        p.q[3 * i] = -1;
        p.mu[i] = 0.3;
    }
    r = calloc(3 * (size_t)n, sizeof(double));
    ck_assert_ptr_nonnull(r);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(clc_ref_lemke_pyramid(&p, &o, 0, n, r, &res, &err), CLCONE_ENOTSUP);
    ck_assert_int_eq(err.code, CLCONE_ENOTSUP);
    ck_assert_msg(strstr(err.msg, "dense") && strstr(err.msg, "3606 rows")
                  && strstr(err.msg, "at most 600 contacts at N = 4"), "message: %s", err.msg);
    ck_assert_int_eq(res.status, CLCONE_FAILED);
    /* exactly at the limit the LCP is still built */
    ck_assert_int_eq(clc_lemke_pyramid_lcp(&p, &o, 0, 600, &L, &err), CLCONE_OK);
    ck_assert_int_eq(L.n, CLCONE_LEMKE_MAX_ROWS);
    clc_lemke_lcp_free(&L);
    /* few contacts but many facets */
    o.facets = 2000;
    ck_assert_int_eq(clc_ref_lemke_pyramid(&p, &o, 0, 2, r, &res, &err), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(err.msg, "4004 rows") && strstr(err.msg, "at most 1 contact at N = 2000"),
                  "message: %s", err.msg);
    free(r);
    clcone_problem_free(&p);
}
END_TEST

START_TEST(bad_arguments)
{
    clcone_problem p;
    clcone_options o = pyr_options(4, CLCONE_FIT_OUTER);
    clcone_prob_result res;
    clcone_error err;
    double r[3];
    one_contact(&p, 1, 1, -1, 0, 0, 0.5);
    o.model = CLCONE_MODEL_COULOMB;
    ck_assert_int_eq(clc_ref_lemke_pyramid(&p, &o, 0, 1, r, &res, &err), CLCONE_ENOTSUP);
    o.model = CLCONE_MODEL_PYRAMID;
    o.facets = 2;
    ck_assert_int_eq(clc_ref_lemke_pyramid(&p, &o, 0, 1, r, &res, &err), CLCONE_EINVAL);
    o.facets = 4;
    ck_assert_int_eq(clc_ref_lemke_pyramid(&p, &o, 0, 2, r, &res, &err), CLCONE_EINVAL);
    o.max_iter = 0;
    ck_assert_int_eq(clc_ref_lemke_pyramid(&p, &o, 0, 1, r, &res, &err), CLCONE_EINVAL);
    clcone_problem_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The pivoting core on plain LCPs                                     */
/* ------------------------------------------------------------------ */

static clc_lemke_info core_solve(int n, const double *M, const double *b, double *z,
                                    int cap)
{
    clc_lemke_lcp L;
    clc_lemke_info info;
    clcone_error err;
    ck_assert_int_eq(clc_lemke_lcp_from_dense(&L, n, M, b, &err), CLCONE_OK);
    ck_assert_int_eq(clc_lemke_solve(&L, cap, 0, z, &info, &err), CLCONE_OK);
    if (info.outcome == CLCONE_LEMKE_SOLVED)
        ck_assert_msg(clc_lemke_complementarity(&L, z) <= 1e-13, "complementarity %.3g",
                      clc_lemke_complementarity(&L, z));
    clc_lemke_lcp_free(&L);
    return info;
}

START_TEST(core_small)
{
    /* 2 z1 + z2 = 5, z1 + 2 z2 = 6 */
    double M1[4] = {2, 1, 1, 2}, b1[2] = {-5, -6}, z[3];
    /* Murty's cyclic P-matrix with all b equal: every first pivot ties;
     * the unique solution is z = 1/3 (1, 1, 1). */
    double M2[9] = {1, 2, 0, 0, 1, 2, 2, 0, 1}, b2[3] = {-1, -1, -1};
    /* w = -z - 1 >= 0 is infeasible: secondary ray */
    double M3[1] = {-1}, b3[1] = {-1};
    clc_lemke_info info;
    int i;
    info = core_solve(2, M1, b1, z, 100);
    ck_assert_int_eq(info.outcome, CLCONE_LEMKE_SOLVED);
    ck_assert_double_eq_tol(z[0], 4.0 / 3, 1e-14);
    ck_assert_double_eq_tol(z[1], 7.0 / 3, 1e-14);
    info = core_solve(3, M2, b2, z, 100);
    ck_assert_int_eq(info.outcome, CLCONE_LEMKE_SOLVED);
    for (i = 0; i < 3; ++i) ck_assert_double_eq_tol(z[i], 1.0 / 3, 1e-14);
    info = core_solve(1, M3, b3, z, 100);
    ck_assert_int_eq(info.outcome, CLCONE_LEMKE_RAY);
    info = core_solve(2, M1, b1, z, 1);
    ck_assert_int_eq(info.outcome, CLCONE_LEMKE_CAP);
    ck_assert_int_eq(info.pivots, 1);
}
END_TEST

/* Rank-2 PSD M (copositive-plus) with a planted degenerate solution: many
 * indices have z_i = w_i = 0, so the ratio test meets ties at every turn
 * and only the lexicographic rule keeps the path from cycling. */
START_TEST(core_degenerate_psd)
{
    int trial;
    lk_rng = 5;
    for (trial = 0; trial < 20; ++trial) {
        int n = 6 + trial * 3, i, j;
        double *A = malloc(sizeof(double) * 2 * (size_t)n), *M = malloc(sizeof(double) * (size_t)n * (size_t)n);
        double *zs = calloc((size_t)n, sizeof(double)), *ws = calloc((size_t)n, sizeof(double));
        double *b = malloc(sizeof(double) * (size_t)n), *z = malloc(sizeof(double) * (size_t)n);
        clc_lemke_info info;
        ck_assert(A && M && zs && ws && b && z);
        for (i = 0; i < 2 * n; ++i) A[i] = (double)((int)(lk_urand() * 5) - 2);
        for (i = 0; i < n; ++i)
            for (j = 0; j < n; ++j) M[i * n + j] = A[2 * i] * A[2 * j] + A[2 * i + 1] * A[2 * j + 1];
        for (i = 0; i < n; ++i) {
            int kind = (int)(lk_urand() * 3);
            if (kind == 0) zs[i] = 1 + (int)(lk_urand() * 3);
            else if (kind == 1) ws[i] = 1 + (int)(lk_urand() * 3);
        }
        for (i = 0; i < n; ++i) {
            double s = ws[i];
            for (j = 0; j < n; ++j) s -= M[i * n + j] * zs[j];
            b[i] = s;
        }
        info = core_solve(n, M, b, z, 100000);
        ck_assert_msg(info.outcome == CLCONE_LEMKE_SOLVED, "trial %d: outcome %d after %d pivots",
                      trial, (int)info.outcome, info.pivots);
        free(A); free(M); free(zs); free(ws); free(b); free(z);
    }
}
END_TEST

Suite *suite_lemke(void)
{
    Suite *s = suite_create("lemke");
    TCase *t = tcase_create("single");
    tcase_add_test(t, stick_identity);
    tcase_add_test(t, slide_along_axis);
    tcase_add_test(t, slide_outer_square);
    tcase_add_test(t, slide_inner_facet);
    tcase_add_test(t, slide_scaled_normal);
    tcase_add_test(t, take_off);
    tcase_add_test(t, frictionless);
    suite_add_tcase(s, t);
    t = tcase_create("coupled");
    tcase_set_timeout(t, 300);   /* valgrind runs it ~50x slower */
    tcase_add_test(t, random_spd);
    tcase_add_test(t, random_rank_deficient);
    tcase_add_test(t, shared_problems);
    tcase_add_test(t, scale_free);
    tcase_add_test(t, public_entry_ignores_warm_start);
    tcase_add_test(t, sub_range_only);
    suite_add_tcase(s, t);
    t = tcase_create("failures");
    tcase_add_test(t, pivot_cap);
    tcase_add_test(t, ray_termination);
    tcase_add_test(t, too_large);
    tcase_add_test(t, bad_arguments);
    suite_add_tcase(s, t);
    t = tcase_create("core");
    tcase_add_test(t, core_small);
    tcase_add_test(t, core_degenerate_psd);
    suite_add_tcase(s, t);
    return s;
}
