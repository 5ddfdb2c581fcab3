/* Cone math of kernels/cone.h, kernels/local_solve.h and kernels/schedule.h,
 * compiled as host C: worked numbers, projection characterisations,
 * pyramid fits, ACGS's function restart. */
#include "testutil.h"
#include "cone.h"
#include "local_solve.h"
#include "schedule.h"

#include <math.h>
#include <string.h>

static unsigned long long rng_state = 12345;
static double urand(void) /* uniform in [-1, 1) */
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

START_TEST(worked_numbers_circle)
{
    real_t on[3] = {10, 3, 4}, in[3] = {10, 2, 1}, x[3];
    /* mu = 0.5, f_n = 10: ||f_t|| <= 5; (3,4) has norm exactly 5 */
    ck_assert_double_eq(cone_hypot2(3, 4), 5.0);
    x[0] = on[0]; x[1] = on[1]; x[2] = on[2];
    cone_project(0.5, x);
    ck_assert_double_eq(x[0], 10); ck_assert_double_eq(x[1], 3); ck_assert_double_eq(x[2], 4);
    ck_assert_double_eq(cone_violation(0.5, on), 0.0);
    /* (2,1): norm ~2.24 < 5, it sticks: unchanged by projection */
    ck_assert_double_eq_tol(cone_hypot2(2, 1), 2.2360679775, 1e-10);
    x[0] = in[0]; x[1] = in[1]; x[2] = in[2];
    cone_project(0.5, x);
    ck_assert_double_eq(x[1], 2); ck_assert_double_eq(x[2], 1);
    /* just outside: (10, 3, 4.1) is pulled back onto the boundary */
    x[0] = 10; x[1] = 3; x[2] = 4.1;
    cone_project(0.5, x);
    ck_assert_double_eq_tol(cone_hypot2(x[1], x[2]), 0.5 * x[0], 1e-12);
    ck_assert(x[0] > 10);
}
END_TEST

START_TEST(worked_numbers_facet)
{
    real_t f[3] = {10, 3, 4};
    /* d = (0.6, 0.8): d . (3,4) = 1.8 + 3.2 = 5.0 = mu f_n: on the facet */
    ck_assert_double_eq_tol(cone_facet_slack(0.6, 0.8, 0.5, f), 0.0, 1e-15);
    /* outer pyramid N = 4 (normals at 0 and 90 degrees): a force of norm 5
     * at 45 degrees scores 5 cos 45 < 5, the direction bias */
    {
        cone_pyramid P = cone_pyramid_make(4, 0, 0.5);
        real_t s = cone_pyramid_score(P, 5 * cos(CONE_PI / 4), 5 * sin(CONE_PI / 4));
        ck_assert(s < 5.0);
        ck_assert_double_eq_tol(s, 5 * cos(CONE_PI / 4), 1e-12);
        /* along a facet normal it scores its full norm */
        ck_assert_double_eq_tol(cone_pyramid_score(P, 0, 5), 5.0, 1e-12);
    }
}
END_TEST

/* Boundary radius of the pyramid along direction phi (f_n = 1). */
static double pyramid_radius(cone_pyramid P, double phi)
{
    double lo = 0, hi = 10;
    for (int i = 0; i < 100; ++i) {
        double mid = 0.5 * (lo + hi);
        real_t x[3] = {1, mid * cos(phi), mid * sin(phi)};
        if (cone_pyramid_contains(P, x, 0)) lo = mid; else hi = mid;
    }
    return lo;
}

