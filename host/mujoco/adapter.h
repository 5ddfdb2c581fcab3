/* The MuJoCo adapter: MuJoCo's constraint problem solved by clcone.
 *
 * MuJoCo has no solver hook, so clc_mujoco_step runs mj_step's stages
 * itself (mj_step1, actuation, smooth acceleration), solves MuJoCo's dual
 * at that state with clcone, writes MuJoCo's constraint outputs and lets
 * MuJoCo finish the step (sensors, integrator). Built only when the
 * Makefile found MuJoCo (CLCONE_MUJOCO); linked into the CLI and the
 * tests, not into libclcone. */
#ifndef CLCONE_MUJOCO_ADAPTER_H
#define CLCONE_MUJOCO_ADAPTER_H

#include <clcone/clcone.h>
#include <mujoco/mujoco.h>

#include "core/blocks.h"

/* What one step solved. */
typedef struct clc_mujoco_stats {
    int nefc;                /* MuJoCo's constraint rows */
    int ncon;                /* MuJoCo's contacts */
    int blocks;              /* clcone's blocks (a contact, a limit, a friction-loss
                                row, an equality constraint's rows) */
    int warm_matched;        /* blocks started from last step's forces */
    clcone_prob_result res;  /* clcone's solve (status, iters, error, time) */
    double setup_ms;         /* forming A and the plan, outside res.time_ms */
    /* against MuJoCo's own solver at the same state (a compare model was
     * given): max |f - f_mj| / max |f_mj|, and max |qacc - qacc_mj| /
     * max(max |qacc_mj|, max |qacc_smooth|) (resting bodies have qacc ~ 0,
     * the two terms cancelled); -1 otherwise, 0 on a step without rows */
    double force_rel_diff, qacc_rel_diff;
    double mujoco_ms;        /* MuJoCo's mj_fwdConstraint with the compare
                                model's options, else 0 */
} clc_mujoco_stats;

typedef struct clc_mujoco clc_mujoco;

/* An adapter solving on ctx (NULL: the CPU reference) with the options o
 * (model soft: MuJoCo's own R and a_ref; coulomb: R = 0 on the contact
 * rows, exact Coulomb, a contact's a_ref aimed at a tenth of its
 * solimp width deep, not at 0, where MuJoCo drops it; other fields as for
 * clcone_solve; warm_start is the adapter's). label names the model in messages (its file). */
clcone_status clc_mujoco_create(clcone_context *ctx, const clcone_options *o, const char *label,
                                   clc_mujoco **out, clcone_error *err);
void clc_mujoco_free(clc_mujoco *a);

/* One mj_step of (m, d) with clcone as the constraint solver, warm-started
 * from the forces of the blocks that were there last step. compare, when
 * not NULL, is a copy of m whose solver options MuJoCo's own solver runs
 * with at the same state first (st's differences). The soft model solves
 * every row kind: with solver newton by MuJoCo's Newton method on its
 * primal problem (mujoco/mj_primal.h, the reference only), else on the
 * 3-row form (clc_mujoco_problem) when every row fits it, else on the
 * general-block form (clc_mujoco_bproblem, solve/blocks_solve.h: apgd,
 * or pgs on the reference; another solver is CLCONE_ENOTSUP). coulomb solves the 3-row form only: rows it does not
 * hold (equality, friction loss, pyramidal contacts, elliptic contacts of
 * condim 4 or 6 or with two friction coefficients) are CLCONE_ENOTSUP
 * naming the kinds and their counts. Non-finite MuJoCo data are
 * CLCONE_EINVAL naming the row; d is then
 * left after the smooth acceleration, not stepped. A warning of MuJoCo's
 * that loses physics (mujoco/guard.h: a qpos, qvel or qacc it reset, a
 * contact list or constraint arena it found full) is CLCONE_EINVAL with
 * its text. An error inside MuJoCo (mju_error, e.g. its arena too small
 * for the contacts) is CLCONE_EINVAL with MuJoCo's message instead of
 * MuJoCo ending the process (clc_mujoco_call); d is then not to be
 * stepped on. */
clcone_status clc_mujoco_step(clc_mujoco *a, const mjModel *m, mjData *d, const mjModel *compare,
                                 clc_mujoco_stats *st, clcone_error *err);

/* A step in two halves around its solve, for a caller that solves many
 * models' problems together (mujoco/worlds.c, one batch): clc_mujoco_step
 * is clc_mujoco_begin, clc_mujoco_solve_pending, then
 * clc_mujoco_end. begin runs mj_step's stages up to the constraint
 * solve (MuJoCo's own solver first when compare is given) and builds the
 * problem with its warm start, in the 3-row form (p, R, aref, row) or the
 * general-block form (general, bp); nb 0 is a step without rows (MuJoCo's
 * own shortcut already ran: solve nothing). A caller batching 3-row
 * problems solves them on a plan of clc_mujoco_solve_options. end takes
 * the forces in pd->r and the solve's result in st->res, writes them back
 * and finishes the step. Both return as clc_mujoco_step does; free pd
 * after either. */
