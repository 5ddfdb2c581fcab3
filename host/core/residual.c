/* Error measures: the per-contact residuals of kernels/cone.h summed and
 * scaled as Siconos does (docs/formats.md section 2). */
#include "core/internal.h"
#include "cone.h"
#include "schedule.h"
#include "core/analysis.h"

#include <math.h>

void clc_contact_velocity(const clcone_problem *p, const double *r, int c, double u[3])
{
    u[0] = p->q[3 * c];
    u[1] = p->q[3 * c + 1];
    u[2] = p->q[3 * c + 2];
    for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k)
        clc_block_add(p->blocks + 9 * k, r + 3 * p->col[k], u);
}

/* Sum of squared per-contact residuals and the three norms of the scale. */
static double scaled_error(const clcone_problem *p, const clcone_options *o,
                           const double *r, int c0, int c1, double *err_q1)
{
    if (!p || !r) return NAN;
    double f2 = 0, q2 = 0, r2 = 0, u2 = 0;
    for (int c = c0; c < c1; ++c) {
        double u[3];
        const double *rc = r + 3 * c;
        clc_contact_velocity(p, r, c, u);
        if (!o || o->model == CLCONE_MODEL_COULOMB)
            f2 += cone_residual_coulomb(p->mu[c], rc, u);
        else if (o->model == CLCONE_MODEL_CCP)
            f2 += cone_residual_ccp(p->mu[c], rc, u);
        else if (o->model != CLCONE_MODEL_PYRAMID)
            return NAN; /* soft and sap measure their own problems */
        else if (o->facets < 3 || o->facets > CLCONE_MAX_FACETS)
            return NAN; /* no pyramid to measure against (and 2^31 facets would take hours) */
        else
            f2 += cone_residual_pyramid(cone_pyramid_make(o->facets, o->fit == CLCONE_FIT_INNER, p->mu[c]), rc, u);
        for (int a = 0; a < 3; ++a) {
            q2 += p->q[3 * c + a] * p->q[3 * c + a];
            r2 += rc[a] * rc[a];
            u2 += u[a] * u[a];
        }
    }
    if (err_q1) *err_q1 = sqrt(f2) / (sqrt(q2) + 1.0);
    return clc_scaled_error(f2, q2, r2, u2);
}

double clc_scaled_error(double f2, double q2, double r2, double u2)
{
    return cone_scaled_error(f2, q2, r2, u2);
}

/* De Saxcé's term mu ||u_T|| turns u's rounding into an error mu times larger: where contacts stick, u_T is
 * that rounding and no solver gets below it. The rounding of u_c = q_c + sum_k W_ck r_k is taken as eps times
 * the root sum of squares of its terms' sizes: an upper estimate, 6.2x the error every solver stops at on
 * `gen pile --n 30 --seed 2` with mu 1e8 and 1e10 in double (8e-8, 8e-6; the terms' plain sum is 11x). */
double clc_coulomb_rounding_floor(const clcone_problem *p, const double *r, int c0, int c1, double eps,
                                  double *mu_max)
{
    double f2 = 0, q2 = 0, r2 = 0, u2 = 0;
    *mu_max = 0;
    for (int c = c0; c < c1; ++c) {
        double u[3], a2 = 0;
        const double *rc = r + 3 * c;
        for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
            const double *B = p->blocks + 9 * (size_t)k, *x = r + 3 * p->col[k];
            double b2 = 0;
            for (int e = 0; e < 9; ++e) b2 += B[e] * B[e];
            a2 += b2 * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        }
        clc_contact_velocity(p, r, c, u);
        for (int e = 0; e < 3; ++e) {
            a2 += p->q[3 * c + e] * p->q[3 * c + e];
            q2 += p->q[3 * c + e] * p->q[3 * c + e];
            r2 += rc[e] * rc[e];
            u2 += u[e] * u[e];
        }
        f2 += p->mu[c] * p->mu[c] * eps * eps * a2;
        *mu_max = fmax(*mu_max, p->mu[c]);
    }
    return clc_scaled_error(f2, q2, r2, u2);
}

double clcone_error_coulomb(const clcone_problem *p, const double *r, int c0,
                            int c1, double *err_q1)
{
    return scaled_error(p, NULL, r, c0, c1, err_q1);
}

double clcone_error_of(const clcone_problem *p, const clcone_options *o,
                       const double *r, int c0, int c1)
{
    if (!p || !r) return NAN;
    return scaled_error(p, o, r, c0, c1, NULL);
}

void clc_range_product(const clcone_problem *p, int c0, int c1, const double *x, double *w)
{
    for (int c = c0; c < c1; ++c) {
        double acc[3] = {0, 0, 0};
        for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k)
            clc_block_add(p->blocks + 9 * k, x + 3 * (p->col[k] - c0), acc);
        w[3 * (c - c0)] = acc[0];
        w[3 * (c - c0) + 1] = acc[1];
        w[3 * (c - c0) + 2] = acc[2];
    }
}
