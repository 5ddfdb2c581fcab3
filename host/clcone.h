/* clcone: frictional contact problems solved on OpenCL devices.
 *
 * Public API. Every function that can fail returns a clcone_status and, when
 * given a non-NULL clcone_error, fills it with a message naming what failed
 * and where (contact, body, row, file line). The library never prints and
 * never exits.
 *
 * Conventions (Siconos/FCLib local form): a problem has n contacts, each with
 * a 3-vector in its contact frame, normal component first: r = (r_n, r_t1,
 * r_t2). The relative velocity is u = W r + q, W being 3n x 3n and stored as
 * 3x3 blocks in block-CSR.
 */
#ifndef CLCONE_H
#define CLCONE_H

#include <stddef.h>
#include <stdio.h>

#define CLCONE_VERSION_MAJOR 0
#define CLCONE_VERSION_MINOR 3
#define CLCONE_VERSION_PATCH 0
#define CLCONE_VERSION "0.3.0"

/* The library is built with -fvisibility=hidden: only declarations marked
 * CLCONE_API are exported from the shared library, so internal helpers
 * cannot clash with a host application's symbols. */
#if defined(__GNUC__)
#define CLCONE_API __attribute__((visibility("default")))
#else
#define CLCONE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the library linked at run time ("0.3.0"); compare with
 * CLCONE_VERSION, the version of the header compiled against. */
CLCONE_API const char *clcone_version(void);

typedef enum clcone_status {
    CLCONE_OK = 0,
    CLCONE_EINVAL,   /* invalid argument or invalid problem data */
    CLCONE_EIO,      /* file could not be opened, read or written */
    CLCONE_EFORMAT,  /* file content malformed */
    CLCONE_ENOMEM,   /* host allocation failed */
    CLCONE_EDEVICE,  /* OpenCL platform, device, build or run failure */
    CLCONE_ENOTSUP   /* combination not supported (e.g. solver for model) */
} clcone_status;

typedef struct clcone_error {
    clcone_status code;
    char msg[1024];
} clcone_error;

/* Human name of a status code ("invalid input", ...). */
CLCONE_API const char *clcone_status_name(clcone_status s);

/* ------------------------------------------------------------------ */
/* Local-form problem, possibly a batch of independent problems.       */
/* ------------------------------------------------------------------ */

/* W in block-CSR with 3x3 blocks; each block is stored ROW-MAJOR (9
 * doubles). Block columns within a block row are strictly increasing and
 * every diagonal block is present.
 *
 * A batch is several independent problems concatenated: problem k owns
 * contacts [prob_off[k], prob_off[k+1]). No block of W may couple contacts
 * of two different problems (checked by clcone_problem_validate). A single
 * problem is a batch with nprob = 1. */
typedef struct clcone_problem {
    int n;            /* contacts (all problems of the batch) */
    int nnzb;         /* stored 3x3 blocks */
    int *row_ptr;     /* n + 1 */
    int *col;         /* nnzb */
    double *blocks;   /* 9 * nnzb, row-major per block */
    double *q;        /* 3n */
    double *mu;       /* n */
    int nprob;        /* problems in the batch (>= 1) */
    int *prob_off;    /* nprob + 1 contact offsets */
} clcone_problem;

/* Allocates all arrays for n contacts and nnzb blocks (zeroed; nprob = 1,
 * prob_off = {0, n}). */
CLCONE_API clcone_status clcone_problem_alloc(clcone_problem *p, int n, int nnzb,
                                   clcone_error *err);
CLCONE_API void clcone_problem_free(clcone_problem *p);

/* Builds a problem from a dense 3n x 3n row-major W; all-zero off-diagonal
 * blocks are dropped. */
CLCONE_API clcone_status clcone_problem_from_dense(clcone_problem *p, int n,
                                        const double *W_rowmajor,
                                        const double *q, const double *mu,
                                        clcone_error *err);

