/* CGS's and ACGS's coloured Gauss-Seidel sweep on a device (cgs_local, cgs_body kernels). */
#ifndef CLCONE_OPENCL_SWEEPS_H
#define CLCONE_OPENCL_SWEEPS_H

#include "opencl/dev_batch.h"

/* A sweep's colour order, diagonal block positions (local form), steps and kernel. */
typedef struct clc_sweep {
    cl_mem ord, dg, om;
    cl_kernel k;
    const char *name;
} clc_sweep;

void clc_sweep_close(clc_dev_batch *d, clc_sweep *w);
clcone_status clc_sweep_open(clc_dev_batch *d, clc_sweep *w, clcone_error *err);
/* Sweep `it` over every colour of r in place (body form: keeps d->body.dv = M^-1 J^T r). */
clcone_status clc_sweep_run(clc_dev_batch *d, clc_sweep *w, cl_mem r, int it, clcone_error *err);

#endif
