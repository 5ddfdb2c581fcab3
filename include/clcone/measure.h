/* clcone public API: error measures. */
#ifndef CLCONE_API_MEASURE_H
#define CLCONE_API_MEASURE_H

#include "solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ||F(r)|| / max(||q||, ||r||, ||u||) over contacts [c0, c1) (docs/formats.md section 2);
 * err_q1 non-NULL: also ||F|| / (||q|| + 1). */
CLCONE_API double clcone_error_coulomb(const clcone_problem *p, const double *r,
                            int c0, int c1, double *err_q1);

/* The model's own error on contacts [c0, c1) (docs/formats.md section 2); NaN for soft and sap, for a pyramid's
 * facets outside 3..CLCONE_MAX_FACETS, and where r or W r + q overflows. */
CLCONE_API double clcone_error_of(const clcone_problem *p, const clcone_options *o,
                       const double *r, int c0, int c1);

#ifdef __cplusplus
}
#endif
#endif
