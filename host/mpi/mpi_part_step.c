/* Each step's solve over the ranks (the solve hook of a rank's stepper,
 * mpi_step.h): the rank's contacts (those of its own bodies, in the
 * whole world's order) become its part of the whole solve
 * (clc_mpi_part: own bodies, the ghosts its contacts touch, by rank
 * and id; the neighbours those ghosts' owners), the ghosts' projected
 * positions, free velocities and contact counts come from their owners,
 * and the part is solved on the rank's plan, made at the first step and
 * given each step's part (clcone_plan_set_scene) after that. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_step.h"

#include <stdlib.h>
#include <string.h>

/* Roles of L's bodies in the part. */
enum { R_NONE, R_INSIDE, R_EDGE, R_GHOST, R_STATIC };

typedef struct ghost_state {
    clcone_body b;
    int cnt, pad;
} ghost_state;

static int is_ghost(const clcone_mpi_stepper *S, int i)
{
    return S->from[i] >= 0 && S->from[i] != S->rank;
}

/* roles[] and the part's body order into at[] (its L index per place)
 * and loc[] (its place per L index, -1 none); P's counts. */
static void part_order(const clcone_mpi_stepper *S, const clcone_scene *sc, int *role, int *at, int *loc,
                       clc_mpi_part *P)
{
    int nl = sc->nbodies, n = 0;
    for (int i = 0; i < nl; ++i) role[i] = S->from[i] == S->rank ? R_INSIDE : R_NONE, loc[i] = -1;
    for (int c = 0; c < sc->ncontacts; ++c) {
        int e[2] = {sc->contacts[c].a, sc->contacts[c].b};
        for (int s = 0; s < 2; ++s) {
            int i = e[s], j = e[1 - s];
            if (i < 0) continue;
            if (is_ghost(S, i)) role[i] = R_GHOST;
            else if (S->from[i] < 0) role[i] = R_STATIC;
            else if (j >= 0 && is_ghost(S, j)) role[i] = R_EDGE;
        }
    }
    for (int r = R_INSIDE; r <= R_EDGE; ++r)
        for (int i = 0; i < nl; ++i)
            if (role[i] == r) at[n] = i, loc[i] = n++;
    P->send = 0;
    for (int i = 0; i < nl; ++i) P->send += role[i] == R_INSIDE;
    P->own = n;
    for (int k = 0; k < S->nneigh; ++k)
        for (int i = 0; i < nl; ++i)
            if (role[i] == R_GHOST && S->from[i] == S->neigh[k]) at[n] = i, loc[i] = n++;
    P->ghosts = n - P->own;
    for (int i = 0; i < nl; ++i)
        if (role[i] == R_STATIC) at[n] = i, loc[i] = n++;
    P->nb = n;
}

/* P's neighbours (the owners of its ghosts, which hold copies of its edge
 * bodies), what each sends it and what it sends each. */
static clcone_status part_links(const clcone_mpi_stepper *S, const clcone_scene *sc, const int *role, const int *loc,
                                clc_mpi_part *P, clcone_error *err)
{
    int nl = sc->nbodies, nn = 0, ns = 0;
    char *to = malloc((size_t)nl + 1);
    P->neigh = malloc(((size_t)S->nneigh + 1) * sizeof *P->neigh);
    P->nrecv = malloc(((size_t)S->nneigh + 1) * sizeof *P->nrecv);
    P->send_ptr = malloc(((size_t)S->nneigh + 2) * sizeof *P->send_ptr);
    P->send_idx = malloc(((size_t)S->nneigh * (size_t)(P->own - P->send) + 1) * sizeof *P->send_idx);
    if (!to || !P->neigh || !P->nrecv || !P->send_ptr || !P->send_idx) {
        free(to);
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a part's %d neighbours", S->nneigh);
    }
    P->send_ptr[0] = 0;
    for (int k = 0; k < S->nneigh; ++k) {
        int q = S->neigh[k], got = 0;
        for (int i = 0; i < nl; ++i) got += role[i] == R_GHOST && S->from[i] == q;
        if (!got) continue;
        memset(to, 0, (size_t)nl);
        for (int c = 0; c < sc->ncontacts; ++c) {
            int a = sc->contacts[c].a, b = sc->contacts[c].b;
            if (b >= 0 && S->from[b] == q && role[a] == R_EDGE) to[a] = 1;
            if (b >= 0 && S->from[a] == q && role[b] == R_EDGE) to[b] = 1;
        }
        for (int i = 0; i < nl; ++i)
            if (to[i]) P->send_idx[ns++] = loc[i];
        P->neigh[nn] = q;
        P->nrecv[nn] = got;
        P->send_ptr[++nn] = ns;
    }
    P->nneigh = nn;
    free(to);
    return CLCONE_OK;
}

/* The ghosts' state at the solve from their owners into P's bodies and
 * body_contacts. */
