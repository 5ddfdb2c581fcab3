/* Many worlds of one MuJoCo model, their constraint problems solved as one
 * clcone batch a step: the reinforcement-learning workload. Each world is a
 * problem of the batch, so it gets the forces it would get alone (the step:
 * docs/mujoco.md). Built with the adapter, only when MuJoCo was found. */
#ifndef CLCONE_MUJOCO_WORLDS_H
#define CLCONE_MUJOCO_WORLDS_H

#include "mujoco/adapter.h"

/* Most worlds stepped at once (each holds an mjData, megabytes for most models). */
#define CLCONE_WORLDS_MAX 100000

/* Threads for MuJoCo's stages: 1 to this. */
#define CLCONE_WORLDS_THREADS 256

/* What one step of all worlds did. */
typedef struct clc_worlds_stats {
    int solved;                 /* worlds with rows (problems of the batch) */
    int rows, contacts, blocks; /* summed over the worlds */
    clcone_run_status status;   /* the worst of the batch's problems */
    double error;               /* the largest */
    int iters;                  /* the most of any world */
    double host_ms;             /* MuJoCo's stages and problem building (wall time) */
    double build_ms;            /* of which problem building, summed over the worlds */
    double batch_ms;            /* the batch concatenated and its plan made */
    double solve_ms;            /* the batch's solve */
} clc_worlds_stats;

typedef struct clc_worlds clc_worlds;

/* n worlds of m (which must outlive them) on ctx (NULL: reference), perturbed from seed; any threads, same bits. */
clcone_status clc_worlds_create(clcone_context *ctx, const clcone_options *o, const char *label, const mjModel *m,
                                   int n, int threads, unsigned long long seed, double scale, clc_worlds **out,
                                   clcone_error *err);
void clc_worlds_free(clc_worlds *w);

/* Worlds stepping the caller's mjData, handed in each step and never freed; warm starts kept per k. */
clcone_status clc_worlds_borrow(clcone_context *ctx, const clcone_options *o, const char *label, const mjModel *m,
                                   int n, int threads, clc_worlds **out, clcone_error *err);
int clc_worlds_count(const clc_worlds *w);

/* One step of every world; after an error (naming the world) they are not to be stepped on. */
clcone_status clc_worlds_step(clc_worlds *w, clc_worlds_stats *st, clcone_error *err);
/* One step of every world of borrowed worlds, world k on d[k] (n of them). */
clcone_status clc_worlds_step_data(clc_worlds *w, mjData *const *d, clc_worlds_stats *st, clcone_error *err);

/* Whether ndata mjData of m would fit in memory (an estimate: docs/mujoco.md); else CLCONE_ENOMEM. */
clcone_status clc_worlds_check_memory(const mjModel *m, long long ndata, const char *label, clcone_error *err);

/* World k's MuJoCo data, and its figures of the last step. */
mjData *clc_worlds_data(const clc_worlds *w, int k);
const clc_mujoco_stats *clc_worlds_stats_of(const clc_worlds *w, int k);

/* World k's initial state: d's, with seeded noise of size scale on qvel for k >= 1 (docs/mujoco.md). */
void clc_worlds_perturb(const mjModel *m, mjData *d, unsigned long long seed, int k, double scale);

#endif
