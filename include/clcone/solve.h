/* clcone public API: models, solvers, options, results, solves and plans. */
#ifndef CLCONE_API_SOLVE_H
#define CLCONE_API_SOLVE_H

#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clcone_model {
    CLCONE_MODEL_COULOMB = 0, /* exact Coulomb law (SOCCP, De Saxce) */
    CLCONE_MODEL_CCP,         /* convex cone QP (Anitescu) */
    CLCONE_MODEL_PYRAMID,     /* N-facet pyramid LCP */
    CLCONE_MODEL_SOFT,        /* MuJoCo-style regularised dual: cone QP with
                                 W + R and q - a_ref */
    CLCONE_MODEL_SAP,         /* Drake-SAP-style unconstrained convex
                                 problem in body velocities (body form) */
    CLCONE_MODEL_COUNT        /* the number of models, not a model */
} clcone_model;

typedef enum clcone_solver {
    CLCONE_SOLVER_DEFAULT = -1, /* the backend's default for the model
                                   (clcone_options_resolve) */
    CLCONE_SOLVER_NSGS = 0,  /* coulomb: Gauss-Seidel, exact local solve */
    CLCONE_SOLVER_JACOBI,    /* all: projected Jacobi */
    CLCONE_SOLVER_PGS,       /* all: projected Gauss-Seidel */
    CLCONE_SOLVER_APGD,      /* ccp: accelerated projected gradient */
    CLCONE_SOLVER_LEMKE,     /* pyramid: Lemke's complementary pivoting */
    CLCONE_SOLVER_CGS,       /* all: coloured Gauss-Seidel (contacts of one
                                colour share no W block / body) */
    CLCONE_SOLVER_ACGS,      /* ccp/soft: coloured Gauss-Seidel with Nesterov
                                momentum and gradient restart (large piles) */
    CLCONE_SOLVER_NEWTON,    /* coulomb: semismooth Newton (Alart-Curnier)
                                with a line search */
    CLCONE_SOLVER_HYBRID,    /* coulomb: nsgs until its pace stalls, then
                                newton (the reference's default below tol
                                1e-6) */
    CLCONE_SOLVER_COUNT      /* the number of solvers, not a solver */
} clcone_solver;

typedef enum clcone_fit {
    CLCONE_FIT_OUTER = 0,    /* facets tangent to the circle */
    CLCONE_FIT_INNER         /* vertices on the circle */
} clcone_fit;

typedef enum clcone_run_status {
    CLCONE_CONVERGED = 0,
    CLCONE_MAXITER,
    CLCONE_DIVERGED,
    CLCONE_FAILED
} clcone_run_status;

CLCONE_API const char *clcone_model_name(clcone_model m);
CLCONE_API const char *clcone_solver_name(clcone_solver s);
CLCONE_API const char *clcone_run_status_name(clcone_run_status s);
/* Parse names as used on the command line; return CLCONE_EINVAL and list
 * the accepted names in err when unknown. */
CLCONE_API clcone_status clcone_parse_model(const char *s, clcone_model *m,
                                 clcone_error *err);
CLCONE_API clcone_status clcone_parse_solver(const char *s, clcone_solver *v,
                                  clcone_error *err);

/* Convergence history: one point per error check of an iterative solver
 * (the schedule of check_every), on the reference and on the device. */
typedef struct clcone_history_point {
    int prob;            /* problem of the batch */
    int iter;            /* iteration of the check (1-based) */
    double time_ms;      /* since the start of that problem's solve */
    double error;        /* the model's error at the check */
} clcone_history_point;

typedef struct clcone_history {
    clcone_history_point *points; /* grown by the solvers; clcone_history_free */
    int count, capacity;
    int truncated;       /* 1 when memory ran out: later checks are missing
                            (the solve itself is unaffected) */
} clcone_history;

CLCONE_API void clcone_history_free(clcone_history *h);

