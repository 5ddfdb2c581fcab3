/* Whole problems inside one work-group (local form): work-group p
 * iterates problem p of the batch, with barriers between Gauss-Seidel
 * colours and Jacobi iterations, measures its own error on the shared
 * schedule and stops when it has converged. Many problems are many
 * work-groups of one launch, so a batch costs a launch per chunk of
 * iterations instead of several launches per colour per sweep, and each
 * problem runs exactly the arithmetic it runs alone.
 *
 * The iterate lives in global memory (no size limit); barriers with
 * CLK_GLOBAL_MEM_FENCE order a work-group's own accesses, and no two
 * work-groups touch the same contacts. A launch runs at most `budget`
 * iterations; state[2p] (iterations done) and state[2p + 1] (CONE_GROUP_*
 * status) carry a problem from one launch to the next, so the host can
 * apply its time cap between launches. Built after local_form.cl. */

#define GROUP_JACOBI 0
#define GROUP_CGS 1

/* Error of problem [c0, c1) at r into err_out, and whether it stops; the
 * lanes sum strided subsets and a tree combines them exactly as
 * residual_terms + reduce_rows do. Every lane returns the same status. */
static int group_check(int c0, int c1, int it, int max_iter, real_t tol,
                       __global const int *row_ptr, __global const int *col,
                       __global const real_t *W, __global const real_t *q,
                       __global const real_t *mu, __global const real_t *r,
                       int model, int facets, int inner, __local real_t *sums,
                       __local int *verdict, __global real_t *err_out)
{
    int l = get_local_id(0);
    real_t acc[4] = {0, 0, 0, 0};
    for (int c = c0 + l; c < c1; c += CONE_REDUCE_WG) {
        real_t x[3], u[3], w[3] = {0, 0, 0}, qq = 0, rr = 0, uu = 0;
        row_product(row_ptr, col, W, r, c, 0, w);
        for (int k = 0; k < 3; ++k) {
            x[k] = r[3 * c + k];
            u[k] = w[k] + q[3 * c + k];
            qq += q[3 * c + k] * q[3 * c + k];
            rr += x[k] * x[k];
            uu += u[k] * u[k];
        }
        acc[0] += cone_model_residual(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c], x, u);
        acc[1] += qq;
        acc[2] += rr;
        acc[3] += uu;
    }
    for (int k = 0; k < 4; ++k) sums[4 * l + k] = acc[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = CONE_REDUCE_WG / 2; w > 0; w /= 2) {
        if (l < w)
            for (int k = 0; k < 4; ++k) sums[4 * l + k] += sums[4 * (l + w) + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        real_t e = cone_scaled_error(sums[0], sums[1], sums[2], sums[3]);
        *err_out = e;
        *verdict = !isfinite(e) ? CONE_GROUP_DIVERGED
                   : e <= tol   ? CONE_GROUP_CONVERGED
                   : it >= max_iter ? CONE_GROUP_MAXITER
                                    : CONE_GROUP_RUNNING;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return *verdict;
}

__kernel __attribute__((reqd_work_group_size(CONE_REDUCE_WG, 1, 1)))
void group_solve_local(__global const int *prob_off, __global const int *row_ptr,
                       __global const int *col, __global const real_t *W,
                       __global const int *diag, __global const real_t *q,
                       __global const real_t *mu, __global const real_t *omega,
                       __global const int *prob_colors, __global const int *color_ptr,
                       __global const int *order, __global real_t *r, __global real_t *r2,
                       __global int *state, __global real_t *error, int solver, int model,
                       int facets, int inner, int max_iter, int check_every, real_t tol,
                       int budget)
{
    __local real_t sums[4 * CONE_REDUCE_WG];
    __local int verdict;
    int p = get_group_id(0), l = get_local_id(0);
    int c0 = prob_off[p], c1 = prob_off[p + 1];
    int it = state[2 * p], status = state[2 * p + 1], it_end;
    __global real_t *src = r, *dst = r2;
    if (status != CONE_GROUP_RUNNING) return;
    it_end = max_iter - it < budget ? max_iter : it + budget;
    while (it < it_end) {
        ++it;
        if (solver == GROUP_JACOBI) {
            __global real_t *t;
            for (int c = c0 + l; c < c1; c += CONE_REDUCE_WG) {
                real_t x[3], u[3] = {0, 0, 0};
                row_product(row_ptr, col, W, src, c, 0, u);
                for (int k = 0; k < 3; ++k) {
                    x[k] = src[3 * c + k];
                    u[k] += q[3 * c + k];
                }
                cone_projected_step(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c],
                                    omega[c], x, u);
                for (int k = 0; k < 3; ++k) dst[3 * c + k] = x[k];
            }
            t = src;
            src = dst;
            dst = t;
            barrier(CLK_GLOBAL_MEM_FENCE);
        } else {
            for (int k = prob_colors[p]; k < prob_colors[p + 1]; ++k) {
                for (int i = color_ptr[k] + l; i < color_ptr[k + 1]; i += CONE_REDUCE_WG) {
                    int c = order[i];
                    real_t D[9], b[3], x[3];
                    for (int a = 0; a < 9; ++a) D[a] = W[9 * diag[c] + a];
                    b[0] = q[3 * c]; b[1] = q[3 * c + 1]; b[2] = q[3 * c + 2];
                    row_product(row_ptr, col, W, src, c, 1, b);
                    x[0] = src[3 * c]; x[1] = src[3 * c + 1]; x[2] = src[3 * c + 2];
                    cone_gs_update(model, facets, inner, mu[c], omega[c], it, D, b, x);
                    src[3 * c] = x[0]; src[3 * c + 1] = x[1]; src[3 * c + 2] = x[2];
                }
                barrier(CLK_GLOBAL_MEM_FENCE);
            }
        }
        if (cone_is_check(it, check_every, max_iter)) {
            status = group_check(c0, c1, it, max_iter, tol, row_ptr, col, W, q, mu, src, model, facets,
                                 inner, sums, &verdict, error + p);
            if (status != CONE_GROUP_RUNNING) break;
        }
    }
    /* the next launch and the host read the iterate from r */
    if (src != r)
        for (int i = 3 * c0 + l; i < 3 * c1; i += CONE_REDUCE_WG) r[i] = src[i];
    if (l == 0) {
        state[2 * p] = it;
        state[2 * p + 1] = status;
    }
}
