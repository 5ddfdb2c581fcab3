/* needs: cone.h local_solve.h schedule.h jacobian.h sap_math.h */
/* SAP on the device (host/opencl/sap_device.c drives these; the math is in
 * sap_math.h, shared with the CPU reference). Body velocities v are 6 per
 * body (linear, angular); static bodies (moving[i] = 0) keep v* and their
 * rows are skipped; a contact's moving sides are ca / cb (-1 otherwise)
 * and the static sides' velocity is folded into u0. Body sums over
 * contacts are gathers over the per-body contact CSR (host/core/body_form.h) in a
 * fixed order, and scalars are summed by reduce_rows: no atomics, the
 * results are bitwise reproducible.
 *
 * Newton's system (M + J'GJ) dv = -grad is solved matrix-free by
 * block-Jacobi preconditioned CG; the CG scalars never leave the device
 * (kernels read the reduced sums), the host only reads the residual norm
 * to decide when to stop. */

/* Private copies of a contact's frame and one side's lever arm. */
static inline void sap_load_side(__global const real_t *frame, __global const real_t *arm, int c, int side,
                                 real_t *J)
{
    real_t F[9], a[3];
    for (int k = 0; k < 9; ++k) F[k] = frame[9 * c + k];
    for (int k = 0; k < 3; ++k) a[k] = arm[6 * c + 3 * side + k];
    cone_side_jacobian(F, a, J);
}

/* out = J x over the contact's moving sides (a: +, b: -), x 6 per body. */
static inline void sap_contact_jx(int c, __global const int *ca, __global const int *cb,
                                  __global const real_t *frame, __global const real_t *arm,
                                  __global const real_t *x, real_t *out)
{
    real_t J[18], xb[6];
    for (int side = 0; side < 2; ++side) {
        int b = side == 0 ? ca[c] : cb[c];
        if (b < 0) continue;
        sap_load_side(frame, arm, c, side, J);
        for (int k = 0; k < 6; ++k) xb[k] = x[6 * b + k];
        cone_jac_apply_add(J, side == 0 ? (real_t)1 : (real_t)-1, xb, out);
    }
}

/* out(6) = sum over body i's contacts of sign J' x_c (x 3 per contact). */
static inline void sap_body_jtx(int i, __global const int *ptr, __global const int *bc,
                                __global const char *bs, __global const real_t *frame,
                                __global const real_t *arm, __global const real_t *x, real_t *out)
{
    real_t J[18], xc[3];
    for (int k = 0; k < 6; ++k) out[k] = 0;
    for (int k = ptr[i]; k < ptr[i + 1]; ++k) {
        int c = bc[k];
        sap_load_side(frame, arm, c, bs[k] > 0 ? 0 : 1, J);
        for (int j = 0; j < 3; ++j) xc[j] = x[3 * c + j];
        cone_jac_transpose_add(J, bs[k] > 0 ? (real_t)1 : (real_t)-1, xc, out);
    }
}

static inline void sap_load_mass(int i, __global const real_t *mass, __global const real_t *inertia,
                                 real_t *m, real_t *I)
{
    *m = mass[i];
    for (int k = 0; k < 9; ++k) I[k] = inertia[9 * i + k];
}

/* Per contact at the current v: u = u0 + J v, gamma, G and the cost term
 * 1/2 gamma' R gamma (cost, also the row summed by reduce_rows). */
__kernel void sap_eval_contacts(int n, __global const int *ca, __global const int *cb,
                                __global const real_t *frame, __global const real_t *arm,
                                __global const real_t *u0, __global const real_t *mu,
                                __global const real_t *R, __global const real_t *v,
                                __global real_t *u, __global real_t *gamma, __global real_t *G,
                                __global real_t *cost)
{
    int c = get_global_id(0);
    real_t uc[3], g[3], Gc[9];
    if (c >= n) return;
    for (int k = 0; k < 3; ++k) uc[k] = u0[3 * c + k];
    sap_contact_jx(c, ca, cb, frame, arm, v, uc);
    sap_gamma(mu[c], R[2 * c], R[2 * c + 1], uc, g, Gc);
    for (int k = 0; k < 3; ++k) {
        u[3 * c + k] = uc[k];
        gamma[3 * c + k] = g[k];
    }
    for (int k = 0; k < 9; ++k) G[9 * c + k] = Gc[k];
    cost[c] = sap_contact_cost(R[2 * c], R[2 * c + 1], g);
}