typedef struct clcone_options {
    clcone_model model;
    clcone_solver solver; /* default CLCONE_SOLVER_DEFAULT */
    int facets;          /* pyramid: 3 <= N <= CLCONE_MAX_FACETS (default 8) */
    clcone_fit fit;      /* pyramid: outer (default) or inner */
    double tol;          /* stop when error <= tol; 0 (the default) = the
                            precision's default (clcone_options_resolve) */
    int max_iter;        /* sweeps / iterations cap (default 1000000) */
    int check_every;     /* error measured at each of the first 100
                            iterations, then every K (default 10), on
                            every backend; the general-block solvers
                            (clc_solve_blocks) at the first, then
                            every K from the start */
    double max_seconds;  /* wall-clock cap per problem, 0 = none */
    int warm_start;      /* 1: start from the r passed in; 0: from r = 0 */
    /* soft: min 1/2 r'(W + R)r + r'(q - a_ref) over the cones, R diagonal.
     * From MuJoCo-style solref (time constant tc, damping ratio z) and a
     * constant solimp impedance d: R_i = (1 - d)/d W_ii per row, and on
     * the normal row the velocity MuJoCo's reference acceleration leads
     * to, a_ref = v0 + dt (-b v0 - k d gap), with b = 2/(d tc),
     * k = 1/(d^2 tc^2 z^2), v0 the contact's normal velocity at the
     * start of the step (soft_v0; 0 when NULL), gap 0 for local-form
     * problems, the contact's gap for scenes; a_ref 0 on the tangent
     * rows. Or R and a_ref given directly (soft_R, soft_aref: 3 per
     * contact; a_ref 0 when soft_R is given without soft_aref). */
    double soft_timeconst;  /* solref[0] in s (default 0.02) */
    double soft_dampratio;  /* solref[1] (default 1) */
    double soft_impedance;  /* solimp d in (0, 1) (default 0.9) */
    double soft_dt;         /* time step of the problem in s (default 0.01;
                               the stepper uses the world's dt). The time
                               constant used is max(soft_timeconst,
                               2 soft_dt), MuJoCo's safe minimum: a shorter
                               one makes the discrete step add energy */
    const double *soft_R;   /* optional per-contact diagonal R (3n), >= 0 */
    const double *soft_aref;/* optional reference velocity (3n) */
    const double *soft_v0;  /* optional normal velocity of each contact at
                               the start of the step (n), before the free
                               velocity's dt * forces; the stepper sets it */
    /* sap: near-rigid regularisation parameter (Castro et al. 2022,
     * default 1) and Newton tolerances */
    double sap_beta;
    /* sap, Drake's contact parameters: each contact's stiffness k in
     * N/m (0, the default: rigid, the near-rigid floor alone) and its
     * dissipation time scale tau_d in s (0, the default: beta dt / pi,
     * a critically damped period of beta dt); docs/solvers.md */
    double sap_stiffness;
    double sap_dissipation;
    /* Optional (default NULL): every error check of the jacobi, pgs, cgs,
     * nsgs and apgd solvers appends a point here, on the reference and
     * on the device; lemke and sap record none. */
    clcone_history *history;
    /* Optional (default NULL): called at the same checks with the problem
     * of the batch, the iteration and the error, so that a caller can
     * show progress (the library itself never prints). */
    void (*progress)(void *user, int prob, int iter, double error);
    void *progress_user;
    /* Optional (default NULL): a flag another thread (or a signal
     * handler) sets non-zero to stop the solve early. It is read where the
     * time cap is (at every iteration of the host loops, between launches
     * of the device's whole-problem kernels); the solve then stops as at
     * the cap, status maxiter, reason "cancelled", its reactions those of
     * the last iterate. Lemke's pivoting does not read it. */
    const volatile int *cancel;
} clcone_options;

/* Projection onto the pyramid costs O(N) per contact and iteration. */
#define CLCONE_MAX_FACETS 1024

CLCONE_API void clcone_options_default(clcone_options *o);

/* The R and a_ref (3 per contact each) that the soft model under o gives
 * p, with the contacts' gaps (NULL: 0): soft problems of different time
 * steps or gaps share one batch by these, through soft_R and soft_aref. */
CLCONE_API clcone_status clcone_soft_terms_of(const clcone_problem *p, const clcone_options *o,
                                              const double *gap, double *R, double *aref,
                                              clcone_error *err);

/* The forms a problem comes in. Each has its own rows in the solver
 * table below: a solver runs on a form only where a row says so. */
typedef enum clcone_form {
    CLCONE_FORM_LOCAL,  /* W, q, mu: three rows a contact (clcone_problem) */
    CLCONE_FORM_BODY,   /* bodies and contacts: a scene (clcone_scene) */
    CLCONE_FORM_BLOCKS, /* MuJoCo's constraint rows in general blocks, dual */
    CLCONE_FORM_PRIMAL, /* MuJoCo's problem in accelerations, primal */
    CLCONE_FORM_SCENES, /* the body form batched: many small scenes, each
                           in its local form, one device batch */
    CLCONE_FORM_COUNT
} clcone_form;
#define CLCONE_FORM_BIT(f) (1u << (f))
/* A scene of at most this many contacts joins a batch of scenes in its
 * local form (CLCONE_FORM_SCENES); a larger one is solved alone in its
 * body form. Measured (bench section 3): the local form's sweeps were
 * 1.8-4.9x faster than the body form's up to about 1,000 contacts, but
 * past 1,500 its colouring may take several times the iterations. */
