/* The MuJoCo adapter (host/mujoco/) and `clcone mujoco`, against MuJoCo's
 * own solver at the same states. Built with MuJoCo when the Makefile found
 * it (`make test` installs the PyPI wheel); without it the suite says so
 * and holds one test that checks the CLI says how to get it. */
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
#include "mujoco_fixture.h"

/* Contacts only: three spheres and a box dropped on a plane, elliptic
 * cones of condim 3, impratio 3 (R of the tangent rows a third of the
 * normal's, so a wrong R shows), a sliding box (initial velocity). */
static const char CONTACT_XML[] =
    "<mujoco model=\"clc_contacts\">\n"
    "  <option timestep=\"0.005\" cone=\"elliptic\" impratio=\"3\"/>\n"
    "  <default><geom condim=\"3\" friction=\"0.6 0.005 0.0001\"/></default>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 0.1\"/>\n"
    "    <body pos=\"0 0 0.1\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"0.15 0 0.3\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"-0.3 0.1 0.12\"><freejoint/><geom type=\"sphere\" size=\"0.12\" friction=\"0.3 0 0\"/></body>\n"
    "    <body pos=\"0.6 0 0.1\"><joint type=\"free\"/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n"
    "  </worldbody>\n"
    "  <keyframe><key qvel=\"0 0 0 0 0 0  0 0 0 0 0 0  0 0 0 0 0 0  1 0 0 0 0 0\"/></keyframe>\n"
    "</mujoco>\n";

/* A hinged arm with a joint limit that it swings into, beside a sphere on
 * the floor without friction (condim 1 on both geoms): limit rows and a
 * frictionless contact, 1-row blocks, in one problem. */
static const char LIMIT_XML[] =
    "<mujoco model=\"clc_limit\">\n"
    "  <option timestep=\"0.005\" cone=\"elliptic\"/>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 0.1\" condim=\"1\"/>\n"
    "    <body pos=\"0 0 1\"><joint type=\"hinge\" axis=\"0 1 0\" limited=\"true\" range=\"-20 20\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.5 0 0\" size=\"0.05\" contype=\"0\" conaffinity=\"0\"/></body>\n"
    "    <body pos=\"1 0 0.1\"><freejoint/><geom type=\"sphere\" size=\"0.1\" condim=\"1\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* A connect equality: a row kind the 3-row form does not hold. */
static const char EQUALITY_XML[] =
    "<mujoco model=\"clc_equality\">\n"
    "  <worldbody>\n"
    "    <body name=\"a\" pos=\"0 0 1\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "  </worldbody>\n"
    "  <equality><connect body1=\"a\" anchor=\"0 0 0\"/></equality>\n"
    "</mujoco>\n";

/* Steps f's model K times with the adapter (on ctx, tol) against
 * MuJoCo's Newton at each state; the largest differences, the most
 * contacts and the most 1-row constraints (limits, frictionless contacts)
 * seen. */
static unsigned seen_kinds; /* step_compare's: a bit per mjtConstraint seen, 1 << (8 + dim) per elliptic condim */

static void step_compare(mj_fixture *f, clcone_context *ctx, clcone_model model, int K, double tol, double *fdiff,
                         double *adiff, int *max_contacts, int *max_rows)
{
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    clcone_options_default(&o);
    o.model = model;
    o.tol = tol;
    ck_assert_msg(clc_mujoco_create(ctx, &o, f->path, &a, &e) == CLCONE_OK, "%s", e.msg);
    *fdiff = *adiff = 0;
    *max_contacts = *max_rows = 0;
    seen_kinds = 0;
    for (int k = 0; k < K; ++k) {
        ck_assert_msg(clc_mujoco_step(a, f->m, f->d, f->mc, &st, &e) == CLCONE_OK, "step %d: %s", k, e.msg);
        if (st.blocks) ck_assert_msg(st.res.status == CLCONE_CONVERGED, "step %d: %s", k, st.res.reason);
        *fdiff = fmax(*fdiff, st.force_rel_diff);
        *adiff = fmax(*adiff, st.qacc_rel_diff);
        if (st.ncon > *max_contacts) *max_contacts = st.ncon;
        {
            int n1 = 0;
            for (int i = 0; i < f->d->nefc; ++i) {
                int t = f->d->efc_type[i];
                n1 += t != mjCNSTR_CONTACT_ELLIPTIC;
                seen_kinds |= 1u << t;
                if (t == mjCNSTR_CONTACT_ELLIPTIC) seen_kinds |= 1u << (8 + f->d->contact[f->d->efc_id[i]].dim);
            }
            if (n1 > *max_rows) *max_rows = n1;
        }
    }
    clc_mujoco_free(a);
}

/* W + R of the adapter's problem is MuJoCo's own efc_AR (J M^-1 J' + R,
 * mj_projectConstraint) and q - a_ref its efc_b, entry by entry. */
