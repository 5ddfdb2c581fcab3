/* Time stepping with each step's contact solve over MPI ranks
 * (clcone_mpi_sim_*, ranks.h): root's stepper hands every solve to
 * clcone_mpi_domain_solve (step/sim_hook.h), telling the serving ranks
 * first that one comes; the cut is made again from the positions at each
 * step, so bodies change ranks as they move. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_parts.h"
#include "step/sim_hook.h"

#include <stdlib.h>
#include <string.h>

/* What root's messages to the serving ranks say. */
enum { SIM_SOLVE = 1, SIM_END = 0 };

struct clcone_mpi_stepper {
    MPI_Comm comm;
    int root;
    clcone_context *ctx;
    clcone_sim *sim;
    int *owner, *last; /* each body's rank at this cut and the last */
    int nb;            /* bodies of the last cut (0: none yet) */
    long long moved;
    int stranded;      /* a solve failed here during its iterations */
};

static clcone_status step_solve(void *vctx, const clcone_scene *sc, const clcone_options *o, double *r,
                                clcone_result *res, clcone_error *err)
{
    clcone_mpi_stepper *S = vctx;
    clcone_mpi_domain_stats ds;
    int go = SIM_SOLVE, *t;
    clcone_status st;
    if (sc->nbodies > S->nb) {
        free(S->owner);
        free(S->last);
        S->owner = malloc(((size_t)sc->nbodies + 1) * sizeof *S->owner);
        S->last = malloc(((size_t)sc->nbodies + 1) * sizeof *S->last);
        S->nb = 0;
        if (!S->owner || !S->last)
            return clcone_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d bodies' ranks", sc->nbodies);
    }
    MPI_Bcast(&go, 1, MPI_INT, S->root, S->comm);
    st = clcone_mpi_domain_solve(S->comm, S->root, S->ctx, sc, o, r, res, &ds, S->owner, err);
    S->stranded = st && ds.stranded;
    if (st) return st;
    if (S->nb == sc->nbodies)
        for (int b = 0; b < sc->nbodies; ++b) S->moved += S->owner[b] != S->last[b];
    S->nb = sc->nbodies;
    t = S->last, S->last = S->owner, S->owner = t;
    return CLCONE_OK;
}

clcone_status clcone_mpi_sim_attach(MPI_Comm comm, int root, clcone_context *ctx, clcone_sim *sim,
                                    clcone_mpi_stepper **st, clcone_error *err)
{
    clcone_mpi_stepper *S;
    if (!sim || !st) return clcone_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_sim_attach: sim and st are required");
    if (!(S = calloc(1, sizeof *S))) return clcone_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a stepper");
    *S = (clcone_mpi_stepper){comm, root, ctx, sim, NULL, NULL, 0, 0, 0};
    clcone_sim_set_solve(sim, step_solve, S);
    *st = S;
    return CLCONE_OK;
}

long long clcone_mpi_sim_moved(const clcone_mpi_stepper *st)
{
    return st ? st->moved : 0;
}

int clcone_mpi_sim_stranded(const clcone_mpi_stepper *st)
{
    return st && st->stranded;
}

void clcone_mpi_sim_end(MPI_Comm comm, int root, clcone_mpi_stepper *st)
{
    int go = SIM_END;
    MPI_Bcast(&go, 1, MPI_INT, root, comm);
    if (!st) return;
    clcone_sim_set_solve(st->sim, NULL, NULL);
    free(st->owner);
    free(st->last);
    free(st);
}

clcone_status clcone_mpi_sim_serve(MPI_Comm comm, int root, clcone_context *ctx, int *stranded, clcone_error *err)
{
    clcone_status st = CLCONE_OK;
    *stranded = 0;
    for (;;) {
        clcone_mpi_domain_stats ds;
        int go;
        MPI_Bcast(&go, 1, MPI_INT, root, comm);
        if (go == SIM_END) return st;
        /* a failed solve is every rank's (agreed), and root decides what
         * follows; but one that failed here alone leaves the others in an
         * exchange */
        st = clcone_mpi_domain_solve(comm, root, ctx, NULL, NULL, NULL, NULL, &ds, NULL, err);
        if (st && ds.stranded) {
            *stranded = 1;
            return st;
        }
    }
}