#define CLCONE_SCENES_MAX_CONTACTS 1024
/* "local", "body", "blocks", "primal", "scenes"; "?" out of range. */
CLCONE_API const char *clcone_form_name(clcone_form f);

/* One row of the solver table: the forms on which solver serves model,
 * on which backends, where it is the default, and its default tolerance.
 * The defaults, the option checks, their error messages, `clcone solve
 * --help` and `clcone solvers` are made from it. soft takes ccp's
 * solvers on the local and body forms (it is solved as a ccp on W + R). */
typedef struct clcone_offer {
    unsigned forms;          /* CLCONE_FORM_BIT of each form it solves */
    clcone_model model;
    clcone_solver solver;
    int reference;           /* 1: the CPU reference runs it */
    int device;              /* 1: OpenCL devices run it */
    int reference_default;   /* 1: the reference's default for the model */
    int device_default;      /* 1: the devices' default for the model */
    double tol_float;        /* tol 0 becomes this on a float device */
    double tol_double;       /* ... and this in double, the reference's */
    const char *help;        /* what the solver does for the model, a line */
} clcone_offer;
/* Row i of the table, or NULL past its end. */
CLCONE_API const clcone_offer *clcone_offer_at(int i);
/* The solvers model m offers on any of `forms` (CLCONE_FORM_BIT mask) on
 * the reference (device 0) or on devices, in the table's order, as "nsgs
 * (default), cgs, jacobi, ..."; "" where none. */
CLCONE_API void clcone_offers_describe(unsigned forms, clcone_model m, int device, char *buf, size_t len);
/* Whether a row of form f runs o's model and solver (unset: the
 * backend's default for the model) on devices (device 1) or the
 * reference (0). */
CLCONE_API int clcone_form_offers(clcone_form f, const clcone_options *o, int device);

/* The one rule for what options leave unset, for the backend ctx (NULL =
 * the CPU reference), on the local and body forms: solver
 * CLCONE_SOLVER_DEFAULT becomes the backend's default for the model in
 * the table above, tol 0 that row's default tolerance for the precision
 * (1e-5 on a float device, whose rounding floor is about 1e-7, but 1e-4
 * for sap, whose relative gradient float evaluates only to a few 1e-5;
 * 1e-8 in double). Every solve applies it to its copy of the options. */
typedef struct clcone_context clcone_context; /* an OpenCL device, device.h */
CLCONE_API void clcone_options_resolve(clcone_options *o, const clcone_context *ctx);

/* The options a caller set explicitly (the CLI's flags, Python's
 * keywords), as bits of `given` for clcone_options_check_given. */
enum {
    CLCONE_GIVEN_SOLVER = 1,
    CLCONE_GIVEN_FACETS = 2,
    CLCONE_GIVEN_FIT = 4,
    CLCONE_GIVEN_TOL = 8,
    CLCONE_GIVEN_MAX_ITER = 16,
    CLCONE_GIVEN_CHECK_EVERY = 32,
    CLCONE_GIVEN_MAX_SECONDS = 64,
    CLCONE_GIVEN_SOFT_TIMECONST = 128,
    CLCONE_GIVEN_SOFT_DAMPRATIO = 256,
    CLCONE_GIVEN_SOFT_IMPEDANCE = 512,
    CLCONE_GIVEN_SOFT_DT = 1024,
    CLCONE_GIVEN_SAP_BETA = 2048,
    CLCONE_GIVEN_SAP_STIFFNESS = 4096,
    CLCONE_GIVEN_SAP_DISSIPATION = 8192
};
/* The one rule for options set that do not apply, which the CLI and the
 * Python package share: CLCONE_EINVAL for an option in `given` that
 * o->model does not use (facets and fit: pyramid; soft_*: soft, and
 * soft_dt not on a scene (scene 1), which steps with its own dt;
 * sap_beta, sap_stiffness, sap_dissipation: sap; solver and check_every: every model but sap) and for a
 * tol given that is not > 0 (unset, 0 means the precision's default).
 * The message starts with the option's name as clcone_options spells it
 * ("facets does not apply: ..."; the CLI's flag is --facets). Values are
 * checked by the solve (clcone_plan_create). */