START_TEST(problem_is_mujocos_dual)
{
    mj_fixture f = {{0}, 0, 0, 0};
    clcone_problem p;
    clcone_error e;
    double *R, *aref, *b;
    int *row, nefc;
    mj_open(&f, CONTACT_XML, 0);
    f.m->opt.jacobian = mjJAC_DENSE;
    f.m->opt.solver = mjSOL_PGS; /* MuJoCo keeps efc_AR for its dual solver */
    for (int k = 0; k < 40; ++k) mj_step(f.m, f.d);
    mj_forward(f.m, f.d);
    mj_projectConstraint(f.m, f.d);
    nefc = f.d->nefc;
    ck_assert_int_ge(f.d->ncon, 3);
    ck_assert_int_eq(clc_mujoco_problem(f.m, f.d, 0, f.path, &p, &R, &aref, &row, &e), CLCONE_OK);
    ck_assert_int_eq(p.n, f.d->ncon);
    b = calloc((size_t)nefc, sizeof *b);
    ck_assert_ptr_nonnull(b);
    for (int i = 0; i < p.n; ++i)
        for (int j = 0; j < p.n; ++j) {
            int k = -1;
            for (int t = p.row_ptr[i]; t < p.row_ptr[i + 1]; ++t)
                if (p.col[t] == j) k = t;
            for (int x = 0; x < 3; ++x)
                for (int y = 0; y < 3; ++y) {
                    double w = (k >= 0 ? p.blocks[9 * k + 3 * x + y] : 0) + (i == j && x == y ? R[3 * i + x] : 0);
                    double ar = f.d->efc_AR[(size_t)(3 * i + x) * nefc + 3 * j + y];
                    ck_assert_msg(fabs(w - ar) <= 1e-12 * fmax(1, fabs(ar)), "W+R (%d,%d) %.17g, efc_AR %.17g",
                                  3 * i + x, 3 * j + y, w, ar);
                }
            ck_assert_int_eq(row[i], 3 * i);
            ck_assert_double_eq(p.mu[i], f.d->contact[i].friction[0]);
        }
    for (int i = 0; i < nefc; ++i)
        ck_assert_msg(fabs(p.q[i] - aref[i] - f.d->efc_b[i]) <= 1e-12 * fmax(1, fabs(f.d->efc_b[i])), "q row %d", i);
    free(b);
    free(R);
    free(aref);
    free(row);
    clcone_problem_free(&p);
    mj_close(&f);
}
END_TEST

/* A = J M^-1 J' as the adapter formed it with J made dense: mj_solveM over
 * all dofs, A_rs summed over J_r's nonzero columns in ascending order. */
static double *dense_a(const mjModel *m, mjData *d)
{
    int nv = (int)m->nv, n = d->nefc;
    double *J = calloc((size_t)n * nv, sizeof *J), *X = calloc((size_t)n * nv, sizeof *X);
    double *A = calloc((size_t)n * n, sizeof *A);
    ck_assert(J && X && A);
    if (mj_isSparse(m)) mju_sparse2dense(J, d->efc_J, n, nv, d->efc_J_rownnz, d->efc_J_rowadr, d->efc_J_colind);
    else memcpy(J, d->efc_J, sizeof *J * (size_t)n * nv);
    mj_solveM(m, d, X, J, n);
    for (int r = 0; r < n; ++r)
        for (int s = 0; s < n; ++s)
            for (int c = 0; c < nv; ++c)
                if (J[(size_t)r * nv + c] != 0) A[(size_t)r * n + s] += J[(size_t)r * nv + c] * X[(size_t)s * nv + c];
    free(J), free(X);
    return A;
}

/* A built from J's sparse rows and M's factor on each row's kinematic
 * trees is the dense J M^-1 J' to the bit (W = A + R on the diagonal),
 * from MuJoCo's sparse and dense J, on both forms; A is exactly zero
 * between the blocks it leaves out (no common tree). Each form sums a
 * symmetric pair once, in either order. */
START_TEST(a_on_trees_is_dense_a)
{
    static const char all[] = ALL_KINDS_XML("elliptic");
    for (int k = 0; k < 4; ++k) {
        mj_fixture f = {{0}, 0, 0, 0};
        clc_bproblem bp;
        clcone_problem p;
        clcone_error e;
        double *A, *R, *aref;
        char *in;
        int *row, n, general = k & 1;
        mj_open(&f, general ? all : CONTACT_XML, 0);
        f.m->opt.jacobian = k & 2 ? mjJAC_SPARSE : mjJAC_DENSE;
        for (int t = 0; t < 40; ++t) mj_step(f.m, f.d);
        mj_forward(f.m, f.d);
        n = f.d->nefc;
        A = dense_a(f.m, f.d);
        ck_assert_ptr_nonnull(in = calloc((size_t)n * n, 1));
        if (general) ck_assert_msg(clc_mujoco_bproblem(f.m, f.d, 0, f.path, &bp, &e) == CLCONE_OK, "%s", e.msg);
        else ck_assert_msg(clc_mujoco_problem(f.m, f.d, 0, f.path, &p, &R, &aref, &row, &e) == CLCONE_OK, "%s", e.msg);
        for (int b = 0; b < (general ? bp.nb : p.n); ++b)
            for (int t = general ? bp.row_ptr[b] : p.row_ptr[b]; t < (general ? bp.row_ptr[b + 1] : p.row_ptr[b + 1]); ++t) {
                int c = general ? bp.col[t] : p.col[t], r0 = general ? bp.off[b] : row[b], s0 = general ? bp.off[c] : row[c];
                int nr = general ? clc_bproblem_rows(&bp, b) : (b + 1 < p.n ? row[b + 1] : n) - r0;
                int nc = general ? clc_bproblem_rows(&bp, c) : (c + 1 < p.n ? row[c + 1] : n) - s0;
                for (int x = 0; x < nr; ++x)
                    for (int y = 0; y < nc; ++y) {
                        size_t rs = (size_t)(r0 + x) * n + s0 + y, sr = (size_t)(s0 + y) * n + r0 + x;
                        double w = general ? bp.val[bp.val_off[t] + x * nc + y] : p.blocks[9 * t + 3 * x + y];
                        double Rd = general && rs == sr ? f.d->efc_R[r0 + x] : 0, a = A[rs] + Rd, at = A[sr] + Rd;
                        ck_assert_msg(!memcmp(&w, &a, sizeof w) || !memcmp(&w, &at, sizeof w),
                                      "form %d, jacobian %d, A (%zu, %zu): %.17g, dense %.17g", general, k >> 1,
                                      rs / n, rs % n, w, a);
                        in[rs] = 1;
                    }
            }
        for (size_t i = 0; i < (size_t)n * n; ++i) ck_assert_msg(in[i] || A[i] == 0, "A (%zu, %zu) left out", i / n, i % n);
        if (general) clc_bproblem_free(&bp);
        else {
            clcone_problem_free(&p);
            free(R);
            free(aref);
            free(row);
        }
        free(A);
        free(in);
        mj_close(&f);
    }
}
END_TEST