/* Checks structure and values: sizes, sorted in-range block columns,
 * diagonal blocks present, finite W/q/mu, mu >= 0, batch offsets
 * consistent and no coupling across problems, and each diagonal block's
 * symmetric part positive semidefinite with a strictly positive normal
 * entry W_nn > 0 (the solvers divide by it). Semidefiniteness is accepted
 * up to -1e-6 * max|block| on the smallest eigenvalue, since real files
 * carry rounding (see docs/formats.md section 6). */
CLCONE_API clcone_status clcone_problem_validate(const clcone_problem *p,
                                      clcone_error *err);

/* Concatenates k problems (each may itself be a batch) into one batch. */
CLCONE_API clcone_status clcone_batch_concat(const clcone_problem *const *parts, int k,
                                  clcone_problem *out, clcone_error *err);

/* Copies problem `index` of a batch out as a stand-alone problem. */
CLCONE_API clcone_status clcone_batch_extract(const clcone_problem *batch, int index,
                                   clcone_problem *out, clcone_error *err);

/* u = W r + q (3n). */
CLCONE_API void clcone_problem_velocity(const clcone_problem *p, const double *r,
                             double *u);

/* ------------------------------------------------------------------ */
/* Body form                                                           */
/* ------------------------------------------------------------------ */

typedef struct clcone_body {
    double x[3];           /* centre of mass, world frame */
    double inv_mass;       /* 0 = static (infinite mass) */
    double inv_inertia[9]; /* world-frame inverse inertia, row-major */
    double v[6];           /* free velocity v* = (linear, angular) */
} clcone_body;

/* Contact between bodies a and b (b = -1: the static world). The unit
 * normal points from b towards a: a positive normal impulse pushes a along
 * +normal and b along -normal, and u_n > 0 means the bodies separate.
 * u = (velocity of a's material point) - (velocity of b's). */
typedef struct clcone_contact {
    int a, b;
    double point[3];
    double normal[3];
    double mu;
    double gap;            /* signed gap (informative; < 0 = penetration) */
} clcone_contact;

typedef struct clcone_scene {
    int nbodies, ncontacts;
    clcone_body *bodies;
    clcone_contact *contacts;
} clcone_scene;

/* Validates bodies (finite values, inv_mass >= 0, symmetric PSD inverse
 * inertia) and contacts (indices in range, a != b, unit normal within
 * 1e-6, mu >= 0, not two static ends). */
CLCONE_API clcone_status clcone_scene_validate(const clcone_scene *s, clcone_error *err);

/* Contact frame: the normal, then t1 = normalize(normal x e_k) where e_k is
 * the world axis with the smallest |normal_k| (lowest k on ties), and
 * t2 = normal x t1. frame[0..2] = normal, [3..5] = t1, [6..8] = t2. */
CLCONE_API void clcone_contact_frame(const double normal[3], double frame[9]);

/* Local form of the scene's contact problem: W = J M^-1 J^T (only blocks
 * of contacts that share a non-static body), q = J v*. */
CLCONE_API clcone_status clcone_scene_to_local(const clcone_scene *s, clcone_problem *p,
                                    clcone_error *err);

/* Velocity change of every body (6 per body) caused by reactions r:
 * dv = M^-1 J^T r. */
CLCONE_API void clcone_scene_apply_impulses(const clcone_scene *s, const double *r,
                                 double *dv);

CLCONE_API void clcone_scene_free(clcone_scene *s);

/* Scene generators (body form). Each returns bodies at rest in contact
 * (contacts detected at the generated state, gap ~ 0) with the free
 * velocity of one time step dt under gravity g = (0, 0, -9.81):
 * v* = v + dt g. Deterministic for a given seed. */
/* A tower of k unit boxes (mass 1) on the static ground; 4 corner
 * contacts per interface, 4k contacts. */
CLCONE_API clcone_status clcone_gen_stack(int k, double mu, double dt, clcone_scene *s,
                               clcone_error *err);
/* About n spheres (radius 0.5 +- spread, unit density) packed densely in
 * a box container (static floor and walls) with contacts wherever two
 * spheres or a sphere and a wall touch. */
