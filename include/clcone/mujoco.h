/* clcone as MuJoCo's constraint solver for a program's own model and data: each step is
 * mj_step's, clcone solving the constraints. libclcone_mujoco's, not libclcone's (docs/mujoco.md). */
#ifndef CLCONE_API_MUJOCO_H
#define CLCONE_API_MUJOCO_H

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MuJoCo's mjModel and mjData (<mujoco/mujoco.h>, not included here). */
struct mjModel_;
struct mjData_;

/* The MuJoCo version built against ("4.0.0"); the libmujoco loaded must be that one. */
CLCONE_API const char *clcone_mj_version(void);

/* Steps n data of one model, their problems one batch a step, each world as it would be alone. */
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

/* n worlds of m (which must outlive it) on device spec ("ref": reference, double), model soft
 * (MuJoCo's problem) or coulomb (hard), o's solver, tol and caps (warm_start: the stepper's);
 * MuJoCo's stages on `threads` threads (1 to 256, the same results). */
CLCONE_API clcone_status clcone_mj_stepper_create(const char *spec, clcone_precision prec, const clcone_options *o,
                                                  const struct mjModel_ *m, int n, int threads,
                                                  clcone_mj_stepper **out, clcone_error *err);
CLCONE_API void clcone_mj_stepper_free(clcone_mj_stepper *s);
/* Whether o can step MuJoCo's problem on a device (device 1) or the reference (0), as
 * clcone_mj_stepper_create checks it: the model, a solver some form of the problem runs there,
 * the stopping options; for a caller that makes its stepper later (at its first step). */
CLCONE_API clcone_status clcone_mj_options_check(const clcone_options *o, int device, clcone_error *err);

/* Steps each of the n d[k] in place as mj_step (n as at creation), st[k] its figures; an error
 * names the world (and row), and a world whose step failed is not to be stepped on. */
CLCONE_API clcone_status clcone_mj_stepper_step(clcone_mj_stepper *s, struct mjData_ *const *d, int n,
                                                clcone_mj_stats *st, clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
