/* The semismooth Newton solver for exact Coulomb (ref/newton.c, and
 * kernels/newton.cl on the device): every shared problem to 1e-8 within a
 * cap on Newton steps on both backends, and the failures it must survive
 * (singular W, no solution, NaN, too large) reported as statuses with a
 * finite best iterate; on the device also batch = alone and the same bits
 * run to run. */
#include "testutil.h"
#include "ref/reference.h"
#include "cone.h"
#include "local_solve.h"
#include "newton_math.h"

#include <math.h>
#include <stdlib.h>

/* Most Newton steps any shared problem took (BoxesStack1-i100000-32: 51),
 * with room for rounding on another machine, and for the longest rescue:
 * the cap bounds each rescue's sweeps too, and Capsules-i125-1213 needs
 * one of 1,000 or more (a cap of 800 leaves it at 4.9e-7). */
#define NEWTON_STEP_CAP 2000

/* A problem of n contacts whose W is diagonal with diagonal blocks
 * diag[0..2] (the same for every contact) and q the same for every contact. */
static void diagonal_problem(clcone_problem *p, int n, const double diag[3], const double q[3], double mu)
{
    clcone_error e;
    ck_assert_int_eq(clcone_problem_alloc(p, n, n, &e), CLCONE_OK);
    for (int c = 0; c < n; ++c) {
        p->row_ptr[c + 1] = c + 1;
        p->col[c] = c;
        for (int a = 0; a < 3; ++a) {
            p->blocks[9 * c + 4 * a] = diag[a];
            p->q[3 * c + a] = q[a];
        }
        p->mu[c] = mu;
    }
}

/* Reads shared problem `name` into p and solves it on ctx (NULL: the
 * reference) from r = 0 (*r allocated; the caller frees both). */
static clcone_prob_result solve_shared(clcone_context *ctx, const char *name, clcone_solver v, double tol,
                                       int max_iter, clcone_problem *p, double **r)
{
    clcone_error e;
    ck_assert_msg(clcone_read_problem_hdf5(test_problem_path(name), p, &e) == CLCONE_OK, "%s", e.msg);
    *r = calloc(3 * (size_t)p->n, sizeof **r);
    return test_solve_one(ctx, p, NULL, CLCONE_MODEL_COULOMB, v, tol, max_iter, 0, *r);
}

/* Shared problem `name` to 1e-8 by solver v on ctx within `cap`
 * iterations; on the reference the error reported is the one measured
 * here, bit for bit (a device sums it in its own order). */
static void reaches_1e8(clcone_context *ctx, const char *name, clcone_solver v, int cap)
{
    clcone_problem p;
    double *r;
    clcone_prob_result out = solve_shared(ctx, name, v, 1e-8, cap, &p, &r);
    ck_assert_msg(out.status == CLCONE_CONVERGED, "%s: %s after %d iterations, error %g (%s)", name,
                  clcone_run_status_name(out.status), out.iters, out.error, out.reason);
    ck_assert_double_le(clcone_error_coulomb(&p, r, 0, p.n, NULL), 1e-8);
    if (!ctx) ck_assert_double_eq(out.error, clcone_error_coulomb(&p, r, 0, p.n, NULL));
    free(r);
    clcone_problem_free(&p);
}

START_TEST(newton_solves_every_shared_problem)
{
    reaches_1e8(NULL, SHARED_PROBLEMS[_i], CLCONE_SOLVER_NEWTON, NEWTON_STEP_CAP);
}
END_TEST

/* Stopped by the step cap, the solve returns its best iterate and the
 * error it reports is that iterate's. */
START_TEST(newton_cap_returns_best_iterate)
{
    clcone_problem p;
    double *r;
    clcone_prob_result out =
        solve_shared(NULL, "BoxesStack1-i100000-32.hdf5.dat", CLCONE_SOLVER_NEWTON, 1e-8, 3, &p, &r);
    ck_assert_int_eq(out.status, CLCONE_MAXITER);
    ck_assert_int_eq(out.iters, 3);
    ck_assert_double_lt(out.error, 1.0); /* the start r = 0 has error 1 */
    ck_assert_double_eq(out.error, clcone_error_coulomb(&p, r, 0, p.n, NULL));
    free(r);
    clcone_problem_free(&p);
}
END_TEST

/* W with no tangential stiffness (singular): every sticking or sliding
 * Newton system is singular; the contacts must slide at r_N = -q_N,
 * r_T = -mu r_N q_T / |q_T|, which Newton still finds. */
START_TEST(newton_singular_w_converges)
{
    const double normal_only[3] = {1, 0, 0}, q[3] = {-1, 0.5, 0};
    clcone_problem p;
    clcone_prob_result out;
    double r[9] = {0};
    diagonal_problem(&p, 3, normal_only, q, 0.5);
    out = test_solve_one(NULL, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-10, 50, 0, r);
    ck_assert_msg(out.status == CLCONE_CONVERGED, "%s: %s", clcone_run_status_name(out.status), out.reason);
    for (int c = 0; c < 3; ++c) {
        ck_assert_double_eq_tol(r[3 * c], 1, 1e-9);
        ck_assert_double_eq_tol(r[3 * c + 1], -0.5, 1e-9);
        ck_assert_double_eq_tol(r[3 * c + 2], 0, 1e-9);
    }
    clcone_problem_free(&p);
}
END_TEST

