/* A local-form batch over MPI ranks (clcone_mpi_solve_batch,
 * include/clcone/mpi/ranks.h): root cuts it into shares, one per rank,
 * sends each its share, every rank solves its own through a plan, and the
 * results go back to root (mpi_common.c). */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_parts.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A share's head: contacts, W blocks, problems, soft arrays given. */
enum { HEAD = 4 };

/* One rank's share of the batch: its problems (ascending batch indices
 * idx[0..nprob)), as a batch of their own, their warm start and soft's
 * R and a_ref where the options give them. */
typedef struct share {
    int nprob, *idx;
    clcone_problem p;
    double *r, *R, *aref;
} share;

static void share_free(share *s)
{
    free(s->idx);
    clcone_problem_free(&s->p);
    free(s->r);
    free(s->R);
    free(s->aref);
    memset(s, 0, sizeof *s);
}

/* The problems of the batch that owner gives rank q, ascending, into
 * s->idx. */
static clcone_status share_index(int nprob, const int *owner, int q, share *s, clcone_error *err)
{
    for (int k = 0; k < nprob; ++k) s->nprob += owner[k] == q;
    if (!s->nprob) return CLCONE_OK;
    if (!(s->idx = malloc((size_t)s->nprob * sizeof *s->idx)))
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for rank %d's %d problems", q, s->nprob);
    for (int k = 0, j = 0; k < nprob; ++k)
        if (owner[k] == q) s->idx[j++] = k;
    return CLCONE_OK;
}

/* Root: the share's slice of a per-contact array (3 a contact) of the
 * batch into *dst; NULL src: none. */
static clcone_status share_slice(const clcone_problem *batch, const share *s, const double *src, double **dst,
                                 const char *what, clcone_error *err)
{
    if (!src) return CLCONE_OK;
    if (!(*dst = malloc(3 * (size_t)s->p.n * sizeof **dst + 1)))
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a share's %s", what);
    for (int j = 0; j < s->nprob; ++j)
        memcpy(*dst + 3 * (size_t)s->p.prob_off[j], src + 3 * (size_t)batch->prob_off[s->idx[j]],
               3 * (size_t)(s->p.prob_off[j + 1] - s->p.prob_off[j]) * sizeof **dst);
    return CLCONE_OK;
}

/* Root: rank q's share, copied out of the batch. */
static clcone_status share_make(const clcone_problem *batch, const int *owner, int q, const double *r0,
                                const clcone_options *o, share *s, clcone_error *err)
{
    clcone_problem *parts = NULL;
    const clcone_problem **ptrs = NULL;
    clcone_status st;
    int made = 0;
    if ((st = share_index(batch->nprob, owner, q, s, err)) || !s->nprob) return st;
    parts = calloc((size_t)s->nprob, sizeof *parts);
    ptrs = malloc((size_t)s->nprob * sizeof *ptrs);
    if (!parts || !ptrs) st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for rank %d's problems", q);
    for (; !st && made < s->nprob; ++made) {
        ptrs[made] = &parts[made];
        st = clcone_batch_extract(batch, s->idx[made], &parts[made], err);
    }
    if (!st) st = clcone_batch_concat(ptrs, s->nprob, &s->p, err);
    if (!st && (size_t)s->p.nnzb * 9 > INT_MAX)
        st = clc_mpi_fail(err, CLCONE_ENOTSUP, "rank %d's share of the batch has %d W blocks: more than one MPI "
                             "message carries (%d)", q, s->p.nnzb, INT_MAX / 9);
    if (!st) st = share_slice(batch, s, r0, &s->r, "warm start", err);
    if (!st) st = share_slice(batch, s, o->soft_R, &s->R, "soft R", err);
    if (!st && o->soft_R) st = share_slice(batch, s, o->soft_aref, &s->aref, "soft a_ref", err);
    if (!st && o->soft_R && !o->soft_aref && !(s->aref = calloc(3 * (size_t)s->p.n + 1, sizeof *s->aref)))
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for rank %d's soft a_ref", q); /* a_ref 0 */
    for (int j = 0; j < made; ++j) clcone_problem_free(&parts[j]);
    free(parts);
    free(ptrs);
    return st;
}

/* A rank other than root: room for the share whose sizes head gives
 * (contacts, W blocks, problems, whether soft's R and a_ref come). */
static clcone_status share_alloc(const int head[HEAD], int warm, share *s, clcone_error *err)
{
    size_t len = 3 * (size_t)head[0] * sizeof(double) + 1;
    clcone_status st;
    int *off;
    if ((st = clcone_problem_alloc(&s->p, head[0], head[1], err))) return st;
    if (!(off = calloc((size_t)head[2] + 1, sizeof *off)) || (warm && !(s->r = malloc(len)))
        || (head[3] && (!(s->R = malloc(len)) || !(s->aref = malloc(len))))) {
        free(off);
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a share of %d contacts", head[0]);
    }
    free(s->p.prob_off);
    s->p.prob_off = off;
    s->p.nprob = head[2];
    return CLCONE_OK;
}