CLCONE_API clcone_status clcone_options_check_given(const clcone_options *o, unsigned given, int scene,
                                                    clcone_error *err);

typedef struct clcone_prob_result {
    clcone_run_status status;
    int iters;           /* iterations (Newton iterations for sap) */
    int inner_iters;     /* inner iterations where a method has them
                            (CG iterations for sap), else 0 */
    double cost;         /* objective at exit for the convex models (ccp,
                            soft, sap), else 0 */
    double error;        /* error measure of the model, see clcone_error_of */
    double time_ms;
    char reason[160];    /* why it stopped when not converged */
} clcone_prob_result;

/* Per problem of the batch: `items` has p->nprob entries. */
typedef struct clcone_result {
    int nprob;
    clcone_prob_result *items;
    double time_ms;      /* whole call */
} clcone_result;

CLCONE_API void clcone_result_free(clcone_result *r);

/* One entry point for every backend: ctx NULL = the CPU reference (double,
 * one thread, the problems of a batch one after another), else the OpenCL
 * device. Device solvers: jacobi (all models), apgd (ccp, and coulomb as
 * De Saxce fixed point with APGD inner solves), cgs (all models). r (3n)
 * holds the warm start on entry when o->warm_start, and the reactions on
 * exit. Data are uploaded once, iterated on the device and only the
 * reactions and per-problem errors come back; to solve the same structure
 * again, see clcone_plan_create. */
CLCONE_API clcone_status clcone_solve(clcone_context *ctx, const clcone_problem *p,
                           const clcone_options *o, double *r,
                           clcone_result *res, clcone_error *err);
/* The same on a body-form scene: the reference forms W (local form); the
 * device works matrix-free from Jacobians and masses. */
CLCONE_API clcone_status clcone_solve_scene(clcone_context *ctx, const clcone_scene *s,
                                 const clcone_options *o, double *r,
                                 clcone_result *res, clcone_error *err);

/* Plans: set up once, solve many. A plan keeps what a solve of one
 * problem (or batch) or scene needs on its backend: on a device the
 * uploaded W or Jacobians and masses, step sizes, colouring and kernels,
 * run once at creation (so first-launch compilation is never solve time).
 * Each clcone_plan_solve then uploads only the start r and reports the
 * time of the solve alone. Between solves, clcone_plan_set_q gives a
 * local-form plan a new q (3n), clcone_plan_set_scene a scene plan
 * another scene: new free velocities, positions or contacts (their
 * number too) on the same device buffers, grown only when the scene
 * needs more than they hold, each array uploaded only when it differs
 * from the last scene's (new free velocities: q = J v* alone). ctx NULL
 * plans for the CPU reference, which keeps a scene's assembled local form
 * until the next clcone_plan_set_scene; sap scenes are set up per solve on
 * either backend. Options are resolved (clcone_options_resolve) and
 * checked once, at creation; clcone_solve and clcone_solve_scene are a
 * plan made, solved and freed. The plan copies what it is given; the
 * context must outlive it. */
typedef struct clcone_plan clcone_plan;
CLCONE_API clcone_status clcone_plan_create(clcone_context *ctx, const clcone_problem *p,
                                            const clcone_options *o, clcone_plan **plan,
                                            clcone_error *err);
CLCONE_API clcone_status clcone_plan_create_scene(clcone_context *ctx, const clcone_scene *s,
                                                  const clcone_options *o, clcone_plan **plan,
                                                  clcone_error *err);
CLCONE_API clcone_status clcone_plan_set_q(clcone_plan *plan, const double *q, clcone_error *err);
CLCONE_API clcone_status clcone_plan_set_scene(clcone_plan *plan, const clcone_scene *s,
                                               clcone_error *err);
/* The plan's time cap from its next solve on (seconds, 0 = none), as
 * o->max_seconds: a batch solved as plans in turn gives each plan what
 * the batch's cap has left. */
CLCONE_API clcone_status clcone_plan_set_max_seconds(clcone_plan *plan, double seconds, clcone_error *err);
/* r: the warm start on entry when the plan's options say warm_start, the
 * reactions on exit; res as for clcone_solve. */
CLCONE_API clcone_status clcone_plan_solve(clcone_plan *plan, double *r, clcone_result *res,
                                           clcone_error *err);
CLCONE_API void clcone_plan_free(clcone_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