/* K steps of xml (keyframe key, or -1) with clcone soft (on ctx, tol
 * 1e-10) against MuJoCo Newton at tolerance mj_tol: forces and qacc
 * within 1e-6 at every state (the bound). Both solve one strictly convex problem to 1e-10, so
 * what remains is that tolerance magnified by the conditioning of A + R.
 * Returns the most contacts and 1-row constraints seen. */
static void matches_newton_at(clcone_context *ctx, const char *xml, int key, int K, double mj_tol, const char *what,
                              int *nc, int *nr)
{
    mj_fixture f = {{0}, 0, 0, 0};
    double fd, ad;
    mj_open(&f, xml, key);
    f.mc->opt.tolerance = mj_tol;
    step_compare(&f, ctx, CLCONE_MODEL_SOFT, K, 1e-10, &fd, &ad, nc, nr);
    fprintf(stderr, "mujoco %s: force_rel_diff %.3e qacc_rel_diff %.3e, up to %d contacts, %d 1-row rows\n", what,
            fd, ad, *nc, *nr);
    ck_assert_double_le(fd, 1e-6);
    ck_assert_double_le(ad, 1e-6);
    mj_close(&f);
}

static void matches_newton(clcone_context *ctx, const char *xml, int key, int K, const char *what, int *nc, int *nr)
{
    matches_newton_at(ctx, xml, key, K, 1e-10, what, nc, nr);
}

/* 150 steps of the contact model: the spheres land and the box slides to
 * rest (measured: force_rel_diff 1.9e-8, qacc 4.9e-9). */
START_TEST(contacts_match_mujoco_newton)
{
    int nc, nr;
    matches_newton(NULL, CONTACT_XML, 0, 150, "contacts", &nc, &nr);
    ck_assert_int_ge(nc, 4);
}
END_TEST

/* The same on the default OpenCL device in double: every step's problem
 * by the device's default, MuJoCo's Newton on the primal problem, an
 * island a work-group (measured on POCL: 1.6e-14, qacc 2.6e-14; with
 * apgd, the default before, 3.1e-8 and 1.9e-9). */
START_TEST(contacts_match_on_device)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    int nc, nr;
    matches_newton(ctx, CONTACT_XML, 0, 60, "contacts on the device", &nc, &nr);
    ck_assert_int_ge(nc, 4);
    clcone_context_free(ctx);
}
END_TEST

/* A joint limit and a frictionless contact (1-row blocks, mu = 0) in one
 * problem: the same agreement (measured 5.5e-10, 1.7e-10). */
START_TEST(limits_match_mujoco_newton)
{
    int nc, nr;
    matches_newton(NULL, LIMIT_XML, -1, 200, "limits", &nc, &nr);
    ck_assert_int_ge(nc, 1);
    ck_assert_int_ge(nr, 2);
}
END_TEST

/* coulomb (the 3-row form) refuses the humanoid's pyramidal contacts and
 * an equality, naming the kind, the count and the model; d is not
 * stepped. */
START_TEST(unsupported_rows_refused)
{
    mj_fixture f = {{0}, 0, 0, 0};
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    /* an equality alone (no contact, no hard row) steps on the primal form, MuJoCo's own soft problem */
    mj_open(&f, EQUALITY_XML, -1);
    ck_assert_int_eq(clc_mujoco_create(NULL, &o, f.path, &a, &e), CLCONE_OK);
    for (int k = 0; k < 5; ++k) ck_assert_msg(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e) == CLCONE_OK, "%s", e.msg);
    clc_mujoco_free(a);
    mj_close(&f);
    /* elliptic contacts beside an equality: coulomb's 3-row form does not
     * hold the equality, its general-block form no exact Coulomb cone; with
     * apgd (that form's solver) the step is refused before MuJoCo's state
     * moves (the default takes the primal form: coulomb_elliptic_every_kind) */
    o.solver = CLCONE_SOLVER_APGD;
    mj_open(&f, ALL_KINDS_XML("elliptic"), -1);
    ck_assert_int_eq(clc_mujoco_create(NULL, &o, f.path, &a, &e), CLCONE_OK);
    for (int k = 0, ell = 0; !ell; ++k) {
        ck_assert_int_lt(k, 200);
        mj_forward(f.m, f.d);
        for (int i = 0; i < f.d->nefc; ++i) ell |= f.d->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC;
        if (!ell) mj_step(f.m, f.d);
    }
    {
        double t = f.d->time;
        ck_assert_int_eq(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e), CLCONE_ENOTSUP);
        ck_assert_msg(strstr(e.msg, "equality: 3") && strstr(e.msg, f.path) && strstr(e.msg, "no elliptic contact"),
                      "%s", e.msg);
        ck_assert_double_eq(f.d->time, t);
    }
    clc_mujoco_free(a);
    mj_close(&f);
}
END_TEST

/* Coulomb on a state without elliptic contacts goes to the general-block
 * form: W is MuJoCo's A + R with R dropped on exactly the contact rows'
 * diagonal (the humanoid's pyramids; its limits keep R), q is the same;
 * and the humanoid steps with it on the reference and the device, to the
 * same trajectory within the tolerance's reach, by the default (the
 * primal form's proximal rounds) and by apgd on this form. */
