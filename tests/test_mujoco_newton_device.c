/* MuJoCo's Newton method on its primal problem on a device
 * (opencl/primal.h, kernels/primal.cl) against the reference
 * (ref/primal_newton.h) at MuJoCo's states, a batch against its
 * problems alone, and its failures. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clcone/clcone.h>
#include "testutil.h"

#ifdef CLCONE_MUJOCO
#include "mujoco/adapter.h"
#include "mujoco/mj_primal.h"
#include "opencl/opencl.h"
#include "opencl/primal.h"
#include "ref/primal_chol.h"
#include "solve/blocks_solve.h"
#include "cone.h"
#include "block_sets.h"
#include "mujoco_fixture.h"

/* The options of the primal solve at tol, warm as MuJoCo's. */
static clcone_options newton_options(double tol, int warm)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.solver = CLCONE_SOLVER_NEWTON;
    o.tol = tol;
    o.warm_start = warm;
    return o;
}

/* f's state (after mj_forward) as its primal problem, solved on ctx (NULL: the reference) into pr. */
static clcone_prob_result solve_state(mj_fixture *f, clcone_context *ctx, double tol, clc_mj_primal *pr)
{
    clcone_prob_result res;
    clcone_options o;
    clcone_error e;
    ck_assert_msg(clc_mj_primal_build(f->m, f->d, f->path, 0, pr, &e) == CLCONE_OK, "%s", e.msg);
    o = newton_options(tol, pr->warm);
    ck_assert_msg(clc_mj_primal_solve(ctx, pr, &o, &res, &e) == CLCONE_OK, "%s", e.msg);
    return res;
}

/* The largest differences of device and reference over steps of a model. */
typedef struct cmp_stats {
    double adiff, fdiff;
    int iter_diff, iters, states, most_dofs; /* most_dofs: the largest island's */
} cmp_stats;

/* K steps of f by MuJoCo; at each state with rows, the primal problem on
 * the device (at tol) and the reference (at the reference's tol). */
static cmp_stats compare(mj_fixture *f, clcone_context *ctx, int K, double tol, double ref_tol)
{
    cmp_stats c = {0, 0, 0, 0, 0, 0};
    for (int k = 0; k < K; ++k) {
        clc_mj_primal pd, pr;
        clcone_prob_result rd, rr;
        mj_step(f->m, f->d);
        mj_forward(f->m, f->d);
        if (!f->d->nefc) continue;
        rd = solve_state(f, ctx, tol, &pd);
        rr = solve_state(f, NULL, ref_tol, &pr);
        ck_assert_msg(rd.status == CLCONE_CONVERGED, "step %d: %s %s", k, clcone_run_status_name(rd.status),
                      rd.reason);
        ck_assert_int_eq(rr.status, CLCONE_CONVERGED);
        c.adiff = fmax(c.adiff, test_rel_diff(pd.a, pr.a, (size_t)pr.dof_off[pr.n]));
        c.fdiff = fmax(c.fdiff, test_rel_diff(pd.f, pr.f, (size_t)pr.row_off[pr.n]));
        c.iter_diff = abs(rd.iters - rr.iters) > c.iter_diff ? abs(rd.iters - rr.iters) : c.iter_diff;
        c.iters = rd.iters > c.iters ? rd.iters : c.iters;
        ++c.states;
        for (int i = 0; i < pr.n; ++i)
            if (pr.dof_off[i + 1] - pr.dof_off[i] > c.most_dofs) c.most_dofs = pr.dof_off[i + 1] - pr.dof_off[i];
        clc_mj_primal_free(&pd);
        clc_mj_primal_free(&pr);
    }
    return c;
}

/* Every row kind, the rows no dof moves, the humanoid, Stonehenge and
 * 100 fallen humanoids (islands factored dense, and sparse in L's
 * pattern, of single bodies and of branched trees): in double the
 * device's qacc and forces are the reference's to 1e-9 with the same
 * iterations (both at tol 1e-10); in float (tol 1e-5) to 2e-3 of the
 * reference's at 1e-10, within an iteration or two. */
