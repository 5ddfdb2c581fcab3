/* A MuJoCo run's trajectory kept in files (`clcone mujoco --csv/--qpos`,
 * mujoco/traj.c): a CSV line a step (time, energy, the solve's figures)
 * and qpos every K steps, as .npy or CSV. Built with the adapter. */
#ifndef CLCONE_MUJOCO_TRAJ_H
#define CLCONE_MUJOCO_TRAJ_H

#include "mujoco/adapter.h"

typedef struct clc_mj_traj clc_mj_traj;

/* Opens the files asked for (csv, qpos: paths or NULL; qpos ending in
 * .npy is written as a numpy array, else as CSV) for a run of m, qpos
 * kept every `every` steps. With a CSV log MuJoCo's energy is switched
 * on in m (mjENBL_ENERGY: computed, never used by the dynamics).
 * CLCONE_EIO naming the file when one cannot be made. */
clcone_status clc_mj_traj_open(mjModel *m, const char *csv, const char *qpos, int every, clc_mj_traj **out,
                                  clcone_error *err);

/* Step k (from 0) done: d after it, st its figures, t0 the time it
 * started at. The CSV line gives that start: t0 and MuJoCo's energy of
 * the state the step started from (which mj_step computes, at the start);
 * qpos is d's after the step, kept when k + 1 is a multiple of every. */
clcone_status clc_mj_traj_record(clc_mj_traj *t, const mjModel *m, const mjData *d, int k, double t0,
                                    const clc_mujoco_stats *st, clcone_error *err);

/* Finishes the files (the .npy header's row count) and frees t; its
 * status, CLCONE_EIO when a write failed. NULL is fine. */
clcone_status clc_mj_traj_close(clc_mj_traj *t, clcone_error *err);

#endif
