/* Batches over MPI ranks (include/clcone/mpi/ranks.h). Written on the
 * public API alone, so that libclcone_mpi.so links against what
 * libclcone.so exports. Every step that can fail on some rank ends in
 * clcone_mpi_agree before the next message, so that no rank waits for a
 * message that a failed rank will never send. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/mpi/ranks.h>

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_HEAD = 1, TAG_DATA, TAG_RESULT };

static clcone_status fail(clcone_error *err, clcone_status code, const char *fmt, ...)
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
    if (size == 1) return fail(err, (clcone_status)code, "%s", msg);
    return fail(err, (clcone_status)code, "rank %d of %d: %.*s", first, size, (int)sizeof msg - 32, msg);
}

/* "N" for the device that local rank `local` takes when no spec names one:
 * the node's GPUs round-robin, else its CPU devices. */
static clcone_status node_device(int local, char *spec, size_t len, clcone_error *err)
{
    clcone_device_info *list;
    int n, ngpu = 0, ncpu = 0, want, seen = 0;
    clcone_status st = clcone_list_devices(&list, &n, err);
    if (st) return st;
    for (int i = 0; i < n; ++i) {
        ngpu += list[i].is_gpu;
        ncpu += list[i].is_cpu;
    }
    want = ngpu ? 1 : ncpu ? 2 : 0;
    /* the count of devices of the wanted kind, then the (local mod count)-th */
    seen = want == 1 ? ngpu : want == 2 ? ncpu : n;
    local %= seen;
    for (int i = 0; i < n; ++i)
        if (want == 0 || (want == 1 ? list[i].is_gpu : list[i].is_cpu)) {
            if (local-- == 0) {
                snprintf(spec, len, "%d", list[i].index);
                break;
            }
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
    if (!ctx) st = fail(err, CLCONE_EINVAL, "clcone_mpi_context_create: argument 'ctx' is NULL");
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
        return fail(err, CLCONE_EINVAL, "clcone_mpi_assign: %d problems over %d ranks", nprob, nranks);
    items = malloc(((size_t)nprob + 1) * sizeof *items);
    load = calloc((size_t)nranks, sizeof *load);
    if (!items || !load) {
        free(items);
        free(load);
        return fail(err, CLCONE_ENOMEM, "out of memory assigning %d problems to %d ranks", nprob, nranks);
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

/* One rank's share of the batch: its problems (ascending batch indices
 * idx[0..nprob)), as a batch of their own, and their warm start. */
typedef struct share {
    int nprob, *idx;
    clcone_problem p;
    double *r;
} share;

static void share_free(share *s)
{
    free(s->idx);
    clcone_problem_free(&s->p);
    free(s->r);
    memset(s, 0, sizeof *s);
}

/* Root: the problems `owner` gives rank q, copied out of the batch. */
static clcone_status share_make(const clcone_problem *batch, const int *owner, int q, const double *r0, share *s,
                                clcone_error *err)
{
    clcone_problem *parts = NULL;
    const clcone_problem **ptrs = NULL;
    clcone_status st = CLCONE_OK;
    int made = 0;
    for (int k = 0; k < batch->nprob; ++k) s->nprob += owner[k] == q;
    if (!s->nprob) return CLCONE_OK;
    s->idx = malloc((size_t)s->nprob * sizeof *s->idx);
    parts = calloc((size_t)s->nprob, sizeof *parts);
    ptrs = malloc((size_t)s->nprob * sizeof *ptrs);
    if (!s->idx || !parts || !ptrs) st = fail(err, CLCONE_ENOMEM, "out of memory for rank %d's problems", q);
    for (int k = 0, j = 0; !st && k < batch->nprob; ++k)
        if (owner[k] == q) {
            s->idx[j] = k;
            ptrs[j] = &parts[j];
            st = clcone_batch_extract(batch, k, &parts[j++], err);
            made = j;
        }
    if (!st) st = clcone_batch_concat(ptrs, s->nprob, &s->p, err);
    if (!st && (size_t)s->p.nnzb * 9 > INT_MAX)
        st = fail(err, CLCONE_ENOTSUP, "rank %d's share of the batch has %d W blocks: more than one MPI message "
                  "carries (%d)", q, s->p.nnzb, INT_MAX / 9);
    if (!st && r0) {
        if (!(s->r = malloc(3 * (size_t)s->p.n * sizeof *s->r + 1)))
            st = fail(err, CLCONE_ENOMEM, "out of memory for rank %d's warm start", q);
        for (int j = 0; !st && j < s->nprob; ++j)
            memcpy(s->r + 3 * (size_t)s->p.prob_off[j], r0 + 3 * (size_t)batch->prob_off[s->idx[j]],
                   3 * (size_t)(s->p.prob_off[j + 1] - s->p.prob_off[j]) * sizeof *s->r);
    }
    for (int j = 0; j < made; ++j) clcone_problem_free(&parts[j]);
    free(parts);
    free(ptrs);
    return st;
}

/* A rank other than root: room for the share whose sizes head gives
 * (n, W blocks, problems). */
static clcone_status share_alloc(const int head[3], int warm, share *s, clcone_error *err)
{
    clcone_status st;
    int *off;
    if ((st = clcone_problem_alloc(&s->p, head[0], head[1], err))) return st;
    if (!(off = calloc((size_t)head[2] + 1, sizeof *off))
        || (warm && !(s->r = malloc(3 * (size_t)head[0] * sizeof *s->r + 1)))) {
        free(off);
        return fail(err, CLCONE_ENOMEM, "out of memory for a share of %d contacts", head[0]);
    }
    free(s->p.prob_off);
    s->p.prob_off = off;
    s->p.nprob = head[2];
    return CLCONE_OK;
}

/* The arrays of a share, root to rank q (send) or received from root. */
static void share_transfer(share *s, int send, int peer, int warm, MPI_Comm comm)
{
    clcone_problem *p = &s->p;
    struct {
        void *buf;
        int count;
        MPI_Datatype type;
    } parts[] = {{p->row_ptr, p->n + 1, MPI_INT},   {p->col, p->nnzb, MPI_INT},
                 {p->prob_off, p->nprob + 1, MPI_INT}, {p->blocks, 9 * p->nnzb, MPI_DOUBLE},
                 {p->q, 3 * p->n, MPI_DOUBLE},      {p->mu, p->n, MPI_DOUBLE},
                 {s->r, warm ? 3 * p->n : 0, MPI_DOUBLE}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
        if (send) MPI_Send(parts[i].buf, parts[i].count, parts[i].type, peer, TAG_DATA, comm);
        else MPI_Recv(parts[i].buf, parts[i].count, parts[i].type, peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
    }
}

static clcone_status check_root_args(int size, const clcone_problem *batch, const clcone_options *o,
                                     const double *r, const clcone_result *res, clcone_error *err)
{
    clcone_status st;
    if (!batch || !o || !r || !res)
        return fail(err, CLCONE_EINVAL, "clcone_mpi_solve_batch: root needs the batch, options, r and res");
    if (o->soft_R || o->soft_aref || o->soft_v0 || o->history || o->progress || o->cancel)
        return fail(err, CLCONE_ENOTSUP, "clcone_mpi_solve_batch: per-contact soft arrays, history, progress and "
                    "cancel are not distributed over ranks; leave them NULL");
    if ((st = clcone_problem_validate(batch, err))) return st;
    if ((size_t)batch->nprob * sizeof(clcone_prob_result) > INT_MAX)
        return fail(err, CLCONE_ENOTSUP, "a batch of %d problems is more than %d ranks' results can carry back",
                    batch->nprob, size);
    return CLCONE_OK;
}

/* Every rank: its share solved through a plan on its own device. */
static clcone_status share_solve(clcone_context *ctx, const clcone_options *o, share *s, double *r,
                                 clcone_result *res, clcone_error *err)
{
    clcone_plan *plan = NULL;
    clcone_status st;
    if (o->warm_start) memcpy(r, s->r, 3 * (size_t)s->p.n * sizeof *r);
    if (!(st = clcone_plan_create(ctx, &s->p, o, &plan, err))) st = clcone_plan_solve(plan, r, res, err);
    clcone_plan_free(plan);
    if (st) {
        /* say which of the batch's problems the failed share held */
        char msg[sizeof err->msg];
        int len = snprintf(msg, sizeof msg, "problem%s", s->nprob > 1 ? "s" : "");
        for (int j = 0; j < s->nprob && len < 200; ++j)
            len += snprintf(msg + len, sizeof msg - (size_t)len, "%s %d", j ? "," : "", s->idx[j]);
        snprintf(msg + len, sizeof msg - (size_t)len, " of the batch: %.*s", 700, err ? err->msg : "");
        fail(err, st, "%s", msg);
    }
    return st;
}

/* Root: res->items for the batch, and one buffer each for the largest
 * share's results and reactions, into which the other ranks' arrive. */
static clcone_status results_alloc(const share *shares, int size, int nprob, clcone_result *res,
                                   clcone_prob_result **items, double **r, clcone_error *err)
{
    int most = 0, widest = 0;
    for (int q = 0; q < size; ++q) {
        if (shares[q].nprob > most) most = shares[q].nprob;
        if (shares[q].p.n > widest) widest = shares[q].p.n;
    }
    res->nprob = nprob;
    res->items = calloc((size_t)nprob + 1, sizeof *res->items);
    *items = malloc(((size_t)most + 1) * sizeof **items);
    *r = malloc((3 * (size_t)widest + 1) * sizeof **r);
    if (res->items && *items && *r) return CLCONE_OK;
    clcone_result_free(res);
    return fail(err, CLCONE_ENOMEM, "out of memory for the results of %d problems", nprob);
}

clcone_status clcone_mpi_solve_batch(MPI_Comm comm, int root, clcone_context *ctx, const clcone_problem *batch,
                                     const clcone_options *o, double *r, clcone_result *res, clcone_error *err)
{
    int rank, size, nprob = 0, *counts = NULL, *owner = NULL;
    share *shares = NULL, mine;
    clcone_options opt;
    clcone_result sub;
    clcone_prob_result *items_buf = NULL;
    double *rsub = NULL, *r_buf = NULL, ms = 0, ms_max = 0;
    clcone_status st = CLCONE_OK;
    memset(&mine, 0, sizeof mine);
    memset(&sub, 0, sizeof sub);
    memset(&opt, 0, sizeof opt);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (root < 0 || root >= size) /* the same on every rank: no message needed */
        return fail(err, CLCONE_EINVAL, "clcone_mpi_solve_batch: root %d outside the %d ranks", root, size);
    if (rank == root) {
        st = check_root_args(size, batch, o, r, res, err);
        if (!st) {
            opt = *o;
            nprob = batch->nprob;
        }
    }
    if ((st = clcone_mpi_agree(comm, st, err))) return st;
    /* root's options; the pointers they may hold mean nothing elsewhere */
    MPI_Bcast(&opt, (int)sizeof opt, MPI_BYTE, root, comm);
    if (rank != root) opt.history = NULL, opt.progress = NULL, opt.progress_user = NULL, opt.cancel = NULL;
    MPI_Bcast(&nprob, 1, MPI_INT, root, comm);
    counts = malloc(((size_t)nprob + 1) * sizeof *counts);
    owner = malloc(((size_t)nprob + 1) * sizeof *owner);
    if (!counts || !owner) st = fail(err, CLCONE_ENOMEM, "out of memory for a batch of %d problems", nprob);
    if (rank == root && !st)
        for (int k = 0; k < nprob; ++k) counts[k] = batch->prob_off[k + 1] - batch->prob_off[k];
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    MPI_Bcast(counts, nprob, MPI_INT, root, comm);
    st = clcone_mpi_assign(nprob, counts, size, owner, err);
    /* root cuts the batch into shares, one per rank */
    if (!st && rank == root) {
        if (!(shares = calloc((size_t)size, sizeof *shares)))
            st = fail(err, CLCONE_ENOMEM, "out of memory for %d shares", size);
        for (int q = 0; !st && q < size; ++q)
            st = share_make(batch, owner, q, opt.warm_start ? r : NULL, &shares[q], err);
    }
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    /* sizes first, so that each rank can make room (or say it cannot) */
    if (rank == root) {
        for (int q = 0; q < size; ++q)
            if (q != root) {
                int head[3] = {shares[q].p.n, shares[q].p.nnzb, shares[q].nprob};
                MPI_Send(head, 3, MPI_INT, q, TAG_HEAD, comm);
            }
        mine = shares[root];
        memset(&shares[root], 0, sizeof shares[root]);
    } else {
        int head[3];
        MPI_Recv(head, 3, MPI_INT, root, TAG_HEAD, comm, MPI_STATUS_IGNORE);
        mine.nprob = head[2];
        if (head[2] && !(mine.idx = malloc((size_t)head[2] * sizeof *mine.idx)))
            st = fail(err, CLCONE_ENOMEM, "out of memory for %d problems", head[2]);
        for (int k = 0, j = 0; !st && k < nprob; ++k)
            if (owner[k] == rank) mine.idx[j++] = k;
        if (!st && head[2]) st = share_alloc(head, opt.warm_start, &mine, err);
    }
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    if (rank == root) {
        for (int q = 0; q < size; ++q)
            if (q != root && shares[q].nprob) share_transfer(&shares[q], 1, q, opt.warm_start, comm);
    } else if (mine.nprob) {
        share_transfer(&mine, 0, root, opt.warm_start, comm);
    }
    if (mine.nprob) {
        if (!(rsub = calloc(3 * (size_t)mine.p.n + 1, sizeof *rsub)))
            st = fail(err, CLCONE_ENOMEM, "out of memory for %d contacts' reactions", mine.p.n);
        else if (!(st = share_solve(ctx, &opt, &mine, rsub, &sub, err)))
            ms = sub.time_ms;
    }
    /* root makes room for every result before the last agreement, so
     * that it can take whatever the ranks then send */
    if (!st && rank == root) st = results_alloc(shares, size, nprob, res, &items_buf, &r_buf, err);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    MPI_Reduce(&ms, &ms_max, 1, MPI_DOUBLE, MPI_MAX, root, comm);
    if (rank != root) {
        if (mine.nprob) {
            MPI_Send(sub.items, mine.nprob * (int)sizeof *sub.items, MPI_BYTE, root, TAG_RESULT, comm);
            MPI_Send(rsub, 3 * mine.p.n, MPI_DOUBLE, root, TAG_RESULT, comm);
        }
        goto out;
    }
    /* root: every share's results to their places in the batch */
    res->time_ms = ms_max;
    for (int q = 0; q < size; ++q) {
        const share *s = q == root ? &mine : &shares[q];
        const clcone_prob_result *items = q == root ? sub.items : items_buf;
        const double *rq = q == root ? rsub : r_buf;
        if (!s->nprob) continue;
        if (q != root) {
            MPI_Recv(items_buf, s->nprob * (int)sizeof *items_buf, MPI_BYTE, q, TAG_RESULT, comm, MPI_STATUS_IGNORE);
            MPI_Recv(r_buf, 3 * s->p.n, MPI_DOUBLE, q, TAG_RESULT, comm, MPI_STATUS_IGNORE);
        }
        for (int j = 0; j < s->nprob; ++j) {
            int k = s->idx[j];
            res->items[k] = items[j];
            memcpy(r + 3 * (size_t)batch->prob_off[k], rq + 3 * (size_t)s->p.prob_off[j],
                   3 * (size_t)counts[k] * sizeof *r);
        }
    }
out:
    if (shares)
        for (int q = 0; q < size; ++q) share_free(&shares[q]);
    free(shares);
    share_free(&mine);
    clcone_result_free(&sub);
    free(rsub);
    free(items_buf);
    free(r_buf);
    free(counts);
    free(owner);
    return st;
}
