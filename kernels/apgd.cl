/* APGD on the device (see host/ref/apgd.c for the method). Every problem of a
 * batch carries its own Lipschitz estimate L, momentum theta and
 * acceptance flag, so the vector kernels work per contact and the
 * per-problem decisions are taken by one work item per problem; the host
 * never reads anything back inside an iteration. */

/* Candidate xn = P(y - (W y + q_eff) / L) for problems still searching. */
__kernel void apgd_candidate(int n, __global const int *prob, __global const int *active,
                             __global const int *accept, __global const real_t *L,
                             __global const real_t *y, __global const real_t *wy,
                             __global const real_t *qe, __global const real_t *mu,
                             __global real_t *xn)
{
    int c = get_global_id(0), p;
    real_t x[3], t;
    if (c >= n) return;
    p = prob[c];
    if (!active[p] || accept[p]) return;
    t = 1 / L[p];
    x[0] = y[3 * c] - t * (wy[3 * c] + qe[3 * c]);
    x[1] = y[3 * c + 1] - t * (wy[3 * c + 1] + qe[3 * c + 1]);
    x[2] = y[3 * c + 2] - t * (wy[3 * c + 2] + qe[3 * c + 2]);
    cone_project(mu[c], x);
    cone_store3(xn + 3 * c, x);
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
    real_t t0 = 0, t1 = 0, t2 = 0;
    if (c >= n) return;
    for (int a = 3 * c; a < 3 * c + 3; ++a) {
        real_t d = xn[a] - y[a];
        t0 += d * (wxn[a] - wy[a]);
        t1 += d * d;
        t2 += (wy[a] + qe[a]) * (xn[a] - x[a]);
    }
    terms[APGD_TERMS * c] = t0;
    terms[APGD_TERMS * c + 1] = t1;
    terms[APGD_TERMS * c + 2] = t2;
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
        beta[p] = -1;          /* marks a rejected step for apgd_update */
        theta[p] = 1;
        return;
    }
    th = theta[p];
    beta[p] = cone_apgd_momentum(&th, sums[APGD_TERMS * p + 2]);
    theta[p] = th;
    L[p] *= (real_t)0.9;
    accept[p] = 0;
}

__kernel void apgd_update(int n, __global const int *prob, __global const int *active,
                          __global const real_t *beta, __global real_t *x, __global real_t *wx,
                          __global const real_t *xn, __global const real_t *wxn,
                          __global real_t *y, __global real_t *wy)
{
    int c = get_global_id(0), p;
    real_t b;
    if (c >= n) return;
    p = prob[c];
    if (!active[p]) return;
    b = beta[p];
    for (int a = 3 * c; a < 3 * c + 3; ++a) {
        if (b < 0) {           /* rejected: restart from x */
            y[a] = x[a];
            wy[a] = wx[a];
        } else {
            y[a] = xn[a] + b * (xn[a] - x[a]);
            wy[a] = wxn[a] + b * (wxn[a] - wx[a]);
            x[a] = xn[a];
            wx[a] = wxn[a];
        }
    }
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