START_TEST(coulomb_on_general_form)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    char err[1000], hum[4096];
    mjModel *m;
    mjData *d[2];
    clc_bproblem soft, hard;
    clcone_options o;
    clc_mujoco *a[2];
    clc_mujoco_stats st;
    clcone_error e;
    int contact_rows = 0, kept_rows = 0;
    double qdiff = 0;
    snprintf(hum, sizeof hum, "%s", test_model_path("humanoid/humanoid.xml"));
    m = mj_loadXML(hum, NULL, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    d[0] = mj_makeData(m);
    d[1] = mj_makeData(m);
    for (int k = 0; k < 200; ++k) mj_step(m, d[0]);
    mj_forward(m, d[0]);
    ck_assert_int_eq(clc_mujoco_bproblem(m, d[0], 0, hum, &soft, &e), CLCONE_OK);
    ck_assert_int_eq(clc_mujoco_bproblem(m, d[0], 1, hum, &hard, &e), CLCONE_OK);
    ck_assert_int_eq(soft.val_off[soft.nnzb], hard.val_off[hard.nnzb]);
    ck_assert_mem_eq(soft.q, hard.q, sizeof *soft.q * (size_t)soft.m);
    for (int b = 0; b < soft.nb; ++b)
        for (int t = soft.row_ptr[b]; t < soft.row_ptr[b + 1]; ++t) {
            int n = clc_bproblem_rows(&soft, b), nc = clc_bproblem_rows(&soft, soft.col[t]);
            for (int x = 0; x < n; ++x)
                for (int y = 0; y < nc; ++y) {
                    int i = soft.off[b] + x, diag = soft.col[t] == b && x == y;
                    double ws = soft.val[soft.val_off[t] + x * nc + y], wh = hard.val[hard.val_off[t] + x * nc + y];
                    int contact = d[0]->efc_type[i] >= mjCNSTR_CONTACT_FRICTIONLESS;
                    if (diag && contact) {
                        ck_assert_double_le(fabs(ws - wh - d[0]->efc_R[i]), 1e-14 * fabs(ws));
                        ++contact_rows;
                    } else {
                        ck_assert_mem_eq(&ws, &wh, sizeof ws);
                        kept_rows += diag;
                    }
                }
        }
    ck_assert_int_gt(contact_rows, 0);
    ck_assert_int_gt(kept_rows, 0); /* the limits */
    clc_bproblem_free(&soft);
    clc_bproblem_free(&hard);
    /* the default (MuJoCo's Newton in proximal rounds on the primal form) and apgd on the general-block form */
    for (int solver = 0; solver < 2; ++solver) {
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_COULOMB;
        o.solver = solver ? CLCONE_SOLVER_APGD : CLCONE_SOLVER_DEFAULT;
        qdiff = 0;
        for (int k = 0; k < 2; ++k) {
            mj_resetData(m, d[k]);
            ck_assert_int_eq(clc_mujoco_create(k ? ctx : NULL, &o, hum, &a[k], &e), CLCONE_OK);
        }
        for (int step = 0; step < 100; ++step)
            for (int k = 0; k < 2; ++k) {
                ck_assert_msg(clc_mujoco_step(a[k], m, d[k], NULL, &st, &e) == CLCONE_OK, "%s", e.msg);
                ck_assert_msg(st.nefc == 0 || st.res.status == CLCONE_CONVERGED, "step %d, %s, %s: %s", step,
                              k ? "device" : "reference", solver ? "apgd" : "default", st.res.reason);
            }
        for (int i = 0; i < m->nq; ++i) qdiff = fmax(qdiff, fabs(d[0]->qpos[i] - d[1]->qpos[i]));
        ck_assert_double_le(qdiff, 1e-6);
        for (int k = 0; k < 2; ++k) clc_mujoco_free(a[k]);
    }
    for (int k = 0; k < 2; ++k) mj_deleteData(d[k]);
    mj_deleteModel(m);
    clcone_context_free(ctx);
}
END_TEST

/* Steps f[0] on the reference and f[1] on ctx (NULL: the reference too)
 * K times with coulomb's default, every step converged (who: each run's
 * name), the row kinds met in kinds; the largest difference in f[0]'s
 * qpos between the two runs. */
static double coulomb_pair(mj_fixture *f, clcone_context *ctx, const char *const *who, int K, unsigned *kinds)
{
    clcone_options o;
    clc_mujoco *a[2];
    clc_mujoco_stats st;
    clcone_error e;
    double qdiff = 0;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    for (int k = 0; k < 2; ++k)
        ck_assert_msg(clc_mujoco_create(k ? ctx : NULL, &o, who[k], &a[k], &e) == CLCONE_OK, "%s", e.msg);
    for (int step = 0; step < K; ++step)
        for (int k = 0; k < 2; ++k) {
            ck_assert_msg(clc_mujoco_step(a[k], f[k].m, f[k].d, NULL, &st, &e) == CLCONE_OK, "%s", e.msg);
            ck_assert_msg(st.nefc == 0 || st.res.status == CLCONE_CONVERGED, "step %d, %s: %s (%g)", step, who[k],
                          st.res.reason, st.res.error);
            for (int i = 0; i < f[k].d->nefc; ++i) *kinds |= 1u << f[k].d->efc_type[i];
        }
    for (int i = 0; i < f[0].m->nq; ++i) qdiff = fmax(qdiff, fabs(f[0].d->qpos[i] - f[1].d->qpos[i]));
    for (int k = 0; k < 2; ++k) clc_mujoco_free(a[k]);
    return qdiff;
}

/* Exact Coulomb on elliptic cones beside every other row kind (an
 * equality, a friction loss, a limit, condim 1, 4 and 6, a pair's two
 * friction coefficients), which only the primal form holds: the proximal
 * rounds with De Saxce's shift converge every step to 1e-8 on the
 * reference and the device in double, on the same trajectory. */
START_TEST(coulomb_elliptic_every_kind)
{
    static const char *const who[] = {"reference", "device"};
    const unsigned want = 1u << mjCNSTR_CONTACT_ELLIPTIC | 1u << mjCNSTR_EQUALITY | 1u << mjCNSTR_FRICTION_DOF;
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    mj_fixture f[2] = {{{0}, 0, 0, 0}, {{0}, 0, 0, 0}};
    unsigned kinds = 0;
    double qdiff;
    for (int k = 0; k < 2; ++k) mj_open(&f[k], ALL_KINDS_XML("elliptic"), 0);
    qdiff = coulomb_pair(f, ctx, who, 100, &kinds);
    fprintf(stderr, "mujoco coulomb, elliptic beside every kind: reference and device %.3g apart in qpos\n", qdiff);
    ck_assert_uint_eq(kinds & want, want);
    ck_assert_double_le(qdiff, 1e-6);
    for (int k = 0; k < 2; ++k) mj_close(&f[k]);
    clcone_context_free(ctx);
}
END_TEST

