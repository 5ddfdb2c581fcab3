/* One scene over MPI ranks (clcone_mpi_solve_domain, ranks.h): root cuts
 * the scene into parts (mpi_partition.c), each rank solves its part on
 * its own device through a plan that is a part of the whole
 * (clcone_plan_create_part, opencl/device_solve.h's clcone_dev_part):
 * after each gather the halo goes to the neighbours point to point, the
 * deciding sums are exact over the ranks (mpi_exact.c); the reactions of
 * the contacts each rank counts come back to root in the scene's order. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_parts.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_HALO = 16 };

typedef clc_mpi_domain domain;

static clcone_status dom_exchange(void *ctx, const void *send, void *recv, size_t real_size, clcone_error *err)
{
    domain *D = ctx;
    const clc_mpi_part *P = D->P;
    size_t body = 6 * real_size;
    int nn = P->nneigh, rc;
    for (int k = 0; k < nn; ++k)
        MPI_Irecv((char *)recv + (size_t)D->roff[k] * body, (int)((size_t)P->nrecv[k] * body), MPI_BYTE, P->neigh[k],
                  TAG_HALO, D->comm, &D->req[k]);
    for (int k = 0; k < nn; ++k) {
        int j0 = P->send_ptr[k], j1 = P->send_ptr[k + 1];
        for (int j = j0; j < j1; ++j)
            memcpy(D->sbuf + (size_t)j * body, (const char *)send + (size_t)(P->send_idx[j] - P->send) * body, body);
        MPI_Isend(D->sbuf + (size_t)j0 * body, (int)((size_t)(j1 - j0) * body), MPI_BYTE, P->neigh[k], TAG_HALO,
                  D->comm, &D->req[nn + k]);
        D->sent += (long long)(j1 - j0) * (long long)body;
    }
    rc = MPI_Waitall(2 * nn, D->req, MPI_STATUSES_IGNORE);
    D->exchanges++;
    return rc == MPI_SUCCESS ? CLCONE_OK : clc_mpi_fail(err, CLCONE_EDEVICE, "the halo exchange failed");
}

static clcone_status dom_sum(void *ctx, const double *terms, int n, int K, double *sums, clcone_error *err)
{
    domain *D = ctx;
    D->sums++;
    return clc_mpi_exact_sums(D->comm, terms, D->P->counted, n, K, sums, err);
}

static clcone_status dom_max(void *ctx, double *x, clcone_error *err)
{
    domain *D = ctx;
    int rc = MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_MAX, D->comm);
    return rc == MPI_SUCCESS ? CLCONE_OK : clc_mpi_fail(err, CLCONE_EDEVICE, "MPI_Allreduce of a bound failed");
}

clcone_status clc_mpi_domain_open(domain *D, MPI_Comm comm, const clc_mpi_part *P, clcone_dev_part *dp,
                                     clcone_error *err)
{
    int nn = P->nneigh;
    clc_mpi_domain_close(D);
    memset(D, 0, sizeof *D);
    D->comm = comm;
    D->P = P;
    D->roff = malloc(((size_t)nn + 1) * sizeof *D->roff);
    D->sbuf = malloc((size_t)P->send_ptr[nn] * 6 * sizeof(double) + 1);
    D->req = malloc((2 * (size_t)nn + 1) * sizeof *D->req);
    if (!D->roff || !D->sbuf || !D->req)
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for the halo of %d neighbours", nn);
    for (int k = 0, o = 0; k < nn; o += P->nrecv[k++]) D->roff[k] = o;
    *dp = (clcone_dev_part){P->own, P->send, P->ghosts, P->body_contacts, D, dom_exchange, dom_sum, dom_max};
    return CLCONE_OK;
}

void clc_mpi_domain_close(domain *D)
{
    free(D->roff);
    free(D->sbuf);
    free(D->req);
    D->roff = NULL;
    D->sbuf = NULL;
    D->req = NULL;
}

/* Every rank: the reactions of the contacts it counts to root, at their
 * places in r. */
