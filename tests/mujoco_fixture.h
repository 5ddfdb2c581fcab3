/* A MuJoCo model from MJCF text for the MuJoCo suites (tests/test_mujoco*.c):
 * written to a temporary file, loaded, its data made (at keyframe key,
 * or the model's state for key < 0), and a copy whose solver is MuJoCo's
 * Newton to tolerance 1e-10 for comparisons. */
#ifndef CLCONE_TESTS_MUJOCO_FIXTURE_H
#define CLCONE_TESTS_MUJOCO_FIXTURE_H

#include <mujoco/mujoco.h>
#include "testutil.h"

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

static inline void mj_close(mj_fixture *f)
{
    mj_deleteData(f->d);
    mj_deleteModel(f->mc);
    mj_deleteModel(f->m);
    unlink(f->path);
}

#endif
