/* The body form's host side: what a scene uploads (frames, lever arms,
 * q = J v*, W_cc, masses, the soft model's R and a_ref), the step sizes
 * by mass splitting, the colouring by shared bodies, and the cost. */
#include "opencl/dev_batch.h"
#include "core/analysis.h"
#include "cone.h"
#include "jacobian.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clc_body_host_free(clc_body_host *b)
{
    free(b->ca);
    free(b->cb);
    free(b->bs);
    free(b->frame);
    free(b->arm);
    free(b->q);
    free(b->mu);
    free(b->Wcc);
    free(b->inv_mass);
    free(b->inv_inertia);
    free(b->R);
    free(b->aref);
}

/* Jacobi step sizes by mass splitting: W = sum over bodies of A_B, A_B
 * the block of contacts on B, and a PSD matrix with k block rows is at
 * most k times its block diagonal, so W <= D with D_c = sum over c's
 * moving bodies of k_B lambda_max(J_c,B M_B^-1 J_c,B^T), k_B the number
 * of contacts on B. Plain Jacobi (D_c = lambda_max(W_cc)) diverges on
 * stacks and piles, where one body carries many contacts; this D makes
 * the ccp iteration a convergent projected gradient method and keeps the
 * coulomb one stable, without forming W. */
clcone_status clc_body_prepare(const clcone_scene *s, const clc_body_csr *L, const int *counts,
                                  const clcone_options *o, clc_body_host *b, clc_dev_host *h,
                                  clcone_error *err)
{
    int n = s->ncontacts;
    memset(h, 0, sizeof *h);
    b->ca = clc_calloc((size_t)n, sizeof *b->ca, err, "contact bodies");
    b->cb = clc_calloc((size_t)n, sizeof *b->cb, err, "contact bodies");
    b->bs = clc_calloc((size_t)L->ptr[s->nbodies], sizeof *b->bs, err, "body signs");
    b->frame = clc_calloc((size_t)n * 9, sizeof *b->frame, err, "contact frames");
    b->arm = clc_calloc((size_t)n * 6, sizeof *b->arm, err, "lever arms");
    b->q = clc_calloc((size_t)n * 3, sizeof *b->q, err, "q");
    b->mu = clc_calloc((size_t)n, sizeof *b->mu, err, "mu");
    b->Wcc = clc_calloc((size_t)n * 9, sizeof *b->Wcc, err, "W diagonal blocks");
    b->inv_mass = clc_calloc((size_t)s->nbodies, sizeof *b->inv_mass, err, "inverse masses");
    b->inv_inertia = clc_calloc((size_t)s->nbodies * 9, sizeof *b->inv_inertia, err, "inverse inertias");
    h->omega_j = clc_calloc((size_t)n, sizeof *h->omega_j, err, "Jacobi steps");
    h->omega_gs = clc_calloc((size_t)n, sizeof *h->omega_gs, err, "GS steps");
    h->Lmax = clc_calloc(1, sizeof *h->Lmax, err, "APGD bound");
    b->R = clc_calloc((size_t)n * 3, sizeof *b->R, err, "soft R");
    b->aref = clc_calloc((size_t)n * 3, sizeof *b->aref, err, "soft a_ref");
    if (!b->ca || !b->cb || !b->bs || !b->frame || !b->arm || !b->q || !b->mu || !b->Wcc || !b->inv_mass
        || !b->inv_inertia || !h->omega_j || !h->omega_gs || !h->Lmax || !b->R || !b->aref)
        return CLCONE_ENOMEM;
    for (int i = 0; i < L->ptr[s->nbodies]; ++i) b->bs[i] = L->sign[i];
    for (int i = 0; i < s->nbodies; ++i) {
        b->inv_mass[i] = s->bodies[i].inv_mass;
        memcpy(b->inv_inertia + 9 * i, s->bodies[i].inv_inertia, sizeof(double) * 9);
    }
    for (int c = 0; c < n; ++c) {
        clc_contact_sides cs;
        double D = 0;
        b->mu[c] = s->contacts[c].mu;
        clc_contact_sides_of(s, c, &cs);
        memcpy(b->frame + 9 * c, cs.frame, sizeof cs.frame);
        memcpy(b->Wcc + 9 * c, cs.Wcc, sizeof cs.Wcc);
        b->ca[c] = b->cb[c] = -1;
        for (int side = 0; side < 2; ++side) {
            int bi = cs.body[side];
            double lo, hi;
            if (bi < 0) continue;
            cone_jac_apply_add(cs.J + 18 * side, side == 0 ? 1.0 : -1.0, s->bodies[bi].v, b->q + 3 * c);
            if (!cs.moving[side]) continue;
            *(side == 0 ? &b->ca[c] : &b->cb[c]) = bi;
            memcpy(b->arm + 6 * c + 3 * side, cs.arm + 3 * side, 3 * sizeof(double));
            clc_sym3_eig_range(cs.A + 9 * side, &lo, &hi);
            D += (double)(counts ? counts[bi] : L->ptr[bi + 1] - L->ptr[bi]) * hi;
        }
        if (!(D > 0))
            return clc_fail(err, CLCONE_EINVAL, "contact %d: both bodies are static, W_cc = 0", c);
        h->omega_j[c] = D; /* D_c for now: 1 / (D_c + R_c) below */
    }
    if (o->model == CLCONE_MODEL_SOFT) {
        double *wd = clc_calloc((size_t)n * 3, sizeof *wd, err, "soft diagonal"), *gap;
        clcone_status st;
        gap = clc_calloc((size_t)n, sizeof *gap, err, "gaps");
        if (!wd || !gap) {
            free(wd);
            free(gap);
            return CLCONE_ENOMEM;
        }
        for (int c = 0; c < n; ++c) {
            gap[c] = s->contacts[c].gap;
            for (int a = 0; a < 3; ++a) wd[3 * c + a] = b->Wcc[9 * c + 4 * a];
        }
        st = clc_soft_terms(o, n, wd, gap, b->R, b->aref, err);
        free(wd);
        free(gap);
        if (st) return st;
    }
    for (int c = 0; c < n; ++c) {
        double lo, hi, rmax = 0;
        for (int a = 0; a < 3; ++a) {
            b->Wcc[9 * c + 4 * a] += b->R[3 * c + a];
            b->q[3 * c + a] -= b->aref[3 * c + a];
            rmax = fmax(rmax, b->R[3 * c + a]);
        }
        clc_sym3_eig_range(b->Wcc + 9 * c, &lo, &hi);
        h->omega_gs[c] = 1.0 / hi;
        /* W + R <= D + max R */
        h->omega_j[c] = 1.0 / (h->omega_j[c] + rmax);
        h->Lmax[0] = fmax(h->Lmax[0], 1.0 / h->omega_j[c]);
    }
    b->prob_off[0] = 0;
    b->prob_off[1] = n;
    h->n = n;
    h->nprob = 1;
    h->prob_off = b->prob_off;
    h->q = b->q;
    h->mu = b->mu;
    return CLCONE_OK;
}

