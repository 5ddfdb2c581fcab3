/* needs: cone.h local_solve.h schedule.h contact.h */
/* Local-form kernels: W in block-CSR (3x3 row-major blocks), one work
 * item per contact.
 *
 * Batches: prob[c] is contact c's problem; active[p] == 0 freezes a
 * problem that has converged, so every problem runs exactly the
 * iterations it would run alone. */

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