/* Two contacts whose normals push each other in (W indefinite, normal
 * part [[1, -2], [-2, 1]]) and q_N = -1: no r >= 0 makes both u_N >= 0
 * or r_N = 0, so no solution exists. The solve must end with a status and
 * a reason and a finite best iterate, not a crash, a hang or NaN. */
START_TEST(newton_no_solution_fails_safely)
{
    const double W[36] = {1, 0, 0, -2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                          -2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    const double q[6] = {-1, 0.1, 0, -1, 0, 0.1}, mu[2] = {0.5, 0.5};
    clcone_problem p;
    clcone_error e;
    clcone_prob_result out;
    double r[6] = {0};
    ck_assert_int_eq(clcone_problem_from_dense(&p, 2, W, q, mu, &e), CLCONE_OK);
    out = test_solve_one(NULL, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-8, 1000, 0, r);
    ck_assert_int_ne(out.status, CLCONE_CONVERGED);
    ck_assert_msg(out.reason[0] != 0, "no reason given");
    ck_assert_msg(isfinite(out.error) && out.error > 1e-8, "error %g", out.error);
    ck_assert_double_eq(out.error, clcone_error_coulomb(&p, r, 0, p.n, NULL));
    assert_finite(r, 6);
    clcone_problem_free(&p);
}
END_TEST

/* NaN in the data never reaches the solver: the solve refuses it, naming it. */
START_TEST(newton_nan_refused)
{
    const double one[3] = {1, 1, 1}, q[3] = {-1, 0, 0};
    clcone_problem p;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double r[6] = {0};
    diagonal_problem(&p, 2, one, q, 0.3);
    p.q[4] = NAN;
    clcone_options_default(&o);
    o.solver = CLCONE_SOLVER_NEWTON;
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "contact 1"), "%s", e.msg);
    clcone_problem_free(&p);
}
END_TEST

/* A problem past a work-group's limit on any device (16,384 contacts on
 * a CPU, 4,096 on a GPU) into p (and r = 0 for it), which newton on a
 * device refuses, naming the limit and the problem; o is left asking
 * for it. */
static void too_large_refused(clcone_context *ctx, clcone_problem *p, double **r, clcone_options *o)
{
    const double one[3] = {1, 1, 1}, q[3] = {-1, 0, 0};
    clcone_result res;
    clcone_error e;
    diagonal_problem(p, 16385, one, q, 0.3);
    *r = calloc(3 * (size_t)p->n, sizeof **r);
    clcone_options_default(o);
    o->solver = CLCONE_SOLVER_NEWTON;
    ck_assert_int_eq(clcone_solve(ctx, p, o, *r, &res, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "in one work-group") && strstr(e.msg, "problem 0 has 16385"), "%s", e.msg);
}

/* The reference's newton factors J sparse (KLU) and has no size limit
 * (the device's dense one stops at 512 contacts): a diagonal problem one
 * contact over that, a 576-contact wall, whose W is singular
 * (Levenberg-Marquardt's steps, by CHOLMOD), and a 1,408-contact grid,
 * each to 1e-8 in Newton's steps with at most one rescue. */
START_TEST(newton_goes_sparse_past_the_dense_limit)
{
    static const struct {
        const char *gen;
        int n;
        unsigned seed;
    } scenes[] = {{"wall", 12, 1}, {"grid", 8, 1}};
    const double one[3] = {1, 1, 1}, q[3] = {-1, 0, 0};
    clcone_problem p;
    double *r;
    clcone_prob_result out;
    diagonal_problem(&p, CLCONE_NEWTON_REF_MAX_CONTACTS + 1, one, q, 0.3);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    out = test_solve_one(NULL, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-8, 0, 0, r);
    ck_assert_msg(out.status == CLCONE_CONVERGED && out.error <= 1e-8, "diagonal: %s at %g (%s)",
                  clcone_run_status_name(out.status), out.error, out.reason);
    free(r);
    clcone_problem_free(&p);
    for (size_t g = 0; g < sizeof scenes / sizeof *scenes; ++g) {
        clcone_scene sc;
        test_gen_scene(scenes[g].gen, scenes[g].n, scenes[g].seed, &sc, NULL);
        ck_assert_int_gt(sc.ncontacts, CLCONE_NEWTON_REF_MAX_CONTACTS);
        r = calloc(3 * (size_t)sc.ncontacts, sizeof *r);
        out = test_solve_one(NULL, NULL, &sc, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-8, 300, 0, r);
        ck_assert_msg(out.status == CLCONE_CONVERGED && out.error <= 1e-8, "%s: %s at %g (%s)", scenes[g].gen,
                      clcone_run_status_name(out.status), out.error, out.reason);
        ck_assert_int_le(out.inner_iters, 50); /* one rescue's sweeps at most */
        assert_finite(r, 3 * sc.ncontacts);
        free(r);
        clcone_scene_free(&sc);
    }
}
END_TEST

/* Past the dense limit a device's newton takes its Newton systems by
 * GMRES, matrix-free (kernels/newton.cl): the reference's sparse cases
 * above (a diagonal problem one contact over the limit, the 576-contact
 * wall, the 1,408-contact grid) to 1e-8 in double, the wall's scene (in
 * its local form) as its problem, and the three as a batch each with the
 * bits it gets alone, run after run. */
