// language: -cl-std=CL3.0 -Xclang -cl-ext=-all,+__opencl_c_work_group_collective_functions,+__opencl_c_int64,+cl_khr_fp64,+__opencl_c_fp64,+cl_khr_fp16
// Work-group collective functions (OpenCL C 3.0 with __opencl_c_work_group_collective_functions;
// half with cl_khr_fp16). Every work-item writes its results at its global linear id.

// Reductions and scans with add, min and max, then a broadcast from local id
// (size0 - 1, size1 / 2, size2 - 1) in the form matching the launch's dimensions.
#define COLLECTIVES(T)                                                                   \
    kernel void collectives_##T(global const T *in, global T *out) {                     \
        size_t g = get_global_linear_id();                                               \
        T x = in[g];                                                                     \
        global T *o = out + g * 10;                                                      \
        o[0] = work_group_reduce_add(x);                                                 \
        o[1] = work_group_reduce_min(x);                                                 \
        o[2] = work_group_reduce_max(x);                                                 \
        o[3] = work_group_scan_inclusive_add(x);                                         \
        o[4] = work_group_scan_inclusive_min(x);                                         \
        o[5] = work_group_scan_inclusive_max(x);                                         \
        o[6] = work_group_scan_exclusive_add(x);                                         \
        o[7] = work_group_scan_exclusive_min(x);                                         \
        o[8] = work_group_scan_exclusive_max(x);                                         \
        size_t bx = get_local_size(0) - 1, by = get_local_size(1) / 2;                   \
        size_t bz = get_local_size(2) - 1;                                               \
        if (get_work_dim() == 1)                                                         \
            o[9] = work_group_broadcast(x, bx);                                          \
        else if (get_work_dim() == 2)                                                    \
            o[9] = work_group_broadcast(x, bx, by);                                      \
        else                                                                             \
            o[9] = work_group_broadcast(x, bx, by, bz);                                  \
    }

COLLECTIVES(int)
COLLECTIVES(uint)
COLLECTIVES(long)
COLLECTIVES(ulong)
COLLECTIVES(float)
COLLECTIVES(double)

#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
COLLECTIVES(half)
#endif

// work_group_all and work_group_any on predicates that hold for all, some or none.
kernel void votes(global const int *in, global int *out) {
    size_t g = get_global_linear_id();
    int x = in[g];
    global int *o = out + g * 4;
    o[0] = work_group_all(x > 0);
    o[1] = work_group_any(x > 0);
    o[2] = work_group_all(x != 7);
    o[3] = work_group_any(x == 7);
}
