/* SAP's per-contact and per-body math (Castro, Permenter & Han 2022), shared by
 * host/core/sap.c (double) and kernels/sap.cl so that both minimise the same
 * cost (the model: docs/solvers.md). Requires cone.h and jacobian.h first. */
#ifndef CLCONE_SAP_MATH_H
#define CLCONE_SAP_MATH_H

/* Terms of sap_body_eval's per-body row, which the host sums. */
#define SAP_EVAL_TERMS 5

/* Rt relative to w_c: small, so stiction slips by only Rt |gamma_t| (the paper's default). */
#define SAP_SIGMA 1e-3

/* Rn, Rt of a contact from beta and its Delassus diagonal block. */
CONE_FN void sap_regularisation(real_t beta, CONE_PRIV const real_t *Wcc,
                                CONE_PRIV real_t *Rn, CONE_PRIV real_t *Rt)
{
    real_t f = 0, w;
    int k;
    for (k = 0; k < 9; ++k) f += Wcc[k] * Wcc[k];
    w = CONE_SQRT(f) / 3;
    *Rn = beta * beta / (real_t)(4 * CONE_PI * CONE_PI) * w;
    *Rt = (real_t)SAP_SIGMA * w;
}

/* Regimes of the projection (the return value of sap_gamma). */
#define SAP_SEPARATION 0
#define SAP_STICTION 1
#define SAP_SLIDING 2

/* gamma = P_F^R(y), y = -R^-1 u, and G = -d gamma / d u (symmetric); returns the regime (docs/solvers.md). */
CONE_FN int sap_gamma(real_t mu, real_t Rn, real_t Rt, CONE_PRIV const real_t *u,
                      CONE_PRIV real_t *gamma, CONE_PRIV real_t *G)
{
    real_t yn = -u[0] / Rn, y1 = -u[1] / Rt, y2 = -u[2] / Rt;
    real_t t = CONE_SQRT(y1 * y1 + y2 * y2);
    real_t muh = mu * Rt / Rn;
    int k;
    for (k = 0; k < 9; ++k) G[k] = 0;
    if (yn + muh * t <= 0) {
        gamma[0] = 0; gamma[1] = 0; gamma[2] = 0;
        return SAP_SEPARATION;
    }
    if (t <= mu * yn) {
        gamma[0] = yn; gamma[1] = y1; gamma[2] = y2;
        G[0] = 1 / Rn; G[4] = 1 / Rt; G[8] = 1 / Rt;
        return SAP_STICTION;
    }
    {
        real_t d = 1 + mu * muh;
        real_t gn = (yn + muh * t) / d;
        real_t e1 = y1 / t, e2 = y2 / t;
        real_t a = 1 / (d * Rn);          /* G_nn */
        real_t s = mu * gn / t;           /* in [0, 1) */
        real_t p = s / Rt;                /* perpendicular tangential part */
        real_t m2 = mu * mu * a;          /* along t_hat */
        gamma[0] = gn;
        gamma[1] = mu * gn * e1;
        gamma[2] = mu * gn * e2;
        G[0] = a;
        G[1] = G[3] = mu * a * e1;
        G[2] = G[6] = mu * a * e2;
        G[4] = m2 * e1 * e1 + p * (1 - e1 * e1);
        G[8] = m2 * e2 * e2 + p * (1 - e2 * e2);
        G[5] = G[7] = (m2 - p) * e1 * e2;
    }
    return SAP_SLIDING;
}

/* The contact's term of the cost: 1/2 gamma' R gamma. */
CONE_FN real_t sap_contact_cost(real_t Rn, real_t Rt, CONE_PRIV const real_t *gamma)
{
    return (real_t)0.5 * (Rn * gamma[0] * gamma[0]
                          + Rt * (gamma[1] * gamma[1] + gamma[2] * gamma[2]));
}

/* out = G x for a 3x3 row-major G. */
CONE_FN void sap_mat3_apply(CONE_PRIV const real_t *G, CONE_PRIV const real_t *x,
                            CONE_PRIV real_t *out)
{
    int k;
    for (k = 0; k < 3; ++k) out[k] = G[3 * k] * x[0] + G[3 * k + 1] * x[1] + G[3 * k + 2] * x[2];
}

/* P(6x6, row-major) += Ja' G Jb (sg = the product of the sides' signs). */
CONE_FN void sap_add_jtgj(CONE_PRIV const real_t *Ja, CONE_PRIV const real_t *G,
                          CONE_PRIV const real_t *Jb, real_t sg, CONE_PRIV real_t *P)
{
    real_t GJ[18];
    int i, j, k;
    for (k = 0; k < 3; ++k)
        for (j = 0; j < 6; ++j)
            GJ[6 * k + j] = G[3 * k] * Jb[j] + G[3 * k + 1] * Jb[6 + j] + G[3 * k + 2] * Jb[12 + j];
    for (i = 0; i < 6; ++i)
        for (j = 0; j < 6; ++j)
            P[6 * i + j] += sg * (Ja[i] * GJ[j] + Ja[6 + i] * GJ[6 + j] + Ja[12 + i] * GJ[12 + j]);
}

/* out(6) = M_B x(6) with M_B = diag(mass I3, inertia(3x3, row-major)). */
CONE_FN void sap_mass_apply(real_t mass, CONE_PRIV const real_t *I, CONE_PRIV const real_t *x,
                            CONE_PRIV real_t *out)
{
    int k;
    for (k = 0; k < 3; ++k) {
        out[k] = mass * x[k];
        out[3 + k] = I[3 * k] * x[3] + I[3 * k + 1] * x[4] + I[3 * k + 2] * x[5];
    }
}

/* Diagonal of M_B, for the gradient's unit-free norm ||D x||, D = diag(M)^-1/2 (docs/solvers.md). */
CONE_FN void sap_mass_diag(real_t mass, CONE_PRIV const real_t *I, CONE_PRIV real_t *d)
{
    d[0] = d[1] = d[2] = mass;
    d[3] = I[0]; d[4] = I[4]; d[5] = I[8];
}

/* In-place lower Cholesky of an n x n SPD matrix (n <= 6 on the device); 0 when a pivot is not positive. */
CONE_FN int sap_cholesky(int n, CONE_PRIV real_t *A)
{
    int i, j, k;
    for (j = 0; j < n; ++j) {
        real_t d = A[n * j + j];
        for (k = 0; k < j; ++k) d -= A[n * j + k] * A[n * j + k];
        if (!(d > 0)) return 0;
        d = CONE_SQRT(d);
        A[n * j + j] = d;
        for (i = j + 1; i < n; ++i) {
            real_t s = A[n * i + j];
            for (k = 0; k < j; ++k) s -= A[n * i + k] * A[n * j + k];
            A[n * i + j] = s / d;
        }
    }
    return 1;
}

/* Solves L L' x = b in place with the factor of sap_cholesky. */
CONE_FN void sap_cholesky_solve(int n, CONE_PRIV const real_t *L, CONE_PRIV real_t *b)
{
    int i, k;
    for (i = 0; i < n; ++i) {
        real_t s = b[i];
        for (k = 0; k < i; ++k) s -= L[n * i + k] * b[k];
        b[i] = s / L[n * i + i];
    }
    for (i = n - 1; i >= 0; --i) {
        real_t s = b[i];
        for (k = i + 1; k < n; ++k) s -= L[n * k + i] * b[k];
        b[i] = s / L[n * i + i];
    }
}

#endif
