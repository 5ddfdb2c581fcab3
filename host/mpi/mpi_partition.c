/* One scene cut into ranks' parts (clc_mpi_part, mpi_parts.h): the
 * moving bodies split by recursive coordinate bisection of their centres,
 * balanced by contacts and deterministic (ties by body index); each rank
 * gets its bodies, copies (ghosts) of the other ranks' bodies that its
 * contacts touch, and every contact that touches one of its bodies, in
 * the scene's order, so that each of its bodies' velocity changes sum the
 * same contacts in the same order as one process. Built on root, sent to
 * each rank through host memory. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_parts.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void clc_mpi_part_free(clc_mpi_part *p)
{
    free(p->bodies);
    free(p->contacts);
    free(p->gid);
    free(p->counted);
    free(p->body_contacts);
    free(p->neigh);
    free(p->nrecv);
    free(p->send_ptr);
    free(p->send_idx);
    free(p->r0);
    memset(p, 0, sizeof *p);
}

/* Static: no velocity change at all (the library's own test). */
static int is_static(const clcone_body *b)
{
    for (int i = 0; i < 9; ++i)
        if (b->inv_inertia[i] != 0) return 0;
    return b->inv_mass == 0;
}

typedef struct keyed {
    double key;
    int id;
} keyed;

static int by_key(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* Bodies ids[0, n) to ranks [r0, r0 + k): cut along the axis of the
 * centres' largest extent where the weights (contacts) left of the cut
 * reach the left ranks' share; the cuts into c (NULL: not wanted). */
static void rcb(const clcone_scene *s, const int *w, int *ids, int n, int r0, int k, int *owner, keyed *tmp,
                clc_mpi_cut *c)
{
    double lo[3], hi[3];
    long long total = 0, acc = 0;
    int ax = 0, m = 0, kl = k / 2;
    if (k == 1 || n == 0) {
        for (int i = 0; i < n; ++i) owner[ids[i]] = r0;
        /* no bodies: the leftmost rank takes the whole region */
        for (int q = r0 + 1; c && q < r0 + k; ++q) c->axis[q] = 0, c->val[q] = INFINITY;
        return;
    }
    for (int d = 0; d < 3; ++d) lo[d] = hi[d] = s->bodies[ids[0]].x[d];
    for (int i = 1; i < n; ++i)
        for (int d = 0; d < 3; ++d) {
            double x = s->bodies[ids[i]].x[d];
            if (x < lo[d]) lo[d] = x;
            if (x > hi[d]) hi[d] = x;
        }
    for (int d = 1; d < 3; ++d)
        if (hi[d] - lo[d] > hi[ax] - lo[ax]) ax = d;
    for (int i = 0; i < n; ++i) tmp[i] = (keyed){s->bodies[ids[i]].x[ax], ids[i]};
    qsort(tmp, (size_t)n, sizeof *tmp, by_key);
    for (int i = 0; i < n; ++i) {
        ids[i] = tmp[i].id;
        total += w[ids[i]];
    }
    while (m < n && (acc + w[ids[m]]) * k <= total * kl) acc += w[ids[m++]];
    if (m == 0) m = 1;
    if (m == n && n > 1) m = n - 1;
    if (c) {
        c->axis[r0 + kl] = ax;
        c->val[r0 + kl] = m < n ? 0.5 * (tmp[m - 1].key + tmp[m].key) : INFINITY;
    }
    rcb(s, w, ids, m, r0, kl, owner, tmp, c);
    rcb(s, w, ids + m, n - m, r0 + kl, k - kl, owner, tmp, c);
}

/* Rank q's region box (lo xyz, hi xyz) within the ranks [r0, r0 + k). */
static void cut_boxes(clc_mpi_cut *c, int r0, int k, const double *lo, const double *hi)
{
    double l[3], h[3];
    int s = r0 + k / 2;
    if (k == 1) {
        memcpy(c->box + 6 * (size_t)r0, lo, 3 * sizeof *lo);
        memcpy(c->box + 6 * (size_t)r0 + 3, hi, 3 * sizeof *hi);
        return;
    }
    memcpy(l, lo, sizeof l);
    memcpy(h, hi, sizeof h);
    h[c->axis[s]] = fmin(hi[c->axis[s]], c->val[s]);
    cut_boxes(c, r0, k / 2, l, h);
    h[c->axis[s]] = hi[c->axis[s]];
    l[c->axis[s]] = fmax(lo[c->axis[s]], c->val[s]);
    cut_boxes(c, s, k - k / 2, l, h);
}

void clc_mpi_cut_free(clc_mpi_cut *c)
{
    free(c->axis);
    free(c->val);
    free(c->box);
    c->axis = NULL;
    c->val = c->box = NULL;
}

clcone_status clc_mpi_rcb(const clcone_scene *s, const int *w, int *owner, clc_mpi_cut *c, clcone_error *err)
{
    int n = s->nbodies, nm = 0, *ids = malloc(((size_t)n + 1) * sizeof *ids), K = c->nranks;
    keyed *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
    const double lo[3] = {-INFINITY, -INFINITY, -INFINITY}, hi[3] = {INFINITY, INFINITY, INFINITY};
    clcone_status st = CLCONE_OK;
    clc_mpi_cut_free(c);
    c->axis = calloc((size_t)K + 1, sizeof *c->axis);
    c->val = calloc((size_t)K + 1, sizeof *c->val);
    c->box = calloc(6 * (size_t)K, sizeof *c->box);
    if (!ids || !tmp || !c->axis || !c->val || !c->box) {
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory cutting %d bodies over %d ranks", n, K);
        goto out;
    }
    for (int b = 0; b < n; ++b) {
        owner[b] = -1;
        if (!is_static(&s->bodies[b])) ids[nm++] = b;
    }
    rcb(s, w, ids, nm, 0, K, owner, tmp, c);
    cut_boxes(c, 0, K, lo, hi);
    /* the regions decide, also for bodies on a cut */
    for (int b = 0; b < n; ++b)
        if (owner[b] >= 0) owner[b] = clc_mpi_region(c, s->bodies[b].x);
out:
    free(ids);
    free(tmp);
    return st;
}

/* A ghost: body `body` (of rank owner[body]) copied on rank `rank`. */
typedef struct ghost_pair {
    int rank, owner, body;
} ghost_pair;

static int by_pair(const void *pa, const void *pb)
{
    const ghost_pair *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->owner != b->owner) return a->owner < b->owner ? -1 : 1;
    return (a->body > b->body) - (a->body < b->body);
}

