// Geometric functions, smoothstep and the dynamic shuffles, checked against host references in
// codegen/tests/builtins.rs. Each work-item reads 4 components of a and b and writes 64 slots.

#define GEO(T, T2, T3, T4)                                                                     \
    kernel void geo_##T(global const T *a, global const T *b, global T *out) {               \
        size_t i = get_global_id(0);                                                           \
        global const T *p = a + 4 * i, *q = b + 4 * i;                                         \
        global T *o = out + 64 * i;                                                            \
        o[0] = length(p[0]);                                                                   \
        o[1] = length(vload2(0, p));                                                           \
        o[2] = length(vload3(0, p));                                                           \
        o[3] = length(vload4(0, p));                                                           \
        o[4] = distance(p[0], q[0]);                                                           \
        o[5] = distance(vload2(0, p), vload2(0, q));                                           \
        o[6] = distance(vload3(0, p), vload3(0, q));                                           \
        o[7] = distance(vload4(0, p), vload4(0, q));                                           \
        o[8] = normalize(p[0]);                                                                \
        vstore2(normalize(vload2(0, p)), 0, o + 9);                                            \
        vstore3(normalize(vload3(0, p)), 0, o + 11);                                           \
        vstore4(normalize(vload4(0, p)), 0, o + 14);                                           \
        vstore3(cross(vload3(0, p), vload3(0, q)), 0, o + 18);                                 \
        vstore4(cross(vload4(0, p), vload4(0, q)), 0, o + 21);                                 \
        o[25] = dot(p[0], q[0]);                                                               \
        o[26] = dot(vload2(0, p), vload2(0, q));                                               \
        o[27] = dot(vload3(0, p), vload3(0, q));                                               \
        o[28] = dot(vload4(0, p), vload4(0, q));                                               \
    }

GEO(float, float2, float3, float4)
GEO(double, double2, double3, double4)

kernel void fast_geo(global const float *a, global const float *b, global float *out) {
    size_t i = get_global_id(0);
    global const float *p = a + 4 * i, *q = b + 4 * i;
    global float *o = out + 64 * i;
    o[0] = fast_length(p[0]);
    o[1] = fast_length(vload2(0, p));
    o[2] = fast_length(vload3(0, p));
    o[3] = fast_length(vload4(0, p));
    o[4] = fast_distance(p[0], q[0]);
    o[5] = fast_distance(vload2(0, p), vload2(0, q));
    o[6] = fast_distance(vload3(0, p), vload3(0, q));
    o[7] = fast_distance(vload4(0, p), vload4(0, q));
    o[8] = fast_normalize(p[0]);
    vstore2(fast_normalize(vload2(0, p)), 0, o + 9);
    vstore3(fast_normalize(vload3(0, p)), 0, o + 11);
    vstore4(fast_normalize(vload4(0, p)), 0, o + 14);
}

// smoothstep with per-component edges and with scalar edges broadcast over a vector.
#define SMOOTH(T, T4)                                                                          \
    kernel void smooth_##T(global const T *e0, global const T *e1, global const T *x,        \
                           global T *out, global T *out4) {                                  \
        size_t i = get_global_id(0);                                                           \
        out[i] = smoothstep(e0[i], e1[i], x[i]);                                               \
        vstore4(smoothstep(e0[i], e1[i], vload4(i, x)), i, out4);                              \
    }
SMOOTH(float, float4)
SMOOTH(double, double4)

// shuffle and shuffle2 for every pair of input width m and result width n in {2, 4, 8, 16};
// each work-item has 16 components of x, y and mask and writes 240 results.
#define S1(T, U, m, n)                                                                         \
    vstore##n(shuffle(vload##m(0, x), vload##n(0, mk)), 0, o);                                 \
    o += n;
#define S2(T, U, m, n)                                                                         \
    vstore##n(shuffle2(vload##m(0, x), vload##m(0, y), vload##n(0, mk)), 0, o);                \
    o += n;
#define ALL_N(S, T, U, m) S(T, U, m, 2) S(T, U, m, 4) S(T, U, m, 8) S(T, U, m, 16)
#define ALL(S, T, U) ALL_N(S, T, U, 2) ALL_N(S, T, U, 4) ALL_N(S, T, U, 8) ALL_N(S, T, U, 16)
#define SHUFFLE(T, U)                                                                          \
    kernel void shuffle_##T(global const T *xs, global const T *ys, global const U *masks,   \
                            global T *out) {                                                 \
        size_t i = get_global_id(0);                                                           \
        global const T *x = xs + 16 * i, *y = ys + 16 * i;                                     \
        global const U *mk = masks + 16 * i;                                                   \
        global T *o = out + 240 * i;                                                           \
        ALL(S1, T, U) ALL(S2, T, U)                                                            \
    }
SHUFFLE(char, uchar)
SHUFFLE(short, ushort)
SHUFFLE(int, uint)
SHUFFLE(long, ulong)
SHUFFLE(float, uint)
SHUFFLE(double, ulong)