CLCONE_API clcone_status clcone_gen_pile(int n, double mu, double dt, double spread,
                              unsigned seed, clcone_scene *s,
                              clcone_error *err);
/* L x L x H spheres of radius 0.5 in a simple cubic lattice resting on
 * each other and on the ground: about 3 L^2 H contacts. */
CLCONE_API clcone_status clcone_gen_grid(int L, int H, double mu, double dt,
                              clcone_scene *s, clcone_error *err);

/* ------------------------------------------------------------------ */
/* Solving                                                             */
/* ------------------------------------------------------------------ */

typedef enum clcone_model {
    CLCONE_MODEL_COULOMB = 0, /* exact Coulomb law (SOCCP, De Saxce) */
    CLCONE_MODEL_CCP,         /* convex cone QP (Anitescu) */
    CLCONE_MODEL_PYRAMID,     /* N-facet pyramid LCP */
    CLCONE_MODEL_SOFT,        /* MuJoCo-style regularised dual: cone QP with
                                 W + R and q - a_ref */
    CLCONE_MODEL_SAP          /* Drake-SAP-style unconstrained convex
                                 problem in body velocities (body form) */
} clcone_model;

typedef enum clcone_solver {
    CLCONE_SOLVER_DEFAULT = -1, /* the backend's default for the model
                                   (clcone_options_resolve) */
    CLCONE_SOLVER_NSGS = 0,  /* coulomb: Gauss-Seidel, exact local solve */
    CLCONE_SOLVER_JACOBI,    /* coulomb/ccp/pyramid: projected Jacobi */
    CLCONE_SOLVER_PGS,       /* ccp/pyramid: projected Gauss-Seidel */
    CLCONE_SOLVER_APGD,      /* ccp: accelerated projected gradient */
    CLCONE_SOLVER_LEMKE,     /* pyramid: Lemke's complementary pivoting */
    CLCONE_SOLVER_CGS        /* all: coloured Gauss-Seidel (contacts of one
                                colour share no W block / body) */
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
                            every backend */
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
    /* Optional (default NULL): every error check of the jacobi, pgs, cgs,
     * nsgs and apgd solvers appends a point here, on the reference and
     * on the device; lemke and sap record none. */
    clcone_history *history;
    /* Optional (default NULL): called at the same checks with the problem
     * of the batch, the iteration and the error, so that a caller can
     * show progress (the library itself never prints). */
    void (*progress)(void *user, int prob, int iter, double error);
    void *progress_user;
} clcone_options;

/* Projection onto the pyramid costs O(N) per contact and iteration. */
#define CLCONE_MAX_FACETS 1024

CLCONE_API void clcone_options_default(clcone_options *o);

/* The one rule for what options leave unset, for the backend ctx (NULL =
 * the CPU reference): solver CLCONE_SOLVER_DEFAULT becomes the backend's
 * default for the model (reference: nsgs for coulomb, apgd for ccp and
 * soft, lemke for pyramid; device: cgs for coulomb and pyramid, apgd for
 * ccp and soft; sap ignores the solver), tol 0 becomes the precision's
 * default (1e-5 on a float device, whose rounding floor is about 1e-7;
 * 1e-8 in double). Every solve applies it to its copy of the options. */
typedef struct clcone_context clcone_context; /* an OpenCL device, below */
CLCONE_API void clcone_options_resolve(clcone_options *o, const clcone_context *ctx);

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


/* ------------------------------------------------------------------ */
/* OpenCL devices                                                      */
/* ------------------------------------------------------------------ */

typedef struct clcone_device_info {
    int index;                  /* position in the list (--device N) */
    char platform[128];
    char name[128];
    char version[128];          /* OpenCL version string */
    int is_gpu;
    int is_cpu;                 /* CL_DEVICE_TYPE_CPU (POCL's pthread device) */
    int compute_units;
    unsigned long long global_mem;
    unsigned long long max_alloc;
    int fp64;                   /* cl_khr_fp64 */
} clcone_device_info;

