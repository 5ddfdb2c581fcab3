/* MuJoCo's side of bench section 5 (mujoco_models.c). */
#ifndef CLCONE_BENCH_MUJOCO_MODELS_H
#define CLCONE_BENCH_MUJOCO_MODELS_H

#include <clcone/clcone.h>
#include <mujoco/mujoco.h>

#include "core/blocks.h"

/* The pile of clc_gen_pile as free spheres on a floor inside planes;
 * 0 on success, *nbodies the bodies written. */
int write_spheres(const char *path, const clcone_scene *s, double mu, double dt, int ncon_est, int *nbodies);
/* L layers of L x L jittered unit cubes; 0 on success. */
int write_cubes(const char *path, int L, double mu, double dt, int ncon_est, int *nbodies);
/* Bytes MuJoCo 2.2 would allocate for a dense AR of ncon_est contacts (0 from 3.0 on). */
double mj_dense_ar_bytes(int ncon_est);
/* MuJoCo's dual problem at (m, d) as a clcone problem (local form, condim
 * 3 elliptic contacts only), d left ready for mj_fwdConstraint; 0, or -1
 * with err filled. */
int mj_read_dual(mjModel *m, mjData *d, clcone_problem *p, clcone_error *err);
/* The same problem in clcone's body form: scene s, soft model's R and
 * a_ref (3 per contact), and map (9 per contact) from clcone's contact
 * rows to MuJoCo's; 0, or -1 with err filled. */
int mj_body_form(const mjModel *m, const mjData *d, clcone_scene *s, double *R, double *aref, double *map,
                 clcone_error *err);
/* MuJoCo's rows f = map r from clcone's body-form reactions r. */
void mj_rows_from_body(int nc, const double *map, const double *r, double *f);
/* The model at path after `steps` of MuJoCo's own mj_step (its solver,
 * warm-started), then mj_forward: d holds MuJoCo's problem at that state
 * and p its general-block form (clc_mujoco_bproblem). 0, or -1 with
 * err filled; the caller frees *m, *d (when set) and p. */
int mj_load_stepped(const char *path, int steps, mjModel **m, mjData **d, clc_bproblem *p, clcone_error *err);

#endif
