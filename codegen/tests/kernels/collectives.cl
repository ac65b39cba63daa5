// Work-group collectives (OpenCL C 3.0 with __opencl_c_work_group_collective_functions).
__kernel void collectives(__global const int *a, __global const uint *u, __global const float *f,
                          __global int *out_i, __global uint *out_u, __global float *out_f) {
    size_t g = get_global_id(0) + get_global_id(1) * get_global_size(0);
    int x = a[g];
    out_i[g * 8 + 0] = work_group_reduce_add(x);
    out_i[g * 8 + 1] = work_group_reduce_min(x);
    out_i[g * 8 + 2] = work_group_reduce_max(x);
    out_i[g * 8 + 3] = work_group_scan_inclusive_add(x);
    out_i[g * 8 + 4] = work_group_scan_exclusive_max(x);
    out_i[g * 8 + 5] = work_group_all(x > -1000);
    out_i[g * 8 + 6] = work_group_any(x == 7);
    out_i[g * 8 + 7] = get_work_dim() == 1 ? work_group_broadcast(x, 1) : work_group_broadcast(x, 1, 0);
    uint y = u[g];
    out_u[g * 3 + 0] = work_group_reduce_max(y);
    out_u[g * 3 + 1] = work_group_scan_inclusive_min(y);
    out_u[g * 3 + 2] = work_group_scan_exclusive_add(y);
    float z = f[g];
    out_f[g * 3 + 0] = work_group_reduce_add(z);
    out_f[g * 3 + 1] = work_group_scan_inclusive_max(z);
    out_f[g * 3 + 2] = work_group_reduce_min(z);
}

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void collectives64(__global const long *a, __global const ulong *u, __global const double *f,
                            __global long *out_l, __global ulong *out_u, __global double *out_d) {
    size_t g = get_global_id(0);
    out_l[g * 4 + 0] = work_group_reduce_add(a[g]);
    out_l[g * 4 + 1] = work_group_scan_inclusive_min(a[g]);
    out_l[g * 4 + 2] = work_group_scan_exclusive_max(a[g]);
    out_l[g * 4 + 3] = work_group_broadcast(a[g], 2);
    out_u[g * 2 + 0] = work_group_reduce_min(u[g]);
    out_u[g * 2 + 1] = work_group_scan_exclusive_add(u[g]);
    out_d[g * 2 + 0] = work_group_reduce_max(f[g]);
    out_d[g * 2 + 1] = work_group_scan_inclusive_add(f[g]);
}

// A collective in a loop: work-item 0 runs on to the next iteration before the others read.
__kernel void broadcast_in_loop(__global const int *a, __global int *out) {
    size_t g = get_global_id(0);
    int acc = 0;
    for (int i = 0; i < 3; i++)
        acc += work_group_broadcast(a[g] + i, 0);
    out[g] = acc;
}

// A reduction as SYCL runtimes write it (dpnp's sum): each work-item sums a strided loop under
// a size_t bounds check, the group combines the sums, the first work-item stores them.
__kernel void reduce_per_item(__global const float *in, __global float *partial, uint per_item,
                              ulong n) {
    size_t lid = get_local_id(0), ls = get_local_size(0);
    size_t base = get_group_id(0) * ls * per_item;
    float acc = 0.0f;
    for (uint i = 0; i < per_item; i++) {
        size_t at = base + lid + (size_t)i * ls;
        if (at < n)
            acc += in[at];
    }
    float s = work_group_reduce_add(acc);
    if (lid == 0)
        partial[get_group_id(0)] = s;
}