START_TEST(pyramid_fits_bracket_circle)
{
    static const int Ns[] = {4, 6, 8, 16, 64};
    double prev_in = 1, prev_out = 1;
    const double mu = 0.5;
    for (size_t k = 0; k < sizeof Ns / sizeof Ns[0]; ++k) {
        int N = Ns[k];
        cone_pyramid in = cone_pyramid_make(N, 1, mu), out = cone_pyramid_make(N, 0, mu);
        double min_in = 1e9, max_in = 0, min_out = 1e9, max_out = 0;
        double gap_in, gap_out;
        /* 1920 = 2^7 * 15 samples hit every facet normal and vertex
         * angle of these N exactly */
        for (int s = 0; s < 1920; ++s) {
            double phi = 2 * CONE_PI * s / 1920.0;
            double ri = pyramid_radius(in, phi), ro = pyramid_radius(out, phi);
            min_in = fmin(min_in, ri); max_in = fmax(max_in, ri);
            min_out = fmin(min_out, ro); max_out = fmax(max_out, ro);
        }
        /* inner: vertices on the circle, inside it everywhere; contains the
         * disc of radius mu cos(pi/N) */
        ck_assert_double_eq_tol(max_in, mu, 1e-6);
        ck_assert_double_eq_tol(min_in, mu * cos(CONE_PI / N), 1e-6);
        /* outer: facets touch the circle, vertices at mu / cos(pi/N) */
        ck_assert_double_eq_tol(min_out, mu, 1e-6);
        ck_assert_double_eq_tol(max_out, mu / cos(CONE_PI / N), 1e-6);
        /* the inner rejects a force the circle admits, the outer admits one
         * the circle rejects */
        {
            double a = in.phi0; /* direction of an inner facet normal */
            real_t x[3] = {1, mu * cos(a), mu * sin(a)};
            real_t v[3] = {1, out.rho * cos(CONE_PI / N), out.rho * sin(CONE_PI / N)};
            ck_assert(!cone_pyramid_contains(in, x, 0));
            ck_assert(cone_violation(mu, x) < 1e-12);
            ck_assert(cone_pyramid_contains(out, v, 1e-12));
            ck_assert(cone_violation(mu, v) > 0);
        }
        /* the bound: relative gaps 1 - cos(pi/N) and 1/cos(pi/N) - 1,
         * both falling with N */
        gap_in = 1 - min_in / mu;
        gap_out = max_out / mu - 1;
        ck_assert(gap_in < prev_in && gap_out < prev_out);
        ck_assert(gap_in <= 1 - cos(CONE_PI / N) + 1e-6);
        ck_assert(gap_out <= 1 / cos(CONE_PI / N) - 1 + 1e-6);
        prev_in = gap_in;
        prev_out = gap_out;
    }
    /* at N = 64 both gaps are below 0.13% */
    ck_assert(prev_in < 1.3e-3 && prev_out < 1.3e-3);
}
END_TEST

/* Moreau: y = P_K(x) iff y in K, x - y in the polar cone, (x - y) . y = 0. */
START_TEST(circle_projection_characterised)
{
    for (int i = 0; i < 5000; ++i) {
        double mu = 0.05 + 1.5 * (urand() + 1) / 2;
        real_t x[3] = {3 * urand(), 3 * urand(), 3 * urand()}, y[3], z[3];
        y[0] = x[0]; y[1] = x[1]; y[2] = x[2];
        cone_project(mu, y);
        ck_assert(cone_hypot2(y[1], y[2]) <= mu * y[0] * (1 + 1e-12) + 1e-15);
        z[0] = x[0] - y[0]; z[1] = x[1] - y[1]; z[2] = x[2] - y[2];
        /* polar of K_mu is -K_mu*: mu ||z_t|| <= -z_n */
        ck_assert(mu * cone_hypot2(z[1], z[2]) <= -z[0] + 1e-12);
        ck_assert(fabs(z[0] * y[0] + z[1] * y[1] + z[2] * y[2]) < 1e-12);
        /* dual projection by Moreau equals projecting onto K_{1/mu} */
        z[0] = x[0]; z[1] = x[1]; z[2] = x[2];
        cone_project_dual(mu, z);
        y[0] = x[0]; y[1] = x[1]; y[2] = x[2];
        cone_project(1 / mu, y);
        ck_assert(fabs(z[0] - y[0]) + fabs(z[1] - y[1]) + fabs(z[2] - y[2]) < 1e-12);
    }
}
END_TEST

/* |r . u_hat| is 0 in each case of the law and positive off it. */
START_TEST(complementarity_gap)
{
    real_t slide_r[3] = {2, 0.6, 0.8}, slide_u[3] = {0, -3, -4}; /* mu 0.5, u_t opposes r_t */
    real_t stick_r[3] = {2, 0.1, 0.2}, stick_u[3] = {0, 0, 0};
    real_t off_r[3] = {2, 0, 0}, off_u[3] = {0.5, 0, 0};        /* pushes while separating */
    ck_assert_double_eq_tol(cone_complementarity(0.5, slide_r, slide_u), 0.0, 1e-15);
    ck_assert_double_eq_tol(cone_complementarity(0.5, stick_r, stick_u), 0.0, 1e-15);
    ck_assert_double_eq_tol(cone_complementarity(0.5, off_r, off_u), 1.0, 1e-15);
}
END_TEST

