// Kernels whose explicit vectors vector_pack.rs packs back into SIMD vectors (and one it
// leaves to the work-item vectoriser), compared bit for bit with their scalar builds by
// tests/vector_pack.rs.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// Loop-carried float4 chains (the peak benchmark's shape) and a float4 store.
__kernel void chains_float4(__global float4 *out, __global const float4 *in, uint iters) {
    size_t g = get_global_id(0);
    float4 a = in[0], b = in[1];
    float4 x0 = in[2 + (g & 7)], x1 = in[3 + (g & 7)] * 0.5f;
    for (uint i = 0; i < iters; i++) {
        x0 = fma(x0, a, b);
        x1 = fma(x1, a, b);
        x0 = x0 * 0.999f - x1 * 0.001f;
    }
    out[g] = x0 + x1;
}

// MD5-style rounds on uint4: rotations, bit selects, shifts, loads at a computed index.
__kernel void rounds_uint4(__global uint4 *out, __global const uint4 *in) {
    size_t g = get_global_id(0);
    uint4 a = in[g], b = in[g + 1], c = a ^ b, d = (uint4)(1, 2, 3, 4) + a;
    for (int r = 0; r < 16; r++) {
        uint4 f = (b & c) | (~b & d);
        uint4 t = a + f + (uint4)(0x5a827999u) + in[(g + r) % 64];
        a = d;
        d = c;
        c = rotate(b, (uint4)10);
        b = b + rotate(t, (uint4)7) + (t >> 3) - (t << 5) * 3u;
    }
    out[g] = a + b + c + d;
}

// A hash's state compared with a target and never stored (as a password cracker's kernels
// do): the packer starts from the vector results translation made, not from stores.
__kernel void compared_uint4(__global uint *out, __global const uint4 *in) {
    size_t g = get_global_id(0);
    uint4 a = in[g], b = in[g + 1], c = a ^ b, d = (uint4)(1, 2, 3, 4) + a;
    for (int r = 0; r < 16; r++) {
        uint4 f = (b & c) | (~b & d);
        uint4 t = a + f + (uint4)(0x5a827999u);
        a = d;
        d = c;
        c = rotate(b, (uint4)10);
        b = b + rotate(t, (uint4)7) + (t >> 3);
    }
    uint4 h = a + b + c + d;
    out[g] = h.x ^ h.y ^ h.z ^ h.w;
}

// double2 arithmetic.
__kernel void doubles(__global double2 *out, __global const double2 *in) {
    size_t g = get_global_id(0);
    double2 x = in[g], y = in[g + 1];
    double2 z = sqrt(fabs(x)) / (y * y + 1.0) + fmin(x, y) - fmax(x, -y);
    out[g] = fma(z, x, y);
}

// double2 values carried around a loop.
__kernel void doubles_loop(__global double2 *out, __global const double2 *in, uint iters) {
    size_t g = get_global_id(0);
    double2 a = in[0], x = in[g + 1], y = in[g + 2];
    for (uint i = 0; i < iters; i++) {
        x = fma(x, a, y);
        y = sqrt(fabs(y)) + x / (a * a + 1.0);
    }
    out[g] = x - y;
}

// int4 shifts by a shared amount and by one per lane, multiplies.
__kernel void shifts_int4(__global int4 *out, __global const int4 *in, int s) {
    size_t g = get_global_id(0);
    int4 x = in[g];
    out[g] = (x >> 3) * 7 + (x << (s & 7)) - (x >> (int4)(1, 2, 3, 4)) + rotate(x, (int4)(s));
}

// float4 math around a barrier: the work-item vectoriser leaves such kernels alone.
__kernel void barrier_float4(__global float4 *out, __global const float4 *in) {
    __local float4 tile[64];
    size_t l = get_local_id(0), g = get_global_id(0);
    tile[l] = in[g] * 2.0f + 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = tile[(l + 1) % get_local_size(0)] * tile[l] - in[g];
}

// Compares, selects, clamps and conversions on float4/int4.
__kernel void compares_float4(__global float4 *out, __global const float4 *in) {
    size_t g = get_global_id(0);
    float4 x = in[g], y = in[g + 1];
    int4 gt = isgreater(x, y);
    float4 m = select(x, y, gt) + clamp(x, -0.5f, 0.5f) + step(0.25f, y);
    // islessgreater is an ordered not-equal, which Cranelift has no vector form of.
    int4 i = convert_int4(m * 100.0f) + gt + islessgreater(x, y) + isequal(x, y);
    float4 b = bitselect(x, y, as_float4(as_uint4(x) & 0x80000000u));
    out[g] = convert_float4(i) * fmin(x, y) + fmax(x, 0.0f) + (x < y ? x : y) + b;
}

// Swizzles and halves of two vectors.
__kernel void swizzles_float4(__global float4 *out, __global const float4 *in) {
    size_t g = get_global_id(0);
    float4 x = in[g], y = in[g + 1];
    float4 a = x.wzyx * y + (float4)(x.xy, y.zw);
    float8 w = (float8)(x, y);
    out[g] = a + w.s4567 * w.s0123.yxwz;
}

// Components written one by one, one of them from another.
__kernel void components(__global float4 *out, __global const float4 *in) {
    size_t g = get_global_id(0);
    float4 x = in[g], y;
    y.x = x.x * 2.0f;
    y.y = y.x + x.y * 2.0f;
    y.z = x.z * 2.0f;
    y.w = x.w * 2.0f;
    out[g] = y * x;
}

// float4 differences beside scalar dot products: mostly scalar arithmetic, so the work-items
// share vectors instead.
__kernel void partial_float4(__global float *out, __global const float4 *in) {
    size_t g = get_global_id(0);
    float4 p = in[g];
    float s = 0.0f;
    for (int j = 0; j < 8; j++) {
        float4 d = in[j] - p;
        s += 1.0f / sqrt(dot(d, d) + 0.01f);
    }
    out[g] = s;
}
