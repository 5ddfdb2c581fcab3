/* Contact colouring for Gauss-Seidel in parallel, and the CPU versions of
 * coloured Gauss-Seidel (plain and accelerated) that the device's CGS and
 * ACGS are checked against. */
#include "internal.h"
#include "reference.h"
#include "cone.h"
#include "local_solve.h"

#include <stdlib.h>
#include <string.h>

clcone_status ref_color_contacts(const clcone_problem *p, int c0, int c1, int *ncolors,
                                 int **color_ptr, int **order, clcone_error *err)
{
    int m = c1 - c0, nc = 0;
    int *color = clcone_calloc((size_t)m, sizeof *color, err, "colours");
    int *tptr = clcone_calloc((size_t)m + 1, sizeof *tptr, err, "W transpose");
    int *tcol = NULL, *mark = NULL, *cptr = NULL, *ord = NULL;
    int nnz = p->row_ptr[c1] - p->row_ptr[c0];
    clcone_status s = CLCONE_ENOMEM;
    *ncolors = 0;
    *color_ptr = NULL;
    *order = NULL;
    if (!color || !tptr) goto out;
    tcol = clcone_calloc((size_t)nnz, sizeof *tcol, err, "W transpose");
    mark = clcone_calloc((size_t)m + 1, sizeof *mark, err, "colour marks");
    if (!tcol || !mark) goto out;
    /* transpose structure, so that a contact sees W_dc as well as W_cd */
    for (int k = p->row_ptr[c0]; k < p->row_ptr[c1]; ++k) tptr[p->col[k] - c0 + 1]++;
    for (int i = 0; i < m; ++i) tptr[i + 1] += tptr[i];
    {
        int *fill = mark; /* reused as insertion cursor, reset below */
        for (int i = 0; i < m; ++i) fill[i] = tptr[i];
        for (int c = c0; c < c1; ++c)
            for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) tcol[fill[p->col[k] - c0]++] = c - c0;
        for (int i = 0; i <= m; ++i) mark[i] = -1;
    }
    for (int i = 0; i < m; ++i) {
        int c = c0 + i, k0 = 0;
        /* mark[col] = i for every colour taken by a neighbour */
        for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
            int d = p->col[k] - c0;
            if (d < i) mark[color[d]] = i;
        }
        for (int k = tptr[i]; k < tptr[i + 1]; ++k)
            if (tcol[k] < i) mark[color[tcol[k]]] = i;
        while (mark[k0] == i) ++k0;
        color[i] = k0;
        if (k0 + 1 > nc) nc = k0 + 1;
    }
    cptr = clcone_calloc((size_t)nc + 1, sizeof *cptr, err, "colour offsets");
    ord = clcone_calloc((size_t)m, sizeof *ord, err, "colour order");
    if (!cptr || !ord) goto out;
    for (int i = 0; i < m; ++i) cptr[color[i] + 1]++;
    for (int k = 0; k < nc; ++k) cptr[k + 1] += cptr[k];
    for (int k = 0; k <= nc; ++k) mark[k] = cptr[k];
    for (int i = 0; i < m; ++i) ord[mark[color[i]]++] = c0 + i;
    *ncolors = nc;
    *color_ptr = cptr;
    *order = ord;
    cptr = ord = NULL;
    s = CLCONE_OK;
out:
    free(color);
    free(tptr);
    free(tcol);
    free(mark);
    free(cptr);
    free(ord);
    return s;
}

clcone_status ref_cgs(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                      double *r, clcone_prob_result *out, clcone_error *err)
{
    int nc, *cptr, *order;
    clcone_status s = ref_color_contacts(p, c0, c1, &nc, &cptr, &order, err);
    if (s) return s;
    s = o->model == CLCONE_MODEL_COULOMB ? ref_nsgs_ordered(p, o, c0, c1, order, r, out, err)
                                         : ref_pgs_ordered(p, o, c0, c1, order, r, out, err);
    free(cptr);
    free(order);
    return s;
}

/* Accelerated coloured Gauss-Seidel (kernels/local_solve.h says what and
 * why). r is the sweep's working vector: it holds y when a sweep starts
 * and x_k after it; xo is x_{k-1}, ys the y the sweep started from. The
 * error is measured at x_k, before the extrapolation, as on the device. */
clcone_status ref_acgs(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                       double *r, clcone_prob_result *out, clcone_error *err)
{
    int nc, *cptr = NULL, *order = NULL, m = 3 * (c1 - c0);
    double *omega = NULL, *xo = NULL, *ys = NULL, *tv = NULL, theta = 1.0;
    ref_loop L;
    clcone_status s = ref_color_contacts(p, c0, c1, &nc, &cptr, &order, err);
    if (s) return s;
    s = CLCONE_ENOMEM;
    if (!(omega = ref_gs_steps(p, c0, c1, err))
        || !(xo = clcone_calloc((size_t)m, sizeof *xo, err, "acgs vectors"))
        || !(ys = clcone_calloc((size_t)m, sizeof *ys, err, "acgs vectors"))
        || !(tv = clcone_calloc((size_t)(c1 - c0) + 1, sizeof *tv, err, "acgs terms")))
        goto out;
    memcpy(xo, r + 3 * c0, sizeof *xo * (size_t)m);
    memcpy(ys, r + 3 * c0, sizeof *ys * (size_t)m);
    s = CLCONE_OK;
    ref_loop_start(&L, p, o, c0, c1);
    for (int it = 1; it <= o->max_iter; ++it) {
        double beta;
        ref_pgs_sweep(p, o, c0, c1, order, omega, r);
        for (int c = c0; c < c1; ++c) tv[c - c0] = cone_acgs_term(ys + 3 * (c - c0), r + 3 * c, xo + 3 * (c - c0));
        /* summed as the device sums, so that both restart alike */
        beta = cone_apgd_momentum(&theta, ref_lane_sum(tv, c1 - c0));
        if (ref_loop_check(&L, it, r, out)) goto out;
        if (it == o->max_iter) break; /* ref_loop_finish measures x_k */
        for (int c = c0; c < c1; ++c) {
            int i = 3 * (c - c0);
            cone_acgs_extrapolate(p->mu[c], beta, r + 3 * c, xo + i, ys + i);
            memcpy(xo + i, r + 3 * c, sizeof *xo * 3);
            memcpy(r + 3 * c, ys + i, sizeof *ys * 3);
        }
    }
    ref_loop_finish(&L, o->max_iter, r, out);
out:
    free(cptr);
    free(order);
    free(omega);
    free(xo);
    free(ys);
    free(tv);
    return s;
}
