/* Accelerated coloured Gauss-Seidel (kernels/local_solve.h says what and
 * why): the sweeps of clc_ref_cgs with Nesterov's extrapolation between them,
 * a gradient restart and a function restart (kernels/schedule.h). The
 * reference the device's ACGS is checked against. */
#include "core/analysis.h"
#include "core/internal.h"
#include "ref/reference.h"
#include "cone.h"
#include "local_solve.h"
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

/* r is the sweep's working vector: it holds y when a sweep starts and x_k
 * after it, where the loop measures the error (as on the device); xo is
 * x_{k-1}, ys the y the sweep started from, beta the extrapolation the
 * last sweep decided; xc and uc the last check's x and u = W x + q, which
 * the function restart measures the objective's rise from, tv and tm its
 * terms and their magnitudes. */
typedef struct acgs {
    const clcone_problem *p;
    const clcone_options *o;
    int c0, c1;
    const int *order;
    const double *omega;
    double *r, *xo, *ys, *tv, *tm, *xc, *uc, theta, beta;
    ref_checked_fn watch; /* run after a check (NULL: none) */
    void *watch_state;
} acgs;

static clcone_status acgs_step(void *state, int it, clcone_error *err)
{
    acgs *A = state;
    (void)err;
    if (it > 1) /* y_k from x_{k-1} and x_{k-2}, then sweep from it */
        for (int c = A->c0; c < A->c1; ++c) {
            int i = 3 * (c - A->c0);
            cone_acgs_extrapolate(A->p->mu[c], A->beta, A->r + 3 * c, A->xo + i, A->ys + i);
            memcpy(A->xo + i, A->r + 3 * c, sizeof *A->xo * 3);
            memcpy(A->r + 3 * c, A->ys + i, sizeof *A->ys * 3);
        }
    clc_ref_pgs_sweep(A->p, A->o, A->c0, A->c1, A->order, A->omega, A->r);
    for (int c = A->c0; c < A->c1; ++c)
        A->tv[c - A->c0] = cone_acgs_term(A->ys + 3 * (c - A->c0), A->r + 3 * c, A->xo + 3 * (c - A->c0));
    /* summed as the device sums, so that both restart alike */
    A->beta = cone_apgd_momentum(&A->theta, clc_lane_sum(A->tv, A->c1 - A->c0));
    return CLCONE_OK;
}

/* The function restart (cone_acgs_climbed) on the objective's rise since
 * the last check, summed as the device sums it; a restart makes the next
 * sweep start from P(x_k), the extrapolation with beta = 0. */
static clcone_status acgs_checked(void *state, int it, double error, clcone_error *err)
{
    acgs *A = state;
    for (int c = A->c0; c < A->c1; ++c) {
        int i = 3 * (c - A->c0);
        double u[3];
        clc_contact_velocity(A->p, A->r, c, u);
        A->tv[c - A->c0] = cone_acgs_rise_term(A->r + 3 * c, u, A->xc + i, A->uc + i, A->p->q + 3 * c,
                                                  &A->tm[c - A->c0]);
        memcpy(A->xc + i, A->r + 3 * c, sizeof *A->xc * 3);
        memcpy(A->uc + i, u, sizeof u);
    }
    if (cone_acgs_climbed(it, clc_lane_sum(A->tv, A->c1 - A->c0), clc_lane_sum(A->tm, A->c1 - A->c0))) {
        A->beta = 0;
        A->theta = 1;
    }
    return A->watch ? A->watch(A->watch_state, it, error, err) : CLCONE_OK;
}

clcone_status clc_ref_acgs(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                              double *r, clcone_prob_result *out, clcone_error *err)
{
    return clc_ref_acgs_watched(p, o, c0, c1, r, NULL, NULL, out, err);
}

clcone_status clc_ref_acgs_watched(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                      ref_checked_fn watch, void *state, clcone_prob_result *out,
                                      clcone_error *err)
{
    int nc, *cptr = NULL, *order = NULL, m = 3 * (c1 - c0);
    acgs A = {p, o, c0, c1, NULL, NULL, r, NULL, NULL, NULL, NULL, NULL, NULL, 1.0, 0.0, watch, state};
    clcone_status s = clc_color_contacts(p, c0, c1, &nc, &cptr, &order, err);
    double *omega = NULL;
    if (s) return s;
    s = CLCONE_ENOMEM;
    /* xo, ys, xc and uc in one allocation, the terms and magnitudes in another */
    if (!(omega = clc_ref_gs_steps(p, c0, c1, err))
        || !(A.xo = clc_calloc(4 * (size_t)m + 1, sizeof *A.xo, err, "acgs vectors"))
        || !(A.tv = clc_calloc(2 * (size_t)(c1 - c0) + 1, sizeof *A.tv, err, "acgs terms")))
        goto out;
    A.ys = A.xo + m;
    A.xc = A.ys + m;
    A.uc = A.xc + m;
    A.tm = A.tv + (c1 - c0);
    A.order = order;
    A.omega = omega;
    memcpy(A.xo, r + 3 * c0, sizeof *A.xo * (size_t)m);
    memcpy(A.ys, r + 3 * c0, sizeof *A.ys * (size_t)m);
    s = clc_ref_iterate(p, o, c0, c1, r, acgs_step, acgs_checked, &A, out, err);
out:
    free(cptr);
    free(order);
    free(omega);
    free(A.xo);
    free(A.tv);
    return s;
}
