/* SAP model (host/core/sap.c, host/opencl/sap.c): the analytic one-contact and
 * box answers of the regularised model, the device (PCG Newton) against the
 * dense reference on a stack and a pile, the monotone cost, float, bad
 * parameters. */
#include "testutil.h"
#include "cone.h"
#include "core/analysis.h"
#include "core/sap.h"
#include "solve/solve_entries.h"

#include <math.h>
#include <string.h>


static clcone_context *ctx_of(clcone_precision p)
{
    clcone_context *c = NULL;
    clcone_error e;
    ck_assert_msg(clcone_context_create(NULL, p, &c, &e) == CLCONE_OK, "%s", e.msg);
    return c;
}

static void sap_options(clcone_options *o, double tol)
{
    clcone_options_default(o);
    o->model = CLCONE_MODEL_SAP;
    o->tol = tol;
    o->max_iter = 100;
}

/* Solves and returns the result; v (6 per body) and the cost history
 * (cap 128) are filled when non-NULL. */
static clcone_prob_result sap_run(clcone_context *c, const clcone_scene *s, const clcone_options *o,
                                  clc_sap_line_search ls, double *r, double *v, double *hist, int *hlen)
{
    clc_sap_params prm;
    clcone_result res;
    clcone_error e;
    clcone_prob_result out;
    memset(&prm, 0, sizeof prm);
    prm.line_search = ls;
    prm.cost_history = hist;
    prm.history_cap = hist ? 128 : 0;
    prm.v = v;
    ck_assert_msg(clc_sap_solve_ex(c, s, o, &prm, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.nprob, 1);
    out = res.items[0];
    clcone_result_free(&res);
    if (hlen) *hlen = prm.history_len;
    return out;
}

/* The regularisation of contact c exactly as documented in sap_math.h:
 * w = ||W_cc||_F / 3, Rn = beta^2 / (4 pi^2) w, Rt = 1e-3 w. */
static void contact_R(const clcone_problem *p, int c, double beta, double *Rn, double *Rt)
{
    double f = 0;
    for (int b = p->row_ptr[c]; b < p->row_ptr[c + 1]; ++b)
        if (p->col[b] == c)
            for (int k = 0; k < 9; ++k) f += p->blocks[9 * b + k] * p->blocks[9 * b + k];
    *Rn = beta * beta / (4 * CONE_PI * CONE_PI) * sqrt(f) / 3;
    *Rt = 1e-3 * sqrt(f) / 3;
}

/* Dense W + R of a small local problem, row-major 3n x 3n. */
static void dense_w_plus_r(const clcone_problem *p, double beta, double *A)
{
    int m = 3 * p->n;
    memset(A, 0, sizeof *A * (size_t)m * (size_t)m);
    for (int c = 0; c < p->n; ++c) {
        double Rn, Rt;
        for (int b = p->row_ptr[c]; b < p->row_ptr[c + 1]; ++b)
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) A[(3 * c + i) * m + 3 * p->col[b] + j] = p->blocks[9 * b + 3 * i + j];
        contact_R(p, c, beta, &Rn, &Rt);
        A[(3 * c) * m + 3 * c] += Rn;
        A[(3 * c + 1) * m + 3 * c + 1] += Rt;
        A[(3 * c + 2) * m + 3 * c + 2] += Rt;
    }
}

/* Gaussian elimination with partial pivoting: x = A^-1 b (A destroyed). */
static void dense_solve(int m, double *A, const double *b, double *x)
{
    for (int i = 0; i < m; ++i) x[i] = b[i];
    for (int k = 0; k < m; ++k) {
        int piv = k;
        for (int i = k + 1; i < m; ++i)
            if (fabs(A[i * m + k]) > fabs(A[piv * m + k])) piv = i;
        for (int j = 0; j < m; ++j) {
            double t = A[k * m + j];
            A[k * m + j] = A[piv * m + j];
            A[piv * m + j] = t;
        }
        {
            double t = x[k];
            x[k] = x[piv];
            x[piv] = t;
        }
        for (int i = k + 1; i < m; ++i) {
            double f = A[i * m + k] / A[k * m + k];
            for (int j = k; j < m; ++j) A[i * m + j] -= f * A[k * m + j];
            x[i] -= f * x[k];
        }
    }
    for (int i = m - 1; i >= 0; --i) {
        double s = x[i];
        for (int j = i + 1; j < m; ++j) s -= A[i * m + j] * x[j];
        x[i] = s / A[i * m + i];
    }
}

