// Atomics: 256-bin histogram with every increment an atomic on global memory.
#define BINS 256
#define PER_ITEM 16
__kernel void histogram_global(__global const uint* data, __global uint* bins) {
    size_t n = get_global_size(0);
    size_t i = get_global_id(0);
    for (uint k = 0; k < PER_ITEM; k++)
        atomic_inc(&bins[data[i + k * n] & (BINS - 1)]);
}
