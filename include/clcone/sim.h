/* clcone public API: time stepping. */
#ifndef CLCONE_API_SIM_H
#define CLCONE_API_SIM_H

#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Semi-implicit Euler, each step's impulse solved on one plan for the run (ctx NULL: reference). */
typedef struct clcone_sim_options {
    clcone_options solve;    /* model (ccp), solver, tol, caps (1000 iterations); warm_start: the stepper's */
    double margin;           /* contact detection distance (default 1e-3) */
    double projection;       /* penetration beyond slop removed a step (default 0.2) */
    double slop;             /* penetration left alone (default 1e-4) */
    int warm_start;          /* reuse matched reactions (default 1) */
    int threads;             /* step_many's host threads, 1 to 256 (0: 1): the worlds' detection and
                                update, on the reference their solves; same bits on any */
} clcone_sim_options;

CLCONE_API void clcone_sim_options_default(clcone_sim_options *o);
/* As clcone_sim_create fills o: for ccp, acgs and tol 1e-4; else clcone_options_resolve. */
CLCONE_API void clcone_sim_options_resolve(clcone_options *o, const clcone_context *ctx);

/* A failed or diverged solve is redone with the Gauss-Seidel fallback (docs/cli.md); if none
 * applies or it fails too, the step is not applied (applied 0, the bodies as before it). */
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
    int local;               /* 1: solved in its local form (docs/library.md) */
    double detect_ms;
    double setup_ms;         /* handing the scene to the plan (or making it), outside time_ms */
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
/* Steps n worlds (info: n), each to the bit as clcone_sim_step alone; they share one device and
 * their solve options, none over MPI ranks. On an error no world is stepped (positions may
 * have been projected). */
CLCONE_API clcone_status clcone_sim_step_many(clcone_sim *const *sims, int n, clcone_step_info *info,
                                              clcone_error *err);
/* The last applied step's impulses, 3 per contact; NULL before the first. A step not applied
 * leaves them, though w->s then holds its contacts (their count may differ). */
CLCONE_API const double *clcone_sim_reactions(const clcone_sim *sim);
/* The last step's contact problem and, in *r0 (if non-NULL), the start it was solved from. */
CLCONE_API const clcone_scene *clcone_sim_last_scene(const clcone_sim *sim, const double **r0);
CLCONE_API void clcone_sim_free(clcone_sim *sim);

#ifdef __cplusplus
}
#endif
#endif
