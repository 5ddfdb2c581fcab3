/* needs: cone.h schedule.h block_sets.h */
/* APGD on the general-block problem's scaled problem (core/blocks.h), as
 * the reference runs it (ref/blocks_ref.c), over a batch of problems
 * concatenated block-diagonally (clc_bproblem_concat), each with its
 * own step and momentum (prob[b] is block b's problem; state holds each
 * problem's t and t_next); the blocks of the problems that have stopped
 * (active 0) are left as they are. An iteration is a momentum (a
 * work-group a problem: the restart test, t and beta stay on the device),
 * W y + q and a projected step (a block a lane). Two ways, the same
 * functions and so the same bits: three launches an iteration over the
 * whole batch (blk_momentum, blk_mul, blk_project), or blk_iterate, a
 * work-group a problem running several iterations in one launch with
 * barriers between the stages (opencl/blocks_device.c picks). Kernels
 * read and write the blocks' rows in global memory (block_sets.h says
 * why). */

/* Rows of block b of y = W x + q. */
CONE_FN void blk_mul_block(int b, __global const int *off, __global const int *row_ptr, __global const int *col,
                           __global const int *val_off, __global const real_t *val, __global const real_t *q,
                           __global const real_t *x, __global real_t *y)
{
    int r0 = off[b], n = off[b + 1] - r0;
    for (int i = 0; i < n; ++i) y[r0 + i] = q[r0 + i];
    for (int k = row_ptr[b]; k < row_ptr[b + 1]; ++k) {
        int c0 = off[col[k]], nc = off[col[k] + 1] - c0;
        __global const real_t *B = val + val_off[k];
        for (int i = 0; i < n; ++i) {
            real_t acc = y[r0 + i];
            for (int j = 0; j < nc; ++j) acc += B[i * nc + j] * x[c0 + j];
            y[r0 + i] = acc;
        }
    }
}

/* Problem p's momentum, by all the lanes of its work-group: the gradient
 * restart of the last iteration (restart 1: t = 1 when the step pointed
 * uphill, the sum of its blocks' up > 0, else t = t_next), then t_next
 * and y = g + beta (g - prev), beta = (t - 1) / t_next, over its rows.
 * The sum takes the blocks in BLK_SUM_WG fixed stripes combined by a
 * fixed tree (as reduce_rows), so its bits depend on the problem alone,
 * never on the batch or on the lanes the device gives (fewer than
 * BLK_SUM_WG: a lane takes several stripes). A problem of fewer blocks
 * takes as many stripes as the power of two at or above its count: the
 * stripes left out hold zeros, which the tree's upper levels would only
 * add (x + 0 is x, up to a zero's sign, which the test > 0 ignores), so
 * the outcome is that of all BLK_SUM_WG, with fewer steps between
 * barriers (a 32-row humanoid has 11 blocks). */
