/* The entry of a sap solve: options and scene checked, the set-up built,
 * then the reference or the device backend. */
#include "core/sap.h"
#include "opencl/device_solve.h"
#include "solve/solve_entries.h"
#include "ref/reference.h"

#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Entry                                                               */
/* ------------------------------------------------------------------ */

clcone_status clc_sap_check_options(const clcone_options *o, clcone_error *err)
{
    if (o->model != CLCONE_MODEL_SAP) /* the solver table sends only sap here */
        return clc_fail(err, CLCONE_EINVAL, "sap solve called for model %d", (int)o->model);
    if (!isfinite(o->sap_beta) || !(o->sap_beta > 0))
        return clc_fail(err, CLCONE_EINVAL,
                           "sap_beta must be finite and > 0 (got %g): it sets the near-rigid normal "
                           "compliance Rn = beta^2 / (4 pi^2) w (default 1)", o->sap_beta);
    if (!isfinite(o->sap_stiffness) || !(o->sap_stiffness >= 0))
        return clc_fail(err, CLCONE_EINVAL,
                           "sap_stiffness must be finite and >= 0 (got %g): each contact's stiffness k in N/m "
                           "(0: rigid, the default)", o->sap_stiffness);
    if (!isfinite(o->sap_dissipation) || !(o->sap_dissipation >= 0))
        return clc_fail(err, CLCONE_EINVAL,
                           "sap_dissipation must be finite and >= 0 (got %g): each contact's dissipation time "
                           "scale tau_d in s (0: beta dt / pi, the default)", o->sap_dissipation);
    if (!isfinite(o->soft_dt) || !(o->soft_dt > 0))
        return clc_fail(err, CLCONE_EINVAL,
                           "sap: time step soft_dt must be finite and > 0 (got %g): it turns a penetration "
                           "into the contact's free velocity", o->soft_dt);
    if (!(o->tol >= 0) || o->max_iter < 1 || !(o->max_seconds >= 0))
        return clc_fail(err, CLCONE_EINVAL,
                           "bad stopping options (tol=%g >= 0, max_iter=%d >= 1, max_seconds=%g >= 0 required)",
                           o->tol, o->max_iter, o->max_seconds);
    return CLCONE_OK;
}

clcone_status clc_sap_solve_ex(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o,
                                  clc_sap_params *prm, double *r, clcone_result *res, clcone_error *err)
{
    clc_sap_setup S;
    clcone_status s;
    double t0 = clc_now_ms(), *v0 = NULL;
    size_t nb;
    res->items = NULL;
    res->nprob = 0;
    if (prm) prm->history_len = 0;
    if ((s = clc_sap_check_options(o, err)) || (s = clcone_scene_validate(sc, err))) return s;
    if (o->warm_start)
        for (int i = 0; i < 3 * sc->ncontacts; ++i)
            if (!isfinite(r[i]))
                return clc_fail(err, CLCONE_EINVAL, "warm start r[%d] (contact %d) is not finite", i, i / 3);
    if ((s = clc_sap_setup_build(sc, o, &S, err))) return s;
    if (!ctx && 6 * S.nmoving > CLCONE_SAP_REF_MAX_DOF) {
        s = clc_fail(err, CLCONE_ENOTSUP,
                        "the sap reference factors a dense Hessian and takes at most %d velocity unknowns "
                        "(%d moving bodies); this scene has %d moving bodies: use an OpenCL device",
                        CLCONE_SAP_REF_MAX_DOF, CLCONE_SAP_REF_MAX_DOF / 6, S.nmoving);
        clc_sap_setup_free(&S);
        return s;
    }
    nb = (size_t)sc->nbodies;
    v0 = clc_calloc(6 * nb, sizeof *v0, err, "sap start velocities");
    if (!v0 || (s = clc_result_init(res, 1, err))) {
        free(v0);
        clc_sap_setup_free(&S);
        return v0 ? s : CLCONE_ENOMEM;
    }
    if (o->warm_start) clcone_scene_apply_impulses(sc, r, v0); /* static bodies get 0 */
    for (size_t i = 0; i < 6 * nb; ++i) v0[i] += S.vstar[i];
    s = ctx ? clc_sap_device(ctx, &S, v0, o, prm, r, prm ? prm->v : NULL, &res->items[0], err)
            : clc_sap_ref(&S, v0, o, prm, r, prm ? prm->v : NULL, &res->items[0], err);
    free(v0);
    clc_sap_setup_free(&S);
    if (s) {
        clcone_result_free(res);
        return s;
    }
    res->time_ms = res->items[0].time_ms = clc_now_ms() - t0;
    return CLCONE_OK;
}

clcone_status clc_sap_solve(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o, double *r,
                               clcone_result *res, clcone_error *err)
{
    return clc_sap_solve_ex(ctx, sc, o, NULL, r, res, err);
}