START_TEST(newton_device_krylov_past_the_dense_limit)
{
    const double one[3] = {1, 1, 1}, q[3] = {-1, 0, 0};
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem parts[3];
    clcone_scene sc;
    clcone_prob_result a, b;
    double *ra, *rb;
    diagonal_problem(&parts[0], CLCONE_NEWTON_REF_MAX_CONTACTS + 1, one, q, 0.3);
    test_gen_scene("wall", 12, 1, &sc, &parts[1]);
    ck_assert_int_gt(sc.ncontacts, CLCONE_NEWTON_REF_MAX_CONTACTS);
    ra = calloc(3 * (size_t)sc.ncontacts, sizeof *ra);
    rb = calloc(3 * (size_t)sc.ncontacts, sizeof *rb);
    a = test_solve_one(ctx, &parts[1], NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-8, 0, 0, ra);
    b = test_solve_one(ctx, NULL, &sc, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-8, 0, 0, rb);
    ck_assert_msg(a.status == CLCONE_CONVERGED && a.error <= 1e-8, "wall: %s at %g (%s)",
                  clcone_run_status_name(a.status), a.error, a.reason);
    ck_assert_int_eq(b.status, a.status);
    ck_assert_int_eq(b.iters, a.iters);
    ck_assert_double_eq(b.error, a.error);
    ck_assert(memcmp(ra, rb, sizeof(double) * 3 * (size_t)sc.ncontacts) == 0);
    free(ra);
    free(rb);
    clcone_scene_free(&sc);
    test_gen_scene("grid", 8, 1, &sc, &parts[2]);
    clcone_scene_free(&sc);
    test_converged_batch_is_alone(ctx, parts, 3, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-8);
    clcone_context_free(ctx);
}
END_TEST

/* The hybrid is the default for coulomb on both backends (it is nsgs,
 * or cgs on a device, where they converge first, below); either alone can still be
 * asked for. */
START_TEST(hybrid_is_the_default)
{
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_options o;
    clcone_options_default(&o);
    clcone_options_resolve(&o, ctx);
    ck_assert_int_eq(o.solver, CLCONE_SOLVER_HYBRID);
    clcone_context_free(ctx);
    clcone_options_default(&o);
    clcone_options_resolve(&o, NULL);
    ck_assert_int_eq(o.solver, CLCONE_SOLVER_HYBRID);
    clcone_options_default(&o);
    o.solver = CLCONE_SOLVER_NSGS;
    clcone_options_resolve(&o, NULL);
    ck_assert_int_eq(o.solver, CLCONE_SOLVER_NSGS);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    clcone_options_resolve(&o, NULL);
    ck_assert_int_eq(o.solver, CLCONE_SOLVER_APGD);
}
END_TEST

/* Where nsgs converges before Newton's price is spent, the hybrid is
 * nsgs, bit for bit, at a loose tolerance or a tight one. */
START_TEST(hybrid_is_nsgs_where_nsgs_suffices)
{
    static const struct {
        const char *name;
        double tol;
    } cases[] = {{"Capsules-i125-1213.hdf5", 1e-6}, {"Rover4609.dat", 1e-8}, {"Confeti-ex03-Fc3D-SBM.dat", 1e-8}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        clcone_problem p, q;
        double *ra, *rb;
        clcone_prob_result a = solve_shared(NULL, cases[i].name, CLCONE_SOLVER_NSGS, cases[i].tol, 0, &p, &ra);
        clcone_prob_result b = solve_shared(NULL, cases[i].name, CLCONE_SOLVER_HYBRID, cases[i].tol, 0, &q, &rb);
        ck_assert_int_eq(a.status, CLCONE_CONVERGED);
        ck_assert_int_eq(b.status, CLCONE_CONVERGED);
        ck_assert_int_eq(a.iters, b.iters);
        ck_assert_msg(memcmp(ra, rb, 3 * (size_t)p.n * sizeof *ra) == 0, "%s: reactions differ", cases[i].name);
        free(ra);
        free(rb);
        clcone_problem_free(&p);
        clcone_problem_free(&q);
    }
}
END_TEST

/* Where nsgs crawls (BoxesStack1: 261,000 sweeps to 1e-8, 32,900 to
 * 1e-5), the hybrid hands over to Newton and converges in a tenth of the
 * iterations or less, at a tight tolerance and at a loose one. */
START_TEST(hybrid_switches_where_nsgs_stalls)
{
    static const double tols[] = {1e-8, 1e-5};
    for (int k = 0; k < 2; ++k) {
        clcone_problem p, q;
        double *r, *rn;
        clcone_prob_result out =
            solve_shared(NULL, "BoxesStack1-i100000-32.hdf5.dat", CLCONE_SOLVER_HYBRID, tols[k], 0, &p, &r);
        clcone_prob_result nsgs =
            solve_shared(NULL, "BoxesStack1-i100000-32.hdf5.dat", CLCONE_SOLVER_NSGS, tols[k], 0, &q, &rn);
        ck_assert_msg(out.status == CLCONE_CONVERGED && nsgs.status == CLCONE_CONVERGED, "%s", out.reason);
        ck_assert_int_lt(10 * out.iters, nsgs.iters);
        ck_assert_int_ge(out.inner_iters, 100); /* the first phase's sweeps */
        ck_assert_double_le(clcone_error_coulomb(&p, r, 0, p.n, NULL), tols[k]);
        free(r);
        free(rn);
        clcone_problem_free(&p);
        clcone_problem_free(&q);
    }
}
END_TEST

/* In a batch each problem switches on its own: BoxesStack1 hands over to
 * Newton, Confeti-ex03 finishes with nsgs, and each gives the iterations
 * and bits it gives alone. */
