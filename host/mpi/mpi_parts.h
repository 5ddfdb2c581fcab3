/* Internal helpers of the MPI part (host/mpi/), shared by its entries. */
#ifndef CLCONE_MPI_PARTS_H
#define CLCONE_MPI_PARTS_H

#include <clcone/mpi/ranks.h>

/* Message tags: a share's sizes, its arrays, its results. */
enum { TAG_HEAD = 1, TAG_DATA, TAG_RESULT };

/* Fills err (when not NULL) and returns code. */
clcone_status clcone_mpi_fail(clcone_error *err, clcone_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Every rank: root's item count *nitems (set on every rank), the item
 * sizes (contacts) root has in root_counts, into *counts, and who solves
 * each (clcone_mpi_assign) into *owner; the caller frees both, also on
 * failure. */
clcone_status clcone_mpi_split(MPI_Comm comm, int root, int *nitems, const int *root_counts, int **counts,
                               int **owner, clcone_error *err);
/* Root's options o into opt on every rank, their pointers NULL elsewhere. */
void clcone_mpi_options(MPI_Comm comm, int root, const clcone_options *o, clcone_options *opt);
/* CLCONE_ENOTSUP, naming entry, when o holds what does not go over ranks. */
clcone_status clcone_mpi_refuse_pointers(const clcone_options *o, const char *entry, clcone_error *err);
/* After a failed solve (st): err's message preceded by which items of the
 * batch (idx[0..n), named what: "problem", "scene") the rank held. */
void clcone_mpi_name_items(clcone_status st, const char *what, const int *idx, int n, clcone_error *err);
/* Every rank: its items' results (items, in ascending item order) and
 * reactions (rmine, 3 counts[k] each, one after another) and its solve
 * time ms to root, which puts item k's at res->items[k] and r + 3 off[k]
 * and the longest time in res->time_ms. */
clcone_status clcone_mpi_gather(MPI_Comm comm, int root, int nitems, const int *owner, const int *counts,
                                const int *off, const clcone_prob_result *items, const double *rmine, double ms,
                                double *r, clcone_result *res, clcone_error *err);

#endif
