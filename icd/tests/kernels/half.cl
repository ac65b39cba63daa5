// Half arithmetic through the loader (cl_khr_fp16).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

kernel void half_arith(global const half *a, global const half *b, global const half *c,
                       global half *out) {
    size_t i = get_global_id(0);
    size_t n = get_global_size(0);
    half x = a[i], y = b[i];
    out[i] = x + y;
    out[i + n] = x - y;
    out[i + 2 * n] = x * y;
    out[i + 3 * n] = x / y;
    out[i + 4 * n] = fma(x, y, c[i]);
    out[i + 5 * n] = sqrt(x);
}