START_TEST(hybrid_batch_switches_per_problem)
{
    static const char *const names[2] = {"BoxesStack1-i100000-32.hdf5.dat", "Confeti-ex03-Fc3D-SBM.dat"};
    clcone_problem parts[2], batch;
    const clcone_problem *ptr[2] = {&parts[0], &parts[1]};
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double *rb, *r[2];
    clcone_prob_result alone[2];
    for (int i = 0; i < 2; ++i)
        alone[i] = solve_shared(NULL, names[i], CLCONE_SOLVER_DEFAULT, 1e-8, 0, &parts[i], &r[i]);
    ck_assert_int_lt(alone[0].iters, 2610); /* nsgs alone: 261,000 */
    ck_assert_int_eq(alone[1].inner_iters, alone[1].iters); /* sweeps only */
    ck_assert(clcone_batch_concat(ptr, 2, &batch, &e) == CLCONE_OK);
    rb = calloc(3 * (size_t)batch.n, sizeof *rb);
    clcone_options_default(&o);
    ck_assert_msg(clcone_solve(NULL, &batch, &o, rb, &res, &e) == CLCONE_OK, "%s", e.msg);
    for (int i = 0; i < 2; ++i) {
        ck_assert_int_eq(res.items[i].status, CLCONE_CONVERGED);
        ck_assert_int_eq(res.items[i].iters, alone[i].iters);
        ck_assert_int_eq(res.items[i].inner_iters, alone[i].inner_iters);
        ck_assert(memcmp(r[i], rb + 3 * batch.prob_off[i], sizeof(double) * 3 * (size_t)parts[i].n) == 0);
        free(r[i]);
        clcone_problem_free(&parts[i]);
    }
    clcone_result_free(&res);
    free(rb);
    clcone_problem_free(&batch);
}
END_TEST

/* newton is offered for coulomb (and ccp, tests/test_newton_ccp.c). */
START_TEST(newton_offered_for_coulomb)
{
    char buf[256];
    clcone_offers_describe(CLCONE_FORM_BIT(CLCONE_FORM_LOCAL), CLCONE_MODEL_COULOMB, 0, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "newton"), "%s", buf);
}
END_TEST

START_TEST(newton_device_solves_every_shared_problem)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    reaches_1e8(ctx, SHARED_PROBLEMS[_i], CLCONE_SOLVER_NEWTON, NEWTON_STEP_CAP);
    clcone_context_free(ctx);
}
END_TEST

/* Shared problems names[0..n) alone on ctx by solver v (tol, cap) into
 * parts, r and alone; each must converge, to tol by clcone's own measure
 * in double too. */
static void solve_each(clcone_context *ctx, const char *const *names, int n, clcone_solver v, double tol, int cap,
                       clcone_problem *parts, double **r, clcone_prob_result *alone)
{
    for (int i = 0; i < n; ++i) {
        alone[i] = solve_shared(ctx, names[i], v, tol, cap, &parts[i], &r[i]);
        ck_assert_msg(alone[i].status == CLCONE_CONVERGED, "%s: %s", names[i], alone[i].reason);
        ck_assert_double_le(clcone_error_coulomb(&parts[i], r[i], 0, parts[i].n, NULL), tol);
    }
}

/* Problems of a batch converge each on its own work-group: the same
 * steps and the same bits as alone, and a second solve repeats them. */
START_TEST(newton_device_batch_is_alone_and_repeats)
{
    static const char *const names[3] = {"BoxesStack1-i100000-32.hdf5.dat", "Rover1040.dat",
                                         "OneObject-i100000-499.hdf5.dat"};
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem parts[3];
    double *r[3];
    clcone_prob_result alone[3];
    solve_each(ctx, names, 3, CLCONE_SOLVER_NEWTON, 1e-8, NEWTON_STEP_CAP, parts, r, alone);
    test_batch_is_alone(ctx, parts, 3, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-8, NEWTON_STEP_CAP, alone, r);
    clcone_context_free(ctx);
}
END_TEST

/* The device's failure cases: a singular W still converges (Levenberg-
 * Marquardt); a problem with no solution ends with a status and a finite
 * best iterate whose error is the one reported, with newton and with the
 * hybrid; past a work-group's size is refused by newton, naming the
 * limit, and solved by the default. */
