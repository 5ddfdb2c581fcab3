/* The coloured Gauss-Seidel sweep of CGS and ACGS on a device
 * (opencl/sweeps.c): the kernels of the form programs, cgs_local
 * (kernels/local_form.cl) and cgs_body (kernels/body_form.cl). */
#ifndef CLCONE_OPENCL_SWEEPS_H
#define CLCONE_OPENCL_SWEEPS_H

#include "opencl/dev_batch.h"

/* What a coloured Gauss-Seidel sweep launches with (CGS and ACGS): the
 * colour order, the diagonal block positions (local form), the steps and
 * the kernel. */
typedef struct clc_sweep {
    cl_mem ord, dg, om;
    cl_kernel k;
    const char *name;
} clc_sweep;

void clc_sweep_close(clc_dev_batch *d, clc_sweep *w);
clcone_status clc_sweep_open(clc_dev_batch *d, clc_sweep *w, clcone_error *err);
/* Sweep number `it` over every colour of r in place (body form: d->body.dv
 * must be M^-1 J^T r, and is kept so). */
clcone_status clc_sweep_run(clc_dev_batch *d, clc_sweep *w, cl_mem r, int it, clcone_error *err);

#endif
