/* A rank's bodies from one step to the next (clc_mpi_step_detect, the
 * detection hook of its stepper): its own bodies leave for the
 * neighbour whose region they entered, carrying the last reactions of
 * their contacts (the warm starts); or, when the load drifted, a body
 * went beyond the neighbours or a rank has no contacts, every rank's
 * bodies are cut again (an all-gather, the one collective of the whole
 * state, made only then). Then each neighbour sends the bodies near this
 * rank's region, and the rank detects over its bodies and the ghosts, in
 * the order of their ids, keeping the contacts that touch its own: each
 * such contact with the whole world's key and in its order, so that the
 * solve and the update of each own body sum what one process sums. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_gid(const void *pa, const void *pb)
{
    int a = ((const clc_mpi_body *)pa)->gid, b = ((const clc_mpi_body *)pb)->gid;
    return (a > b) - (a < b);
}

/* L's own bodies, as the last step left them, into S->own, each weighing
 * its contacts in L, at least `least`. */
static void take_own(clcone_mpi_stepper *S, int least)
{
    int n = 0;
    for (int i = 0; i < S->L.s.nbodies; ++i)
        if (S->from[i] == S->rank)
            S->own[n++] = (clc_mpi_body){S->gid[i], S->cnt[i] > least ? S->cnt[i] : least, S->L.s.bodies[i],
                                            S->L.shapes[i]};
    S->nown = n;
}

/* The warm starts of the stepper (the last step's reactions, and those
 * that came with bodies since) of contacts that touch a body whose id is
 * marked (NULL: all) into *out (malloc'd), *n of them. */
static clcone_status warm_entries(const clcone_mpi_stepper *S, const char *mark, clc_mpi_warm **out, int *n,
                                  clcone_error *err)
{
    int m = clcone_sim_warm_count(S->sim);
    *n = 0;
    if (!(*out = malloc(((size_t)m + 1) * sizeof **out)))
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d warm starts", m);
    for (int i = 0; i < m; ++i) {
        clc_mpi_warm *w = &(*out)[*n];
        clcone_sim_warm_entry(S->sim, i, &w->key, w->r);
        clcone_world_key_bodies(w->key, S->nglobal, S->L.nplanes, &w->a, &w->b);
        *n += !mark || mark[w->a] || (w->b >= 0 && mark[w->b]);
    }
    return CLCONE_OK;
}

/* Hands warm starts w[0, n) to the stepper. */
static clcone_status warm_give(clcone_mpi_stepper *S, const clc_mpi_warm *w, int n, clcone_error *err)
{
    unsigned long long *k = malloc(((size_t)n + 1) * sizeof *k);
    double *r = malloc((3 * (size_t)n + 1) * sizeof *r);
    clcone_status st;
    if (!k || !r) {
        free(k);
        free(r);
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d warm starts", n);
    }
    for (int i = 0; i < n; ++i) {
        k[i] = w[i].key;
        memcpy(r + 3 * (size_t)i, w[i].r, sizeof w[i].r);
    }
    st = clcone_sim_warm_add(S->sim, k, r, n, err);
    free(k);
    free(r);
    return st;
}

clcone_status clc_mpi_step_gather(clcone_mpi_stepper *S, const void *mine, int n, size_t size, int to_root,
                                     char **all, int *total, clcone_error *err)
{
    int here = !to_root || S->rank == S->root;
    int *cnt = malloc(2 * (size_t)S->size * sizeof *cnt), *dsp = cnt ? cnt + S->size : NULL, nb = (int)(n * size);
    clcone_status st = CLCONE_OK;
    *all = NULL;
    /* n < 0: the caller could not make its items (out of memory) */
    if (!cnt || n < 0) st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d ranks' items", S->size);
    if ((st = clcone_mpi_agree(S->comm, st, err))) goto out;
    if (to_root) MPI_Gather(&nb, 1, MPI_INT, cnt, 1, MPI_INT, S->root, S->comm);
    else MPI_Allgather(&nb, 1, MPI_INT, cnt, 1, MPI_INT, S->comm);
    *total = 0;
    for (int q = 0; here && q < S->size; ++q) {
        dsp[q] = *total;
        *total += cnt[q];
    }
    if (!(*all = malloc((size_t)*total + 1)))
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory gathering %d bytes", *total);
    if ((st = clcone_mpi_agree(S->comm, st, err))) goto out;
    if (to_root) MPI_Gatherv(mine, nb, MPI_BYTE, *all, cnt, dsp, MPI_BYTE, S->root, S->comm);
    else MPI_Allgatherv(mine, nb, MPI_BYTE, *all, cnt, dsp, MPI_BYTE, S->comm);
    S->fig.bytes += to_root ? (S->rank != S->root) * (long long)nb : (long long)nb * (S->size - 1);
    *total /= (int)size;
out:
    free(cnt);
    return st;
}

