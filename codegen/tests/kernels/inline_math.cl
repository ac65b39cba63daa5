// The math functions codegen emits inline (inline_math.rs), on bit patterns so that every
// input, NaNs included, reaches them unchanged. Scalars and float4 (the vector path).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void rsqrt_f(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    out[i] = as_uint(rsqrt(as_float(in[i])));
}

// 12 results per input: logb, ilogb, frexp (m, e), modf (f, i), fract (f, floor), maxmag,
// minmag, nextafter, ldexp (x, y) where y is the next input and the exponent comes from it.
__kernel void float_f(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    float x = as_float(in[i]);
    float y = as_float(in[i ^ 1]);
    int e;
    float ip, fl;
    __global uint *o = out + 12 * i;
    o[0] = as_uint(logb(x));
    o[1] = (uint)ilogb(x);
    o[2] = as_uint(frexp(x, &e));
    o[3] = (uint)e;
    o[4] = as_uint(modf(x, &ip));
    o[5] = as_uint(ip);
    o[6] = as_uint(fract(x, &fl));
    o[7] = as_uint(fl);
    o[8] = as_uint(maxmag(x, y));
    o[9] = as_uint(minmag(x, y));
    o[10] = as_uint(nextafter(x, y));
    o[11] = as_uint(ldexp(x, (int)in[i ^ 1] >> 22));
}

// The same through float4 (each lane is input 4i + lane), and nan(uint4).
__kernel void float4_f(__global const uint4 *in, __global uint4 *out) {
    size_t i = get_global_id(0);
    float4 x = as_float4(in[i]);
    float4 y = as_float4(in[i].yxwz);
    int4 e;
    float4 ip, fl;
    __global uint4 *o = out + 13 * i;
    o[0] = as_uint4(logb(x));
    o[1] = as_uint4(ilogb(x));
    o[2] = as_uint4(frexp(x, &e));
    o[3] = as_uint4(e);
    o[4] = as_uint4(modf(x, &ip));
    o[5] = as_uint4(ip);
    o[6] = as_uint4(fract(x, &fl));
    o[7] = as_uint4(fl);
    o[8] = as_uint4(maxmag(x, y));
    o[9] = as_uint4(minmag(x, y));
    o[10] = as_uint4(nextafter(x, y));
    o[11] = as_uint4(ldexp(x, as_int4(in[i].yxwz) >> 22));
    o[12] = as_uint4(nan(in[i]));
}

__kernel void double_f(__global const ulong *in, __global ulong *out) {
    size_t i = get_global_id(0);
    double x = as_double(in[i]);
    double y = as_double(in[i ^ 1]);
    int e;
    double ip, fl;
    __global ulong *o = out + 12 * i;
    o[0] = as_ulong(logb(x));
    o[1] = (ulong)(uint)ilogb(x);
    o[2] = as_ulong(frexp(x, &e));
    o[3] = (ulong)(uint)e;
    o[4] = as_ulong(modf(x, &ip));
    o[5] = as_ulong(ip);
    o[6] = as_ulong(fract(x, &fl));
    o[7] = as_ulong(fl);
    o[8] = as_ulong(maxmag(x, y));
    o[9] = as_ulong(minmag(x, y));
    o[10] = as_ulong(nextafter(x, y));
    o[11] = as_ulong(nan(in[i]));
}

// Halves: the inline rounding of f32 results and the inline encoding at stores. 12 results
// per input pair (a, b): a + b, a * b, a / b, (half)float of the 32-bit input, rsqrt, logb,
// ilogb, frexp (m, e), modf (f, i), fract's f.
__kernel void half_f(__global const uint *in, __global ushort *out) {
    size_t i = get_global_id(0);
    half a = as_half((ushort)in[i]);
    half b = as_half((ushort)(in[i] >> 16));
    int e;
    half ip, fl;
    __global ushort *o = out + 12 * i;
    o[0] = as_ushort(a + b);
    o[1] = as_ushort(a * b);
    o[2] = as_ushort(a / b);
    o[3] = as_ushort((half)as_float(in[i]));
    o[4] = as_ushort(rsqrt(a));
    o[5] = as_ushort(logb(a));
    o[6] = (ushort)ilogb(a);
    o[7] = as_ushort(frexp(a, &e));
    o[8] = (ushort)e;
    o[9] = as_ushort(modf(a, &ip));
    o[10] = as_ushort(ip);
    o[11] = as_ushort(fract(b, &fl));
}

// degrees and radians (two results per input), on bit patterns: float, float4, double, half.
__kernel void angle_f(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    float x = as_float(in[i]);
    out[2 * i] = as_uint(degrees(x));
    out[2 * i + 1] = as_uint(radians(x));
}

__kernel void angle_f4(__global const uint4 *in, __global uint4 *out) {
    size_t i = get_global_id(0);
    float4 x = as_float4(in[i]);
    out[2 * i] = as_uint4(degrees(x));
    out[2 * i + 1] = as_uint4(radians(x));
}

__kernel void angle_d(__global const ulong *in, __global ulong *out) {
    size_t i = get_global_id(0);
    double x = as_double(in[i]);
    out[2 * i] = as_ulong(degrees(x));
    out[2 * i + 1] = as_ulong(radians(x));
}

/* Doubles loaded as doubles (the work-item vectoriser's pair form), scalar and double4. */
__kernel void angle_dv(__global const double *in, __global double *deg, __global double *rad) {
    size_t i = get_global_id(0);
    double x = in[i];
    deg[i] = degrees(x);
    rad[i] = radians(x);
}

__kernel void angle_d4(__global const double4 *in, __global double4 *deg, __global double4 *rad) {
    size_t i = get_global_id(0);
    deg[i] = degrees(in[i]);
    rad[i] = radians(in[i]);
}

__kernel void angle_h(__global const ushort *in, __global ushort *out) {
    size_t i = get_global_id(0);
    half x = as_half(in[i]);
    out[2 * i] = as_ushort(degrees(x));
    out[2 * i + 1] = as_ushort(radians(x));
}
