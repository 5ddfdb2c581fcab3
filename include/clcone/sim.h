/* clcone public API: time stepping. */
#ifndef CLCONE_API_SIM_H
#define CLCONE_API_SIM_H

#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Time stepping: semi-implicit Euler with the contact impulse solved
 * (ctx NULL = CPU reference) on one plan for the whole run
 * (clcone_plan_create_scene, then clcone_plan_set_scene each step), which
 * gives what clcone_solve_scene gives on each step's scene. */
typedef struct clcone_sim_options {
    clcone_options solve;    /* model (default ccp), solver, tolerances (at
                                most 1000 iterations a step by default);
                                warm_start is set by the stepper */
    double margin;           /* contact detection distance (default 1e-3) */
    double projection;       /* fraction of the penetration beyond `slop`
                                removed per step (default 0.2) */
    double slop;             /* penetration left alone (default 1e-4) */
    int warm_start;          /* reuse matched reactions (default 1) */
    int threads;             /* clcone_sim_step_many: host threads for the
                                worlds' detection and update, 1 to 256
                                (default 1; 0 is 1); the same bits on any */
} clcone_sim_options;

CLCONE_API void clcone_sim_options_default(clcone_sim_options *o);
/* Fills what o leaves unset as clcone_sim_create does: for ccp, solver
 * ACGS and tol 1e-4 (a per-step tolerance every generated scene reaches
 * within the default cap, on float devices and the reference alike);
 * the rest as clcone_options_resolve. */
CLCONE_API void clcone_sim_options_resolve(clcone_options *o, const clcone_context *ctx);

/* A step whose solve fails or diverges is never applied as it is: the
 * stepper solves the same problem again, from the same warm start, with
 * the model's Gauss-Seidel fallback (reference: nsgs for coulomb, pgs
 * otherwise; device: cgs) and applies that when it converged or reached
 * its cap. When there is no other solver (sap, or the fallback is the
 * solver that failed) or the fallback fails too, the step is not applied:
 * solve.status stays failed/diverged, the bodies keep the state before
 * the step and the caller decides (the CLI stops). */
typedef struct clcone_step_info {
    int step;                /* 1-based */
    int contacts;
    clcone_prob_result solve;  /* the solve applied (the fallback's, if any) */
    int applied;             /* 1 when the step moved the bodies */
    clcone_prob_result failed; /* fell_back: the first solve's result */
    int fell_back;           /* 1: the first solve failed or diverged */
    clcone_solver fallback;  /* fell_back: the solver of `solve` */
    double ke_free;          /* kinetic energy at v* (before the solve) */
    double ke_after;         /* after the contact impulses */
    double max_penetration;  /* at detection, >= 0 */
    int warm_matched;        /* contacts warm-started from the last step */
    int local;               /* 1: solved in its local form (on a device,
                                the table's rows of CLCONE_FORM_SCENES but
                                soft's and those that run in MPI parts, up
                                to CLCONE_SCENES_MAX_CONTACTS), in one
                                batch with the other worlds' of
                                clcone_sim_step_many */
    double detect_ms;
    double setup_ms;         /* the solve's time outside solve.time_ms: the
                                step's scene handed to the run's plan
                                (host preparation, uploads; at the first
                                step with contacts, making the plan) */
} clcone_step_info;

typedef struct clcone_sim clcone_sim;

/* The stepper works on w in place (w must stay alive). */
CLCONE_API clcone_status clcone_sim_create(clcone_world *w, clcone_context *ctx,
                                const clcone_sim_options *o, clcone_sim **sim,
                                clcone_error *err);
CLCONE_API clcone_status clcone_sim_step(clcone_sim *sim, clcone_step_info *info,
                              clcone_error *err);
/* The most host threads clcone_sim_options.threads may ask for. */
#define CLCONE_SIM_THREADS 256
/* Steps n worlds at once (info: n of them), world k as clcone_sim_step
 * steps it alone, to the bit: the steps solved in their local form
 * (clcone_step_info.local) are one device batch, each problem with its own
 * convergence test; the others are solved in turn. The worlds share one
 * device and their solve options (model, solver, tolerance, caps; a time
 * cap is then the batch's); none may be stepped over MPI ranks. On an
 * error no world is stepped, though positions may have been projected. */
CLCONE_API clcone_status clcone_sim_step_many(clcone_sim *const *sims, int n, clcone_step_info *info,
                                              clcone_error *err);
/* Reactions (impulses, 3 per contact) of the last step applied, as many
 * as its contacts (clcone_step_info.contacts); NULL before the first. A
 * step not applied (applied 0) leaves them, though w->s then holds that
 * step's contacts: their count may differ. */
CLCONE_API const double *clcone_sim_reactions(const clcone_sim *sim);
/* The last step's contact problem (free velocities, contacts) and, in
 * *r0 when non-NULL, the warm start it was solved from: to solve it
 * again elsewhere, e.g. on the reference for comparison. */
CLCONE_API const clcone_scene *clcone_sim_last_scene(const clcone_sim *sim, const double **r0);
CLCONE_API void clcone_sim_free(clcone_sim *sim);

#ifdef __cplusplus
}
#endif
#endif
