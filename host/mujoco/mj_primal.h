/* MuJoCo's primal problem (core/primal.h) at a state, as islands, for
 * MuJoCo's Newton method (mujoco/mj_primal.c). */
#ifndef CLCONE_MUJOCO_MJ_PRIMAL_H
#define CLCONE_MUJOCO_MJ_PRIMAL_H

#include "mujoco/adapter.h"
#include "core/primal.h"

/* The state's rows split into islands: the kinematic trees that rows join
 * (a row joins the trees its Jacobian row reaches), each island's dofs
 * all of its trees' dofs, as MuJoCo's islands. Rows whose Jacobian row is
 * zero make one island of no dofs (their forces do not depend on qacc).
 * Island k is isl[k]; its dofs are dof[dof_off[k] ..] (its local dof j is
 * MuJoCo's dof[dof_off[k] + j]), its rows row[row_off[k] ..] likewise;
 * a, f and state (at the same offsets) its accelerations, forces and
 * zones. Dofs in no island keep qacc_smooth. */
typedef struct clc_mj_primal {
    int n;
    clc_pproblem *isl;
    int *dof_off, *dof, *row_off, *row;
    double *a, *f;
    int *state;
    int warm; /* MuJoCo's warm start (not disabled): from qacc_warmstart */
} clc_mj_primal;

/* MuJoCo's primal problem at d's current stage (after
 * mj_fwdAcceleration): M from MuJoCo's sparse inertia, J, qacc_smooth,
 * qfrc_smooth, efc_aref, efc_R, friction losses, contact friction and mu,
 * the stopping rule's scale 1 / (the island's sum of M's diagonal, as
 * MuJoCo's island solver) and the model's line search options; a the
 * start (qacc_warmstart). Each island validated (CLCONE_EINVAL naming the
 * island and MuJoCo's row). */
clcone_status clc_mj_primal_build(const mjModel *m, const mjData *d, const char *label, clc_mj_primal *pr,
                                     clcone_error *err);
void clc_mj_primal_free(clc_mj_primal *pr);

/* pr's islands solved as one batch (clc_solve_primal_batch) with o on
 * ctx, from pr->a when o->warm_start; into out the worst status and
 * error over the islands, the most iterations and the wall time. A
 * failing island is named. */
clcone_status clc_mj_primal_solve(clcone_context *ctx, clc_mj_primal *pr, const clcone_options *o,
                                  clcone_prob_result *out, clcone_error *err);

/* pr's solution as MuJoCo's outputs (MuJoCo's Newton's): efc_force,
 * efc_state, efc_b, qfrc_constraint = J'f and qacc. */
void clc_mj_primal_write(const mjModel *m, mjData *d, const clc_mj_primal *pr);

#endif