/* One sphere-like body (mass 1, inertia 0.1) touching the ground at one
 * point below its centre, with free velocity (vx, 0, -g dt). */
static void one_contact_scene(clcone_scene *s, double mu, double vx)
{
    memset(s, 0, sizeof *s);
    s->nbodies = 1;
    s->ncontacts = 1;
    s->bodies = calloc(1, sizeof *s->bodies);
    s->contacts = calloc(1, sizeof *s->contacts);
    s->bodies[0].x[2] = 0.5;
    s->bodies[0].inv_mass = 1;
    s->bodies[0].inv_inertia[0] = s->bodies[0].inv_inertia[4] = s->bodies[0].inv_inertia[8] = 10;
    s->bodies[0].v[0] = vx;
    s->bodies[0].v[2] = -9.81 * 0.01;
    s->contacts[0].a = 0;
    s->contacts[0].b = -1;
    s->contacts[0].normal[2] = 1;
    s->contacts[0].mu = mu;
}

/* One contact: the SAP impulse minimises 1/2 g'(W + R)g + q'g over the
 * cone (the dual of the primal cost). W is diagonal here (the contact is
 * below the centre), so stiction is g = -(W + R)^-1 q when that lies in
 * the cone, and sliding is g_t = -mu g_n q_t/|q_t| with
 * g_n = (mu |q_t| - q_n) / (W_n + R_n + mu^2 (W_t + R_t)). */
START_TEST(sap_one_contact_stick_and_slide)
{
    static const double mus[] = {0.8, 0.05};
    for (int k = 0; k < 2; ++k)
        for (int dev = 0; dev < 2; ++dev) {
            clcone_scene s;
            clcone_problem p;
            clcone_error e;
            clcone_options o;
            clcone_context *c = dev ? ctx_of(CLCONE_DOUBLE) : NULL;
            double r[3], g[3], Rn, Rt, Wn, Wt, qt, stick;
            clcone_prob_result out;
            one_contact_scene(&s, mus[k], 0.05);
            ck_assert_msg(clcone_scene_to_local(&s, &p, &e) == CLCONE_OK, "%s", e.msg);
            contact_R(&p, 0, 1.0, &Rn, &Rt);
            Wn = p.blocks[0];
            Wt = p.blocks[4];
            ck_assert_double_eq_tol(p.blocks[8], Wt, 1e-14);
            ck_assert_double_eq_tol(p.blocks[1] + p.blocks[2] + p.blocks[5], 0, 1e-14);
            qt = hypot(p.q[1], p.q[2]);
            g[0] = -p.q[0] / (Wn + Rn);
            g[1] = -p.q[1] / (Wt + Rt);
            g[2] = -p.q[2] / (Wt + Rt);
            stick = hypot(g[1], g[2]) <= mus[k] * g[0];
            ck_assert_int_eq(stick, k == 0); /* mu = 0.8 sticks, 0.05 slides */
            if (!stick) {
                g[0] = (mus[k] * qt - p.q[0]) / (Wn + Rn + mus[k] * mus[k] * (Wt + Rt));
                g[1] = -mus[k] * g[0] * p.q[1] / qt;
                g[2] = -mus[k] * g[0] * p.q[2] / qt;
            }
            sap_options(&o, 1e-12);
            out = sap_run(c, &s, &o, CLCONE_SAP_LS_EXACT, r, NULL, NULL, NULL);
            ck_assert_msg(out.status == CLCONE_CONVERGED, "%s", out.reason);
            ck_assert_msg(test_rel_diff(r, g, 3) <= 1e-10, "mu %g device %d: r differs by %g", mus[k], dev,
                          test_rel_diff(r, g, 3));
            clcone_problem_free(&p);
            clcone_scene_free(&s);
            clcone_context_free(c);
        }
}
END_TEST

/* A unit box on the plane pushed gently along x: with mu = 0.5 every corner
 * sticks, so the impulses are the unconstrained minimiser
 * -(W + R)^-1 q of the dual (W is singular, W + R is not), strictly inside
 * the cones; for the near-rigid beta = 0.1 too, where the normal
 * compliance is 100 times smaller. The box barely slips: its tangential
 * velocity is -R_t g_t. */