clcone_status clc_mpi_step_repartition(clcone_mpi_stepper *S, clcone_error *err)
{
    clc_mpi_body *all = NULL;
    clc_mpi_warm *wmine = NULL, *wall = NULL;
    clcone_scene sc = {0, 0, NULL, NULL};
    int n = 0, nw = 0, nwall = 0, *w = NULL, *owner = NULL, kept = 0, keptw = 0;
    char *mine = NULL;
    clcone_status st = warm_entries(S, NULL, &wmine, &nw, err);
    if ((st = clcone_mpi_agree(S->comm, st, err))
        || (st = clc_mpi_step_gather(S, S->own, S->nown, sizeof *S->own, 0, (char **)&all, &n, err))
        || (st = clc_mpi_step_gather(S, wmine, nw, sizeof *wmine, 0, (char **)&wall, &nwall, err)))
        goto out;
    /* in id order, whichever rank held them: the cut is the same on every rank */
    qsort(all, (size_t)n, sizeof *all, by_gid);
    sc.nbodies = n;
    sc.bodies = malloc(((size_t)n + 1) * sizeof *sc.bodies);
    w = malloc(((size_t)n + 1) * sizeof *w);
    owner = malloc(((size_t)n + 1) * sizeof *owner);
    mine = calloc((size_t)S->nglobal + 1, 1);
    if (!sc.bodies || !w || !owner || !mine) st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory cutting %d bodies", n);
    for (int i = 0; !st && i < n; ++i) sc.bodies[i] = all[i].b, w[i] = all[i].w;
    S->cut.nranks = S->size;
    if (!st) st = clc_mpi_rcb(&sc, w, owner, &S->cut, err);
    free(S->neigh);
    S->neigh = NULL;
    if (!st) st = clc_mpi_neighbours(&S->cut, S->rank, S->halo, &S->neigh, &S->nneigh, err);
    if ((st = clcone_mpi_agree(S->comm, st, err))) goto out;
    for (int i = 0; i < S->nown; ++i) mine[S->own[i].gid] = 1;
    for (int i = 0; i < n; ++i) {
        if (owner[i] != S->rank) {
            S->fig.moved += mine[all[i].gid];
            continue;
        }
        S->own[kept++] = all[i];
        mine[all[i].gid] = 2;
    }
    S->nown = kept;
    for (int i = 0; i < nwall; ++i)
        if (mine[wall[i].a] == 2 || (wall[i].b >= 0 && mine[wall[i].b] == 2)) wall[keptw++] = wall[i];
    st = clcone_mpi_agree(S->comm, warm_give(S, wall, keptw, err), err);
    S->due = 0;
out:
    free(all);
    free(wmine);
    free(wall);
    free(sc.bodies);
    free(w);
    free(owner);
    free(mine);
    return st;
}

/* Whether own body b goes to neighbour k: it entered k's region
 * (leaving), or it lies within the halo of k's region (near). */
typedef int pick_fn(const clcone_mpi_stepper *S, int k, const clc_mpi_body *b);

static int leaving(const clcone_mpi_stepper *S, int k, const clc_mpi_body *b)
{
    return clc_mpi_region(&S->cut, b->b.x) == S->neigh[k];
}

static int near(const clcone_mpi_stepper *S, int k, const clc_mpi_body *b)
{
    return clc_mpi_region_dist(&S->cut, S->neigh[k], b->b.x) <= S->halo;
}

/* Sends each neighbour the bodies pick chooses for it (and, with warm,
 * their contacts' warm starts); what comes back into *got (malloc'd:
 * bodies, their senders in *gfrom, count *ngot); the bodies sent into
 * gone[] (NULL: not wanted). */
