/* needs: cone.h local_solve.h schedule.h contact.h */
/* Body-form kernels: W = J M^-1 J^T is never formed. Per contact: the
 * bodies ca, cb (-1 = static, its velocity never changes), the frame F
 * (rows n, t1, t2) and the lever arms p - x of both sides. Per body: the
 * inverse mass and world inverse inertia, and a CSR list of its contacts
 * with the side's sign (host/core/body_form.h), so that body sums are gathers in a
 * fixed order: no atomics, bitwise reproducible.
 *
 * Row k of J_side is (F_k, arm x F_k): J v = F (v_lin + w x arm), and
 * J^T r = (f, arm x f) with the world force f = F^T r.
 *
 * The small helpers are always inlined: a call left in a kernel's
 * per-item loop keeps a CPU device's work-group vectoriser (POCL) from
 * the loop, which cost body_jacobi_step an eighth of its time; private
 * arrays are indexed by constants only (cone_load3 in cone.h says why). */

static inline __attribute__((always_inline)) void cross3(const real_t *a, const real_t *b, real_t *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* F^T x for frame F (9, row-major) and contact vector x. */
static inline __attribute__((always_inline)) void frame_to_world(__global const real_t *F, const real_t *x, real_t *f)
{
    f[0] = F[0] * x[0] + F[3] * x[1] + F[6] * x[2];
    f[1] = F[1] * x[0] + F[4] * x[1] + F[7] * x[2];
    f[2] = F[2] * x[0] + F[5] * x[1] + F[8] * x[2];
}

/* Contact-frame velocity of one side's material point from body velocity
 * (v_lin, w). */
static inline __attribute__((always_inline)) void side_velocity(__global const real_t *F, __global const real_t *arm,
                                 __global const real_t *v, real_t *u)
{
    real_t a[3], w[3], wxa[3], pv[3];
    cone_load3(arm, a);
    cone_load3(v + 3, w);
    cross3(w, a, wxa);
    pv[0] = v[0] + wxa[0];
    pv[1] = v[1] + wxa[1];
    pv[2] = v[2] + wxa[2];
    u[0] = F[0] * pv[0] + F[1] * pv[1] + F[2] * pv[2];
    u[1] = F[3] * pv[0] + F[4] * pv[1] + F[5] * pv[2];
    u[2] = F[6] * pv[0] + F[7] * pv[1] + F[8] * pv[2];
}

/* ua - ub + R x + q0 (q0 NULL: none) of contact c, the sides' velocities
 * from dv (static sides 0): w = (W + R) x (+ q) as one pass forms it. */
static inline __attribute__((always_inline)) void contact_velocity(int c, __global const int *ca, __global const int *cb,
                                __global const real_t *frame, __global const real_t *arm,
                                __global const real_t *dv, __global const real_t *Rd,
                                const real_t *x, __global const real_t *q0, real_t *u)
{
    real_t ua[3] = {0, 0, 0}, ub[3] = {0, 0, 0};
    if (ca[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c, dv + 6 * ca[c], ua);
    if (cb[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c + 3, dv + 6 * cb[c], ub);
    u[0] = ua[0] - ub[0] + Rd[3 * c] * x[0];
    u[1] = ua[1] - ub[1] + Rd[3 * c + 1] * x[1];
    u[2] = ua[2] - ub[2] + Rd[3 * c + 2] * x[2];
    if (q0) {
        u[0] += q0[3 * c];
        u[1] += q0[3 * c + 1];
        u[2] += q0[3 * c + 2];
    }
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
        cone_load3(x + 3 * c, xc);
        frame_to_world(frame + 9 * c, xc, fw);
        cone_load3(arm + 6 * c + 3 * side, a);
        cross3(a, fw, tw);
        f[0] += sg * fw[0];
        f[1] += sg * fw[1];
        f[2] += sg * fw[2];
        t[0] += sg * tw[0];
        t[1] += sg * tw[1];
        t[2] += sg * tw[2];
    }
    I = inv_inertia + 9 * i;
    dv[6 * i] = inv_mass[i] * f[0];
    dv[6 * i + 1] = inv_mass[i] * f[1];
    dv[6 * i + 2] = inv_mass[i] * f[2];
    dv[6 * i + 3] = I[0] * t[0] + I[1] * t[1] + I[2] * t[2];
    dv[6 * i + 4] = I[3] * t[0] + I[4] * t[1] + I[5] * t[2];
    dv[6 * i + 5] = I[6] * t[0] + I[7] * t[1] + I[8] * t[2];
}

/* w_c = J_a dv_a - J_b dv_b + R_c x_c: with dv = M^-1 J^T x this is
 * w = (W + R) x, R the soft model's diagonal regulariser (0 otherwise);
 * also left in u. */
static inline __attribute__((always_inline)) void contact_apply(int c, __global const int *ca, __global const int *cb,
                             __global const real_t *frame, __global const real_t *arm,
                             __global const real_t *dv, __global const real_t *Rd,
                             __global const real_t *x, __global real_t *w, real_t *u)
{
    real_t xc[3];
    cone_load3(x + 3 * c, xc);
    contact_velocity(c, ca, cb, frame, arm, dv, Rd, xc, 0, u);
    cone_store3(w + 3 * c, u);
}

__kernel void body_contact_apply(int n, __global const int *ca, __global const int *cb,
                                 __global const real_t *frame, __global const real_t *arm,
                                 __global const real_t *dv, __global const real_t *Rd,
                                 __global const real_t *x, __global real_t *w)
{
    int c = get_global_id(0);
    real_t u[3];
    if (c < n) contact_apply(c, ca, cb, frame, arm, dv, Rd, x, w, u);
}

/* body_contact_apply on xn, w = (W + R) xn, and APGD's terms from it in
 * the same pass (apgd_terms' arithmetic, apgd_contact_terms in contact.h). */
__kernel void body_apply_apgd_terms(int n, __global const int *ca, __global const int *cb,
                                    __global const real_t *frame, __global const real_t *arm,
                                    __global const real_t *dv, __global const real_t *Rd,
                                    __global const real_t *y, __global const real_t *wy,
                                    __global const real_t *qe, __global const real_t *x,
                                    __global const real_t *xn, __global real_t *wxn, __global real_t *terms)
{
    int c = get_global_id(0);
    real_t u[3];
    if (c >= n) return;
    contact_apply(c, ca, cb, frame, arm, dv, Rd, xn, wxn, u);
    apgd_contact_terms(c, y, wy, qe, x, xn, u, terms);
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
    real_t x[3], u[3];
    if (c >= n) return;
    cone_load3(r + 3 * c, x);
    if (active[prob[c]]) {
        contact_velocity(c, ca, cb, frame, arm, dv, Rd, x, q, u);
        cone_projected_step(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c], omega[c], x, u);
    }
    cone_store3(rn + 3 * c, x);
}

/* dv_i += sg M_i^-1 (f, arm x f): body i's share of a world impulse f. */
static inline __attribute__((always_inline)) void push_impulse(int i, real_t sg, __global const real_t *arm,
                            const real_t *fw, __global const real_t *inv_mass,
                            __global const real_t *inv_inertia, __global real_t *dv)
{
    real_t a[3], tw[3];
    __global const real_t *I = inv_inertia + 9 * i;
    cone_load3(arm, a);
    cross3(a, fw, tw);
    dv[6 * i] += sg * inv_mass[i] * fw[0];
    dv[6 * i + 1] += sg * inv_mass[i] * fw[1];
    dv[6 * i + 2] += sg * inv_mass[i] * fw[2];
    dv[6 * i + 3] += sg * (I[0] * tw[0] + I[1] * tw[1] + I[2] * tw[2]);
    dv[6 * i + 4] += sg * (I[3] * tw[0] + I[4] * tw[1] + I[5] * tw[2]);
    dv[6 * i + 5] += sg * (I[6] * tw[0] + I[7] * tw[1] + I[8] * tw[2]);
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
    real_t D[9], b[3], x[3], old[3], ua[3] = {0, 0, 0}, ub[3] = {0, 0, 0};
    if (i >= count) return;
    c = order[start + i];
    if (!active[prob[c]]) return;
    if (ca[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c, dv + 6 * ca[c], ua);
    if (cb[c] >= 0) side_velocity(frame + 9 * c, arm + 6 * c + 3, dv + 6 * cb[c], ub);
    cone_load9(Wcc + 9 * c, D);
    cone_load3(r + 3 * c, x);
    cone_load3(r + 3 * c, old);
    /* u - W_cc x, u = q + ua - ub + R x */
    b[0] = q[3 * c] + ua[0] - ub[0] + Rd[3 * c] * x[0] - (D[0] * x[0] + D[1] * x[1] + D[2] * x[2]);
    b[1] = q[3 * c + 1] + ua[1] - ub[1] + Rd[3 * c + 1] * x[1] - (D[3] * x[0] + D[4] * x[1] + D[5] * x[2]);
    b[2] = q[3 * c + 2] + ua[2] - ub[2] + Rd[3 * c + 2] * x[2] - (D[6] * x[0] + D[7] * x[1] + D[8] * x[2]);
    cone_gs_update(model, facets, inner, mu[c], omega[c], sweep, D, b, x);
    cone_store3(r + 3 * c, x);
    {
        real_t d[3], fw[3];
        d[0] = x[0] - old[0];
        d[1] = x[1] - old[1];
        d[2] = x[2] - old[2];
        frame_to_world(frame + 9 * c, d, fw);
        if (ca[c] >= 0) push_impulse(ca[c], 1, arm + 6 * c, fw, inv_mass, inv_inertia, dv);
        if (cb[c] >= 0) push_impulse(cb[c], -1, arm + 6 * c + 3, fw, inv_mass, inv_inertia, dv);
    }
}
