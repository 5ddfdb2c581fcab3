/* The solve layer's internal entries, beside the public clcone_solve*
 * and clcone_plan_* (solve/solve.c, solve/sap_solve.c). */
#ifndef CLCONE_SOLVE_ENTRIES_H
#define CLCONE_SOLVE_ENTRIES_H

#include "core/internal.h"
#include "core/sap.h"
#include "opencl/device_solve.h"
#include "ref/reference.h"
#include "core/blocks.h"
#include "core/primal.h"

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

/* The entries of each form, declared beside their definitions. */
typedef clcone_status clc_sap_fn(clcone_context *ctx, const clcone_scene *s, const clcone_options *o, double *r,
                                 clcone_result *res, clcone_error *err);
typedef clcone_status clc_blocks_ref_fn(const clc_bproblem *p, const clcone_options *o, double *f,
                                        clcone_prob_result *res, clcone_error *err);
typedef clcone_status clc_blocks_dev_fn(clcone_context *c, int K, const clc_bproblem *const *p,
                                        const clcone_options *o, int threads, double *const *f,
                                        clcone_prob_result *res, int *failed, clcone_error *err);
typedef clcone_status clc_primal_ref_fn(const clc_pproblem *p, const clcone_options *o, double *a, double *f,
                                        int *state, clcone_prob_result *res, clcone_error *err);
typedef clcone_status clc_primal_dev_fn(clcone_context *c, int K, const clc_pproblem *const *p,
                                        const clcone_options *o, int threads, double *const *a, double *const *f,
                                        int *const *state, clcone_prob_result *res, int *failed,
                                        clcone_error *err);

/* A row of the solver contract (solve/contract.c): the public offer, the
 * entries that run it, by its forms (NULL on a backend that does not),
 * and the solver a failed time step is solved again with, on the
 * reference (fallback[0]) and on devices (fallback[1]);
 * CLCONE_SOLVER_DEFAULT: none. step_tol: the stepper's tolerance where
 * the row is its default (0: not). parts: its device entry also runs a
 * scene in parts over MPI ranks (clcone_plan_create_part). */
typedef enum clc_run_kind { CLC_RUN_LOCAL, CLC_RUN_SAP, CLC_RUN_BLOCKS, CLC_RUN_PRIMAL } clc_run_kind;
typedef struct clc_contract_row {
    clcone_offer offer;
    clc_run_kind kind; /* which of run's entries it has */
    union {
        struct { clc_ref_fn *ref; clc_dev_fn *dev; } local; /* local and body forms */
        clc_sap_fn *sap;                                      /* model sap, either backend */
        struct { clc_blocks_ref_fn *ref; clc_blocks_dev_fn *dev; } blocks;
        struct { clc_primal_ref_fn *ref; clc_primal_dev_fn *dev; } primal;
    } run;
    clcone_solver fallback[2];
    double step_tol;
    int parts;
} clc_contract_row;

#define CLC_FORMS_SOLVE (CLCONE_FORM_BIT(CLCONE_FORM_LOCAL) | CLCONE_FORM_BIT(CLCONE_FORM_BODY))

/* The contract (solve/contract.c); forms: a CLCONE_FORM_BIT mask, ctx
 * NULL the reference. Unset solver and tol: the first default row of o's
 * model in forms, then that row's tolerance; the row, or NULL if o names
 * none there. */
const clc_contract_row *clc_contract_resolve(unsigned forms, clcone_options *o, const clcone_context *ctx);
/* The same with the stepper's defaults where a row sets them. */
const clc_contract_row *clc_contract_resolve_step(unsigned forms, clcone_options *o, const clcone_context *ctx);
/* The row that runs resolved o on ctx, in *row, or why none does; then
 * the option ranges of the model and the stopping options. */
clcone_status clc_contract_validate(unsigned forms, const clcone_options *o, const clcone_context *ctx,
                                    const clc_contract_row **row, clcone_error *err);
/* tol >= 0, max_iter and check_every >= 1, max_seconds >= 0, or why not. */
clcone_status clc_stopping_check(const clcone_options *o, clcone_error *err);
/* The row that runs resolved o on a scene in parts over MPI ranks on
 * ctx, or why none does (clc_contract_validate's, then the parts'). */
clcone_status clc_contract_validate_parts(const clcone_options *o, const clcone_context *ctx,
                                          const clc_contract_row **row, clcone_error *err);
/* The row of (m, s) on a form in forms; NULL if none. */
const clc_contract_row *clc_contract_find(unsigned forms, clcone_model m, clcone_solver s);
/* The solver a time step that failed with options o on ctx (NULL = the
 * reference) is solved again with; CLCONE_SOLVER_DEFAULT when none. */
clcone_solver clc_contract_fallback(const clcone_options *o, const clcone_context *ctx);

/* sap's entry on either backend (ctx NULL = the reference), called by a
 * plan for a scene: options and scene checked, then solved. r (3 per
 * contact): the warm start impulses when o->warm_start (v0 = v* + M^-1
 * J' r), else v0 = v*; on exit the contact impulses gamma of the
 * solution, so that clcone_scene_apply_impulses(r) gives v - v*.
 * res->items[0]: iters = Newton iterations, inner_iters = CG iterations
 * (0 for the reference), cost and error. */
clc_sap_fn clc_sap_solve;
/* The option checks of a sap solve (model, sap_beta, stopping options). */
clcone_status clc_sap_check_options(const clcone_options *o, clcone_error *err);
/* The same with the extra parameters (prm may be NULL). */
clcone_status clc_sap_solve_ex(clcone_context *ctx, const clcone_scene *s, const clcone_options *o,
                                  clc_sap_params *prm, double *r, clcone_result *res,
                                  clcone_error *err);

#endif
