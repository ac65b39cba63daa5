// Double precision must keep denormals whatever the single-precision settings are.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void dmul(__global const double *a, __global const double *b, __global double *out,
                   __global float *demoted) {
    size_t i = get_global_id(0);
    out[i] = a[i] * b[i];
    demoted[i] = (float)(a[i] * b[i]);
}
