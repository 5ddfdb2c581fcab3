/* The device backend's entry points, as the solve layer calls them
 * (opencl/device_solve.c, opencl/sap_device.c); no OpenCL types. */
#ifndef CLCONE_DEVICE_SOLVE_H
#define CLCONE_DEVICE_SOLVE_H

#include "core/internal.h"
#include "core/sap.h"

/* Device solve of a validated batch . */
clcone_status clcone_solve_device(clcone_context *c, const clcone_problem *p,
                                  const clcone_options *o, double *r,
                                  clcone_result *res, clcone_error *err);
/* Device side of clcone_plan: a validated problem
 * (batch) or scene uploaded once; solves reset only the iterate and the
 * per-problem flags. set_q takes 3n values; set_velocities a scene with
 * the plan's contacts and bodies and new free velocities. */
typedef struct clcone_dev_plan clcone_dev_plan;
clcone_status clcone_dev_plan_local(clcone_context *c, const clcone_problem *p, const clcone_options *o,
                                    clcone_dev_plan **out, clcone_error *err);
clcone_status clcone_dev_plan_scene(clcone_context *c, const clcone_scene *s, const clcone_options *o,
                                    clcone_dev_plan **out, clcone_error *err);
clcone_status clcone_dev_plan_set_q(clcone_dev_plan *pl, const double *q, clcone_error *err);
clcone_status clcone_dev_plan_set_velocities(clcone_dev_plan *pl, const clcone_scene *s, clcone_error *err);
clcone_status clcone_dev_plan_solve(clcone_dev_plan *pl, double *r, clcone_result *res, clcone_error *err);
/* A one-iteration solve that leaves nothing behind: first-launch
 * compilation happens here, not in a timed solve. */
clcone_status clcone_dev_plan_warm_up(clcone_dev_plan *pl, clcone_error *err);
void clcone_dev_plan_free(clcone_dev_plan *pl);

/* SAP on the device: runs clcone_sap_newton on ctx from v0 (6 per body)
 * and returns gamma in r and, when v is non-NULL, the final velocities. */
clcone_status clcone_sap_device(clcone_context *ctx, const clcone_sap_setup *S, const double *v0,
                                const clcone_options *o, clcone_sap_params *prm, double *r,
                                double *v, clcone_prob_result *out, clcone_error *err);

#endif
