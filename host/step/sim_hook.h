/* The stepper's hooks, handed in by a layer above it (host/mpi: a rank
 * steps its own bodies and copies of its neighbours', each step's
 * detection, solve and energies collective over the ranks). Exported for
 * libclcone_mpi, not in the public headers. */
#ifndef CLCONE_SIM_HOOK_H
#define CLCONE_SIM_HOOK_H

#include <clcone/clcone.h>

/* Solves scene sc with options o from r (the warm start when
 * o->warm_start) into r and res, as clcone_solve_scene does. */
typedef clcone_status clcone_sim_solve_fn(void *ctx, const clcone_scene *sc, const clcone_options *o, double *r,
                                          clcone_result *res, clcone_error *err);
/* Detects w's contacts into w->s as clcone_world_detect does (the bodies
 * of w may change), their keys into *keys. */
typedef clcone_status clcone_sim_detect_fn(void *ctx, clcone_world *w, double margin, unsigned long long **keys,
                                           clcone_error *err);
/* The kinetic energy that the step reports for velocities v (6 a body of
 * w; NULL: w's own), as clcone_world_kinetic_energy. */
typedef double clcone_sim_energy_fn(void *ctx, const clcone_world *w, const double *v);
/* The whole step instead of the stepper's own (clcone_sim_step). */
typedef clcone_status clcone_sim_step_fn(void *ctx, clcone_step_info *info, clcone_error *err);

/* NULL members: the stepper's own. */
typedef struct clcone_sim_hooks {
    void *ctx;
    clcone_sim_solve_fn *solve;
    clcone_sim_detect_fn *detect;
    clcone_sim_energy_fn *energy;
    clcone_sim_step_fn *step;
} clcone_sim_hooks;

/* From the next step on, sim's steps go through h (NULL: none). */
CLCONE_API void clcone_sim_set_hooks(clcone_sim *sim, const clcone_sim_hooks *h);
/* The world sim steps and the options it was made with (resolved). */
CLCONE_API clcone_world *clcone_sim_world(clcone_sim *sim);
CLCONE_API const clcone_sim_options *clcone_sim_get_options(const clcone_sim *sim);
/* Whether the next step warm-starts a contact of this key. */
CLCONE_API int clcone_sim_warm_has(const clcone_sim *sim, unsigned long long key);
/* The warm starts the next step has: n of them (the return), entry i's
 * key and reactions (3) through clcone_sim_warm_entry. */
CLCONE_API int clcone_sim_warm_count(const clcone_sim *sim);
CLCONE_API void clcone_sim_warm_entry(const clcone_sim *sim, int i, unsigned long long *key, double r[3]);
/* Adds the last reactions (r + 3 i) of contacts keys[i], i < n, that sim
 * does not have (those of bodies that come from another rank). */
CLCONE_API clcone_status clcone_sim_warm_add(clcone_sim *sim, const unsigned long long *keys, const double *r, int n,
                                             clcone_error *err);
/* r (3 per contact of the world's scene; malloc'd, sim takes it) as the
 * last step's reactions that clcone_sim_reactions returns. */
CLCONE_API void clcone_sim_set_reactions(clcone_sim *sim, double *r);

#endif