START_TEST(newton_device_fails_safely)
{
    const double normal_only[3] = {1, 0, 0}, q[3] = {-1, 0.5, 0};
    const double W[36] = {1, 0, 0, -2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                          -2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    const double qs[6] = {-1, 0.1, 0, -1, 0, 0.1}, mu[2] = {0.5, 0.5};
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem p;
    clcone_prob_result out;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double r[9] = {0}, *big;
    diagonal_problem(&p, 3, normal_only, q, 0.5);
    out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_NEWTON, 1e-10, 50, 0, r);
    ck_assert_msg(out.status == CLCONE_CONVERGED, "%s: %s", clcone_run_status_name(out.status), out.reason);
    ck_assert_double_eq_tol(r[0], 1, 1e-9);
    ck_assert_double_eq_tol(r[1], -0.5, 1e-9);
    clcone_problem_free(&p);

    /* the hybrid's sweeps run r to infinity there before Newton starts */
    for (int v = 0; v < 2; ++v) {
        memset(r, 0, sizeof r);
        ck_assert_int_eq(clcone_problem_from_dense(&p, 2, W, qs, mu, &e), CLCONE_OK);
        out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_COULOMB, v ? CLCONE_SOLVER_HYBRID : CLCONE_SOLVER_NEWTON,
                             1e-8, 300, 0, r);
        ck_assert_int_ne(out.status, CLCONE_CONVERGED);
        ck_assert_msg(isfinite(out.error) && out.error > 1e-8, "error %g", out.error);
        ck_assert_double_eq_tol(out.error, clcone_error_coulomb(&p, r, 0, p.n, NULL), 1e-12);
        assert_finite(r, 6);
        clcone_problem_free(&p);
    }

    /* the default, the hybrid, solves what newton refuses */
    too_large_refused(ctx, &p, &big, &o);
    o.solver = CLCONE_SOLVER_DEFAULT;
    o.tol = 1e-8;
    ck_assert_msg(clcone_solve(ctx, &p, &o, big, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    clcone_result_free(&res);
    free(big);
    clcone_problem_free(&p);
    clcone_context_free(ctx);
}
END_TEST

/* Most iterations (sweeps and Newton steps) the device hybrid took on a
 * shared problem (Capsules-i101-404: 8,440 sweeps), with room for
 * rounding on another device. */
#define HYBRID_ITER_CAP 20000

START_TEST(hybrid_device_solves_every_shared_problem)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    reaches_1e8(ctx, SHARED_PROBLEMS[_i], CLCONE_SOLVER_DEFAULT, HYBRID_ITER_CAP);
    clcone_context_free(ctx);
}
END_TEST

/* Problem name on ctx by cgs and by the default, which must agree bit
 * for bit: status, iterations, error and reactions. Returns the
 * default's result. */
static clcone_prob_result hybrid_is_cgs(clcone_context *ctx, const char *name, double tol, int max_iter)
{
    clcone_problem p, q;
    double *ra, *rb;
    clcone_prob_result a = solve_shared(ctx, name, CLCONE_SOLVER_CGS, tol, max_iter, &p, &ra);
    clcone_prob_result b = solve_shared(ctx, name, CLCONE_SOLVER_DEFAULT, tol, max_iter, &q, &rb);
    ck_assert_int_eq(a.status, b.status);
    ck_assert_int_eq(a.iters, b.iters);
    ck_assert_double_eq(a.error, b.error);
    ck_assert_msg(memcmp(ra, rb, 3 * (size_t)p.n * sizeof *ra) == 0, "%s: reactions differ", name);
    free(ra);
    free(rb);
    clcone_problem_free(&p);
    clcone_problem_free(&q);
    return b;
}

/* The hybrid is cgs, bit for bit, where cgs converges before Newton's
 * price is spent: its sweeps are cgs's. */
START_TEST(hybrid_device_is_cgs_where_cgs_suffices)
{
    static const char *const below[] = {"Rover4609.dat", "Confeti-ex03-Fc3D-SBM.dat", "Capsules-i125-1213.hdf5"};
    clcone_context *ctx = test_context(CLCONE_DOUBLE), *fctx = test_context(CLCONE_FLOAT);
    /* coulomb's switch decides at a loose tolerance too, in double (the
     * kernel's Newton) and in float (the host's): cgs crawls on
     * BoxesStack1 (over 100,000 sweeps to 1e-6, 28,630 to float's 1e-5) */
    for (int k = 0; k < 2; ++k) {
        clcone_problem p, q;
        double *ra, *rb, tol = k ? 1e-5 : 1e-6;
        clcone_context *c = k ? fctx : ctx;
        clcone_prob_result a = solve_shared(c, "BoxesStack1-i100000-32.hdf5.dat", CLCONE_SOLVER_CGS, tol, 0, &p, &ra);
        clcone_prob_result b = solve_shared(c, "BoxesStack1-i100000-32.hdf5.dat", CLCONE_SOLVER_DEFAULT, tol, 0, &q,
                                            &rb);
        ck_assert(a.status == CLCONE_CONVERGED && b.status == CLCONE_CONVERGED);
        ck_assert_int_lt(10 * b.iters, a.iters);
        free(ra);
        free(rb);
        clcone_problem_free(&p);
        clcone_problem_free(&q);
    }
    for (size_t i = 0; i < sizeof below / sizeof *below; ++i) {
        clcone_prob_result b = hybrid_is_cgs(ctx, below[i], 1e-8, 0);
        ck_assert_int_eq(b.status, CLCONE_CONVERGED);
        ck_assert_int_eq(b.inner_iters, b.iters); /* sweeps only */
    }
    clcone_context_free(ctx);
    clcone_context_free(fctx);
}
END_TEST

/* Generated scene `name` of size n in local form (r = 0 allocated for
 * it): with `exported`, the contact problem `clcone export` writes
 * (gravity in its q), else the scene's bodies at rest. */