static clcone_status gather_reactions(MPI_Comm comm, int root, const clc_mpi_part *P, const double *rl, int total,
                                      double *r, clcone_error *err)
{
    int rank, size, mine = 0, *cnt = NULL, *dsp = NULL, *cnt3 = NULL, *dsp3 = NULL, *gid = NULL, *all = NULL;
    double *rv = NULL, *rall = NULL;
    clcone_status st = CLCONE_OK;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    gid = malloc(((size_t)P->nc + 1) * sizeof *gid);
    rv = malloc((3 * (size_t)P->nc + 1) * sizeof *rv);
    if (rank == root) {
        cnt = malloc((size_t)size * 4 * sizeof *cnt);
        all = malloc(((size_t)total + 1) * sizeof *all);
        rall = malloc((3 * (size_t)total + 1) * sizeof *rall);
    }
    if (!gid || !rv || (rank == root && (!cnt || !all || !rall)))
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory gathering %d reactions", total);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    for (int j = 0; j < P->nc; ++j)
        if (P->counted[j]) {
            gid[mine] = P->gid[j];
            memcpy(rv + 3 * (size_t)mine++, rl + 3 * (size_t)j, 3 * sizeof *rv);
        }
    if (rank == root) dsp = cnt + size, cnt3 = cnt + 2 * size, dsp3 = cnt + 3 * size;
    MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, root, comm);
    if (rank == root)
        for (int q = 0, o = 0; q < size; o += cnt[q++]) {
            dsp[q] = o;
            cnt3[q] = 3 * cnt[q];
            dsp3[q] = 3 * o;
        }
    MPI_Gatherv(gid, mine, MPI_INT, all, cnt, dsp, MPI_INT, root, comm);
    MPI_Gatherv(rv, 3 * mine, MPI_DOUBLE, rall, cnt3, dsp3, MPI_DOUBLE, root, comm);
    if (rank == root)
        for (int i = 0; i < total; ++i) memcpy(r + 3 * (size_t)all[i], rall + 3 * (size_t)i, 3 * sizeof *r);
out:
    free(gid);
    free(rv);
    free(cnt);
    free(all);
    free(rall);
    return st;
}

/* Root: the arguments, the scene and its parts (owner: each body's
 * rank, NULL: not wanted), before any rank goes on. */
static clcone_status root_parts(int size, const clcone_scene *scene, const clcone_options *o, const double *r,
                                const clcone_result *res, clc_mpi_part *parts, int *owner, clcone_error *err)
{
    clcone_options shared;
    clcone_status st;
    if (!scene || !o || !r || !res)
        return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_solve_domain: root needs the scene, options, r and res");
    /* root's progress stays root's: its checks are every rank's */
    shared = *o;
    shared.progress = NULL;
    if ((st = clc_mpi_refuse_pointers(&shared, "clcone_mpi_solve_domain", err))
        || (st = clcone_scene_validate(scene, err)))
        return st;
    if (scene->ncontacts == 0)
        return clc_mpi_fail(err, CLCONE_EINVAL, "the scene has no contacts: nothing to solve over ranks");
    if ((long long)scene->ncontacts * 3 > INT_MAX)
        return clc_mpi_fail(err, CLCONE_ENOTSUP, "a scene of %d contacts: more reactions than MPI messages of "
                               "this size carry", scene->ncontacts);
    return clc_mpi_partition(scene, size, o->warm_start ? r : NULL, parts, owner, err);
}

/* Root: what every rank's part and exchanges came to. */
static void domain_stats(MPI_Comm comm, int root, const clc_mpi_part *P, const domain *D,
                         clcone_mpi_domain_stats *stats)
{
    long long mine[4] = {P->nc, 0, P->ghosts, 0}, most[4], sum[4];
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int j = 0; j < P->nc; ++j) mine[1] += !P->counted[j];
    mine[3] = D->exchanges ? D->sent / D->exchanges : 0;
    MPI_Reduce(mine, most, 4, MPI_LONG_LONG, MPI_MAX, root, comm);
    MPI_Reduce(mine, sum, 4, MPI_LONG_LONG, MPI_SUM, root, comm);
    if (rank != root || !stats) return;
    *stats = (clcone_mpi_domain_stats){size, most[0], sum[1], sum[2], most[3], sum[3], D->exchanges, D->sums, 0};
}

