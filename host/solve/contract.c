/* The solver contract: one table says which solver serves which model on
 * which backend, which is the default, and which reference routine runs
 * it. Defaults, option checks, error messages, the CLI's help and the
 * README's table (`clcone solvers --markdown`) are all read from it, so
 * adding a solver is one row and its entries. */
#include "core/internal.h"
#include "ref/reference.h"
#include "solve/solve_entries.h"

#include <stdio.h>
#include <string.h>

enum { REF = 1, DEV = 2 };

typedef struct contract_row {
    clcone_offer offer;
    clcone_ref_entry ref;   /* NULL where the reference does not run it */
} contract_row;

#define ROW(model, solver, on, defaults, ref) \
    {{CLCONE_MODEL_##model, CLCONE_SOLVER_##solver, ((on) & REF) != 0, ((on) & DEV) != 0, \
      ((defaults) & REF) != 0, ((defaults) & DEV) != 0}, ref}

/* soft is solved as a ccp on W + R, q - a_ref: its rows are ccp's. sap is
 * Newton on body velocities and takes no solver: its row's solver is
 * CLCONE_SOLVER_DEFAULT and its entry clcone_sap_solve. */
static const contract_row ROWS[] = {
    ROW(COULOMB, HYBRID, REF, REF, clcone_ref_hybrid_coulomb),
    ROW(COULOMB, NSGS, REF, 0, clcone_ref_nsgs_coulomb),
    ROW(COULOMB, CGS, REF | DEV, DEV, clcone_ref_cgs),
    ROW(COULOMB, JACOBI, REF | DEV, 0, clcone_ref_jacobi),
    ROW(COULOMB, APGD, REF | DEV, 0, clcone_ref_apgd),
    ROW(COULOMB, PGS, REF, 0, clcone_ref_pgs),
    ROW(COULOMB, NEWTON, REF, 0, clcone_ref_newton_coulomb),
    ROW(CCP, APGD, REF | DEV, REF | DEV, clcone_ref_apgd),
    ROW(CCP, CGS, REF | DEV, 0, clcone_ref_cgs),
    ROW(CCP, JACOBI, REF | DEV, 0, clcone_ref_jacobi),
    ROW(CCP, PGS, REF, 0, clcone_ref_pgs),
    ROW(CCP, ACGS, REF | DEV, 0, clcone_ref_acgs),
    ROW(PYRAMID, LEMKE, REF, REF, clcone_ref_lemke_pyramid),
    ROW(PYRAMID, CGS, REF | DEV, DEV, clcone_ref_cgs),
    ROW(PYRAMID, JACOBI, REF | DEV, 0, clcone_ref_jacobi),
    ROW(PYRAMID, PGS, REF, 0, clcone_ref_pgs),
    ROW(SOFT, APGD, REF | DEV, REF | DEV, clcone_ref_apgd),
    ROW(SOFT, CGS, REF | DEV, 0, clcone_ref_cgs),
    ROW(SOFT, JACOBI, REF | DEV, 0, clcone_ref_jacobi),
    ROW(SOFT, PGS, REF, 0, clcone_ref_pgs),
    ROW(SOFT, ACGS, REF | DEV, 0, clcone_ref_acgs),
    ROW(SAP, DEFAULT, REF | DEV, REF | DEV, NULL),
};

#define NROWS ((int)(sizeof ROWS / sizeof ROWS[0]))

const clcone_offer *clcone_offer_at(int i)
{
    return i >= 0 && i < NROWS ? &ROWS[i].offer : NULL;
}

static const contract_row *find(clcone_model m, clcone_solver s)
{
    for (int i = 0; i < NROWS; ++i)
        if (ROWS[i].offer.model == m && ROWS[i].offer.solver == s) return &ROWS[i];
    return NULL;
}

clcone_ref_entry clcone_contract_ref(clcone_model m, clcone_solver s)
{
    const contract_row *r = find(m, s);
    return r ? r->ref : NULL;
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

clcone_status clcone_options_validate(const clcone_options *o, const clcone_context *ctx, clcone_error *err)
{
    const contract_row *row;
    if ((int)o->model < 0 || (int)o->model >= CLCONE_NMODELS)
        return clcone_fail(err, CLCONE_EINVAL, "unknown model %d", (int)o->model);
    /* scenes route sap to clcone_sap_solve before this; what reaches here
     * is a local-form problem, which has no body velocities */
    if (o->model == CLCONE_MODEL_SAP)
        return clcone_fail(err, CLCONE_ENOTSUP, "sap works on body velocities: give a scene (body form)");
    if ((int)o->solver < 0 || (int)o->solver >= CLCONE_NSOLVERS)
        return clcone_fail(err, CLCONE_EINVAL, "unknown solver %d", (int)o->solver);
    row = find(o->model, o->solver);
    if (!row || !(ctx ? row->offer.device : row->offer.reference)) {
        char offered[256];
        clcone_offers_describe(o->model, ctx != NULL, offered, sizeof offered);
        return clcone_fail(err, CLCONE_ENOTSUP, "solver %s is not available for model %s on %s (offered: %s%s)",
                           clcone_solver_name(o->solver), clcone_model_name(o->model),
                           ctx ? "OpenCL devices" : "the CPU reference", offered,
                           ctx && row && row->offer.reference ? "; use --device ref for the CPU reference" : "");
    }
    if (o->model == CLCONE_MODEL_SOFT) {
        clcone_status s = clcone_soft_validate(o, err);
        if (s) return s;
    }
    if (o->model == CLCONE_MODEL_PYRAMID && (o->facets < 3 || o->facets > CLCONE_MAX_FACETS))
        return clcone_fail(err, CLCONE_EINVAL, "pyramid needs at least 3 facets and at most %d (got %d)",
                           CLCONE_MAX_FACETS, o->facets);
    if (o->fit != CLCONE_FIT_OUTER && o->fit != CLCONE_FIT_INNER)
        return clcone_fail(err, CLCONE_EINVAL, "unknown pyramid fit %d", (int)o->fit);
    if (!(o->tol >= 0) || o->max_iter < 1 || o->check_every < 1 || !(o->max_seconds >= 0))
        return clcone_fail(err, CLCONE_EINVAL,
                           "bad stopping options (tol=%g >= 0, max_iter=%d >= 1, check_every=%d >= 1, "
                           "max_seconds=%g >= 0 required)", o->tol, o->max_iter, o->check_every,
                           o->max_seconds);
    return CLCONE_OK;
}