static void generated_local(const char *name, int n, int exported, clcone_problem *p, double **r)
{
    clcone_gen_params gp;
    clcone_world w;
    clcone_error e;
    clcone_gen_params_default(&gp);
    gp.n = n;
    clcone_scene sc;
    ck_assert_msg(clcone_world_generate(name, &gp, &w, &e) == CLCONE_OK, "%s", e.msg);
    if (exported) ck_assert_msg(clcone_world_contact_scene(&w, &sc, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_scene_to_local(exported ? &sc : &w.s, p, &e) == CLCONE_OK, "%s", e.msg);
    *r = calloc(3 * (size_t)p->n, sizeof **r);
    if (exported) clcone_scene_free(&sc);
    clcone_world_free(&w);
}

/* A pile of spheres in local form with more contacts than the dense
 * path takes (r = 0 allocated for it). */
static void large_pile(clcone_problem *p, double **r)
{
    generated_local("pile", 200, 0, p, r);
    ck_assert_int_gt(p->n, CLCONE_NEWTON_REF_MAX_CONTACTS);
}

/* In a device batch each problem switches on its own, and runs as it
 * runs alone, bit for bit, run after run: BoxesStack1 hands over to
 * Newton (cgs alone: 260,000 sweeps); Capsules-i125-1213, whose plateau
 * at 2,048 sweeps would run into the cap of 3,000 at its pace, hands
 * over at half the cap and converges before the 2,360 sweeps it takes
 * alone (with no cap in sight it keeps its sweeps: below); a pile over
 * the dense limit runs the sweeps only, which are cgs's. */
START_TEST(hybrid_device_batch_switches_per_problem)
{
    static const char *const names[2] = {"BoxesStack1-i100000-32.hdf5.dat", "Capsules-i125-1213.hdf5"};
    enum { NB = 3, CAP = 3000 }; /* Capsules-i125-1213 takes 2,360 sweeps */
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_problem parts[NB];
    double *r[NB], *rc;
    clcone_prob_result alone[NB], cgs;
    for (int i = 0; i < 2; ++i)
        alone[i] = solve_shared(ctx, names[i], CLCONE_SOLVER_DEFAULT, 1e-8, CAP, &parts[i], &r[i]);
    large_pile(&parts[2], &r[2]);
    rc = calloc(3 * (size_t)parts[2].n, sizeof *rc);
    alone[2] = test_solve_one(ctx, &parts[2], NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, 1e-8, CAP, 0, r[2]);
    cgs = test_solve_one(ctx, &parts[2], NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_CGS, 1e-8, CAP, 0, rc);
    ck_assert_int_eq(alone[0].status, CLCONE_CONVERGED);
    ck_assert_int_lt(alone[0].inner_iters, alone[0].iters); /* switched */
    ck_assert_int_lt(alone[0].iters, 2600);
    ck_assert_int_eq(alone[1].status, CLCONE_CONVERGED);
    ck_assert_int_lt(alone[1].inner_iters, alone[1].iters); /* switched */
    ck_assert_int_ge(alone[1].inner_iters, CAP / 2);
    ck_assert_int_lt(alone[1].iters, 2360);
    ck_assert_int_eq(alone[2].inner_iters, alone[2].iters);
    ck_assert_int_eq(alone[2].iters, cgs.iters);
    ck_assert_int_eq(alone[2].status, cgs.status);
    ck_assert(memcmp(r[2], rc, sizeof(double) * 3 * (size_t)parts[2].n) == 0);
    assert_finite(r[2], 3 * parts[2].n);
    free(rc);
    test_batch_is_alone(ctx, parts, NB, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, 1e-8, CAP, alone, r);
    clcone_context_free(ctx);
}
END_TEST

/* In float the hybrid switches too, below 1e-6: OneObject-i100000-499
 * hands over to Newton after its sweeps and reaches 1e-7 (cgs alone:
 * 1,960 sweeps to 1e-8 in double), Confeti-ex03 finishes with the
 * sweeps; in a batch each as alone. */
START_TEST(hybrid_device_float_switches)
{
    static const char *const names[2] = {"OneObject-i100000-499.hdf5.dat", "Confeti-ex03-Fc3D-SBM.dat"};
    enum { CAP = 3000 };
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_problem parts[2];
    double *r[2];
    clcone_prob_result alone[2];
    solve_each(ctx, names, 2, CLCONE_SOLVER_DEFAULT, 1e-7, CAP, parts, r, alone);
    ck_assert_int_lt(alone[0].inner_iters, alone[0].iters);
    ck_assert_int_eq(alone[1].inner_iters, alone[1].iters);
    test_batch_is_alone(ctx, parts, 2, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, 1e-7, CAP, alone, r);
    clcone_context_free(ctx);
}
END_TEST

/* In float the hybrid hands a problem within the dense limit to the
 * host's Newton in double: on this pile (`gen pile --n 8 --seed 35`, 24
 * contacts) float's own Newton steps lowered the merit while the error
 * grew, and it took 48 s to 5e-7 (later it gave up and ended at the
 * iteration cap); the host's converges after the sweeps. */
START_TEST(hybrid_device_float_hands_newton_to_the_host)
{
    enum { CAP = 20000 };
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_gen_params gp;
    clcone_world w;
    clcone_scene sc;
    clcone_problem p;
    clcone_error e;
    clcone_prob_result out;
    double *r;
    clcone_gen_params_default(&gp);
    gp.n = 8;
    gp.seed = 35;
    ck_assert_msg(clcone_world_generate("pile", &gp, &w, &e) == CLCONE_OK && clcone_world_contact_scene(&w, &sc, &e) ==
                      CLCONE_OK && clcone_scene_to_local(&sc, &p, &e) == CLCONE_OK, "%s", e.msg);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_HYBRID, 5e-7, CAP, 0, r);
    ck_assert_int_eq(out.status, CLCONE_CONVERGED);
    ck_assert_int_lt(out.iters, CAP);
    ck_assert_int_lt(out.inner_iters, out.iters); /* Newton's steps after the sweeps */
    ck_assert(out.error <= 5e-7);
    ck_assert(isfinite(out.error) && out.error < 1e-3);
    assert_finite(r, 3 * p.n);
    free(r);
    clcone_problem_free(&p);
    clcone_scene_free(&sc);
    clcone_world_free(&w);
    clcone_context_free(ctx);
}
END_TEST