START_TEST(device_matches_reference)
{
    static const struct {
        const char *xml, *file;
        int skip, steps, sparse; /* skip: MuJoCo's steps first; sparse: an island past PCHOL_DENSE_MAX dofs */
    } cases[] = {
        {ALL_KINDS_XML("elliptic"), NULL, 0, 120, 0},
        {ALL_KINDS_XML("pyramidal"), NULL, 0, 120, 0},
        {HINGE_SPHERE_XML("elliptic"), NULL, 0, 30, 0},
        {NULL, "humanoid/humanoid.xml", 0, 60, 0},
        {NULL, "replicate/stonehenge.xml", 0, 20, 1}, /* stones: trees of one body */
        {NULL, "humanoid/100_humanoids.xml", 190, 10, 1}, /* fallen humanoids touching: branched trees */
    };
    for (int prec = 0; prec < 2; ++prec) {
        clcone_context *ctx = test_context(prec ? CLCONE_DOUBLE : CLCONE_FLOAT);
        double tol = prec ? 1e-10 : 1e-5, lim = prec ? 1e-9 : 2e-3;
        if (prec && ctx->prec != CLCONE_DOUBLE) { /* no fp64 */
            clcone_context_free(ctx);
            continue;
        }
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            mj_fixture f;
            cmp_stats c;
            if (cases[i].xml) mj_open(&f, cases[i].xml, 0);
            else mj_open_file(&f, cases[i].file);
            for (int k = 0; k < cases[i].skip; ++k) mj_step(f.m, f.d);
            c = compare(&f, ctx, cases[i].steps, tol, 1e-10);
            fprintf(stderr,
                    "primal device %s case %zu: %d states, qacc %.3e force %.3e, iterations %d (+-%d), islands of up "
                    "to %d dofs\n",
                    prec ? "double" : "float", i, c.states, c.adiff, c.fdiff, c.iters, c.iter_diff, c.most_dofs);
            ck_assert_int_gt(c.states, 0);
            ck_assert_int_eq(c.most_dofs > PCHOL_DENSE_MAX, cases[i].sparse);
            ck_assert_msg(c.adiff <= lim && c.fdiff <= lim, "case %zu: qacc %g force %g", i, c.adiff, c.fdiff);
            ck_assert_int_le(c.iter_diff, prec ? 0 : 2);
            mj_close(&f);
        }
        clcone_context_free(ctx);
    }
}
END_TEST

/* States of the all-kinds model (several islands each) as one batch give
 * each island the bits of its solve alone: a, forces, zones, iterations;
 * soft (MuJoCo's Newton) and hard (coulomb's proximal rounds of it). */
START_TEST(batch_is_each_alone)
{
    enum { N = 4 };
    for (int run = 0; run < 4; ++run) {
        int prec = run & 1, hard = run >> 1;
        clcone_context *ctx = test_context(prec ? CLCONE_DOUBLE : CLCONE_FLOAT);
        clc_mj_primal many[N], alone[N], *pm[N];
        clcone_prob_result rm[N], ra;
        clcone_options o = newton_options(prec ? 1e-10 : 1e-5, 1);
        clcone_error e;
        mj_fixture f;
        int failed, islands = 0;
        /* hard: the model coulomb's proximal rounds, a launch a round for the islands still above tol */
        if (hard) o.model = CLCONE_MODEL_COULOMB;
        mj_open(&f, hard ? ALL_KINDS_XML("pyramidal") : ALL_KINDS_XML("elliptic"), 0);
        for (int j = 0; j < N; ++j) {
            for (int k = 0; k < 15; ++k) mj_step(f.m, f.d);
            mj_forward(f.m, f.d);
            ck_assert_msg(clc_mj_primal_build(f.m, f.d, f.path, hard, &many[j], &e) == CLCONE_OK, "%s", e.msg);
            ck_assert_msg(clc_mj_primal_build(f.m, f.d, f.path, hard, &alone[j], &e) == CLCONE_OK, "%s", e.msg);
            pm[j] = &many[j];
            islands += many[j].n;
        }
        ck_assert_int_gt(islands, N);
        ck_assert_msg(clc_mj_primal_solve_many(ctx, N, pm, &o, 2, rm, &failed, &e) == CLCONE_OK, "%s", e.msg);
        /* ctx keeps the batch's buffers: each problem alone runs on them, larger and holding the batch's data */
        for (int j = 0; j < N; ++j) {
            size_t nv = (size_t)alone[j].dof_off[alone[j].n], m = (size_t)alone[j].row_off[alone[j].n];
            ck_assert_msg(clc_mj_primal_solve(ctx, &alone[j], &o, &ra, &e) == CLCONE_OK, "%s", e.msg);
            ck_assert_int_eq(ra.iters, rm[j].iters);
            ck_assert_int_eq(ra.status, rm[j].status);
            ck_assert(!memcmp(many[j].a, alone[j].a, nv * sizeof *many[j].a));
            ck_assert(!memcmp(many[j].f, alone[j].f, m * sizeof *many[j].f));
            ck_assert(!memcmp(many[j].state, alone[j].state, m * sizeof *many[j].state));
            clc_mj_primal_free(&many[j]);
            clc_mj_primal_free(&alone[j]);
        }
        mj_close(&f);
        clcone_context_free(ctx);
    }
}
END_TEST

