/* The solve layer's internal entries, beside the public clcone_solve*
 * and clcone_plan_* (solve/solve.c, solve/sap_solve.c). */
#ifndef CLCONE_SOLVE_ENTRIES_H
#define CLCONE_SOLVE_ENTRIES_H

#include "core/internal.h"
#include "core/sap.h"
#include "opencl/device_solve.h"
#include "ref/reference.h"

/* The device side's clc_dev_plan_counts; zeros without one. */
clc_dev_counts clc_plan_device_counts(const clcone_plan *pl);

/* A local-form plan's problems replaced by parts (a batch of k, any
 * sizes): the backend side made again, without a second warm-up. */
clcone_status clc_plan_set_problems(clcone_plan *pl, const clcone_problem *const *parts, int k, clcone_error *err);

/* A scene on the device solved in its local form (solve/scene_local.c):
 * whether ctx and o take that path for s, the coulomb hybrid (or newton)
 * in double on a whole scene within the dense Newton's limit; and the
 * scene's local form, validated, into p (freed first; freed on failure). */
int clc_scene_local_fits(const clcone_context *ctx, const clcone_options *o, const clcone_scene *s,
                            const clcone_dev_part *part);
clcone_status clc_scene_local_assemble(const clcone_scene *s, clcone_problem *p, clcone_error *err);

/* A row of the solver contract (solve/contract.c): the public offer, the
 * entries that run the pair on each backend (NULL where that backend does
 * not), and the solver a failed time step is solved again with, on the
 * reference (fallback[0]) and on devices (fallback[1]);
 * CLCONE_SOLVER_DEFAULT: none. */
typedef struct clc_contract_row {
    clcone_offer offer;
    clc_ref_fn *ref;
    clc_dev_fn *dev;
    clcone_solver fallback[2];
} clc_contract_row;

/* The contract (solve/contract.c). Option ranges, and that the solver
 * serves the model on the backend ctx (NULL = the reference). */
clcone_status clc_options_validate(const clcone_options *o, const clcone_context *ctx, clcone_error *err);
/* The row of (m, s); NULL if none. */
const clc_contract_row *clc_contract_find(clcone_model m, clcone_solver s);
/* The solver a time step that failed with options o on ctx (NULL = the
 * reference) is solved again with; CLCONE_SOLVER_DEFAULT when none. */
clcone_solver clc_contract_fallback(const clcone_options *o, const clcone_context *ctx);

/* Entry used by clcone_solve_scene for o->model == CLCONE_MODEL_SAP (ctx
 * NULL = CPU reference). Validates options (tol, max_iter, max_seconds,
 * sap_beta > 0 finite; solver and check_every are not used: Newton checks
 * every iteration) and the scene, then solves. r (3 per contact): the warm
 * start impulses when o->warm_start (v0 = v* + M^-1 J' r), else v0 = v*; on
 * exit the contact impulses gamma of the solution, so that
 * clcone_scene_apply_impulses(r) gives v - v*. res->items[0]: iters =
 * Newton iterations, inner_iters = CG iterations (0 for the reference),
 * cost, error as above. */
clcone_status clc_sap_solve(clcone_context *ctx, const clcone_scene *s, const clcone_options *o,
                               double *r, clcone_result *res, clcone_error *err);
/* The option checks of a sap solve (model, sap_beta, stopping options). */
clcone_status clc_sap_check_options(const clcone_options *o, clcone_error *err);
/* The same with the extra parameters (prm may be NULL). */
clcone_status clc_sap_solve_ex(clcone_context *ctx, const clcone_scene *s, const clcone_options *o,
                                  clc_sap_params *prm, double *r, clcone_result *res,
                                  clcone_error *err);

#endif