/* Body-form colouring: contacts conflict when they share a moving body (L
 * lists each body's contacts in index order). The same colours as
 * clc_color_contacts on the scene's local form, whose W couples exactly
 * the contacts that share a moving body. */
typedef struct body_graph {
    const clc_body_csr *L;
    const clc_body_host *b;
} body_graph;

static void body_neighbours(const void *ctx, int c, const int *color, int *mark)
{
    const body_graph *g = ctx;
    for (int side = 0; side < 2; ++side) {
        int bi = side == 0 ? g->b->ca[c] : g->b->cb[c];
        if (bi < 0) continue;
        for (int k = g->L->ptr[bi]; k < g->L->ptr[bi + 1] && g->L->contact[k] < c; ++k) mark[color[g->L->contact[k]]] = c;
    }
}

clcone_status clc_body_colors(const clcone_scene *s, const clc_body_csr *L, const clc_body_host *b, clc_dev_host *h,
                                 clcone_error *err)
{
    body_graph g = {L, b};
    return clc_color_greedy(s->ncontacts, body_neighbours, &g, &h->ncolors, &h->color_ptr, &h->order, err);
}

/* 1/2 r'(W + R)r + q'r from one more operator product on the device. */
clcone_status clc_body_cost(clc_dev_batch *d, const double *r, const double *q, double *cost, clcone_error *err)
{
    double *w = clc_calloc(3 * (size_t)d->n, sizeof *w, err, "cost product");
    clcone_status s;
    if (!w) return CLCONE_ENOMEM;
    s = clc_dev_apply(d, d->r, d->w, err);
    if (!s) s = clc_read_reals(d->c, d->w, w, 3 * (size_t)d->n, err);
    *cost = 0;
    if (!s && d->body.part) {
        /* per contact, for the sum over the parts */
        for (int c = 0; c < d->n; ++c) {
            double t = 0;
            for (int i = 3 * c; i < 3 * c + 3; ++i) t += r[i] * (0.5 * w[i] + q[i]);
            w[c] = t;
        }
        s = d->body.part->sum(d->body.part->ctx, w, d->n, 1, cost, err);
    } else {
        for (int i = 0; !s && i < 3 * d->n; ++i) *cost += r[i] * (0.5 * w[i] + q[i]);
    }
    free(w);
    return s;
}
