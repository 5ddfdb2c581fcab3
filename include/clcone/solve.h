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
    CLCONE_MODEL_SOFT,        /* MuJoCo-style regularised dual: cone QP on W + R, q - a_ref */
    CLCONE_MODEL_SAP,         /* Drake-SAP-style convex problem in body velocities (body form) */
    CLCONE_MODEL_COUNT        /* the number of models, not a model */
} clcone_model;

typedef enum clcone_solver {
    CLCONE_SOLVER_DEFAULT = -1, /* the backend's default for the model (clcone_options_resolve) */
    CLCONE_SOLVER_NSGS = 0,  /* coulomb: Gauss-Seidel, exact local solve */
    CLCONE_SOLVER_JACOBI,    /* all: projected Jacobi */
    CLCONE_SOLVER_PGS,       /* all: projected Gauss-Seidel */
    CLCONE_SOLVER_APGD,      /* ccp: accelerated projected gradient */
    CLCONE_SOLVER_LEMKE,     /* pyramid: Lemke's complementary pivoting */
    CLCONE_SOLVER_CGS,       /* all: coloured Gauss-Seidel (one colour shares no W block / body) */
    CLCONE_SOLVER_ACGS,      /* ccp/soft: cgs with Nesterov momentum and restart (large piles) */
    CLCONE_SOLVER_NEWTON,    /* coulomb: semismooth Newton (Alart-Curnier), line search */
    CLCONE_SOLVER_HYBRID,    /* coulomb: nsgs until its pace stalls, then newton (default below tol 1e-6) */
    CLCONE_SOLVER_IPM,       /* ccp/soft: primal-dual interior point, sparse Cholesky; coulomb: its fixed point (reference) */
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
/* Names as the command line spells them; unknown: CLCONE_EINVAL listing the accepted ones. */
CLCONE_API clcone_status clcone_parse_model(const char *s, clcone_model *m,
                                 clcone_error *err);
CLCONE_API clcone_status clcone_parse_solver(const char *s, clcone_solver *v,
                                  clcone_error *err);

/* Convergence history: a point per error check of an iterative solver, on either backend. */
typedef struct clcone_history_point {
    int prob;            /* problem of the batch */
    int iter;            /* iteration of the check (1-based) */
    double time_ms;      /* since the start of that problem's solve */
    double error;        /* the model's error at the check */
} clcone_history_point;

typedef struct clcone_history {
    clcone_history_point *points; /* grown by the solvers; clcone_history_free */
    int count, capacity;
    int truncated;       /* 1: memory ran out, later checks missing (the solve unaffected) */
} clcone_history;

CLCONE_API void clcone_history_free(clcone_history *h);

typedef struct clcone_options {
    clcone_model model;
    clcone_solver solver; /* default CLCONE_SOLVER_DEFAULT */
    int facets;          /* pyramid: 3 <= N <= CLCONE_MAX_FACETS (default 8) */
    clcone_fit fit;      /* pyramid: outer (default) or inner */
    double tol;          /* stop at error <= tol; 0 (default): the precision's (resolve) */
    int max_iter;        /* sweeps / iterations cap (default 1000000) */
    int check_every;     /* error at each of the first 100 iterations, then every K (10) */
    double max_seconds;  /* wall-clock cap per problem, 0 = none */
    int warm_start;      /* 1: start from the r passed in; 0: from r = 0 */
    /* soft: min 1/2 r'(W + R)r + r'(q - a_ref) over the cones, R diagonal, from solref and
     * solimp (docs/solvers.md) or given (soft_R, soft_aref). */
    double soft_timeconst;  /* solref[0] in s (default 0.02) */
    double soft_dampratio;  /* solref[1] (default 1) */
    double soft_impedance;  /* solimp d in (0, 1) (default 0.9) */
    double soft_dt;         /* the problem's time step in s (default 0.01; the stepper: the
                               world's dt); tc used is max(soft_timeconst, 2 soft_dt) */
    const double *soft_R;   /* optional per-contact diagonal R (3n), >= 0 */
    const double *soft_aref;/* optional reference velocity (3n; 0 when soft_R alone is given) */
    const double *soft_v0;  /* optional normal velocity of each contact at the step's start (n),
                               before dt * forces; the stepper sets it */
    /* sap: near-rigid regularisation (Castro et al. 2022, default 1) */
    double sap_beta;
    /* sap: contact stiffness k in N/m (0, default: rigid) */
    double sap_stiffness;
    /* sap: dissipation time scale tau_d in s (0, default: beta dt / pi) */
    double sap_dissipation;
    /* Optional: each error check of jacobi, pgs, cgs, acgs, nsgs, apgd, hybrid (and on the reference newton,
     * ipm) appends a point; lemke, sap none; a device's newton refuses a history (CLCONE_ENOTSUP). */
    clcone_history *history;
    /* Optional: called at the same checks (problem of the batch, iteration, error). */
    void (*progress)(void *user, int prob, int iter, double error);
    void *progress_user;
    /* Optional: set non-zero (any thread, a signal handler) to stop as at the time cap: status
     * maxiter, reason "cancelled", the last iterate's reactions; Lemke's pivoting ignores it. */
    const volatile int *cancel;
    /* Host threads for a batch's problems, 0 (default: 1) to CLCONE_SOLVE_THREADS: the reference
     * solves its problems on them, a device hands its hybrid's problems to the host's Newton on
     * them. The same bits on any number; with history or progress set, one thread. */
    int threads;
} clcone_options;

/* The most host threads clcone_options.threads may ask for. */
#define CLCONE_SOLVE_THREADS 256

/* The most pyramid facets (projection costs O(N) a contact and iteration). */
#define CLCONE_MAX_FACETS 1024

CLCONE_API void clcone_options_default(clcone_options *o);

/* The soft model's R and a_ref (3 per contact each) for p under o with the contacts' gaps
 * (NULL: 0), to batch soft problems of different steps or gaps via soft_R and soft_aref. */
CLCONE_API clcone_status clcone_soft_terms_of(const clcone_problem *p, const clcone_options *o,
                                              const double *gap, double *R, double *aref,
                                              clcone_error *err);

/* The forms a problem comes in; a solver runs on a form only where a table row says so. */
typedef enum clcone_form {
    CLCONE_FORM_LOCAL,  /* W, q, mu: three rows a contact (clcone_problem) */
    CLCONE_FORM_BODY,   /* bodies and contacts: a scene (clcone_scene) */
    CLCONE_FORM_BLOCKS, /* MuJoCo's constraint rows in general blocks, dual */
    CLCONE_FORM_PRIMAL, /* MuJoCo's problem in accelerations, primal */
    CLCONE_FORM_SCENES, /* small scenes, each in its local form, as one device batch */
    CLCONE_FORM_COUNT
} clcone_form;
#define CLCONE_FORM_BIT(f) (1u << (f))
/* The most contacts of a scene joining CLCONE_FORM_SCENES (why: docs/measured.md); a larger one is solved alone. */
#define CLCONE_SCENES_MAX_CONTACTS 1024
/* "local", "body", "blocks", "primal", "scenes"; "?" out of range. */
CLCONE_API const char *clcone_form_name(clcone_form f);

/* A row of the solver table (docs/solvers.md): forms, model, solver, backends, defaults. */
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
/* Model m's solvers on any of `forms` (mask) on the reference (device 0) or devices, in the
 * table's order: "nsgs (default), cgs, jacobi, ..."; "" where none. */
CLCONE_API void clcone_offers_describe(unsigned forms, clcone_model m, int device, char *buf, size_t len);
/* Whether a row of form f runs o's model and solver (unset: the default) on devices (1) or ref (0). */
CLCONE_API int clcone_form_offers(clcone_form f, const clcone_options *o, int device);

/* Fills what o leaves unset for backend ctx (NULL: reference), local and body forms: the default
 * solver, and tol 0 as the row's (1e-5 on a float device, 1e-4 for sap there; 1e-8 in double).
 * Every solve applies it to its copy of the options. */
typedef struct clcone_context clcone_context; /* an OpenCL device, device.h */
CLCONE_API void clcone_options_resolve(clcone_options *o, const clcone_context *ctx);

/* Bits of `given`: the options a caller set explicitly (CLI flags, Python keywords). */
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
/* CLCONE_EINVAL, the message starting with the field's name, for a `given` option o->model does
 * not use (facets, fit: pyramid; soft_*: soft, soft_dt not on a scene (scene 1); sap_*: sap;
 * solver, check_every: all but sap) or a given tol not > 0. Values are checked by the solve. */
CLCONE_API clcone_status clcone_options_check_given(const clcone_options *o, unsigned given, int scene,
                                                    clcone_error *err);

typedef struct clcone_prob_result {
    clcone_run_status status;
    int iters;           /* iterations (Newton iterations for sap) */
    int inner_iters;     /* inner iterations (CG for sap; the hybrid's sweeps), else 0 */
    double cost;         /* objective at exit for ccp, soft, sap; else 0 */
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

/* Solves on ctx (NULL: the CPU reference, double, one thread); r (3n): the start when
 * o->warm_start, the reactions on exit. A plan made, solved and freed. */
CLCONE_API clcone_status clcone_solve(clcone_context *ctx, const clcone_problem *p,
                           const clcone_options *o, double *r,
                           clcone_result *res, clcone_error *err);
/* The same on a body-form scene. */
CLCONE_API clcone_status clcone_solve_scene(clcone_context *ctx, const clcone_scene *s,
                                 const clcone_options *o, double *r,
                                 clcone_result *res, clcone_error *err);

/* Set up once, solve many (docs/library.md): options resolved and checked at creation; set_q
 * gives a new q (3n), set_scene another scene (any contacts). The plan copies what it is given;
 * the context must outlive it. */
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
/* The time cap (s, 0: none) from the next solve on, as o->max_seconds. */
CLCONE_API clcone_status clcone_plan_set_max_seconds(clcone_plan *plan, double seconds, clcone_error *err);
/* r: the start when the options say warm_start, the reactions on exit; res as clcone_solve's. */
CLCONE_API clcone_status clcone_plan_solve(clcone_plan *plan, double *r, clcone_result *res,
                                           clcone_error *err);
CLCONE_API void clcone_plan_free(clcone_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
