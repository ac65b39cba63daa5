// language: -cl-std=CL3.0
// OpenCL C 3.0 barrier forms and the work-group shape of non-uniform ranges, run by
// icd/tests/barriers.rs.

// work_group_barrier with a global fence, then with both fences at work-group scope: the
// neighbours' global and local stores are visible after each barrier. `data` holds two
// arrays of the global size.
kernel void work_group_barrier_forms(global int *data, global int *out, local int *buf) {
    size_t l = get_local_id(0), n = get_local_size(0);
    size_t g = get_global_id(0) - get_global_offset(0);
    global int *second = data + get_global_size(0);
    data[g] = (int)(l * 3 + 1);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE);
    int from_global = data[g - l + (l + 1) % n];
    buf[l] = from_global * 10;
    second[g] = from_global + 5;
    work_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE, memory_scope_work_group);
    out[g] = buf[(l + 2) % n] + second[g - l + (l + 3) % n];
}

// Every work-item records its group's shape (enqueued and actual local sizes, number of
// groups, group ids) and the number of work-items its group counted in local memory, at
// the position of its global id relative to the offset (x fastest). 14 uints per work-item.
kernel void group_shape(global uint *out, local uint *count) {
    size_t sx = get_local_size(0), sy = get_local_size(1);
    size_t lin = (get_local_id(2) * sy + get_local_id(1)) * sx + get_local_id(0);
    if (lin == 0)
        *count = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(count);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint counted = *count;
    size_t gx = get_global_id(0) - get_global_offset(0);
    size_t gy = get_global_id(1) - get_global_offset(1);
    size_t gz = get_global_id(2) - get_global_offset(2);
    global uint *o = out + ((gz * get_global_size(1) + gy) * get_global_size(0) + gx) * 14;
    for (uint d = 0; d < 3; d++) {
        o[d] = get_enqueued_local_size(d);
        o[3 + d] = get_local_size(d);
        o[6 + d] = get_num_groups(d);
        o[9 + d] = get_group_id(d);
    }
    o[12] = counted;
    o[13] = get_local_linear_id() == lin;
}
