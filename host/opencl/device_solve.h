/* The device backend's entry points as the solve layer calls them; no OpenCL types. */
#ifndef CLCONE_DEVICE_SOLVE_H
#define CLCONE_DEVICE_SOLVE_H

#include <clcone/ext.h>

#include "core/internal.h"
#include "core/sap.h"

/* One batch on the device (opencl/dev_batch.h). */
typedef struct clc_dev_batch clc_dev_batch;
/* A solver's device entry: solves the plan's batch from r (3n), the reactions on exit (docs/architecture.md). */
typedef clcone_status clc_dev_fn(clc_dev_batch *d, double *r, clcone_error *err);
/* Device side of clcone_plan: uploaded once, solves reset only the iterate; after a failed set_scene, only free. */
typedef struct clc_dev_plan clc_dev_plan;
/* p is borrowed for the plan's life, its q what set_q uploads; entry: the solver's (clc_contract_row). */
clcone_status clc_dev_plan_local(clcone_context *c, const clcone_problem *p, const clcone_options *o,
                                    clc_dev_fn *entry, clc_dev_plan **out, clcone_error *err);
/* part (borrowed; NULL: whole scene) needs a solver reading others only through dv and sums (jacobi, apgd). */
clcone_status clc_dev_plan_scene(clcone_context *c, const clcone_scene *s, const clcone_options *o,
                                    clc_dev_fn *entry, const clcone_dev_part *part, clc_dev_plan **out,
                                    clcone_error *err);
clcone_status clc_dev_plan_set_q(clc_dev_plan *pl, const double *q, clcone_error *err);
clcone_status clc_dev_plan_set_scene(clc_dev_plan *pl, const clcone_scene *s, const clcone_options *o,
                                        clcone_error *err);
clcone_status clc_dev_plan_solve(clc_dev_plan *pl, double *r, clcone_result *res, clcone_error *err);
/* The time cap of the next solves (clcone_plan_set_max_seconds). */
void clc_dev_plan_set_max_seconds(clc_dev_plan *pl, double seconds);
/* A one-iteration solve leaving nothing behind, so first-launch compilation is not timed. */
clcone_status clc_dev_plan_warm_up(clc_dev_plan *pl, clcone_error *err);
/* Buffers a plan made (first or grown) and arrays it uploaded, for the tests. */
typedef struct clc_dev_counts {
    int buffers;
    int uploads;
} clc_dev_counts;
clc_dev_counts clc_dev_plan_counts(const clc_dev_plan *pl);
void clc_dev_plan_free(clc_dev_plan *pl);

/* Builds SAP's programs (SAP has no plan of its own), so compilation is not timed. */
clcone_status clc_sap_device_prepare(clcone_context *ctx, clcone_error *err);

/* SAP on the device: clc_sap_newton from v0; gamma in r, final velocities in v if non-NULL. */
clcone_status clc_sap_device(clcone_context *ctx, const clc_sap_setup *S, const double *v0,
                                const clcone_options *o, clc_sap_params *prm, double *r,
                                double *v, clcone_prob_result *out, clcone_error *err);

#endif