/* A simulator's step, capped as `simulate` caps each: `gen pile --n 60`
 * (180 contacts) at 1,000 iterations, whose sweeps' pace would not reach
 * tol within the cap and whose Newton (priced at about 10,800 sweeps)
 * never ran: every backend stopped at the cap (3.7e-4 on the reference,
 * 1.1e-3 on the device). And `gen stack --n 10` (40 contacts) at 1e-4
 * capped at 500, whose pace looked sufficient at sweep 256 and had
 * stalled before the switch's next look at 512: 5.1e-4 at the cap on
 * every backend. Newton now gets the cap's second half, and the switch
 * looks again halfway to the cap; both converge on the reference and in
 * double and float. */
START_TEST(hybrid_leaves_newton_room_under_the_cap)
{
    static const struct {
        const char *gen;
        int n, cap, contacts;
        double tol, float_tol;
    } scenes[] = {{"pile", 60, 1000, 150, 1e-8, 1e-5}, {"stack", 10, 500, 40, 1e-4, 1e-4}};
    static const struct {
        int device;
        clcone_precision prec;
    } backends[] = {{0, CLCONE_DOUBLE}, {1, CLCONE_DOUBLE}, {1, CLCONE_FLOAT}};
    for (size_t g = 0; g < sizeof scenes / sizeof *scenes; ++g) {
        clcone_scene sc;
        test_gen_scene(scenes[g].gen, scenes[g].n, 1, &sc, NULL);
        ck_assert_int_ge(sc.ncontacts, scenes[g].contacts);
        for (size_t k = 0; k < sizeof backends / sizeof *backends; ++k) {
            clcone_context *ctx = backends[k].device ? test_context(backends[k].prec) : NULL;
            double *r = calloc(3 * (size_t)sc.ncontacts, sizeof *r);
            double tol = backends[k].prec == CLCONE_FLOAT ? scenes[g].float_tol : scenes[g].tol;
            clcone_prob_result out = test_solve_one(ctx, NULL, &sc, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, tol,
                                                    scenes[g].cap, 0, r);
            ck_assert_msg(out.status == CLCONE_CONVERGED, "%s, backend %zu: %s at %g (%s)", scenes[g].gen, k,
                          clcone_run_status_name(out.status), out.error, out.reason);
            ck_assert_int_lt(out.inner_iters, out.iters); /* Newton's steps after the sweeps */
            assert_finite(r, 3 * sc.ncontacts);
            free(r);
            clcone_context_free(ctx);
        }
        clcone_scene_free(&sc);
    }
}
END_TEST

/* Progress calls counted (behind the library's lock when on threads). */
static void count_progress(void *user, int prob, int iter, double error)
{
    (void)prob;
    (void)iter;
    (void)error;
    ++*(int *)user;
}

/* A batch of tiny piles (`gen pile --n 3..10`, 9-30 contacts), the
 * scenes a simulator meets, whose float hybrid hands problems to the
 * host's Newton: on four host threads, with a progress callback, each
 * problem gets the bits, status and iterations it gets on one; the
 * reference's batch likewise; threads past the limit are refused. */
START_TEST(hybrid_hand_overs_on_threads)
{
    enum { NB = 8 };
    clcone_context *ctx[2] = {test_context(CLCONE_FLOAT), NULL};
    const clcone_problem *ptr[NB];
    clcone_problem parts[NB], batch;
    clcone_options o;
    clcone_result res[2];
    clcone_error e;
    double *rb[2];
    for (int i = 0; i < NB; ++i) {
        clcone_gen_params gp;
        clcone_world w;
        clcone_scene sc;
        clcone_gen_params_default(&gp);
        gp.n = 3 + i;
        gp.seed = 30 + i;
        ck_assert_msg(clcone_world_generate("pile", &gp, &w, &e) == CLCONE_OK && clcone_world_contact_scene(&w, &sc, &e)
                          == CLCONE_OK && clcone_scene_to_local(&sc, &parts[i], &e) == CLCONE_OK, "%s", e.msg);
        ptr[i] = &parts[i];
        clcone_scene_free(&sc);
        clcone_world_free(&w);
    }
    ck_assert(clcone_batch_concat(ptr, NB, &batch, &e) == CLCONE_OK);
    for (int b = 0; b < 2; ++b) {
        int handed = 0, calls = 0;
        clcone_options_default(&o);
        o.tol = 5e-7;
        o.max_iter = 20000;
        for (int run = 0; run < 2; ++run) {
            o.threads = run ? 4 : 0;
            o.progress = run ? count_progress : NULL;
            o.progress_user = &calls;
            rb[run] = calloc(3 * (size_t)batch.n, sizeof *rb[run]);
            ck_assert_msg(clcone_solve(ctx[b], &batch, &o, rb[run], &res[run], &e) == CLCONE_OK, "%s", e.msg);
        }
        for (int i = 0; i < NB; ++i) {
            ck_assert_int_eq(res[0].items[i].status, CLCONE_CONVERGED);
            ck_assert_int_eq(res[1].items[i].status, res[0].items[i].status);
            ck_assert_int_eq(res[1].items[i].iters, res[0].items[i].iters);
            ck_assert_int_eq(res[1].items[i].inner_iters, res[0].items[i].inner_iters);
            handed += res[0].items[i].inner_iters < res[0].items[i].iters;
        }
        ck_assert_msg(handed >= 2, "%d problems went to Newton", handed); /* the threads had work */
        ck_assert_int_gt(calls, 0);
        ck_assert(memcmp(rb[0], rb[1], sizeof(double) * 3 * (size_t)batch.n) == 0);
        for (int run = 0; run < 2; ++run) {
            clcone_result_free(&res[run]);
            free(rb[run]);
        }
    }
    o.threads = CLCONE_SOLVE_THREADS + 1;
    o.progress = NULL;
    rb[0] = calloc(3 * (size_t)batch.n, sizeof *rb[0]);
    ck_assert_int_eq(clcone_solve(NULL, &batch, &o, rb[0], &res[0], &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "threads=257"), "%s", e.msg);
    free(rb[0]);
    for (int i = 0; i < NB; ++i) clcone_problem_free(&parts[i]);
    clcone_problem_free(&batch);
    clcone_context_free(ctx[0]);
}
END_TEST

