/* SAP's CPU reference backend: the Newton loop of core/sap.c over a dense
 * H = M + J'GJ factored by Cholesky. */
#include "core/sap.h"
#include "ref/reference.h"
#include "cone.h"
#include "jacobian.h"
#include "sap_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* CPU reference backend                                               */
/* ------------------------------------------------------------------ */

typedef struct ref_sap {
    const clc_sap_setup *S;
    int nv;
    int *dof;                   /* nb: first unknown of a moving body, -1 */
    double *v, *u, *gamma, *G, *cost, *grad, *dv, *w, *H, *x;
} ref_sap;

static void ref_side(const clc_sap_setup *S, int c, int side, double J[18])
{
    cone_side_jacobian(S->frame + 9 * c, S->arm + 6 * c + 3 * side, J);
}

static clcone_status ref_eval(void *vctx, clc_sap_eval *out, clcone_error *err)
{
    ref_sap *R = vctx;
    const clc_sap_setup *S = R->S;
    double cost = 0, t[5] = {0, 0, 0, 0, 0};
    (void)err;
    for (int c = 0; c < S->n; ++c) {
        double *u = R->u + 3 * c, J[18];
        for (int k = 0; k < 3; ++k) u[k] = S->u0[3 * c + k];
        for (int side = 0; side < 2; ++side) {
            int b = side == 0 ? S->ca[c] : S->cb[c];
            if (b < 0) continue;
            ref_side(S, c, side, J);
            cone_jac_apply_add(J, side == 0 ? 1.0 : -1.0, R->v + 6 * b, u);
        }
        sap_gamma(S->mu[c], S->R[2 * c], S->R[2 * c + 1], u, R->gamma + 3 * c, R->G + 9 * c);
        R->cost[c] = sap_contact_cost(S->R[2 * c], S->R[2 * c + 1], R->gamma + 3 * c);
        cost += R->cost[c];
    }
    for (int i = 0; i < S->nb; ++i) {
        double d[6], Md[6], Mv[6], Mvs[6], jg[6] = {0, 0, 0, 0, 0, 0}, dg[6], J[18];
        double *g = R->grad + 6 * i;
        if (!S->moving[i]) {
            memset(g, 0, 6 * sizeof *g);
            continue;
        }
        for (int k = 0; k < 6; ++k) d[k] = R->v[6 * i + k] - S->vstar[6 * i + k];
        sap_mass_apply(S->mass[i], S->inertia + 9 * i, d, Md);
        sap_mass_apply(S->mass[i], S->inertia + 9 * i, R->v + 6 * i, Mv);
        sap_mass_apply(S->mass[i], S->inertia + 9 * i, S->vstar + 6 * i, Mvs);
        sap_mass_diag(S->mass[i], S->inertia + 9 * i, dg);
        for (int k = S->L.ptr[i]; k < S->L.ptr[i + 1]; ++k) {
            int c = S->L.contact[k];
            ref_side(S, c, S->L.sign[k] > 0 ? 0 : 1, J);
            cone_jac_transpose_add(J, S->L.sign[k] > 0 ? 1.0 : -1.0, R->gamma + 3 * c, jg);
        }
        for (int k = 0; k < 6; ++k) {
            g[k] = Md[k] - jg[k];
            t[0] += g[k] * g[k] / dg[k];
            t[1] += Mvs[k] * Mvs[k] / dg[k];
            t[2] += jg[k] * jg[k] / dg[k];
            t[3] += Mv[k] * Mv[k] / dg[k];
            t[4] += d[k] * Md[k];
        }
    }
    out->g2 = t[0];
    out->scale2 = fmax(t[1], fmax(t[2], t[3]));
    out->cost = 0.5 * t[4] + cost;
    return CLCONE_OK;
}

/* Exact Newton direction: H = M + sum_c J_c' G_c J_c assembled densely
 * over the moving bodies' unknowns and factored. */
