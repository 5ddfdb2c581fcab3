/* Coloured Gauss-Seidel on the CPU: the reference the device's CGS is
 * checked against, sweeping the same colours in the same order. */
#include "core/analysis.h"
#include "core/internal.h"
#include "ref/reference.h"

#include <stdlib.h>

clcone_status clc_ref_cgs(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                             double *r, clcone_prob_result *out, clcone_error *err)
{
    int nc, *cptr, *order;
    clcone_status s = clc_color_contacts(p, c0, c1, &nc, &cptr, &order, err);
    if (s) return s;
    s = o->model == CLCONE_MODEL_COULOMB ? clc_ref_nsgs_ordered(p, o, c0, c1, order, r, out, err)
                                         : clc_ref_pgs_ordered(p, o, c0, c1, order, r, out, err);
    free(cptr);
    free(order);
    return s;
}
