/* clcone over MPI ranks (libclcone_mpi; docs/mpi.md), not included by clcone.h. Every function
 * but clcone_mpi_assign is collective over comm: every rank calls it, in the same order, whatever
 * happened on the others, and gets the same status and message. */
#ifndef CLCONE_API_MPI_RANKS_H
#define CLCONE_API_MPI_RANKS_H

#include <mpi.h>

#include <clcone/clcone.h>

#ifdef __cplusplus
extern "C" {
#endif

/* st (err its message) is this rank's; CLCONE_OK when all passed it, else on every rank the
 * lowest failing rank's status and message, as "rank R of K: <message>". */
CLCONE_API clcone_status clcone_mpi_agree(MPI_Comm comm, clcone_status st, clcone_error *err);

/* This rank's device from its spec (NULL or "": its $CLCONE_DEVICE, else the node's GPUs, else
 * CPUs, round-robin by local rank); "ref" gives NULL. A rank that fails fails all: none keeps one. */
CLCONE_API clcone_status clcone_mpi_context_create(MPI_Comm comm, const char *spec, clcone_precision prec,
                                                   clcone_context **ctx, clcone_error *err);

/* owner[k] in [0, nranks) of each problem, contacts[k] its size: deterministic, balanced by
 * contacts. Not collective. */
CLCONE_API clcone_status clcone_mpi_assign(int nprob, const int *contacts, int nranks, int *owner,
                                           clcone_error *err);

/* clcone_solve of root's batch over the ranks (the others pass NULL batch, o, r, res): r and
 * res->items as one process gives them, res->time_ms the longest rank's solve. soft_R, soft_aref
 * travel; soft_v0, history, progress, cancel set: CLCONE_ENOTSUP. */
CLCONE_API clcone_status clcone_mpi_solve_batch(MPI_Comm comm, int root, clcone_context *ctx,
                                                const clcone_problem *batch, const clcone_options *o, double *r,
                                                clcone_result *res, clcone_error *err);

/* The same for root's scenes, each as clcone_solve_scene alone (soft_dt from dt[k] unless dt
 * NULL): r all their reactions in turn, res->items one a scene, res->time_ms the longest rank's. */
CLCONE_API clcone_status clcone_mpi_solve_scenes(MPI_Comm comm, int root, clcone_context *ctx,
                                                 const clcone_scene *scenes, int nscenes, const double *dt,
                                                 const clcone_options *o, double *r, clcone_result *res,
                                                 clcone_error *err);

/* What clcone_mpi_solve_domain exchanged, over every rank (on root). */
typedef struct clcone_mpi_domain_stats {
    int ranks;
    long long contacts_max;   /* the most contacts one rank holds (its own and those it shares) */
    long long shared;         /* contacts held by two ranks */
    long long ghosts;         /* ghost bodies, summed over the ranks */
    long long halo_bytes_max; /* the most bytes one rank sends in one exchange */
    long long halo_bytes;     /* bytes all ranks send in one exchange */
    long long exchanges;      /* exchanges of the solve (each rank the same) */
    long long sums;           /* global sums of the solve (each a reduction of all ranks) */
    int stranded;             /* this rank's: it failed during the iterations (below) */
} clcone_mpi_domain_stats;

/* One scene of root's over the ranks' devices (ctx, not the reference), bit for bit as
 * clcone_solve_scene on one such device; jacobi or apgd, of o's pointers only progress (on root).
 * Others pass NULL scene, o, r, res; stats may be NULL. A rank failing mid-iterations returns
 * with stats->stranded set: its caller must end the job (MPI_Abort). */
CLCONE_API clcone_status clcone_mpi_solve_domain(MPI_Comm comm, int root, clcone_context *ctx,
                                                 const clcone_scene *scene, const clcone_options *o, double *r,
                                                 clcone_result *res, clcone_mpi_domain_stats *stats,
                                                 clcone_error *err);

/* One world stepped over the ranks, bit for bit as one process unless a solve would fall back
 * (the step then fails). Root: clcone_sim_create, attach, clcone_sim_step, sync before reading
 * the world or reactions, end (st NULL if attach was never reached); the others: serve. Options
 * as clcone_mpi_solve_domain's, soft refused; rebalance < 0 is 0.25 (docs/mpi.md). */
typedef struct clcone_mpi_stepper clcone_mpi_stepper;
CLCONE_API clcone_status clcone_mpi_sim_attach(MPI_Comm comm, int root, clcone_context *ctx, clcone_sim *sim,
                                               double rebalance, clcone_mpi_stepper **st, clcone_error *err);
CLCONE_API clcone_status clcone_mpi_sim_sync(clcone_mpi_stepper *st, clcone_error *err);
/* What the run so far did, summed over the ranks (root; collective). */
typedef struct clcone_mpi_sim_figures {
    long long steps;
    long long moved;        /* bodies that changed rank (migrations and cuts) */
    long long repartitions; /* cuts after the first */
    long long ghosts;       /* ghost copies, summed over ranks and steps */
    long long bytes;        /* bytes sent point to point and in gathers, all ranks */
    long long halo_bytes;   /* of which in the solves' iterations */
} clcone_mpi_sim_figures;
CLCONE_API clcone_status clcone_mpi_sim_figures_get(clcone_mpi_stepper *st, clcone_mpi_sim_figures *f,
                                                    clcone_error *err);
/* Whether root's last solve failed mid-iterations (end the job); serve sets *stranded alike. */
CLCONE_API int clcone_mpi_sim_stranded(const clcone_mpi_stepper *st);
CLCONE_API void clcone_mpi_sim_end(MPI_Comm comm, int root, clcone_mpi_stepper *st);
CLCONE_API clcone_status clcone_mpi_sim_serve(MPI_Comm comm, int root, clcone_context *ctx, int *stranded,
                                              clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
