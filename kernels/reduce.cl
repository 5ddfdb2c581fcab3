/* needs: cone.h local_solve.h schedule.h */
/* Deterministic per-problem sums: work-group g sums the K-value rows of
 * problem g's contacts. The rows go into REDUCE_WG fixed stripes (stripe
 * v takes contacts c0 + v, c0 + v + REDUCE_WG, ...), each added in order
 * by whichever lane owns it, then a fixed tree combines the stripes. So
 * the result depends only on the data, never on scheduling (no atomics)
 * nor on the work-group size: a device whose kernels take fewer than
 * REDUCE_WG lanes (clc_kernel_lanes) gives the same bits. */
#define REDUCE_WG CONE_REDUCE_WG

__kernel void reduce_rows(int nprob, __global const int *prob_off, int K,
                          __global const real_t *vals, __global real_t *out,
                          __local real_t *scratch)
{
    int g = get_group_id(0), l = get_local_id(0), nl = get_local_size(0);
    int c0, c1;
    if (g >= nprob) return;
    c0 = prob_off[g];
    c1 = prob_off[g + 1];
    for (int v = l; v < REDUCE_WG; v += nl) {
        real_t acc[8];
        for (int k = 0; k < K; ++k) acc[k] = 0;
        for (int c = c0 + v; c < c1; c += REDUCE_WG)
            for (int k = 0; k < K; ++k) acc[k] += vals[K * c + k];
        for (int k = 0; k < K; ++k) scratch[K * v + k] = acc[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = REDUCE_WG / 2; w > 0; w /= 2) {
        for (int v = l; v < w; v += nl)
            for (int k = 0; k < K; ++k) scratch[K * v + k] += scratch[K * (v + w) + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        for (int k = 0; k < K; ++k) out[K * g + k] = scratch[k];
}
