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
 * the independent reference's sweeps (tests/data/problems/README.md); then
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


clcone_status clc_ref_nsgs_coulomb(const clcone_problem *p, const clcone_options *o,
                                      int c0, int c1, double *r, clcone_prob_result *out,
                                      clcone_error *err)
{
    return clc_ref_nsgs_ordered(p, o, c0, c1, NULL, r, out, err);
}

typedef struct nsgs {
    const clcone_problem *p;
    int c0, c1;
    const int *order;
    double *r;
    ref_checked_fn watch;
    void *watch_state;
} nsgs;

/* Sweep it: each contact's exact local solve against the latest others. */
static clcone_status nsgs_sweep(void *state, int it, clcone_error *err)
{
    nsgs *G = state;
    (void)err;
    for (int i = G->c0; i < G->c1; ++i) {
        int c = G->order ? G->order[i - G->c0] : i;
        double b[3];
        const double *D = NULL;
        b[0] = G->p->q[3 * c];
        b[1] = G->p->q[3 * c + 1];
        b[2] = G->p->q[3 * c + 2];
        for (int k = G->p->row_ptr[c]; k < G->p->row_ptr[c + 1]; ++k) {
            const double *B = G->p->blocks + 9 * k, *x = G->r + 3 * G->p->col[k];
            if (G->p->col[k] == c) {
                D = B;
                continue;
            }
            clc_block_add(B, x, b);
        }
        cone_gs_update(CONE_MODEL_COULOMB, 0, 0, G->p->mu[c], 0, it, D, b, G->r + 3 * c);
    }
    return CLCONE_OK;
}

clcone_status clc_ref_nsgs_ordered(const clcone_problem *p, const clcone_options *o,
                                      int c0, int c1, const int *order, double *r,
                                      clcone_prob_result *out, clcone_error *err)
{
    nsgs G = {p, c0, c1, order, r, NULL, NULL};
    return clc_ref_iterate(p, o, c0, c1, r, nsgs_sweep, NULL, &G, out, err);
}

static clcone_status nsgs_watch(void *state, int it, double error, clcone_error *err)
{
    nsgs *G = state;
    return G->watch(G->watch_state, it, error, err);
}

clcone_status clc_ref_nsgs_watched(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                      ref_checked_fn watch, void *state, clcone_prob_result *out,
                                      clcone_error *err)
{
    nsgs G = {p, c0, c1, NULL, r, watch, state};
    return clc_ref_iterate(p, o, c0, c1, r, nsgs_sweep, nsgs_watch, &G, out, err);
}
