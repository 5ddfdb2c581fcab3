/* What the MPI part's entries share (host/mpi/): errors, the
 * agreement, each rank's device, the split of a batch's items over the
 * ranks, root's options on every rank and the results' way back to root.
 * Written on the public API alone, so that libclcone_mpi.so links against
 * what libclcone.so exports. Every step that can fail on some rank ends
 * in clcone_mpi_agree before the next message, so that no rank waits for
 * a message that a failed rank will never send. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_parts.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clcone_status clc_mpi_fail(clcone_error *err, clcone_status code, const char *fmt, ...)
{
    va_list ap;
    if (!err) return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

clcone_status clcone_mpi_agree(MPI_Comm comm, clcone_status st, clcone_error *err)
{
    int rank, size, mine, first, code = (int)st;
    char msg[sizeof err->msg];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mine = st != CLCONE_OK ? rank : size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size) return CLCONE_OK;
    if (rank == first) snprintf(msg, sizeof msg, "%s", err && err->msg[0] ? err->msg : "(no message)");
    MPI_Bcast(&code, 1, MPI_INT, first, comm);
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm);
    if (size == 1) return clc_mpi_fail(err, (clcone_status)code, "%s", msg);
    return clc_mpi_fail(err, (clcone_status)code, "rank %d of %d: %.*s", first, size, (int)sizeof msg - 32, msg);
}

/* "N" for the device that local rank `local` takes when no spec names one:
 * the node's GPUs round-robin, else its CPU devices. */
static clcone_status node_device(int local, char *spec, size_t len, clcone_error *err)
{
    clcone_device_info *list;
    int n, ngpu = 0, ncpu = 0, count;
    clcone_status st = clcone_list_devices(&list, &n, err);
    if (st) return st;
    for (int i = 0; i < n; ++i) {
        ngpu += list[i].is_gpu;
        ncpu += list[i].is_cpu;
    }
    count = ngpu ? ngpu : ncpu ? ncpu : n;
    if (count == 0) {
        clcone_device_list_free(list);
        return clc_mpi_fail(err, CLCONE_EDEVICE, "no OpenCL device on this rank's node");
    }
    local %= count;
    for (int i = 0; i < n; ++i)
        if ((ngpu ? list[i].is_gpu : ncpu ? list[i].is_cpu : 1) && local-- == 0) {
            snprintf(spec, len, "%d", list[i].index);
            break;
        }
    clcone_device_list_free(list);
    return CLCONE_OK;
}

clcone_status clcone_mpi_context_create(MPI_Comm comm, const char *spec, clcone_precision prec,
                                        clcone_context **ctx, clcone_error *err)
{
    MPI_Comm node;
    int local;
    char pick[32];
    clcone_status st = CLCONE_OK;
    /* collective on every rank, whether or not this one needs its place */
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    if (!ctx) st = clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_context_create: argument 'ctx' is NULL");
    else *ctx = NULL;
    if (!spec || !*spec) spec = getenv("CLCONE_DEVICE");
    if (!st && (!spec || !*spec) && !(st = node_device(local, pick, sizeof pick, err))) spec = pick;
    if (!st && strcmp(spec, "ref") != 0) st = clcone_context_create(spec, prec, ctx, err);
    st = clcone_mpi_agree(comm, st, err);
    if (st && ctx) {
        clcone_context_free(*ctx);
        *ctx = NULL;
    }
    return st;
}

typedef struct load_item {
    int contacts, index;
} load_item;

static int by_contacts_desc(const void *pa, const void *pb)
{
    const load_item *a = pa, *b = pb;
    if (a->contacts != b->contacts) return a->contacts > b->contacts ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

clcone_status clcone_mpi_assign(int nprob, const int *contacts, int nranks, int *owner, clcone_error *err)
{
    load_item *items;
    long long *load;
    if (nprob < 0 || nranks < 1 || (nprob > 0 && (!contacts || !owner)))
        return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_assign: %d problems over %d ranks", nprob, nranks);
    items = malloc(((size_t)nprob + 1) * sizeof *items);
    load = calloc((size_t)nranks, sizeof *load);
    if (!items || !load) {
        free(items);
        free(load);
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory assigning %d problems to %d ranks", nprob, nranks);
    }
    for (int k = 0; k < nprob; ++k) items[k] = (load_item){contacts[k], k};
    qsort(items, (size_t)nprob, sizeof *items, by_contacts_desc);
    for (int k = 0; k < nprob; ++k) {
        int best = 0;
        for (int q = 1; q < nranks; ++q)
            if (load[q] < load[best]) best = q;
        owner[items[k].index] = best;
        load[best] += items[k].contacts;
    }
    free(items);
    free(load);
    return CLCONE_OK;
}

clcone_status clc_mpi_split(MPI_Comm comm, int root, int *nitems_io, const int *root_counts, int **counts,
                               int **owner, clcone_error *err)
{
    int size, nitems;
    clcone_status st = CLCONE_OK;
    MPI_Comm_size(comm, &size);
    MPI_Bcast(nitems_io, 1, MPI_INT, root, comm);
    nitems = *nitems_io;
    *counts = malloc(((size_t)nitems + 1) * sizeof **counts);
    *owner = malloc(((size_t)nitems + 1) * sizeof **owner);
    if (!*counts || !*owner) st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a batch of %d items", nitems);
    else if ((size_t)nitems * sizeof(clcone_prob_result) > INT_MAX)
        st = clc_mpi_fail(err, CLCONE_ENOTSUP, "a batch of %d items: more results than one MPI message carries back",
                             nitems);
    else if (root_counts) memcpy(*counts, root_counts, (size_t)nitems * sizeof **counts);
    if ((st = clcone_mpi_agree(comm, st, err))) return st;
    MPI_Bcast(*counts, nitems, MPI_INT, root, comm);
    return clcone_mpi_agree(comm, clcone_mpi_assign(nitems, *counts, size, *owner, err), err);
}

void clc_mpi_options(MPI_Comm comm, int root, const clcone_options *o, clcone_options *opt)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == root) *opt = *o;
    MPI_Bcast(opt, (int)sizeof *opt, MPI_BYTE, root, comm);
    /* pointers mean nothing in another process (root's own refuse them) */
    if (rank != root) {
        opt->soft_R = opt->soft_aref = opt->soft_v0 = NULL;
        opt->history = NULL;
        opt->progress = NULL;
        opt->progress_user = NULL;
        opt->cancel = NULL;
    }
}

