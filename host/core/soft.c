/* The soft (MuJoCo-style regularised) model: a cone QP on W + R and
 * q - a_ref. It is solved by the ccp solvers on the transformed data, on
 * every backend, so this file only makes R and a_ref (see clcone.h for
 * the formulas) and the transformed local problem. */
#include "core/analysis.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

clcone_status clc_soft_validate(const clcone_options *o, clcone_error *err)
{
    if (o->soft_R) return CLCONE_OK;
    if (!(o->soft_timeconst > 0) || !isfinite(o->soft_timeconst))
        return clc_fail(err, CLCONE_EINVAL, "soft: time constant must be > 0 (got %g)", o->soft_timeconst);
    if (!(o->soft_dampratio > 0) || !isfinite(o->soft_dampratio))
        return clc_fail(err, CLCONE_EINVAL, "soft: damping ratio must be > 0 (got %g)", o->soft_dampratio);
    if (!(o->soft_impedance > 0 && o->soft_impedance < 1))
        return clc_fail(err, CLCONE_EINVAL, "soft: impedance d must lie in (0, 1) (got %g)", o->soft_impedance);
    if (!(o->soft_dt > 0) || !isfinite(o->soft_dt))
        return clc_fail(err, CLCONE_EINVAL, "soft: time step must be > 0 (got %g)", o->soft_dt);
    return CLCONE_OK;
}

clcone_status clc_soft_terms(const clcone_options *o, int n, const double *Wdiag, const double *gap, double *R,
                                double *aref, clcone_error *err)
{
    clcone_status s = clc_soft_validate(o, err);
    if (s) return s;
    if (o->soft_R) {
        for (int i = 0; i < 3 * n; ++i) {
            if (!isfinite(o->soft_R[i]) || o->soft_R[i] < 0)
                return clc_fail(err, CLCONE_EINVAL, "soft: R[%d] (contact %d) = %g must be finite and >= 0 "
                                   "(a negative compliance)", i, i / 3, o->soft_R[i]);
            if (o->soft_aref && !isfinite(o->soft_aref[i]))
                return clc_fail(err, CLCONE_EINVAL, "soft: a_ref[%d] (contact %d) is not finite", i, i / 3);
            R[i] = o->soft_R[i];
            aref[i] = o->soft_aref ? o->soft_aref[i] : 0.0;
        }
        return CLCONE_OK;
    }
    {
        /* below two steps the discrete damping -b v0 overshoots (|1 - 2 dt / tc| > 1
         * for the velocity MuJoCo's a_ref leads to), so the step is an energy source */
        double d = o->soft_impedance, dt = o->soft_dt, tc = fmax(o->soft_timeconst, 2.0 * dt);
        double z = o->soft_dampratio, b = 2.0 / (d * tc), k = 1.0 / (d * d * tc * tc * z * z);
        for (int c = 0; c < n; ++c) {
            double v0 = o->soft_v0 ? o->soft_v0[c] : 0.0;
            if (!isfinite(v0))
                return clc_fail(err, CLCONE_EINVAL, "soft: start velocity v0[%d] (contact %d) is not finite", c, c);
            for (int a = 0; a < 3; ++a) {
                R[3 * c + a] = (1.0 - d) / d * Wdiag[3 * c + a];
                aref[3 * c + a] = 0.0;
            }
            aref[3 * c] = v0 + dt * (-b * v0 - k * d * (gap ? gap[c] : 0.0));
        }
    }
    return CLCONE_OK;
}

clcone_status clcone_soft_terms_of(const clcone_problem *p, const clcone_options *o, const double *gap, double *R,
                                   double *aref, clcone_error *err)
{
    double *Wd;
    clcone_status s;
    if (!p || !o || !R || !aref) return clc_fail(err, CLCONE_EINVAL, "soft terms: NULL argument");
    if (!(Wd = clc_calloc(3 * (size_t)p->n + 1, sizeof *Wd, err, "soft diagonal"))) return CLCONE_ENOMEM;
    for (int c = 0; c < p->n; ++c) {
        int k = clc_diag_slot(p, c);
        if (k >= 0)
            for (int a = 0; a < 3; ++a) Wd[3 * c + a] = p->blocks[9 * (size_t)k + 4 * a];
    }
    s = clc_soft_terms(o, p->n, Wd, gap, R, aref, err);
    free(Wd);
    return s;
}

clcone_status clc_soft_local(const clcone_problem *p, const clcone_options *o, const double *gap,
                                clcone_problem *out, clcone_error *err)
{
    double *R = clc_calloc(3 * (size_t)p->n + 1, sizeof *R, err, "soft R");
    double *aref = clc_calloc(3 * (size_t)p->n + 1, sizeof *aref, err, "soft a_ref");
    clcone_status s = CLCONE_ENOMEM;
    memset(out, 0, sizeof *out);
    if (!R || !aref) goto done;
    if ((s = clcone_soft_terms_of(p, o, gap, R, aref, err))) goto done;
    {
        const clcone_problem *one[1] = {p};
        if ((s = clcone_batch_concat(one, 1, out, err))) goto done; /* a deep copy */
    }
    for (int c = 0; c < p->n; ++c) {
        int k = clc_diag_slot(out, c);
        if (k >= 0)
            for (int a = 0; a < 3; ++a) out->blocks[9 * (size_t)k + 4 * a] += R[3 * c + a];
        for (int a = 0; a < 3; ++a) out->q[3 * c + a] -= aref[3 * c + a];
    }
done:
    free(R);
    free(aref);
    return s;
}

double clc_qp_cost(const clcone_problem *p, const double *r, int c0, int c1)
{
    /* 1/2 r'Wr + q'r = 1/2 r'(u + q), u = W r + q */
    double f = 0;
    for (int c = c0; c < c1; ++c)
        for (int a = 0; a < 3; ++a) {
            double u = p->q[3 * c + a];
            for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k)
                for (int b = 0; b < 3; ++b) u += p->blocks[9 * k + 3 * a + b] * r[3 * p->col[k] + b];
            f += 0.5 * r[3 * c + a] * (u + p->q[3 * c + a]);
        }
    return f;
}
