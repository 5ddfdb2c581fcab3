/* Deterministic per-problem sums: work-group g sums the K-value rows of
 * problem g's contacts. Each lane adds a fixed strided subset in order,
 * then a fixed tree combines the lanes, so the result depends only on the
 * data and the work-group size, never on scheduling (no atomics). */
#define REDUCE_WG CONE_REDUCE_WG

__kernel __attribute__((reqd_work_group_size(REDUCE_WG, 1, 1)))
void reduce_rows(int nprob, __global const int *prob_off, int K,
                 __global const real_t *vals, __global real_t *out,
                 __local real_t *scratch)
{
    int g = get_group_id(0), l = get_local_id(0);
    int c0, c1;
    real_t acc[8];
    if (g >= nprob) return;
    c0 = prob_off[g];
    c1 = prob_off[g + 1];
    for (int k = 0; k < K; ++k) acc[k] = 0;
    for (int c = c0 + l; c < c1; c += REDUCE_WG)
        for (int k = 0; k < K; ++k) acc[k] += vals[K * c + k];
    for (int k = 0; k < K; ++k) scratch[K * l + k] = acc[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = REDUCE_WG / 2; w > 0; w /= 2) {
        if (l < w)
            for (int k = 0; k < K; ++k) scratch[K * l + k] += scratch[K * (l + w) + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        for (int k = 0; k < K; ++k) out[K * g + k] = scratch[k];
}
