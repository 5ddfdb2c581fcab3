/* Time stepping of one world over MPI ranks (clcone_mpi_sim_*, ranks.h):
 * every rank steps its own bodies and its ghosts with a stepper of its
 * own (mpi_step.h) whose detection, solve and energies are the ranks'
 * together; root's stepper of the whole world hands each step to it and
 * has the bodies, contacts and reactions gathered when it writes them.
 * Root's commands to the serving ranks go by broadcast. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CMD_END, CMD_ATTACH, CMD_STEP, CMD_SYNC, CMD_FIGURES };

static void command(clcone_mpi_stepper *S, int cmd)
{
    MPI_Bcast(&cmd, 1, MPI_INT, S->root, S->comm);
}

typedef struct ke_terms {
    int gid, pad;
    double t[4];
} ke_terms;

/* The kinetic energy as one process sums it: each rank's own bodies'
 * terms to root, added there in id order (root's; 0 elsewhere). */
static double step_energy(void *vs, const clcone_world *w, const double *v)
{
    clcone_mpi_stepper *S = vs;
    ke_terms *mine = malloc(((size_t)w->s.nbodies + 1) * sizeof *mine), *all = NULL;
    int n = 0, total = 0, *at = NULL;
    double e = 0;
    clcone_error err;
    for (int i = 0; mine && i < w->s.nbodies; ++i)
        if (S->from[i] == S->rank && w->shapes[i].mass != 0) {
            mine[n].gid = S->gid[i];
            clcone_world_ke_terms(w, i, v ? v + 6 * (size_t)i : w->s.bodies[i].v, mine[n++].t);
        }
    if (clc_mpi_step_gather(S, mine, mine ? n : -1, sizeof *mine, 1, (char **)&all, &total, &err) || !mine) {
        e = NAN;
    } else if (S->rank == S->root && (at = malloc(((size_t)S->nglobal + 1) * sizeof *at))) {
        for (int g = 0; g < S->nglobal; ++g) at[g] = -1;
        for (int i = 0; i < total; ++i) at[all[i].gid] = i;
        for (int g = 0; g < S->nglobal; ++g)
            for (int k = 0; at[g] >= 0 && k < 4; ++k) e += all[at[g]].t[k];
    } else if (S->rank == S->root) {
        e = NAN;
    }
    free(mine);
    free(all);
    free(at);
    return e;
}

/* Root's step: the ranks' step, its figures the whole world's. */
static clcone_status top_step(void *vs, clcone_step_info *info, clcone_error *err)
{
    clcone_mpi_stepper *S = vs;
    clcone_status st;
    command(S, CMD_STEP);
    if ((st = clcone_sim_step(S->sim, info, err))) return st;
    info->contacts = (int)S->total;
    info->max_penetration = S->maxpen;
    info->warm_matched = (int)S->matched;
    return CLCONE_OK;
}

/* The world's settings, static bodies and options from root; on root
 * also its moving bodies as own[], weighed by their contacts. */
static clcone_status setup_world(clcone_mpi_stepper *S, clcone_sim_options *so, double rebalance, clcone_error *err)
{
    clcone_world *W = S->top ? clcone_sim_world(S->top) : NULL;
    int head[3] = {0, 0, 0}, *cnt = NULL;
    double d[7] = {0, 0, 0, 0, 0, 0, 0}, hmax = 0;
    clcone_status st = CLCONE_OK;
    if (W) {
        *so = *clcone_sim_get_options(S->top);
        head[0] = W->s.nbodies;
        head[1] = W->nplanes;
        for (int i = 0; i < W->s.nbodies; ++i) {
            head[2] += W->shapes[i].mass == 0;
            if (W->shapes[i].mass != 0) hmax = fmax(hmax, clcone_shape_bound(&W->shapes[i]));
        }
        memcpy(d, W->gravity, sizeof W->gravity);
        d[3] = W->dt;
        d[4] = W->mu;
        /* every contact lies within twice the largest bound and the margin */
        d[5] = (2 * hmax + so->margin) * (1 + 1e-6) + 1e-12;
        d[6] = rebalance < 0 ? 0.25 : rebalance;
    }
    MPI_Bcast(head, 3, MPI_INT, S->root, S->comm);
    MPI_Bcast(d, 7, MPI_DOUBLE, S->root, S->comm);
    MPI_Bcast(so, (int)sizeof *so, MPI_BYTE, S->root, S->comm);
    clc_mpi_options(S->comm, S->root, &so->solve, &so->solve);
    S->nglobal = head[0];
    S->nfixed = head[2];
    S->halo = d[5];
    S->threshold = d[6];
    S->L.nplanes = head[1];
    memcpy(S->L.gravity, d, 3 * sizeof *d);
    S->L.dt = d[3];
    S->L.mu = d[4];
    S->L.planes = calloc((size_t)head[1] + 1, sizeof *S->L.planes);
    S->own = malloc(((size_t)S->nglobal + 1) * sizeof *S->own);
    S->fixed = malloc(((size_t)S->nfixed + 1) * sizeof *S->fixed);
    cnt = W ? calloc((size_t)S->nglobal + 1, sizeof *cnt) : NULL;
    if (!S->L.planes || !S->own || !S->fixed || (W && !cnt))
        st = clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a world of %d bodies", S->nglobal);
    if ((st = clcone_mpi_agree(S->comm, st, err))) goto out;
    if (W) {
        for (int c = 0; c < W->s.ncontacts; ++c) {
            cnt[W->s.contacts[c].a]++;
            if (W->s.contacts[c].b >= 0) cnt[W->s.contacts[c].b]++;
        }
        memcpy(S->L.planes, W->planes, (size_t)head[1] * sizeof *S->L.planes);
        for (int i = 0, f = 0; i < W->s.nbodies; ++i) {
            clc_mpi_body b = {i, cnt[i] > 0 ? cnt[i] : 1, W->s.bodies[i], W->shapes[i]};
            if (W->shapes[i].mass == 0) S->fixed[f++] = b;
            else S->own[S->nown++] = b;
        }
    }
    MPI_Bcast(S->L.planes, head[1] * (int)sizeof *S->L.planes, MPI_BYTE, S->root, S->comm);
    MPI_Bcast(S->fixed, S->nfixed * (int)sizeof *S->fixed, MPI_BYTE, S->root, S->comm);
out:
    free(cnt);
    return st;
}

