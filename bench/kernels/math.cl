// Math-heavy (issue #34): seven full-precision built-ins per element (sin, cos, exp, log,
// exp2, log2, pow), in float and in double. The source starts with MATH_FLOAT or MATH_DOUBLE
// (see src/kernels.rs), so each program holds only the kernel its row launches: its build
// time is its own, as on a platform that compiles kernels lazily.
// Inputs lie in [-1.5, 4): 2 + x stays positive for log2.

#ifdef MATH_FLOAT
__kernel void math_float(__global const float* in, __global float* out) {
    size_t i = get_global_id(0);
    float x = in[i];
    out[i] = sin(x) * cos(2.0f * x) + exp(0.5f * x) * log(1.0f + x * x) + exp2(-x * x)
           + log2(2.0f + x) + pow(1.0f + fabs(x), 0.75f);
}
#endif

#ifdef MATH_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void math_double(__global const double* in, __global double* out) {
    size_t i = get_global_id(0);
    double x = in[i];
    out[i] = sin(x) * cos(2.0 * x) + exp(0.5 * x) * log(1.0 + x * x) + exp2(-x * x)
           + log2(2.0 + x) + pow(1.0 + fabs(x), 0.75);
}
#endif