static clcone_status ref_direction(void *vctx, double tol_abs, int max_inner, int *inner, clcone_error *err)
{
    ref_sap *R = vctx;
    const clc_sap_setup *S = R->S;
    int nv = R->nv;
    double *H = R->H;
    (void)tol_abs;
    (void)max_inner;
    (void)inner;
    (void)err;
    memset(H, 0, sizeof *H * (size_t)nv * (size_t)nv);
    for (int i = 0; i < S->nb; ++i) {
        int o = R->dof[i];
        if (o < 0) continue;
        for (int k = 0; k < 3; ++k) H[(size_t)(o + k) * nv + o + k] = S->mass[i];
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) H[(size_t)(o + 3 + a) * nv + o + 3 + b] = S->inertia[9 * i + 3 * a + b];
    }
    for (int c = 0; c < S->n; ++c) {
        int bs[2] = {S->ca[c], S->cb[c]};
        double J[2][18];
        for (int side = 0; side < 2; ++side)
            if (bs[side] >= 0) ref_side(S, c, side, J[side]);
        for (int s1 = 0; s1 < 2; ++s1)
            for (int s2 = 0; s2 < 2; ++s2) {
                double P[36] = {0};
                int o1, o2;
                if (bs[s1] < 0 || bs[s2] < 0) continue;
                sap_add_jtgj(J[s1], R->G + 9 * c, J[s2], s1 == s2 ? 1.0 : -1.0, P);
                o1 = R->dof[bs[s1]];
                o2 = R->dof[bs[s2]];
                for (int a = 0; a < 6; ++a)
                    for (int b = 0; b < 6; ++b) H[(size_t)(o1 + a) * nv + o2 + b] += P[6 * a + b];
            }
    }
    for (int i = 0; i < S->nb; ++i)
        if (R->dof[i] >= 0)
            for (int k = 0; k < 6; ++k) R->x[R->dof[i] + k] = -R->grad[6 * i + k];
    if (sap_cholesky(nv, H)) {
        sap_cholesky_solve(nv, H, R->x);
    } else {
        /* M is SPD and J'GJ PSD, so only non-finite data lands here; a
         * scaled gradient step keeps the loop defined and the next
         * evaluation reports the divergence */
        for (int i = 0; i < S->nb; ++i)
            if (R->dof[i] >= 0)
                for (int k = 0; k < 6; ++k) {
                    double dg[6];
                    sap_mass_diag(S->mass[i], S->inertia + 9 * i, dg);
                    R->x[R->dof[i] + k] /= dg[k];
                }
    }
    for (int i = 0; i < S->nb; ++i)
        for (int k = 0; k < 6; ++k) R->dv[6 * i + k] = R->dof[i] >= 0 ? R->x[R->dof[i] + k] : 0;
    return CLCONE_OK;
}

static clcone_status ref_ls_setup(void *vctx, double *a, double *b, double *c, clcone_error *err)
{
    ref_sap *R = vctx;
    const clc_sap_setup *S = R->S;
    double sa = 0, sb = 0, sc = 0;
    (void)err;
    for (int i = 0; i < S->nb; ++i) {
        double md[6];
        if (!S->moving[i]) continue;
        sap_mass_apply(S->mass[i], S->inertia + 9 * i, R->dv + 6 * i, md);
        for (int k = 0; k < 6; ++k) {
            sa += md[k] * (R->v[6 * i + k] - S->vstar[6 * i + k]);
            sb += md[k] * R->dv[6 * i + k];
            sc += R->dv[6 * i + k] * R->grad[6 * i + k];
        }
    }
    for (int ct = 0; ct < S->n; ++ct) {
        double J[18], *w = R->w + 3 * ct;
        w[0] = w[1] = w[2] = 0;
        for (int side = 0; side < 2; ++side) {
            int bi = side == 0 ? S->ca[ct] : S->cb[ct];
            if (bi < 0) continue;
            ref_side(S, ct, side, J);
            cone_jac_apply_add(J, side == 0 ? 1.0 : -1.0, R->dv + 6 * bi, w);
        }
    }
    *a = sa;
    *b = sb;
    *c = sc;
    return CLCONE_OK;
}

