/* Body-form kernels: W = J M^-1 J^T is never formed. Per contact: the
 * bodies ca, cb (-1 = static, its velocity never changes), the frame F
 * (rows n, t1, t2) and the lever arms p - x of both sides. Per body: the
 * inverse mass and world inverse inertia, and a CSR list of its contacts
 * with the side's sign (host/core/scene.h), so that body sums are gathers in a
 * fixed order: no atomics, bitwise reproducible.
 *
 * Row k of J_side is (F_k, arm x F_k): J v = F (v_lin + w x arm), and
 * J^T r = (f, arm x f) with the world force f = F^T r.
 *
 * The small helpers are always inlined: a call left in a kernel's
 * per-item loop keeps a CPU device's work-group vectoriser (POCL) from
 * the loop, which cost body_jacobi_step an eighth of its time. */

static inline __attribute__((always_inline)) void cross3(const real_t *a, const real_t *b, real_t *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* F^T x for frame F (9, row-major) and contact vector x. */
static inline __attribute__((always_inline)) void frame_to_world(__global const real_t *F, const real_t *x, real_t *f)
{
    for (int k = 0; k < 3; ++k) f[k] = F[k] * x[0] + F[3 + k] * x[1] + F[6 + k] * x[2];
}

/* Contact-frame velocity of one side's material point from body velocity
 * (v_lin, w). */
static inline __attribute__((always_inline)) void side_velocity(__global const real_t *F, __global const real_t *arm,
                                 __global const real_t *v, real_t *u)
{
    real_t a[3], w[3], wxa[3], pv[3];
    for (int k = 0; k < 3; ++k) {
        a[k] = arm[k];
        w[k] = v[3 + k];
    }
    cross3(w, a, wxa);
    for (int k = 0; k < 3; ++k) pv[k] = v[k] + wxa[k];
    for (int k = 0; k < 3; ++k) u[k] = F[3 * k] * pv[0] + F[3 * k + 1] * pv[1] + F[3 * k + 2] * pv[2];
}

/* dv_i = M_i^-1 sum_k sign_k J^T x_{contact_k} over body i's list. */
__kernel void body_gather(int nb, __global const int *ptr, __global const int *bc,
                          __global const char *bs, __global const real_t *frame, __global const real_t *arm,
                          __global const real_t *inv_mass, __global const real_t *inv_inertia,
                          __global const real_t *x, __global real_t *dv)
{
    int i = get_global_id(0);
    real_t f[3] = {0, 0, 0}, t[3] = {0, 0, 0};
    __global const real_t *I;
    if (i >= nb) return;
    for (int k = ptr[i]; k < ptr[i + 1]; ++k) {
        int c = bc[k], side = bs[k] > 0 ? 0 : 1;
        real_t xc[3], fw[3], a[3], tw[3], sg = bs[k] > 0 ? 1 : -1;
        xc[0] = x[3 * c]; xc[1] = x[3 * c + 1]; xc[2] = x[3 * c + 2];
        frame_to_world(frame + 9 * c, xc, fw);
        for (int j = 0; j < 3; ++j) a[j] = arm[6 * c + 3 * side + j];
        cross3(a, fw, tw);
        for (int j = 0; j < 3; ++j) {
            f[j] += sg * fw[j];
            t[j] += sg * tw[j];
        }
    }
    I = inv_inertia + 9 * i;
    for (int j = 0; j < 3; ++j) {
        dv[6 * i + j] = inv_mass[i] * f[j];
        dv[6 * i + 3 + j] = I[3 * j] * t[0] + I[3 * j + 1] * t[1] + I[3 * j + 2] * t[2];
    }
}

/* w_c = J_a dv_a - J_b dv_b + R_c x_c: with dv = M^-1 J^T x this is
 * w = (W + R) x, R the soft model's diagonal regulariser (0 otherwise). */
__kernel void body_contact_apply(int n, __global const int *ca, __global const int *cb,
                                 __global const real_t *frame, __global const real_t *arm,
                                 __global const real_t *dv, __global const real_t *Rd,
                                 __global const real_t *x, __global real_t *w)
{
    int c = get_global_id(0);
    real_t ua[3] = {0, 0, 0}, ub[3] = {0, 0, 0};
    if (c >= n) return;
    if (ca[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c, dv + 6 * ca[c], ua);
    if (cb[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c + 3, dv + 6 * cb[c], ub);
    for (int k = 0; k < 3; ++k) w[3 * c + k] = ua[k] - ub[k] + Rd[3 * c + k] * x[3 * c + k];
}

/* Projected Jacobi in body form, with w = (W + R) r from dv = M^-1 J^T r
 * (body_gather) as body_contact_apply forms it and the step of
 * jacobi_step on it, in one pass: the same arithmetic, without writing w
 * out and reading it back, and one launch fewer an iteration. */
__kernel void body_jacobi_step(int n, __global const int *ca, __global const int *cb,
                               __global const real_t *frame, __global const real_t *arm,
                               __global const real_t *dv, __global const real_t *Rd,
                               __global const real_t *q, __global const real_t *mu,
                               __global const real_t *omega, __global const int *prob,
                               __global const int *active, __global const real_t *r,
                               __global real_t *rn, int model, int facets, int inner)
{
    int c = get_global_id(0);
    real_t x[3], u[3], ua[3] = {0, 0, 0}, ub[3] = {0, 0, 0};
    if (c >= n) return;
    for (int k = 0; k < 3; ++k) x[k] = r[3 * c + k];
    if (active[prob[c]]) {
        if (ca[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c, dv + 6 * ca[c], ua);
        if (cb[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c + 3, dv + 6 * cb[c], ub);
        for (int k = 0; k < 3; ++k) {
            real_t w = ua[k] - ub[k] + Rd[3 * c + k] * x[k];
            u[k] = w + q[3 * c + k];
        }
        cone_projected_step(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c], omega[c], x, u);
    }
    for (int k = 0; k < 3; ++k) rn[3 * c + k] = x[k];
}

/* Coloured Gauss-Seidel in body form: no two contacts of one colour share
 * a moving body, so each contact reads its bodies' current dv, solves its
 * local problem with the precomputed W_cc (+ R) and pushes the change of its
 * reaction into both bodies' dv without a race. */
__kernel void cgs_body(int start, int count, __global const int *order,
                       __global const int *ca, __global const int *cb,
                       __global const real_t *frame, __global const real_t *arm,
                       __global const real_t *Wcc, __global const real_t *Rd,
                       __global const real_t *q,
                       __global const real_t *mu, __global const real_t *omega,
                       __global const int *prob, __global const int *active,
                       __global const real_t *inv_mass, __global const real_t *inv_inertia,
                       __global real_t *r, __global real_t *dv,
                       int model, int facets, int inner, int sweep)
{
    int i = get_global_id(0), c;
    real_t D[9], b[3], x[3], old[3], u[3], ua[3] = {0, 0, 0}, ub[3] = {0, 0, 0};
    if (i >= count) return;
    c = order[start + i];
    if (!active[prob[c]]) return;
    if (ca[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c, dv + 6 * ca[c], ua);
    if (cb[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c + 3, dv + 6 * cb[c], ub);
    for (int k = 0; k < 9; ++k) D[k] = Wcc[9 * c + k];
    for (int k = 0; k < 3; ++k) {
        old[k] = x[k] = r[3 * c + k];
        u[k] = q[3 * c + k] + ua[k] - ub[k] + Rd[3 * c + k] * x[k];
    }
    for (int k = 0; k < 3; ++k) b[k] = u[k] - (D[3 * k] * x[0] + D[3 * k + 1] * x[1] + D[3 * k + 2] * x[2]);
    cone_gs_update(model, facets, inner, mu[c], omega[c], sweep, D, b, x);
    {
        real_t d[3], fw[3], tw[3], a[3];
        for (int k = 0; k < 3; ++k) {
            r[3 * c + k] = x[k];
            d[k] = x[k] - old[k];
        }
        frame_to_world(frame + 9 * c, d, fw);
        for (int side = 0; side < 2; ++side) {
            int bi = side == 0 ? ca[c] : cb[c];
            real_t sg = side == 0 ? 1 : -1;
            __global const real_t *I;
            if (bi < 0) continue;
            for (int k = 0; k < 3; ++k) a[k] = arm[6 * c + 3 * side + k];
            cross3(a, fw, tw);
            I = inv_inertia + 9 * bi;
            for (int k = 0; k < 3; ++k) {
                dv[6 * bi + k] += sg * inv_mass[bi] * fw[k];
                dv[6 * bi + 3 + k] += sg * (I[3 * k] * tw[0] + I[3 * k + 1] * tw[1] + I[3 * k + 2] * tw[2]);
            }
        }
    }
}
