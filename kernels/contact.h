/* Per-contact device functions that kernels of several programs inline: u, block-row
 * products, Gauss-Seidel updates, APGD's terms, the whole-problem barrier and
 * error check. OpenCL C only, after cone.h, local_solve.h and schedule.h. */

/* u = w + q of contact c, q_c given in private memory. */
static inline void contact_u(int c, __global const real_t *w, const real_t *qc, real_t *u)
{
    u[0] = w[3 * c] + qc[0];
    u[1] = w[3 * c + 1] + qc[1];
    u[2] = w[3 * c + 2] + qc[2];
}

/* acc += W_c,* x over block row c, the diagonal block skipped if skip_diag (Gauss-Seidel). */
static inline void row_product(__global const int *row_ptr, __global const int *col,
                               __global const real_t *W, __global const real_t *x,
                               int c, int skip_diag, real_t *acc)
{
    for (int k = row_ptr[c]; k < row_ptr[c + 1]; ++k) {
        int d = col[k];
        __global const real_t *B = W + 9 * k;
        real_t x0, x1, x2;
        if (skip_diag && d == c) continue;
        x0 = x[3 * d]; x1 = x[3 * d + 1]; x2 = x[3 * d + 2];
        cone_block_add(B, x0, x1, x2, acc);
    }
}

/* The Gauss-Seidel update of contact c in r from its block row's current values. */
static inline void local_gs_contact(__global const int *row_ptr, __global const int *col,
                                    __global const real_t *W, __global const int *diag,
                                    __global const real_t *q, __global const real_t *mu,
                                    __global const real_t *omega, __global real_t *r, int c,
                                    int model, int facets, int inner, int sweep)
{
    real_t D[9], b[3], x[3];
    cone_load9(W + 9 * diag[c], D);
    cone_load3(q + 3 * c, b);
    row_product(row_ptr, col, W, r, c, 1, b);
    cone_load3(r + 3 * c, x);
    cone_gs_update(model, facets, inner, mu[c], omega[c], sweep, D, b, x);
    cone_store3(r + 3 * c, x);
}

/* Contact c's terms (apgd_terms) with its W xn in private memory. */
static inline void apgd_contact_terms(int c, __global const real_t *y, __global const real_t *wy,
                                      __global const real_t *qe, __global const real_t *x,
                                      __global const real_t *xn, const real_t *wxn, __global real_t *terms)
{
    int a = 3 * c;
    real_t d0 = xn[a] - y[a], d1 = xn[a + 1] - y[a + 1], d2 = xn[a + 2] - y[a + 2];
    terms[CONE_APGD_TERMS * c] = d0 * (wxn[0] - wy[a]) + d1 * (wxn[1] - wy[a + 1]) + d2 * (wxn[2] - wy[a + 2]);
    terms[CONE_APGD_TERMS * c + 1] = d0 * d0 + d1 * d1 + d2 * d2;
    terms[CONE_APGD_TERMS * c + 2] = (wy[a] + qe[a]) * (xn[a] - x[a]) + (wy[a + 1] + qe[a + 1]) * (xn[a + 1] - x[a + 1])
                                + (wy[a + 2] + qe[a + 2]) * (xn[a + 2] - x[a + 2]);
}

/* The whole-problem kernels' barrier, fencing global and local memory (group_solve.cl says why). */
#define group_barrier() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)

/* Lane 0 combines the stripes' K sums as reduce_rows' tree does: two barriers, not one a level. */
static void group_tree(__local real_t *sums, int K)
{
    group_barrier();
    if (get_local_id(0) == 0)
        for (int w = CONE_REDUCE_WG / 2; w > 0; w /= 2)
            for (int l = 0; l < w; ++l)
                for (int k = 0; k < K; ++k) sums[K * l + k] += sums[K * (l + w) + k];
    group_barrier();
}

/* Problem [c0, c1)'s error and stop verdict, summed as residual_terms + reduce_rows (docs/architecture.md);
 * K = 6 adds ACGS's function-restart sums (acgs_rise's, kernels/acgs.cl) from the last check's x and u kept in
 * last, 6 a contact, which it replaces (K = 4: last unused, may be 0). */
static int group_check(int K, int c0, int c1, int it, int max_iter, real_t tol,
                       __global const int *row_ptr, __global const int *col,
                       __global const real_t *W, __global const real_t *q,
                       __global const real_t *mu, __global const real_t *r, __global real_t *last,
                       int model, int facets, int inner, __local real_t *sums,
                       __local int *verdict, __global real_t *err_out)
{
    int l = get_local_id(0);
    for (int v = l; v < CONE_REDUCE_WG; v += (int)get_local_size(0)) {
        real_t acc[6] = {0, 0, 0, 0, 0, 0};
        for (int c = c0 + v; c < c1; c += CONE_REDUCE_WG) {
            real_t x[3], u[3], w[3] = {0, 0, 0}, qc[3], qq = 0, rr = 0, uu = 0;
            row_product(row_ptr, col, W, r, c, 0, w);
            for (int k = 0; k < 3; ++k) {
                x[k] = r[3 * c + k];
                qc[k] = q[3 * c + k];
                u[k] = w[k] + qc[k];
                qq += qc[k] * qc[k];
                rr += x[k] * x[k];
                uu += u[k] * u[k];
            }
            acc[0] += cone_model_residual(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c], x, u);
            acc[1] += qq;
            acc[2] += rr;
            acc[3] += uu;
            if (K > 4) {
                __global real_t *xl = last + 6 * c;
                real_t xp[3], up[3], mag = 0;
                if (it > 1) { /* the first check has no last one */
                    for (int k = 0; k < 3; ++k) {
                        xp[k] = xl[k];
                        up[k] = xl[3 + k];
                    }
                    acc[4] += cone_acgs_rise_term(x, u, xp, up, qc, &mag);
                    acc[5] += mag;
                }
                for (int k = 0; k < 3; ++k) {
                    xl[k] = x[k];
                    xl[3 + k] = u[k];
                }
            }
        }
        for (int k = 0; k < K; ++k) sums[K * v + k] = acc[k];
    }
    group_tree(sums, K);
    if (l == 0) {
        real_t e = cone_scaled_error(sums[0], sums[1], sums[2], sums[3]);
        *err_out = e;
        *verdict = !isfinite(e) ? CONE_GROUP_DIVERGED
                   : e <= tol   ? CONE_GROUP_CONVERGED
                   : it >= max_iter ? CONE_GROUP_MAXITER
                                    : CONE_GROUP_RUNNING;
    }
    group_barrier();
    return *verdict;
}
