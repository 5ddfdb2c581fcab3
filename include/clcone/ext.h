/* clcone extension API: the seams a layer such as libclcone_mpi drives the stepper and plans
 * through; stable as <clcone/clcone.h>, which does not include it (docs/library.md). */
#ifndef CLCONE_API_EXT_H
#define CLCONE_API_EXT_H

#include <stddef.h>

#include "clcone.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A scene solved as one part of a larger one, its plan beside the other parts' (docs/library.md). */
typedef struct clcone_dev_part {
    int own, send, ghosts;     /* bodies: [0, own) own, [send, own) copied by others, then ghosts, then static */
    const int *body_contacts;  /* per body: its contacts in the whole scene (mass splitting) */
    void *ctx;                 /* handed back to the callbacks */
    /* dv of bodies [send, own) out, the ghosts' dv in; 6 reals a body, real_size bytes each */
    clcone_status (*exchange)(void *ctx, const void *send, void *recv, size_t real_size, clcone_error *err);
    /* sums[k], k < K, over the whole scene of terms[K c + k], the same bits whatever the parts */
    clcone_status (*sum)(void *ctx, const double *terms, int n, int K, double *sums, clcone_error *err);
    /* *x becomes the largest over the parts */
    clcone_status (*max)(void *ctx, double *x, clcone_error *err);
} clcone_dev_part;

/* A device plan of part `part` of a scene (jacobi or apgd, no time cap), made without its warm-up. */
CLCONE_API clcone_status clcone_plan_create_part(clcone_context *ctx, const clcone_scene *sc,
                                                 const clcone_options *o, const clcone_dev_part *part,
                                                 clcone_plan **out, clcone_error *err);
/* Runs each kernel once, so that compilation is not timed; the parts call it together. */
CLCONE_API clcone_status clcone_plan_warm_up(clcone_plan *pl, clcone_error *err);
/* Whether the plan's next solves start from r, and the soft model's v0 (kept until then). */
CLCONE_API void clcone_plan_set_start(clcone_plan *pl, int warm_start, const double *soft_v0);

/* The stepper's solve of scene sc into r and res, as clcone_solve_scene does. */
typedef clcone_status clcone_sim_solve_fn(void *ctx, const clcone_scene *sc, const clcone_options *o, double *r,
                                          clcone_result *res, clcone_error *err);
/* The stepper's detection into w->s and its keys into *keys, as clcone_world_detect does. */
typedef clcone_status clcone_sim_detect_fn(void *ctx, clcone_world *w, double margin, unsigned long long **keys,
                                           clcone_error *err);
/* The kinetic energy a step reports for velocities v (NULL: w's own). */
typedef double clcone_sim_energy_fn(void *ctx, const clcone_world *w, const double *v);
/* The whole step in place of the stepper's own. */
typedef clcone_status clcone_sim_step_fn(void *ctx, clcone_step_info *info, clcone_error *err);
/* The hooks of a stepper; a NULL member keeps the stepper's own. */
typedef struct clcone_sim_hooks {
    void *ctx;
    clcone_sim_solve_fn *solve;
    clcone_sim_detect_fn *detect;
    clcone_sim_energy_fn *energy;
    clcone_sim_step_fn *step;
} clcone_sim_hooks;

/* From the next step on, sim's steps go through h (NULL: none). */
CLCONE_API void clcone_sim_set_hooks(clcone_sim *sim, const clcone_sim_hooks *h);
/* The world sim steps. */
CLCONE_API clcone_world *clcone_sim_world(clcone_sim *sim);
/* The options sim was made with, resolved. */
CLCONE_API const clcone_sim_options *clcone_sim_get_options(const clcone_sim *sim);
/* Whether the next step warm-starts a contact of this key. */
CLCONE_API int clcone_sim_warm_has(const clcone_sim *sim, unsigned long long key);
/* How many warm starts the next step has. */
CLCONE_API int clcone_sim_warm_count(const clcone_sim *sim);
/* Warm start i: its contact key and reactions (3). */
CLCONE_API void clcone_sim_warm_entry(const clcone_sim *sim, int i, unsigned long long *key, double r[3]);
/* Adds reactions (r + 3 i) of contacts keys[i], i < n, that sim lacks (bodies from another rank). */
CLCONE_API clcone_status clcone_sim_warm_add(clcone_sim *sim, const unsigned long long *keys, const double *r, int n,
                                             clcone_error *err);
/* r (3 a contact, malloc'd; sim takes it) as the last step's reactions clcone_sim_reactions returns. */
CLCONE_API void clcone_sim_set_reactions(clcone_sim *sim, double *r);

/* clcone_world_detect over bodies of ids gid (ascending) of a world of nglobal: the whole world's order and keys. */
CLCONE_API clcone_status clcone_world_detect_ids(clcone_world *w, double margin, const int *gid, int nglobal,
                                                 unsigned long long **keys, unsigned long long **order,
                                                 clcone_error *err);
/* The bodies a and b (-1: a plane) of a contact key in a world of nbodies bodies and nplanes planes. */
CLCONE_API void clcone_world_key_bodies(unsigned long long key, int nbodies, int nplanes, int *a, int *b);
/* The four terms body i adds, in order, to clcone_world_kinetic_energy (v: its 6 velocities). */
CLCONE_API void clcone_world_ke_terms(const clcone_world *w, int i, const double *v, double t[4]);
/* The radius of the sphere about a shape's centre that holds it. */
CLCONE_API double clcone_shape_bound(const clcone_shape *sh);

/* A reader of a problem file's bytes (name for messages) into p, not validated beyond the format. */
typedef clcone_status clcone_problem_parse_fn(const char *name, const char *buf, size_t len, clcone_problem *p,
                                              clcone_error *err);
/* clcone_read_problem with files of the HDF5 signature read by hdf5 (NULL: refused, CLCONE_ENOTSUP). */
CLCONE_API clcone_status clcone_read_problem_ext(const char *path, clcone_problem_parse_fn *hdf5, clcone_problem *p,
                                                 clcone_error *err);
/* clcone_read_input with files of the HDF5 signature read by hdf5 (NULL: refused, CLCONE_ENOTSUP). */
CLCONE_API clcone_status clcone_read_input_ext(const char *path, clcone_problem_parse_fn *hdf5, clcone_input *in,
                                               clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
