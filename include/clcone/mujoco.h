/* clcone as MuJoCo's constraint solver for a program that holds its own
 * MuJoCo model and data (the Python package's clcone.mujoco): each step
 * is mj_step's, with clcone solving MuJoCo's constraint problem (the
 * adapter of `clcone mujoco`, docs/mujoco.md). In libclcone_mujoco, built
 * beside libclcone when the build found MuJoCo (`make
 * build/libclcone_mujoco.so`), linked against the libmujoco it was built
 * with; not part of libclcone. */
#ifndef CLCONE_API_MUJOCO_H
#define CLCONE_API_MUJOCO_H

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MuJoCo's mjModel and mjData (<mujoco/mujoco.h>), which this header
 * does not need to include. */
struct mjModel_;
struct mjData_;

/* MuJoCo's version that libclcone_mujoco was compiled against ("4.0.0");
 * the libmujoco loaded with it must be that one. */
CLCONE_API const char *clcone_mj_version(void);

/* Steps n MuJoCo data of one model together: their constraint problems
 * solved as one batch a step, each world as it would be alone. */
typedef struct clcone_mj_stepper clcone_mj_stepper;

/* What one world's step did. */
typedef struct clcone_mj_stats {
    int rows;                 /* MuJoCo's constraint rows (nefc) */
    int contacts;             /* its contacts (ncon) */
    int blocks;               /* clcone's blocks (0: no rows, nothing solved) */
    int warm;                 /* blocks warm-started from the last step's forces */
    clcone_run_status status; /* the solve's (CONVERGED when nothing was solved) */
    int iters;
    double error;             /* the solve's error at its stop */
    double solve_ms;          /* the solve's time (a device batch's, the whole batch's) */
} clcone_mj_stats;

/* A stepper of n worlds of m (which must outlive it) on the device spec
 * (as clcone_context_create takes it; "ref": the CPU reference, double)
 * in precision prec, with the options o: model CLCONE_MODEL_SOFT
 * (MuJoCo's own problem) or CLCONE_MODEL_COULOMB (hard contact), solver,
 * tolerance and caps as for clcone_solve; warm_start is the stepper's
 * own. MuJoCo's stages run a world on `threads` threads (1 to 256; the
 * results do not depend on it). */
CLCONE_API clcone_status clcone_mj_stepper_create(const char *spec, clcone_precision prec, const clcone_options *o,
                                                  const struct mjModel_ *m, int n, int threads,
                                                  clcone_mj_stepper **out, clcone_error *err);
CLCONE_API void clcone_mj_stepper_free(clcone_mj_stepper *s);

/* One step of each d[k] (n data of the stepper's model, as many as it was
 * made for) in place, as mj_step does; world k warm-starts from the
 * forces of its own last step. st (n entries) gets each world's figures.
 * An error names the world (and the row); a world whose step failed is
 * not to be stepped on. */
CLCONE_API clcone_status clcone_mj_stepper_step(clcone_mj_stepper *s, struct mjData_ *const *d, int n,
                                                clcone_mj_stats *st, clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
