/* The reference solvers of the general-block problem (ref/blocks_ref.c). */
#ifndef CLCONE_REF_BLOCKS_REF_H
#define CLCONE_REF_BLOCKS_REF_H

#include "core/blocks.h"

/* Solves p (validated) with o->solver pgs (else apgd), o's tol, max_iter,
 * check schedule and time cap; f (m) is the start when o->warm_start and
 * the forces on return; res gets the status, iterations, error and cost. */
clcone_status clc_ref_blocks(const clc_bproblem *p, const clcone_options *o, double *f, clcone_prob_result *res,
                                clcone_error *err);

#endif