/* Per body: the gradient g = M (v - v*) - J' gamma, the block-Jacobi
 * preconditioner M_B + sum J' G J (Cholesky factor, 36 per body) and the
 * terms ||D g||^2, ||D M v*||^2, ||D J'gamma||^2, ||D M v||^2 and
 * (v - v*)' M (v - v*) with D = diag(M)^-1/2. */
__kernel void sap_eval_bodies(int nb, __global const int *moving, __global const int *ptr,
                              __global const int *bc, __global const char *bs,
                              __global const real_t *frame, __global const real_t *arm,
                              __global const real_t *mass, __global const real_t *inertia,
                              __global const real_t *vstar, __global const real_t *v,
                              __global const real_t *gamma, __global const real_t *G,
                              __global real_t *grad, __global real_t *Pc, __global real_t *terms)
{
    int i = get_global_id(0);
    real_t m, I[9], vb[6], vs[6], d[6], Md[6], Mvs[6], Mv[6], jg[6], dg[6], P[36], J[18], Gc[9];
    real_t t[SAP_EVAL_TERMS];
    if (i >= nb) return;
    for (int k = 0; k < SAP_EVAL_TERMS; ++k) t[k] = 0;
    if (!moving[i]) {
        for (int k = 0; k < 6; ++k) grad[6 * i + k] = 0;
        for (int k = 0; k < SAP_EVAL_TERMS; ++k) terms[SAP_EVAL_TERMS * i + k] = 0;
        return;
    }
    sap_load_mass(i, mass, inertia, &m, I);
    sap_mass_diag(m, I, dg);
    for (int k = 0; k < 6; ++k) {
        vb[k] = v[6 * i + k];
        vs[k] = vstar[6 * i + k];
        d[k] = vb[k] - vs[k];
    }
    sap_mass_apply(m, I, d, Md);
    sap_mass_apply(m, I, vb, Mv);
    sap_mass_apply(m, I, vs, Mvs);
    sap_body_jtx(i, ptr, bc, bs, frame, arm, gamma, jg);
    for (int k = 0; k < 36; ++k) P[k] = 0;
    for (int k = 0; k < 3; ++k) P[7 * k] = m;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) P[6 * (3 + a) + 3 + b] = I[3 * a + b];
    for (int k = ptr[i]; k < ptr[i + 1]; ++k) {
        int c = bc[k];
        sap_load_side(frame, arm, c, bs[k] > 0 ? 0 : 1, J);
        for (int j = 0; j < 9; ++j) Gc[j] = G[9 * c + j];
        sap_add_jtgj(J, Gc, J, 1, P);
    }
    /* M_B is SPD (checked on the host) and J'GJ is PSD, so this cannot
     * fail except by float rounding; a diagonal block then keeps CG
     * going rather than poisoning it with NaN */
    if (!sap_cholesky(6, P)) {
        for (int k = 0; k < 36; ++k) P[k] = 0;
        for (int k = 0; k < 6; ++k) P[7 * k] = CONE_SQRT(dg[k]);
    }
    for (int k = 0; k < 36; ++k) Pc[36 * i + k] = P[k];
    for (int k = 0; k < 6; ++k) {
        real_t g = Md[k] - jg[k];
        grad[6 * i + k] = g;
        t[0] += g * g / dg[k];
        t[1] += Mvs[k] * Mvs[k] / dg[k];
        t[2] += jg[k] * jg[k] / dg[k];
        t[3] += Mv[k] * Mv[k] / dg[k];
        t[4] += d[k] * Md[k];
    }
    for (int k = 0; k < SAP_EVAL_TERMS; ++k) terms[SAP_EVAL_TERMS * i + k] = t[k];
}

/* z = P^-1 r for body i with the stored factor. */
static inline void sap_precond(int i, __global const real_t *Pc, const real_t *r, real_t *z)
{
    real_t L[36];
    for (int k = 0; k < 36; ++k) L[k] = Pc[36 * i + k];
    for (int k = 0; k < 6; ++k) z[k] = r[k];
    sap_cholesky_solve(6, L, z);
}

