/* A MuJoCo model from MJCF text for the MuJoCo suites (tests/test_mujoco*.c):
 * written to a temporary file, loaded, its data made (at keyframe key,
 * or the model's state for key < 0), and a copy whose solver is MuJoCo's
 * Newton to tolerance 1e-10 for comparisons; and the models more than one
 * MuJoCo suite steps. */
#ifndef CLCONE_TESTS_MUJOCO_FIXTURE_H
#define CLCONE_TESTS_MUJOCO_FIXTURE_H

#include <mujoco/mujoco.h>
#include "testutil.h"
#include "core/primal.h"

/* Every row kind of MuJoCo's in one model: an arm on a hinge with
 * friction loss (a box row) and a limit it swings into, a ball held to
 * its tip by a connect equality (3 free rows), and on a floor spheres and
 * a box with contacts of condim 1, 3 (two friction coefficients, by an
 * explicit pair), 4 and 6; CONE_MARK is the cone, elliptic or pyramidal
 * (2 (condim - 1) rows f >= 0: up to 10 for condim 6). */
#define ALL_KINDS_XML(CONE_MARK)                                                                                      \
    "<mujoco model=\"clc_all_kinds\">\n"                                                                            \
    "  <option timestep=\"0.005\" cone=\"" CONE_MARK "\" impratio=\"2\"/>\n"                                         \
    "  <worldbody>\n"                                                                                                  \
    "    <geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\" condim=\"1\" friction=\"0.5 0.005 0.0001\"/>\n"          \
    "    <body name=\"arm\" pos=\"0 0 1\"><joint type=\"hinge\" axis=\"0 1 0\" limited=\"true\" range=\"-20 20\"\n"   \
    "        frictionloss=\"0.05\"/>\n"                                                                                \
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.5 0 0\" size=\"0.05\" contype=\"0\" conaffinity=\"0\"/></body>\n"  \
    "    <body name=\"ball\" pos=\"0.5 0 1\"><freejoint/>\n"                                                           \
    "      <geom type=\"sphere\" size=\"0.05\" contype=\"0\" conaffinity=\"0\"/></body>\n"                             \
    "    <body pos=\"1 0 0.1\"><freejoint/><geom type=\"sphere\" size=\"0.1\" condim=\"1\"/></body>\n"                \
    "    <body pos=\"1.5 0 0.1\"><freejoint/><geom name=\"s3\" type=\"sphere\" size=\"0.1\" condim=\"3\"/></body>\n"  \
    "    <body pos=\"2 0 0.1\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\" condim=\"4\"\n"                    \
    "        friction=\"0.6 0.02 0.0001\"/></body>\n"                                                                  \
    "    <body pos=\"2.5 0 0.1\"><freejoint/><geom type=\"sphere\" size=\"0.1\" condim=\"6\"\n"                       \
    "        friction=\"0.7 0.01 0.002\"/></body>\n"                                                                   \
    "  </worldbody>\n"                                                                                                 \
    "  <contact><pair geom1=\"floor\" geom2=\"s3\" condim=\"3\" friction=\"0.8 0.4 0.005 0.0001 0.0001\"/></contact>\n" \
    "  <equality><connect body1=\"ball\" body2=\"arm\" anchor=\"0 0 0\"/></equality>\n"                             \
    "  <keyframe><key qvel=\"0  0 0 0 0 0 0  0 0 0 0 0 0  1 0 0 0 0 0  0 1 0 0 0 0  0 0 0 0 0 1\"/></keyframe>\n"     \
    "</mujoco>\n"

/* A sphere on a hinge about the contact normal, spinning, beside a free
 * sphere: the hinged sphere's contact rows have zero Jacobian rows (it
 * cannot move along the normal or the tangents), so A = J M^-1 J' has a
 * zero diagonal there; with MuJoCo's R > 0 the soft problem is well
 * posed, and MuJoCo steps it. CONE_MARK: elliptic or pyramidal. */
#define HINGE_SPHERE_XML(CONE_MARK)                                                                                    \
    "<mujoco model=\"clc_hinge_sphere\">\n"                                                                         \
    "  <option cone=\"" CONE_MARK "\"/>\n"                                                                            \
    "  <worldbody>\n"                                                                                                  \
    "    <geom type=\"plane\" size=\"5 5 1\"/>\n"                                                                      \
    "    <body pos=\"0 0 0.099\"><joint type=\"hinge\" axis=\"0 0 1\"/><geom type=\"sphere\" size=\"0.1\"/></body>\n" \
    "    <body pos=\"0.5 0 0.099\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"                         \
    "  </worldbody>\n"                                                                                                 \
    "  <keyframe><key qvel=\"3  0.2 0 0 0 0 0\"/></keyframe>\n"                                                     \
    "</mujoco>\n"

typedef struct mj_fixture {
    char path[64];
    mjModel *m, *mc;
    mjData *d;
} mj_fixture;

static inline void mj_open(mj_fixture *f, const char *xml, int key)
{
    char err[1000];
    snprintf(f->path, sizeof f->path, "%s", test_write_temp(xml, strlen(xml)));
    f->m = mj_loadXML(f->path, NULL, err, sizeof err);
    ck_assert_msg(f->m != NULL, "MuJoCo cannot load the test model: %s", err);
    f->d = mj_makeData(f->m);
    ck_assert_ptr_nonnull(f->d);
    if (key >= 0) mj_resetDataKeyframe(f->m, f->d, key);
    f->mc = mj_copyModel(NULL, f->m);
    f->mc->opt.solver = mjSOL_NEWTON;
    f->mc->opt.tolerance = 1e-10;
    f->mc->opt.iterations = 1000;
}

/* MuJoCo's model file rel (tests/data/models/mujoco) as a fixture. */
static inline void mj_open_file(mj_fixture *f, const char *rel)
{
    char err[1000];
    snprintf(f->path, sizeof f->path, "%s", "");
    f->m = mj_loadXML(test_model_path(rel), NULL, err, sizeof err);
    ck_assert_msg(f->m != NULL, "%s: %s", rel, err);
    ck_assert_ptr_nonnull(f->d = mj_makeData(f->m));
    f->mc = mj_copyModel(NULL, f->m);
    f->mc->opt.solver = mjSOL_NEWTON;
    f->mc->opt.tolerance = 1e-10;
    f->mc->opt.iterations = 1000;
}

static inline void mj_close(mj_fixture *f)
{
    mj_deleteData(f->d);
    mj_deleteModel(f->mc);
    mj_deleteModel(f->m);
    unlink(f->path);
}

/* A primal problem of nv dofs (M = I, a0 = f0 = -1) and one row of
 * kind (a BLK_* of kernels/block_sets.h) summing them, R 1, a_ref 0. */
static inline void primal_tiny(clc_pproblem *p, int nv, int kind)
{
    clcone_error e;
    ck_assert_int_eq(clc_pproblem_alloc(p, nv, 1, 1, nv, (size_t)nv * nv, &e), CLCONE_OK);
    p->moff[1] = nv * nv;
    for (int v = 0; v < nv; ++v) {
        p->M[(size_t)v * nv + v] = 1;
        p->jc[v] = v;
        p->jv[v] = 1;
        p->a0[v] = p->f0[v] = -1;
    }
    p->jp[1] = nv;
    p->ng = 1;
    p->goff[1] = nv;
    p->aref[0] = 0;
    p->R[0] = 1;
    p->kind[0] = kind;
    p->off[1] = 1;
    p->scale = 1;
    p->ls_iterations = 50;
    p->ls_tolerance = 0.01;
}

#endif
