/* Semismooth Newton for the pyramid (kernels/newton_math.h,
 * newton_pyramid_contact; the pyramid's newton and hybrid rows): its
 * Jacobian against finite differences; on tiny piles where coloured
 * projected Gauss-Seidel creeps, newton and the hybrid reach 1e-8 by the
 * pyramid's own error measure on the reference and on a double device,
 * as local problems and as scenes, with four outer and eight inner
 * facets; on the device a batch gives each problem the bits it gets
 * alone, run after run, and at tol >= 1e-6 the hybrid is cgs, bit for
 * bit. */
#include "testutil.h"
#include "core/internal.h"
#include "cone.h"
#include "local_solve.h"
#include "newton_math.h"

#include <math.h>

/* The reference (ctx NULL) and a double device. */
static clcone_context *backend(int i)
{
    return i ? test_context(CLCONE_DOUBLE) : NULL;
}

/* The piles and pyramids: `gen pile --n 11 --seed 8` with the default
 * pyramid (cgs needs 11,380 sweeps) and `--n 6 --seed 13` with eight
 * inner facets (cgs at 1.4e-5 after 20,000). */
static const struct {
    int n;
    unsigned seed;
    int facets;
    clcone_fit fit;
} CASES[] = {{11, 8, 4, CLCONE_FIT_OUTER}, {6, 13, 8, CLCONE_FIT_INNER}};
#define NCASES 2

/* Iterations within which cgs stalls and newton and the hybrid converge
 * (at most 74 steps and 582 iterations here, counting a rescue's sweeps
 * apart). */
enum { BUDGET = 5000 };

static clcone_options pyramid_options(int k, clcone_solver v, double tol)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_PYRAMID;
    o.facets = CASES[k].facets;
    o.fit = CASES[k].fit;
    o.solver = v;
    o.tol = tol;
    o.max_iter = BUDGET;
    return o;
}

/* One solve of p, or of its scene s when scene is set. */
static clcone_prob_result solve(clcone_context *ctx, const clcone_problem *p, const clcone_scene *s, int scene,
                                const clcone_options *o, double *r)
{
    clcone_result res;
    clcone_error e;
    clcone_prob_result out;
    memset(r, 0, 3 * (size_t)p->n * sizeof *r);
    ck_assert_msg((scene ? clcone_solve_scene(ctx, s, o, r, &res, &e) : clcone_solve(ctx, p, o, r, &res, &e))
                      == CLCONE_OK,
                  "%s", e.msg);
    out = res.items[0];
    clcone_result_free(&res);
    return out;
}

/* A uniform number in [0, 1) from a linear congruential generator. */
static double uniform(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffffffu) / 16777216.0;
}

/* phi's Jacobian A + B W against forward differences at random contacts
 * (W a random SPD block, q and r uniform), every fit and 3..8 facets:
 * away from the pieces' borders the two agree to the differences'
 * accuracy. */
START_TEST(pyramid_jacobian_matches_differences)
{
    unsigned seed = 7;
    int checked = 0;
    for (int t = 0; t < 20000; ++t) {
        double W[9] = {0}, M[9], r[3], q[3], u[3], phi[3], A[9], B[9], rn, rt;
        cone_pyramid P = cone_pyramid_make(3 + t % 6, t % 2, 0.2 + 0.8 * uniform(&seed));
        for (int i = 0; i < 9; ++i) M[i] = uniform(&seed) - 0.5;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                W[3 * i + j] = i == j;
                for (int k = 0; k < 3; ++k) W[3 * i + j] += M[3 * k + i] * M[3 * k + j];
            }
        for (int i = 0; i < 3; ++i) {
            r[i] = uniform(&seed) - 0.5;
            q[i] = uniform(&seed) - 0.5;
        }
        for (int i = 0; i < 3; ++i) u[i] = q[i] + W[3 * i] * r[0] + W[3 * i + 1] * r[1] + W[3 * i + 2] * r[2];
        rn = newton_rho(W[0]);
        rt = newton_rho(0.5 * (W[4] + W[8]));
        newton_pyramid_contact(P, rn, rt, r, u, phi, 1, A, B);
        for (int j = 0; j < 3; ++j) {
            double h = 1e-7, rp[3] = {r[0], r[1], r[2]}, up[3], pp[3], worst = 0;
            rp[j] += h;
            for (int i = 0; i < 3; ++i)
                up[i] = q[i] + W[3 * i] * rp[0] + W[3 * i + 1] * rp[1] + W[3 * i + 2] * rp[2];
            newton_pyramid_contact(P, rn, rt, rp, up, pp, 0, NULL, NULL);
            for (int i = 0; i < 3; ++i) {
                double Jij = A[3 * i + j] + B[3 * i] * W[j] + B[3 * i + 1] * W[3 + j] + B[3 * i + 2] * W[6 + j];
                worst = fmax(worst, fabs((pp[i] - phi[i]) / h - Jij));
            }
            /* a step across a piece's border: no derivative to check there */
            if (worst > 1e-3) continue;
            ck_assert_msg(worst < 1e-5, "contact %d, column %d: difference %g", t, j, worst);
            ++checked;
        }
    }
    ck_assert_int_gt(checked, 59000);
}
END_TEST

