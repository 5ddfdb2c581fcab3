/* Stepping one world over MPI ranks (mpi_step.c, mpi_sim.c): each rank steps the
 * bodies of its region with ghosts of its neighbours', through step/sim_hook.h. */
#ifndef CLCONE_MPI_STEP_H
#define CLCONE_MPI_STEP_H

#include "mpi/mpi_parts.h"

/* A body between ranks: its world id, its weight in a cut (contacts, at least 1), state and shape. */
typedef struct clc_mpi_body {
    int gid, w;
    clcone_body b;
    clcone_shape sh;
} clc_mpi_body;

/* A contact's last reactions, with its bodies' ids (b -1: a plane). */
typedef struct clc_mpi_warm {
    unsigned long long key;
    int a, b;
    double r[3];
} clc_mpi_warm;

struct clcone_mpi_stepper {
    MPI_Comm comm;
    int root, rank, size;
    clcone_context *ctx;
    clcone_sim *top;       /* root: the caller's stepper of the whole world */
    clcone_world L;        /* own bodies, ghosts and static bodies, by id */
    clcone_sim *sim;       /* steps L */
    int nglobal, nown, nfixed;
    clc_mpi_body *own;  /* between steps: this rank's bodies */
    clc_mpi_body *fixed; /* static bodies, on every rank */
    int *gid, *from;       /* per body of L: its id and its rank (-1 static) */
    int *cnt;              /* per body of L: its contacts here */
    unsigned long long *keys, *order; /* per contact of L */
    int *counted;          /* per contact of L: this rank reports it */
    clc_mpi_cut cut;
    int *neigh, nneigh;
    double halo, threshold;
    int due;               /* repartition at the next step */
    long long total, matched; /* this step's contacts and warm starts, all ranks */
    double maxpen;
    clcone_solver solver;
    clcone_plan *plan;
    clc_mpi_part part;
    clc_mpi_domain D;
    clcone_dev_part dp;
    clcone_mpi_sim_figures fig; /* this rank's */
    int stranded;
    int fresh;             /* own[] is newer than L (the first step) */
};

/* Before each local detection: leavers to their new rank (or a new cut), ghosts in, L's contacts. */
clcone_status clc_mpi_step_detect(void *vs, clcone_world *w, double margin, unsigned long long **keys,
                                     clcone_error *err);
/* Every rank: root's nown bodies cut over the ranks by weight, the ghosts' width, the cut. */
clcone_status clc_mpi_step_repartition(clcone_mpi_stepper *S, clcone_error *err);
void clc_mpi_step_free(clcone_mpi_stepper *S);
/* Collective gather of n items a rank into *all (caller frees, always); n < 0: failed on every rank (docs/mpi.md). */
clcone_status clc_mpi_step_gather(clcone_mpi_stepper *S, const void *mine, int n, size_t size, int to_root,
                                     char **all, int *total, clcone_error *err);
/* The solve hook (mpi_part_step.c). */
clcone_status clc_mpi_step_solve(void *vs, const clcone_scene *sc, const clcone_options *o, double *r,
                                    clcone_result *res, clcone_error *err);

#endif