static clcone_status send_bodies(clcone_mpi_stepper *S, pick_fn *pick, int warm, char *gone, clc_mpi_body **got,
                                 int **gfrom, int *ngot, clcone_error *err)
{
    int nn = S->nneigh, nw = 0;
    char *mark = NULL;
    char **sb = calloc((size_t)nn + 1, sizeof *sb), *rb = NULL;
    size_t *sn = calloc(2 * (size_t)nn + 1, sizeof *sn), *rn = sn ? sn + nn : NULL, off = 0;
    clc_mpi_warm *wl = NULL;
    clcone_status st = CLCONE_OK;
    *got = NULL;
    *gfrom = NULL;
    *ngot = 0;
    if (!sb || !sn || !(mark = malloc((size_t)S->nglobal + 1))) {
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d neighbours' bodies", nn);
        goto out;
    }
    for (int k = 0; k < nn && !st; ++k) {
        int nb = 0;
        size_t at;
        if (!(sb[k] = malloc(2 * sizeof(int) + (size_t)(S->nown + 1) * sizeof(clc_mpi_body)))) {
            st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for bodies to rank %d", S->neigh[k]);
            break;
        }
        for (int i = 0; i < S->nown; ++i)
            if (pick(S, k, &S->own[i])) {
                memcpy(sb[k] + sizeof(int) + (size_t)nb++ * sizeof *S->own, &S->own[i], sizeof *S->own);
                if (gone) gone[i] = 1;
            }
        memcpy(sb[k], &nb, sizeof nb);
        at = sizeof(int) + (size_t)nb * sizeof *S->own;
        nw = 0;
        if (warm && nb > 0) {
            char *grown;
            /* the warm starts of the contacts of the bodies that leave for k */
            memset(mark, 0, (size_t)S->nglobal);
            for (int i = 0; i < S->nown; ++i) mark[S->own[i].gid] = (char)pick(S, k, &S->own[i]);
            free(wl);
            wl = NULL;
            if ((st = warm_entries(S, mark, &wl, &nw, err))) break;
            if (!(grown = realloc(sb[k], at + sizeof(int) + (size_t)nw * sizeof *wl))) {
                st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for warm starts to rank %d", S->neigh[k]);
                break;
            }
            sb[k] = grown;
            memcpy(sb[k] + at + sizeof(int), wl, (size_t)nw * sizeof *wl);
        }
        memcpy(sb[k] + at, &nw, sizeof nw);
        sn[k] = at + sizeof(int) + (size_t)nw * sizeof *wl;
    }
    if ((st = clcone_mpi_agree(S->comm, st, err))
        || (st = clc_mpi_swap(S->comm, nn, S->neigh, sb, sn, &rb, rn, &S->fig.bytes, err)))
        goto out;
    {
        size_t total = 0;
        for (int k = 0; k < nn; ++k) total += rn[k];
        *got = malloc((total / sizeof(clc_mpi_body) + 1) * sizeof **got);
        *gfrom = malloc((total / sizeof(clc_mpi_body) + 1) * sizeof **gfrom);
        if (!*got || !*gfrom) st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %zu bytes of bodies", total);
    }
    for (int k = 0; k < nn && !st; off += rn[k++]) {
        int nb, nwk;
        memcpy(&nb, rb + off, sizeof nb);
        for (int i = 0; i < nb; ++i) {
            memcpy(&(*got)[*ngot], rb + off + sizeof(int) + (size_t)i * sizeof **got, sizeof **got);
            (*gfrom)[(*ngot)++] = S->neigh[k];
        }
        memcpy(&nwk, rb + off + sizeof(int) + (size_t)nb * sizeof **got, sizeof nwk);
        if (nwk > 0) {
            clc_mpi_warm *wk = malloc((size_t)nwk * sizeof *wk);
            if (!wk) {
                st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d warm starts", nwk);
                break;
            }
            memcpy(wk, rb + off + 2 * sizeof(int) + (size_t)nb * sizeof **got, (size_t)nwk * sizeof *wk);
            st = warm_give(S, wk, nwk, err);
            free(wk);
        }
    }
    st = clcone_mpi_agree(S->comm, st, err);
out:
    for (int k = 0; sb && k < nn; ++k) free(sb[k]);
    free(sb);
    free(sn);
    free(rb);
    free(mark);
    free(wl);
    return st;
}

/* L from own[], ghosts g[0, ng) (from ranks gf) and the static bodies,
 * in id order, without contacts. */
