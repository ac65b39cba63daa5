// Single-precision operations whose results depend on denormal flushing and the default
// rounding mode (icd/tests/config.rs runs them under different FERROCL_* settings).
__kernel void arith(__global const float *a, __global const float *b, __global float *add,
                    __global float *mul, __global float *fma_out, __global float *sqrt_out,
                    __global float *div_out) {
    size_t i = get_global_id(0);
    add[i] = a[i] + b[i];
    mul[i] = a[i] * b[i];
    fma_out[i] = fma(a[i], b[i], 0.0f);
    sqrt_out[i] = sqrt(a[i]);
    div_out[i] = a[i] / b[i];
}

__kernel void to_float(__global const uint *in, __global float *out) {
    size_t i = get_global_id(0);
    out[i] = convert_float(in[i]);
}
