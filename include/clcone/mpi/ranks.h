/* clcone public API over MPI ranks (libclcone_mpi, built when Open MPI is
 * present): batches split over the ranks of a communicator, each rank on
 * its own device. Not included by clcone.h: the single-process library
 * does not depend on MPI. Every function here is collective over comm:
 * every rank calls it, in the same order, whatever happened on the others,
 * and every rank returns the same status and message. */
#ifndef CLCONE_API_MPI_RANKS_H
#define CLCONE_API_MPI_RANKS_H

#include <mpi.h>

#include <clcone/clcone.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Agreement on an outcome: st is this rank's status (err its message when
 * st != CLCONE_OK). Returns CLCONE_OK on every rank when every rank passed
 * CLCONE_OK; otherwise the status of the lowest failing rank, whose
 * message every rank gets in err, as "rank R of K: <message>". */
CLCONE_API clcone_status clcone_mpi_agree(MPI_Comm comm, clcone_status st, clcone_error *err);

/* Opens this rank's device (each rank its own context). spec as for
 * clcone_context_create, this rank's own; NULL or "" takes
 * $CLCONE_DEVICE, also this rank's own, and when that is unset the
 * node's devices round-robin by the rank's place on its node (the
 * GPUs when the node has any, else its CPU devices): local rank i takes
 * the (i mod count)-th. "ref" (the CPU reference) gives *ctx = NULL.
 * A rank that fails fails every rank (clcone_mpi_agree): none keeps a
 * context then. */
CLCONE_API clcone_status clcone_mpi_context_create(MPI_Comm comm, const char *spec, clcone_precision prec,
                                                   clcone_context **ctx, clcone_error *err);

/* Which rank solves which problem of a batch: deterministic, balanced by
 * contacts (largest first, each to the rank with the fewest contacts so
 * far, the lower index on ties). owner[k] in [0, nranks) for each of the
 * nprob problems, contacts[k] its contacts. Not collective. */
CLCONE_API clcone_status clcone_mpi_assign(int nprob, const int *contacts, int nranks, int *owner,
                                           clcone_error *err);

/* clcone_solve of a batch over the ranks of comm: root holds the batch,
 * the options and, with o->warm_start, the start in r (3 * batch->n);
 * the other ranks pass NULL for batch, o, r and res. The problems are
 * split by clcone_mpi_assign, sent to their ranks through host memory,
 * solved there as one batch through a plan on that rank's ctx (NULL: the
 * reference), and come back to root: r the reactions and res->items the
 * results, in the batch's order, each as clcone_solve of the whole batch
 * in one process gives it (the solvers treat the problems of a batch
 * independently; the time cap is each rank's sub-batch's). res->time_ms
 * is the longest of the ranks' solves (plan set-up and kernel
 * compilation not counted). Options are root's; soft_R and soft_aref (3
 * a contact of the batch) go with each rank's problems; soft_v0,
 * history, progress and cancel are not distributed (CLCONE_ENOTSUP when
 * set). */
CLCONE_API clcone_status clcone_mpi_solve_batch(MPI_Comm comm, int root, clcone_context *ctx,
                                                const clcone_problem *batch, const clcone_options *o, double *r,
                                                clcone_result *res, clcone_error *err);

/* The same for body-form scenes: root holds nscenes scenes, each solved
 * as clcone_solve_scene solves it alone, the options' soft_dt taken from
 * dt[k] when dt is not NULL (the time step soft and sap read), on the
 * rank clcone_mpi_assign gives it (by contacts); on a rank, one plan
 * takes its scenes one after another (clcone_plan_set_scene) while their
 * time step stays the same. r: every scene's reactions one after another
 * (3 times the sum of their contacts; the start there with
 * o->warm_start), res->items one per scene, res->time_ms the longest of
 * the ranks' summed solve times. */
CLCONE_API clcone_status clcone_mpi_solve_scenes(MPI_Comm comm, int root, clcone_context *ctx,
                                                 const clcone_scene *scenes, int nscenes, const double *dt,
                                                 const clcone_options *o, double *r, clcone_result *res,
                                                 clcone_error *err);

