/* MJCF writers of bench section 5 (mujoco_models.c). */
#ifndef CLCONE_BENCH_MUJOCO_MODELS_H
#define CLCONE_BENCH_MUJOCO_MODELS_H

#include <clcone/clcone.h>

/* The pile of clcone_gen_pile as free spheres on a floor inside planes;
 * 0 on success, *nbodies the bodies written. */
int write_spheres(const char *path, const clcone_scene *s, double mu, double dt, int ncon_est, int *nbodies);
/* L layers of L x L jittered unit cubes; 0 on success. */
int write_cubes(const char *path, int L, double mu, double dt, int ncon_est, int *nbodies);
/* Bytes MuJoCo 2.2 would allocate for a dense AR of ncon_est contacts (0 from 3.0 on). */
double mj_dense_ar_bytes(int ncon_est);

#endif