static clcone_status rebuild(clcone_mpi_stepper *S, const clc_mpi_body *g, const int *gf, int ng,
                             clcone_error *err)
{
    int n = S->nown + ng + S->nfixed, k = 0;
    clc_mpi_body *all = malloc(((size_t)n + 1) * sizeof *all);
    int *src = malloc(((size_t)S->nglobal + 1) * sizeof *src);
    clcone_world *L = &S->L;
    if (all && src && n > L->s.nbodies) {
        clcone_body *b = realloc(L->s.bodies, (size_t)n * sizeof *b);
        clcone_shape *sh = b ? realloc(L->shapes, (size_t)n * sizeof *sh) : NULL;
        if (b) L->s.bodies = b;
        if (sh) L->shapes = sh;
        free(S->gid);
        free(S->from);
        free(S->cnt);
        S->gid = malloc((size_t)n * sizeof *S->gid);
        S->from = malloc((size_t)n * sizeof *S->from);
        S->cnt = malloc((size_t)n * sizeof *S->cnt);
        if (!sh || !S->gid || !S->from || !S->cnt) n = -1;
    }
    if (!all || !src || n < 0) {
        free(all);
        free(src);
        L->s.nbodies = 0;
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a rank's %d bodies", n);
    }
    for (int i = 0; i < S->nown; ++i) src[S->own[i].gid] = S->rank, all[k++] = S->own[i];
    for (int i = 0; i < ng; ++i) src[g[i].gid] = gf[i], all[k++] = g[i];
    for (int i = 0; i < S->nfixed; ++i) src[S->fixed[i].gid] = -1, all[k++] = S->fixed[i];
    qsort(all, (size_t)n, sizeof *all, by_gid);
    for (int i = 0; i < n; ++i) {
        L->s.bodies[i] = all[i].b;
        L->shapes[i] = all[i].sh;
        S->gid[i] = all[i].gid;
        S->from[i] = src[all[i].gid];
        S->cnt[i] = 0;
    }
    L->s.nbodies = n;
    L->s.ncontacts = 0;
    free(all);
    free(src);
    return CLCONE_OK;
}

/* Own bodies that left the region go to their neighbour; 1 in *far when
 * one went beyond the neighbours (on every rank). */
static clcone_status migrate(clcone_mpi_stepper *S, int *far, clcone_error *err)
{
    clc_mpi_body *got = NULL;
    int *gf = NULL, ng = 0, mine = 0, kept = 0;
    char *gone = calloc((size_t)S->nown + 1, 1);
    clcone_status st = gone ? CLCONE_OK : clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d bodies", S->nown);
    for (int i = 0; !st && i < S->nown; ++i) {
        int q = clc_mpi_region(&S->cut, S->own[i].b.x), k = 0;
        while (k < S->nneigh && S->neigh[k] != q) ++k;
        mine |= q != S->rank && k == S->nneigh;
    }
    MPI_Allreduce(&mine, far, 1, MPI_INT, MPI_MAX, S->comm);
    if ((st = clcone_mpi_agree(S->comm, st, err)) || *far
        || (st = send_bodies(S, leaving, 1, gone, &got, &gf, &ng, err)))
        goto out;
    for (int i = 0; i < S->nown; ++i)
        if (!gone[i]) S->own[kept++] = S->own[i];
    S->fig.moved += S->nown - kept;
    memcpy(S->own + kept, got, (size_t)ng * sizeof *got);
    S->nown = kept + ng;
out:
    free(gone);
    free(got);
    free(gf);
    return st;
}

/* The ghosts from the neighbours, L rebuilt, its contacts detected: those
 * that touch own bodies, with their keys, order, who reports each, each
 * body's contacts. */
static clcone_status ghosts_detect(clcone_mpi_stepper *S, double margin, clcone_error *err)
{
    clc_mpi_body *g = NULL;
    int *gf = NULL, ng = 0, m = 0, me = S->rank;
    clcone_world *L = &S->L;
    clcone_status st = send_bodies(S, near, 0, NULL, &g, &gf, &ng, err);
    if (!st) st = rebuild(S, g, gf, ng, err);
    S->fig.ghosts += ng;
    free(S->keys);
    free(S->order);
    S->keys = S->order = NULL;
    if (!st) st = clcone_world_detect_ids(L, margin, S->gid, S->nglobal, &S->keys, &S->order, err);
    free(S->counted);
    if (!st && !(S->counted = malloc(((size_t)L->s.ncontacts + 1) * sizeof *S->counted)))
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d contacts", L->s.ncontacts);
    for (int c = 0; !st && c < L->s.ncontacts; ++c) {
        const clcone_contact *k = &L->s.contacts[c];
        int a = k->a, b = k->b;
        if (S->from[a] != me && (b < 0 || S->from[b] != me)) continue;
        L->s.contacts[m] = *k;
        S->keys[m] = S->keys[c];
        S->order[m] = S->order[c];
        /* the rank of the contact's first moving body reports it */
        S->counted[m] = (L->shapes[a].mass != 0 ? S->from[a] : S->from[b]) == me;
        if (L->shapes[a].mass != 0) S->cnt[a]++;
        if (b >= 0 && L->shapes[b].mass != 0) S->cnt[b]++;
        ++m;
    }
    if (!st) L->s.ncontacts = m;
    free(g);
    free(gf);
    return clcone_mpi_agree(S->comm, st, err);
}

/* This step's figures over the ranks into S; *empty: some rank has no
 * contacts while others have. */