/* What one scene over ranks (clcone_mpi_solve_domain) exchanged, for
 * measuring it: on root, over every rank. */
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

/* One body-form scene over the ranks of comm (domain decomposition), on
 * root as clcone_solve_scene solves it alone on one device of the same
 * kind, bit for bit: the moving bodies split by recursive coordinate
 * bisection of their centres, balanced by contacts; each rank holds its
 * bodies, copies of the neighbours' bodies that its contacts touch, and
 * every contact touching its bodies, and solves them on its own device
 * (ctx, not the reference); after each gather of the velocity changes
 * the ranks send their bodies' changes to the neighbours that copy them,
 * and the sums that decide (the error, APGD's step tests, the cost) are
 * exact over the ranks, the same whatever their number. Options are
 * root's: jacobi or apgd; the time cap is read at the checks on the
 * slowest rank's clock, so that every rank stops at one iteration; of
 * the pointers of clcone_mpi_solve_batch only progress, called on root
 * at each check; soft reads o->soft_dt. root
 * holds scene, o, r (3 per contact, the start with o->warm_start) and
 * res (res->items[0], res->time_ms the longest rank's solve); the others
 * pass NULL. stats (NULL: none) says on root what went over the wire.
 * A failure before the iterations ends every rank with root's message;
 * one during them (a device lost) leaves the other ranks waiting in an
 * exchange: the rank that failed returns it with stats->stranded set,
 * and its caller must end the job (MPI_Abort), as clcone-mpi does. */
CLCONE_API clcone_status clcone_mpi_solve_domain(MPI_Comm comm, int root, clcone_context *ctx,
                                                 const clcone_scene *scene, const clcone_options *o, double *r,
                                                 clcone_result *res, clcone_mpi_domain_stats *stats,
                                                 clcone_error *err);

/* Time stepping of one world over the ranks of comm: each rank owns the
 * bodies in its region of a cut (recursive coordinate bisection of the
 * centres, balanced by contacts) and holds copies (ghosts) of its
 * neighbours' bodies within a halo of its region (twice the largest
 * body's bounding radius plus the contact margin); each step it takes
 * the ghosts from its neighbours, detects the contacts of its own bodies,
 * solves them with the other ranks (clcone_mpi_solve_domain's iterations,
 * on one plan kept for the run), moves its own bodies, and hands those
 * that left its region to the neighbour that holds it. The cut is made
 * again when the most contacts one rank reports exceed the mean by more
 * than `rebalance` (a fraction; 0.25 when < 0), when a body lands beyond
 * the neighbours or a rank is left without contacts.
 *
 * Root makes a stepper of the whole world (clcone_sim_create) and calls
 * clcone_mpi_sim_attach, then clcone_sim_step as usual (each step is the
 * ranks' step; its info as one process's), clcone_mpi_sim_sync before it
 * reads the world or clcone_sim_reactions (the bodies and the last
 * step's contacts and reactions come to root, in one process's order),
 * and clcone_mpi_sim_end (also when it stops early, st NULL when attach
 * was never reached); the other ranks are in clcone_mpi_sim_serve (ctx:
 * their own devices) meanwhile. The steps are one process's, bit for
 * bit, as long as no solve falls back (the fallbacks, Gauss-Seidel, are
 * refused over ranks: the step fails with that message). The options
 * must suit clcone_mpi_solve_domain (jacobi or apgd; soft, whose stepper
 * hands it per-contact velocities, is refused). */
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
/* Whether the last solve failed on root during its iterations (the other
 * ranks wait in an exchange: end the job, as clcone_mpi_solve_domain
 * says); serve says the same of its rank in *stranded. */
CLCONE_API int clcone_mpi_sim_stranded(const clcone_mpi_stepper *st);
CLCONE_API void clcone_mpi_sim_end(MPI_Comm comm, int root, clcone_mpi_stepper *st);
CLCONE_API clcone_status clcone_mpi_sim_serve(MPI_Comm comm, int root, clcone_context *ctx, int *stranded,
                                              clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
