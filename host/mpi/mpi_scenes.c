/* Body-form scenes over MPI ranks (clcone_mpi_solve_scenes,
 * include/clcone/mpi/ranks.h): each scene goes whole to one rank, which
 * solves its scenes one after another as `clcone solve SCENE...` does in
 * one process; the results go back to root (mpi_common.c). */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_parts.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One rank's scenes: their indices (ascending), sizes (bodies, contacts
 * per scene), time steps, the scenes (on root, views of the caller's;
 * elsewhere their own arrays) and their warm start. */
typedef struct scene_share {
    int m, *idx, *sizes, own;
    double *dt, *r;
    clcone_scene *sc;
    long long contacts;
} scene_share;

static void scene_share_free(scene_share *s)
{
    for (int j = 0; s->own && s->sc && j < s->m; ++j) {
        free(s->sc[j].bodies);
        free(s->sc[j].contacts);
    }
    free(s->idx);
    free(s->sizes);
    free(s->dt);
    free(s->r);
    free(s->sc);
    memset(s, 0, sizeof *s);
}

/* Every rank: room for the index, sizes and steps of the scenes owner
 * gives rank q. */
static clcone_status scene_share_index(int n, const int *owner, const int *counts, int q, scene_share *s,
                                       clcone_error *err)
{
    for (int k = 0; k < n; ++k)
        if (owner[k] == q) ++s->m, s->contacts += counts[k];
    s->idx = malloc(((size_t)s->m + 1) * sizeof *s->idx);
    s->sizes = malloc((2 * (size_t)s->m + 1) * sizeof *s->sizes);
    s->dt = malloc(((size_t)s->m + 1) * sizeof *s->dt);
    s->sc = calloc((size_t)s->m + 1, sizeof *s->sc);
    if (!s->idx || !s->sizes || !s->dt || !s->sc)
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for rank %d's %d scenes", q, s->m);
    for (int k = 0, j = 0; k < n; ++k)
        if (owner[k] == q) s->idx[j++] = k;
    return CLCONE_OK;
}

/* Root: rank q's share as views of the caller's scenes. */
static clcone_status scene_share_view(const clcone_scene *scenes, const double *dt, double dt0, const int *off,
                                      const double *r0, scene_share *s, clcone_error *err)
{
    if (r0 && !(s->r = malloc((3 * (size_t)s->contacts + 1) * sizeof *s->r)))
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a warm start of %lld contacts", s->contacts);
    for (int j = 0, c = 0; j < s->m; ++j) {
        const clcone_scene *x = &scenes[s->idx[j]];
        s->sc[j] = *x;
        s->sizes[2 * j] = x->nbodies;
        s->sizes[2 * j + 1] = x->ncontacts;
        s->dt[j] = dt ? dt[s->idx[j]] : dt0;
        if (r0) memcpy(s->r + 3 * (size_t)c, r0 + 3 * (size_t)off[s->idx[j]], 3 * (size_t)x->ncontacts * sizeof *s->r);
        c += x->ncontacts;
    }
    return CLCONE_OK;
}

/* A rank other than root: the scenes' own arrays, from their sizes. */
static clcone_status scene_share_alloc(int warm, scene_share *s, clcone_error *err)
{
    s->own = 1;
    if (warm && !(s->r = malloc((3 * (size_t)s->contacts + 1) * sizeof *s->r)))
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a warm start of %lld contacts", s->contacts);
    for (int j = 0; j < s->m; ++j) {
        clcone_scene *x = &s->sc[j];
        x->nbodies = s->sizes[2 * j];
        x->ncontacts = s->sizes[2 * j + 1];
        x->bodies = malloc(((size_t)x->nbodies + 1) * sizeof *x->bodies);
        x->contacts = malloc(((size_t)x->ncontacts + 1) * sizeof *x->contacts);
        if (!x->bodies || !x->contacts)
            return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for scene %d (%d bodies, %d contacts)",
                                   s->idx[j], x->nbodies, x->ncontacts);
    }
    return CLCONE_OK;
}