/* The arrays of a share, root to rank peer (send) or received from root. */
static void share_transfer(share *s, int send, int peer, int warm, MPI_Comm comm)
{
    clcone_problem *p = &s->p;
    int soft = s->R != NULL;
    struct {
        void *buf;
        int count;
        MPI_Datatype type;
    } parts[] = {{p->row_ptr, p->n + 1, MPI_INT},      {p->col, p->nnzb, MPI_INT},
                 {p->prob_off, p->nprob + 1, MPI_INT}, {p->blocks, 9 * p->nnzb, MPI_DOUBLE},
                 {p->q, 3 * p->n, MPI_DOUBLE},         {p->mu, p->n, MPI_DOUBLE},
                 {s->r, warm ? 3 * p->n : 0, MPI_DOUBLE}, {s->R, soft ? 3 * p->n : 0, MPI_DOUBLE},
                 {s->aref, soft ? 3 * p->n : 0, MPI_DOUBLE}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
        if (send) MPI_Send(parts[i].buf, parts[i].count, parts[i].type, peer, TAG_DATA, comm);
        else MPI_Recv(parts[i].buf, parts[i].count, parts[i].type, peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
    }
}

static clcone_status check_root_args(const clcone_problem *batch, const clcone_options *o, const double *r,
                                     const clcone_result *res, clcone_error *err)
{
    clcone_options rest;
    clcone_status st;
    if (!batch || !o || !r || !res)
        return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_solve_batch: root needs the batch, options, r and res");
    rest = *o; /* soft's R and a_ref are a share's like its problems */
    rest.soft_R = rest.soft_aref = NULL;
    if ((st = clc_mpi_refuse_pointers(&rest, "clcone_mpi_solve_batch", err))) return st;
    return clcone_problem_validate(batch, err);
}

/* Every rank: its share solved through a plan on its own device. */
static clcone_status share_solve(clcone_context *ctx, const clcone_options *o, share *s, double *r,
                                 clcone_result *res, clcone_error *err)
{
    clcone_options so = *o;
    clcone_plan *plan = NULL;
    clcone_status st;
    so.soft_R = s->R;
    so.soft_aref = s->aref;
    if (o->warm_start) memcpy(r, s->r, 3 * (size_t)s->p.n * sizeof *r);
    if (!(st = clcone_plan_create(ctx, &s->p, &so, &plan, err))) st = clcone_plan_solve(plan, r, res, err);
    clcone_plan_free(plan);
    clc_mpi_name_items(st, "problem", s->idx, s->nprob, err);
    return st;
}

/* Root: every rank's share made, the others' sizes sent; root's own in
 * *mine. */
static clcone_status root_shares(MPI_Comm comm, int root, const clcone_problem *batch, const int *owner,
                                 const double *r0, const clcone_options *o, share *shares, share *mine,
                                 clcone_error *err)
{
    int size;
    clcone_status st = CLCONE_OK;
    MPI_Comm_size(comm, &size);
    for (int q = 0; !st && q < size; ++q) st = share_make(batch, owner, q, r0, o, &shares[q], err);
    if ((st = clcone_mpi_agree(comm, st, err))) return st;
    for (int q = 0; q < size; ++q)
        if (q != root) {
            int head[HEAD] = {shares[q].p.n, shares[q].p.nnzb, shares[q].nprob, o->soft_R != NULL};
            MPI_Send(head, HEAD, MPI_INT, q, TAG_HEAD, comm);
        }
    *mine = shares[root];
    memset(&shares[root], 0, sizeof shares[root]);
    return CLCONE_OK;
}

clcone_status clcone_mpi_solve_batch(MPI_Comm comm, int root, clcone_context *ctx, const clcone_problem *batch,
                                     const clcone_options *o, double *r, clcone_result *res, clcone_error *err)
{
    int rank, size, nprob = 0, *counts = NULL, *owner = NULL, *roots = NULL;
    share *shares = NULL, mine;
    clcone_options opt;
    clcone_result sub;
    double *rsub = NULL;
    clcone_status st = CLCONE_OK;
    memset(&mine, 0, sizeof mine);
    memset(&sub, 0, sizeof sub);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (root < 0 || root >= size) /* the same on every rank: no message needed */
        return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_solve_batch: root %d outside the %d ranks", root, size);
    if (rank == root && !(st = check_root_args(batch, o, r, res, err))) {
        nprob = batch->nprob;
        if (!(roots = malloc(((size_t)nprob + 1) * sizeof *roots)) || !(shares = calloc((size_t)size, sizeof *shares)))
            st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a batch of %d problems", nprob);
        for (int k = 0; !st && k < nprob; ++k) roots[k] = batch->prob_off[k + 1] - batch->prob_off[k];
    }
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    clc_mpi_options(comm, root, o, &opt);
    if ((st = clc_mpi_split(comm, root, &nprob, roots, &counts, &owner, err))) goto out;
    if (rank == root) {
        if ((st = root_shares(comm, root, batch, owner, opt.warm_start ? r : NULL, o, shares, &mine, err))) goto out;
    } else {
        int head[HEAD];
        if ((st = clcone_mpi_agree(comm, CLCONE_OK, err))) goto out; /* root's shares made */
        MPI_Recv(head, HEAD, MPI_INT, root, TAG_HEAD, comm, MPI_STATUS_IGNORE);
        st = share_index(nprob, owner, rank, &mine, err);
        if (!st && head[2]) st = share_alloc(head, opt.warm_start, &mine, err);
    }
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    if (rank == root) {
        for (int q = 0; q < size; ++q)
            if (q != root && shares[q].nprob) share_transfer(&shares[q], 1, q, opt.warm_start, comm);
    } else if (mine.nprob) {
        share_transfer(&mine, 0, root, opt.warm_start, comm);
    }
    if (mine.nprob && !(rsub = calloc(3 * (size_t)mine.p.n + 1, sizeof *rsub)))
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d contacts' reactions", mine.p.n);
    else if (mine.nprob)
        st = share_solve(ctx, &opt, &mine, rsub, &sub, err);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    st = clc_mpi_gather(comm, root, nprob, owner, counts, rank == root ? batch->prob_off : NULL, sub.items, rsub,
                           sub.time_ms, r, res, err);
out:
    if (shares)
        for (int q = 0; q < size; ++q) share_free(&shares[q]);
    free(shares);
    share_free(&mine);
    clcone_result_free(&sub);
    free(rsub);
    free(roots);
    free(counts);
    free(owner);
    return st;
}
