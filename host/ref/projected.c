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
#include "core/internal.h"
#include "ref/reference.h"
#include "cone.h"
#include "local_solve.h"
#include "core/analysis.h"

#include <stdlib.h>
#include <string.h>

static void contact_step(const clcone_problem *p, const clcone_options *o, int c,
                         double omega, double *rc, const double *u)
{
    cone_projected_step((int)o->model,
                        cone_model_pyramid((int)o->model, o->facets, o->fit == CLCONE_FIT_INNER, p->mu[c]),
                        p->mu[c], omega, rc, u);
}

/* One solver's state for the loop: p's contacts [c0, c1), step sizes,
 * and (Jacobi) the velocities of the last iterate or (PGS) the order
 * and a watch of the checks (NULL: none). */
typedef struct projected {
    const clcone_problem *p;
    const clcone_options *o;
    int c0, c1;
    const int *order;
    double *r, *omega, *u;
    ref_checked_fn watch;
    void *watch_state;
} projected;

static clcone_status jacobi_step(void *state, int it, clcone_error *err)
{
    projected *J = state;
    (void)it;
    (void)err;
    for (int c = J->c0; c < J->c1; ++c) clc_contact_velocity(J->p, J->r, c, J->u + 3 * (c - J->c0));
    for (int c = J->c0; c < J->c1; ++c)
        contact_step(J->p, J->o, c, J->omega[c - J->c0], J->r + 3 * c, J->u + 3 * (c - J->c0));
    return CLCONE_OK;
}

clcone_status clc_ref_jacobi(const clcone_problem *p, const clcone_options *o, int c0,
                                int c1, double *r, clcone_prob_result *out, clcone_error *err)
{
    int m = c1 - c0;
    projected J = {p, o, c0, c1, NULL, r, NULL, NULL, NULL, NULL};
    clcone_status s = CLCONE_ENOMEM;
    J.omega = clc_calloc((size_t)m, sizeof *J.omega, err, "Jacobi steps");
    J.u = clc_calloc((size_t)m * 3, sizeof *J.u, err, "Jacobi velocities");
    if (J.omega && J.u) {
        for (int c = c0; c < c1; ++c) J.omega[c - c0] = 1.0 / clc_row_block_norm(p, c);
        s = clc_ref_iterate(p, o, c0, c1, r, jacobi_step, NULL, &J, out, err);
    }
    free(J.omega);
    free(J.u);
    return s;
}

clcone_status clc_ref_pgs(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                             double *r, clcone_prob_result *out, clcone_error *err)
{
    return clc_ref_pgs_ordered(p, o, c0, c1, NULL, r, out, err);
}

double *clc_ref_gs_steps(const clcone_problem *p, int c0, int c1, clcone_error *err)
{
    double *omega = clc_calloc((size_t)(c1 - c0), sizeof *omega, err, "PGS steps");
    if (!omega) return NULL;
    for (int c = c0; c < c1; ++c) {
        int k = clc_diag_slot(p, c);
        double lo, hi;
        if (k < 0) continue;
        clc_sym3_eig_range(p->blocks + 9 * (size_t)k, &lo, &hi);
        omega[c - c0] = 1.0 / hi;
    }
    return omega;
}

void clc_ref_pgs_sweep(const clcone_problem *p, const clcone_options *o, int c0, int c1, const int *order,
                          const double *omega, double *r)
{
    for (int i = c0; i < c1; ++i) {
        int c = order ? order[i - c0] : i;
        double u[3];
        clc_contact_velocity(p, r, c, u);
        contact_step(p, o, c, omega[c - c0], r + 3 * c, u);
    }
}

static clcone_status pgs_step(void *state, int it, clcone_error *err)
{
    projected *G = state;
    (void)it;
    (void)err;
    clc_ref_pgs_sweep(G->p, G->o, G->c0, G->c1, G->order, G->omega, G->r);
    return CLCONE_OK;
}

static clcone_status pgs_watch(void *state, int it, double error, clcone_error *err)
{
    projected *G = state;
    return G->watch(G->watch_state, it, error, err);
}

static clcone_status pgs_run(projected *G, double *r, clcone_prob_result *out, clcone_error *err)
{
    clcone_status s;
    if (!(G->omega = clc_ref_gs_steps(G->p, G->c0, G->c1, err))) return CLCONE_ENOMEM;
    s = clc_ref_iterate(G->p, G->o, G->c0, G->c1, r, pgs_step, G->watch ? pgs_watch : NULL, G, out, err);
    free(G->omega);
    return s;
}

clcone_status clc_ref_pgs_ordered(const clcone_problem *p, const clcone_options *o, int c0,
                                     int c1, const int *order, double *r, clcone_prob_result *out,
                                     clcone_error *err)
{
    projected G = {p, o, c0, c1, order, r, NULL, NULL, NULL, NULL};
    return pgs_run(&G, r, out, err);
}

clcone_status clc_ref_pgs_watched(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                  ref_checked_fn watch, void *state, clcone_prob_result *out, clcone_error *err)
{
    projected G = {p, o, c0, c1, NULL, r, NULL, NULL, watch, state};
    return pgs_run(&G, r, out, err);
}
