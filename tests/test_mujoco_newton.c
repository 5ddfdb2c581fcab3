/* MuJoCo's Newton method on MuJoCo's primal problem (mujoco/mj_primal.h,
 * ref/primal_newton.h; `clcone mujoco --solver newton`) against MuJoCo's
 * own Newton at the same states, and its failures. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clcone/clcone.h>
#include "testutil.h"

#ifdef CLCONE_MUJOCO
#include "mujoco/adapter.h"
#include "mujoco/mj_primal.h"
#include "ref/primal_newton.h"
#include "ref/primal_prox.h"
#include "core/blocks.h"
#include "solve/blocks_solve.h"
#include "cone.h"
#include "block_sets.h"
#include "mujoco_fixture.h"

static clc_mujoco *adapter(clcone_solver solver, double tol, const char *label)
{
    clcone_options o;
    clc_mujoco *a;
    clcone_error e;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.solver = solver;
    o.tol = tol;
    ck_assert_msg(clc_mujoco_create(NULL, &o, label, &a, &e) == CLCONE_OK, "%s", e.msg);
    return a;
}

/* What K steps of f's model with solver at tol gave against MuJoCo's
 * Newton (f->mc's tolerance) at each state. */
typedef struct run_stats {
    double fdiff, adiff; /* the largest force and qacc differences */
    int iters, most_rows; /* the most iterations of a step, rows of a state */
    unsigned kinds;      /* a bit per mjtConstraint seen */
} run_stats;

static run_stats run(mj_fixture *f, clcone_solver solver, int K, double tol)
{
    clc_mujoco *a = adapter(solver, tol, f->path);
    clc_mujoco_stats st;
    clcone_error e;
    run_stats r = {0, 0, 0, 0, 0};
    for (int k = 0; k < K; ++k) {
        ck_assert_msg(clc_mujoco_step(a, f->m, f->d, f->mc, &st, &e) == CLCONE_OK, "step %d: %s", k, e.msg);
        if (st.blocks) ck_assert_msg(st.res.status == CLCONE_CONVERGED, "step %d: %s", k, st.res.reason);
        r.fdiff = fmax(r.fdiff, st.force_rel_diff);
        r.adiff = fmax(r.adiff, st.qacc_rel_diff);
        if (st.res.iters > r.iters) r.iters = st.res.iters;
        if (st.nefc > r.most_rows) r.most_rows = st.nefc;
        for (int i = 0; i < f->d->nefc; ++i) r.kinds |= 1u << f->d->efc_type[i];
    }
    clc_mujoco_free(a);
    return r;
}

/* Every row kind (equality, friction loss, limit, frictionless,
 * pyramidal and elliptic contacts of condim 3, 4 and 6), the rows that
 * no dof moves (the hinged sphere: an island without dofs) and the
 * humanoid: forces and qacc within 1e-7 of MuJoCo's Newton at every
 * state, both at tolerance 1e-14 (measured: all kinds elliptic 2.3e-8,
 * the rest below 1e-12; at tolerance 1e-10 both stop on a small decrease
 * up to 7e-6 apart on the all-kinds model). */