/* Every rank: its part's plan made (agreed), warmed up and solved from
 * rl; *stranded when it failed after the agreement. */
static clcone_status solve_part(MPI_Comm comm, clcone_context *ctx, const clcone_options *opt, domain *D,
                                const clcone_dev_part *dpo, double *rl, clcone_result *lres, int *stranded,
                                clcone_error *err)
{
    const clc_mpi_part *P = D->P;
    clcone_scene local = {P->nb, P->nc, P->bodies, P->contacts};
    clcone_plan *plan = NULL;
    clcone_dev_part dp = *dpo;
    clcone_status st = clcone_plan_create_part(ctx, &local, opt, &dp, &plan, err);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    /* from here a failed rank leaves the others in an exchange (ranks.h) */
    if (!(st = clcone_plan_warm_up(plan, err))) {
        D->sent = D->exchanges = D->sums = 0;
        st = clcone_plan_solve(plan, rl, lres, err);
    }
    *stranded = st != CLCONE_OK;
out:
    clcone_plan_free(plan);
    return st;
}

clcone_status clc_mpi_domain_solve(MPI_Comm comm, int root, clcone_context *ctx, const clcone_scene *scene,
                                      const clcone_options *o, double *r, clcone_result *res,
                                      clcone_mpi_domain_stats *stats, int *owner, clcone_error *err)
{
    int rank, size, total = 0, stranded = 0;
    clc_mpi_part *parts = NULL, mine;
    clcone_options opt;
    clcone_result lres;
    clcone_dev_part dp;
    domain D;
    double *rl = NULL, ms;
    clcone_status st = CLCONE_OK;
    memset(&mine, 0, sizeof mine);
    memset(&lres, 0, sizeof lres);
    memset(&D, 0, sizeof D);
    if (stats) memset(stats, 0, sizeof *stats);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (root < 0 || root >= size)
        return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_solve_domain: root %d outside the %d ranks", root, size);
    if (rank == root) {
        if (!(parts = calloc((size_t)size, sizeof *parts)))
            st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d parts", size);
        else st = root_parts(size, scene, o, r, res, parts, owner, err);
        if (!st) total = scene->ncontacts;
    }
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    clc_mpi_options(comm, root, o, &opt);
    if ((st = clc_mpi_part_transfer(comm, root, parts, &mine, opt.warm_start, err))) goto out;
    if (!(rl = calloc(3 * (size_t)mine.nc + 1, sizeof *rl)))
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d reactions", mine.nc);
    else if (!(st = clc_mpi_domain_open(&D, comm, &mine, &dp, err)) && mine.r0)
        memcpy(rl, mine.r0, 3 * (size_t)mine.nc * sizeof *rl);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    if ((st = solve_part(comm, ctx, &opt, &D, &dp, rl, &lres, stats ? &stats->stranded : &stranded, err))) goto out;
    ms = lres.time_ms;
    MPI_Reduce(rank == root ? MPI_IN_PLACE : &ms, &ms, 1, MPI_DOUBLE, MPI_MAX, root, comm);
    domain_stats(comm, root, &mine, &D, stats);
    if ((st = gather_reactions(comm, root, &mine, rl, total, r, err))) goto out;
    if (rank == root) {
        /* the result as one process makes it: root's, the same on every rank */
        *res = lres;
        res->time_ms = ms;
        memset(&lres, 0, sizeof lres);
    }
    st = clcone_mpi_agree(comm, st, err);
out:
    if (parts)
        for (int q = 0; q < size; ++q) clc_mpi_part_free(&parts[q]);
    free(parts);
    clc_mpi_part_free(&mine);
    clcone_result_free(&lres);
    clc_mpi_domain_close(&D);
    free(rl);
    return st;
}

clcone_status clcone_mpi_solve_domain(MPI_Comm comm, int root, clcone_context *ctx, const clcone_scene *scene,
                                      const clcone_options *o, double *r, clcone_result *res,
                                      clcone_mpi_domain_stats *stats, clcone_error *err)
{
    return clc_mpi_domain_solve(comm, root, ctx, scene, o, r, res, stats, NULL, err);
}