/* The same law by two solvers: the humanoid with elliptic cones goes to
 * the 3-row form (its hybrid); with a box welded in the air beside it (an
 * island of its own, equality rows the 3-row form does not hold) the
 * state goes to the primal form's proximal rounds. Both answers are exact
 * Coulomb's to 1e-8, so the humanoid moves the same in both. */
START_TEST(coulomb_elliptic_primal_matches_3row)
{
    static const char *const who[] = {"the humanoid alone", "beside a welded box"};
    static const char body[] = "  <body name=\"welded\" pos=\"5 5 3\"><freejoint/>"
                               "<geom type=\"box\" size=\".1 .1 .1\" contype=\"0\" conaffinity=\"0\"/></body>\n"
                               "  </worldbody>",
                      eq[] = "  <equality><weld body1=\"welded\"/></equality>\n</mujoco>";
    size_t len;
    char *hum = test_read_all(test_model_path("humanoid/humanoid.xml"), &len), *weld, *w, *end;
    mj_fixture f[2] = {{{0}, 0, 0, 0}, {{0}, 0, 0, 0}};
    unsigned kinds = 0;
    double qdiff;
    ck_assert_ptr_nonnull(hum);
    ck_assert_ptr_nonnull(weld = calloc(len + sizeof body + sizeof eq, 1));
    w = strstr(hum, "</worldbody>");
    end = strstr(hum, "</mujoco>");
    ck_assert(w && end && w < end);
    memcpy(weld, hum, (size_t)(w - hum));
    strcat(weld, body);
    strncat(weld, w + strlen("</worldbody>"), (size_t)(end - w) - strlen("</worldbody>"));
    strcat(weld, eq);
    mj_open(&f[0], hum, -1);
    mj_open(&f[1], weld, -1);
    for (int k = 0; k < 2; ++k) f[k].m->opt.cone = mjCONE_ELLIPTIC;
    qdiff = coulomb_pair(f, NULL, who, 100, &kinds);
    fprintf(stderr, "mujoco humanoid, elliptic coulomb: 3-row form and primal form %.3g apart in qpos\n", qdiff);
    ck_assert_uint_eq(kinds & 1u << mjCNSTR_CONTACT_ELLIPTIC, 1u << mjCNSTR_CONTACT_ELLIPTIC);
    ck_assert_double_le(qdiff, 1e-7);
    for (int k = 0; k < 2; ++k) mj_close(&f[k]);
    free(hum);
    free(weld);
}
END_TEST

/* --model coulomb: R = 0 on contact rows (exact Coulomb), a limit keeps
 * its R inside W, and a_ref moves into q; the soft problem plus exactly
 * that. Then 100 steps of the contact model converge on every step. */
START_TEST(coulomb_problem_and_steps)
{
    mj_fixture f = {{0}, 0, 0, 0};
    clcone_problem ps, pc;
    clcone_error e;
    double *Rs, *as, *Rc, *ac, fd, ad;
    int *rs, *rc, nlimit = 0, k, nc, nr;
    mj_open(&f, LIMIT_XML, -1);
    for (k = 0; k < 400 && nlimit == 0; ++k) {
        mj_step(f.m, f.d);
        mj_forward(f.m, f.d);
        for (int i = 0; i < f.d->nefc; ++i) nlimit += f.d->efc_type[i] == mjCNSTR_LIMIT_JOINT;
    }
    ck_assert_msg(nlimit == 1 && f.d->ncon >= 1, "no state with the limit and a contact in 400 steps");
    ck_assert_int_eq(clc_mujoco_problem(f.m, f.d, 0, f.path, &ps, &Rs, &as, &rs, &e), CLCONE_OK);
    ck_assert_int_eq(clc_mujoco_problem(f.m, f.d, 1, f.path, &pc, &Rc, &ac, &rc, &e), CLCONE_OK);
    ck_assert_int_eq(ps.n, pc.n);
    ck_assert_int_eq(ps.nnzb, pc.nnzb);
    for (int b = 0; b < ps.n; ++b) {
        int limit = f.d->efc_type[rs[b]] == mjCNSTR_LIMIT_JOINT;
        for (int t = ps.row_ptr[b]; t < ps.row_ptr[b + 1]; ++t)
            for (int x = 0; x < 9; ++x) {
                double add = limit && ps.col[t] == b && x == 0 ? Rs[3 * b] : 0;
                ck_assert_double_eq(pc.blocks[9 * t + x], ps.blocks[9 * t + x] + add);
            }
        for (int x = 0; x < 3; ++x) {
            ck_assert_double_eq(pc.q[3 * b + x], ps.q[3 * b + x] - as[3 * b + x]);
            ck_assert_double_eq(Rc[3 * b + x], 0);
            ck_assert_double_eq(ac[3 * b + x], 0);
        }
    }
    free(Rs);
    free(as);
    free(rs);
    free(Rc);
    free(ac);
    free(rc);
    clcone_problem_free(&ps);
    clcone_problem_free(&pc);
    mj_close(&f);
    mj_open(&f, CONTACT_XML, 0);
    step_compare(&f, NULL, CLCONE_MODEL_COULOMB, 100, 1e-10, &fd, &ad, &nc, &nr);
    ck_assert_int_ge(nc, 4);
    mj_close(&f);
}
END_TEST

/* The pinched capsule of bench/models/pinch.xml (MuJoCo issue #3328) with
 * clcone's exact Coulomb on ctx: 250 steps (0.5 s), the capsule's slip
 * rate in um/s from step 50 to 250 (downward positive), its whole drop in
 * um and the contacts at the end. */