#define BLK_SUM_WG CONE_REDUCE_WG
CONE_FN void blk_momentum_group(int p, __global const int *poff, __global const int *off, int restart,
                                __global const real_t *up, __global real_t *state, __global const real_t *g,
                                __global const real_t *prev, __global real_t *y, __local real_t *scratch)
{
    int l = get_local_id(0), nl = get_local_size(0), b0 = poff[p], b1 = poff[p + 1], stripes = 1;
    real_t beta;
    while (stripes < BLK_SUM_WG && stripes < b1 - b0) stripes *= 2;
    for (int v = l; v < stripes; v += nl) {
        real_t acc = 0;
        /* up is not written before the first iteration's projection */
        for (int b = b0 + v; restart && b < b1; b += BLK_SUM_WG) acc += up[b];
        scratch[v] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = stripes / 2; w > 0; w /= 2) {
        for (int v = l; v < w; v += nl) scratch[v] += scratch[v + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        real_t t = restart && scratch[0] > 0 ? 1 : restart ? state[2 * p + 1] : state[2 * p];
        real_t tn = blk_apgd_next_t(t);
        state[2 * p] = t;
        state[2 * p + 1] = tn;
        scratch[0] = (t - 1) / tn;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    beta = scratch[0];
    for (int i = off[b0] + l; i < off[b1]; i += nl) y[i] = g[i] + beta * (g[i] - prev[i]);
}

/* Block b's projected step: prev = g; g = P(y - step u); up[b] = u . (g -
 * prev) over its rows, for the restart test. The iterates are offsets
 * from a centre xc (0 but in float, where the host recentres them at
 * the checks: opencl/blocks_device.c, the float floor): a free block
 * steps on its offsets alone, which keep their own precision; another
 * kind projects the point xc + y and takes xc off again (a row whose xc
 * is 0 as it is). */
CONE_FN void blk_project_block(int b, __global const int *off, __global const int *kind, real_t step,
                               __global const real_t *bound, __global const real_t *xc, __global real_t *y,
                               __global const real_t *u, __global real_t *g, __global real_t *prev,
                               __global real_t *up)
{
    int r0 = off[b], n = off[b + 1] - r0, shift = kind[b] != BLK_FREE;
    real_t s = 0;
    for (int i = 0; i < n; ++i) {
        prev[r0 + i] = g[r0 + i];
        if (shift && xc[r0 + i] != 0) y[r0 + i] += xc[r0 + i];
    }
    blk_project_step(kind[b], n, bound + r0, y + r0, u + r0, step, g + r0);
    for (int i = 0; i < n; ++i) {
        if (shift && xc[r0 + i] != 0) g[r0 + i] -= xc[r0 + i];
        s += u[r0 + i] * (g[r0 + i] - prev[r0 + i]);
    }
    up[b] = s;
}

/* y = W x + q, a block a work-item. */
__kernel void blk_mul(int nb, __global const int *off, __global const int *row_ptr, __global const int *col,
                      __global const int *val_off, __global const real_t *val, __global const real_t *q,
                      __global const real_t *x, __global real_t *y)
{
    int b = get_global_id(0);
    if (b < nb) blk_mul_block(b, off, row_ptr, col, val_off, val, q, x, y);
}

/* Each active problem's momentum, a work-group a problem. */
__kernel void blk_momentum(int nprob, __global const int *poff, __global const int *off,
                           __global const int *active, int restart, __global const real_t *up,
                           __global real_t *state, __global const real_t *g, __global const real_t *prev,
                           __global real_t *y, __local real_t *scratch)
{
    int p = get_group_id(0);
    if (p < nprob && active[p]) blk_momentum_group(p, poff, off, restart, up, state, g, prev, y, scratch);
}

/* The projected step of every block of an active problem. */
__kernel void blk_project(int nb, __global const int *off, __global const int *kind, __global const int *prob,
                          __global const int *active, __global const real_t *step, __global const real_t *bound,
                          __global const real_t *xc, __global real_t *y, __global const real_t *u,
                          __global real_t *g, __global real_t *prev, __global real_t *up)
{
    int b = get_global_id(0);
    if (b < nb && active[prob[b]]) blk_project_block(b, off, kind, step[prob[b]], bound, xc, y, u, g, prev, up);
}

/* iters whole iterations of each active problem, a work-group a problem,
 * its lanes over its blocks (restart: as blk_momentum's, for the first of
 * them). */
__kernel void blk_iterate(int nprob, int iters, int restart, __global const int *poff, __global const int *off,
                          __global const int *kind, __global const int *row_ptr, __global const int *col,
                          __global const int *val_off, __global const real_t *val, __global const real_t *q,
                          __global const real_t *bound, __global const real_t *xc, __global const int *active,
                          __global const real_t *step,
                          __global real_t *up, __global real_t *state, __global real_t *g,
                          __global real_t *prev, __global real_t *y, __global real_t *u, __local real_t *scratch)
{
    int p = get_group_id(0), l = get_local_id(0), nl = get_local_size(0);
    int b0, b1;
    if (p >= nprob || !active[p]) return;
    b0 = poff[p];
    b1 = poff[p + 1];
    for (int it = 0; it < iters; ++it) {
        blk_momentum_group(p, poff, off, restart || it > 0, up, state, g, prev, y, scratch);
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (int b = b0 + l; b < b1; b += nl) blk_mul_block(b, off, row_ptr, col, val_off, val, q, y, u);
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (int b = b0 + l; b < b1; b += nl) blk_project_block(b, off, kind, step[p], bound, xc, y, u, g, prev, up);
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    }
}