/* Lists every device of every platform (*list is malloc'ed; free()). With
 * no platform installed: CLCONE_EDEVICE and a message on how to fix it. */
CLCONE_API clcone_status clcone_list_devices(clcone_device_info **list, int *count,
                                  clcone_error *err);

/* A device with its queue and built programs. */
typedef struct clcone_context clcone_context;

typedef enum clcone_precision {
    CLCONE_FLOAT = 0,
    CLCONE_DOUBLE
} clcone_precision;

/* Opens a device. spec: NULL or "" = $CLCONE_DEVICE if set, else the
 * first GPU, else the first CPU device; "N" = index in the device list;
 * "cpu" / "gpu" (or CPU / GPU) = first device of that type, or whose
 * name contains it; anything else = first device whose name contains
 * spec. ("ref", the CPU
 * reference, is not an OpenCL device: callers pass a NULL context for
 * it.) Double precision needs cl_khr_fp64. */
CLCONE_API clcone_status clcone_context_create(const char *spec, clcone_precision prec,
                                    clcone_context **ctx, clcone_error *err);
CLCONE_API void clcone_context_free(clcone_context *ctx);
CLCONE_API const clcone_device_info *clcone_context_device(const clcone_context *ctx);
CLCONE_API clcone_precision clcone_context_precision(const clcone_context *ctx);

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
 * plans for the CPU reference, which keeps copies and solves them as
 * clcone_solve does; sap scenes are set up per solve on either backend.
 * The plan copies what it is given; the context must outlive it. */
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
/* r: the warm start on entry when the plan's options say warm_start, the
 * reactions on exit; res as for clcone_solve. */
CLCONE_API clcone_status clcone_plan_solve(clcone_plan *plan, double *r, clcone_result *res,
                                           clcone_error *err);
CLCONE_API void clcone_plan_free(clcone_plan *plan);

/* ------------------------------------------------------------------ */
/* Error measures                                                      */
/* ------------------------------------------------------------------ */

/* Siconos's current relative natural-map error for the Coulomb law
 * (docs/formats.md section 2): ||F(r)|| / max(||q||, ||r||, ||u||). With
 * err_q1 non-NULL also returns the old ||F|| / (||q|| + 1). Contacts
 * [c0, c1) only, so a batch member can be measured alone. */
CLCONE_API double clcone_error_coulomb(const clcone_problem *p, const double *r,
                            int c0, int c1, double *err_q1);

/* The model's own error on contacts [c0, c1): coulomb as above; ccp the
 * same natural map without De Saxce's term (r in K, u in K*, r.u = 0);
 * pyramid the natural map with the pyramid and its support function.
 * NaN for soft and sap, whose problems (W + R; body velocities) are not
 * the (W, q) given here. */
CLCONE_API double clcone_error_of(const clcone_problem *p, const clcone_options *o,
                       const double *r, int c0, int c1);

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/* Reads a Siconos .dat FrictionContactProblem (dense or SBM storage) or,
 * when the content starts with the HDF5 signature, an FCLib local problem. */
CLCONE_API clcone_status clcone_read_problem(const char *path, clcone_problem *p,
                                  clcone_error *err);
/* Writes Siconos .dat with SBM storage and %.17g values: an exact round
 * trip through clcone_read_problem. Written atomically. */
CLCONE_API clcone_status clcone_write_problem_dat(const char *path,
                                       const clcone_problem *p,
                                       clcone_error *err);
/* Reactions: text, r_n r_t1 r_t2 per line, '#' comments. Exactly 3n
 * numbers. Writing is atomic (temp file + rename) with %.17g. */
CLCONE_API clcone_status clcone_read_reactions(const char *path, int n, double *r,
                                    clcone_error *err);
CLCONE_API clcone_status clcone_write_reactions(const char *path, int n,
                                     const double *r, clcone_error *err);

