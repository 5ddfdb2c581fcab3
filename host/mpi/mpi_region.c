/* Regions of a cut (clc_mpi_cut, mpi_parts.h) and what neighbouring
 * regions exchange: which rank a point belongs to, how far a point is
 * from a region, which regions come near each other, and one exchange of
 * byte buffers with the neighbours alone (sizes first, agreed, so that no
 * rank waits on one that could not make room). */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_parts.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_SWAP_SIZE = 32, TAG_SWAP_DATA };

int clc_mpi_region(const clc_mpi_cut *c, const double x[3])
{
    int r0 = 0, k = c->nranks;
    while (k > 1) {
        int s = r0 + k / 2;
        if (x[c->axis[s]] < c->val[s]) {
            k /= 2;
        } else {
            k -= k / 2;
            r0 = s;
        }
    }
    return r0;
}

/* How far [lo, hi] lies from [a, b] along one axis (0 when they meet);
 * an empty region (lo = inf) is infinitely far. */
static double gap(double lo, double hi, double a, double b)
{
    if (lo == INFINITY || a == INFINITY) return INFINITY;
    return fmax(0.0, fmax(lo - b, a - hi));
}

double clc_mpi_region_dist(const clc_mpi_cut *c, int q, const double x[3])
{
    const double *B = c->box + 6 * (size_t)q;
    double d2 = 0;
    for (int k = 0; k < 3; ++k) {
        double g = gap(B[k], B[3 + k], x[k], x[k]);
        d2 += g * g;
    }
    return sqrt(d2);
}

clcone_status clc_mpi_neighbours(const clc_mpi_cut *c, int me, double h, int **neigh, int *n,
                                    clcone_error *err)
{
    const double *M = c->box + 6 * (size_t)me;
    *n = 0;
    if (!(*neigh = malloc(((size_t)c->nranks + 1) * sizeof **neigh)))
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d ranks' neighbours", c->nranks);
    for (int q = 0; q < c->nranks; ++q) {
        const double *B = c->box + 6 * (size_t)q;
        double d2 = 0;
        if (q == me) continue;
        for (int k = 0; k < 3; ++k) {
            double g = gap(B[k], B[3 + k], M[k], M[3 + k]);
            d2 += g * g;
        }
        if (sqrt(d2) <= h) (*neigh)[(*n)++] = q;
    }
    return CLCONE_OK;
}

clcone_status clc_mpi_swap(MPI_Comm comm, int nn, const int *neigh, char *const *sbuf, const size_t *sn,
                              char **rbuf, size_t *rn, long long *sent, clcone_error *err)
{
    MPI_Request *req = malloc((2 * (size_t)nn + 1) * sizeof *req);
    long long *ss = malloc((2 * (size_t)nn + 1) * sizeof *ss), *rs = ss ? ss + nn : NULL;
    size_t total = 0, off = 0;
    clcone_status st = CLCONE_OK;
    *rbuf = NULL;
    if (!req || !ss) st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for an exchange with %d neighbours", nn);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    for (int k = 0; k < nn; ++k) {
        ss[k] = (long long)sn[k];
        MPI_Irecv(&rs[k], 1, MPI_LONG_LONG, neigh[k], TAG_SWAP_SIZE, comm, &req[k]);
        MPI_Isend(&ss[k], 1, MPI_LONG_LONG, neigh[k], TAG_SWAP_SIZE, comm, &req[nn + k]);
    }
    MPI_Waitall(2 * nn, req, MPI_STATUSES_IGNORE);
    for (int k = 0; k < nn; ++k) {
        rn[k] = (size_t)rs[k];
        total += rn[k];
        if (rs[k] > INT_MAX || ss[k] > INT_MAX)
            st = clc_mpi_fail(err, CLCONE_ENOTSUP, "an exchange with rank %d of more bytes than one MPI message "
                                 "carries", neigh[k]);
    }
    if (!st && !(*rbuf = malloc(total + 1)))
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %zu bytes from %d neighbours", total, nn);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    for (int k = 0; k < nn; off += rn[k++]) {
        MPI_Irecv(*rbuf + off, (int)rn[k], MPI_BYTE, neigh[k], TAG_SWAP_DATA, comm, &req[k]);
        MPI_Isend(sbuf[k], (int)sn[k], MPI_BYTE, neigh[k], TAG_SWAP_DATA, comm, &req[nn + k]);
        *sent += (long long)sn[k];
    }
    MPI_Waitall(2 * nn, req, MPI_STATUSES_IGNORE);
out:
    if (st) {
        free(*rbuf);
        *rbuf = NULL;
    }
    free(req);
    free(ss);
    return st;
}