/* What building the parts needs of the whole scene. */
typedef struct cut {
    const clcone_scene *s;
    int *owner;      /* per body: its rank, -1 static */
    int *cnt;        /* per body: its contacts (moving bodies) */
    int *boundary;   /* per body: some other rank copies it */
    int *loc;        /* per body: its index in the part being built */
    ghost_pair *pairs;
    int npairs;
} cut;

static int contact_on(const cut *C, int c, int q)
{
    const clcone_contact *k = &C->s->contacts[c];
    return C->owner[k->a] == q || (k->b >= 0 && C->owner[k->b] == q);
}

/* Rank q's bodies in part order into P (nb, own, send, ghosts, bodies,
 * body_contacts) and C->loc; its contacts (nc) counted before. */
static clcone_status part_bodies(cut *C, int q, const int *cl, clc_mpi_part *P, clcone_error *err)
{
    const clcone_scene *s = C->s;
    int n = s->nbodies, nb = 0;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!order) return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory partitioning %d bodies", n);
    for (int pass = 0; pass < 2; ++pass) /* interior, then boundary */
        for (int b = 0; b < n; ++b)
            if (C->owner[b] == q && C->boundary[b] == pass) order[nb++] = b;
    P->own = nb;
    P->send = 0;
    for (int b = 0; b < n; ++b)
        if (C->owner[b] == q && !C->boundary[b]) P->send++;
    for (int i = 0; i < C->npairs; ++i)
        if (C->pairs[i].rank == q) order[nb++] = C->pairs[i].body;
    P->ghosts = nb - P->own;
    for (int b = 0; b < n; ++b) C->loc[b] = -1;
    for (int i = 0; i < nb; ++i) C->loc[order[i]] = i;
    for (int j = 0; j < P->nc; ++j) {
        const clcone_contact *k = &s->contacts[cl[j]];
        if (k->b >= 0 && C->owner[k->b] < 0 && C->loc[k->b] < 0) C->loc[k->b] = -2; /* a static body it touches */
    }
    for (int b = 0; b < n; ++b)
        if (C->loc[b] == -2) C->loc[order[nb] = b] = nb, ++nb;
    P->nb = nb;
    P->bodies = malloc(((size_t)nb + 1) * sizeof *P->bodies);
    P->body_contacts = malloc(((size_t)nb + 1) * sizeof *P->body_contacts);
    if (!P->bodies || !P->body_contacts) {
        free(order);
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for rank %d's %d bodies", q, nb);
    }
    for (int i = 0; i < nb; ++i) {
        P->bodies[i] = s->bodies[order[i]];
        P->body_contacts[i] = C->cnt[order[i]];
    }
    free(order);
    return CLCONE_OK;
}

