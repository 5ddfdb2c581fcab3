/* Projected Jacobi and projected Gauss-Seidel for every model: each
 * contact takes the fixed-point step r_c <- P(r_c - omega_c (u_c + shift
 * e_n)) of kernels/local_solve.h, whose fixed points are the model's
 * solutions.
 *
 * Step sizes: Jacobi moves every contact at once, so omega_c must respect
 * the coupling of the whole block row: 1 / sum_d ||W_cd||_F bounds W's
 * spectrum (block Gershgorin), which makes the ccp iteration a convergent
 * projected gradient method. Gauss-Seidel moves one contact at a time and
 * only needs 1 / lambda_max(W_cc). */
#include "internal.h"
#include "reference.h"
#include "cone.h"
#include "local_solve.h"

#include <stdlib.h>
#include <string.h>

static void contact_step(const clcone_problem *p, const clcone_options *o, int c,
                         double omega, double *rc, const double *u)
{
    cone_projected_step((int)o->model,
                        cone_model_pyramid((int)o->model, o->facets, o->fit == CLCONE_FIT_INNER, p->mu[c]),
                        p->mu[c], omega, rc, u);
}

clcone_status ref_jacobi(const clcone_problem *p, const clcone_options *o, int c0,
                         int c1, double *r, clcone_prob_result *out, clcone_error *err)
{
    int m = c1 - c0;
    double *omega = clcone_calloc((size_t)m, sizeof *omega, err, "Jacobi steps");
    double *u = clcone_calloc((size_t)m * 3, sizeof *u, err, "Jacobi velocities");
    ref_loop L;
    if (!omega || !u) {
        free(omega);
        free(u);
        return CLCONE_ENOMEM;
    }
    for (int c = c0; c < c1; ++c) omega[c - c0] = 1.0 / ref_row_block_norm(p, c);
    ref_loop_start(&L, p, o, c0, c1);
    for (int it = 1; it <= o->max_iter; ++it) {
        for (int c = c0; c < c1; ++c) ref_contact_velocity(p, r, c, u + 3 * (c - c0));
        for (int c = c0; c < c1; ++c) contact_step(p, o, c, omega[c - c0], r + 3 * c, u + 3 * (c - c0));
        if (ref_loop_check(&L, it, r, out)) goto done;
    }
    ref_loop_finish(&L, o->max_iter, r, out);
done:
    free(omega);
    free(u);
    return CLCONE_OK;
}

clcone_status ref_pgs(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                      double *r, clcone_prob_result *out, clcone_error *err)
{
    return ref_pgs_ordered(p, o, c0, c1, NULL, r, out, err);
}

double *ref_gs_steps(const clcone_problem *p, int c0, int c1, clcone_error *err)
{
    double *omega = clcone_calloc((size_t)(c1 - c0), sizeof *omega, err, "PGS steps");
    if (!omega) return NULL;
    for (int c = c0; c < c1; ++c) {
        for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k)
            if (p->col[k] == c) {
                double lo, hi;
                ref_sym3_eig_range(p->blocks + 9 * k, &lo, &hi);
                omega[c - c0] = 1.0 / hi;
            }
    }
    return omega;
}

void ref_pgs_sweep(const clcone_problem *p, const clcone_options *o, int c0, int c1, const int *order,
                   const double *omega, double *r)
{
    for (int i = c0; i < c1; ++i) {
        int c = order ? order[i - c0] : i;
        double u[3];
        ref_contact_velocity(p, r, c, u);
        contact_step(p, o, c, omega[c - c0], r + 3 * c, u);
    }
}

clcone_status ref_pgs_ordered(const clcone_problem *p, const clcone_options *o, int c0,
                              int c1, const int *order, double *r, clcone_prob_result *out,
                              clcone_error *err)
{
    double *omega = ref_gs_steps(p, c0, c1, err);
    ref_loop L;
    if (!omega) return CLCONE_ENOMEM;
    ref_loop_start(&L, p, o, c0, c1);
    for (int it = 1; it <= o->max_iter; ++it) {
        ref_pgs_sweep(p, o, c0, c1, order, omega, r);
        if (ref_loop_check(&L, it, r, out)) goto done;
    }
    ref_loop_finish(&L, o->max_iter, r, out);
done:
    free(omega);
    return CLCONE_OK;
}
