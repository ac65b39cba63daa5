// Conversions with explicit rounding modes and saturation (FPRoundingMode / SaturatedConversion).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void int_to_float(__global const int *i, __global const uint *u, __global const long *l,
                           __global const ulong *ul, __global float *out) {
    size_t g = get_global_id(0);
    __global float *o = out + g * 16;
    o[0] = convert_float_rte(i[g]);  o[1] = convert_float_rtz(i[g]);
    o[2] = convert_float_rtp(i[g]);  o[3] = convert_float_rtn(i[g]);
    o[4] = convert_float_rte(u[g]);  o[5] = convert_float_rtz(u[g]);
    o[6] = convert_float_rtp(u[g]);  o[7] = convert_float_rtn(u[g]);
    o[8] = convert_float_rte(l[g]);  o[9] = convert_float_rtz(l[g]);
    o[10] = convert_float_rtp(l[g]); o[11] = convert_float_rtn(l[g]);
    o[12] = convert_float_rte(ul[g]); o[13] = convert_float_rtz(ul[g]);
    o[14] = convert_float_rtp(ul[g]); o[15] = convert_float_rtn(ul[g]);
}

__kernel void double_to_float(__global const double *d, __global float *out) {
    size_t g = get_global_id(0);
    out[g * 4 + 0] = convert_float_rte(d[g]);
    out[g * 4 + 1] = convert_float_rtz(d[g]);
    out[g * 4 + 2] = convert_float_rtp(d[g]);
    out[g * 4 + 3] = convert_float_rtn(d[g]);
}

__kernel void float_to_int(__global const float *f, __global int *out, __global int *sat, __global char *narrow,
                           __global const int *i) {
    size_t g = get_global_id(0);
    out[g * 4 + 0] = convert_int_rte(f[g]);
    out[g * 4 + 1] = convert_int_rtz(f[g]);
    out[g * 4 + 2] = convert_int_rtp(f[g]);
    out[g * 4 + 3] = convert_int_rtn(f[g]);
    sat[g] = convert_int_sat(f[g]);
    narrow[g] = convert_char_sat(i[g]);
}