static clcone_status ref_ls_eval(void *vctx, double alpha, double *dcost, double *d1, double *d2,
                                 clcone_error *err)
{
    ref_sap *R = vctx;
    const clc_sap_setup *S = R->S;
    double s0 = 0, s1 = 0, s2 = 0;
    (void)err;
    for (int c = 0; c < S->n; ++c) {
        double ua[3], g[3], G[9], gw[3], *w = R->w + 3 * c;
        for (int k = 0; k < 3; ++k) ua[k] = R->u[3 * c + k] + alpha * w[k];
        sap_gamma(S->mu[c], S->R[2 * c], S->R[2 * c + 1], ua, g, G);
        sap_mat3_apply(G, w, gw);
        s0 += sap_contact_cost(S->R[2 * c], S->R[2 * c + 1], g) - R->cost[c];
        s1 += w[0] * g[0] + w[1] * g[1] + w[2] * g[2];
        s2 += w[0] * gw[0] + w[1] * gw[1] + w[2] * gw[2];
    }
    *dcost = s0;
    *d1 = s1;
    *d2 = s2;
    return CLCONE_OK;
}

static clcone_status ref_step(void *vctx, double alpha, clcone_error *err)
{
    ref_sap *R = vctx;
    (void)err;
    for (int i = 0; i < 6 * R->S->nb; ++i) R->v[i] += alpha * R->dv[i];
    return CLCONE_OK;
}

static void ref_free(ref_sap *R)
{
    free(R->dof);
    free(R->v);
    free(R->u);
    free(R->gamma);
    free(R->G);
    free(R->cost);
    free(R->grad);
    free(R->dv);
    free(R->w);
    free(R->H);
    free(R->x);
}

clcone_status clc_sap_ref(const clc_sap_setup *S, const double *v0, const clcone_options *o,
                             clc_sap_params *prm, double *r, double *vout, clcone_prob_result *out,
                             clcone_error *err)
{
    ref_sap R;
    clc_sap_ops ops = {&R, ref_eval, ref_direction, ref_ls_setup, ref_ls_eval, ref_step};
    size_t n = (size_t)S->n, nb = (size_t)S->nb;
    clcone_status s;
    int nv = 6 * S->nmoving;
    memset(&R, 0, sizeof R);
    R.S = S;
    R.nv = nv;
    R.dof = clc_calloc(nb, sizeof *R.dof, err, "sap unknowns");
    R.v = clc_calloc(6 * nb, sizeof *R.v, err, "sap velocities");
    R.u = clc_calloc(3 * n, sizeof *R.u, err, "sap contact velocities");
    R.gamma = clc_calloc(3 * n, sizeof *R.gamma, err, "sap impulses");
    R.G = clc_calloc(9 * n, sizeof *R.G, err, "sap contact Hessians");
    R.cost = clc_calloc(n, sizeof *R.cost, err, "sap contact costs");
    R.grad = clc_calloc(6 * nb, sizeof *R.grad, err, "sap gradient");
    R.dv = clc_calloc(6 * nb, sizeof *R.dv, err, "sap Newton step");
    R.w = clc_calloc(3 * n, sizeof *R.w, err, "sap contact step");
    R.H = clc_calloc((size_t)nv * (size_t)nv, sizeof *R.H, err, "sap dense Hessian");
    R.x = clc_calloc((size_t)nv, sizeof *R.x, err, "sap Newton right-hand side");
    if (!R.dof || !R.v || !R.u || !R.gamma || !R.G || !R.cost || !R.grad || !R.dv || !R.w || !R.H || !R.x) {
        ref_free(&R);
        return CLCONE_ENOMEM;
    }
    for (int i = 0, k = 0; i < S->nb; ++i) R.dof[i] = S->moving[i] ? 6 * k++ : -1;
    memcpy(R.v, v0, sizeof *R.v * 6 * nb);
    s = clc_sap_newton(&ops, o, nv, prm, out, err);
    if (!s) {
        memcpy(r, R.gamma, sizeof *r * 3 * n);
        if (vout) memcpy(vout, R.v, sizeof *vout * 6 * nb);
    }
    ref_free(&R);
    return s;
}