/* Every rank: its stepper of the run; top root's stepper of the whole
 * world (NULL elsewhere). */
static clcone_status setup(MPI_Comm comm, int root, clcone_context *ctx, clcone_sim *top, double rebalance,
                           clcone_mpi_stepper **out, clcone_error *err)
{
    clcone_mpi_stepper *S = calloc(1, sizeof *S);
    clcone_sim_options so;
    clcone_status st = S ? CLCONE_OK : clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for a stepper");
    *out = NULL;
    if ((st = clcone_mpi_agree(comm, st, err))) return st;
    S->comm = comm;
    S->root = root;
    S->ctx = ctx;
    S->top = top;
    MPI_Comm_rank(comm, &S->rank);
    MPI_Comm_size(comm, &S->size);
    memset(&so, 0, sizeof so);
    if (!(st = setup_world(S, &so, rebalance, err)))
        st = clcone_mpi_agree(comm, clcone_sim_create(&S->L, ctx, &so, &S->sim, err), err);
    if (!st) {
        clcone_sim_hooks h = {S, clc_mpi_step_solve, clc_mpi_step_detect, step_energy, NULL};
        clcone_sim_set_hooks(S->sim, &h);
        st = clc_mpi_step_repartition(S, err);
    }
    if (st) {
        clc_mpi_step_free(S);
        return st;
    }
    /* the first cut is the start, not a move */
    memset(&S->fig, 0, sizeof S->fig);
    S->fresh = 1;
    *out = S;
    return CLCONE_OK;
}

clcone_status clcone_mpi_sim_attach(MPI_Comm comm, int root, clcone_context *ctx, clcone_sim *sim, double rebalance,
                                    clcone_mpi_stepper **st, clcone_error *err)
{
    clcone_status s;
    int cmd = CMD_ATTACH;
    if (!sim || !st) return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_sim_attach: sim and st are required");
    *st = NULL;
    if ((s = clc_mpi_refuse_pointers(&clcone_sim_get_options(sim)->solve, "clcone_mpi_sim_attach", err))) return s;
    if (clcone_sim_get_options(sim)->solve.model == CLCONE_MODEL_SOFT)
        return clc_mpi_fail(err, CLCONE_ENOTSUP, "the soft model's steps hand the solve per-contact velocities, "
                               "which do not go over ranks");
    MPI_Bcast(&cmd, 1, MPI_INT, root, comm);
    if ((s = setup(comm, root, ctx, sim, rebalance, st, err))) return s;
    {
        clcone_sim_hooks h = {*st, NULL, NULL, NULL, top_step};
        clcone_sim_set_hooks(sim, &h);
    }
    return CLCONE_OK;
}

typedef struct out_contact {
    unsigned long long order;
    clcone_contact c;
    double r[3];
} out_contact;

static int by_order(const void *pa, const void *pb)
{
    unsigned long long a = ((const out_contact *)pa)->order, b = ((const out_contact *)pb)->order;
    return (a > b) - (a < b);
}

/* Root: the bodies and the last step's contacts and reactions, in one
 * process's order, into its world and stepper. */
static clcone_status sync_root(clcone_mpi_stepper *S, const clc_mpi_body *b, int nb, out_contact *c, int nc,
                               clcone_error *err)
{
    clcone_world *W = clcone_sim_world(S->top);
    clcone_contact *cs = malloc(((size_t)nc + 1) * sizeof *cs);
    double *r = malloc((3 * (size_t)nc + 1) * sizeof *r);
    if (!cs || !r) {
        free(cs);
        free(r);
        return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d contacts", nc);
    }
    for (int i = 0; i < nb; ++i) {
        W->s.bodies[b[i].gid] = b[i].b;
        W->shapes[b[i].gid] = b[i].sh;
    }
    qsort(c, (size_t)nc, sizeof *c, by_order);
    for (int i = 0; i < nc; ++i) {
        cs[i] = c[i].c;
        memcpy(r + 3 * (size_t)i, c[i].r, sizeof c[i].r);
    }
    free(W->s.contacts);
    W->s.contacts = cs;
    W->s.ncontacts = nc;
    clcone_sim_set_reactions(S->top, r);
    return CLCONE_OK;
}

