/* Many worlds of one MuJoCo model, their constraint problems solved as one
 * clcone batch per step: the reinforcement-learning workload (N copies of
 * a model from perturbed initial states, stepped together).
 *
 * Each step runs the first half of mj_step's stages in every world on the
 * host (mujoco/adapter.h: clc_mujoco_begin) on a pool of threads
 * (world k on thread k mod T; T = 1: the calling thread alone, in world
 * order); concatenates the worlds' problems, each sized by its own
 * rows at that step, into one batch (clcone_batch_concat) solved on one
 * plan (one device batch), every world warm-started from its own last
 * step; then finishes every world's step (clc_mujoco_end). A world is
 * a problem of the batch, so each world's forces are those it would get
 * solved alone wherever the backend keeps batch = alone. Built with the
 * adapter, only when MuJoCo was found. */
#ifndef CLCONE_MUJOCO_WORLDS_H
#define CLCONE_MUJOCO_WORLDS_H

#include "mujoco/adapter.h"

/* Worlds stepped at once are refused above this (each holds a MuJoCo
 * mjData, megabytes for most models). */
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
    double host_ms;             /* MuJoCo's stages and the problems' building, every world
                                   (wall time, on the worlds' threads) */
    double build_ms;            /* of which the problems' building (clc_mujoco_problem
                                   and warm starts), summed over the worlds */
    double batch_ms;            /* the batch concatenated and its plan made */
    double solve_ms;            /* the batch's solve */
} clc_worlds_stats;

typedef struct clc_worlds clc_worlds;

/* n worlds of m (which must outlive them), solved on ctx (NULL: the CPU
 * reference) with the options o as for clc_mujoco_create, MuJoCo's
 * stages and the general-block batch's host work a world on `threads`
 * threads (at most n are used; the results do not depend on it: each
 * world's work touches only that world); world k
 * starts from the model's initial state perturbed by
 * clc_worlds_perturb(m, d, seed, k, scale). label names the model in
 * messages. */
clcone_status clc_worlds_create(clcone_context *ctx, const clcone_options *o, const char *label, const mjModel *m,
                                   int n, int threads, unsigned long long seed, double scale, clc_worlds **out,
                                   clcone_error *err);
void clc_worlds_free(clc_worlds *w);

/* n worlds as clc_worlds_create makes them, but stepping the caller's
 * MuJoCo data, given at each step (clc_worlds_step_data) and never
 * freed: world k keeps its warm start from step to step, whichever data
 * it is handed (a program that holds its own mjData, mujoco/api.c). */
clcone_status clc_worlds_borrow(clcone_context *ctx, const clcone_options *o, const char *label, const mjModel *m,
                                   int n, int threads, clc_worlds **out, clcone_error *err);
int clc_worlds_count(const clc_worlds *w);

/* One step of every world. An error names the world (and, from the
 * adapter, the row); the worlds are then not to be stepped on. */
clcone_status clc_worlds_step(clc_worlds *w, clc_worlds_stats *st, clcone_error *err);
/* One step of every world of borrowed worlds, world k on d[k] (n of them). */
clcone_status clc_worlds_step_data(clc_worlds *w, mjData *const *d, clc_worlds_stats *st, clcone_error *err);

/* Whether ndata MuJoCo data of m fit in memory, before any is made:
 * CLCONE_ENOMEM saying how much they need and what is left, else OK.
 * Resident, each takes about its buffer (nbuffer) and the arena that
 * mj_forward at the initial state uses (maxuse_arena of a scratch copy),
 * against MemAvailable and a cgroup's limit; in address space, its buffer
 * and its whole arena (narena), against ulimit -v and -d. An estimate: a
 * state with more contacts uses more of the arena, and a buffer's pages
 * are not all touched. clc_worlds_create checks its n worlds so. */
clcone_status clc_worlds_check_memory(const mjModel *m, long long ndata, const char *label, clcone_error *err);

/* World k's MuJoCo data, and its figures of the last step. */
mjData *clc_worlds_data(const clc_worlds *w, int k);
const clc_mujoco_stats *clc_worlds_stats_of(const clc_worlds *w, int k);

/* World k's initial state: world 0 keeps d's; world k >= 1 adds to each
 * qvel[i] scale (2 u - 1), u uniform in [0, 1) drawn in dof order from
 * splitmix64 started at seed + k * 0x9E3779B97F4A7C15 (velocities only,
 * so any joint's position stays valid). */
void clc_worlds_perturb(const mjModel *m, mjData *d, unsigned long long seed, int k, double scale);

#endif