/* Rank q's neighbours (the owners of its ghosts, which are also the
 * ranks that copy its bodies), what each sends it and what it sends each. */
static clcone_status part_neighbours(const cut *C, int q, int nranks, clc_mpi_part *P, clcone_error *err)
{
    int *from = calloc((size_t)nranks, sizeof *from), *to = calloc((size_t)nranks, sizeof *to), k = 0, ns = 0;
    clcone_status st = CLCONE_OK;
    if (!from || !to) {
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for rank %d's neighbours", q);
        goto out;
    }
    for (int i = 0; i < C->npairs; ++i) {
        if (C->pairs[i].rank == q) from[C->pairs[i].owner]++;
        if (C->pairs[i].owner == q) to[C->pairs[i].rank]++, ++ns;
    }
    for (int p = 0; p < nranks; ++p) P->nneigh += from[p] > 0;
    P->neigh = malloc(((size_t)P->nneigh + 1) * sizeof *P->neigh);
    P->nrecv = malloc(((size_t)P->nneigh + 1) * sizeof *P->nrecv);
    P->send_ptr = malloc(((size_t)P->nneigh + 2) * sizeof *P->send_ptr);
    P->send_idx = malloc(((size_t)ns + 1) * sizeof *P->send_idx);
    if (!P->neigh || !P->nrecv || !P->send_ptr || !P->send_idx) {
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for rank %d's neighbours", q);
        goto out;
    }
    P->send_ptr[0] = 0;
    for (int p = 0; p < nranks; ++p) {
        if (!from[p]) continue;
        P->neigh[k] = p;
        P->nrecv[k] = from[p];
        P->send_ptr[k + 1] = P->send_ptr[k] + to[p];
        ++k;
    }
    /* pairs are sorted by (rank, owner, body): each neighbour's list in body order */
    for (int i = 0, j = 0; i < C->npairs; ++i)
        if (C->pairs[i].owner == q) P->send_idx[j++] = C->loc[C->pairs[i].body];
out:
    free(from);
    free(to);
    return st;
}

/* Rank q's part; cl: its contacts' indices in the scene. */
static clcone_status part_build(cut *C, int q, int nranks, const int *cl, const double *r0, clc_mpi_part *P,
                                clcone_error *err)
{
    clcone_status st;
    if ((st = part_bodies(C, q, cl, P, err)) || (st = part_neighbours(C, q, nranks, P, err))) return st;
    P->contacts = malloc(((size_t)P->nc + 1) * sizeof *P->contacts);
    P->gid = malloc(((size_t)P->nc + 1) * sizeof *P->gid);
    P->counted = malloc(((size_t)P->nc + 1) * sizeof *P->counted);
    if (r0) P->r0 = malloc((3 * (size_t)P->nc + 1) * sizeof *P->r0);
    if (!P->contacts || !P->gid || !P->counted || (r0 && !P->r0))
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for rank %d's %d contacts", q, P->nc);
    for (int j = 0; j < P->nc; ++j) {
        const clcone_contact *k = &C->s->contacts[cl[j]];
        P->contacts[j] = *k;
        P->contacts[j].a = C->loc[k->a];
        P->contacts[j].b = k->b >= 0 ? C->loc[k->b] : -1;
        P->gid[j] = cl[j];
        /* the rank of the contact's first moving body counts it */
        P->counted[j] = (C->owner[k->a] >= 0 ? C->owner[k->a] : C->owner[k->b]) == q;
        if (r0) memcpy(P->r0 + 3 * (size_t)j, r0 + 3 * (size_t)cl[j], 3 * sizeof *r0);
    }
    return CLCONE_OK;
}

