// Kernels for the work-item vectoriser (vectorize.rs): each runs with and without it and the
// results must agree bit for bit. Most are shapes it takes (uniform control flow); some it
// must leave scalar (divergence, private arrays).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void vadd(__global const float *a, __global const float *b, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

// 32-bit indices: (ulong)(uint)gid addressing.
__kernel void triad_uint(__global float *a, __global const float *b, __global const float *c,
                         float s) {
    uint i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}

__kernel void int_index(__global const int *in, __global int *out) {
    int i = get_global_id(0);
    out[i] = in[i] * 3 - (in[i] >> 2) + i;
}

// A uniform inner loop with loads from shared addresses and a float4 accumulator.
__kernel void nbody(__global const float4 *pos, __global float4 *acc, uint n, float eps2) {
    uint i = get_global_id(0);
    float4 p = pos[i];
    float4 a = (float4)(0.0f);
    for (uint j = 0; j < n; j++) {
        float4 q = pos[j];
        float4 d = (float4)(q.xyz - p.xyz, 0.0f);
        float r2 = dot(d, d) + eps2;
        float inv = rsqrt(r2);
        float s = q.w * inv * inv * inv;
        a += s * d;
    }
    acc[i] = a;
}

__kernel void sgemm(__global const float *A, __global const float *B, __global float *C, uint n) {
    uint col = get_global_id(0);
    uint row = get_global_id(1);
    float acc = 0.0f;
    for (uint k = 0; k < n; k++)
        acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}

__kernel void conv(__global const float *in, __global float *out, __constant float *w,
                   uint width, uint height) {
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; dy++) {
        int yy = clamp(y + dy, 0, (int)height - 1);
        for (int dx = -2; dx <= 2; dx++) {
            int xx = clamp(x + dx, 0, (int)width - 1);
            acc += w[(dy + 2) * 5 + dx + 2] * in[yy * width + xx];
        }
    }
    out[y * width + x] = acc;
}

__kernel void hash(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    uint x = in[i];
    uint h = 0x811C9DC5u ^ (uint)i;
    for (uint r = 0; r < 16; r++) {
        x ^= x >> 15;
        x *= 0x2C1B3C6Du;
        x = rotate(x, (uint)(r + 7));
        h = (h ^ x) * 0x01000193u;
        h += popcount(x) + clz(h | 1u);
    }
    out[i] = h ^ x;
}

// Compares, selects, conversions, bit casts, min/max, rounding, fma, division by varying values.
__kernel void mixed(__global const float *a, __global const int *b, __global float *f,
                    __global int *o) {
    size_t i = get_global_id(0);
    float x = a[i];
    int k = b[i];
    float y = x > 0.5f ? floor(x * 7.0f) : ceil(x * 3.0f);
    y = fmin(y, (float)k) + fmax(x, -1.0f) + fabs(x) - sqrt(fabs(x)) + trunc(x) + rint(x * 5.0f);
    int m = (int)y + (k < 0 ? -k : k) + max(k, 3) - min(k, -2) + (k / 3) + (k % 5);
    uint u = as_uint(x) ^ (uint)k;
    f[i] = y + (float)u + (x != x ? 1.0f : 0.0f) + (isnan(x) ? 2.0f : 0.0f) + x / (float)(k | 1) +
           fma(x, y, (float)k);
    o[i] = m + (int)(u >> 3) + (k > 0 && x < 1.0f) + (uint)(k * 7 < 9);
}

// 64-bit, 8- and 16-bit data, doubles and halves: per-lane forms.
__kernel void wide_narrow(__global const long *l, __global const double *d, __global const char *c,
                          __global const short *s, __global const half *h, __global long *lo,
                          __global double *dout, __global char *co, __global half *ho) {
    size_t i = get_global_id(0);
    lo[i] = l[i] * 3 + (l[i] >> 7) + (long)c[i] * s[i];
    dout[i] = d[i] * 1.5 + sqrt(fabs(d[i])) + (double)l[i];
    co[i] = (char)(c[i] + s[i] * 2);
    ho[i] = h[i] * (half)2.5f + h[i];
}

// A uniform branch (on an argument) around varying work, and a switch on a uniform value.
__kernel void uniform_branch(__global const float *a, __global float *out, int mode) {
    size_t i = get_global_id(0);
    float v = a[i];
    if (mode > 2)
        v = v * 2.0f;
    else
        v = v - 1.0f;
    switch (mode) {
    case 0: v += 1.0f; break;
    case 1: v += 2.0f; break;
    case 3: v *= v; break;
    default: v = -v; break;
    }
    out[i] = v;
}

// Calls per lane (mathlib), atomics per lane, a store every work-item makes to one place.
__kernel void calls_and_atomics(__global const float *a, __global float *out,
                                __global int *counter, __global int *flag) {
    size_t i = get_global_id(0);
    out[i] = sin(a[i]) + exp(a[i] * 0.1f);
    atomic_add(counter, (int)i);
    *flag = 7;
}

