// Every vector width (2, 3, 4, 8, 16) of char, short, int, long, float and double: arithmetic,
// comparisons, select, swizzles (OpVectorShuffle), construction, component insertion, dynamic
// extraction/insertion (also out of range, which must not crash), vloadn/vstoren, the 4-slot
// memory layout of 3-component vectors and vectors passed by value. Checked in
// codegen/tests/vectors.rs.

#define REV2(v) (v).s10
#define REV3(v) (v).s201
#define REV4(v) (v).s3210
#define REV8(v) (v).s76543210
#define REV16(v) (v).sfedcba9876543210
#define CONS2(T, x, y) (T##2)((x).s1, (y).s0)
#define CONS3(T, x, y) (T##3)((x).s0, (y).s12)
#define CONS4(T, x, y) (T##4)((x).s0, (y).s12, (x).s3)
#define CONS8(T, x, y) (T##8)((x).lo, (y).s5, (y).s6, (x).s7, (y).s4)
#define CONS16(T, x, y) (T##16)((x).lo, (y).hi.lo, (x).s0, (x).s1, (y).s2, (y).s3)

// Results per work-item, each n components: 0 x+y, 1 x*y, 2 x-by_value, 3 select(x, y, x<y),
// 4 reversed x, 5 construct, 6 x with component 1 replaced by y.s0, 7 x with component i%n
// replaced by y.s0 (dynamic), 8 (component 0) x[i%n], 9 (components 0 and 1) any(x < y) and
// all(x <= y); iout: x<y, x==y as int vectors.
// The out-of-range dynamic accesses go to junk, which is not checked.
#define VEC(T, IT, n)                                                                          \
    kernel void vec_##T##n(global const T *a, global const T *b, T##n by_value,              \
                           global T *out, global int *iout, global T##n *typed,             \
                           uint far_index, global T *junk) {                                  \
        size_t i = get_global_id(0);                                                           \
        T##n x = vload##n(i, a), y = vload##n(i, b);                                           \
        global T *o = out + 10 * n * i;                                                         \
        vstore##n(x + y, 0, o);                                                                \
        vstore##n(x * y, 1, o);                                                                \
        vstore##n(x - by_value, 2, o);                                                         \
        vstore##n(select(x, y, x < y), 3, o);                                                  \
        vstore##n(REV##n(x), 4, o);                                                            \
        vstore##n(CONS##n(T, x, y), 5, o);                                                     \
        T##n t = x;                                                                            \
        t.s1 = y.s0;                                                                           \
        vstore##n(t, 6, o);                                                                    \
        T##n d = x;                                                                            \
        d[i % n] = y.s0;                                                                       \
        vstore##n(d, 7, o);                                                                    \
        o[8 * n] = x[i % n];                                                                   \
        o[9 * n] = any(x < y);                                                                 \
        o[9 * n + 1] = all(x <= y);                                                            \
        vstore##n(convert_int##n(x < y), 2 * i, iout);                                         \
        vstore##n(convert_int##n(x == y), 2 * i + 1, iout);                                    \
        typed[i] = x + y;                                                                      \
        T##n e = x;                                                                            \
        e[far_index] = y.s0;                                                                   \
        vstore##n(e, i, junk);                                                                 \
        junk[n * get_global_size(0) + i] = x[far_index];                                       \
    }

#define ALL_WIDTHS(T, IT) VEC(T, IT, 2) VEC(T, IT, 3) VEC(T, IT, 4) VEC(T, IT, 8) VEC(T, IT, 16)
ALL_WIDTHS(char, char)
ALL_WIDTHS(short, short)
ALL_WIDTHS(int, int)
ALL_WIDTHS(long, long)
ALL_WIDTHS(float, int)
ALL_WIDTHS(double, long)
