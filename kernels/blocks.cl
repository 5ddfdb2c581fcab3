/* needs: cone.h block_sets.h */
/* APGD on the general-block problem's scaled problem (core/blocks.h), as
 * the reference runs it (ref/blocks_ref.c), a launch per stage over a
 * batch of problems concatenated block-diagonally (clcone_bproblem_concat):
 * W x + q, the momentum and the projected step one work-item per block,
 * with each problem's own beta and step (prob[b] is block b's problem);
 * the projection leaves the blocks of the problems that have stopped
 * (active 0) as they are. Kernels read and write the blocks' rows in
 * global memory (block_sets.h says why). */

/* y = W x + q over block rows. */
__kernel void blk_mul(int nb, __global const int *off, __global const int *row_ptr, __global const int *col,
                      __global const int *val_off, __global const real_t *val, __global const real_t *q,
                      __global const real_t *x, __global real_t *y)
{
    int b = get_global_id(0);
    if (b >= nb) return;
    int r0 = off[b], n = off[b + 1] - r0;
    for (int i = 0; i < n; ++i) {
        real_t acc = q[r0 + i];
        for (int k = row_ptr[b]; k < row_ptr[b + 1]; ++k) {
            int c0 = off[col[k]], nc = off[col[k] + 1] - c0;
            __global const real_t *B = val + val_off[k] + i * nc;
            for (int j = 0; j < nc; ++j) acc += B[j] * x[c0 + j];
        }
        y[r0 + i] = acc;
    }
}

/* y = g + beta (g - prev) over the block's rows, beta its problem's. */
__kernel void blk_momentum(int nb, __global const int *off, __global const int *prob, __global const real_t *beta,
                           __global const real_t *g, __global const real_t *prev, __global real_t *y)
{
    int b = get_global_id(0);
    if (b >= nb) return;
    real_t be = beta[prob[b]];
    for (int i = off[b]; i < off[b + 1]; ++i) y[i] = g[i] + be * (g[i] - prev[i]);
}

/* prev = g; g = P(y - step u) per block of an active problem; up[b] =
 * u . (g - prev) over the block's rows, for the restart test (summed per
 * problem by reduce_rows). */
__kernel void blk_project(int nb, __global const int *off, __global const int *kind, __global const int *prob,
                          __global const int *active, __global const real_t *step, __global const real_t *bound,
                          __global const real_t *y, __global const real_t *u, __global real_t *g,
                          __global real_t *prev, __global real_t *up)
{
    int b = get_global_id(0);
    if (b >= nb || !active[prob[b]]) return;
    int r0 = off[b], n = off[b + 1] - r0;
    real_t s = 0;
    for (int i = 0; i < n; ++i) prev[r0 + i] = g[r0 + i];
    blk_project_step(kind[b], n, bound + r0, y + r0, u + r0, step[prob[b]], g + r0);
    for (int i = 0; i < n; ++i) s += u[r0 + i] * (g[r0 + i] - prev[r0 + i]);
    up[b] = s;
}