/* Output files, written as every clcone writer writes them. A regular
 * file (or, through a symbolic link, its target) is written to a
 * temporary file beside it, renamed over it by clcone_out_close(keep = 1)
 * only when everything was written, so a failed or abandoned run leaves
 * the old file whole; a new file gets 0666 & ~umask, a replaced one keeps
 * its mode. What is not a regular file (/dev/null, a terminal, a FIFO) is
 * written through, never replaced. clcone_out_close(keep = 0) discards
 * the temporary. Either way o is freed. */
typedef struct clcone_out clcone_out;
CLCONE_API clcone_status clcone_out_open(const char *path, clcone_out **o, clcone_error *err);
CLCONE_API FILE *clcone_out_file(clcone_out *o);
CLCONE_API clcone_status clcone_out_close(clcone_out *o, int keep, clcone_error *err);

/* ------------------------------------------------------------------ */
/* Scenes, time stepping and output                                    */
/* ------------------------------------------------------------------ */

/* A world is a body-form scene with what time stepping and drawing need:
 * each body's shape and orientation, static half-spaces (floor, walls,
 * slopes), gravity, the time step and the friction coefficient.
 *
 * s.bodies[i].v holds the CURRENT velocity of body i (not the free
 * velocity: clcone_world_contact_scene adds dt * gravity). inv_mass and
 * inv_inertia follow from the shape (uniform solid) and its orientation;
 * clcone_world_update_inertia recomputes them. s.contacts are the contacts
 * at the current positions (from a generator or clcone_world_detect). */
typedef enum clcone_shape_kind {
    CLCONE_SHAPE_SPHERE = 0,  /* size[0] = radius, size[1..2] = 0 */
    CLCONE_SHAPE_BOX          /* size = half extents along the body axes */
} clcone_shape_kind;

typedef struct clcone_shape {
    clcone_shape_kind kind;
    double size[3];
    double quat[4];     /* orientation (w, x, y, z), body to world, unit */
    double mass;        /* > 0, or 0 = static (never moves) */
} clcone_shape;

/* Static half-space: points x with normal . x >= offset are free. */
typedef struct clcone_plane {
    double normal[3];   /* unit */
    double offset;
} clcone_plane;

typedef struct clcone_world {
    clcone_scene s;
    clcone_shape *shapes;   /* s.nbodies */
    int nplanes;
    clcone_plane *planes;
    double gravity[3];
    double dt;              /* time step (> 0) */
    double mu;              /* friction of every detected contact */
} clcone_world;

CLCONE_API void clcone_world_free(clcone_world *w);
/* Checks shapes (positive finite sizes, unit quaternion within 1e-6,
 * mass >= 0), planes, gravity, dt, mu, and the scene. */
CLCONE_API clcone_status clcone_world_validate(const clcone_world *w, clcone_error *err);
/* inv_mass and world-frame inv_inertia from shape, mass and orientation. */
CLCONE_API void clcone_world_update_inertia(clcone_world *w);
/* The contact problem at the current state: a scene (own copies of the
 * bodies and contacts; free with clcone_scene_free) whose bodies carry
 * the free velocity v* = v + dt g (static bodies keep v). */
CLCONE_API clcone_status clcone_world_contact_scene(const clcone_world *w, clcone_scene *s,
                                         clcone_error *err);
/* Kinetic energy 0.5 (m |v|^2 + w^T I w) of the non-static bodies for
 * body velocities v (6 per body; NULL = the bodies' own v). */
CLCONE_API double clcone_world_kinetic_energy(const clcone_world *w, const double *v);

/* Generators: the body-form generators above plus shapes and container.
 *  pile:    about n spheres in a box container (spread = radius spread);
 *  stack:   n unit boxes on the ground;
 *  wall:    a pyramid of bricks (1 x 0.5 x 0.5) with n in the bottom row;
 *  grid:    n x n x n spheres;
 *  incline: one unit box resting on a plane tilted by theta (radians)
 *           about the y axis (n is ignored).
 * Bodies start at rest with contacts at the generated state. */
