// A work-group sum of halves (OpGroupFAdd on half): accumulated and rounded to half.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

kernel void half_group_sum(global const half *a, global half *sum, global half *prefix) {
    size_t i = get_global_id(0);
    sum[i] = work_group_reduce_add(a[i]);
    prefix[i] = work_group_scan_inclusive_max(a[i]);
}
