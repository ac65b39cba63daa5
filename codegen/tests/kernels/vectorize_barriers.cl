// Kernels with barriers: the regions the work-item vectoriser widens in wide code (a loop of
// their own, no frame use in it, nothing masked: codegen kernel.rs `vectorize_regions`), those
// it leaves, and kernels with local atomics, which it must keep one work-item at a time.

#define WG 64

// Tree reduction in local memory: a varying branch (lid < s) in every region.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const float *in, __global float *partial) {
    __local float scratch[WG];
    uint lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}

// A reduction as SYCL runtimes write it: each work-item accumulates a strided loop with a
// size_t bounds check (a region with a loop, widened), then the group combines the sums (a
// loop in a branch, left).
__kernel void reduce_strided(__global const float *in, __global float *partial, uint per_item,
                             ulong n) {
    __local float sums[128];
    uint lid = get_local_id(0), ls = get_local_size(0);
    size_t base = get_group_id(0) * get_local_size(0) * per_item;
    float acc = 0.0f;
    for (uint i = 0; i < per_item; i++) {
        size_t at = base + lid + (size_t)i * ls;
        if (at < n)
            acc += in[at];
    }
    sums[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        float s = 0.0f;
        for (uint j = 0; j < ls; j++)
            s += sums[j];
        partial[get_group_id(0)] = s;
    }
}

// A reduction whose per-item part the compiler unrolls: eight loads under a bounds check and
// no loop in the region (widened: eight accesses besides one frame value), then the group's
// sums combined by the first work-item.
__kernel void reduce_unrolled(__global const float *in, __global float *partial, ulong n) {
    __local float sums[128];
    uint lid = get_local_id(0), ls = get_local_size(0);
    size_t base = get_group_id(0) * get_local_size(0) * 8;
    float acc = 0.0f;
#pragma unroll
    for (uint i = 0; i < 8; i++) {
        size_t at = base + lid + (size_t)i * ls;
        if (at < n)
            acc += in[at];
    }
    sums[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        float s = 0.0f;
        for (uint j = 0; j < ls; j++)
            s += sums[j];
        partial[get_group_id(0)] = s;
    }
}

// A private array kept across a barrier and used in loops on both sides (left scalar: its
// loops would gather and scatter the frames lane by lane).
__kernel void private_across(__global const float *in, __global float *out, __local float *tmp) {
    uint lid = get_local_id(0), ls = get_local_size(0);
    size_t g = get_global_id(0);
    float v[4];
    for (int k = 0; k < 4; k++)
        v[k] = in[g] * (float)(k + 1);
    tmp[lid] = v[3];
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = tmp[ls - 1 - lid];
    for (int k = 0; k < 4; k++)
        s += v[k] * (float)k;
    out[g] = s;
}

// Values kept across barriers in the work-item frames (x, y and the running sum), neighbours
// read through local memory, any local size.
__kernel void stencil(__global const float *in, __global float *out, __local float *tile) {
    size_t g = get_global_id(0);
    uint lid = get_local_id(0), n = get_local_size(0);
    float x = in[g];
    float y = x * 0.5f + 1.0f;
    tile[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    float left = tile[(lid + n - 1) % n], right = tile[(lid + 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[lid] = left + right + y;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = tile[n - 1 - lid] * x + y;
}

// Tiled matrix product (square tiles of 8 work-items a side in local memory).
#define TILE 8
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void sgemm_tiled(__global const float *a, __global const float *b, __global float *c, uint n) {
    __local float ta[TILE][TILE], tb[TILE][TILE];
    uint lx = get_local_id(0), ly = get_local_id(1);
    uint col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (uint t = 0; t < n / TILE; t++) {
        ta[ly][lx] = a[row * n + t * TILE + lx];
        tb[ly][lx] = b[(t * TILE + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < TILE; k++)
            acc += ta[ly][k] * tb[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}

// Local histogram: atomic increments on local memory by every work-item, many to one bin.
#define BINS 16
__kernel void histogram_local(__global const uint *data, __global uint *bins) {
    __local uint lbins[BINS];
    uint lid = get_local_id(0);
    if (lid < BINS)
        lbins[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&lbins[data[get_global_id(0)] % BINS]);
    atomic_add(&lbins[0], 2);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < BINS)
        atomic_add(&bins[lid], lbins[lid]);
}

// Local atomics without a barrier: each work-item takes a ticket from a per-group counter.
__kernel void local_counter(__global uint *tickets) {
    __local uint counter;
    tickets[get_global_id(0)] = atomic_inc(&counter);
}

// Work-items past `n` return before the tile loop's barriers (undefined behaviour by the
// letter of the spec, common in practice). Groups wholly below `n` run the regions statically
// (widened in wide code); in the last group the work-items disagree at the first barrier
// and go on in the dynamic rounds (static_schedule.rs). Each reads its own row only.
__kernel void tiles_early_return(__global const float *a, __global float *out, uint n,
                                 uint rounds) {
    __local float rows[16 * 96];
    uint l = get_local_id(0), g = get_global_id(0);
    if (g >= n)
        return;
    float acc = 0.0f;
    for (uint t = 0; t < rounds; t++) {
        for (uint k = 0; k < 16; k++)
            rows[16 * l + k] = a[g] + (float)k;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < 16; k++)
            acc += rows[16 * l + ((k + t) & 15)] * 0.5f;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g] = acc;
}