START_TEST(sap_box_sticks)
{
    static const double betas[] = {1.0, 0.1};
    for (int k = 0; k < 2; ++k) {
        clcone_scene s;
        clcone_problem p;
        clcone_error e;
        clcone_options o;
        double r[12], g[12], A[144], q[12], v[6];
        clcone_prob_result out;
        ck_assert(clc_gen_stack(1, 0.5, 0.01, &s, &e) == CLCONE_OK);
        ck_assert_int_eq(s.ncontacts, 4);
        s.bodies[0].v[0] = 0.02;
        ck_assert(clcone_scene_to_local(&s, &p, &e) == CLCONE_OK);
        dense_w_plus_r(&p, betas[k], A);
        for (int i = 0; i < 12; ++i) q[i] = -p.q[i];
        dense_solve(12, A, q, g);
        for (int c = 0; c < 4; ++c)
            ck_assert_msg(hypot(g[3 * c + 1], g[3 * c + 2]) < 0.9 * 0.5 * g[3 * c], "corner %d does not stick", c);
        sap_options(&o, 1e-12);
        o.sap_beta = betas[k];
        out = sap_run(NULL, &s, &o, CLCONE_SAP_LS_EXACT, r, v, NULL, NULL);
        ck_assert_msg(out.status == CLCONE_CONVERGED, "%s", out.reason);
        ck_assert_msg(test_rel_diff(r, g, 12) <= 1e-9, "beta %g: r differs by %g", betas[k], test_rel_diff(r, g, 12));
        /* sticking: every contact velocity is exactly the compliance
         * -R g (tangentially a slip three orders below the push) */
        for (int c = 0; c < 4; ++c) {
            double u[3], Rn, Rt;
            clc_contact_velocity(&p, r, c, u);
            contact_R(&p, c, betas[k], &Rn, &Rt);
            /* u = W r + q cancels down from |q| ~ g dt: measure against q */
            ck_assert_double_eq_tol(u[0], -Rn * r[3 * c], 1e-9 * 9.81 * 0.01);
            ck_assert_double_eq_tol(u[1], -Rt * r[3 * c + 1], 1e-9 * 9.81 * 0.01);
            ck_assert_double_eq_tol(u[2], -Rt * r[3 * c + 2], 1e-9 * 9.81 * 0.01);
            ck_assert_msg(hypot(u[1], u[2]) < 1e-3 * 0.02, "corner %d slips at %g", c, hypot(u[1], u[2]));
        }
        clcone_problem_free(&p);
        clcone_scene_free(&s);
    }
}
END_TEST

