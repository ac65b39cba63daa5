// y = a * x + y. FP_CONTRACT is left ON (the OpenCL C default), so the compiler may
// turn a*x+y into mad/fma: the host accepts either rounding.
__kernel void saxpy(float a, __global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
