/* The solver contract: the one registry of models and solvers. Their
 * names are here, and one table says which solver serves which model on
 * which backend, which is the default, the reference and device entries
 * that run it, the solver a failed time step falls back to, and a line of
 * help. Defaults, option checks, error messages, the CLI's help and
 * option lists, `clcone solvers` and docs/solvers.md's table (`clcone
 * solvers --markdown`) are all read from it; docs/architecture.md, "Adding a
 * solver", says what else a new solver needs. */
#include "core/internal.h"
#include "ref/reference.h"
#include "solve/solve_entries.h"
#include "ref/blocks_ref.h"
#include "ref/primal_newton.h"
#include "ref/primal_prox.h"
#include "opencl/blocks.h"
#include "opencl/primal.h"

#include <stdio.h>
#include <string.h>

/* Names as the command line takes them, in enum order. */
static const char *const MODEL_NAMES[] = {"coulomb", "ccp", "pyramid", "soft", "sap"};
static const char *const SOLVER_NAMES[] = {"nsgs", "jacobi", "pgs", "apgd", "lemke", "cgs", "acgs", "newton", "hybrid", "ipm"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
_Static_assert(COUNT(MODEL_NAMES) == CLCONE_MODEL_COUNT, "a name for every clcone_model");
_Static_assert(COUNT(SOLVER_NAMES) == CLCONE_SOLVER_COUNT, "a name for every clcone_solver");

/* The device entries (opencl/sweeps.c, acgs.c, apgd.c, newton.c),
 * each declared with its type so that the compiler checks it against its
 * definition. */
clc_dev_fn clc_dev_jacobi, clc_dev_cgs, clc_dev_acgs, clc_dev_apgd, clc_dev_newton, clc_dev_hybrid;

enum { REF = 1, DEV = 2 };

#define LOCAL CLCONE_FORM_BIT(CLCONE_FORM_LOCAL)
#define BODY CLCONE_FORM_BIT(CLCONE_FORM_BODY)
#define BLOCKS CLCONE_FORM_BIT(CLCONE_FORM_BLOCKS)
#define PRIMAL CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL)
#define SCENES CLCONE_FORM_BIT(CLCONE_FORM_SCENES)

/* The model's Gauss-Seidel, which a failed time step falls back to: on
 * the reference NSGS (coulomb) or PGS, on devices CGS. */
#define GS_COULOMB CLCONE_SOLVER_NSGS, CLCONE_SOLVER_CGS
#define GS_CONE CLCONE_SOLVER_PGS, CLCONE_SOLVER_CGS
#define NO_FALLBACK CLCONE_SOLVER_DEFAULT, CLCONE_SOLVER_DEFAULT

/* Default tolerances, float then double: float's rounding floor is about
 * 1e-7; sap's error is a relative gradient, a difference of momenta that
 * float evaluates only to a few 1e-5 (measured floors: 3.0e-5 on a
 * 900-contact pile, 3.7e-5 on 3000 contacts, where 1e-5 ran into the
 * time cap), and 1e-4 is what float reaches there in 50-80 Newton steps. */
#define TOL 1e-5, 1e-8
#define TOL_SAP 1e-4, 1e-8

/* run_: one of the RUN_* below, the row's kind and entries. */
#define ROW_OF(forms, model, solver, on, defaults, run_, fallbacks, tols, step, parts, help)                  \
    {{forms, CLCONE_MODEL_##model, CLCONE_SOLVER_##solver, ((on) & REF) != 0, ((on) & DEV) != 0,             \
      ((defaults) & REF) != 0, ((defaults) & DEV) != 0, tols, help},                                          \
     run_, {fallbacks}, step, parts}
#define RUN_LOCAL(ref, dev) CLC_RUN_LOCAL, {.local = {ref, dev}}
#define RUN_SAP(fn) CLC_RUN_SAP, {.sap = fn}
#define RUN_BLOCKS(ref, dev) CLC_RUN_BLOCKS, {.blocks = {ref, dev}}
#define RUN_PRIMAL(ref, dev) CLC_RUN_PRIMAL, {.primal = {ref, dev}}
/* A row of the local and body forms, by its two entries; a batch of
 * scenes is solved in their local forms, so it takes the same rows. */
#define LOCAL_FORMS (LOCAL | BODY | SCENES)
#define ROW(model, solver, on, defaults, ref, dev, fallbacks, help)                                           \
    ROW_OF(LOCAL_FORMS, model, solver, on, defaults, RUN_LOCAL(ref, dev), GS_##fallbacks, TOL, 0, 0, help)
/* The same for a solver whose device entry also runs a scene in parts
 * over MPI ranks: it reads only its own part's contacts between the
 * ranks' exchanges (Jacobi-style iterations). */
#define PARTS_ROW(model, solver, on, defaults, ref, dev, fallbacks, help)                                     \
    ROW_OF(LOCAL_FORMS, model, solver, on, defaults, RUN_LOCAL(ref, dev), GS_##fallbacks, TOL, 0, 1, help)

/* The stepper's default for ccp and its tolerance: measured on every
 * generator's scene (pile 20-300, stack 5-20, wall 5-10, grid 3-5,
 * incline; 200 steps, POCL float and the reference), ccp with ACGS at 1e-4
 * converges on every step within 640 iterations of the default 1000,
 * while the backend defaults cap: coulomb/cgs at 1e-5 on up to 175 of 200
 * pile steps (100 at 1e-4), ccp/apgd on up to 56, and ccp/acgs at float's
 * 1e-5 (double's 1e-8) on up to 4 (53). 1e-4 is the demo's per-step
 * tolerance, as in GPU time steppers. */
#define STEP_TOL 1e-4

/* soft is solved as a ccp on W + R, q - a_ref: its rows are ccp's, but
 * its default stays apgd, which W + R's regularisation lets converge (a
 * few hundred iterations at the default impedance) and which MuJoCo's
 * problems, soft's main use, were measured with. sap is Newton on body
 * velocities (solve/sap_solve.c). MuJoCo's rows come last: the adapter
 * takes the primal form's default before the others'. */
static const clc_contract_row ROWS[] = {
    ROW(COULOMB, HYBRID, REF | DEV, REF | DEV, clc_ref_hybrid, clc_dev_hybrid, COULOMB,
        "nsgs (cgs on devices) until its pace stalls, then newton to polish (past 512 contacts ipm's fixed "
        "point, then the sweeps and the sparse newton where it stalls, on the host for a device; newton on the "
        "host for a float device); the sweeps alone where neither can go"),
    ROW(COULOMB, NSGS, REF, 0, clc_ref_nsgs_coulomb, NULL, COULOMB,
        "Gauss-Seidel sweeps with the exact one-contact solve"),
    ROW(COULOMB, CGS, REF | DEV, 0, clc_ref_cgs, clc_dev_cgs, COULOMB,
        "coloured Gauss-Seidel: a colour's contacts share no W block and update at once"),
    PARTS_ROW(COULOMB, JACOBI, REF | DEV, 0, clc_ref_jacobi, clc_dev_jacobi, COULOMB,
        "projected Jacobi with steps from a bound on W"),
    PARTS_ROW(COULOMB, APGD, REF | DEV, 0, clc_ref_apgd, clc_dev_apgd, COULOMB,
        "De Saxce's fixed point, each cone QP solved by APGD"),
    ROW(COULOMB, PGS, REF, 0, clc_ref_pgs, NULL, COULOMB, "projected Gauss-Seidel"),
    ROW(COULOMB, NEWTON, REF | DEV, 0, clc_ref_newton, clc_dev_newton, COULOMB,
        "semismooth Newton (Alart-Curnier) with a line search; any size on the reference (sparse LU); on a "
        "device dense LU to 512 contacts, GMRES past them"),
    ROW(COULOMB, IPM, REF, 0, clc_ref_fixed_point, NULL, COULOMB,
        "De Saxce's fixed point, each cone QP solved by ipm (sparse Cholesky): any size, mu > 0"),
    ROW(CCP, HYBRID, REF | DEV, REF | DEV, clc_ref_hybrid, clc_dev_hybrid, CONE,
        "acgs (cgs on devices) until its pace stalls, then newton to polish (past 512 contacts ipm, on the host "
        "for a device); acgs alone on devices at tol >= 1e-6 (float: 1e-5); apgd on the reference where neither "
        "can go"),
    PARTS_ROW(CCP, APGD, REF | DEV, 0, clc_ref_apgd, clc_dev_apgd, CONE,
        "accelerated projected gradient with backtracking and restart"),
    ROW(CCP, NEWTON, REF | DEV, 0, clc_ref_newton, clc_dev_newton, CONE,
        "semismooth Newton on the cone's natural map with a line search; any size on the reference; on a device dense "
        "LU to 512 contacts, GMRES past them"),
    ROW(CCP, IPM, REF, 0, clc_ref_ipm, NULL, CONE,
        "primal-dual interior point with a sparse Cholesky factor (CHOLMOD): any size, mu > 0"),
    ROW(CCP, CGS, REF | DEV, 0, clc_ref_cgs, clc_dev_cgs, CONE, "coloured projected Gauss-Seidel"),
    PARTS_ROW(CCP, JACOBI, REF | DEV, 0, clc_ref_jacobi, clc_dev_jacobi, CONE, "projected Jacobi"),
    ROW(CCP, PGS, REF, 0, clc_ref_pgs, NULL, CONE, "projected Gauss-Seidel"),
    ROW_OF(LOCAL_FORMS, CCP, ACGS, REF | DEV, 0, RUN_LOCAL(clc_ref_acgs, clc_dev_acgs), GS_CONE, TOL,
           STEP_TOL, 0, "coloured Gauss-Seidel with Nesterov momentum and gradient restart (large piles)"),
    ROW(PYRAMID, LEMKE, REF, REF, clc_ref_lemke_pyramid, NULL, CONE,
        "Lemke's complementary pivoting on the facet LCP (dense)"),
    ROW(PYRAMID, CGS, REF | DEV, 0, clc_ref_cgs, clc_dev_cgs, CONE, "coloured projected Gauss-Seidel"),
    PARTS_ROW(PYRAMID, JACOBI, REF | DEV, 0, clc_ref_jacobi, clc_dev_jacobi, CONE, "projected Jacobi"),
    ROW(PYRAMID, PGS, REF, 0, clc_ref_pgs, NULL, CONE, "projected Gauss-Seidel"),
    ROW(PYRAMID, NEWTON, REF | DEV, 0, clc_ref_newton, clc_dev_newton, CONE,
        "semismooth Newton on the pyramid's natural map with a line search; any size on the reference; on a device "
        "dense LU to 512 contacts, GMRES past them"),
    ROW(PYRAMID, HYBRID, REF | DEV, DEV, clc_ref_hybrid, clc_dev_hybrid, CONE,
        "projected Gauss-Seidel (cgs on devices) until its pace stalls, then newton; cgs alone on devices at tol "
        ">= 1e-6 and past 512 contacts"),
    PARTS_ROW(SOFT, APGD, REF | DEV, REF | DEV, clc_ref_apgd, clc_dev_apgd, CONE,
        "ccp's APGD on W + R, q - a_ref"),
    ROW(SOFT, HYBRID, REF | DEV, 0, clc_ref_hybrid, clc_dev_hybrid, CONE,
        "ccp's hybrid on W + R"),
    ROW(SOFT, NEWTON, REF | DEV, 0, clc_ref_newton, clc_dev_newton, CONE,
        "ccp's semismooth Newton on W + R; any size on the reference; on a device dense LU "
        "to 512 contacts, GMRES past them"),
    ROW(SOFT, IPM, REF, 0, clc_ref_ipm, NULL, CONE, "ccp's interior point on W + R"),
    ROW(SOFT, CGS, REF | DEV, 0, clc_ref_cgs, clc_dev_cgs, CONE, "ccp's coloured Gauss-Seidel on W + R"),
    PARTS_ROW(SOFT, JACOBI, REF | DEV, 0, clc_ref_jacobi, clc_dev_jacobi, CONE, "ccp's Jacobi on W + R"),
    ROW(SOFT, PGS, REF, 0, clc_ref_pgs, NULL, CONE, "ccp's Gauss-Seidel on W + R"),
    ROW(SOFT, ACGS, REF | DEV, 0, clc_ref_acgs, clc_dev_acgs, CONE, "ccp's accelerated CGS on W + R"),
    ROW_OF(BODY, SAP, NEWTON, REF | DEV, REF | DEV, RUN_SAP(clc_sap_solve), NO_FALLBACK, TOL_SAP, 0, 0,
           "Newton on body velocities (dense Cholesky on ref, PCG on devices)"),
    ROW_OF(PRIMAL, SOFT, NEWTON, REF | DEV, REF | DEV, RUN_PRIMAL(clc_ref_primal_newton, clc_dev_primal_batch),
           NO_FALLBACK, TOL, 0, 0,
           "MuJoCo's Newton method on its primal problem, with its line search and stopping rule"),
    ROW_OF(PRIMAL, COULOMB, NEWTON, REF | DEV, REF | DEV,
           RUN_PRIMAL(clc_ref_primal_prox, clc_dev_primal_prox_batch), NO_FALLBACK, TOL, 0, 0,
           "MuJoCo's Newton in proximal rounds: hard contacts as the limit of soft ones (no elliptic cone)"),
    ROW_OF(BLOCKS, SOFT, APGD, REF | DEV, REF | DEV, RUN_BLOCKS(clc_ref_blocks, clc_dev_blocks_batch),
           NO_FALLBACK, TOL, 0, 0, "accelerated projected gradient on the general blocks"),
    ROW_OF(BLOCKS, SOFT, PGS, REF, 0, RUN_BLOCKS(clc_ref_blocks, NULL), NO_FALLBACK, TOL, 0, 0,
           "projected Gauss-Seidel over the general blocks"),
    ROW_OF(BLOCKS, COULOMB, APGD, REF | DEV, REF | DEV, RUN_BLOCKS(clc_ref_blocks, clc_dev_blocks_batch),
           NO_FALLBACK, TOL, 0, 0, "accelerated projected gradient on the general blocks, R = 0 on contacts"),
    ROW_OF(BLOCKS, COULOMB, PGS, REF, 0, RUN_BLOCKS(clc_ref_blocks, NULL), NO_FALLBACK, TOL, 0, 0,
           "projected Gauss-Seidel over the general blocks, R = 0 on contacts"),
};

#define NROWS COUNT(ROWS)

const char *clcone_model_name(clcone_model m)
{
    return (int)m >= 0 && (int)m < COUNT(MODEL_NAMES) ? MODEL_NAMES[m] : "?";
}

const char *clcone_solver_name(clcone_solver s)
{
    if (s == CLCONE_SOLVER_DEFAULT) return "default";
    return (int)s >= 0 && (int)s < COUNT(SOLVER_NAMES) ? SOLVER_NAMES[s] : "?";
}

static clcone_status parse_name(const char *s, const char *const *names, int count, const char *what, int *out,
                                clcone_error *err)
{
    char list[256] = "";
    for (int i = 0; i < count; ++i)
        if (s && strcmp(s, names[i]) == 0) {
            *out = i;
            return CLCONE_OK;
        }
    for (int i = 0; i < count; ++i) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < count) strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    return clc_fail(err, CLCONE_EINVAL, "unknown %s '%s' (expected %s)", what, s ? s : "", list);
}

clcone_status clcone_parse_model(const char *s, clcone_model *m, clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    CLCONE_REQUIRE(err, m);
    int v = 0;
    clcone_status st = parse_name(s, MODEL_NAMES, COUNT(MODEL_NAMES), "model", &v, err);
    if (!st) *m = (clcone_model)v;
    return st;
}

clcone_status clcone_parse_solver(const char *s, clcone_solver *out, clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    CLCONE_REQUIRE(err, out);
    int v = 0;
    clcone_status st = parse_name(s, SOLVER_NAMES, COUNT(SOLVER_NAMES), "solver", &v, err);
    if (!st) *out = (clcone_solver)v;
    return st;
}

const char *clcone_form_name(clcone_form f)
{
    static const char *const names[] = {"local", "body", "blocks", "primal", "scenes"};
    _Static_assert(COUNT(names) == CLCONE_FORM_COUNT, "a name for every clcone_form");
    return (int)f >= 0 && (int)f < CLCONE_FORM_COUNT ? names[f] : "?";
}

/* What a form is, for messages. */
static const char *form_words(unsigned forms)
{
    if (forms & BODY) return "a scene (body form)";
    if (forms & LOCAL) return "a problem's local form";
    if (forms & SCENES) return "a batch of scenes (each in its local form)";
    if (forms & PRIMAL) return "MuJoCo's primal problem";
    return "the general-block problem";
}

const clcone_offer *clcone_offer_at(int i)
{
    return i >= 0 && i < NROWS ? &ROWS[i].offer : NULL;
}

const clc_contract_row *clc_contract_find(unsigned forms, clcone_model m, clcone_solver s)
{
    for (int i = 0; i < NROWS; ++i)
        if ((ROWS[i].offer.forms & forms) && ROWS[i].offer.model == m && ROWS[i].offer.solver == s) return &ROWS[i];
    return NULL;
}

static int runs_on(const clcone_offer *o, const clcone_context *ctx)
{
    return ctx ? o->device : o->reference;
}

/* The first default row's solver of model m on forms, on devices or
 * the reference; CLCONE_SOLVER_DEFAULT where none. */
static clcone_solver default_solver(unsigned forms, clcone_model m, int device)
{
    for (int i = 0; i < NROWS; ++i)
        if ((ROWS[i].offer.forms & forms) && ROWS[i].offer.model == m
            && (device ? ROWS[i].offer.device_default : ROWS[i].offer.reference_default))
            return ROWS[i].offer.solver;
    return CLCONE_SOLVER_DEFAULT;
}

static const clc_contract_row *resolve(unsigned forms, clcone_options *o, const clcone_context *ctx, int step)
{
    const clc_contract_row *row = NULL;
    /* the stepper's tolerance is the model's, whichever solver runs it */
    for (int i = 0; i < NROWS && step; ++i)
        if ((ROWS[i].offer.forms & forms) && ROWS[i].offer.model == o->model && ROWS[i].step_tol > 0) {
            if (o->solver == CLCONE_SOLVER_DEFAULT) o->solver = ROWS[i].offer.solver;
            if (o->tol == 0) o->tol = ROWS[i].step_tol;
        }
    if (o->solver == CLCONE_SOLVER_DEFAULT) o->solver = default_solver(forms, o->model, ctx != NULL);
    row = clc_contract_find(forms, o->model, o->solver);
    if (o->tol == 0) {
        int dbl = !ctx || clcone_context_precision(ctx) == CLCONE_DOUBLE;
        /* a pair with no row keeps the model's usual default, for the
         * error that names what the model offers */
        o->tol = row ? (dbl ? row->offer.tol_double : row->offer.tol_float) : dbl ? 1e-8 : 1e-5;
    }
    return row;
}

const clc_contract_row *clc_contract_resolve(unsigned forms, clcone_options *o, const clcone_context *ctx)
{
    return resolve(forms, o, ctx, 0);
}

const clc_contract_row *clc_contract_resolve_step(unsigned forms, clcone_options *o, const clcone_context *ctx)
{
    return resolve(forms, o, ctx, 1);
}

void clcone_options_resolve(clcone_options *o, const clcone_context *ctx)
{
    if (o) resolve(CLC_FORMS_SOLVE, o, ctx, 0);
}

int clcone_form_offers(clcone_form f, const clcone_options *o, int device)
{
    const clc_contract_row *row;
    clcone_solver s;
    if (!o || (int)f < 0 || (int)f >= CLCONE_FORM_COUNT) return 0;
    s = o->solver == CLCONE_SOLVER_DEFAULT ? default_solver(CLCONE_FORM_BIT(f), o->model, device) : o->solver;
    row = clc_contract_find(CLCONE_FORM_BIT(f), o->model, s);
    return row && (device ? row->offer.device : row->offer.reference);
}

clcone_solver clc_contract_fallback(const clcone_options *o, const clcone_context *ctx)
{
    clcone_options resolved = *o;
    const clc_contract_row *row = resolve(CLC_FORMS_SOLVE, &resolved, ctx, 0);
    clcone_solver f = row ? row->fallback[ctx != NULL] : CLCONE_SOLVER_DEFAULT;
    /* compared with the solver asked for: a default solver that failed is
     * solved once more with the model's Gauss-Seidel, even where that is
     * the default */
    return f == o->solver ? CLCONE_SOLVER_DEFAULT : f;
}

void clcone_offers_describe(unsigned forms, clcone_model m, int device, char *buf, size_t len)
{
    size_t used = 0;
    if (!buf || len == 0) return;
    buf[0] = 0;
    for (int i = 0; i < NROWS; ++i) {
        const clcone_offer *o = &ROWS[i].offer;
        int n;
        if (!(o->forms & forms) || o->model != m || !(device ? o->device : o->reference)) continue;
        n = snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "", clcone_solver_name(o->solver),
                     (device ? o->device_default : o->reference_default) ? " (default)" : "");
        if (n < 0 || (size_t)n >= len - used) return;
        used += (size_t)n;
    }
}

/* The forms among `forms` that have a row of model m. */
static unsigned model_forms(unsigned forms, clcone_model m)
{
    unsigned have = 0;
    for (int i = 0; i < NROWS; ++i)
        if (ROWS[i].offer.model == m) have |= ROWS[i].offer.forms & forms;
    return have;
}

/* The checks of the options the model reads on forms. */
static clcone_status model_checks(unsigned forms, const clcone_options *o, clcone_error *err)
{
    if (o->threads < 0 || o->threads > CLCONE_SOLVE_THREADS)
        return clc_fail(err, CLCONE_EINVAL, "threads=%d: a batch runs on 0 (one) to %d host threads", o->threads,
                        CLCONE_SOLVE_THREADS);
    if (o->model == CLCONE_MODEL_SAP) return clc_sap_check_options(o, err);
    if (o->model == CLCONE_MODEL_SOFT && (forms & (LOCAL | BODY))) {
        clcone_status s = clc_soft_validate(o, err);
        if (s) return s;
    }
    if (o->model == CLCONE_MODEL_PYRAMID && (o->facets < 3 || o->facets > CLCONE_MAX_FACETS))
        return clc_fail(err, CLCONE_EINVAL, "pyramid needs at least 3 facets and at most %d (got %d)",
                        CLCONE_MAX_FACETS, o->facets);
    if (o->fit != CLCONE_FIT_OUTER && o->fit != CLCONE_FIT_INNER)
        return clc_fail(err, CLCONE_EINVAL, "unknown pyramid fit %d", (int)o->fit);
    return clc_stopping_check(o, err);
}

clcone_status clc_stopping_check(const clcone_options *o, clcone_error *err)
{
    if (!(o->tol >= 0) || o->max_iter < 1 || o->check_every < 1 || !(o->max_seconds >= 0))
        return clc_fail(err, CLCONE_EINVAL,
                        "bad stopping options (tol=%g >= 0, max_iter=%d >= 1, check_every=%d >= 1, "
                        "max_seconds=%g >= 0 required)", o->tol, o->max_iter, o->check_every, o->max_seconds);
    return CLCONE_OK;
}

clcone_status clc_contract_validate(unsigned forms, const clcone_options *o, const clcone_context *ctx,
                                    const clc_contract_row **out, clcone_error *err)
{
    const clc_contract_row *row;
    unsigned have;
    *out = NULL;
    if ((int)o->model < 0 || (int)o->model >= CLCONE_MODEL_COUNT)
        return clc_fail(err, CLCONE_EINVAL, "unknown model %d", (int)o->model);
    if (!(have = model_forms(forms, o->model))) {
        char names[64] = "";
        for (int k = 0; k < CLCONE_FORM_COUNT; ++k)
            if (model_forms(~0u, o->model) & CLCONE_FORM_BIT(k))
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "",
                         clcone_form_name((clcone_form)k));
        return clc_fail(err, CLCONE_ENOTSUP, "model %s is solved on %s, not on %s (its forms: %s)",
                        clcone_model_name(o->model), o->model == CLCONE_MODEL_SAP ? form_words(BODY) : "its own forms",
                        form_words(forms), names);
    }
    if ((int)o->solver < 0 || (int)o->solver >= CLCONE_SOLVER_COUNT)
        return clc_fail(err, CLCONE_EINVAL, "unknown solver %d", (int)o->solver);
    row = clc_contract_find(have, o->model, o->solver);
    if (!row || !runs_on(&row->offer, ctx)) {
        char offered[256];
        clcone_offers_describe(have, o->model, ctx != NULL, offered, sizeof offered);
        if (!offered[0]) snprintf(offered, sizeof offered, "none there");
        return clc_fail(err, CLCONE_ENOTSUP, "solver %s is not available for model %s on %s on %s (offered: %s%s)",
                        clcone_solver_name(o->solver), clcone_model_name(o->model), form_words(have),
                        ctx ? "OpenCL devices" : "the CPU reference", offered,
                        ctx && row && row->offer.reference ? "; use --device ref for the CPU reference" : "");
    }
    *out = row;
    return model_checks(have, o, err);
}