/* The scenes' bodies, contacts and warm start, root to peer (send) or
 * received from root. */
static void scene_share_transfer(scene_share *s, int send, int peer, int warm, MPI_Comm comm)
{
    for (int j = 0; j < s->m; ++j) {
        clcone_scene *x = &s->sc[j];
        int nb = x->nbodies * (int)sizeof *x->bodies, nc = x->ncontacts * (int)sizeof *x->contacts;
        if (send) {
            MPI_Send(x->bodies, nb, MPI_BYTE, peer, TAG_DATA, comm);
            MPI_Send(x->contacts, nc, MPI_BYTE, peer, TAG_DATA, comm);
        } else {
            MPI_Recv(x->bodies, nb, MPI_BYTE, peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
            MPI_Recv(x->contacts, nc, MPI_BYTE, peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
        }
    }
    if (!warm) return;
    if (send) MPI_Send(s->r, 3 * (int)s->contacts, MPI_DOUBLE, peer, TAG_DATA, comm);
    else MPI_Recv(s->r, 3 * (int)s->contacts, MPI_DOUBLE, peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
}

/* Every rank: its scenes solved one after another through one plan while
 * their time step stays (clcone_plan_set_scene), results in items and
 * reactions one after another in r; *ms the solves' summed time. */
static clcone_status scene_share_solve(clcone_context *ctx, const clcone_options *o, const scene_share *s,
                                       clcone_prob_result *items, double *r, double *ms, clcone_error *err)
{
    clcone_plan *plan = NULL;
    clcone_options oj = *o;
    clcone_status st = CLCONE_OK;
    for (int j = 0, c = 0; !st && j < s->m; c += s->sc[j++].ncontacts) {
        clcone_result res;
        double *rj = r + 3 * (size_t)c;
        if (o->warm_start) memcpy(rj, s->r + 3 * (size_t)c, 3 * (size_t)s->sc[j].ncontacts * sizeof *rj);
        if (plan && oj.soft_dt == s->dt[j]) {
            st = clcone_plan_set_scene(plan, &s->sc[j], err);
        } else {
            clcone_plan_free(plan);
            plan = NULL;
            oj.soft_dt = s->dt[j];
            st = clcone_plan_create_scene(ctx, &s->sc[j], &oj, &plan, err);
        }
        if (!st && !(st = clcone_plan_solve(plan, rj, &res, err))) {
            items[j] = res.items[0];
            *ms += res.time_ms;
            clcone_result_free(&res);
        }
        clc_mpi_name_items(st, "scene", &s->idx[j], 1, err);
    }
    clcone_plan_free(plan);
    return st;
}

static clcone_status check_root_args(const clcone_scene *scenes, int nscenes, const clcone_options *o,
                                     const double *r, const clcone_result *res, int *counts, int *off,
                                     clcone_error *err)
{
    if (nscenes < 0 || (nscenes && !scenes) || !o || !r || !res)
        return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_solve_scenes: root needs the scenes, options, r and res");
    for (int k = 0; k < nscenes; ++k) {
        if ((size_t)scenes[k].nbodies * sizeof(clcone_body) > INT_MAX
            || (size_t)scenes[k].ncontacts * sizeof(clcone_contact) > INT_MAX
            || (long long)off[k] + scenes[k].ncontacts > INT_MAX / 3)
            return clc_mpi_fail(err, CLCONE_ENOTSUP, "scene %d (%d bodies, %d contacts) is more than MPI messages "
                                   "of this size carry", k, scenes[k].nbodies, scenes[k].ncontacts);
        if (scenes[k].nbodies < 0 || scenes[k].ncontacts < 0)
            return clc_mpi_fail(err, CLCONE_EINVAL, "scene %d: negative size", k);
        counts[k] = scenes[k].ncontacts;
        off[k + 1] = off[k] + counts[k];
    }
    return clc_mpi_refuse_pointers(o, "clcone_mpi_solve_scenes", err);
}

/* Root: each other rank's sizes and time steps, so that it can make room
 * (or say it cannot); root's own share into *mine. The others receive
 * theirs into *mine. */
static clcone_status share_sizes(MPI_Comm comm, int root, int warm, scene_share *shares, scene_share *mine,
                                 clcone_error *err)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == root) {
        for (int q = 0; q < size; ++q)
            if (q != root && shares[q].m) {
                MPI_Send(shares[q].sizes, 2 * shares[q].m, MPI_INT, q, TAG_HEAD, comm);
                MPI_Send(shares[q].dt, shares[q].m, MPI_DOUBLE, q, TAG_HEAD, comm);
            }
        *mine = shares[root];
        memset(&shares[root], 0, sizeof shares[root]);
        return CLCONE_OK;
    }
    if (!mine->m) return CLCONE_OK;
    MPI_Recv(mine->sizes, 2 * mine->m, MPI_INT, root, TAG_HEAD, comm, MPI_STATUS_IGNORE);
    MPI_Recv(mine->dt, mine->m, MPI_DOUBLE, root, TAG_HEAD, comm, MPI_STATUS_IGNORE);
    return scene_share_alloc(warm, mine, err);
}

clcone_status clcone_mpi_solve_scenes(MPI_Comm comm, int root, clcone_context *ctx, const clcone_scene *scenes,
                                      int nscenes, const double *dt, const clcone_options *o, double *r,
                                      clcone_result *res, clcone_error *err)
{
    int rank, size, n = 0, *roots = NULL, *off = NULL, *counts = NULL, *owner = NULL;
    scene_share *shares = NULL, mine;
    clcone_options opt;
    clcone_prob_result *items = NULL;
    double *rmine = NULL, ms = 0;
    clcone_status st = CLCONE_OK;
    memset(&mine, 0, sizeof mine);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (root < 0 || root >= size) /* the same on every rank: no message needed */
        return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_solve_scenes: root %d outside the %d ranks", root, size);
    if (rank == root) {
        n = nscenes > 0 ? nscenes : 0;
        roots = malloc(((size_t)n + 1) * sizeof *roots);
        off = calloc((size_t)n + 2, sizeof *off);
        shares = calloc((size_t)size, sizeof *shares);
        if (!roots || !off || !shares) st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d scenes", n);
        else st = check_root_args(scenes, nscenes, o, r, res, roots, off, err);
    }
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    clc_mpi_options(comm, root, o, &opt);
    if ((st = clc_mpi_split(comm, root, &n, roots, &counts, &owner, err))) goto out;
    if (rank == root) {
        for (int q = 0; !st && q < size; ++q)
            if (!(st = scene_share_index(n, owner, counts, q, &shares[q], err)))
                st = scene_share_view(scenes, dt, opt.soft_dt, off, opt.warm_start ? r : NULL, &shares[q], err);
    } else {
        st = scene_share_index(n, owner, counts, rank, &mine, err);
    }
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    st = share_sizes(comm, root, opt.warm_start, shares, &mine, err);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    if (rank == root) {
        for (int q = 0; q < size; ++q)
            if (q != root && shares[q].m) scene_share_transfer(&shares[q], 1, q, opt.warm_start, comm);
    } else if (mine.m) {
        scene_share_transfer(&mine, 0, root, opt.warm_start, comm);
    }
    items = calloc((size_t)mine.m + 1, sizeof *items);
    rmine = calloc(3 * (size_t)mine.contacts + 1, sizeof *rmine);
    if (!items || !rmine) st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d scenes' results", mine.m);
    else st = scene_share_solve(ctx, &opt, &mine, items, rmine, &ms, err);
    if ((st = clcone_mpi_agree(comm, st, err))) goto out;
    st = clc_mpi_gather(comm, root, n, owner, counts, off, items, rmine, ms, r, res, err);
out:
    if (shares)
        for (int q = 0; q < size; ++q) scene_share_free(&shares[q]);
    free(shares);
    scene_share_free(&mine);
    free(items);
    free(rmine);
    free(roots);
    free(off);
    free(counts);
    free(owner);
    return st;
}
