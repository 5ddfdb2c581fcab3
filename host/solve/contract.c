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

#include <stdio.h>
#include <string.h>

/* Names as the command line takes them, in enum order. */
static const char *const MODEL_NAMES[] = {"coulomb", "ccp", "pyramid", "soft", "sap"};
static const char *const SOLVER_NAMES[] = {"nsgs", "jacobi", "pgs", "apgd", "lemke", "cgs", "acgs", "newton", "hybrid"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
_Static_assert(COUNT(MODEL_NAMES) == CLCONE_MODEL_COUNT, "a name for every clcone_model");
_Static_assert(COUNT(SOLVER_NAMES) == CLCONE_SOLVER_COUNT, "a name for every clcone_solver");

/* The device entries (opencl/multi_launch.c, opencl/newton_device.c),
 * each declared with its type so that the compiler checks it against its
 * definition. */
clc_dev_fn clc_dev_jacobi, clc_dev_cgs, clc_dev_acgs, clc_dev_apgd, clc_dev_newton, clc_dev_hybrid;

enum { REF = 1, DEV = 2 };

/* The model's Gauss-Seidel, which a failed time step falls back to: on
 * the reference NSGS (coulomb) or PGS, on devices CGS. */
#define GS_COULOMB CLCONE_SOLVER_NSGS, CLCONE_SOLVER_CGS
#define GS_CONE CLCONE_SOLVER_PGS, CLCONE_SOLVER_CGS
#define NO_FALLBACK CLCONE_SOLVER_DEFAULT, CLCONE_SOLVER_DEFAULT

#define ROW(model, solver, on, defaults, ref, dev, fallbacks, help)                                           \
    {{CLCONE_MODEL_##model, CLCONE_SOLVER_##solver, ((on) & REF) != 0, ((on) & DEV) != 0,                      \
      ((defaults) & REF) != 0, ((defaults) & DEV) != 0, help},                                                 \
     ref, dev, {fallbacks}}

/* soft is solved as a ccp on W + R, q - a_ref: its rows are ccp's, but
 * its default stays apgd, which W + R's regularisation lets converge (a
 * few hundred iterations at the default impedance) and which MuJoCo's
 * problems, soft's main use, were measured with. sap is
 * Newton on body velocities and takes no solver: its row's solver is
 * CLCONE_SOLVER_DEFAULT and its entry clc_sap_solve (solve/sap_solve.c). */
static const clc_contract_row ROWS[] = {
    ROW(COULOMB, HYBRID, REF | DEV, REF | DEV, clc_ref_hybrid, clc_dev_hybrid, GS_COULOMB,
        "nsgs (cgs on devices) until its pace stalls, then newton to polish; the sweeps alone at tol >= 1e-6 "
        "and where newton cannot go"),
    ROW(COULOMB, NSGS, REF, 0, clc_ref_nsgs_coulomb, NULL, GS_COULOMB,
        "Gauss-Seidel sweeps with the exact one-contact solve"),
    ROW(COULOMB, CGS, REF | DEV, 0, clc_ref_cgs, clc_dev_cgs, GS_COULOMB,
        "coloured Gauss-Seidel: a colour's contacts share no W block and update at once"),
    ROW(COULOMB, JACOBI, REF | DEV, 0, clc_ref_jacobi, clc_dev_jacobi, GS_COULOMB,
        "projected Jacobi with steps from a bound on W"),
    ROW(COULOMB, APGD, REF | DEV, 0, clc_ref_apgd, clc_dev_apgd, GS_COULOMB,
        "De Saxce's fixed point, each cone QP solved by APGD"),
    ROW(COULOMB, PGS, REF, 0, clc_ref_pgs, NULL, GS_COULOMB, "projected Gauss-Seidel"),
    ROW(COULOMB, NEWTON, REF | DEV, 0, clc_ref_newton, clc_dev_newton, GS_COULOMB,
        "semismooth Newton (Alart-Curnier) with a line search; dense, up to 512 contacts"),
    ROW(CCP, HYBRID, REF | DEV, REF | DEV, clc_ref_hybrid, clc_dev_hybrid, GS_CONE,
        "acgs (cgs on devices) until its pace stalls, then newton to polish; apgd alone at tol >= 1e-6 and "
        "where newton cannot go"),
    ROW(CCP, APGD, REF | DEV, 0, clc_ref_apgd, clc_dev_apgd, GS_CONE,
        "accelerated projected gradient with backtracking and restart"),
    ROW(CCP, NEWTON, REF | DEV, 0, clc_ref_newton, clc_dev_newton, GS_CONE,
        "semismooth Newton on the cone's natural map with a line search; dense, up to 512 contacts"),
    ROW(CCP, CGS, REF | DEV, 0, clc_ref_cgs, clc_dev_cgs, GS_CONE, "coloured projected Gauss-Seidel"),
    ROW(CCP, JACOBI, REF | DEV, 0, clc_ref_jacobi, clc_dev_jacobi, GS_CONE, "projected Jacobi"),
    ROW(CCP, PGS, REF, 0, clc_ref_pgs, NULL, GS_CONE, "projected Gauss-Seidel"),
    ROW(CCP, ACGS, REF | DEV, 0, clc_ref_acgs, clc_dev_acgs, GS_CONE,
        "coloured Gauss-Seidel with Nesterov momentum and gradient restart (large piles)"),
    ROW(PYRAMID, LEMKE, REF, REF, clc_ref_lemke_pyramid, NULL, GS_CONE,
        "Lemke's complementary pivoting on the facet LCP (dense)"),
    ROW(PYRAMID, CGS, REF | DEV, DEV, clc_ref_cgs, clc_dev_cgs, GS_CONE, "coloured projected Gauss-Seidel"),
    ROW(PYRAMID, JACOBI, REF | DEV, 0, clc_ref_jacobi, clc_dev_jacobi, GS_CONE, "projected Jacobi"),
    ROW(PYRAMID, PGS, REF, 0, clc_ref_pgs, NULL, GS_CONE, "projected Gauss-Seidel"),
    ROW(SOFT, APGD, REF | DEV, REF | DEV, clc_ref_apgd, clc_dev_apgd, GS_CONE,
        "ccp's APGD on W + R, q - a_ref"),
    ROW(SOFT, HYBRID, REF | DEV, 0, clc_ref_hybrid, clc_dev_hybrid, GS_CONE,
        "ccp's hybrid on W + R"),
    ROW(SOFT, NEWTON, REF | DEV, 0, clc_ref_newton, clc_dev_newton, GS_CONE,
        "ccp's semismooth Newton on W + R; dense, up to 512 contacts"),
    ROW(SOFT, CGS, REF | DEV, 0, clc_ref_cgs, clc_dev_cgs, GS_CONE, "ccp's coloured Gauss-Seidel on W + R"),
    ROW(SOFT, JACOBI, REF | DEV, 0, clc_ref_jacobi, clc_dev_jacobi, GS_CONE, "ccp's Jacobi on W + R"),
    ROW(SOFT, PGS, REF, 0, clc_ref_pgs, NULL, GS_CONE, "ccp's Gauss-Seidel on W + R"),
    ROW(SOFT, ACGS, REF | DEV, 0, clc_ref_acgs, clc_dev_acgs, GS_CONE, "ccp's accelerated CGS on W + R"),
    ROW(SAP, DEFAULT, REF | DEV, REF | DEV, NULL, NULL, NO_FALLBACK,
        "Newton on body velocities (dense Cholesky on ref, PCG on devices); scenes only"),
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

const clcone_offer *clcone_offer_at(int i)
{
    return i >= 0 && i < NROWS ? &ROWS[i].offer : NULL;
}

const clc_contract_row *clc_contract_find(clcone_model m, clcone_solver s)
{
    for (int i = 0; i < NROWS; ++i)
        if (ROWS[i].offer.model == m && ROWS[i].offer.solver == s) return &ROWS[i];
    return NULL;
}

clcone_solver clc_contract_fallback(const clcone_options *o, const clcone_context *ctx)
{
    clcone_options resolved = *o;
    const clc_contract_row *row;
    clcone_solver f;
    clcone_options_resolve(&resolved, ctx);
    row = clc_contract_find(resolved.model, resolved.solver);
    f = row ? row->fallback[ctx != NULL] : CLCONE_SOLVER_DEFAULT;
    /* compared with the solver asked for: a default solver that failed is
     * solved once more with the model's Gauss-Seidel, even where that is
     * the default */
    return f == o->solver ? CLCONE_SOLVER_DEFAULT : f;
}

void clcone_offers_describe(clcone_model m, int device, char *buf, size_t len)
{
    size_t used = 0;
    if (!buf || len == 0) return;
    buf[0] = 0;
    for (int i = 0; i < NROWS; ++i) {
        const clcone_offer *o = &ROWS[i].offer;
        int n;
        if (o->model != m || !(device ? o->device : o->reference)) continue;
        n = snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "",
                     o->solver == CLCONE_SOLVER_DEFAULT ? "newton" : clcone_solver_name(o->solver),
                     (device ? o->device_default : o->reference_default) ? " (default)" : "");
        if (n < 0 || (size_t)n >= len - used) return;
        used += (size_t)n;
    }
}

void clcone_options_resolve(clcone_options *o, const clcone_context *ctx)
{
    if (!o) return;
    if (o->solver == CLCONE_SOLVER_DEFAULT && o->model != CLCONE_MODEL_SAP)
        for (int i = 0; i < NROWS; ++i)
            if (ROWS[i].offer.model == o->model && (ctx ? ROWS[i].offer.device_default : ROWS[i].offer.reference_default)) {
                o->solver = ROWS[i].offer.solver;
                break;
            }
    /* sap's error is a relative gradient, a difference of momenta that
     * float evaluates only to a few 1e-5 (measured floors: 3.0e-5 on a
     * 900-contact pile, 3.7e-5 on 3000 contacts, where 1e-5 ran into the
     * time cap); 1e-4 is what float reaches there in 50-80 Newton steps */
    if (o->tol == 0)
        o->tol = !ctx || clcone_context_precision(ctx) == CLCONE_DOUBLE ? 1e-8
                 : o->model == CLCONE_MODEL_SAP                         ? 1e-4
                                                                        : 1e-5;
}

clcone_status clc_options_validate(const clcone_options *o, const clcone_context *ctx, clcone_error *err)
{
    const clc_contract_row *row;
    if ((int)o->model < 0 || (int)o->model >= CLCONE_MODEL_COUNT)
        return clc_fail(err, CLCONE_EINVAL, "unknown model %d", (int)o->model);
    /* scenes route sap to clc_sap_solve before this; what reaches here
     * is a local-form problem, which has no body velocities */
    if (o->model == CLCONE_MODEL_SAP)
        return clc_fail(err, CLCONE_ENOTSUP, "sap works on body velocities: give a scene (body form)");
    if ((int)o->solver < 0 || (int)o->solver >= CLCONE_SOLVER_COUNT)
        return clc_fail(err, CLCONE_EINVAL, "unknown solver %d", (int)o->solver);
    row = clc_contract_find(o->model, o->solver);
    if (!row || !(ctx ? row->offer.device : row->offer.reference)) {
        char offered[256];
        clcone_offers_describe(o->model, ctx != NULL, offered, sizeof offered);
        return clc_fail(err, CLCONE_ENOTSUP, "solver %s is not available for model %s on %s (offered: %s%s)",
                           clcone_solver_name(o->solver), clcone_model_name(o->model),
                           ctx ? "OpenCL devices" : "the CPU reference", offered,
                           ctx && row && row->offer.reference ? "; use --device ref for the CPU reference" : "");
    }
    if (o->model == CLCONE_MODEL_SOFT) {
        clcone_status s = clc_soft_validate(o, err);
        if (s) return s;
    }
    if (o->model == CLCONE_MODEL_PYRAMID && (o->facets < 3 || o->facets > CLCONE_MAX_FACETS))
        return clc_fail(err, CLCONE_EINVAL, "pyramid needs at least 3 facets and at most %d (got %d)",
                           CLCONE_MAX_FACETS, o->facets);
    if (o->fit != CLCONE_FIT_OUTER && o->fit != CLCONE_FIT_INNER)
        return clc_fail(err, CLCONE_EINVAL, "unknown pyramid fit %d", (int)o->fit);
    if (!(o->tol >= 0) || o->max_iter < 1 || o->check_every < 1 || !(o->max_seconds >= 0))
        return clc_fail(err, CLCONE_EINVAL,
                           "bad stopping options (tol=%g >= 0, max_iter=%d >= 1, check_every=%d >= 1, "
                           "max_seconds=%g >= 0 required)", o->tol, o->max_iter, o->check_every,
                           o->max_seconds);
    return CLCONE_OK;
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
    {CLCONE_GIVEN_SOLVER, "solver", ALL_BUT(SAP), "sap has one method, Newton, its error checked every iteration"},
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