START_TEST(desaxce_velocity)
{
    real_t u[3] = {-1, 3, 4};
    ck_assert_double_eq_tol(cone_desaxce_n(0.5, u), -1 + 2.5, 1e-15);
    /* mu = 0: projection onto the half line r_n >= 0 */
    {
        real_t x[3] = {2, 5, -1};
        cone_project(0, x);
        ck_assert_double_eq(x[0], 2); ck_assert_double_eq(x[1], 0); ck_assert_double_eq(x[2], 0);
    }
}
END_TEST

START_TEST(pyramid_projection_characterised)
{
    static const int Ns[] = {3, 4, 8, 16, 64};
    for (size_t k = 0; k < sizeof Ns / sizeof Ns[0]; ++k)
        for (int inner = 0; inner < 2; ++inner)
            for (int i = 0; i < 1500; ++i) {
                double mu = 0.1 + (urand() + 1) / 2;
                cone_pyramid P = cone_pyramid_make(Ns[k], inner, mu);
                real_t x[3] = {3 * urand(), 3 * urand(), 3 * urand()}, y[3], z[3];
                y[0] = x[0]; y[1] = x[1]; y[2] = x[2];
                cone_pyramid_project(P, y);
                ck_assert(cone_pyramid_contains(P, y, 1e-10));
                z[0] = x[0] - y[0]; z[1] = x[1] - y[1]; z[2] = x[2] - y[2];
                ck_assert(fabs(z[0] * y[0] + z[1] * y[1] + z[2] * y[2]) < 1e-10);
                /* x - y in the polar: non-positive on every edge generator */
                for (int j = 0; j < Ns[k]; ++j) {
                    double g = P.phi0 + CONE_PI / Ns[k] + 2 * CONE_PI * j / Ns[k];
                    ck_assert(z[0] + P.rho * (cos(g) * z[1] + sin(g) * z[2]) <= 1e-10);
                }
            }
}
END_TEST

START_TEST(pyramid_support_function)
{
    /* outer N = 4, mu = 0.5: vertices at 45 degrees, radius 0.5 sqrt 2;
     * sliding along -x costs rho max_j(g_j . x) = 0.5 sqrt2 cos 45 = 0.5 */
    cone_pyramid P = cone_pyramid_make(4, 0, 0.5);
    ck_assert_double_eq_tol(cone_pyramid_support(P, -1, 0), 0.5, 1e-12);
    /* along a vertex direction the full vertex radius */
    ck_assert_double_eq_tol(cone_pyramid_support(P, -cos(CONE_PI / 4), -sin(CONE_PI / 4)),
                            0.5 * sqrt(2.0), 1e-12);
}
END_TEST

/* The exact one-contact solve satisfies Coulomb's law to rounding on
 * random well-posed contacts. */
/* ACGS's function restart: the rise term is f(x) - f(xp) of the quadratic
 * f = 1/2 x.Wx + q.x to rounding, also where the rise is far below f's
 * own rounding (eps |f|), which comparing f's values could not see; a
 * rise beyond 64 epsilons of the terms' magnitude restarts, a fall or a
 * rise within them does not, and the first check has nothing to compare
 * with. */
