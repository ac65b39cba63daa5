/* Kernels of icd/tests/math_options.rs: mad, correctly rounded divide and sqrt, options that
 * only permit optimisations, nan() payloads. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

kernel void mad_f(global const float *a, global const float *b, global const float *c,
                  global float *o) {
    size_t i = get_global_id(0);
    o[i] = mad(a[i], b[i], c[i]);
}
kernel void mad_f4(global const float4 *a, global const float4 *b, global const float4 *c,
                   global float4 *o) {
    size_t i = get_global_id(0);
    o[i] = mad(a[i], b[i], c[i]);
}
kernel void mad_h(global const ushort *a, global const ushort *b, global const ushort *c,
                  global ushort *o) {
    size_t i = get_global_id(0);
    o[i] = as_ushort(mad(as_half(a[i]), as_half(b[i]), as_half(c[i])));
}
kernel void mad_d(global const double *a, global const double *b, global const double *c,
                  global double *o) {
    size_t i = get_global_id(0);
    o[i] = mad(a[i], b[i], c[i]);
}

kernel void div_sqrt(global const float *a, global const float *b,
                       global float *q, global float *third, global float *r) {
    size_t i = get_global_id(0);
    q[i] = a[i] / b[i];
    third[i] = a[i] / 3.0f;
    r[i] = sqrt(a[i]);
}
kernel void div_sqrt4(global const float4 *a, global const float4 *b,
                      global float4 *q, global float4 *third, global float4 *r) {
    size_t i = get_global_id(0);
    q[i] = a[i] / b[i];
    third[i] = a[i] / 3.0f;
    r[i] = sqrt(a[i]);
}

kernel void permissive(global const float *a, global float *o) {
    size_t i = get_global_id(0);
    float x = a[i];
    o[4 * i] = sin(x) + x * 0.5f;
    o[4 * i + 1] = exp(-fabs(x)) / (1.0f + x * x);
    o[4 * i + 2] = -x * 0.0f;
    o[4 * i + 3] = isnan(x) ? -1.0f : sqrt(fabs(x));
}

kernel void nan_f(global const uint *code, global float *o) {
    size_t i = get_global_id(0);
    o[i] = nan(code[i]);
}
kernel void nan_d(global const ulong *code, global double *o) {
    size_t i = get_global_id(0);
    o[i] = nan(code[i]);
}
kernel void nan_h(global const ushort *code, global ushort *o) {
    size_t i = get_global_id(0);
    o[i] = as_ushort(nan(code[i]));
}
