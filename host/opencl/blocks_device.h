/* The general-block problem's device solver (opencl/blocks_device.c). */
#ifndef CLCONE_OPENCL_BLOCKS_DEVICE_H
#define CLCONE_OPENCL_BLOCKS_DEVICE_H

#include "core/blocks.h"

/* APGD on c (kernels/blocks.cl), the reference's method (ref/blocks_ref.c)
 * in c's precision, errors measured on the host in double at o's checks;
 * f, res as clcone_ref_blocks. */
clcone_status clcone_dev_blocks(clcone_context *c, const clcone_bproblem *p, const clcone_options *o, double *f,
                                clcone_prob_result *res, clcone_error *err);
/* The K problems p[k] (validated) as one batch on c, one launch a stage
 * an iteration for them all; problem k's forces f[k], result res[k],
 * each bitwise those of clcone_dev_blocks on it alone (but time_ms, the
 * batch's, and a time cap, which is the batch's clock). */
clcone_status clcone_dev_blocks_batch(clcone_context *c, int K, const clcone_bproblem *const *p,
                                      const clcone_options *o, double *const *f, clcone_prob_result *res,
                                      clcone_error *err);

#endif