typedef struct clcone_gen_params {
    int n;
    double mu;          /* default 0.5 */
    double dt;          /* default 0.01 */
    double spread;      /* pile: radius spread in [0, 0.5) (default 0.1) */
    double theta;       /* incline: slope angle in [0, pi/2) (default 0.3) */
    unsigned seed;      /* pile (default 1) */
} clcone_gen_params;

CLCONE_API void clcone_gen_params_default(clcone_gen_params *p);
/* name: pile, stack, wall, grid or incline. */
CLCONE_API clcone_status clcone_world_generate(const char *name, const clcone_gen_params *p,
                                    clcone_world *w, clcone_error *err);

/* Scene files (format in README "Scene files"): text, first line
 * "clcone-scene 1", %.17g values, so a write/read round trip is exact.
 * Reading validates everything and names the line of a bad value;
 * truncated or malformed content gives CLCONE_EFORMAT. Written atomically. */
CLCONE_API clcone_status clcone_read_world(const char *path, clcone_world *w, clcone_error *err);
CLCONE_API clcone_status clcone_write_world(const char *path, const clcone_world *w, clcone_error *err);
/* Whether the file is a scene file (1: its first line that is neither
 * blank nor a comment starts with the signature), not (0); -1 when it
 * cannot be read. It reads the file: a pipe is spent after it, so
 * clcone_read_input is the way to take any input. */
CLCONE_API int clcone_is_world_file(const char *path);

/* Everything `clcone solve` takes, told apart by content and read in one
 * pass over the file, so a pipe (/dev/stdin) works: a scene file (as
 * clcone_is_world_file decides), an FCLib HDF5 problem (the signature) or
 * a Siconos .dat problem. Exactly one of problem and world is filled. */
typedef struct clcone_input {
    int is_world;           /* 1: world holds the scene; 0: problem is set */
    clcone_problem problem;
    clcone_world world;
} clcone_input;
CLCONE_API clcone_status clcone_read_input(const char *path, clcone_input *in, clcone_error *err);
CLCONE_API void clcone_input_free(clcone_input *in);

/* Replaces w->s.contacts by the contacts of the current positions:
 * sphere-sphere, sphere-plane, box-plane, box-sphere and box-box (face
 * clipping; edge-edge contacts of crossed boxes are not generated), every
 * pair closer than `margin`. keys (optional, *keys malloc'ed, one per
 * contact) identify a contact across steps: body pair and feature. */
CLCONE_API clcone_status clcone_world_detect(clcone_world *w, double margin,
                                  unsigned long long **keys, clcone_error *err);

/* Time stepping: semi-implicit Euler with the contact impulse solved
 * (ctx NULL = CPU reference) on one plan for the whole run
 * (clcone_plan_create_scene, then clcone_plan_set_scene each step), which
 * gives what clcone_solve_scene gives on each step's scene. */
typedef struct clcone_sim_options {
    clcone_options solve;    /* model, solver, tolerances; warm_start is set
                                by the stepper */
    double margin;           /* contact detection distance (default 1e-3) */
    double projection;       /* fraction of the penetration beyond `slop`
                                removed per step (default 0.2) */
    double slop;             /* penetration left alone (default 1e-4) */
    int warm_start;          /* reuse matched reactions (default 1) */
} clcone_sim_options;

CLCONE_API void clcone_sim_options_default(clcone_sim_options *o);

/* A step whose solve fails or diverges is never applied as it is: the
 * stepper solves the same problem again, from the same warm start, with
 * the model's Gauss-Seidel fallback (reference: nsgs for coulomb, pgs
 * otherwise; device: cgs) and applies that when it converged or reached
 * its cap. When there is no other solver (sap, or the fallback is the
 * solver that failed) or the fallback fails too, the step is not applied:
 * solve.status stays failed/diverged, the bodies keep the state before
 * the step and the caller decides (the CLI stops). */
