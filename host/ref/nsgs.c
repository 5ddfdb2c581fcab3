/* Non-smooth Gauss-Seidel for the exact Coulomb law: sweep the contacts in
 * order, solving each one-contact problem exactly (kernels/local_solve.h)
 * with the others frozen at their latest values.
 *
 * Remedy for stalling: on singular W (OneObject-i100000-499) plain
 * Gauss-Seidel cycles near 1e-3. Every local solve therefore carries a
 * proximal term: it solves with W_cc + s I and b - s r_c,old, whose fixed
 * point is the same (at r_c = r_c,old the terms cancel) but which damps
 * the cycling. s = sigma trace(W_cc)/3 with sigma = 0.01 from sweep 101
 * on (cone_prox_sigma), chosen by measurement on the shared problems:
 * the first 100 sweeps stay plain, so the easy problems take exactly
 * the independent reference's sweeps (shared/problems/README.md); then
 * OneObject-i100000-499 reaches 1e-8 in 1,710 sweeps (plain GS: still
 * 2e-3 after 20,000) and BoxesStack1 in 261,000 (sigma 0.1: 320,400;
 * 1.0: slower everywhere). Over-relaxation (1.2..1.6) speeds BoxesStack1
 * but stalls OneObject again, so it is not used. */
#include "core/internal.h"
#include "ref/reference.h"
#include "core/analysis.h"
#include "cone.h"
#include "local_solve.h"

#include <math.h>
#include <stdlib.h>


clcone_status ref_nsgs_coulomb(const clcone_problem *p, const clcone_options *o,
                               int c0, int c1, double *r, clcone_prob_result *out,
                               clcone_error *err)
{
    return ref_nsgs_ordered(p, o, c0, c1, NULL, r, out, err);
}

clcone_status ref_nsgs_ordered(const clcone_problem *p, const clcone_options *o,
                               int c0, int c1, const int *order, double *r,
                               clcone_prob_result *out, clcone_error *err)
{
    ref_loop L;
    (void)err;
    ref_loop_start(&L, p, o, c0, c1);
    for (int it = 1; it <= o->max_iter; ++it) {
        for (int i = c0; i < c1; ++i) {
            int c = order ? order[i - c0] : i;
            double b[3];
            const double *D = NULL;
            b[0] = p->q[3 * c];
            b[1] = p->q[3 * c + 1];
            b[2] = p->q[3 * c + 2];
            for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
                const double *B = p->blocks + 9 * k, *x = r + 3 * p->col[k];
                if (p->col[k] == c) {
                    D = B;
                    continue;
                }
                clcone_block_add(B, x, b);
            }
            cone_gs_update(CONE_MODEL_COULOMB, 0, 0, p->mu[c], 0, it, D, b, r + 3 * c);
        }
        if (ref_loop_check(&L, it, r, out)) return CLCONE_OK;
    }
    ref_loop_finish(&L, o->max_iter, r, out);
    return CLCONE_OK;
}
