/* Internal helpers of the MPI part (host/mpi/), shared by its entries. */
#ifndef CLCONE_MPI_PARTS_H
#define CLCONE_MPI_PARTS_H

#include <clcone/mpi/ranks.h>
#include <clcone/ext.h>

/* Message tags: a share's sizes, its arrays, its results. */
enum { TAG_HEAD = 1, TAG_DATA, TAG_RESULT };

/* Fills err (when not NULL) and returns code. */
clcone_status clc_mpi_fail(clcone_error *err, clcone_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Every rank: root's item count and sizes, and each item's solver rank; caller frees *counts, *owner always. */
clcone_status clc_mpi_split(MPI_Comm comm, int root, int *nitems, const int *root_counts, int **counts,
                               int **owner, clcone_error *err);
/* Root's options o into opt on every rank, their pointers NULL elsewhere. */
void clc_mpi_options(MPI_Comm comm, int root, const clcone_options *o, clcone_options *opt);
/* CLCONE_ENOTSUP, naming entry, when o holds what does not go over ranks. */
clcone_status clc_mpi_refuse_pointers(const clcone_options *o, const char *entry, clcone_error *err);
/* After a failed solve st, prefixes err with the batch's items (idx, named what) the rank held. */
void clc_mpi_name_items(clcone_status st, const char *what, const int *idx, int n, clcone_error *err);
/* Every rank's results, reactions and time to root, in item order; res->time_ms the longest (docs/mpi.md). */
clcone_status clc_mpi_gather(MPI_Comm comm, int root, int nitems, const int *owner, const int *counts,
                                const int *off, const clcone_prob_result *items, const double *rmine, double ms,
                                double *r, clcone_result *res, clcone_error *err);

/* Collective: sums[k] of terms[K c + k] over counted contacts on every rank, exact then rounded once. */
clcone_status clc_mpi_exact_sums(MPI_Comm comm, const double *terms, const int *counted, int n, int K,
                                    double *sums, clcone_error *err);

/* One rank's part of a scene over ranks (mpi_partition.c; layout in docs/mpi.md). */
typedef struct clc_mpi_part {
    int nb, nc, own, send, ghosts, nneigh;
    clcone_body *bodies;
    clcone_contact *contacts;
    int *gid, *counted, *body_contacts, *neigh, *nrecv, *send_ptr, *send_idx;
    double *r0; /* the warm start of its contacts (NULL: none) */
} clc_mpi_part;
void clc_mpi_part_free(clc_mpi_part *p);
/* Root: the scene cut into nranks parts by recursive coordinate bisection; owner may be NULL. */
clcone_status clc_mpi_partition(const clcone_scene *s, int nranks, const double *r0, clc_mpi_part *parts,
                                   int *owner, clcone_error *err);
/* Collective: root sends part q to rank q; sizes agreed first, so no rank waits on one out of room. */
clcone_status clc_mpi_part_transfer(MPI_Comm comm, int root, clc_mpi_part *parts, clc_mpi_part *mine,
                                       int warm, clcone_error *err);

/* The cut of recursive coordinate bisection: split planes and each rank's box (docs/mpi.md). */
typedef struct clc_mpi_cut {
    int nranks;
    int *axis;
    double *val, *box;
} clc_mpi_cut;
void clc_mpi_cut_free(clc_mpi_cut *c);
/* Splits s's bodies, weighted by w, over c->nranks ranks: owner (-1 static) and the cut c. */
clcone_status clc_mpi_rcb(const clcone_scene *s, const int *w, int *owner, clc_mpi_cut *c, clcone_error *err);
/* The rank whose region holds x. */
int clc_mpi_region(const clc_mpi_cut *c, const double x[3]);
/* Distance from x to rank q's region (0 inside). */
double clc_mpi_region_dist(const clc_mpi_cut *c, int q, const double x[3]);
/* Ranks whose regions come within h of mine, ascending into *neigh (caller frees), count *n. */
clcone_status clc_mpi_neighbours(const clc_mpi_cut *c, int me, double h, int **neigh, int *n,
                                    clcone_error *err);
/* Collective: sbuf[k] to each neigh[k], theirs into *rbuf (malloc'd, in turn); *sent grows. */
clcone_status clc_mpi_swap(MPI_Comm comm, int nn, const int *neigh, char *const *sbuf, const size_t *sn,
                              char **rbuf, size_t *rn, long long *sent, clcone_error *err);

/* A rank's side of its part's exchanges during a solve (mpi_domain.c). */
typedef struct clc_mpi_domain {
    MPI_Comm comm;
    const clc_mpi_part *P;
    int *roff;
    char *sbuf;
    MPI_Request *req;
    long long sent, exchanges, sums;
} clc_mpi_domain;
/* D for part P (closed first when it was open); dp its plan's side. */
clcone_status clc_mpi_domain_open(clc_mpi_domain *D, MPI_Comm comm, const clc_mpi_part *P,
                                     clcone_dev_part *dp, clcone_error *err);
void clc_mpi_domain_close(clc_mpi_domain *D);

/* clcone_mpi_solve_domain, with each body's rank into owner on root (may be NULL; -1 static). */
clcone_status clc_mpi_domain_solve(MPI_Comm comm, int root, clcone_context *ctx, const clcone_scene *scene,
                                      const clcone_options *o, double *r, clcone_result *res,
                                      clcone_mpi_domain_stats *stats, int *owner, clcone_error *err);

#endif