/* The owners (by rcb) and contact counts of C, and the ghost pairs. */
static clcone_status cut_make(cut *C, int nranks, clcone_error *err)
{
    const clcone_scene *s = C->s;
    int n = s->nbodies, m = s->ncontacts, nm = 0, *ids = malloc(((size_t)n + 1) * sizeof *ids);
    keyed *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
    int *w = malloc(((size_t)n + 1) * sizeof *w);
    clcone_status st = CLCONE_OK;
    C->pairs = malloc((2 * (size_t)m + 1) * sizeof *C->pairs);
    if (!ids || !tmp || !w || !C->pairs) {
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory partitioning %d bodies", n);
        goto out;
    }
    for (int c = 0; c < m; ++c) {
        const clcone_contact *k = &s->contacts[c];
        if (!is_static(&s->bodies[k->a])) C->cnt[k->a]++;
        if (k->b >= 0 && !is_static(&s->bodies[k->b])) C->cnt[k->b]++;
    }
    for (int b = 0; b < n; ++b) {
        C->owner[b] = -1;
        w[b] = C->cnt[b] > 0 ? C->cnt[b] : 1;
        if (!is_static(&s->bodies[b])) ids[nm++] = b;
    }
    rcb(s, w, ids, nm, 0, nranks, C->owner, tmp, NULL);
    for (int c = 0; c < m; ++c) {
        const clcone_contact *k = &s->contacts[c];
        int oa = C->owner[k->a], ob = k->b >= 0 ? C->owner[k->b] : -1;
        if (oa < 0 || ob < 0 || oa == ob) continue;
        C->pairs[C->npairs++] = (ghost_pair){ob, oa, k->a};
        C->pairs[C->npairs++] = (ghost_pair){oa, ob, k->b};
    }
    qsort(C->pairs, (size_t)C->npairs, sizeof *C->pairs, by_pair);
    {
        int u = 0;
        for (int i = 0; i < C->npairs; ++i)
            if (u == 0 || by_pair(&C->pairs[u - 1], &C->pairs[i]) != 0) C->pairs[u++] = C->pairs[i];
        C->npairs = u;
    }
    for (int i = 0; i < C->npairs; ++i) C->boundary[C->pairs[i].body] = 1;
out:
    free(ids);
    free(tmp);
    free(w);
    return st;
}

clcone_status clc_mpi_partition(const clcone_scene *s, int nranks, const double *r0, clc_mpi_part *parts,
                                   int *owner, clcone_error *err)
{
    int n = s->nbodies, m = s->ncontacts, *cl = malloc(((size_t)m + 1) * sizeof *cl);
    cut C = {s, malloc(((size_t)n + 1) * sizeof(int)), calloc((size_t)n + 1, sizeof(int)),
             calloc((size_t)n + 1, sizeof(int)), malloc(((size_t)n + 1) * sizeof(int)), NULL, 0};
    clcone_status st = CLCONE_OK;
    if (!cl || !C.owner || !C.cnt || !C.boundary || !C.loc)
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory partitioning %d bodies", n);
    if (!st) st = cut_make(&C, nranks, err);
    if (!st && owner) memcpy(owner, C.owner, (size_t)n * sizeof *owner);
    for (int q = 0; !st && q < nranks; ++q) {
        parts[q].nc = 0;
        for (int c = 0; c < m; ++c)
            if (contact_on(&C, c, q)) cl[parts[q].nc++] = c;
        if (parts[q].nc == 0)
            st = clc_mpi_fail(err, CLCONE_ENOTSUP, "the scene's %d contacts leave rank %d of %d none: use fewer "
                                 "ranks", m, q, nranks);
        else st = part_build(&C, q, nranks, cl, r0, &parts[q], err);
        if (!st && (size_t)parts[q].nb * sizeof(clcone_body) > INT_MAX)
            st = clc_mpi_fail(err, CLCONE_ENOTSUP, "rank %d's %d bodies are more than one MPI message carries", q,
                                 parts[q].nb);
    }
    free(cl);
    free(C.owner);
    free(C.cnt);
    free(C.boundary);
    free(C.loc);
    free(C.pairs);
    return st;
}

/* Sizes of a part as its receiver makes room for it. */
enum { H_NB, H_NC, H_OWN, H_SEND, H_GHOSTS, H_NNEIGH, H_NSEND, H_COUNT };