static void pinch_hold(clcone_context *ctx, double *rate, double *drop, int *ncon)
{
    char path[4096], err[1000];
    const char *root = getenv("CLCONE_ROOT");
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    mjModel *m;
    mjData *d;
    double z0, z50 = 0;
    int zadr;
    snprintf(path, sizeof path, "%s/bench/models/pinch.xml", root ? root : ".");
    m = mj_loadXML(path, NULL, err, sizeof err);
    ck_assert_msg(m != NULL, "%s: %s", path, err);
    d = mj_makeData(m);
    zadr = m->jnt_qposadr[mj_name2id(m, mjOBJ_JOINT, "capsule")] + 2;
    z0 = d->qpos[zadr];
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    ck_assert_int_eq(clc_mujoco_create(ctx, &o, path, &a, &e), CLCONE_OK);
    for (int k = 0; k < 250; ++k) {
        ck_assert_msg(clc_mujoco_step(a, m, d, NULL, &st, &e) == CLCONE_OK, "step %d: %s", k, e.msg);
        ck_assert_msg(st.res.status == CLCONE_CONVERGED, "step %d: %s", k, st.res.reason);
        if (k == 49) z50 = d->qpos[zadr];
    }
    *rate = (z50 - d->qpos[zadr]) / (200 * m->opt.timestep) * 1e6;
    *drop = (z0 - d->qpos[zadr]) * 1e6;
    *ncon = d->ncon;
    clc_mujoco_free(a);
    mj_deleteData(d);
    mj_deleteModel(m);
}

/* Exact Coulomb holds the pinched capsule: the goal is a slip
 * under 0.1 um/s; the bound is ten times tighter. MuJoCo's a_ref aimed the
 * contacts' depth at 0, where MuJoCo drops a contact: before the adapter
 * aimed it 100 um deep the grip flickered from 0.12 s on: slip 43,700 um/s
 * in this window, 17.5 mm down at 0.5 s, out of the grip at 0.6 s. */
START_TEST(pinched_capsule_holds)
{
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    clcone_context *ctxs[2] = {NULL, ctx};
    for (int i = 0; i < 2; ++i) {
        double rate, drop;
        int ncon;
        pinch_hold(ctxs[i], &rate, &drop, &ncon);
        fprintf(stderr, "mujoco pinch, coulomb on the %s: slip %.3g um/s, drop %.3g um, %d contacts\n",
                i ? "device" : "reference", rate, drop, ncon);
        ck_assert_int_eq(ncon, 4);
        ck_assert_double_lt(fabs(rate), 0.01);
        ck_assert_double_lt(fabs(drop), 0.01);
    }
    clcone_context_free(ctx);
}
END_TEST

/* Every kind of row, elliptic (condim 3 with two friction coefficients, 4
 * and 6) and pyramidal, beside an equality, a friction loss, a limit and
 * a frictionless contact, on the general-block form: forces and qacc
 * within 1e-6 of MuJoCo's Newton at every state, on the reference and
 * (60 steps) on the device in double. Newton runs to 1e-14: at 1e-10 it
 * stops after 1 or 2 iterations on some states of the elliptic run, 7.5e-6
 * from clcone's forces there (step 98), where at 1e-14 the two agree to
 * 1e-7 on every step (measured). */
START_TEST(all_kinds_match_mujoco_newton)
{
    static const char ell[] = ALL_KINDS_XML("elliptic"), pyr[] = ALL_KINDS_XML("pyramidal");
    const unsigned common = 1u << mjCNSTR_EQUALITY | 1u << mjCNSTR_FRICTION_DOF | 1u << mjCNSTR_LIMIT_JOINT
                            | 1u << mjCNSTR_CONTACT_FRICTIONLESS;
    clcone_context *ctx = test_context(CLCONE_DOUBLE);
    int nc, nr;
    matches_newton_at(NULL, ell, 0, 200, 1e-14, "all kinds, elliptic", &nc, &nr);
    ck_assert_uint_eq(seen_kinds & (common | 1u << (8 + 3) | 1u << (8 + 4) | 1u << (8 + 6)),
                      common | 1u << (8 + 3) | 1u << (8 + 4) | 1u << (8 + 6));
    matches_newton_at(NULL, pyr, 0, 200, 1e-14, "all kinds, pyramidal", &nc, &nr);
    ck_assert_uint_eq(seen_kinds & (common | 1u << mjCNSTR_CONTACT_PYRAMIDAL), common | 1u << mjCNSTR_CONTACT_PYRAMIDAL);
    matches_newton_at(ctx, ell, 0, 60, 1e-14, "all kinds, elliptic, on the device", &nc, &nr);
    matches_newton_at(ctx, pyr, 0, 60, 1e-14, "all kinds, pyramidal, on the device", &nc, &nr);
    clcone_context_free(ctx);
}
END_TEST

/* The measure on the shared models: at the state MuJoCo reaches
 * in 200 of its own steps, one step's solve (tol 1e-10) against MuJoCo's
 * Newton at tolerance 1e-10, on the reference and on the device in
 * double (figures in the log; the bound is the 1e-6). */
