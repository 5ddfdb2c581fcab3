/* clcone public API: error measures. */
#ifndef CLCONE_API_MEASURE_H
#define CLCONE_API_MEASURE_H

#include "solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Siconos's current relative natural-map error for the Coulomb law
 * (docs/formats.md section 2): ||F(r)|| / max(||q||, ||r||, ||u||). With
 * err_q1 non-NULL also returns the old ||F|| / (||q|| + 1). Contacts
 * [c0, c1) only, so a batch member can be measured alone. */
CLCONE_API double clcone_error_coulomb(const clcone_problem *p, const double *r,
                            int c0, int c1, double *err_q1);

/* The model's own error on contacts [c0, c1): coulomb as above; ccp the
 * same natural map without De Saxce's term (r in K, u in K*, r.u = 0);
 * pyramid the natural map with the pyramid and its support function.
 * NaN for soft and sap, whose problems (W + R; body velocities) are not
 * the (W, q) given here. */
CLCONE_API double clcone_error_of(const clcone_problem *p, const clcone_options *o,
                       const double *r, int c0, int c1);

#ifdef __cplusplus
}
#endif
#endif
