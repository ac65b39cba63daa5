// Kernels for the work-item vectoriser (vectorize.rs): each runs with and without it and the
// results must agree bit for bit. Most are shapes it takes (uniform control flow, private
// arrays with a copy per lane); some it must leave scalar (divergence it cannot mask).
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

// Doubles carried around a loop: the loop's parameters are f64x2 pairs, not four scalars.
__kernel void double_loop(__global const float *a, __global double *dout, uint iters) {
    size_t i = get_global_id(0);
    double x = (double)a[i], y = x * 0.5 + 1.0;
    for (uint k = 0; k < iters; k++) {
        x = fma(x, 0.999, y);
        y = y * 1.0001 - x * 1e-3;
        if (x > 1e6) x = sqrt(x);
    }
    dout[i] = x + y;
}

// 64-bit, 8- and 16-bit data, doubles and halves: per-lane forms.
__kernel void wide_narrow(__global const long *l, __global const double *d, __global const char *c,
                          __global const short *s, __global const half *h, __global long *lo,
                          __global double *dout, __global char *co, __global half *ho) {
    size_t i = get_global_id(0);
    lo[i] = l[i] * 3 + (l[i] >> 7) + (long)c[i] * s[i];
    dout[i] = fma(d[i], 1.5, sqrt(fabs(d[i]))) + (double)l[i];
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

// An MD5-style round loop over a private 16-word block: uniform indices (the round's word),
// a varying one (a word chosen by the data), words written back.
__kernel void md5_block(__global const uint *a, __global uint *out) {
    size_t i = get_global_id(0);
    uint w[16];
    for (int k = 0; k < 16; k++)
        w[k] = a[(i + 3 * k) % 64] ^ (uint)k;
    w[a[i] & 15] += 0x9e3779b9u;
    uint x = 0x67452301u, y = 0xefcdab89u, z = 0x98badcfeu, v = 0x10325476u;
    for (int r = 0; r < 64; r++) {
        uint f, g;
        if (r < 16) { f = (y & z) | (~y & v); g = r; }
        else if (r < 32) { f = (v & y) | (~v & z); g = (5 * r + 1) & 15; }
        else if (r < 48) { f = y ^ z ^ v; g = (3 * r + 5) & 15; }
        else { f = z ^ (y | ~v); g = (7 * r) & 15; }
        uint t = v;
        v = z;
        z = y;
        y = y + rotate(x + f + w[g] + (uint)r * 0x5a827999u, (uint)(r % 7 + 4));
        x = t;
        w[g] ^= y;
    }
    out[i] = x ^ y ^ z ^ v ^ w[a[i] >> 28];
}

// Private memory written under a branch the work-items take differently, bytes and 64-bit
// elements at varying indices, and a private struct copied whole.
typedef struct { uint a; ulong b; uchar c[3]; } Record;

__kernel void private_mixed(__global const uint *a, __global uint *out) {
    size_t i = get_global_id(0);
    uint t[4] = {1, 2, 3, 4};
    if (a[i] & 1)
        t[a[i] & 3] = a[i];
    uchar bytes[24];
    for (int k = 0; k < 24; k++)
        bytes[k] = (uchar)(a[(i + k) % 64] >> (k % 4 * 8));
    bytes[a[i] % 24] ^= 0x5a;
    ulong q[5];
    for (int k = 0; k < 5; k++)
        q[k] = ((ulong)a[(i + k) % 64] << 32) | t[k & 3];
    Record r1 = {a[i], q[a[i] % 5], {bytes[0], bytes[a[i] % 24], bytes[23]}};
    Record r2 = r1;
    r2.c[a[i] % 3] += 1;
    uint s = t[0] + 3 * t[1] + 5 * t[2] + 7 * t[3];
    for (int k = 0; k < 24; k++)
        s = s * 31 + bytes[k];
    out[i] = s ^ (uint)(q[(a[i] >> 8) % 5] >> 7) ^ r2.a ^ (uint)r2.b ^ r2.c[0] ^ r2.c[1] ^ r2.c[2];
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

// A body too large to copy (vectorize.rs, MAX_VECTORISED_INSTRUCTIONS): 2048 mixing steps.
#define MIX(k) x = rotate(x ^ ((uint)(k) * 0x9E3779B9u), (uint)((k) % 31 + 1)) * 0x85EBCA6Bu + (x >> ((k) % 13));
#define R4(k) MIX(k) MIX((k) + 1) MIX((k) + 2) MIX((k) + 3)
#define R16(k) R4(k) R4((k) + 4) R4((k) + 8) R4((k) + 12)
#define R64(k) R16(k) R16((k) + 16) R16((k) + 32) R16((k) + 48)
#define R256(k) R64(k) R64((k) + 64) R64((k) + 128) R64((k) + 192)
__kernel void too_large(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    uint x = in[i];
    R256(0) R256(256) R256(512) R256(768) R256(1024) R256(1280) R256(1536) R256(1792)
    out[i] = x;
}

// 32-bit indices whose four lanes wrap around (vectorize.rs, Guarded): contiguous only where
// they do not; the test maps both ends of the 16 GiB the wrap jumps across.
__kernel void wrapping_index(__global const float *in, __global float *out, uint base) {
    size_t i = get_global_id(0);
    uint j = (uint)i + base;
    out[i] = in[j] * 2.0f;
}

// The same through a min (a vector index, checked at run time): the lanes are consecutive
// modulo 2^32 even where they wrap.
__kernel void wrapping_min(__global const float *in, __global float *out, uint base) {
    size_t i = get_global_id(0);
    uint j = min((uint)i, 15u) + base;
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

// A loop the work-items run differently inside another they also run differently (the trip
// counts of both vary), and a uniform loop inside such a loop: all run under masks.
__kernel void nested_divergent(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    uint acc = 0;
    uint n = in[i] % 7;
    for (uint r = 0; r < n; r++) {
        uint x = in[i] + r;
        while (x > 3) {
            x = x / 3 + (x & 1);
            acc += x;
        }
        for (uint k = 0; k < 3; k++)
            acc = acc * 31u + k;
    }
    out[i] = acc;
}

// Whole vector elements per work-item (vectorize/transpose.rs): the four lanes' elements are
// loaded as k 16-byte rows and transposed into one vector per component; stores the reverse.
// size_t indices are affine, uint ones are checked at run time (Guarded).
__kernel void elements_float4(__global const float4 *in, __global float4 *out) {
    size_t i = get_global_id(0);
    float4 v = in[i];
    out[i] = v.wzyx * 1.5f + v - (float4)(v.y);
}

__kernel void elements_uint4(__global const uint4 *in, __global uint4 *out) {
    uint i = get_global_id(0);
    uint4 v = in[i];
    out[i] = (v ^ (v >> 3)) + v.yzwx * 7u;
}

__kernel void elements_float8(__global const float8 *in, __global float8 *out) {
    size_t i = get_global_id(0);
    float8 v = in[i];
    out[i] = v * v.s76543210 + (float8)(v.s0);
}

__kernel void elements_float16(__global const float16 *in, __global float16 *out) {
    size_t i = get_global_id(0);
    float16 v = in[i];
    out[i] = v.sfedcba9876543210 - v * 0.5f;
}

__kernel void elements_int2(__global const int2 *in, __global int2 *out) {
    size_t i = get_global_id(0);
    int2 v = in[i];
    out[i] = (int2)(v.y - v.x, v.x * 3);
}

// Under a bounds check: all lanes active takes the vector rows, else the active lanes alone.
__kernel void elements_masked(__global const float4 *in, __global float4 *out, uint n) {
    uint i = get_global_id(0);
    if (i < n)
        out[i] = in[i].yxwz + 1.0f;
}

// `c` is `a` in the test: the second load of a[i] must see the store to c[i] (groups do not
// move accesses across a possibly aliasing store).
__kernel void elements_alias(__global float4 *a, __global float4 *c) {
    size_t i = get_global_id(0);
    float4 v = a[i];
    c[i] = v * 2.0f;
    float4 w = a[i];
    a[i] = w + v;
}

// Whole elements copied: the rows are stored as loaded, without transposes.
__kernel void elements_copy(__global const float16 *in, __global float16 *out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
}

// An MD5-style uint4 kernel of about 2,000 SPIR-V instructions (four rounds of 64 steps,
// unrolled): vectorised now that large bodies are (vectorize.rs, no size limit).
#define MD5_F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define MD5_G(x, y, z) (((x) & (z)) | ((y) & ~(z)))
#define MD5_STEP(f, a, b, c, d, k, s) \
    a = b + rotate(a + f(b, c, d) + (uint4)((uint)(k) * 0x9E3779B9u) + m, (uint4)((s) % 31 + 1));
#define MD5_4(f, k) MD5_STEP(f, a, b, c, d, k, 7 * (k)) MD5_STEP(f, d, a, b, c, (k) + 1, 12 + (k)) \
    MD5_STEP(f, c, d, a, b, (k) + 2, 17 + (k)) MD5_STEP(f, b, c, d, a, (k) + 3, 22 + (k))
#define MD5_16(f, k) MD5_4(f, k) MD5_4(f, (k) + 4) MD5_4(f, (k) + 8) MD5_4(f, (k) + 12)
#define MD5_64(f, k) MD5_16(f, k) MD5_16(f, (k) + 16) MD5_16(f, (k) + 32) MD5_16(f, (k) + 48)
__kernel void md5x4_large(__global const uint4 *in, __global uint4 *out) {
    size_t i = get_global_id(0);
    uint4 m = in[i];
    uint4 a = m.yzwx ^ 0x67452301u, b = m.zwxy + 0xEFCDAB89u, c = m ^ 0x98BADCFEu,
          d = (uint4)((uint)i) + 0x10325476u;
    MD5_64(MD5_F, 0) MD5_64(MD5_G, 64) MD5_64(MD5_F, 128) MD5_64(MD5_G, 192)
    out[i] = a ^ b ^ c ^ d;
}

// Indices the analysis cannot prove linear (clamps, min/max, selects) whose lanes are often
// consecutive: one vector access when they are at run time, one per lane otherwise (borders,
// reversed or strided indices). `mode` picks the index; `off` shifts it.
__kernel void clamped_loads(__global const float *in, __global float *out, int n, int off,
                            int mode) {
    int i = get_global_id(0);
    int j;
    if (mode == 0)
        j = clamp(i + off, 0, n - 1);
    else if (mode == 1)
        j = min(i + off, n - 1);
    else if (mode == 2)
        j = max(i + off, 0);
    else if (mode == 3)
        j = off > 0 ? max(n - 1 - i, 0) : i; // reversed when off > 0
    else
        j = clamp(2 * i + off, 0, n - 1); // strided
    out[i] = in[j] * 3.0f + in[clamp(i - off, 0, n - 1)];
}

// Unsigned indices (zero-extended) and an int load: min/max against run-time bounds.
__kernel void minmax_uint(__global const int *in, __global int *out, uint lo, uint hi) {
    uint i = get_global_id(0);
    uint j = max(min(i + 3u, hi), lo);
    out[i] = in[j] - in[min(i, hi)] * 5;
}

// Stores through clamped indices: items past the end write the last element in item order.
__kernel void clamped_stores(__global const float *in, __global float *out, int n, int off) {
    int i = get_global_id(0);
    float v = in[i] + 1.0f;
    out[clamp(i + off, 0, n - 1)] = v;
}

// Clamped accesses inside a branch the work-items take differently: only the active lanes
// may touch memory, the vector access only when all four are.
__kernel void masked_clamped(__global const float *in, __global float *out, int n, int off) {
    int i = get_global_id(0);
    float x = in[i];
    if (x > -5.0f) {
        float y = in[clamp(i + off, 0, n - 1)];
        out[clamp(i - off, 0, n - 1)] = x + y;
    }
}

// Indices computed one lane at a time (`%`): contiguous between the wrap-arounds; the store's
// stride 7 is contiguous only when n divides 6.
__kernel void modulo_index(__global const float *in, __global float *out, uint n, uint off) {
    uint i = get_global_id(0);
    out[(i * 7u) % n] = in[(i + off) % n] * 2.0f;
}

// 64-bit indices through size_t min (four scalars): consecutive, clamped, reversed.
__kernel void clamped_size_t(__global const float *in, __global float *out, ulong n, long off) {
    size_t i = get_global_id(0);
    size_t j = min(i + (size_t)off, (size_t)n - 1);
    out[min(i + 1, (size_t)n - 1)] = in[j] * 2.0f + in[n - 1 - min(i, (size_t)n - 1)];
}

// 64-bit unsigned compares of an index linear in the id with shared bounds (vectorize/special.rs
// `affine_compare`), at offsets that make some lanes wrap past 2^64.
__kernel void bounds_u64(__global uint *out, ulong off, ulong bound) {
    size_t i = get_global_id(0);
    ulong a = i * 3 + off;
    uint bits = (a < bound) | (a <= bound) << 1 | (a > bound) << 2 | (a >= bound) << 3
              | (bound > a) << 4 | (bound <= a) << 5;
    if (a < bound)
        bits |= 1u << 6;
    out[i] = bits;
}
