/* MuJoCo's primal problem (core/primal.h) at a state, as islands, for
 * MuJoCo's Newton method (mujoco/mj_primal.c). */
#ifndef CLCONE_MUJOCO_MJ_PRIMAL_H
#define CLCONE_MUJOCO_MJ_PRIMAL_H

#include "mujoco/adapter.h"
#include "core/primal.h"

/* The state's rows split into MuJoCo's islands, each a primal problem at its offsets (docs/mujoco.md). */
typedef struct clc_mj_primal {
    int n;
    clc_pproblem *isl;
    int *dof_off, *dof, *row_off, *row;
    double *a, *f;
    int *state;
    int warm; /* MuJoCo's warm start (not disabled): from qacc_warmstart */
} clc_mj_primal;

/* MuJoCo's primal problem by islands after mj_fwdAcceleration, each validated (errors name island and row);
 * hard: the contacts' rows hard (core/primal.h), the model coulomb's. */
clcone_status clc_mj_primal_build(const mjModel *m, const mjData *d, const char *label, int hard,
                                     clc_mj_primal *pr, clcone_error *err);
void clc_mj_primal_free(clc_mj_primal *pr);

/* pr's islands as one batch from pr->a if warm_start; out the worst status and error, most iterations, wall time. */
clcone_status clc_mj_primal_solve(clcone_context *ctx, clc_mj_primal *pr, const clcone_options *o,
                                  clcone_prob_result *out, clcone_error *err);

/* The n pr[j]'s islands as one batch (one launch on a device), each
 * solved as alone; out[j] pr[j]'s results as clc_mj_primal_solve's; a
 * failing island's pr in *failed (else -1), the island named in err. */
clcone_status clc_mj_primal_solve_many(clcone_context *ctx, int n, clc_mj_primal *const *pr,
                                       const clcone_options *o, int threads, clcone_prob_result *out, int *failed,
                                       clcone_error *err);

/* pr's solution as MuJoCo's Newton leaves it: efc_force, efc_state, efc_b, qfrc_constraint, qacc. */
void clc_mj_primal_write(const mjModel *m, mjData *d, const clc_mj_primal *pr);

#endif