START_TEST(pyramid_converges_where_cgs_creeps)
{
    static const clcone_solver solvers[2] = {CLCONE_SOLVER_HYBRID, CLCONE_SOLVER_NEWTON};
    clcone_context *ctx = backend(_i);
    for (int k = 0; k < NCASES; ++k) {
        clcone_scene s;
        clcone_problem p;
        clcone_options o = pyramid_options(k, CLCONE_SOLVER_CGS, 1e-8);
        double *r;
        clcone_prob_result out;
        test_gen_pile(CASES[k].n, CASES[k].seed, &s, &p);
        r = calloc(3 * (size_t)p.n, sizeof *r);
        out = solve(ctx, &p, &s, 0, &o, r);
        ck_assert_int_ne(out.status, CLCONE_CONVERGED);
        ck_assert_double_gt(clcone_error_of(&p, &o, r, 0, p.n), 1e-8);
        for (int v = 0; v < 2; ++v)
            for (int scene = 0; scene < 2; ++scene) { /* the local problem, then the scene */
                o = pyramid_options(k, solvers[v], 1e-8);
                out = solve(ctx, &p, &s, scene, &o, r);
                ck_assert_msg(out.status == CLCONE_CONVERGED, "pile %d %s%s: %s after %d iterations, error %g (%s)",
                              k, clcone_solver_name(solvers[v]), scene ? " (scene)" : "",
                              clcone_run_status_name(out.status), out.iters, out.error, out.reason);
                ck_assert_double_le(clcone_error_of(&p, &o, r, 0, p.n), 1.01e-8);
            }
        free(r);
        clcone_problem_free(&p);
        clcone_scene_free(&s);
    }
    clcone_context_free(ctx);
}
END_TEST

/* On the device the piles as one batch, twice: each problem gets the
 * status, iterations, error and bits it gets alone, and the second run
 * repeats the first (the default pyramid: a batch has one). */
START_TEST(pyramid_device_batch_is_alone_and_repeats)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem parts[NCASES];
    clcone_scene s[NCASES];
    for (int k = 0; k < NCASES; ++k) test_gen_pile(CASES[k].n, CASES[k].seed, &s[k], &parts[k]);
    test_converged_batch_is_alone(ctx, parts, NCASES, CLCONE_MODEL_PYRAMID, CLCONE_SOLVER_HYBRID, 1e-8);
    for (int k = 0; k < NCASES; ++k) clcone_scene_free(&s[k]);
    clcone_context_free(ctx);
}
END_TEST

/* At tol >= 1e-6 the device's hybrid never hands over: it is cgs, bit
 * for bit, for the problem and for its scene. */
START_TEST(pyramid_hybrid_is_cgs_at_loose_tolerances)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_scene s;
    clcone_problem p;
    test_gen_pile(CASES[0].n, CASES[0].seed, &s, &p);
    test_solvers_agree(ctx, &p, &s, CLCONE_MODEL_PYRAMID, CLCONE_SOLVER_CGS, CLCONE_SOLVER_HYBRID, 1e-6, 2000);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    clcone_context_free(ctx);
}
END_TEST

/* newton and hybrid are offered for the pyramid on both backends; lemke
 * stays the reference's default, the hybrid is the device's. */
START_TEST(pyramid_newton_offered)
{
    char buf[256];
    clcone_options o;
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    for (int dev = 0; dev < 2; ++dev) {
        clcone_offers_describe(CLCONE_FORM_BIT(CLCONE_FORM_LOCAL), CLCONE_MODEL_PYRAMID, dev, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "newton") && strstr(buf, "hybrid"), "%s", buf);
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_PYRAMID;
        clcone_options_resolve(&o, dev ? ctx : NULL);
        ck_assert_int_eq(o.solver, dev ? CLCONE_SOLVER_HYBRID : CLCONE_SOLVER_LEMKE);
    }
    clcone_context_free(ctx);
}
END_TEST

Suite *suite_newton_pyramid(void)
{
    Suite *s = suite_create("newton_pyramid");
    TCase *t = tcase_create("newton_pyramid");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, pyramid_newton_offered);
    tcase_add_test(t, pyramid_jacobian_matches_differences);
    tcase_add_loop_test(t, pyramid_converges_where_cgs_creeps, 0, 2);
    tcase_add_test(t, pyramid_device_batch_is_alone_and_repeats);
    tcase_add_test(t, pyramid_hybrid_is_cgs_at_loose_tolerances);
    suite_add_tcase(s, t);
    return s;
}