/* Whether (m, s)'s body-form row runs a scene in parts. */
static int in_parts(clcone_model m, clcone_solver s)
{
    const clc_contract_row *row = clc_contract_find(BODY, m, s);
    return row && row->parts;
}

clcone_status clc_contract_validate_parts(const clcone_options *o, const clcone_context *ctx,
                                          const clc_contract_row **out, clcone_error *err)
{
    char list[128] = "";
    int n = 0, k = 0;
    clcone_status s = clc_contract_validate(BODY, o, ctx, out, err);
    if (s || (ctx && (*out)->parts)) return s;
    *out = NULL;
    /* in the solvers' order, so that every model names them alike */
    for (int v = 0; v < CLCONE_SOLVER_COUNT; ++v) n += in_parts(o->model, (clcone_solver)v);
    for (int v = 0; v < CLCONE_SOLVER_COUNT; ++v)
        if (in_parts(o->model, (clcone_solver)v))
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k++ == 0 ? "" : k == n ? " or " : ", ",
                     clcone_solver_name((clcone_solver)v));
    return clc_fail(err, CLCONE_ENOTSUP,
                    "a scene in parts runs %s on a device (the other solvers read contacts of other parts between "
                    "exchanges), not %s on %s", list[0] ? list : "no solver of its model",
                    clcone_solver_name(o->solver), ctx ? "a device" : "the CPU reference");
}

