// Atomics: 256-bin histogram accumulated in local memory, merged into global bins.
#define BINS 256
#define PER_ITEM 16
__kernel __attribute__((reqd_work_group_size(BINS, 1, 1)))
void histogram_local(__global const uint* data, __global uint* bins) {
    __local uint lbins[BINS];
    uint lid = get_local_id(0);
    lbins[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t base = get_group_id(0) * (size_t)(BINS * PER_ITEM);
    for (uint k = 0; k < PER_ITEM; k++)
        atomic_inc(&lbins[data[base + k * BINS + lid] & (BINS - 1)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&bins[lid], lbins[lid]);
}
