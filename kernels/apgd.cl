/* needs: cone.h local_solve.h schedule.h contact.h */
/* APGD on the device (see host/ref/apgd.c for the method). Every problem of a
 * batch carries its own Lipschitz estimate L, momentum theta and
 * acceptance flag, so the vector kernels work per contact and the
 * per-problem decisions are taken by one work item per problem; inside
 * an iteration the host reads only the accept flags, before a second
 * backtracking try. The body form fuses the W product's last pass with
 * the terms (body_apply_apgd_terms), and every form the update with the
 * next iteration's first candidate (apgd_update_candidate): the same
 * arithmetic, two launches and two passes fewer an iteration. */

/* Contact c's candidate P(y - (wy + qe) / L) from its y, wy (private). */
static inline void apgd_contact_candidate(int c, real_t L, const real_t *y, const real_t *wy,
                                          __global const real_t *qe, __global const real_t *mu,
                                          __global real_t *xn)
{
    real_t x[3], t = 1 / L;
    x[0] = y[0] - t * (wy[0] + qe[3 * c]);
    x[1] = y[1] - t * (wy[1] + qe[3 * c + 1]);
    x[2] = y[2] - t * (wy[2] + qe[3 * c + 2]);
    cone_project(mu[c], x);
    cone_store3(xn + 3 * c, x);
}

/* Candidate xn = P(y - (W y + q_eff) / L) for problems still searching. */
__kernel void apgd_candidate(int n, __global const int *prob, __global const int *active,
                             __global const int *accept, __global const real_t *L,
                             __global const real_t *y, __global const real_t *wy,
                             __global const real_t *qe, __global const real_t *mu,
                             __global real_t *xn)
{
    int c = get_global_id(0), p;
    real_t yc[3], wyc[3];
    if (c >= n) return;
    p = prob[c];
    if (!active[p] || accept[p]) return;
    cone_load3(y + 3 * c, yc);
    cone_load3(wy + 3 * c, wyc);
    apgd_contact_candidate(c, L[p], yc, wyc, qe, mu, xn);
}

/* Per-contact terms summed per problem: 0 d.(W xn - W y) with
 * d = xn - y, 1 |d|^2, 2 g.(xn - x) with g = W y + qe (restart test). */
#define APGD_TERMS CONE_APGD_TERMS
__kernel void apgd_terms(int n, __global const real_t *y, __global const real_t *wy,
                         __global const real_t *qe, __global const real_t *x,
                         __global const real_t *xn, __global const real_t *wxn,
                         __global real_t *terms)
{
    int c = get_global_id(0);
    real_t w[3];
    if (c >= n) return;
    cone_load3(wxn + 3 * c, w);
    apgd_contact_terms(c, y, wy, qe, x, xn, w, terms);
}

/* Sufficient decrease (cone_apgd_decrease_ok); otherwise L doubles and
 * the candidate is redone. */
__kernel void apgd_accept(int nprob, __global const int *active, __global int *accept,
                          __global real_t *L, __global const real_t *sums)
{
    int p = get_global_id(0);
    __global const real_t *s;
    if (p >= nprob || !active[p] || accept[p]) return;
    s = sums + APGD_TERMS * p;
    if (cone_apgd_decrease_ok(s[0], s[1], L[p])) accept[p] = 1;
    else L[p] *= 2;
}

/* Nesterov momentum with gradient restart, then the vector update. A
 * problem whose search did not succeed keeps x and drops its momentum. */
__kernel void apgd_momentum(int nprob, __global const int *active, __global int *accept,
                            __global real_t *theta, __global real_t *beta,
                            __global real_t *L, __global const real_t *sums)
{
    int p = get_global_id(0);
    real_t th;
    if (p >= nprob || !active[p]) return;
    if (!accept[p]) {
        beta[p] = -1;          /* marks a rejected step for apgd_update_candidate */
        theta[p] = 1;
        return;
    }
    th = theta[p];
    beta[p] = cone_apgd_momentum(&th, sums[APGD_TERMS * p + 2]);
    theta[p] = th;
    L[p] *= (real_t)0.9;
    accept[p] = 0;
}

/* The vector update, then the next iteration's first candidate from the
 * new y, wy and L (apgd_candidate's arithmetic). */
__kernel void apgd_update_candidate(int n, __global const int *prob, __global const int *active,
                                    __global const real_t *beta, __global const real_t *L,
                                    __global const real_t *qe, __global const real_t *mu,
                                    __global real_t *x, __global real_t *wx, __global real_t *xn,
                                    __global const real_t *wxn, __global real_t *y, __global real_t *wy)
{
    int c = get_global_id(0), p;
    real_t b, yc[3], wyc[3];
    if (c >= n) return;
    p = prob[c];
    if (!active[p]) return;
    b = beta[p];
    if (b < 0) { /* rejected: restart from x */
        cone_load3(x + 3 * c, yc);
        cone_load3(wx + 3 * c, wyc);
    } else {
        real_t a[3], wa[3], o[3], wo[3];
        cone_load3(xn + 3 * c, a);
        cone_load3(wxn + 3 * c, wa);
        cone_load3(x + 3 * c, o);
        cone_load3(wx + 3 * c, wo);
        yc[0] = a[0] + b * (a[0] - o[0]);
        yc[1] = a[1] + b * (a[1] - o[1]);
        yc[2] = a[2] + b * (a[2] - o[2]);
        wyc[0] = wa[0] + b * (wa[0] - wo[0]);
        wyc[1] = wa[1] + b * (wa[1] - wo[1]);
        wyc[2] = wa[2] + b * (wa[2] - wo[2]);
        cone_store3(x + 3 * c, a);
        cone_store3(wx + 3 * c, wa);
    }
    cone_store3(y + 3 * c, yc);
    cone_store3(wy + 3 * c, wyc);
    apgd_contact_candidate(c, L[p], yc, wyc, qe, mu, xn);
}

/* Coulomb as a sequence of cone QPs: q_eff = q + mu ||u_t|| e_n with u
 * from the current x, frozen until the next update; momentum restarts. */
__kernel void desaxce_shift(int n, __global const int *prob, __global const int *active,
                            __global const real_t *q, __global const real_t *mu,
                            __global const real_t *wx, __global const real_t *x,
                            __global real_t *qe, __global real_t *y, __global real_t *wy)
{
    int c = get_global_id(0);
    real_t u1, u2;
    if (c >= n || !active[prob[c]]) return;
    u1 = wx[3 * c + 1] + q[3 * c + 1];
    u2 = wx[3 * c + 2] + q[3 * c + 2];
    qe[3 * c] = q[3 * c] + cone_desaxce_shift(mu[c], u1, u2);
    qe[3 * c + 1] = q[3 * c + 1];
    qe[3 * c + 2] = q[3 * c + 2];
    for (int a = 3 * c; a < 3 * c + 3; ++a) {
        y[a] = x[a];
        wy[a] = wx[a];
    }
}