/* Which models use an option that not every model uses, and why the
 * others refuse it (clcone_options_check_given). */
#define ONLY(m) (1u << CLCONE_MODEL_##m)
#define ALL_BUT(m) (((1u << CLCONE_MODEL_COUNT) - 1) & ~ONLY(m))
static const struct {
    unsigned bit;      /* CLCONE_GIVEN_* */
    const char *name;  /* the clcone_options field */
    unsigned models;   /* bit m: model m uses it */
    const char *why;
} USES[] = {
    {CLCONE_GIVEN_FACETS, "facets", ONLY(PYRAMID), "only the pyramid model has facets"},
    {CLCONE_GIVEN_FIT, "fit", ONLY(PYRAMID), "only the pyramid model has facets"},
    {CLCONE_GIVEN_SOFT_TIMECONST, "soft_timeconst", ONLY(SOFT), "only for model soft"},
    {CLCONE_GIVEN_SOFT_DAMPRATIO, "soft_dampratio", ONLY(SOFT), "only for model soft"},
    {CLCONE_GIVEN_SOFT_IMPEDANCE, "soft_impedance", ONLY(SOFT), "only for model soft"},
    {CLCONE_GIVEN_SOFT_DT, "soft_dt", ONLY(SOFT), "only for model soft"},
    {CLCONE_GIVEN_SAP_BETA, "sap_beta", ONLY(SAP), "only for model sap"},
    {CLCONE_GIVEN_SAP_STIFFNESS, "sap_stiffness", ONLY(SAP), "only for model sap"},
    {CLCONE_GIVEN_SAP_DISSIPATION, "sap_dissipation", ONLY(SAP), "only for model sap"},
    {CLCONE_GIVEN_CHECK_EVERY, "check_every", ALL_BUT(SAP),
     "sap has one method, Newton, its error checked every iteration"},
};

