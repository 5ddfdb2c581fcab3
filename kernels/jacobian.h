/* The body form's contact Jacobian for host and kernels: rows in frame F, columns (v_lin, w).
 * Requires cone.h first. */
#ifndef CLCONE_JACOBIAN_H
#define CLCONE_JACOBIAN_H

/* J (3x6, row-major) of one side, unsigned: row k = (F_k, arm x F_k), J v = F (v_lin + w x arm). */
CONE_FN void cone_side_jacobian(CONE_PRIV const real_t *F, CONE_PRIV const real_t *arm,
                                CONE_PRIV real_t *J)
{
    int k;
    for (k = 0; k < 3; ++k) {
        CONE_PRIV const real_t *f = F + 3 * k;
        J[6 * k] = f[0];
        J[6 * k + 1] = f[1];
        J[6 * k + 2] = f[2];
        J[6 * k + 3] = arm[1] * f[2] - arm[2] * f[1];
        J[6 * k + 4] = arm[2] * f[0] - arm[0] * f[2];
        J[6 * k + 5] = arm[0] * f[1] - arm[1] * f[0];
    }
}

/* out(3) += sg J v(6). */
CONE_FN void cone_jac_apply_add(CONE_PRIV const real_t *J, real_t sg, CONE_PRIV const real_t *v,
                                CONE_PRIV real_t *out)
{
    int k, j;
    for (k = 0; k < 3; ++k) {
        real_t s = 0;
        for (j = 0; j < 6; ++j) s += J[6 * k + j] * v[j];
        out[k] += sg * s;
    }
}

/* out(6) += sg J' x(3). */
CONE_FN void cone_jac_transpose_add(CONE_PRIV const real_t *J, real_t sg, CONE_PRIV const real_t *x,
                                    CONE_PRIV real_t *out)
{
    int j;
    for (j = 0; j < 6; ++j) {
        real_t s = J[j] * x[0] + J[6 + j] * x[1] + J[12 + j] * x[2];
        out[j] += sg * s;
    }
}

#endif
