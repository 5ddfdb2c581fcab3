/* The device backend's entry points, as the solve layer calls them
 * (opencl/dev_plan.c, each solver's driver, opencl/sap.c); no OpenCL
 * types. */
#ifndef CLCONE_DEVICE_SOLVE_H
#define CLCONE_DEVICE_SOLVE_H

#include <clcone/ext.h>

#include "core/internal.h"
#include "core/sap.h"

/* One batch on the device (opencl/dev_batch.h). */
typedef struct clc_dev_batch clc_dev_batch;
/* A solver's device entry: solves the plan's batch from r (3n, the start;
 * the reactions on exit). A row of solve/contract.c names it; the file
 * that defines it declares it with this type first
 * (`clc_dev_fn clc_dev_NAME;`), so that the compiler checks the two
 * agree. */
typedef clcone_status clc_dev_fn(clc_dev_batch *d, double *r, clcone_error *err);
/* Device side of clcone_plan: a validated problem (batch) or scene
 * uploaded once; solves reset only the iterate and the per-problem flags.
 * set_q gives a local-form plan 3n values. set_scene gives a scene plan
 * another scene on the same buffers, grown when it needs more, uploading
 * only the arrays that differ from the last scene's; o is the plan's
 * options, whose soft inputs (soft_v0, soft_R, soft_aref) may have
 * changed. A plan whose set_scene failed is only to be freed. */
typedef struct clc_dev_plan clc_dev_plan;
/* p is borrowed: it must outlive the plan, and its q hold what set_q
 * uploads. entry: the solver's (clc_contract_row). */
clcone_status clc_dev_plan_local(clcone_context *c, const clcone_problem *p, const clcone_options *o,
                                    clc_dev_fn *entry, clc_dev_plan **out, clcone_error *err);
/* part NULL: the scene is whole. part (borrowed, for the plan's life)
 * must come with a solver whose iterations read other contacts only
 * through dv and the sums (jacobi, apgd). */
clcone_status clc_dev_plan_scene(clcone_context *c, const clcone_scene *s, const clcone_options *o,
                                    clc_dev_fn *entry, const clcone_dev_part *part, clc_dev_plan **out,
                                    clcone_error *err);
clcone_status clc_dev_plan_set_q(clc_dev_plan *pl, const double *q, clcone_error *err);
clcone_status clc_dev_plan_set_scene(clc_dev_plan *pl, const clcone_scene *s, const clcone_options *o,
                                        clcone_error *err);
clcone_status clc_dev_plan_solve(clc_dev_plan *pl, double *r, clcone_result *res, clcone_error *err);
/* The time cap of the next solves (clcone_plan_set_max_seconds). */
void clc_dev_plan_set_max_seconds(clc_dev_plan *pl, double seconds);
/* A one-iteration solve that leaves nothing behind: first-launch
 * compilation happens here, not in a timed solve. */
clcone_status clc_dev_plan_warm_up(clc_dev_plan *pl, clcone_error *err);
/* What a plan did to its kept buffers since it was made, for the tests:
 * buffers made (first or grown) and arrays uploaded. */
typedef struct clc_dev_counts {
    int buffers;
    int uploads;
} clc_dev_counts;
clc_dev_counts clc_dev_plan_counts(const clc_dev_plan *pl);
void clc_dev_plan_free(clc_dev_plan *pl);

/* Builds the programs of SAP's kernels (a SAP solve has no plan of its
 * own), so that a plan made for SAP compiles before its solves are timed. */
clcone_status clc_sap_device_prepare(clcone_context *ctx, clcone_error *err);

/* SAP on the device: runs clc_sap_newton on ctx from v0 (6 per body)
 * and returns gamma in r and, when v is non-NULL, the final velocities. */
clcone_status clc_sap_device(clcone_context *ctx, const clc_sap_setup *S, const double *v0,
                                const clcone_options *o, clc_sap_params *prm, double *r,
                                double *v, clcone_prob_result *out, clcone_error *err);

#endif
