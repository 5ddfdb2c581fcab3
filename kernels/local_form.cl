/* Local-form kernels: W in block-CSR (3x3 row-major blocks), one work
 * item per contact. Built after cone.h and local_solve.h.
 *
 * Batches: prob[c] is contact c's problem; active[p] == 0 freezes a
 * problem that has converged, so every problem runs exactly the
 * iterations it would run alone. */

/* acc += W_c,* x over block row c, skipping the diagonal block when
 * skip_diag (Gauss-Seidel right-hand sides). */
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

/* The Gauss-Seidel update of contact c in r, from the current values of
 * every other contact of its block row (cgs_local, group_solve_local). */
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

/* w = W x (no q): the local form's operator. */
__kernel void matvec_local(int n, __global const int *row_ptr, __global const int *col,
                           __global const real_t *W, __global const real_t *x,
                           __global real_t *w)
{
    int c = get_global_id(0);
    real_t acc[3] = {0, 0, 0};
    if (c >= n) return;
    row_product(row_ptr, col, W, x, c, 0, acc);
    w[3 * c] = acc[0]; w[3 * c + 1] = acc[1]; w[3 * c + 2] = acc[2];
}

/* Gauss-Seidel over the contacts of one colour (order[start..start+count)):
 * no two of them share a W block, so they update in parallel and read
 * only final values of other colours. Coulomb uses the exact local solve
 * with the proximal term of host/ref/nsgs.c; ccp and
 * pyramid one projected step with omega_c = 1 / lambda_max(W_cc). */
__kernel void cgs_local(int start, int count, __global const int *order,
                        __global const int *row_ptr, __global const int *col,
                        __global const real_t *W, __global const int *diag,
                        __global const real_t *q, __global const real_t *mu,
                        __global const real_t *omega,
                        __global const int *prob, __global const int *active,
                        __global real_t *r, int model, int facets, int inner, int sweep)
{
    int i = get_global_id(0), c;
    if (i >= count) return;
    c = order[start + i];
    if (!active[prob[c]]) return;
    local_gs_contact(row_ptr, col, W, diag, q, mu, omega, r, c, model, facets, inner, sweep);
}