clcone_status clcone_options_check_given(const clcone_options *o, unsigned given, int scene, clcone_error *err)
{
    CLCONE_REQUIRE(err, o);
    if ((int)o->model < 0 || (int)o->model >= CLCONE_MODEL_COUNT)
        return clc_fail(err, CLCONE_EINVAL, "unknown model %d", (int)o->model);
    if (given >= 2u * CLCONE_GIVEN_SAP_DISSIPATION)
        return clc_fail(err, CLCONE_EINVAL, "unknown option bits 0x%x given",
                           given & ~(2u * CLCONE_GIVEN_SAP_DISSIPATION - 1));
    for (int i = 0; i < COUNT(USES); ++i)
        if ((given & USES[i].bit) && !(USES[i].models & 1u << o->model))
            return clc_fail(err, CLCONE_EINVAL, "%s does not apply: %s", USES[i].name, USES[i].why);
    if (scene && o->model == CLCONE_MODEL_SOFT && (given & CLCONE_GIVEN_SOFT_DT))
        return clc_fail(err, CLCONE_EINVAL,
                           "soft_dt does not apply: a scene's soft model steps with the scene's dt");
    if ((given & CLCONE_GIVEN_TOL) && !(o->tol > 0))
        return clc_fail(err, CLCONE_EINVAL, "tol needs a number > 0, got %g (unset: the precision's default)",
                           o->tol);
    return CLCONE_OK;
}