/* A Hessian that is not positive definite is a status and a message
 * naming the problem, never a crash; a problem over the device's dof
 * limit is refused by the device's entry and solved on the reference by
 * a device's batch. */
START_TEST(device_errors_are_a_status)
{
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_options o = newton_options(1e-5, 0);
    clc_pproblem p[2];
    const clc_pproblem *pp[2] = {&p[0], &p[1]};
    clcone_prob_result res[2];
    clcone_error e;
    double *a[2], *f[2], fv[2];
    int *st[2], sv[2], failed;
    double big[CLC_PRIMAL_DEV_MAX_DOFS + 1];
    char ref_dof[64];
    primal_tiny(&p[0], 2, BLK_FREE);
    primal_tiny(&p[1], 2, BLK_FREE);
    p[1].M[1] = p[1].M[2] = 2; /* [[1 2] [2 1]]: indefinite */
    for (int k = 0; k < 2; ++k) {
        ck_assert_ptr_nonnull(a[k] = calloc(CLC_PRIMAL_DEV_MAX_DOFS + 1, sizeof **a));
        f[k] = &fv[k];
        st[k] = &sv[k];
    }
    ck_assert_int_eq(clc_solve_primal_batch(ctx, 2, pp, &o, 1, a, f, st, res, &failed, &e), CLCONE_EINVAL);
    ck_assert_int_eq(failed, 1);
    ck_assert_msg(strstr(e.msg, "not positive definite") && strstr(e.msg, "dof 1 of 2"), "%s", e.msg);
    clc_pproblem_free(&p[1]);
    primal_tiny(&p[1], CLC_PRIMAL_DEV_MAX_DOFS + 1, BLK_FREE);
    ck_assert_int_eq(clc_dev_primal_batch(ctx, 2, pp, &o, 1, a, f, st, res, &failed, &e), CLCONE_ENOTSUP);
    ck_assert_int_eq(failed, 1);
    ck_assert_msg(strstr(e.msg, "1025 dofs: the device's primal Newton takes at most 1024"), "%s", e.msg);
    /* a device's solve hands such an island to the reference, the others
     * staying on the device: the answers each gets alone */
    ck_assert_int_eq(clc_solve_primal_batch(ctx, 2, pp, &o, 1, a, f, st, res, NULL, &e), CLCONE_OK);
    ck_assert_int_eq(res[0].status, CLCONE_CONVERGED);
    ck_assert_int_eq(res[1].status, CLCONE_CONVERGED);
    memcpy(big, a[1], sizeof *big * (CLC_PRIMAL_DEV_MAX_DOFS + 1));
    ck_assert_int_eq(clc_solve_primal_batch(NULL, 1, pp + 1, &o, 1, a + 1, f + 1, st + 1, res + 1, NULL, &e), CLCONE_OK);
    ck_assert_int_eq(res[1].status, CLCONE_CONVERGED);
    ck_assert(memcmp(big, a[1], sizeof *big * (CLC_PRIMAL_DEV_MAX_DOFS + 1)) == 0);
    /* an island factored in L's sparse pattern names the dof, not its
     * position in the factor's order, as the reference does */
    clc_pproblem_free(&p[1]);
    primal_tiny(&p[1], PCHOL_DENSE_MAX + 12, BLK_FREE);
    p[1].M[10 * p[1].nv + 11] = p[1].M[11 * p[1].nv + 10] = 2;
    ck_assert_int_eq(clc_solve_primal_batch(NULL, 2, pp, &o, 1, a, f, st, res, NULL, &e), CLCONE_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "dof "));
    snprintf(ref_dof, sizeof ref_dof, "%s", strstr(e.msg, "dof "));
    *strchr(ref_dof, ')') = 0; /* "dof N of M" */
    ck_assert_int_eq(clc_solve_primal_batch(ctx, 2, pp, &o, 1, a, f, st, res, NULL, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, ref_dof), "device: %s; reference: %s", e.msg, ref_dof);
    /* the context's kept buffers serve the next batch after a failed one */
    ck_assert_int_eq(clc_solve_primal_batch(ctx, 1, pp, &o, 1, a, f, st, res, NULL, &e), CLCONE_OK);
    ck_assert_int_eq(res[0].status, CLCONE_CONVERGED);
    for (int k = 0; k < 2; ++k) {
        clc_pproblem_free(&p[k]);
        free(a[k]);
    }
    clcone_context_free(ctx);
}
END_TEST

