/* Accelerated projected gradient descent for the cone QP (ccp):
 * min 1/2 r'Wr + q'r over r in the product of friction cones.
 * Nesterov's momentum with a backtracking Lipschitz estimate (doubled
 * until the quadratic upper bound holds, shrunk by 0.9 each step so it
 * can follow the local curvature back down) and gradient restart
 * (momentum dropped whenever it points uphill), as in Mazhar et al. 2015.
 * The backtracking tries CONE_APGD_TRIES candidates per iteration; if
 * none passes, the iterate stays and the next iteration goes on from the
 * raised L. That bound is what lets the device run it without reading
 * anything back, and the reference does exactly the same.
 * W x is carried along so one iteration costs one product with W, plus
 * one per backtracking step.
 *
 * coulomb: De Saxce's law is the cone QP with q + s e_n, s_c = mu_c
 * ||u_c,t||, at its fixed point. s is frozen from the current iterate,
 * APGD runs check_every iterations on that QP, then s is refreshed and
 * the momentum restarted (the QP changed). kernels/apgd.cl does the same
 * on the device. */
#include "core/internal.h"
#include "ref/reference.h"
#include "cone.h"
#include "local_solve.h"
#include "core/analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void project_all(const clcone_problem *p, int c0, int c1, double *x)
{
    for (int c = c0; c < c1; ++c) cone_project(p->mu[c], x + 3 * (c - c0));
}

/* q_eff = q + mu ||(W x + q)_t|| e_n per contact. */
static void desaxce_shift(const clcone_problem *p, int c0, int c1, const double *wx, double *qe)
{
    for (int c = c0; c < c1; ++c) {
        const double *qc = p->q + 3 * c, *w = wx + 3 * (c - c0);
        double u1 = w[1] + qc[1], u2 = w[2] + qc[2];
        double *e = qe + 3 * (c - c0);
        e[0] = qc[0] + cone_desaxce_shift(p->mu[c], u1, u2);
        e[1] = qc[1];
        e[2] = qc[2];
    }
}

typedef struct apgd {
    const clcone_problem *p;
    const clcone_options *o;
    int c0, c1, m, coulomb;
    double *x;                    /* the iterate: r's contacts [c0, c1) */
    double *y, *wx, *wy, *xn, *wxn, *q, theta, L;
} apgd;

/* Momentum dropped: y = x (and W y = W x). */
static void apgd_restart(apgd *A)
{
    memcpy(A->y, A->x, sizeof(double) * (size_t)A->m);
    memcpy(A->wy, A->wx, sizeof(double) * (size_t)A->m);
    A->theta = 1.0;
}

static clcone_status apgd_step(void *state, int it, clcone_error *err)
{
    apgd *A = state;
    int m = A->m, accepted = 0;
    (void)it;
    (void)err;
    /* gradient g = W y + q */
    for (int t = 0; t < CONE_APGD_TRIES && !accepted; ++t) {
        double dWd = 0, d2 = 0;
        for (int i = 0; i < m; ++i) A->xn[i] = A->y[i] - (A->wy[i] + A->q[i]) / A->L;
        project_all(A->p, A->c0, A->c1, A->xn);
        clc_range_product(A->p, A->c0, A->c1, A->xn, A->wxn);
        for (int i = 0; i < m; ++i) {
            double d = A->xn[i] - A->y[i];
            dWd += d * (A->wxn[i] - A->wy[i]);
            d2 += d * d;
        }
        if (cone_apgd_decrease_ok(dWd, d2, A->L)) accepted = 1;
        else A->L *= 2.0;
    }
    if (accepted) {
        double gdx = 0, beta;
        for (int i = 0; i < m; ++i) gdx += (A->wy[i] + A->q[i]) * (A->xn[i] - A->x[i]);
        beta = cone_apgd_momentum(&A->theta, gdx);
        for (int i = 0; i < m; ++i) {
            A->y[i] = A->xn[i] + beta * (A->xn[i] - A->x[i]);
            A->wy[i] = A->wxn[i] + beta * (A->wxn[i] - A->wx[i]);
        }
        memcpy(A->x, A->xn, sizeof(double) * (size_t)m);
        memcpy(A->wx, A->wxn, sizeof(double) * (size_t)m);
        A->L *= 0.9;
    } else { /* keep x, with the larger L, no momentum */
        apgd_restart(A);
    }
    return CLCONE_OK;
}

/* coulomb: at each check the De Saxce shift is refreshed from the iterate
 * and the momentum restarted (the QP changed). */
static clcone_status apgd_checked(void *state, int it, double error, clcone_error *err)
{
    apgd *A = state;
    (void)error;
    (void)err;
    if (A->coulomb && clc_is_check_iteration(A->o, it)) {
        desaxce_shift(A->p, A->c0, A->c1, A->wx, A->q);
        apgd_restart(A);
    }
    return CLCONE_OK;
}

clcone_status clc_ref_apgd(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                              double *r, clcone_prob_result *out, clcone_error *err)
{
    int m = 3 * (c1 - c0);
    apgd A = {p, o, c0, c1, m, o->model == CLCONE_MODEL_COULOMB, r + 3 * c0, NULL, NULL, NULL, NULL, NULL, NULL,
              1.0, 0.0};
    double *buf = clc_calloc((size_t)m * 6, sizeof *buf, err, "APGD vectors");
    clcone_status s;
    if (!buf) return CLCONE_ENOMEM;
    A.y = buf;
    A.wy = buf + m;
    A.wx = buf + 2 * m;
    A.xn = buf + 3 * m;
    A.wxn = buf + 4 * m;
    A.q = buf + 5 * m;
    for (int c = c0; c < c1; ++c) A.L = fmax(A.L, clc_row_block_norm(p, c));
    project_all(p, c0, c1, A.x);
    clc_range_product(p, c0, c1, A.x, A.wx);
    memcpy(A.y, A.x, sizeof(double) * (size_t)m);
    memcpy(A.wy, A.wx, sizeof(double) * (size_t)m);
    if (A.coulomb) desaxce_shift(p, c0, c1, A.wx, A.q);
    else memcpy(A.q, p->q + 3 * c0, sizeof(double) * (size_t)m);
    s = clc_ref_iterate(p, o, c0, c1, r, apgd_step, apgd_checked, &A, out, err);
    free(buf);
    return s;
}
