// language: -cl-std=CL1.2 -Xclang -cl-ext=-all,+cl_intel_subgroups
// Sub-group built-ins and collectives in OpenCL C 1.2 (clang-15 declares them there only for
// cl_intel_subgroups: cl_khr_subgroups is a 2.0 extension to it; SPIR-V 1.0 needs only the
// Groups capability with Subgroup scope).
kernel void subgroup_basic(global const int *in, global int *out) {
    size_t g = get_global_id(1) * get_global_size(0) + get_global_id(0);
    int x = in[g];
    global int *o = out + g * 5;
    o[0] = get_sub_group_local_id();
    o[1] = sub_group_reduce_add(x);
    o[2] = sub_group_scan_inclusive_min(x);
    o[3] = sub_group_broadcast(x, 0);
    o[4] = sub_group_any(x == 3);
}