/* `clcone mujoco --solver newton --device 0` steps the humanoid on the
 * device, alone and as worlds, converged; so does the soft default there. */
START_TEST(cli_newton_on_device)
{
    /* named, then the soft model's default on a device; the header says
     * the time cap does not stop a launch */
    static const char *const extra[] = {" --solver newton", " --solver newton --worlds 3", ""};
    for (int i = 0; i < 3; ++i) {
        char args[4200], out[16384], err[4096];
        snprintf(args, sizeof args, "mujoco %s --steps 4 --device 0%s", test_model_path("humanoid/humanoid.xml"),
                 extra[i]);
        ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 0);
        ck_assert_msg(!strstr(out, "backend: ref") && strstr(out, "solver newton"), "%s", out);
        ck_assert_msg(strstr(out, "at most 30 s a solve between launches (a step is one launch)"), "%s", out);
        ck_assert_msg(strncmp(test_last_line(out), "status=converged ", 17) == 0, "%s", out);
    }
}
END_TEST

/* An adapter for MuJoCo's Newton on a device builds the primal kernel
 * when it is made (the context keeps it), so that its first step's
 * solve pays for no compilation; one for another solver does not. */
START_TEST(adapter_builds_the_kernel_when_made)
{
    clcone_context *ctx = test_context(CLCONE_FLOAT);
    clcone_options o = newton_options(1e-5, 1);
    clc_mujoco *a;
    clcone_error e;
    o.solver = CLCONE_SOLVER_APGD;
    ck_assert_msg(clc_mujoco_create(ctx, &o, "apgd", &a, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_ptr_null(ctx->kept);
    clc_mujoco_free(a);
    o.solver = CLCONE_SOLVER_NEWTON;
    ck_assert_msg(clc_mujoco_create(ctx, &o, "newton", &a, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_ptr_nonnull(ctx->kept);
    clc_mujoco_free(a);
    clcone_context_free(ctx);
}
END_TEST

Suite *suite_mujoco_newton_device(void)
{
    Suite *s = suite_create("mujoco_newton_device");
    TCase *tc = tcase_create("mujoco_newton_device");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, device_matches_reference);
    tcase_add_test(tc, batch_is_each_alone);
    tcase_add_test(tc, device_errors_are_a_status);
    tcase_add_test(tc, cli_newton_on_device);
    tcase_add_test(tc, adapter_builds_the_kernel_when_made);
    suite_add_tcase(s, tc);
    return s;
}

#else

Suite *suite_mujoco_newton_device(void) { return suite_create("mujoco_newton_device"); }

#endif