static void part_head(const clc_mpi_part *P, int *h)
{
    int v[H_COUNT] = {P->nb, P->nc, P->own, P->send, P->ghosts, P->nneigh, P->send_ptr[P->nneigh]};
    memcpy(h, v, sizeof v);
}

static clcone_status part_alloc(clc_mpi_part *P, const int *h, int warm, clcone_error *err)
{
    size_t nb = (size_t)h[H_NB], nc = (size_t)h[H_NC], nn = (size_t)h[H_NNEIGH];
    P->nb = h[H_NB];
    P->nc = h[H_NC];
    P->own = h[H_OWN];
    P->send = h[H_SEND];
    P->ghosts = h[H_GHOSTS];
    P->nneigh = h[H_NNEIGH];
    P->bodies = malloc((nb + 1) * sizeof *P->bodies);
    P->contacts = malloc((nc + 1) * sizeof *P->contacts);
    P->gid = malloc((nc + 1) * sizeof *P->gid);
    P->counted = malloc((nc + 1) * sizeof *P->counted);
    P->body_contacts = malloc((nb + 1) * sizeof *P->body_contacts);
    P->neigh = malloc((nn + 1) * sizeof *P->neigh);
    P->nrecv = malloc((nn + 1) * sizeof *P->nrecv);
    P->send_ptr = malloc((nn + 2) * sizeof *P->send_ptr);
    P->send_idx = malloc(((size_t)h[H_NSEND] + 1) * sizeof *P->send_idx);
    if (warm) P->r0 = malloc((3 * nc + 1) * sizeof *P->r0);
    if (!P->bodies || !P->contacts || !P->gid || !P->counted || !P->body_contacts || !P->neigh || !P->nrecv
        || !P->send_ptr || !P->send_idx || (warm && !P->r0))
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a part of %d bodies and %d contacts", P->nb,
                               P->nc);
    return CLCONE_OK;
}

/* The part's arrays (nsend bodies sent to neighbours), root to peer
 * (send) or received from root. */
static void part_data(clc_mpi_part *P, int nsend, int send, int peer, MPI_Comm comm)
{
    struct {
        void *p;
        int n;
        MPI_Datatype t;
    } a[] = {{P->bodies, P->nb * (int)sizeof *P->bodies, MPI_BYTE},
             {P->contacts, P->nc * (int)sizeof *P->contacts, MPI_BYTE},
             {P->gid, P->nc, MPI_INT},
             {P->counted, P->nc, MPI_INT},
             {P->body_contacts, P->nb, MPI_INT},
             {P->neigh, P->nneigh, MPI_INT},
             {P->nrecv, P->nneigh, MPI_INT},
             {P->send_ptr, P->nneigh + 1, MPI_INT},
             {P->send_idx, nsend, MPI_INT},
             {P->r0, P->r0 ? 3 * P->nc : 0, MPI_DOUBLE}};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; ++i) {
        if (send) MPI_Send(a[i].p, a[i].n, a[i].t, peer, TAG_DATA, comm);
        else MPI_Recv(a[i].p, a[i].n, a[i].t, peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
    }
}

clcone_status clc_mpi_part_transfer(MPI_Comm comm, int root, clc_mpi_part *parts, clc_mpi_part *mine,
                                       int warm, clcone_error *err)
{
    int rank, size, h[H_COUNT];
    clcone_status st = CLCONE_OK;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == root) {
        for (int q = 0; q < size; ++q)
            if (q != root) {
                part_head(&parts[q], h);
                MPI_Send(h, H_COUNT, MPI_INT, q, TAG_HEAD, comm);
            }
        *mine = parts[root];
        memset(&parts[root], 0, sizeof parts[root]);
    } else {
        MPI_Recv(h, H_COUNT, MPI_INT, root, TAG_HEAD, comm, MPI_STATUS_IGNORE);
        st = part_alloc(mine, h, warm, err);
    }
    if ((st = clcone_mpi_agree(comm, st, err))) return st;
    if (rank == root) {
        for (int q = 0; q < size; ++q)
            if (q != root) part_data(&parts[q], parts[q].send_ptr[parts[q].nneigh], 1, q, comm);
    } else {
        part_data(mine, h[H_NSEND], 0, root, comm);
    }
    return CLCONE_OK;
}