clcone_status clc_mpi_refuse_pointers(const clcone_options *o, const char *entry, clcone_error *err)
{
    if (o->soft_R || o->soft_aref || o->soft_v0 || o->history || o->progress || o->cancel)
        return clc_mpi_fail(err, CLCONE_ENOTSUP, "%s: per-contact soft arrays, history, progress and cancel are "
                               "not distributed over ranks; leave them NULL", entry);
    return CLCONE_OK;
}

void clc_mpi_name_items(clcone_status st, const char *what, const int *idx, int n, clcone_error *err)
{
    char msg[sizeof err->msg];
    int len;
    if (!st || !err) return;
    len = snprintf(msg, sizeof msg, "%s%s", what, n > 1 ? "s" : "");
    for (int j = 0; j < n && len < 200; ++j) len += snprintf(msg + len, sizeof msg - (size_t)len, "%s %d", j ? "," : "", idx[j]);
    snprintf(msg + len, sizeof msg - (size_t)len, " of the batch: %.*s", 700, err->msg);
    memcpy(err->msg, msg, sizeof err->msg);
}

clcone_status clc_mpi_gather(MPI_Comm comm, int root, int nitems, const int *owner, const int *counts,
                                const int *off, const clcone_prob_result *items, const double *rmine, double ms,
                                double *r, clcone_result *res, clcone_error *err)
{
    int rank, size, most = 0, mine = 0;
    long long widest = 0, mine_n = 0;
    clcone_prob_result *ibuf = NULL;
    double *rbuf = NULL, ms_max = 0;
    clcone_status st = CLCONE_OK;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int k = 0; k < nitems; ++k)
        if (owner[k] == rank) {
            ++mine;
            mine_n += counts[k];
        }
    if (rank == root) {
        /* room for the largest share's results, which the others' fit in */
        for (int q = 0; q < size; ++q) {
            int m = 0;
            long long w = 0;
            for (int k = 0; k < nitems; ++k)
                if (owner[k] == q) ++m, w += counts[k];
            if (m > most) most = m;
            if (w > widest) widest = w;
        }
        res->nprob = nitems;
        res->items = calloc((size_t)nitems + 1, sizeof *res->items);
        ibuf = malloc(((size_t)most + 1) * sizeof *ibuf);
        rbuf = malloc((3 * (size_t)widest + 1) * sizeof *rbuf);
        if (!res->items || !ibuf || !rbuf) {
            clcone_result_free(res);
            st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for the results of %d items", nitems);
        }
    }
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    MPI_Reduce(&ms, &ms_max, 1, MPI_DOUBLE, MPI_MAX, root, comm);
    if (rank != root) {
        if (mine) {
            MPI_Send(items, mine * (int)sizeof *items, MPI_BYTE, root, TAG_RESULT, comm);
            MPI_Send(rmine, 3 * (int)mine_n, MPI_DOUBLE, root, TAG_RESULT, comm);
        }
        goto out;
    }
    res->time_ms = ms_max;
    for (int q = 0; q < size; ++q) {
        const clcone_prob_result *iq = q == root ? items : ibuf;
        const double *rq = q == root ? rmine : rbuf;
        int m = 0;
        long long w = 0;
        for (int k = 0; k < nitems; ++k)
            if (owner[k] == q) ++m, w += counts[k];
        if (!m) continue;
        if (q != root) {
            MPI_Recv(ibuf, m * (int)sizeof *ibuf, MPI_BYTE, q, TAG_RESULT, comm, MPI_STATUS_IGNORE);
            MPI_Recv(rbuf, 3 * (int)w, MPI_DOUBLE, q, TAG_RESULT, comm, MPI_STATUS_IGNORE);
        }
        /* q's items in ascending order, their reactions one after another */
        for (int k = 0, j = 0; k < nitems; ++k)
            if (owner[k] == q) {
                res->items[k] = iq[j++];
                memcpy(r + 3 * (size_t)off[k], rq, 3 * (size_t)counts[k] * sizeof *r);
                rq += 3 * (size_t)counts[k];
            }
    }
out:
    free(ibuf);
    free(rbuf);
    return st;
}
