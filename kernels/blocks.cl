/* needs: cone.h block_sets.h */
/* APGD on the general-block problem's scaled problem (core/blocks.h), as
 * the reference runs it (ref/blocks_ref.c), a launch per stage: W x + q
 * and the projected step one work-item per block, the momentum one per
 * row. Kernels read and write the blocks' rows in global memory
 * (block_sets.h says why). */

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

/* y = g + beta (g - prev), row by row. */
__kernel void blk_momentum(int m, real_t beta, __global const real_t *g, __global const real_t *prev,
                           __global real_t *y)
{
    int i = get_global_id(0);
    if (i >= m) return;
    y[i] = g[i] + beta * (g[i] - prev[i]);
}

/* prev = g; g = P(y - step u) per block; up[b] = u . (g - prev) over the
 * block's rows, for the restart test (summed by reduce_rows). */
__kernel void blk_project(int nb, __global const int *off, __global const int *kind, __global const real_t *bound,
                          __global const real_t *y, __global const real_t *u, real_t step, __global real_t *g,
                          __global real_t *prev, __global real_t *up)
{
    int b = get_global_id(0);
    if (b >= nb) return;
    int r0 = off[b], n = off[b + 1] - r0;
    real_t s = 0;
    for (int i = 0; i < n; ++i) prev[r0 + i] = g[r0 + i];
    blk_project_step(kind[b], n, bound + r0, y + r0, u + r0, step, g + r0);
    for (int i = 0; i < n; ++i) s += u[r0 + i] * (g[r0 + i] - prev[r0 + i]);
    up[b] = s;
}
