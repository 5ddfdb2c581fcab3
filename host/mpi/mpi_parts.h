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
/* Every rank: root's item count *nitems (set on every rank), the item
 * sizes (contacts) root has in root_counts, into *counts, and who solves
 * each (clcone_mpi_assign) into *owner; the caller frees both, also on
 * failure. */
clcone_status clc_mpi_split(MPI_Comm comm, int root, int *nitems, const int *root_counts, int **counts,
                               int **owner, clcone_error *err);
/* Root's options o into opt on every rank, their pointers NULL elsewhere. */
void clc_mpi_options(MPI_Comm comm, int root, const clcone_options *o, clcone_options *opt);
/* CLCONE_ENOTSUP, naming entry, when o holds what does not go over ranks. */
clcone_status clc_mpi_refuse_pointers(const clcone_options *o, const char *entry, clcone_error *err);
/* After a failed solve (st): err's message preceded by which items of the
 * batch (idx[0..n), named what: "problem", "scene") the rank held. */
void clc_mpi_name_items(clcone_status st, const char *what, const int *idx, int n, clcone_error *err);
/* Every rank: its items' results (items, in ascending item order) and
 * reactions (rmine, 3 counts[k] each, one after another) and its solve
 * time ms to root, which puts item k's at res->items[k] and r + 3 off[k]
 * and the longest time in res->time_ms. */
clcone_status clc_mpi_gather(MPI_Comm comm, int root, int nitems, const int *owner, const int *counts,
                                const int *off, const clcone_prob_result *items, const double *rmine, double ms,
                                double *r, clcone_result *res, clcone_error *err);

/* sums[k], k < K, over every rank of terms[K c + k] for this rank's n
 * contacts with counted[c]: exact, then rounded once, so the same on any
 * number of ranks (mpi_exact.c). Collective. */
clcone_status clc_mpi_exact_sums(MPI_Comm comm, const double *terms, const int *counted, int n, int K,
                                    double *sums, clcone_error *err);

/* One rank's part of a scene over ranks (mpi_partition.c): its scene
 * (bodies in the order clcone_dev_part names: own, of which [send, own)
 * are copied by other ranks, then ghosts by owning rank and index, then
 * static bodies; the contacts that touch its own bodies, in the scene's
 * order, their bodies as local indices), each contact's index in the
 * scene and whether this rank counts it (each contact on exactly one
 * rank), each body's contacts in the whole scene, and its neighbours:
 * for neighbour k, rank neigh[k] sends nrecv[k] ghosts (in the ghosts'
 * order) and is sent bodies send_idx[send_ptr[k] .. send_ptr[k + 1]). */
typedef struct clc_mpi_part {
    int nb, nc, own, send, ghosts, nneigh;
    clcone_body *bodies;
    clcone_contact *contacts;
    int *gid, *counted, *body_contacts, *neigh, *nrecv, *send_ptr, *send_idx;
    double *r0; /* the warm start of its contacts (NULL: none) */
} clc_mpi_part;
void clc_mpi_part_free(clc_mpi_part *p);
/* Root: the scene's parts for nranks ranks (parts[q], zeroed by the
 * caller), bodies split by recursive coordinate bisection of their
 * centres, balanced by contacts; r0 (NULL: none) the warm start; owner
 * (NULL: not wanted) each body's rank, -1 for static ones. */
clcone_status clc_mpi_partition(const clcone_scene *s, int nranks, const double *r0, clc_mpi_part *parts,
                                   int *owner, clcone_error *err);
/* Root sends part q to rank q (send), or a rank receives its own from
 * root; sizes first, agreed, so that no rank waits on one that could not
 * make room. Collective. */
clcone_status clc_mpi_part_transfer(MPI_Comm comm, int root, clc_mpi_part *parts, clc_mpi_part *mine,
                                       int warm, clcone_error *err);

/* The cut of recursive coordinate bisection over nranks ranks: split s
 * (1 <= s < nranks) of the ranks [r0, r0 + k) at s = r0 + k / 2 sends
 * points with x[axis[s]] < val[s] to the left ranks; box[6 q..] rank q's
 * region (lo xyz, hi xyz; empty when all its bodies went elsewhere). */
typedef struct clc_mpi_cut {
    int nranks;
    int *axis;
    double *val, *box;
} clc_mpi_cut;
void clc_mpi_cut_free(clc_mpi_cut *c);
/* The bodies of s with weights w (by index) over c->nranks ranks:
 * owner (by index; -1 static) and the cut c (its arrays made here). */
clcone_status clc_mpi_rcb(const clcone_scene *s, const int *w, int *owner, clc_mpi_cut *c, clcone_error *err);
/* The rank whose region holds x. */
int clc_mpi_region(const clc_mpi_cut *c, const double x[3]);
/* Distance from x to rank q's region (0 inside). */
double clc_mpi_region_dist(const clc_mpi_cut *c, int q, const double x[3]);
/* Ranks other than me whose regions come within h of mine, into *neigh
 * (ascending; the caller frees it), their count into *n. */
clcone_status clc_mpi_neighbours(const clc_mpi_cut *c, int me, double h, int **neigh, int *n,
                                    clcone_error *err);
/* Every rank: sends each neighbour neigh[k] sn[k] bytes from sbuf[k] and
 * receives what each sends into *rbuf (malloc'd, one after another, rn[k]
 * bytes from neighbour k); *sent grows by what went out. Collective
 * (agreed after the sizes). */
clcone_status clc_mpi_swap(MPI_Comm comm, int nn, const int *neigh, char *const *sbuf, const size_t *sn,
                              char **rbuf, size_t *rn, long long *sent, clcone_error *err);

/* A rank's side of a part's exchanges in its solve (mpi_domain.c): its
 * part, where each neighbour's ghosts start, the packed sends, the
 * requests and what went out. */
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

/* clcone_mpi_solve_domain, with each body's rank into owner on root
 * (NULL: not wanted; -1 for static bodies). */
clcone_status clc_mpi_domain_solve(MPI_Comm comm, int root, clcone_context *ctx, const clcone_scene *scene,
                                      const clcone_options *o, double *r, clcone_result *res,
                                      clcone_mpi_domain_stats *stats, int *owner, clcone_error *err);

#endif