static void shared_model_matches(const char *rel)
{
    char path[4096], msg[1000];
    mjModel *m, *mc;
    mjData *d0;
    snprintf(path, sizeof path, "%s", test_model_path(rel));
    m = mj_loadXML(path, NULL, msg, sizeof msg);
    ck_assert_msg(m != NULL, "%s", msg);
    d0 = mj_makeData(m);
    for (int k = 0; k < 200; ++k) mj_step(m, d0);
    mc = mj_copyModel(NULL, m);
    mc->opt.solver = mjSOL_NEWTON;
    mc->opt.tolerance = 1e-10;
    mc->opt.iterations = 1000;
    for (int dev = 0; dev < 2; ++dev) {
        clcone_context *ctx = dev ? test_context(CLCONE_DOUBLE) : NULL;
        mjData *d = mj_copyData(NULL, m, d0);
        clcone_options o;
        clc_mujoco *a;
        clc_mujoco_stats st;
        clcone_error e;
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_SOFT;
        o.tol = 1e-10;
        ck_assert_int_eq(clc_mujoco_create(ctx, &o, path, &a, &e), CLCONE_OK);
        ck_assert_msg(clc_mujoco_step(a, m, d, mc, &st, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert_msg(st.res.status == CLCONE_CONVERGED, "%s: %s", rel, st.res.reason);
        fprintf(stderr, "mujoco %s after 200 steps, %s: %d rows, %d blocks, force_rel_diff %.3e qacc_rel_diff %.3e\n",
                rel, dev ? "device double" : "reference", st.nefc, st.blocks, st.force_rel_diff, st.qacc_rel_diff);
        ck_assert_double_le(st.force_rel_diff, 1e-6);
        ck_assert_double_le(st.qacc_rel_diff, 1e-6);
        clc_mujoco_free(a);
        mj_deleteData(d);
        if (ctx) clcone_context_free(ctx);
    }
    mj_deleteModel(mc);
    mj_deleteData(d0);
    mj_deleteModel(m);
}

START_TEST(shared_models_match_newton)
{
    static const char *const models[] = {"humanoid/humanoid.xml", "humanoid/22_humanoids.xml",
                                         "humanoid/100_humanoids.xml", "replicate/newton_cradle.xml",
                                         "replicate/stonehenge.xml", "sleep/dominos.xml"};
    shared_model_matches(models[_i]);
}
END_TEST

/* A non-finite friction loss is an error naming its row, not a force. */
START_TEST(nan_frictionloss_named)
{
    static const char ell[] = ALL_KINDS_XML("elliptic");
    mj_fixture f = {{0}, 0, 0, 0};
    clc_bproblem p;
    clcone_error e;
    char want[32];
    int row = -1;
    mj_open(&f, ell, 0);
    mj_forward(f.m, f.d);
    for (int i = 0; i < f.d->nefc && row < 0; ++i)
        if (f.d->efc_type[i] == mjCNSTR_FRICTION_DOF) row = i;
    ck_assert_int_ge(row, 0);
    f.d->efc_frictionloss[row] = NAN;
    ck_assert_int_eq(clc_mujoco_bproblem(f.m, f.d, 0, f.path, &p, &e), CLCONE_EINVAL);
    snprintf(want, sizeof want, "row %d ", row);
    ck_assert_msg(strstr(e.msg, want) && strstr(e.msg, "dof friction loss") && strstr(e.msg, "frictionloss"),
                  "%s", e.msg);
    f.d->efc_frictionloss[row] = 0.05;
    f.d->efc_type[row] = 99; /* a kind MuJoCo 4 does not have */
    ck_assert_int_eq(clc_mujoco_bproblem(f.m, f.d, 0, f.path, &p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, want) && strstr(e.msg, "type 99, unknown"), "%s", e.msg);
    mj_close(&f);
}
END_TEST

/* What a general-block step leaves in MuJoCo's data: efc_state as
 * MuJoCo's dual solvers set it from the forces, by kind, and
 * qfrc_constraint = J'f. */
START_TEST(states_written_back)
{
    static const char ell[] = ALL_KINDS_XML("elliptic");
    mj_fixture f = {{0}, 0, 0, 0};
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    double qf[64];
    int seen[8] = {0};
    mj_open(&f, ell, 0);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    o.tol = 1e-10;
    ck_assert_int_eq(clc_mujoco_create(NULL, &o, f.path, &a, &e), CLCONE_OK);
    ck_assert_int_le((int)f.m->nv, 64);
    for (int k = 0; k < 120; ++k) {
        mjData *d = f.d;
        ck_assert_msg(clc_mujoco_step(a, f.m, d, NULL, &st, &e) == CLCONE_OK, "%s", e.msg);
        for (int i = 0; i < d->nefc; ++i) {
            int t = d->efc_type[i], s = d->efc_state[i], want;
            double fi = d->efc_force[i], fl = d->efc_frictionloss[i];
            if (t == mjCNSTR_CONTACT_ELLIPTIC) {
                if (!(d->efc_force[i - (i - d->contact[d->efc_id[i]].efc_address)] > 0))
                    ck_assert_int_eq(s, mjCNSTRSTATE_SATISFIED);
                continue;
            }
            want = t == mjCNSTR_EQUALITY ? mjCNSTRSTATE_QUADRATIC
                   : t == mjCNSTR_FRICTION_DOF
                       ? (fi <= -fl ? mjCNSTRSTATE_LINEARPOS : fi >= fl ? mjCNSTRSTATE_LINEARNEG : mjCNSTRSTATE_QUADRATIC)
                   : fi > 0 ? mjCNSTRSTATE_QUADRATIC
                            : mjCNSTRSTATE_SATISFIED;
            ck_assert_msg(s == want, "step %d row %d (type %d, f %g): state %d, want %d", k, i, t, fi, s, want);
            ++seen[s & 7];
        }
        mj_mulJacTVec(f.m, d, qf, d->efc_force);
        for (int v = 0; v < (int)f.m->nv; ++v)
            ck_assert_double_le(fabs(qf[v] - d->qfrc_constraint[v]), 1e-12 * fmax(1, fabs(qf[v])));
    }
    /* the arm's friction loss both slides (either way) and sticks */
    ck_assert_int_gt(seen[mjCNSTRSTATE_QUADRATIC], 0);
    ck_assert_int_gt(seen[mjCNSTRSTATE_LINEARNEG], 0);
    ck_assert_int_gt(seen[mjCNSTRSTATE_LINEARPOS], 0);
    clc_mujoco_free(a);
    mj_close(&f);
}
END_TEST

/* MuJoCo's default warning handler prints and appends to MUJOCO_LOG.TXT
 * in the working directory (the repository); the test keeps the text. */
static char warned[1000];
static void keep_warning(const char *msg) { snprintf(warned, sizeof warned, "%s", msg); }

/* A NaN in qvel: MuJoCo resets the state; the step is refused, saying so,
 * rather than carried on from the reset state. */
START_TEST(nan_state_refused)
{
    mj_fixture f = {{0}, 0, 0, 0};
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    mj_open(&f, CONTACT_XML, 0);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    ck_assert_int_eq(clc_mujoco_create(NULL, &o, f.path, &a, &e), CLCONE_OK);
    ck_assert_int_eq(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e), CLCONE_OK);
    f.d->qvel[7] = NAN;
    mju_user_warning = keep_warning;
    ck_assert_int_eq(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e), CLCONE_EINVAL);
    mju_user_warning = NULL;
    ck_assert_msg(strstr(warned, "QVEL"), "MuJoCo warned: %s", warned);
    ck_assert_msg(strstr(e.msg, f.path) && strstr(e.msg, "QVEL") && strstr(e.msg, "not stepped"), "%s", e.msg);
    clc_mujoco_free(a);
    mj_close(&f);
}
END_TEST