/* The history of problem p by the hybrid to 1e-8 on ctx (NULL: the
 * reference) shows a try (Newton checked at every iteration) followed by
 * sweeps (checked every 10), its iterations rising throughout. A device
 * keeps a history on its multi-launch loop, whose switch hands the
 * problem to the host's Newton as the kernel would run its own. */
static void sweeps_after_a_try(clcone_context *ctx, const clcone_problem *p)
{
    clcone_history h = {NULL, 0, 0, 0};
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double *r = calloc(3 * (size_t)p->n, sizeof *r);
    int newton = 0, back = 0;
    clcone_options_default(&o);
    o.tol = 1e-8;
    o.history = &h;
    ck_assert_msg(clcone_solve(ctx, p, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    ck_assert_int_gt(res.items[0].inner_iters, 0);
    for (int k = 1; k < h.count; ++k) {
        int step = h.points[k].iter - h.points[k - 1].iter;
        ck_assert_int_gt(step, 0);
        newton = newton || step == 1;
        back = back || (newton && step == o.check_every);
    }
    ck_assert_msg(back, "no sweeps after a try (%d checks)", h.count);
    clcone_history_free(&h);
    clcone_result_free(&res);
    free(r);
}

/* The hybrid's early try (newton_hybrid_switch): where the sweeps' pace
 * prices tol above Newton's cost, Newton gets a try once the sweeps have
 * spent a try's share of it, not the whole: OneObject-i1028-138
 * converges in 298 iterations on the reference and 230 on a device
 * (522 sweeps before). A try that does not converge goes back to the
 * sweeps and the solve still converges: a 20-box stack, whose first
 * tries give up (the reference's history shows it). */
START_TEST(hybrid_tries_newton_early)
{
    clcone_context *ctx = _i ? test_context(CLCONE_DOUBLE) : NULL;
    clcone_problem p;
    double *r;
    clcone_prob_result out;
    reaches_1e8(ctx, "OneObject-i1028-138.hdf5.dat", CLCONE_SOLVER_DEFAULT, 400);
    generated_local("stack", 20, 1, &p, &r);
    out = test_solve_one(ctx, &p, NULL, CLCONE_MODEL_COULOMB, CLCONE_SOLVER_DEFAULT, 1e-8, 0, 0, r);
    ck_assert_msg(out.status == CLCONE_CONVERGED, "%s", out.reason);
    ck_assert_double_le(clcone_error_coulomb(&p, r, 0, p.n, NULL), _i ? 1.1e-8 : 1e-8);
    sweeps_after_a_try(ctx, &p);
    free(r);
    clcone_problem_free(&p);
    if (ctx) clcone_context_free(ctx);
}
END_TEST

Suite *suite_newton(void)
{
    Suite *s = suite_create("newton");
    TCase *t = tcase_create("newton");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, newton_solves_every_shared_problem, 0, NSHARED_PROBLEMS);
    tcase_add_test(t, newton_cap_returns_best_iterate);
    tcase_add_test(t, newton_singular_w_converges);
    tcase_add_test(t, newton_no_solution_fails_safely);
    tcase_add_test(t, newton_nan_refused);
    tcase_add_test(t, newton_goes_sparse_past_the_dense_limit);
    tcase_add_test(t, newton_offered_for_coulomb);
    tcase_add_test(t, hybrid_is_the_default);
    tcase_add_test(t, hybrid_is_nsgs_where_nsgs_suffices);
    tcase_add_test(t, hybrid_switches_where_nsgs_stalls);
    tcase_add_test(t, hybrid_batch_switches_per_problem);
    tcase_add_loop_test(t, newton_device_solves_every_shared_problem, 0, NSHARED_PROBLEMS);
    tcase_add_test(t, newton_device_batch_is_alone_and_repeats);
    tcase_add_test(t, newton_device_fails_safely);
    tcase_add_test(t, newton_device_krylov_past_the_dense_limit);
    tcase_add_loop_test(t, hybrid_device_solves_every_shared_problem, 0, NSHARED_PROBLEMS);
    tcase_add_test(t, hybrid_device_is_cgs_where_cgs_suffices);
    tcase_add_test(t, hybrid_device_batch_switches_per_problem);
    tcase_add_test(t, hybrid_device_float_switches);
    tcase_add_test(t, hybrid_device_float_hands_newton_to_the_host);
    tcase_add_test(t, hybrid_hand_overs_on_threads);
    tcase_add_test(t, hybrid_leaves_newton_room_under_the_cap);
    tcase_add_loop_test(t, hybrid_tries_newton_early, 0, 2);
    suite_add_tcase(s, t);
    return s;
}
