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

clcone_status ref_apgd(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                       double *r, clcone_prob_result *out, clcone_error *err)
{
    int m = 3 * (c1 - c0), coulomb = o->model == CLCONE_MODEL_COULOMB;
    double *x = r + 3 * c0;
    double *buf = clcone_calloc((size_t)m * 6, sizeof *buf, err, "APGD vectors");
    double *y, *wx, *wy, *xn, *wxn, *q, theta = 1.0, L = 0.0;
    ref_loop Lp;
    if (!buf) return CLCONE_ENOMEM;
    y = buf;
    wy = buf + m;
    wx = buf + 2 * m;
    xn = buf + 3 * m;
    wxn = buf + 4 * m;
    q = buf + 5 * m;
    for (int c = c0; c < c1; ++c) L = fmax(L, clcone_row_block_norm(p, c));
    project_all(p, c0, c1, x);
    clcone_range_product(p, c0, c1, x, wx);
    memcpy(y, x, sizeof(double) * (size_t)m);
    memcpy(wy, wx, sizeof(double) * (size_t)m);
    if (coulomb) desaxce_shift(p, c0, c1, wx, q);
    else memcpy(q, p->q + 3 * c0, sizeof(double) * (size_t)m);
    ref_loop_start(&Lp, p, o, c0, c1);
    for (int it = 1; it <= o->max_iter; ++it) {
        /* gradient g = W y + q */
        int accepted = 0;
        for (int t = 0; t < CONE_APGD_TRIES && !accepted; ++t) {
            double dWd = 0, d2 = 0;
            for (int i = 0; i < m; ++i) xn[i] = y[i] - (wy[i] + q[i]) / L;
            project_all(p, c0, c1, xn);
            clcone_range_product(p, c0, c1, xn, wxn);
            for (int i = 0; i < m; ++i) {
                double d = xn[i] - y[i];
                dWd += d * (wxn[i] - wy[i]);
                d2 += d * d;
            }
            if (cone_apgd_decrease_ok(dWd, d2, L)) accepted = 1;
            else L *= 2.0;
        }
        if (accepted) {
            double gdx = 0, beta;
            for (int i = 0; i < m; ++i) gdx += (wy[i] + q[i]) * (xn[i] - x[i]);
            beta = cone_apgd_momentum(&theta, gdx);
            for (int i = 0; i < m; ++i) {
                y[i] = xn[i] + beta * (xn[i] - x[i]);
                wy[i] = wxn[i] + beta * (wxn[i] - wx[i]);
            }
            memcpy(x, xn, sizeof(double) * (size_t)m);
            memcpy(wx, wxn, sizeof(double) * (size_t)m);
            L *= 0.9;
        } else {                    /* keep x, with the larger L, no momentum */
            memcpy(y, x, sizeof(double) * (size_t)m);
            memcpy(wy, wx, sizeof(double) * (size_t)m);
            theta = 1.0;
        }
        if (ref_loop_check(&Lp, it, r, out)) goto done;
        if (coulomb && clcone_is_check_iteration(o, it)) {
            desaxce_shift(p, c0, c1, wx, q);
            memcpy(y, x, sizeof(double) * (size_t)m);
            memcpy(wy, wx, sizeof(double) * (size_t)m);
            theta = 1.0;
        }
    }
    ref_loop_finish(&Lp, o->max_iter, r, out);
done:
    free(buf);
    return CLCONE_OK;
}