// Must stay scalar: the work-items diverge (a varying loop exit), and a private array.
__kernel void divergent(__global const float *a, __global uint *out) {
    size_t i = get_global_id(0);
    float z = 0.0f;
    uint n = 0;
    while (n < 64 && z < 4.0f) {
        z = z * z + a[i];
        n++;
    }
    out[i] = n;
}

__kernel void private_array(__global const int *a, __global int *out) {
    size_t i = get_global_id(0);
    int t[8];
    for (int k = 0; k < 8; k++)
        t[k] = a[(i + k) % 64];
    out[i] = t[a[i] & 7];
}

// Varying branches made straight-line code: a bounds check around loads and stores (inactive
// lanes must not touch memory), nested branches with an else, a uniform load and a call and an
// atomic under a varying condition, and 64-bit and boolean values merged at the join.
__kernel void guarded(__global const float *a, __global float *out, uint n) {
    uint i = get_global_id(0);
    if (i < n)
        out[i] = a[i] * 2.0f + 1.0f;
}

__kernel void nested_ifs(__global const int *a, __global int *out, __global int *other,
                         __global const int *table) {
    size_t i = get_global_id(0);
    int v = a[i];
    long w = (long)v * 3;
    bool odd = (v & 1) != 0;
    if (v > 0) {
        if (v > 1000000) {
            out[i] = v - table[0];
            w = w * 5;
        } else {
            other[i] = v + table[1];
            odd = !odd;
        }
    } else {
        out[i] = -v;
        w = -w;
    }
    out[i + 256] = (int)(w >> 1) + odd;
}

__kernel void masked_calls(__global const float *a, __global float *out, __global int *count) {
    size_t i = get_global_id(0);
    float x = a[i];
    float r = 0.0f;
    if (x > 0.0f) {
        r = exp(x * 0.25f);
        atomic_inc(count);
    }
    out[i] = r;
}

// A uniform loop inside a varying branch: kept scalar for now.
__kernel void loop_in_branch(__global const float *a, __global float *out, uint n, uint k) {
    uint i = get_global_id(0);
    if (i < n) {
        float acc = 0.0f;
        for (uint j = 0; j < k; j++)
            acc += a[i + j];
        out[i] = acc;
    }
}

// A body too large to copy (vectorize.rs, MAX_VECTORISED_INSTRUCTIONS): 1024 mixing steps.
#define MIX(k) x = rotate(x ^ ((uint)(k) * 0x9E3779B9u), (uint)((k) % 31 + 1)) * 0x85EBCA6Bu + (x >> ((k) % 13));
#define R4(k) MIX(k) MIX((k) + 1) MIX((k) + 2) MIX((k) + 3)
#define R16(k) R4(k) R4((k) + 4) R4((k) + 8) R4((k) + 12)
#define R64(k) R16(k) R16((k) + 16) R16((k) + 32) R16((k) + 48)
#define R256(k) R64(k) R64((k) + 64) R64((k) + 128) R64((k) + 192)
__kernel void too_large(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    uint x = in[i];
    R256(0) R256(256) R256(512) R256(768)
    out[i] = x;
}

// 32-bit indices whose four lanes wrap around (vectorize.rs, Guarded): contiguous only where
// they do not; the test maps both ends of the 16 GiB the wrap jumps across.
__kernel void wrapping_index(__global const float *in, __global float *out, uint base) {
    size_t i = get_global_id(0);
    uint j = (uint)i + base;
    out[i] = in[j] * 2.0f;
}

// Loops the work-items leave at different times, run under a mask: the escape count of the
// Mandelbrot set, a loop left by a break or by its condition with values used after it, a
// store inside, and such a loop inside a uniform loop.
__kernel void mandel(__global const float *c, __global uint *out, uint max_iter) {
    size_t i = get_global_id(0);
    float cr = c[2 * i], ci = c[2 * i + 1];
    float zr = 0.0f, zi = 0.0f;
    uint n = 0;
    while (n < max_iter && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        n++;
    }
    out[i] = n;
}

__kernel void collatz(__global const uint *in, __global uint *out, __global uint *trace) {
    size_t i = get_global_id(0);
    uint x = in[i] % 1000 + 1;
    uint steps = 0;
    ulong peak = x;
    for (;;) {
        if (x == 1)
            break;
        x = (x & 1) ? 3 * x + 1 : x / 2;
        peak = max(peak, (ulong)x);
        if (steps < 4)
            trace[4 * i + steps] = x;
        steps++;
    }
    out[2 * i] = steps;
    out[2 * i + 1] = (uint)peak;
}

__kernel void nested_loops(__global const uint *in, __global uint *out, uint rounds) {
    size_t i = get_global_id(0);
    uint acc = 0;
    for (uint r = 0; r < rounds; r++) {
        uint x = in[i] + r;
        while (x > 3) {
            x = x / 3 + (x & 1);
            acc += x;
        }
    }
    out[i] = acc;
}
