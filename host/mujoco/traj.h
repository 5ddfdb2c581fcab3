/* A MuJoCo run's trajectory in files (`clcone mujoco --csv/--qpos`); built with the adapter. */
#ifndef CLCONE_MUJOCO_TRAJ_H
#define CLCONE_MUJOCO_TRAJ_H

#include "mujoco/adapter.h"

typedef struct clc_mj_traj clc_mj_traj;

/* Opens csv and qpos (paths or NULL; .npy or CSV) for a run of m, qpos every `every` steps;
 * a CSV log switches MuJoCo's energy on in m. CLCONE_EIO naming a file that cannot be made. */
clcone_status clc_mj_traj_open(mjModel *m, const char *csv, const char *qpos, int every, clc_mj_traj **out,
                                  clcone_error *err);

/* Step k (from 0) done: d after it, st its figures, t0 its start time (the CSV line's time and
 * energy are the start's); qpos kept when k + 1 is a multiple of every. */
clcone_status clc_mj_traj_record(clc_mj_traj *t, const mjModel *m, const mjData *d, int k, double t0,
                                    const clc_mujoco_stats *st, clcone_error *err);

/* Finishes the files and frees t (NULL is fine); CLCONE_EIO when a write failed. */
clcone_status clc_mj_traj_close(clc_mj_traj *t, clcone_error *err);

#endif