typedef struct clc_mujoco_pending {
    int general;          /* 1: the general-block form, bp */
    int nb;               /* blocks (0: no rows) */
    int nr;               /* entries of r (and of the 3-row form's R, aref) */
    clcone_problem p;     /* the 3-row form's problem */
    clc_bproblem bp;   /* the general-block form's */
    double *R, *aref;     /* soft's R and a_ref (3-row form; 3 a block) */
    double *r;            /* the warm start, then the forces */
    double *fixed;        /* the general-block form's decoupled rows' forces, NaN
                             elsewhere (clc_mujoco_bproblem_decouple) */
    int *row;             /* each 3-row block's first efc row */
    struct mj_key *key;   /* each block's identity, for the next warm start */
    double *fmj, *amj;    /* MuJoCo's forces and qacc when comparing */
    struct clc_mj_primal *primal; /* soft with solver newton: MuJoCo's
                             primal problem by islands (mujoco/mj_primal.h),
                             solved by MuJoCo's Newton; NULL otherwise */
} clc_mujoco_pending;

clcone_status clc_mujoco_begin(clc_mujoco *a, const mjModel *m, mjData *d, const mjModel *compare,
                                  clc_mujoco_pending *pd, clc_mujoco_stats *st, clcone_error *err);
clcone_status clc_mujoco_end(clc_mujoco *a, const mjModel *m, mjData *d, clc_mujoco_pending *pd,
                                clc_mujoco_stats *st, clcone_error *err);
void clc_mujoco_pending_free(clc_mujoco_pending *pd);
/* pd's problem alone on the adapter's backend: its forces in pd->r, its
 * result in st->res (a plan's set-up added to st->setup_ms). */
clcone_status clc_mujoco_solve_pending(clc_mujoco *a, clc_mujoco_pending *pd, clc_mujoco_stats *st,
                                         clcone_error *err);
/* The options pd's problem is solved with: the adapter's, warm-started,
 * soft's R and a_ref (3 per block, for the whole batch) when soft. */
void clc_mujoco_solve_options(const clc_mujoco *a, const double *R, const double *aref, clcone_options *o);

/* MuJoCo's dual at d's current stage (after mj_fwdAcceleration) as a
 * clcone problem: one block per elliptic condim-3 contact (its three rows)
 * or per 1-row constraint (mu = 0, two idle rows), W = J M^-1 J' formed
 * with mj_solveM, q = J qacc_smooth; R and a_ref (3 per block) MuJoCo's
 * efc_R and efc_aref; coulomb: R = 0 on contact rows, the limit rows' R
 * added to W and a_ref taken into q (R, aref then 0). row[b] is block b's
 * first efc row. The caller frees p, R, aref and row (free()). */
clcone_status clc_mujoco_problem(const mjModel *m, mjData *d, int coulomb, const char *label, clcone_problem *p,
                                    double **R, double **aref, int **row, clcone_error *err);

/* MuJoCo's whole dual at d's current stage (after mj_fwdAcceleration) as
 * a general-block problem (mujoco/general.c says how each row kind
 * maps): rows are MuJoCo's efc rows in order, W = J M^-1 J' + R (efc_AR),
 * q = J qacc_smooth - efc_aref (efc_b); with coulomb R is 0 on the
 * contact rows (for states without elliptic contacts: the adapter's
 * choice). Non-finite data, or rows that make no block, are
 * CLCONE_EINVAL naming the row. The caller frees p. */
clcone_status clc_mujoco_bproblem(const mjModel *m, mjData *d, int coulomb, const char *label, clc_bproblem *p,
                                     clcone_error *err);
/* p's blocks that no Jacobian row reaches (each of their rows zero: a
 * contact that cannot move along any of its directions) are decoupled:
 * W there is R's diagonal alone, so their forces are known in closed form
 * (free -q/R, a box that clamped, f >= 0 max(0, -q/R), a cone whose
 * tangential q is 0, as it is with J = 0: its normal so, tangents 0).
 * With R as small as MuJoCo makes it there (1e-15) those forces are
 * huge (1e15) and would swamp the relative error measure of the whole
 * problem, the coupled blocks' errors unseen. So p keeps the rows as a
 * trivial block (W = I, q = 0: force 0) and fixed[i] (p->m, NaN where
 * the solve decides) holds their forces, to write back instead. */
void clc_mujoco_bproblem_decouple(const mjModel *m, const mjData *d, clc_bproblem *p, double *fixed);

/* Writes the forces f of p (MuJoCo's rows) back as MuJoCo's outputs:
 * efc_force, efc_state (as MuJoCo's dual solvers set it), efc_b,
 * qfrc_constraint and qacc. */
void clc_mujoco_bproblem_write(const mjModel *m, mjData *d, const clc_bproblem *p, const double *f);

#endif