START_TEST(newton_matches_mujoco_newton)
{
    static const struct {
        const char *xml;
        int key, steps;
        unsigned kinds;
    } cases[] = {
        {ALL_KINDS_XML("elliptic"), 0, 200,
         1u << mjCNSTR_EQUALITY | 1u << mjCNSTR_FRICTION_DOF | 1u << mjCNSTR_LIMIT_JOINT |
             1u << mjCNSTR_CONTACT_FRICTIONLESS | 1u << mjCNSTR_CONTACT_ELLIPTIC},
        {ALL_KINDS_XML("pyramidal"), 0, 200, 1u << mjCNSTR_CONTACT_PYRAMIDAL},
        {HINGE_SPHERE_XML("elliptic"), 0, 40, 1u << mjCNSTR_CONTACT_ELLIPTIC},
        {HINGE_SPHERE_XML("pyramidal"), 0, 40, 1u << mjCNSTR_CONTACT_PYRAMIDAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        mj_fixture f;
        run_stats r;
        mj_open(&f, cases[i].xml, cases[i].key);
        f.mc->opt.tolerance = 1e-14;
        r = run(&f, CLCONE_SOLVER_NEWTON, cases[i].steps, 1e-14);
        fprintf(stderr, "mujoco newton case %zu: force_rel_diff %.3e qacc_rel_diff %.3e, at most %d iterations\n", i,
                r.fdiff, r.adiff, r.iters);
        ck_assert_msg(r.fdiff <= 1e-7 && r.adiff <= 1e-7, "case %zu: force %g qacc %g", i, r.fdiff, r.adiff);
        ck_assert_msg((r.kinds & cases[i].kinds) == cases[i].kinds, "case %zu: kinds %#x", i, r.kinds);
        mj_close(&f);
    }
    {
        mj_fixture f;
        run_stats r;
        mj_open_file(&f, "humanoid/humanoid.xml");
        f.mc->opt.tolerance = 1e-14;
        r = run(&f, CLCONE_SOLVER_NEWTON, 100, 1e-14);
        fprintf(stderr, "mujoco newton humanoid: force_rel_diff %.3e qacc_rel_diff %.3e, at most %d iterations\n",
                r.fdiff, r.adiff, r.iters);
        ck_assert_msg(r.fdiff <= 1e-7 && r.adiff <= 1e-7, "humanoid: force %g qacc %g", r.fdiff, r.adiff);
        mj_close(&f);
    }
}
END_TEST

/* Stonehenge with elliptic cones, every stone sliding (1 m/s along x at
 * the start): its large island (360 dofs) goes through the sparse
 * factor, where the rows of a cone, to which MuJoCo gives one chain of
 * dofs, are one run of J's transpose and a sliding (middle-zone) cone's
 * J'HcJ is scattered at once (ref/primal_newton.c): forces and qacc
 * within 5e-7 of MuJoCo's Newton over 30 steps (measured 3.3e-8 and
 * 5.4e-8: both stop by their own rules at 1e-14), and a step in at most
 * 20 Newton iterations (measured 11), which a wrong Hessian would not
 * keep. */
START_TEST(elliptic_sparse_matches_mujoco_newton)
{
    mj_fixture f;
    run_stats r;
    mj_open_file(&f, "replicate/stonehenge.xml");
    f.m->opt.cone = f.mc->opt.cone = mjCONE_ELLIPTIC;
    for (int j = 0; j < f.m->njnt; ++j)
        if (f.m->jnt_type[j] == mjJNT_FREE) f.d->qvel[f.m->jnt_dofadr[j]] = 1;
    f.mc->opt.tolerance = 1e-14;
    r = run(&f, CLCONE_SOLVER_NEWTON, 30, 1e-14);
    fprintf(stderr, "mujoco newton elliptic stonehenge: force_rel_diff %.3e qacc_rel_diff %.3e, at most %d iterations\n",
            r.fdiff, r.adiff, r.iters);
    ck_assert_msg(r.fdiff <= 5e-7 && r.adiff <= 5e-7, "force %g qacc %g", r.fdiff, r.adiff);
    ck_assert_int_le(r.iters, 20);
    ck_assert(r.kinds & 1u << mjCNSTR_CONTACT_ELLIPTIC);
    mj_close(&f);
}
END_TEST

/* On the states where apgd on the general-block form needs many
 * iterations to reach 1e-10, Newton needs a few. */
START_TEST(newton_converges_where_apgd_iterates)
{
    mj_fixture f, g;
    run_stats rn, ra;
    mj_open(&f, ALL_KINDS_XML("elliptic"), 0);
    mj_open(&g, ALL_KINDS_XML("elliptic"), 0);
    rn = run(&f, CLCONE_SOLVER_NEWTON, 100, 1e-10);
    ra = run(&g, CLCONE_SOLVER_APGD, 100, 1e-10);
    fprintf(stderr, "mujoco newton vs apgd: at most %d and %d iterations a step\n", rn.iters, ra.iters);
    ck_assert_int_le(rn.iters, 10);
    ck_assert_int_ge(ra.iters, 10 * rn.iters);
    mj_close(&f);
    mj_close(&g);
}
END_TEST

/* Each island holds MuJoCo's M (mj_fullM's entries, to the bit) on its
 * dofs, by trees (a group a tree; M is zero between two), and J's rows
 * on its rows; the islands partition the rows. */
START_TEST(islands_hold_mujocos_m_and_j)
{
    mj_fixture f;
    clc_mj_primal pr;
    clcone_error e;
    int nv, *seen;
    double *M, *J;
    mj_open(&f, ALL_KINDS_XML("elliptic"), 0);
    f.m->opt.jacobian = mjJAC_DENSE;
    for (int k = 0; k < 40; ++k) mj_step(f.m, f.d);
    mj_forward(f.m, f.d);
    nv = (int)f.m->nv;
    ck_assert_ptr_nonnull(M = calloc((size_t)nv * nv, sizeof *M));
    ck_assert_ptr_nonnull(seen = calloc((size_t)f.d->nefc, sizeof *seen));
    J = f.d->efc_J;
    mj_fullM(f.m, f.d, M);
    ck_assert_msg(clc_mj_primal_build(f.m, f.d, f.path, 0, &pr, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_ge(pr.n, 2);
    for (int k = 0; k < pr.n; ++k) {
        const clc_pproblem *p = &pr.isl[k];
        const int *dof = pr.dof + pr.dof_off[k], *row = pr.row + pr.row_off[k];
        double inertia = 0;
        for (int g = 0; g < p->ng; ++g)
            for (int a = p->goff[g]; a < p->goff[g + 1]; ++a) {
                int n = p->goff[g + 1] - p->goff[g];
                for (int b = 0; b < p->nv; ++b) {
                    double want = M[(size_t)dof[a] * nv + dof[b]];
                    int in = b >= p->goff[g] && b < p->goff[g + 1];
                    const double *have = in ? &p->M[p->moff[g] + (a - p->goff[g]) * n + b - p->goff[g]] : NULL;
                    ck_assert_msg(in ? !memcmp(have, &want, sizeof want) : want == 0, "island %d M (%d, %d)", k,
                                  dof[a], dof[b]);
                }
                ck_assert_int_eq(f.m->dof_treeid[dof[a]], f.m->dof_treeid[dof[p->goff[g]]]);
                inertia += M[(size_t)dof[a] * nv + dof[a]];
            }
        ck_assert_double_eq(p->scale, p->nv ? 1 / inertia : 1);
        for (int x = 0; x < p->m; ++x) {
            double row_sum = 0, want_sum = 0;
            ++seen[row[x]];
            for (int e2 = p->jp[x]; e2 < p->jp[x + 1]; ++e2) {
                ck_assert_double_eq(p->jv[e2], J[(size_t)row[x] * nv + dof[p->jc[e2]]]);
                row_sum += fabs(p->jv[e2]);
            }
            for (int c = 0; c < nv; ++c) want_sum += fabs(J[(size_t)row[x] * nv + c]);
            ck_assert_double_eq(row_sum, want_sum); /* no entry left out */
        }
    }
    for (int i = 0; i < f.d->nefc; ++i) ck_assert_int_eq(seen[i], 1);
    clc_mj_primal_free(&pr);
    free(M);
    free(seen);
    mj_close(&f);
}
END_TEST

/* Bad problems are a status naming what is wrong, not a crash or a
 * silent answer: a non-positive R, J's columns out of order, a Hessian
 * that is not positive definite, a solver other than newton (the device's own cases:
 * tests/test_mujoco_newton_device.c); and the CLI's newton on a device goes on
 * to load the model. */
/* The model coulomb on the primal form (ref/primal_prox.h): the all-kinds
 * model with pyramids (its contacts hard, its limit, friction loss and
 * equality soft) reaches tol in proximal rounds of MuJoCo's Newton on the
 * reference and a double device, judged by the general-block form's own
 * error with A = J M^-1 J' formed (not the rounds' own measure); the soft
 * Newton refuses its hard rows. */
START_TEST(hard_contacts_by_proximal_rounds)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    mj_fixture f;
    clcone_error e;
    clcone_options o;
    int states = 0, most = 0;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    o.tol = 1e-10;
    o.warm_start = 0;
    mj_open(&f, ALL_KINDS_XML("pyramidal"), 0);
    for (int k = 0; k < 60; ++k) {
        clc_mj_primal pr[2];
        clc_bproblem bp;
        clcone_prob_result res[2];
        double *fe, judged[2];
        int hard_rows = 0;
        mj_step(f.m, f.d);
        mj_forward(f.m, f.d);
        if (k % 10 || !f.d->nefc) continue;
        ck_assert_int_eq(clc_mujoco_bproblem(f.m, f.d, 1, f.path, &bp, &e), CLCONE_OK);
        ck_assert_ptr_nonnull(fe = calloc((size_t)bp.m, sizeof *fe));
        for (int b = 0; b < 2; ++b) {
            ck_assert_msg(clc_mj_primal_build(f.m, f.d, f.path, 1, &pr[b], &e) == CLCONE_OK, "%s", e.msg);
            ck_assert_msg(clc_mj_primal_solve(b ? ctx : NULL, &pr[b], &o, &res[b], &e) == CLCONE_OK, "%s", e.msg);
            ck_assert_msg(res[b].status == CLCONE_CONVERGED, "state %d, %s: %s", k, b ? "device" : "reference",
                          res[b].reason);
            for (int j = 0; j < pr[b].row_off[pr[b].n]; ++j) fe[pr[b].row[j]] = pr[b].f[j];
            judged[b] = clc_bproblem_error(&bp, fe, NULL);
            ck_assert_msg(judged[b] <= 1e-9, "state %d, %s: W's error %.3g", k, b ? "device" : "reference", judged[b]);
        }
        ck_assert_double_le(test_rel_diff(pr[0].a, pr[1].a, (size_t)pr[0].dof_off[pr[0].n]), 1e-6);
        for (int i = 0; i < pr[0].n; ++i)
            for (int x = 0; pr[0].isl[i].hard && x < pr[0].isl[i].m; ++x) hard_rows += pr[0].isl[i].hard[x] > 0;
        ck_assert_int_gt(hard_rows, 0);
        if (res[0].iters > most) most = res[0].iters;
        /* the soft Newton alone on a hard island */
        for (int i = 0; i < pr[0].n; ++i) {
            clcone_prob_result r1;
            int hard = 0;
            for (int x = 0; x < pr[0].isl[i].m; ++x) hard |= pr[0].isl[i].hard[x] > 0;
            if (!hard) continue;
            o.model = CLCONE_MODEL_SOFT;
            ck_assert_int_eq(clc_ref_primal_newton(&pr[0].isl[i], &o, pr[0].a + pr[0].dof_off[i],
                                                   pr[0].f + pr[0].row_off[i], pr[0].state + pr[0].row_off[i], &r1,
                                                   &e), CLCONE_EINVAL);
            ck_assert_msg(strstr(e.msg, "is hard (R = 0): MuJoCo's Newton takes soft rows only"), "%s", e.msg);
            o.model = CLCONE_MODEL_COULOMB;
            break;
        }
        for (int b = 0; b < 2; ++b) clc_mj_primal_free(&pr[b]);
        clc_bproblem_free(&bp);
        free(fe);
        ++states;
    }
    ck_assert_int_ge(states, 5);
    /* Newton steps over all rounds: a few a round, not apgd's hundreds */
    ck_assert_int_le(most, 60);
    mj_close(&f);
    clcone_context_free(ctx);
}
END_TEST

/* A round's inner batch that loses problem 0's Hessian on its second
 * call (rounding, as a float device's can when R is small): the fake
 * backend of fails_in_a_later_round. */
static clcone_status losing_batch(void *solver, int K, const clc_pproblem *const *p, const clcone_options *o,
                                  double *const *a, double *const *f, int *const *state, clcone_prob_result *res,
                                  int *failed, clcone_error *err)
{
    int *calls = solver;
    if (++*calls == 2 && K == 2) {
        *failed = 0;
        return clc_fail(err, CLCONE_EINVAL, "the Hessian is not positive definite (a test's)");
    }
    for (int k = 0; k < K; ++k) {
        clcone_status s = clc_ref_primal_newton(p[k], o, a[k], f[k], state[k], &res[k], err);
        if (s) return s;
    }
    return CLCONE_OK;
}

/* A problem whose later round fails ends failed with its best round's
 * answer and a reason, the batch's other problem goes on to tol; a
 * failure in the first round, before any answer, is the batch's error. */
START_TEST(fails_in_a_later_round)
{
    mj_fixture f;
    clc_mj_primal pr[2];
    const clc_pproblem *pp[2];
    double *a[2], *fv[2];
    int *st[2], calls = 0, failed;
    clcone_prob_result res[2];
    clcone_options o;
    clcone_error e;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    o.tol = 1e-10;
    mj_open(&f, ALL_KINDS_XML("pyramidal"), 0);
    for (int k = 0; k < 40; ++k) mj_step(f.m, f.d);
    mj_forward(f.m, f.d);
    for (int j = 0; j < 2; ++j) {
        int i = 0, hard = 0; /* an island with contacts: the hard rows' rounds go on past the first */
        ck_assert_msg(clc_mj_primal_build(f.m, f.d, f.path, 1, &pr[j], &e) == CLCONE_OK, "%s", e.msg);
        for (; i < pr[j].n && !hard; i += !hard)
            for (int x = 0; x < pr[j].isl[i].m; ++x) hard |= pr[j].isl[i].hard[x] > 0;
        ck_assert(hard);
        pp[j] = &pr[j].isl[i];
        a[j] = pr[j].a + pr[j].dof_off[i];
        fv[j] = pr[j].f + pr[j].row_off[i];
        st[j] = pr[j].state + pr[j].row_off[i];
    }
    ck_assert_int_eq(clc_primal_prox_rounds(2, pp, &o, CLC_PROX_FLOOR_DOUBLE, a, fv, st, res, losing_batch, &calls,
                                            &failed, &e), CLCONE_OK);
    ck_assert_int_eq(failed, -1);
    ck_assert_int_eq(res[0].status, CLCONE_FAILED);
    ck_assert_msg(strstr(res[0].reason, "round 1's Newton: the Hessian is not positive definite"), "%s",
                  res[0].reason);
    ck_assert(isfinite(res[0].error) && res[0].error > 0);
    for (int i = 0; i < pp[0]->nv; ++i) ck_assert(isfinite(a[0][i]));
    ck_assert_msg(res[1].status == CLCONE_CONVERGED, "%s", res[1].reason);
    ck_assert_double_le(res[1].error, 1e-10);
    calls = 1; /* the first call fails now: no round has an answer */
    ck_assert_int_eq(clc_primal_prox_rounds(2, pp, &o, CLC_PROX_FLOOR_DOUBLE, a, fv, st, res, losing_batch, &calls,
                                            &failed, &e), CLCONE_EINVAL);
    ck_assert_int_eq(failed, 0);
    for (int j = 0; j < 2; ++j) clc_mj_primal_free(&pr[j]);
    mj_close(&f);
}
END_TEST

START_TEST(bad_cases_are_a_status)
{
    clc_pproblem p;
    clcone_options o;
    clcone_prob_result res;
    clcone_error e;
    double a[2] = {0, 0}, f = 0, *av = a, *fv = &f;
    int st = 0, *sv = &st, failed;
    char out[4096], err[4096];
    const clc_pproblem *pp = &p;
    clcone_options_default(&o);
    o.tol = 1e-12;
    primal_tiny(&p, 1, BLK_FREE);
    p.R[0] = 0;
    ck_assert_int_eq(clc_pproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "row 0: R 0"), "%s", e.msg);
    p.R[0] = 1;
    ck_assert_int_eq(clc_ref_primal_newton(&p, &o, a, &f, &st, &res, &e), CLCONE_OK);
    ck_assert_int_eq(res.status, CLCONE_CONVERGED);
    ck_assert_double_eq_tol(a[0], -0.5, 1e-14); /* min 1/2 (a + 1)^2 + 1/2 a^2 */
    clc_pproblem_free(&p);
    primal_tiny(&p, 2, BLK_FREE);
    p.jc[0] = 1; /* a row's columns out of order (or twice) */
    ck_assert_int_eq(clc_pproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "row 0: J's columns 1 then 1, not ascending"), "%s", e.msg);
    p.jc[0] = 0;
    p.M[1] = p.M[2] = 2; /* [[1 2] [2 1]]: indefinite */
    ck_assert_int_eq(clc_ref_primal_newton(&p, &o, a, &f, &st, &res, &e), CLCONE_EINVAL);
    /* two dofs are factored dense, in their own order: dof 0's pivot is positive, dof 1's not */
    ck_assert_msg(strstr(e.msg, "not positive definite") && strstr(e.msg, "at dof 1 of 2"), "%s", e.msg);
    p.M[1] = p.M[2] = 0;
    o.solver = CLCONE_SOLVER_APGD;
    ck_assert_int_eq(clc_solve_primal_batch(NULL, 1, &pp, &o, 1, &av, &fv, &sv, &res, &failed, &e),
                     CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "solver apgd is not available for model coulomb on MuJoCo's primal problem on the "
                                "CPU reference (offered: newton (default))"), "%s", e.msg);
    o.model = CLCONE_MODEL_SOFT;
    ck_assert_int_eq(clc_solve_primal_batch(NULL, 1, &pp, &o, 1, &av, &fv, &sv, &res, &failed, &e),
                     CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "solver apgd is not available for model soft on MuJoCo's primal problem on the CPU "
                                "reference (offered: newton (default))"), "%s", e.msg);
    clc_pproblem_free(&p);
    ck_assert_int_eq(test_run_cli(NULL, "mujoco /nonexistent/m.xml --steps 1 --solver newton --device 0", out,
                                  sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "cannot open"), "%s", err);
    ck_assert_int_eq(test_run_cli(NULL, "mujoco /nonexistent/m.xml --steps 1 --solver newton --device ref", out,
                                  sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "cannot open"), "%s", err);
}
END_TEST