static clcone_status part_ghosts(clcone_mpi_stepper *S, const clcone_scene *sc, const int *at, clc_mpi_part *P,
                                 clcone_error *err)
{
    int nn = P->nneigh;
    char **sb = calloc((size_t)nn + 1, sizeof *sb), *rb = NULL;
    size_t *sn = calloc(2 * (size_t)nn + 1, sizeof *sn);
    clcone_status st = CLCONE_OK;
    int short_ = !sb || !sn;
    for (int k = 0; !short_ && k < nn; ++k) {
        int j0 = P->send_ptr[k], j1 = P->send_ptr[k + 1];
        ghost_state *g = malloc(((size_t)(j1 - j0) + 1) * sizeof *g);
        if (!(sb[k] = (char *)g)) {
            short_ = 1;
            break;
        }
        for (int j = j0; j < j1; ++j) {
            int i = at[P->send_idx[j]];
            g[j - j0] = (ghost_state){sc->bodies[i], S->cnt[i], 0};
        }
        sn[k] = (size_t)(j1 - j0) * sizeof *g;
    }
    if (short_)
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for the ghosts of %d neighbours", nn);
    if (!(st = clcone_mpi_agree(S->comm, st, err))
        && !(st = clc_mpi_swap(S->comm, nn, P->neigh, sb, sn, &rb, sn + nn, &S->fig.bytes, err)))
        for (int i = 0; i < P->ghosts; ++i) {
            ghost_state g;
            memcpy(&g, rb + (size_t)i * sizeof g, sizeof g);
            P->bodies[P->own + i] = g.b;
            P->body_contacts[P->own + i] = g.cnt;
        }
    for (int k = 0; sb && k < nn; ++k) free(sb[k]);
    free(sb);
    free(sn);
    free(rb);
    return st;
}

/* This step's part of the solve from sc (L's contact scene). */
static clcone_status part_make(clcone_mpi_stepper *S, const clcone_scene *sc, clcone_error *err)
{
    clc_mpi_part *P = &S->part;
    int nl = sc->nbodies, nc = sc->ncontacts;
    int *role = malloc(((size_t)nl + 1) * sizeof *role), *at = malloc(((size_t)nl + 1) * sizeof *at),
        *loc = malloc(((size_t)nl + 1) * sizeof *loc);
    clcone_status st = CLCONE_OK;
    clc_mpi_part_free(P);
    if (role && at && loc) {
        part_order(S, sc, role, at, loc, P);
        P->nc = nc;
        P->bodies = malloc(((size_t)P->nb + 1) * sizeof *P->bodies);
        P->body_contacts = malloc(((size_t)P->nb + 1) * sizeof *P->body_contacts);
        P->contacts = malloc(((size_t)nc + 1) * sizeof *P->contacts);
        P->counted = malloc(((size_t)nc + 1) * sizeof *P->counted);
    }
    if (!role || !at || !loc || !P->bodies || !P->body_contacts || !P->contacts || !P->counted)
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a part of %d bodies", nl);
    if (!st) st = part_links(S, sc, role, loc, P, err);
    for (int i = 0; !st && i < P->nb; ++i) {
        P->bodies[i] = sc->bodies[at[i]];
        P->body_contacts[i] = S->cnt[at[i]];
    }
    for (int c = 0; !st && c < nc; ++c) {
        P->contacts[c] = sc->contacts[c];
        P->contacts[c].a = loc[sc->contacts[c].a];
        P->contacts[c].b = sc->contacts[c].b >= 0 ? loc[sc->contacts[c].b] : -1;
        P->counted[c] = S->counted[c];
    }
    st = clcone_mpi_agree(S->comm, st, err);
    if (!st) st = part_ghosts(S, sc, at, P, err);
    free(role);
    free(at);
    free(loc);
    return st;
}

clcone_status clc_mpi_step_solve(void *vs, const clcone_scene *sc, const clcone_options *o, double *r,
                                    clcone_result *res, clcone_error *err)
{
    clcone_mpi_stepper *S = vs;
    clcone_options opt = *o;
    clcone_scene local;
    clcone_status st;
    double ms;
    int warm;
    memset(res, 0, sizeof *res);
    if (S->plan && o->solver != S->solver)
        return clc_mpi_fail(err, CLCONE_ENOTSUP, "a scene in parts runs jacobi or apgd: the fallback %s is "
                               "refused over ranks", clcone_solver_name(o->solver));
    /* whether any rank warm-starts decides for all, as for one process */
    opt.warm_start = S->matched > 0;
    if ((st = part_make(S, sc, err))
        || (st = clcone_mpi_agree(S->comm, clc_mpi_domain_open(&S->D, S->comm, &S->part, &S->dp, err), err)))
        return st;
    local = (clcone_scene){S->part.nb, S->part.nc, S->part.bodies, S->part.contacts};
    if (!(warm = !S->plan)) {
        st = clcone_mpi_agree(S->comm, clcone_plan_set_scene(S->plan, &local, err), err);
    } else {
        st = clcone_mpi_agree(S->comm, clcone_plan_create_part(S->ctx, &local, &opt, &S->dp, &S->plan, err), err);
        S->solver = o->solver;
    }
    if (st) return st;
    clcone_plan_set_start(S->plan, opt.warm_start, NULL);
    S->D.sent = 0;
    /* from here a failed rank leaves the others in an exchange (ranks.h):
     * a new plan's warm-up runs the exchanges too, so its failure cannot
     * be agreed */
    if (!warm || !(st = clcone_plan_warm_up(S->plan, err))) st = clcone_plan_solve(S->plan, r, res, err);
    S->stranded = st != CLCONE_OK;
    S->fig.halo_bytes += S->D.sent;
    S->fig.bytes += S->D.sent;
    if (st) return st;
    ms = res->time_ms;
    MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, S->comm);
    res->time_ms = res->items[0].time_ms = ms;
    return CLCONE_OK;
}