static void step_counts(clcone_mpi_stepper *S, int *empty)
{
    long long mine[3] = {0, 0, 0}, sum[3], most, least;
    double pen = 0;
    for (int c = 0; c < S->L.s.ncontacts; ++c) {
        if (!S->counted[c]) continue;
        mine[0]++;
        mine[1] += clcone_sim_warm_has(S->sim, S->keys[c]);
        pen = fmax(pen, -S->L.s.contacts[c].gap);
    }
    mine[2] = S->L.s.ncontacts;
    MPI_Allreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, S->comm);
    MPI_Allreduce(&mine[0], &most, 1, MPI_LONG_LONG, MPI_MAX, S->comm);
    MPI_Allreduce(&mine[2], &least, 1, MPI_LONG_LONG, MPI_MIN, S->comm);
    MPI_Allreduce(&pen, &S->maxpen, 1, MPI_DOUBLE, MPI_MAX, S->comm);
    S->total = sum[0];
    S->matched = sum[1];
    *empty = least == 0 && sum[0] > 0;
    /* the load of the next step: the contacts each rank reports */
    S->due = sum[0] > 0 && (double)most * S->size > (1.0 + S->threshold) * (double)sum[0];
}

/* A body whose position, orientation or velocity is not finite (a NaN
 * from the device) has no region: it would make the cut, the ghosts and
 * the migrations of the other bodies wrong. Refused on every rank. */
static clcone_status own_finite(const clcone_mpi_stepper *S, clcone_error *err)
{
    clcone_status st = CLCONE_OK;
    for (int i = 0; !st && i < S->nown; ++i) {
        const clc_mpi_body *b = &S->own[i];
        int ok = 1;
        for (int k = 0; k < 6; ++k) ok &= isfinite(b->b.v[k]) && (k >= 4 || isfinite(b->sh.quat[k]));
        for (int k = 0; k < 3; ++k) ok &= isfinite(b->b.x[k]);
        if (!ok)
            st = clc_mpi_fail(err, CLCONE_EDEVICE, "body %d: position, orientation or velocity not finite after "
                                 "the last step (over ranks every body needs a place)", b->gid);
    }
    return clcone_mpi_agree(S->comm, st, err);
}

clcone_status clc_mpi_step_detect(void *vs, clcone_world *w, double margin, unsigned long long **keys,
                                     clcone_error *err)
{
    clcone_mpi_stepper *S = vs;
    int far = 0, empty = 0, cut = S->due;
    clcone_status st;
    (void)w; /* S->L */
    if (!S->fresh) take_own(S, 1);
    S->fresh = 0;
    if ((st = own_finite(S, err)) || (!cut && (st = migrate(S, &far, err)))) return st;
    for (int tries = 0; tries < 2; ++tries) {
        if ((cut || far || empty) && (st = clc_mpi_step_repartition(S, err))) return st;
        S->fig.repartitions += cut || far || empty;
        if ((st = ghosts_detect(S, margin, err))) return st;
        step_counts(S, &empty);
        if (!empty) break;
        /* cut again by this step's contacts, where the bodies without any
         * weigh nothing: the last step's counts (or a floor of 1) could
         * give the rank that lost its contacts the same bodies again */
        take_own(S, 0);
        cut = 1;
    }
    if (empty)
        return clc_mpi_fail(err, CLCONE_ENOTSUP, "the world's %lld contacts leave a rank of %d none: use fewer "
                               "ranks", S->total, S->size);
    S->fig.steps++;
    *keys = malloc(((size_t)S->L.s.ncontacts + 1) * sizeof **keys);
    if (*keys) memcpy(*keys, S->keys, (size_t)S->L.s.ncontacts * sizeof **keys);
    st = clcone_mpi_agree(S->comm, *keys ? CLCONE_OK : clc_mpi_fail(err, CLCONE_ENOMEM, "contact keys"), err);
    if (st) {
        /* the stepper takes the keys only from a detection that succeeded */
        free(*keys);
        *keys = NULL;
    }
    return st;
}

void clc_mpi_step_free(clcone_mpi_stepper *S)
{
    clcone_sim_free(S->sim);
    clcone_plan_free(S->plan);
    clc_mpi_part_free(&S->part);
    clc_mpi_domain_close(&S->D);
    clc_mpi_cut_free(&S->cut);
    clcone_world_free(&S->L);
    free(S->own);
    free(S->fixed);
    free(S->gid);
    free(S->from);
    free(S->cnt);
    free(S->keys);
    free(S->order);
    free(S->counted);
    free(S->neigh);
    free(S);
}
