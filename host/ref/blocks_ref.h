/* The reference solvers of the general-block problem. */
#ifndef CLCONE_REF_BLOCKS_REF_H
#define CLCONE_REF_BLOCKS_REF_H

#include "core/blocks.h"

/* Solves validated p by pgs if o says so, else apgd, under o's tol and caps; f (m): the start
 * with o->warm_start, the forces on return; res: status, iterations, error, cost. */
clcone_status clc_ref_blocks(const clc_bproblem *p, const clcone_options *o, double *f, clcone_prob_result *res,
                                clcone_error *err);

#endif
