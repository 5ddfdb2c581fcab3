/* The general-block problem's device solver (opencl/blocks.c). */
#ifndef CLCONE_OPENCL_BLOCKS_H
#define CLCONE_OPENCL_BLOCKS_H

#include "core/blocks.h"

/* APGD on c (kernels/blocks.cl), the reference's method (ref/blocks_ref.c)
 * in c's precision, errors measured on the host in double at o's checks,
 * for the K problems p[k] (validated) as one batch, one launch a stage an
 * iteration for them all; problem k's forces in f[k] (its start when
 * o->warm_start), its result in res[k], as clc_ref_blocks gives them.
 * Each problem's are those of a batch of it alone, bitwise, but time_ms
 * and a time cap, which read the batch's clock. The host's work a
 * problem runs on `threads` threads, the same bits for any. A problem
 * that fails by itself (its scaled values out of float's range, named by
 * its own row) sets *failed to it, else *failed is -1. */
clcone_status clc_dev_blocks_batch(clcone_context *c, int K, const clc_bproblem *const *p,
                                      const clcone_options *o, int threads, double *const *f,
                                      clcone_prob_result *res, int *failed, clcone_error *err);

#endif