static clcone_status sync_all(clcone_mpi_stepper *S, clcone_error *err)
{
    const clcone_world *L = &S->L;
    const double *r = clcone_sim_reactions(S->sim);
    clc_mpi_body *b = malloc(((size_t)L->s.nbodies + 1) * sizeof *b), *ball = NULL;
    out_contact *c = malloc(((size_t)L->s.ncontacts + 1) * sizeof *c), *call = NULL;
    int nb = 0, nc = 0, tb = 0, tc = 0;
    clcone_status st = b && c ? CLCONE_OK : clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for the outputs");
    for (int i = 0; !st && i < L->s.nbodies; ++i)
        if (S->from[i] == S->rank) b[nb++] = (clc_mpi_body){S->gid[i], 1, L->s.bodies[i], L->shapes[i]};
    for (int k = 0; !st && k < L->s.ncontacts; ++k) {
        const clcone_contact *ct = &L->s.contacts[k];
        if (!S->counted[k]) continue;
        c[nc] = (out_contact){S->order[k], *ct, {0, 0, 0}};
        c[nc].c.a = S->gid[ct->a];
        c[nc].c.b = ct->b >= 0 ? S->gid[ct->b] : -1;
        if (r) memcpy(c[nc].r, r + 3 * (size_t)k, sizeof c[nc].r);
        ++nc;
    }
    if (!(st = clcone_mpi_agree(S->comm, st, err))
        && !(st = clc_mpi_step_gather(S, b, nb, sizeof *b, 1, (char **)&ball, &tb, err))
        && !(st = clc_mpi_step_gather(S, c, nc, sizeof *c, 1, (char **)&call, &tc, err)) && S->rank == S->root)
        st = sync_root(S, ball, tb, call, tc, err);
    st = clcone_mpi_agree(S->comm, st, err);
    free(b);
    free(c);
    free(ball);
    free(call);
    return st;
}

clcone_status clcone_mpi_sim_sync(clcone_mpi_stepper *st, clcone_error *err)
{
    if (!st) return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_sim_sync: no stepper");
    command(st, CMD_SYNC);
    return sync_all(st, err);
}

static void figures(clcone_mpi_stepper *S, clcone_mpi_sim_figures *f)
{
    long long v[5] = {S->fig.moved, S->fig.ghosts, S->fig.bytes, S->fig.halo_bytes, 0}, sum[5];
    MPI_Reduce(v, sum, 4, MPI_LONG_LONG, MPI_SUM, S->root, S->comm);
    if (f) *f = (clcone_mpi_sim_figures){S->fig.steps, sum[0], S->fig.repartitions, sum[1], sum[2], sum[3]};
}

clcone_status clcone_mpi_sim_figures_get(clcone_mpi_stepper *st, clcone_mpi_sim_figures *f, clcone_error *err)
{
    if (!st || !f) return clc_mpi_fail(err, CLCONE_EINVAL, "clcone_mpi_sim_figures_get: st and f are required");
    command(st, CMD_FIGURES);
    figures(st, f);
    return CLCONE_OK;
}

int clcone_mpi_sim_stranded(const clcone_mpi_stepper *st)
{
    return st && st->stranded;
}

void clcone_mpi_sim_end(MPI_Comm comm, int root, clcone_mpi_stepper *st)
{
    int cmd = CMD_END;
    MPI_Bcast(&cmd, 1, MPI_INT, root, comm);
    if (!st) return;
    clcone_sim_set_hooks(st->top, NULL);
    clc_mpi_step_free(st);
}

clcone_status clcone_mpi_sim_serve(MPI_Comm comm, int root, clcone_context *ctx, int *stranded, clcone_error *err)
{
    clcone_mpi_stepper *S = NULL;
    clcone_status st = CLCONE_OK;
    *stranded = 0;
    for (;;) {
        clcone_step_info info;
        int cmd;
        MPI_Bcast(&cmd, 1, MPI_INT, root, comm);
        if (cmd == CMD_END) break;
        if (cmd != CMD_ATTACH && !S) /* root goes on only after an agreed attach */
            return clc_mpi_fail(err, CLCONE_EINVAL, "a stepping command before the stepper");
        if (cmd == CMD_ATTACH) st = setup(comm, root, ctx, NULL, 0, &S, err);
        else if (cmd == CMD_SYNC) st = sync_all(S, err);
        else if (cmd == CMD_FIGURES) figures(S, NULL);
        else if (cmd == CMD_STEP) st = clcone_sim_step(S->sim, &info, err);
        /* a failed step is every rank's (agreed), and root decides what
         * follows; but one that failed here alone leaves the others in an
         * exchange */
        if (st && S && S->stranded) {
            *stranded = 1;
            break;
        }
    }
    if (S) clc_mpi_step_free(S);
    return st;
}
