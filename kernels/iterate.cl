/* needs: cone.h local_solve.h schedule.h contact.h */
/* Kernels that work on w = W r whatever form produced it (local form:
 * matvec_local; body form: body_gather + body_contact_apply), so Jacobi
 * and the error measure are written once for both. */

/* One projected Jacobi step: rn_c = P(r_c - omega_c (u_c + shift e_n))
 * with u = w + q; frozen (converged) problems keep r. */
__kernel void jacobi_step(int n, __global const real_t *q, __global const real_t *mu,
                          __global const real_t *omega, __global const int *prob,
                          __global const int *active, __global const real_t *r,
                          __global const real_t *w, __global real_t *rn,
                          int model, int facets, int inner)
{
    int c = get_global_id(0);
    real_t x[3], u[3], qc[3];
    if (c >= n) return;
    cone_load3(r + 3 * c, x);
    if (active[prob[c]]) {
        cone_load3(q + 3 * c, qc);
        contact_u(c, w, qc, u);
        cone_projected_step(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c],
                            omega[c], x, u);
    }
    cone_store3(rn + 3 * c, x);
}

/* Per-contact terms of the error (docs/formats.md section 2): ||F_c||^2,
 * ||q_c||^2, ||r_c||^2, ||u_c||^2 with u = w + q; summed per problem by
 * reduce_rows. */
__kernel void residual_terms(int n, __global const real_t *q, __global const real_t *mu,
                             __global const real_t *r, __global const real_t *w,
                             __global real_t *terms, int model, int facets, int inner)
{
    int c = get_global_id(0);
    real_t x[3], u[3], qc[3], qq, rr, uu;
    if (c >= n) return;
    cone_load3(r + 3 * c, x);
    cone_load3(q + 3 * c, qc);
    contact_u(c, w, qc, u);
    qq = qc[0] * qc[0] + qc[1] * qc[1] + qc[2] * qc[2];
    rr = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    terms[4 * c] = cone_model_residual(model, cone_model_pyramid(model, facets, inner, mu[c]),
                                       mu[c], x, u);
    terms[4 * c + 1] = qq;
    terms[4 * c + 2] = rr;
    terms[4 * c + 3] = uu;
}