START_TEST(acgs_function_restart)
{
    real_t W[9], M[9], q[3] = {0.3, -2.0, 0.7}, x[3], xp[3], u[3], up[3], mag;
    double f, fp, rise;
    for (int i = 0; i < 9; ++i) M[i] = urand();
    for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) {
            W[3 * a + c] = a == c ? 0.5 : 0.0;
            for (int d = 0; d < 3; ++d) W[3 * a + c] += M[3 * a + d] * M[3 * c + d];
        }
    {
        /* xp: f's minimiser, W xp = -q by Cramer's rule; x a step of 1e-9 from it, whose rise
         * (1/2 d.Wd, about 1e-18) lies far below f's rounding (eps |f|, about 1e-16) */
        double det = W[0] * (W[4] * W[8] - W[5] * W[7]) - W[1] * (W[3] * W[8] - W[5] * W[6])
                     + W[2] * (W[3] * W[7] - W[4] * W[6]);
        for (int k = 0; k < 3; ++k) {
            double C[9];
            memcpy(C, W, sizeof C);
            for (int a = 0; a < 3; ++a) C[3 * a + k] = -q[a];
            xp[k] = (C[0] * (C[4] * C[8] - C[5] * C[7]) - C[1] * (C[3] * C[8] - C[5] * C[6])
                     + C[2] * (C[3] * C[7] - C[4] * C[6])) / det;
            x[k] = xp[k] + 1e-9 * urand();
        }
    }
    f = fp = 0;
    for (int a = 0; a < 3; ++a) {
        u[a] = q[a];
        up[a] = q[a];
        for (int c = 0; c < 3; ++c) {
            u[a] += W[3 * a + c] * x[c];
            up[a] += W[3 * a + c] * xp[c];
        }
    }
    for (int a = 0; a < 3; ++a) {
        f += 0.5 * x[a] * (u[a] + q[a]);
        fp += 0.5 * xp[a] * (up[a] + q[a]);
    }
    rise = cone_acgs_rise_term(x, u, xp, up, q, &mag);
    {
        /* the exact rise from the step d = x - xp: d.(W xp + q) + 1/2 d.W d */
        double d[3], ex = 0;
        for (int a = 0; a < 3; ++a) d[a] = x[a] - xp[a];
        for (int a = 0; a < 3; ++a) {
            ex += d[a] * up[a];
            for (int c = 0; c < 3; ++c) ex += 0.5 * d[a] * W[3 * a + c] * d[c];
        }
        ck_assert_msg(fabs(rise - ex) <= 1e-6 * fabs(ex), "rise %.17g, exact %.17g", rise, ex);
        ck_assert_msg(fabs((f - fp) - ex) > 1e-3 * fabs(ex), "f's values saw the rise: %.17g", f - fp);
    }
    ck_assert(mag >= fabs(rise));
    ck_assert_int_eq(cone_acgs_climbed(1, 1.0, 1.0), 0);                       /* first check */
    ck_assert_int_eq(cone_acgs_climbed(2, -1e-3, 1.0), 0);                     /* a fall */
    ck_assert_int_eq(cone_acgs_climbed(3, 1e-12, 1.0), 1);                     /* a rise */
    ck_assert_int_eq(cone_acgs_climbed(4, 32 * DBL_EPSILON, 1.0), 0);          /* rounding */
    ck_assert_int_eq(cone_acgs_climbed(5, 0.0, 0.0), 0);                       /* no change */
}
END_TEST

START_TEST(local_coulomb_exact)
{
    int cases[3] = {0, 0, 0};
    for (int i = 0; i < 3000; ++i) {
        real_t M[9], A[9], b[3], r[3], u[3];
        double mu = 0.05 + (urand() + 1) / 2;
        for (int a = 0; a < 9; ++a) M[a] = urand();
        for (int a = 0; a < 3; ++a)
            for (int c = 0; c < 3; ++c) {
                A[3 * a + c] = (a == c ? 0.3 : 0.0);
                for (int d = 0; d < 3; ++d) A[3 * a + c] += M[3 * a + d] * M[3 * c + d];
            }
        b[0] = urand(); b[1] = 0.7 * urand(); b[2] = 0.7 * urand();
        ck_assert_int_eq(cone_local_coulomb(A, b, mu, cos(0.3), sin(0.3), r), 0);
        for (int a = 0; a < 3; ++a) u[a] = b[a] + A[3 * a] * r[0] + A[3 * a + 1] * r[1] + A[3 * a + 2] * r[2];
        ck_assert_msg(sqrt(cone_residual_coulomb(mu, r, u)) < 1e-9, "case %d residual %g", i,
                      sqrt(cone_residual_coulomb(mu, r, u)));
        cases[r[0] == 0 ? 0 : cone_hypot2(r[1], r[2]) < mu * r[0] * (1 - 1e-9) ? 1 : 2]++;
    }
    /* all three cases of the law were exercised */
    ck_assert_msg(cases[0] > 100 && cases[1] > 100 && cases[2] > 100, "take-off %d stick %d slide %d",
                  cases[0], cases[1], cases[2]);
}
END_TEST

Suite *suite_cone(void)
{
    Suite *s = suite_create("cone");
    TCase *t = tcase_create("cone");
    tcase_add_test(t, worked_numbers_circle);
    tcase_add_test(t, worked_numbers_facet);
    tcase_add_test(t, pyramid_fits_bracket_circle);
    tcase_add_test(t, circle_projection_characterised);
    tcase_add_test(t, desaxce_velocity);
    tcase_add_test(t, complementarity_gap);
    tcase_add_test(t, pyramid_projection_characterised);
    tcase_add_test(t, pyramid_support_function);
    tcase_add_test(t, local_coulomb_exact);
    tcase_add_test(t, acgs_function_restart);
    suite_add_tcase(s, t);
    return s;
}
