/* The general-block problem's device solver. */
#ifndef CLCONE_OPENCL_BLOCKS_H
#define CLCONE_OPENCL_BLOCKS_H

#include "core/blocks.h"

/* APGD on c for the K validated p[k] as one batch (docs/architecture.md): forces in f[k] (the
 * start with o->warm_start), res[k] as clc_ref_blocks; a problem failing alone sets *failed, else -1. */
clcone_status clc_dev_blocks_batch(clcone_context *c, int K, const clc_bproblem *const *p,
                                      const clcone_options *o, int threads, double *const *f,
                                      clcone_prob_result *res, int *failed, clcone_error *err);

#endif