static void make_scenes(clcone_scene *stack, clcone_scene *pile)
{
    clcone_error e;
    ck_assert_msg(clc_gen_stack(5, 0.5, 0.01, stack, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clc_gen_pile(40, 0.5, 0.01, 0.0, 7, pile, &e) == CLCONE_OK, "%s", e.msg);
}

/* Device Newton-PCG (double) against the dense reference, to relative
 * gradient 1e-10. Newton counts measured (POCL, double): stack 5 (ref) /
 * 5 (device, 15 CG), pile 28 / 31 (633 CG); the caps leave some room. The
 * pile is slow to enter its quadratic phase because its stick-slip
 * pattern is found by the line search a few contacts at a time: the
 * tangential regularisation Rt = 1e-3 w makes stiction nearly rigid. */
START_TEST(sap_device_matches_reference)
{
    clcone_scene sc[2];
    clcone_context *c = ctx_of(CLCONE_DOUBLE);
    static const int cap[2] = {8, 45};
    make_scenes(&sc[0], &sc[1]);
    for (int i = 0; i < 2; ++i) {
        size_t m = 3 * (size_t)sc[i].ncontacts, nv = 6 * (size_t)sc[i].nbodies;
        double *rr = calloc(m, sizeof *rr), *rd = calloc(m, sizeof *rd);
        double *vr = calloc(nv, sizeof *vr), *vd = calloc(nv, sizeof *vd), *vi = calloc(nv, sizeof *vi);
        clcone_options o;
        clcone_prob_result a, b;
        sap_options(&o, 1e-10);
        a = sap_run(NULL, &sc[i], &o, CLCONE_SAP_LS_EXACT, rr, vr, NULL, NULL);
        b = sap_run(c, &sc[i], &o, CLCONE_SAP_LS_EXACT, rd, vd, NULL, NULL);
        ck_assert_msg(a.status == CLCONE_CONVERGED && a.error <= 1e-10, "scene %d ref: %s %g", i, a.reason, a.error);
        ck_assert_msg(b.status == CLCONE_CONVERGED && b.error <= 1e-10, "scene %d dev: %s %g", i, b.reason, b.error);
        ck_assert_msg(a.iters <= cap[i] && b.iters <= cap[i], "scene %d: %d / %d Newton iterations", i, a.iters,
                      b.iters);
        ck_assert_int_eq(a.inner_iters, 0);
        ck_assert_int_ge(b.inner_iters, b.iters);
        ck_assert_msg(test_vel_diff(&sc[i], vd, vr) <= 1e-8, "scene %d: velocities differ by %g", i,
                      test_vel_diff(&sc[i], vd, vr));
        ck_assert_double_eq_tol(a.cost, b.cost, 1e-12 * fabs(a.cost));
        /* r are the impulses: v* + M^-1 J' r is the solution's v */
        clcone_scene_apply_impulses(&sc[i], rd, vi);
        for (size_t k = 0; k < nv; ++k) vi[k] += sc[i].bodies[k / 6].v[k % 6];
        ck_assert_msg(test_vel_diff(&sc[i], vi, vd) <= 1e-9, "scene %d: impulses give v off by %g", i,
                      test_vel_diff(&sc[i], vi, vd));
        free(rr);
        free(rd);
        free(vr);
        free(vd);
        free(vi);
    }
    clcone_context_free(c);
    clcone_scene_free(&sc[0]);
    clcone_scene_free(&sc[1]);
}
END_TEST

/* The cost never increases from one Newton iterate to the next (up to the
 * rounding of the cost itself, 1e-14 relative, once the steps are below
 * it), for the exact line search on both backends and for backtracking. */
START_TEST(sap_cost_decreases)
{
    clcone_scene sc[2];
    clcone_context *c = ctx_of(CLCONE_DOUBLE);
    make_scenes(&sc[0], &sc[1]);
    for (int i = 0; i < 2; ++i)
        for (int run = 0; run < 3; ++run) {
            double hist[128], *r = calloc(3 * (size_t)sc[i].ncontacts, sizeof *r);
            int len = 0;
            clcone_options o;
            clcone_prob_result out;
            sap_options(&o, 1e-10);
            out = sap_run(run == 1 ? c : NULL, &sc[i], &o, run == 2 ? CLCONE_SAP_LS_BACKTRACK : CLCONE_SAP_LS_EXACT, r,
                          NULL, hist, &len);
            ck_assert_msg(out.status == CLCONE_CONVERGED, "scene %d run %d: %s", i, run, out.reason);
            ck_assert_int_eq(len, out.iters + 1);
            ck_assert_double_eq(hist[len - 1], out.cost);
            ck_assert(hist[len - 1] < hist[0]);
            for (int k = 1; k < len; ++k)
                ck_assert_msg(hist[k] <= hist[k - 1] + 1e-14 * fabs(hist[k - 1]),
                              "scene %d run %d: cost rises at %d: %.17g -> %.17g", i, run, k, hist[k - 1], hist[k]);
            free(r);
        }
    clcone_context_free(c);
    clcone_scene_free(&sc[0]);
    clcone_scene_free(&sc[1]);
}
END_TEST

/* Float: converges to 1e-5 (float rounds at 1e-7 relative; the gradient
 * is a difference of momenta of the size of M v*), and lands within 1e-4
 * of the double reference. Measured: stack 5 Newton / 15 CG, pile 32 /
 * 624. Runs are bitwise reproducible. */
START_TEST(sap_float_device)
{
    clcone_scene sc[2];
    clcone_context *c = ctx_of(CLCONE_FLOAT);
    make_scenes(&sc[0], &sc[1]);
    for (int i = 0; i < 2; ++i) {
        size_t m = 3 * (size_t)sc[i].ncontacts, nv = 6 * (size_t)sc[i].nbodies;
        double *r1 = calloc(m, sizeof *r1), *r2 = calloc(m, sizeof *r2), *rr = calloc(m, sizeof *rr);
        double *vd = calloc(nv, sizeof *vd), *vr = calloc(nv, sizeof *vr);
        clcone_options o;
        clcone_prob_result out;
        sap_options(&o, 1e-5);
        out = sap_run(c, &sc[i], &o, CLCONE_SAP_LS_EXACT, r1, vd, NULL, NULL);
        ck_assert_msg(out.status == CLCONE_CONVERGED, "scene %d: %s (error %g)", i, out.reason, out.error);
        sap_run(c, &sc[i], &o, CLCONE_SAP_LS_EXACT, r2, NULL, NULL, NULL);
        ck_assert(memcmp(r1, r2, sizeof *r1 * m) == 0);
        o.tol = 1e-10;
        sap_run(NULL, &sc[i], &o, CLCONE_SAP_LS_EXACT, rr, vr, NULL, NULL);
        ck_assert_msg(test_vel_diff(&sc[i], vd, vr) <= 1e-4, "scene %d: float velocities differ by %g", i,
                      test_vel_diff(&sc[i], vd, vr));
        free(r1);
        free(r2);
        free(rr);
        free(vd);
        free(vr);
    }
    clcone_context_free(c);
    clcone_scene_free(&sc[0]);
    clcone_scene_free(&sc[1]);
}
END_TEST

/* The default tolerance on a float device is one float reaches: the pile
 * of issue 19 (gen pile --n 300 --seed 3, 900 contacts) ran 8,884 Newton
 * iterations into the time cap at 1e-5 (its float floor is 3.0e-5);
 * at the default it converges in 60 (measured). No time cap: the
 * iteration cap decides. */
START_TEST(sap_float_default_tolerance_converges)
{
    clcone_gen_params gp;
    clcone_world w;
    clcone_scene sc;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    clcone_context *c = ctx_of(CLCONE_FLOAT);
    double *r;
    clcone_gen_params_default(&gp);
    gp.n = 300;
    gp.seed = 3;
    ck_assert_msg(clcone_world_generate("pile", &gp, &w, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_world_contact_scene(&w, &sc, &e) == CLCONE_OK, "%s", e.msg);
    r = calloc(3 * (size_t)sc.ncontacts, sizeof *r);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SAP;
    o.soft_dt = w.dt;
    o.max_iter = 200;
    o.max_seconds = 0;
    ck_assert_msg(clcone_solve_scene(c, &sc, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(res.items[0].status == CLCONE_CONVERGED, "%s: error %g after %d iterations",
                  res.items[0].reason, res.items[0].error, res.items[0].iters);
    clcone_result_free(&res);
    free(r);
    clcone_scene_free(&sc);
    clcone_world_free(&w);
    clcone_context_free(c);
}
END_TEST

/* Through the public entry: clcone_solve_scene routes sap; a warm start
 * from the solution's impulses needs at most one Newton step. */
START_TEST(sap_public_entry_and_warm_start)
{
    clcone_scene s;
    clcone_error e;
    clcone_options o;
    clcone_result res;
    double *r, *r2;
    ck_assert(clc_gen_stack(5, 0.5, 0.01, &s, &e) == CLCONE_OK);
    r = calloc(3 * (size_t)s.ncontacts, sizeof *r);
    r2 = calloc(3 * (size_t)s.ncontacts, sizeof *r2);
    sap_options(&o, 1e-10);
    ck_assert_msg(clcone_solve_scene(NULL, &s, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    clcone_result_free(&res);
    memcpy(r2, r, sizeof *r * 3 * (size_t)s.ncontacts);
    o.warm_start = 1;
    ck_assert_msg(clcone_solve_scene(NULL, &s, &o, r2, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_le(res.items[0].iters, 1);
    ck_assert(test_rel_diff(r2, r, 3 * (size_t)s.ncontacts) <= 1e-9);
    clcone_result_free(&res);
    /* the ground carries the tower's weight impulse less what the normal
     * compliance absorbs as sinking velocity, a fraction ~ beta^2:
     * measured 80% at beta = 1, 99.7% at beta = 0.1 */
    {
        static const double betas[] = {1.0, 0.1}, lo[] = {0.75, 0.995}, hi[] = {0.85, 1.0};
        for (int k = 0; k < 2; ++k) {
            double ground = 0;
            sap_options(&o, 1e-10);
            o.sap_beta = betas[k];
            ck_assert_msg(clcone_solve_scene(NULL, &s, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
            clcone_result_free(&res);
            for (int c = 0; c < s.ncontacts; ++c)
                if (s.contacts[c].b < 0) ground += r[3 * c];
            ground /= 5 * 9.81 * 0.01;
            ck_assert_msg(ground >= lo[k] && ground <= hi[k], "beta %g: ground carries %g of the weight",
                          betas[k], ground);
        }
    }
    free(r);
    free(r2);
    clcone_scene_free(&s);
}
END_TEST

START_TEST(sap_bad_parameters)
{
    static const double bad_beta[] = {0.0, -1.0, NAN, INFINITY};
    clcone_scene s, big;
    clcone_problem p;
    clcone_error e;
    clcone_options o;
    clcone_result res;
    const clc_contract_row *row;
    clcone_context *c = ctx_of(CLCONE_DOUBLE);
    double *r;
    ck_assert(clc_gen_stack(2, 0.5, 0.01, &s, &e) == CLCONE_OK);
    r = calloc(3 * (size_t)s.ncontacts, sizeof *r);
    for (size_t k = 0; k < sizeof bad_beta / sizeof bad_beta[0]; ++k) {
        sap_options(&o, 1e-8);
        o.sap_beta = bad_beta[k];
        for (int dev = 0; dev < 2; ++dev) {
            ck_assert_int_eq(clcone_solve_scene(dev ? c : NULL, &s, &o, r, &res, &e), CLCONE_EINVAL);
            ck_assert_msg(strstr(e.msg, "sap_beta") != NULL, "%s", e.msg);
            ck_assert_ptr_null(res.items);
        }
    }
    /* Drake's contact parameters: finite and >= 0 */
    for (size_t k = 1; k < sizeof bad_beta / sizeof bad_beta[0]; ++k)
        for (int which = 0; which < 2; ++which) {
            sap_options(&o, 1e-8);
            *(which ? &o.sap_dissipation : &o.sap_stiffness) = bad_beta[k];
            ck_assert_int_eq(clcone_solve_scene(k % 2 ? c : NULL, &s, &o, r, &res, &e), CLCONE_EINVAL);
            ck_assert_msg(strstr(e.msg, which ? "sap_dissipation" : "sap_stiffness") != NULL, "%s", e.msg);
        }
    sap_options(&o, 1e-8);
    o.model = CLCONE_MODEL_COULOMB;
    ck_assert_int_eq(clcone_options_check_given(&o, CLCONE_GIVEN_SAP_STIFFNESS, 1, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "sap_stiffness does not apply"), "%s", e.msg);
    sap_options(&o, -1);
    ck_assert_int_eq(clcone_solve_scene(NULL, &s, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "tol") != NULL, "%s", e.msg);
    sap_options(&o, 1e-8);
    o.max_iter = 0;
    ck_assert_int_eq(clcone_solve_scene(c, &s, &o, r, &res, &e), CLCONE_EINVAL);
    /* local form: no body velocities */
    ck_assert(clcone_scene_to_local(&s, &p, &e) == CLCONE_OK);
    sap_options(&o, 1e-8);
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "model sap is solved on a scene (body form), not on a problem's local form"), "%s",
                  e.msg);
    ck_assert_int_eq(clcone_solve(c, &p, &o, r, &res, &e), CLCONE_ENOTSUP);
    ck_assert_int_eq(clc_contract_validate(CLCONE_FORM_BIT(CLCONE_FORM_LOCAL), &o, NULL, &row, &e), CLCONE_ENOTSUP);
    clcone_problem_free(&p);
    /* a pinned body has no mass matrix */
    s.bodies[0].inv_mass = 0;
    ck_assert_int_eq(clcone_solve_scene(NULL, &s, &o, r, &res, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "body 0") != NULL, "%s", e.msg);
    free(r);
    /* the dense reference's size limit */
    ck_assert(clc_gen_pile(250, 0.5, 0.01, 0.0, 7, &big, &e) == CLCONE_OK);
    r = calloc(3 * (size_t)big.ncontacts, sizeof *r);
    ck_assert_int_eq(clcone_solve_scene(NULL, &big, &o, r, &res, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "device") != NULL, "%s", e.msg);
    free(r);
    clcone_scene_free(&big);
    clcone_scene_free(&s);
    clcone_context_free(c);
}
END_TEST

/* A generated world stepped with SAP (reference, tol 1e-10) at stiffness
 * k and detection margin `margin`; every step must converge. The world is
 * left in w, the stepper in *sim (its last step in *last). */
static clcone_sim *sap_steps(clcone_world *w, const char *gen, const clcone_gen_params *gp, double k, double margin,
                             int steps, clcone_step_info *last)
{
    clcone_sim_options so;
    clcone_sim *sim;
    clcone_error e;
    ck_assert_msg(clcone_world_generate(gen, gp, w, &e) == CLCONE_OK, "%s", e.msg);
    clcone_sim_options_default(&so);
    so.solve.model = CLCONE_MODEL_SAP;
    so.solve.tol = 1e-10;
    so.solve.max_iter = 200;
    so.solve.sap_stiffness = k;
    so.margin = margin;
    ck_assert_msg(clcone_sim_create(w, NULL, &so, &sim, &e) == CLCONE_OK, "%s", e.msg);
    for (int t = 0; t < steps; ++t) {
        ck_assert_msg(clcone_sim_step(sim, last, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert_int_eq(last->solve.status, CLCONE_CONVERGED);
    }
    return sim;
}

/* One unit box on the ground stepped with SAP from its generated state
 * with stiffness k. */
static void sap_box_steps(clcone_world *w, double k, int steps, clcone_step_info *last)
{
    clcone_gen_params gp;
    clcone_gen_params_default(&gp);
    gp.n = 1;
    clcone_sim_free(sap_steps(w, "stack", &gp, k, 1e-3, steps, last));
}

/* Drake's SAP contact: with a stiffness k the normal compliance is
 * Rn = 1 / (dt k (dt + tau_d)) (above the near-rigid floor here) and
 * v_hat = -gap / (dt + tau_d), so at rest gamma_n = dt k (-gap): a box of
 * mass m on four corners sinks to m g / (4 k), the spring's own answer
 * (its oscillation decays well within the 4 s). */
START_TEST(sap_stiffness_sets_the_rest_penetration)
{
    static const double ks[2] = {1e3, 4e3};
    for (int i = 0; i < 2; ++i) {
        clcone_world w;
        clcone_step_info in;
        double expect;
        sap_box_steps(&w, ks[i], 400, &in);
        expect = w.shapes[0].mass * 9.81 / (4 * ks[i]);
        ck_assert_int_eq(w.s.ncontacts, 4);
        for (int c = 0; c < 4; ++c)
            ck_assert_msg(fabs(-w.s.contacts[c].gap - expect) <= 1e-3 * expect, "k %g: corner %d sank %.9g, not %.9g",
                          ks[i], c, -w.s.contacts[c].gap, expect);
        ck_assert_msg(in.ke_after < 1e-12, "k %g: still moving, %g J", ks[i], in.ke_after);
        clcone_world_free(&w);
    }
}
END_TEST

/* A 5-box stack at rest (2 s of SAP's default near-rigid contact). At
 * rest v = 0 for two steps running, so M (v - v*) = J' gamma says each
 * box's bottom contacts carry, summed, the weight above them times dt,
 * whatever R is; and in stiction gamma_n = -(u_n - v_hat_n) / Rn with
 * u_n = 0 and v_hat_n = -gap / (dt + tau_d), so the regularisation
 * predicts each contact's rest penetration: gap = -(dt + tau_d) Rn
 * gamma_n, tau_d = beta dt / pi. Both to 1e-6 relative: what is left of
 * the motion (kinetic energy below 1e-20 J) and the solve's 1e-10. */
START_TEST(sap_stack_at_rest_carries_the_weights)
{
    clcone_gen_params gp;
    clcone_world w;
    clcone_step_info in;
    clcone_sim *sim;
    clcone_options o;
    clc_sap_setup S;
    clcone_error e;
    const clcone_scene *ls;
    const double *r;
    double relax, g;
    clcone_gen_params_default(&gp);
    gp.n = 5;
    sim = sap_steps(&w, "stack", &gp, 0, 1e-3, 200, &in);
    ls = clcone_sim_last_scene(sim, NULL);
    r = clcone_sim_reactions(sim);
    ck_assert_msg(in.ke_after < 1e-20, "still moving: %g J", in.ke_after);
    ck_assert_int_eq(ls->ncontacts, in.contacts);
    sap_options(&o, 1e-10);
    o.soft_dt = w.dt;
    ck_assert_msg(clc_sap_setup_build(ls, &o, &S, &e) == CLCONE_OK, "%s", e.msg);
    relax = w.dt * (1 + 1 / CONE_PI);
    g = -w.gravity[2];
    for (int i = 0; i < w.s.nbodies; ++i) {
        double above = 0, carried = 0, zi = w.s.bodies[i].x[2];
        for (int j = 0; j < w.s.nbodies; ++j)
            if (w.s.bodies[j].x[2] >= zi) above += w.shapes[j].mass;
        for (int c = 0; c < ls->ncontacts; ++c) {
            int a = ls->contacts[c].a, b = ls->contacts[c].b;
            double za = a >= 0 ? w.s.bodies[a].x[2] : -HUGE_VAL, zb = b >= 0 ? w.s.bodies[b].x[2] : -HUGE_VAL;
            if ((za > zb ? a : b) == i) carried += r[3 * c];
        }
        ck_assert_msg(fabs(carried - above * g * w.dt) <= 1e-6 * above * g * w.dt,
                      "box %d carries %.12g N s, not %.12g", i, carried, above * g * w.dt);
    }
    for (int c = 0; c < ls->ncontacts; ++c) {
        double predicted = -relax * S.R[2 * c] * r[3 * c];
        ck_assert_msg(fabs(ls->contacts[c].gap - predicted) <= 1e-6 * fabs(predicted),
                      "contact %d: gap %.12g, Rn predicts %.12g", c, ls->contacts[c].gap, predicted);
    }
    clc_sap_setup_free(&S);
    clcone_sim_free(sim);
    clcone_world_free(&w);
}
END_TEST

/* A unit box sliding down a slope (theta 0.4, mu 0.2 < tan theta), rigid
 * (k = 0) and with k = 1e5. SAP's sliding impulse is the R-norm projection
 * onto the cone, on its boundary: gamma_t = mu gamma_n exactly, whatever
 * Rt (Rt only sets how far a sticking contact creeps, Rt |gamma_t| a
 * step, and the contact slides once |v_t| exceeds that). Its normal part
 * carries mu |v_t| / Rn, so the box lifts to the steady height where
 * v_hat_n = -gap / (dt + tau_d) balances it (gap = (dt + tau_d) mu |v_t|
 * less the compliance's share, 14 mm at 5 m/s: the margin is 5 cm so
 * that the lifted contacts stay detected); there v_n = 0 and gamma_n =
 * m g cos(theta) dt, so the box accelerates at Coulomb's g (sin(theta) -
 * mu cos(theta)). The lift settles by a factor tau_d / (dt + tau_d) = 0.24
 * a step, below 1e-10 after 20 steps; from then on the acceleration is
 * checked every step to 1e-7 relative (the solve's tolerance of 1e-10 on a
 * momentum of order m v, divided by m g dt), over 280 steps. */
START_TEST(sap_sliding_box_follows_coulomb)
{
    static const double ks[2] = {0, 1e5};
    const double th = 0.4, mu = 0.2;
    for (int i = 0; i < 2; ++i) {
        clcone_gen_params gp;
        clcone_world w;
        clcone_step_info in;
        clcone_sim *sim;
        clcone_error e;
        double down[3] = {-cos(th), 0, -sin(th)}, g, expect, vprev = 0;
        clcone_gen_params_default(&gp);
        gp.theta = th;
        gp.mu = mu;
        sim = sap_steps(&w, "incline", &gp, ks[i], 0.05, 20, &in);
        g = -w.gravity[2];
        expect = g * (sin(th) - mu * cos(th));
        for (int t = 0; t <= 280; ++t) {
            const double *v = w.s.bodies[0].v, *r;
            double vd = v[0] * down[0] + v[2] * down[2], sn = 0, st = 0;
            if (t > 0) {
                ck_assert_msg(fabs((vd - vprev) / w.dt - expect) <= 1e-7 * expect,
                              "k %g, step %d: acceleration %.12g, Coulomb %.12g", ks[i], t, (vd - vprev) / w.dt, expect);
                r = clcone_sim_reactions(sim);
                ck_assert_int_eq(in.contacts, 4);
                for (int c = 0; c < in.contacts; ++c) {
                    sn += r[3 * c];
                    st += hypot(r[3 * c + 1], r[3 * c + 2]);
                }
                ck_assert_msg(fabs(st - mu * sn) <= 1e-12 * sn, "k %g, step %d: gamma_t %.15g, mu gamma_n %.15g",
                              ks[i], t, st, mu * sn);
                ck_assert_msg(fabs(sn - g * cos(th) * w.dt) <= 1e-7 * sn, "k %g, step %d: gamma_n %.12g, m g cos dt %.12g",
                              ks[i], t, sn, g * cos(th) * w.dt);
            }
            vprev = vd;
            if (t < 280) {
                ck_assert_msg(clcone_sim_step(sim, &in, &e) == CLCONE_OK, "%s", e.msg);
                ck_assert_int_eq(in.solve.status, CLCONE_CONVERGED);
            }
        }
        clcone_sim_free(sim);
        clcone_world_free(&w);
    }
}
END_TEST

Suite *suite_sap(void)
{
    Suite *s = suite_create("sap");
    TCase *t = tcase_create("sap");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, sap_one_contact_stick_and_slide);
    tcase_add_test(t, sap_box_sticks);
    tcase_add_test(t, sap_device_matches_reference);
    tcase_add_test(t, sap_cost_decreases);
    tcase_add_test(t, sap_float_device);
    tcase_add_test(t, sap_float_default_tolerance_converges);
    tcase_add_test(t, sap_public_entry_and_warm_start);
    tcase_add_test(t, sap_bad_parameters);
    tcase_add_test(t, sap_stiffness_sets_the_rest_penetration);
    tcase_add_test(t, sap_stack_at_rest_carries_the_weights);
    tcase_add_test(t, sap_sliding_box_follows_coulomb);
    suite_add_tcase(s, t);
    return s;
}