/* Ten resting spheres in an arena too small for their contacts: MuJoCo's
 * collision stops with mju_error (a stack overflow), which without the
 * adapter's handler ends the process. */
static const char SMALL_ARENA_XML[] =
    "<mujoco model=\"clc_small_arena\">\n"
    "  <size memory=\"16K\"/>\n"
    "  <option cone=\"elliptic\"/>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 1\"/>\n"
    "    <body pos=\"0 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"0.3 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"0.6 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"0.9 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"1.2 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"1.5 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"1.8 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"2.1 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"2.4 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body pos=\"2.7 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* A MuJoCo error inside the step is a status naming it, the process goes
 * on, the caller's own handler is back afterwards, and the CLI exits 2. */
START_TEST(mujoco_error_is_a_status)
{
    mj_fixture f = {{0}, 0, 0, 0};
    clcone_options o;
    clc_mujoco *a;
    clc_mujoco_stats st;
    clcone_error e;
    char args[256], out[8192], err[8192];
    mj_open(&f, SMALL_ARENA_XML, -1);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    ck_assert_int_eq(clc_mujoco_create(NULL, &o, f.path, &a, &e), CLCONE_OK);
    ck_assert_ptr_null(mju_user_error);
    ck_assert_int_eq(clc_mujoco_step(a, f.m, f.d, NULL, &st, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, f.path) && strstr(e.msg, "MuJoCo stopped with an error") && strstr(e.msg, "mj_stackAlloc"),
                  "%s", e.msg);
    ck_assert_ptr_null(mju_user_error);
    clc_mujoco_free(a);
    snprintf(args, sizeof args, "mujoco %s --steps 2 --device ref", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "mj_stackAlloc"), "%s", err);
    mj_close(&f);
}
END_TEST

/* The CLI: the comparison's last line, a bad path, an unsupported model. */
START_TEST(cli_mujoco)
{
    mj_fixture f = {{0}, 0, 0, 0};
    char out[65536], err[4096], args[8192];
    double fd = -1;
    mj_open(&f, CONTACT_XML, -1);
    snprintf(args, sizeof args, "mujoco %s --steps 20 --device ref --tol 1e-10 --compare mujoco", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(sscanf(strstr(test_last_line(out), "force_rel_diff="), "force_rel_diff=%lf", &fd) == 1, "%s", out);
    ck_assert_msg(strncmp(test_last_line(out), "status=converged ", 17) == 0, "%s", out);
    ck_assert_double_le(fd, 1e-6);
    ck_assert_int_eq(test_run_cli(NULL, "mujoco /nonexistent/m.xml --steps 1", out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "/nonexistent/m.xml: cannot open"), "%s", err);
    snprintf(args, sizeof args, "mujoco %s --steps 1 --device ref --model coulomb",
             test_model_path("humanoid/humanoid.xml"));
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(strstr(out, "solver hybrid (newton in proximal rounds on the primal problem where the 3-row "
                              "form does not hold a state)")
                      && strncmp(test_last_line(out), "status=converged ", 17) == 0, "%s", out);
    /* the general-block form takes apgd and pgs, and says so */
    snprintf(args, sizeof args, "mujoco %s --steps 1 --device ref --solver cgs",
             test_model_path("humanoid/humanoid.xml"));
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "humanoid.xml: solver cgs is not available for model soft on the general-block problem "
                              "on the CPU reference (offered: apgd (default), pgs)"), "%s", err);
    snprintf(args, sizeof args, "mujoco %s --steps 1 --compare siconos", f.path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    mj_close(&f);
}
END_TEST

Suite *suite_mujoco(void)
{
    Suite *s = suite_create("mujoco");
    TCase *tc = tcase_create("mujoco");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, problem_is_mujocos_dual);
    tcase_add_test(tc, a_on_trees_is_dense_a);
    tcase_add_test(tc, contacts_match_mujoco_newton);
    tcase_add_test(tc, contacts_match_on_device);
    tcase_add_test(tc, limits_match_mujoco_newton);
    tcase_add_test(tc, coulomb_on_general_form);
    tcase_add_test(tc, unsupported_rows_refused);
    tcase_add_test(tc, coulomb_elliptic_every_kind);
    tcase_add_test(tc, coulomb_elliptic_primal_matches_3row);
    tcase_add_test(tc, coulomb_problem_and_steps);
    tcase_add_test(tc, pinched_capsule_holds);
    tcase_add_test(tc, nan_state_refused);
    tcase_add_test(tc, mujoco_error_is_a_status);
    tcase_add_test(tc, cli_mujoco);
    tcase_add_test(tc, all_kinds_match_mujoco_newton);
    tcase_add_test(tc, nan_frictionloss_named);
    tcase_add_test(tc, states_written_back);
    suite_add_tcase(s, tc);
    tc = tcase_create("shared models");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, shared_models_match_newton, 0, 6);
    suite_add_tcase(s, tc);
    return s;
}

#else

/* Without MuJoCo the command says how to get it, exit 2. */
START_TEST(cli_says_how_to_get_mujoco)
{
    char out[4096], err[4096];
    ck_assert_int_eq(test_run_cli(NULL, "mujoco m.xml --steps 1", out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "make mujoco"), "%s", err);
}
END_TEST

Suite *suite_mujoco(void)
{
    Suite *s = suite_create("mujoco");
    TCase *tc = tcase_create("mujoco");
    fprintf(stderr, "mujoco suite: built without MuJoCo (`make test` installs it; see docs/mujoco.md): only "
                    "the CLI's message is tested\n");
    tcase_add_test(tc, cli_says_how_to_get_mujoco);
    suite_add_tcase(s, tc);
    return s;
}

#endif
