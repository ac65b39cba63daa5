// vstore_half from doubles through the loader (needs fp64; halves need nothing).

#define STORES(T)                                                              \
    kernel void store_##T(global const T *x, global half *q) {                \
        size_t i = get_global_id(0);                                           \
        size_t n = get_global_size(0);                                         \
        vstore_half(x[i], i, q);                                               \
        vstore_half_rte(x[i], i + n, q);                                       \
        vstore_half_rtz(x[i], i + 2 * n, q);                                   \
        vstore_half_rtp(x[i], i + 3 * n, q);                                   \
        vstore_half_rtn(x[i], i + 4 * n, q);                                   \
    }                                                                          \
    kernel void storea3_rtp_##T(global const T *x, global half *q) {          \
        size_t i = get_global_id(0);                                           \
        vstorea_half3_rtp(vload3(i, x), i, q);                                 \
    }                                                                          \
    kernel void store16_rtn_##T(global const T *x, global half *q) {          \
        size_t i = get_global_id(0);                                           \
        vstore_half16_rtn(vload16(i, x), i, q);                                \
    }
STORES(double)

