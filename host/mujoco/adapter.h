/* The MuJoCo adapter: MuJoCo's constraint problem solved by clcone.
 * MuJoCo has no solver hook, so clc_mujoco_step runs mj_step's stages around
 * clcone's solve (docs/mujoco.md). Built only with MuJoCo (CLCONE_MUJOCO);
 * linked into the CLI and the tests, not into libclcone. */
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
    /* relative differences from MuJoCo's own solve (docs/mujoco.md); -1 without compare, 0 without rows */
    double force_rel_diff, qacc_rel_diff;
    double mujoco_ms;        /* MuJoCo's mj_fwdConstraint with the compare
                                model's options, else 0 */
} clc_mujoco_stats;

typedef struct clc_mujoco clc_mujoco;

/* Refuses a solver that no form of MuJoCo's problem runs on the backend (device 1: a device), naming
 * what each form offers; flags: the options named as the CLI's flags, else as the API's names. */
clcone_status clc_mujoco_check_solver(const clcone_options *o, int device, int flags, clcone_error *err);
/* The model (soft or coulomb), then the solver as above, then the stopping options. */
clcone_status clc_mujoco_check_options(const clcone_options *o, int device, clcone_error *err);
/* An adapter solving on ctx (NULL: the reference) with o (models: docs/mujoco.md), its options
 * checked as clc_mujoco_check_options does; label names the model. */
clcone_status clc_mujoco_create(clcone_context *ctx, const clcone_options *o, const char *label,
                                   clc_mujoco **out, clcone_error *err);
void clc_mujoco_free(clc_mujoco *a);

/* One mj_step with clcone as the constraint solver, warm-started; compare: MuJoCo's solver run first.
 * Errors (docs/mujoco.md) leave d unstepped, and after an error inside MuJoCo not to be stepped on. */
clcone_status clc_mujoco_step(clc_mujoco *a, const mjModel *m, mjData *d, const mjModel *compare,
                                 clc_mujoco_stats *st, clcone_error *err);

/* A step in two halves around its solve (begin, solve, end), for batching many models (docs/mujoco.md). */
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
    struct clc_mj_primal *primal; /* soft with solver newton, or coulomb's state
                             off the 3-row form (its contact rows hard):
                             MuJoCo's primal problem by islands (mj_primal.h);
                             else NULL */
} clc_mujoco_pending;

clcone_status clc_mujoco_begin(clc_mujoco *a, const mjModel *m, mjData *d, const mjModel *compare,
                                  clc_mujoco_pending *pd, clc_mujoco_stats *st, clcone_error *err);
clcone_status clc_mujoco_end(clc_mujoco *a, const mjModel *m, mjData *d, clc_mujoco_pending *pd,
                                clc_mujoco_stats *st, clcone_error *err);
/* Frees pd; the caller frees it after begin and after end. */
void clc_mujoco_pending_free(clc_mujoco_pending *pd);
/* pd's problem alone: forces in pd->r, result in st->res, plan set-up added to st->setup_ms. */
clcone_status clc_mujoco_solve_pending(clc_mujoco *a, clc_mujoco_pending *pd, clc_mujoco_stats *st,
                                         clcone_error *err);
/* The options pd's problem is solved with (soft: R, aref 3 per block over the whole batch). */
void clc_mujoco_solve_options(const clc_mujoco *a, const double *R, const double *aref, clcone_options *o);

/* MuJoCo's dual after mj_fwdAcceleration as a 3-row problem (docs/mujoco.md); caller frees p, R, aref, row. */
clcone_status clc_mujoco_problem(const mjModel *m, mjData *d, int coulomb, const char *label, clcone_problem *p,
                                    double **R, double **aref, int **row, clcone_error *err);

/* MuJoCo's whole dual after mj_fwdAcceleration as a general-block problem; caller frees p. */
clcone_status clc_mujoco_bproblem(const mjModel *m, mjData *d, int coulomb, const char *label, clc_bproblem *p,
                                     clcone_error *err);
/* Takes blocks no Jacobian row reaches out of the solve: forces in fixed[] (NaN elsewhere), W = I, q = 0. */
void clc_mujoco_bproblem_decouple(const mjModel *m, const mjData *d, clc_bproblem *p, double *fixed);

/* Writes f back as MuJoCo's efc_force, efc_state, efc_b, qfrc_constraint and qacc. */
void clc_mujoco_bproblem_write(const mjModel *m, mjData *d, const clc_bproblem *p, const double *f);

#endif
