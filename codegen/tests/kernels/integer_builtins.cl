// Integer builtins at every width and signedness, scalar and as vectors (the same inputs read
// through vload4/vload16 must give the same per-component results), checked against exact
// host references in codegen/tests/builtins.rs.

#define INT_OPS(T, UT, V4)                                                                     \
    kernel void int_ops_##T(global const T *a, global const T *b, global const T *c,          \
                            global T *out, global UT *uout) {                                 \
        size_t i = get_global_id(0), n = get_global_size(0);                                   \
        T x = a[i], y = b[i], z = c[i];                                                        \
        out[0 * n + i] = add_sat(x, y);                                                        \
        out[1 * n + i] = sub_sat(x, y);                                                        \
        out[2 * n + i] = hadd(x, y);                                                           \
        out[3 * n + i] = rhadd(x, y);                                                          \
        out[4 * n + i] = mad_sat(x, y, z);                                                     \
        out[5 * n + i] = rotate(x, y);                                                         \
        out[6 * n + i] = clz(x);                                                               \
        out[7 * n + i] = ctz(x);                                                               \
        out[8 * n + i] = popcount(x);                                                          \
        out[9 * n + i] = mul_hi(x, y);                                                         \
        out[10 * n + i] = mad_hi(x, y, z);                                                     \
        out[11 * n + i] = max(x, y);                                                           \
        out[12 * n + i] = min(x, y);                                                           \
        out[13 * n + i] = clamp(x, min(y, z), max(y, z));                                      \
        uout[i] = abs_diff(x, y);                                                              \
    }                                                                                          \
    kernel void int_ops4_##T(global const T *a, global const T *b, global const T *c,         \
                             global T *out, global UT *uout) {                                \
        size_t i = get_global_id(0), n = get_global_size(0);                                   \
        V4 x = vload4(i, a), y = vload4(i, b), z = vload4(i, c);                               \
        vstore4(add_sat(x, y), 0 * n + i, out);                                                \
        vstore4(sub_sat(x, y), 1 * n + i, out);                                                \
        vstore4(hadd(x, y), 2 * n + i, out);                                                   \
        vstore4(rhadd(x, y), 3 * n + i, out);                                                  \
        vstore4(mad_sat(x, y, z), 4 * n + i, out);                                             \
        vstore4(rotate(x, y), 5 * n + i, out);                                                 \
        vstore4(clz(x), 6 * n + i, out);                                                       \
        vstore4(ctz(x), 7 * n + i, out);                                                       \
        vstore4(popcount(x), 8 * n + i, out);                                                  \
        vstore4(mul_hi(x, y), 9 * n + i, out);                                                 \
        vstore4(mad_hi(x, y, z), 10 * n + i, out);                                             \
        vstore4(max(x, y), 11 * n + i, out);                                                   \
        vstore4(min(x, y), 12 * n + i, out);                                                   \
        vstore4(clamp(x, min(y, z), max(y, z)), 13 * n + i, out);                              \
        vstore4(abs_diff(x, y), i, uout);                                                      \
    }

INT_OPS(char, uchar, char4)
INT_OPS(uchar, uchar, uchar4)
INT_OPS(short, ushort, short4)
INT_OPS(ushort, ushort, ushort4)
INT_OPS(int, uint, int4)
INT_OPS(uint, uint, uint4)
INT_OPS(long, ulong, long4)
INT_OPS(ulong, ulong, ulong4)

// upsample(hi, lo) for each source width; out holds the double-width results.
#define UPSAMPLE(H, L, R)                                                                      \
    kernel void upsample_##H(global const H *hi, global const L *lo, global R *out) {          \
        size_t i = get_global_id(0);                                                           \
        out[i] = upsample(hi[i], lo[i]);                                                       \
    }
UPSAMPLE(char, uchar, short)
UPSAMPLE(uchar, uchar, ushort)
UPSAMPLE(short, ushort, int)
UPSAMPLE(ushort, ushort, uint)
UPSAMPLE(int, uint, long)
UPSAMPLE(uint, uint, ulong)

// mul24/mad24 are defined for operands in the 24-bit range only.
kernel void mul24_int(global const int *a, global const int *b, global const int *c,
                      global int *out) {
    size_t i = get_global_id(0), n = get_global_size(0);
    out[i] = mul24(a[i], b[i]);
    out[n + i] = mad24(a[i], b[i], c[i]);
}
kernel void mul24_uint(global const uint *a, global const uint *b, global const uint *c,
                       global uint *out) {
    size_t i = get_global_id(0), n = get_global_size(0);
    out[i] = mul24(a[i], b[i]);
    out[n + i] = mad24(a[i], b[i], c[i]);
}