/* CG terms of body i: r'z and ||D r||^2. */
static inline void sap_cg_terms(int i, __global const real_t *mass, __global const real_t *inertia,
                                const real_t *r, const real_t *z, __global real_t *terms)
{
    real_t m, I[9], dg[6], rz = 0, rr = 0;
    sap_load_mass(i, mass, inertia, &m, I);
    sap_mass_diag(m, I, dg);
    for (int k = 0; k < 6; ++k) {
        rz += r[k] * z[k];
        rr += r[k] * r[k] / dg[k];
    }
    terms[2 * i] = rz;
    terms[2 * i + 1] = rr;
}

/* CG start from x = 0: r = -g, z = P^-1 r, p = z. */
__kernel void sap_cg_start(int nb, __global const int *moving, __global const real_t *mass,
                           __global const real_t *inertia, __global const real_t *Pc,
                           __global const real_t *grad, __global real_t *x, __global real_t *r,
                           __global real_t *z, __global real_t *p, __global real_t *terms)
{
    int i = get_global_id(0);
    real_t rb[6], zb[6];
    if (i >= nb) return;
    if (!moving[i]) {
        for (int k = 0; k < 6; ++k) x[6 * i + k] = r[6 * i + k] = z[6 * i + k] = p[6 * i + k] = 0;
        terms[2 * i] = terms[2 * i + 1] = 0;
        return;
    }
    for (int k = 0; k < 6; ++k) rb[k] = -grad[6 * i + k];
    sap_precond(i, Pc, rb, zb);
    for (int k = 0; k < 6; ++k) {
        x[6 * i + k] = 0;
        r[6 * i + k] = rb[k];
        z[6 * i + k] = zb[k];
        p[6 * i + k] = zb[k];
    }
    sap_cg_terms(i, mass, inertia, rb, zb, terms);
}

/* gw_c = G_c J_c p: the contact half of the Hessian product. */
__kernel void sap_hess_contacts(int n, __global const int *ca, __global const int *cb,
                                __global const real_t *frame, __global const real_t *arm,
                                __global const real_t *G, __global const real_t *p,
                                __global real_t *gw)
{
    int c = get_global_id(0);
    real_t w[3] = {0, 0, 0}, Gc[9], o[3];
    if (c >= n) return;
    sap_contact_jx(c, ca, cb, frame, arm, p, w);
    for (int k = 0; k < 9; ++k) Gc[k] = G[9 * c + k];
    sap_mat3_apply(Gc, w, o);
    for (int k = 0; k < 3; ++k) gw[3 * c + k] = o[k];
}

/* Hp_B = M_B p_B + sum sign J' gw_c, and the term p_B' Hp_B. */
__kernel void sap_hess_bodies(int nb, __global const int *moving, __global const int *ptr,
                              __global const int *bc, __global const char *bs,
                              __global const real_t *frame, __global const real_t *arm,
                              __global const real_t *mass, __global const real_t *inertia,
                              __global const real_t *p, __global const real_t *gw,
                              __global real_t *hp, __global real_t *terms)
{
    int i = get_global_id(0);
    real_t m, I[9], pb[6], mp[6], jg[6], s = 0;
    if (i >= nb) return;
    if (!moving[i]) {
        for (int k = 0; k < 6; ++k) hp[6 * i + k] = 0;
        terms[i] = 0;
        return;
    }
    sap_load_mass(i, mass, inertia, &m, I);
    for (int k = 0; k < 6; ++k) pb[k] = p[6 * i + k];
    sap_mass_apply(m, I, pb, mp);
    sap_body_jtx(i, ptr, bc, bs, frame, arm, gw, jg);
    for (int k = 0; k < 6; ++k) {
        real_t h = mp[k] + jg[k];
        hp[6 * i + k] = h;
        s += pb[k] * h;
    }
    terms[i] = s;
}

/* alpha = r'z / p'Hp; x += alpha p, r -= alpha Hp, z = P^-1 r, and the
 * new r'z, ||D r||^2. A zero or negative curvature (only rounding can
 * give it: H is SPD) freezes the iterate instead of dividing by it. */
