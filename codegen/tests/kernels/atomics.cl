// Every OpAtomic* clang emits for OpenCL C 1.2 atomics, on global and local memory.
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

__kernel void global_ops(__global int *g, __global uint *u, __global long *l, __global float *f,
                         __global int *old) {
    int i = get_global_id(0);
    atomic_inc(&g[0]);
    atomic_dec(&g[1]);
    atomic_add(&g[2], i);
    atomic_sub(&g[3], i);
    atomic_min(&g[4], 100 - i * 3);
    atomic_max(&g[5], i * 7 - 50);
    atomic_and(&u[0], ~(1u << (i % 32)));
    atomic_or(&u[1], 1u << (i % 32));
    atomic_xor(&u[2], 1u << (i % 5));
    atomic_min(&u[3], (uint)(i + 3));
    atomic_max(&u[4], (uint)i);
    atom_add(&l[0], (long)i << 33);
    atom_max(&l[1], (long)i - 1000000000000L);
    atomic_xchg(&f[0], (float)i);
    // A spin-free claim: exactly one work-item sees 0 and wins.
    old[i] = atomic_cmpxchg(&g[6], 0, i + 1);
}

__kernel void local_histogram(__global const uchar *data, __global uint *hist, __local uint *bins) {
    uint l = get_local_id(0), n = get_local_size(0);
    for (uint b = l; b < 16; b += n) bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&bins[data[get_global_id(0)] & 15]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = l; b < 16; b += n) atomic_add(&hist[b], bins[b]);
}