/* `clcone mujoco --solver newton` without a device runs on the reference,
 * converged, and says so. */
START_TEST(cli_newton_on_reference)
{
    char args[4200], out[16384], err[4096];
    snprintf(args, sizeof args, "mujoco %s --steps 5 --solver newton --compare mujoco",
             test_model_path("humanoid/humanoid.xml"));
    ck_assert_int_eq(test_run_cli("env -u CLCONE_DEVICE", args, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(strstr(out, "backend: ref") && strstr(out, "solver newton"), "%s", out);
    ck_assert_msg(strncmp(test_last_line(out), "status=converged ", 17) == 0, "%s", out);
}
END_TEST

/* A step that the iteration cap stops says so (maxiter, its reason) and
 * MuJoCo still steps on its iterate. */
START_TEST(iteration_cap_is_a_status)
{
    mj_fixture f;
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    int capped = 0;
    mj_open(&f, ALL_KINDS_XML("elliptic"), 0);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.solver = CLCONE_SOLVER_NEWTON;
    o.tol = 1e-300;
    o.max_iter = 1;
    ck_assert_msg(clc_mujoco_create(NULL, &o, f.path, &a, &e) == CLCONE_OK, "%s", e.msg);
    for (int k = 0; k < 20; ++k) {
        ck_assert_msg(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e) == CLCONE_OK, "step %d: %s", k, e.msg);
        if (!st.blocks) continue;
        ck_assert_msg(st.res.status != CLCONE_CONVERGED || st.res.error == 0, "step %d converged at %g", k,
                      st.res.error);
        ck_assert_msg(st.res.status == CLCONE_CONVERGED || st.res.reason[0], "step %d: no reason", k);
        capped += st.res.status == CLCONE_MAXITER && strstr(st.res.reason, "iteration cap 1") != NULL;
    }
    ck_assert_int_gt(capped, 0);
    clc_mujoco_free(a);
    mj_close(&f);
}
END_TEST

Suite *suite_mujoco_newton(void)
{
    Suite *s = suite_create("mujoco_newton");
    TCase *tc = tcase_create("mujoco_newton");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, newton_matches_mujoco_newton);
    tcase_add_test(tc, elliptic_sparse_matches_mujoco_newton);
    tcase_add_test(tc, newton_converges_where_apgd_iterates);
    tcase_add_test(tc, islands_hold_mujocos_m_and_j);
    tcase_add_test(tc, hard_contacts_by_proximal_rounds);
    tcase_add_test(tc, fails_in_a_later_round);
    tcase_add_test(tc, bad_cases_are_a_status);
    tcase_add_test(tc, iteration_cap_is_a_status);
    tcase_add_test(tc, cli_newton_on_reference);
    suite_add_tcase(s, tc);
    return s;
}

#else

Suite *suite_mujoco_newton(void) { return suite_create("mujoco_newton"); }

#endif