typedef struct clcone_step_info {
    int step;                /* 1-based */
    int contacts;
    clcone_prob_result solve;  /* the solve applied (the fallback's, if any) */
    int applied;             /* 1 when the step moved the bodies */
    clcone_prob_result failed; /* fell_back: the first solve's result */
    int fell_back;           /* 1: the first solve failed or diverged */
    clcone_solver fallback;  /* fell_back: the solver of `solve` */
    double ke_free;          /* kinetic energy at v* (before the solve) */
    double ke_after;         /* after the contact impulses */
    double max_penetration;  /* at detection, >= 0 */
    int warm_matched;        /* contacts warm-started from the last step */
    double detect_ms;
    double setup_ms;         /* the solve's time outside solve.time_ms: the
                                step's scene handed to the run's plan
                                (host preparation, uploads; at the first
                                step with contacts, making the plan) */
} clcone_step_info;

typedef struct clcone_sim clcone_sim;

/* The stepper works on w in place (w must stay alive). */
CLCONE_API clcone_status clcone_sim_create(clcone_world *w, clcone_context *ctx,
                                const clcone_sim_options *o, clcone_sim **sim,
                                clcone_error *err);
CLCONE_API clcone_status clcone_sim_step(clcone_sim *sim, clcone_step_info *info,
                              clcone_error *err);
/* Reactions (impulses, 3 per contact of w->s) of the last step's solve. */
CLCONE_API const double *clcone_sim_reactions(const clcone_sim *sim);
/* The last step's contact problem (free velocities, contacts) and, in
 * *r0 when non-NULL, the warm start it was solved from: to solve it
 * again elsewhere, e.g. on the reference for comparison. */
CLCONE_API const clcone_scene *clcone_sim_last_scene(const clcone_sim *sim, const double **r0);
CLCONE_API void clcone_sim_free(clcone_sim *sim);

/* Output. Forces are impulses r / dt. */
/* Legacy VTK polydata of the bodies (points at the centres; point data
 * velocity, angular_velocity, size, orientation, shape, contact_force)
 * and of the contacts (a second file: force = r / dt in world
 * coordinates, normal, gap). r may be NULL. */
CLCONE_API clcone_status clcone_write_vtk(const char *bodies_path, const char *contacts_path,
                               const clcone_world *w, const double *r,
                               clcone_error *err);
/* ParaView collection of frames: files[k] at time times[k]. */
CLCONE_API clcone_status clcone_write_pvd(const char *path, int nframes,
                               const char *const *files, const double *times,
                               int parts, clcone_error *err);
/* Orthographic picture of the world seen from the -y side, a little from
 * above; bodies shaded and coloured by the magnitude of the contact force
 * on them (blue = none, red = the 98th percentile and above, with a
 * colour bar in newtons), the static planes as translucent surfaces
 * clipped to the region around the bodies (planes seen from behind as
 * outlines), and `title` (NULL = none) on top. PNG (RGB, compressed),
 * width x height within 64 .. 8192. */
CLCONE_API clcone_status clcone_render_png(const char *path, const clcone_world *w,
                                const double *r, int width, int height,
                                const char *title, clcone_error *err);

/* Line plots as a PNG: panels on a grid of `columns` columns, each with
 * its axes (linear or log), series and an optional dashed reference line
 * (a tolerance). On a log axis points <= 0 are left out; non-finite
 * points are left out everywhere (the line breaks there). */
typedef struct clcone_plot_series {
    const char *label;   /* legend entry, NULL = none */
    int n;
    const double *x, *y; /* n points each */
} clcone_plot_series;

typedef struct clcone_plot_panel {
    const char *title, *xlabel, *ylabel;  /* each may be NULL */
    int xlog, ylog;
    int nseries;
    const clcone_plot_series *series;
    const char *hline_label;  /* non-NULL: a dashed line at y = hline */
    double hline;
} clcone_plot_panel;

CLCONE_API clcone_status clcone_plot_png(const char *path, const char *title,
                              const clcone_plot_panel *panels, int npanels,
                              int columns, int width, int height,
                              clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