__kernel void sap_cg_update(int nb, __global const int *moving, __global const real_t *mass,
                            __global const real_t *inertia, __global const real_t *Pc,
                            __global const real_t *php, __global const real_t *rz_old,
                            __global const real_t *p, __global const real_t *hp,
                            __global real_t *x, __global real_t *r, __global real_t *z,
                            __global real_t *terms)
{
    int i = get_global_id(0);
    real_t a, rb[6], zb[6];
    if (i >= nb) return;
    if (!moving[i]) {
        terms[2 * i] = terms[2 * i + 1] = 0;
        return;
    }
    a = php[0] > 0 ? rz_old[0] / php[0] : 0;
    for (int k = 0; k < 6; ++k) {
        x[6 * i + k] += a * p[6 * i + k];
        rb[k] = r[6 * i + k] - a * hp[6 * i + k];
        r[6 * i + k] = rb[k];
    }
    sap_precond(i, Pc, rb, zb);
    for (int k = 0; k < 6; ++k) z[6 * i + k] = zb[k];
    sap_cg_terms(i, mass, inertia, rb, zb, terms);
}

/* p = z + beta p with beta = r'z (new) / r'z (old). */
__kernel void sap_cg_direction(int nb, __global const real_t *rz_new, __global const real_t *rz_old,
                               __global const real_t *z, __global real_t *p)
{
    int i = get_global_id(0);
    real_t b;
    if (i >= nb) return;
    b = rz_old[0] > 0 ? rz_new[0] / rz_old[0] : 0;
    for (int k = 0; k < 6; ++k) p[6 * i + k] = z[6 * i + k] + b * p[6 * i + k];
}

/* w = J x per contact (the line search's contact velocity change). */
__kernel void sap_apply_j(int n, __global const int *ca, __global const int *cb,
                          __global const real_t *frame, __global const real_t *arm,
                          __global const real_t *x, __global real_t *w)
{
    int c = get_global_id(0);
    real_t o[3] = {0, 0, 0};
    if (c >= n) return;
    sap_contact_jx(c, ca, cb, frame, arm, x, o);
    for (int k = 0; k < 3; ++k) w[3 * c + k] = o[k];
}

/* Line-search set-up per body: dv' M (v - v*), dv' M dv, dv' g. */
__kernel void sap_ls_bodies(int nb, __global const int *moving, __global const real_t *mass,
                            __global const real_t *inertia, __global const real_t *vstar,
                            __global const real_t *v, __global const real_t *dv,
                            __global const real_t *grad, __global real_t *terms)
{
    int i = get_global_id(0);
    real_t m, I[9], d[6], md[6], a = 0, b = 0, c = 0;
    if (i >= nb) return;
    if (moving[i]) {
        sap_load_mass(i, mass, inertia, &m, I);
        for (int k = 0; k < 6; ++k) d[k] = dv[6 * i + k];
        sap_mass_apply(m, I, d, md);
        for (int k = 0; k < 6; ++k) {
            a += md[k] * (v[6 * i + k] - vstar[6 * i + k]);
            b += md[k] * d[k];
            c += d[k] * grad[6 * i + k];
        }
    }
    terms[3 * i] = a;
    terms[3 * i + 1] = b;
    terms[3 * i + 2] = c;
}

/* Line-search terms per contact at u + alpha w: the cost change
 * cost(alpha) - cost(0), w' gamma(alpha) and w' G(alpha) w. */
__kernel void sap_ls_contacts(int n, __global const real_t *mu, __global const real_t *R,
                              __global const real_t *u, __global const real_t *w,
                              __global const real_t *cost0, real_t alpha, __global real_t *terms)
{
    int c = get_global_id(0);
    real_t ua[3], wc[3], g[3], Gc[9], gw[3];
    if (c >= n) return;
    for (int k = 0; k < 3; ++k) {
        wc[k] = w[3 * c + k];
        ua[k] = u[3 * c + k] + alpha * wc[k];
    }
    sap_gamma(mu[c], R[2 * c], R[2 * c + 1], ua, g, Gc);
    sap_mat3_apply(Gc, wc, gw);
    terms[3 * c] = sap_contact_cost(R[2 * c], R[2 * c + 1], g) - cost0[c];
    terms[3 * c + 1] = wc[0] * g[0] + wc[1] * g[1] + wc[2] * g[2];
    terms[3 * c + 2] = wc[0] * gw[0] + wc[1] * gw[1] + wc[2] * gw[2];
}

/* v += alpha dv on the moving bodies. */
__kernel void sap_step(int nb, __global const int *moving, real_t alpha, __global const real_t *dv,
                       __global real_t *v)
{
    int i = get_global_id(0);
    if (i >= nb || !moving[i]) return;
    for (int k = 0; k < 6; ++k) v[6 * i + k] += alpha * dv[6 * i + k];
}
