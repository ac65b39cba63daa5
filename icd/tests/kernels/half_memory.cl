// vload_half/vstore_half through the loader: halves in memory, always available (no
// cl_khr_fp16 needed).

kernel void load_half(global const half *p, global float *o) {
    size_t i = get_global_id(0);
    o[i] = vload_half(i, p);
}

kernel void loada_half3(global const half *p, global float *o) {
    size_t i = get_global_id(0);
    vstore3(vloada_half3(i, p), i, o);
}

kernel void load_half16(global const half *p, global float *o) {
    size_t i = get_global_id(0);
    vstore16(vload_half16(i, p), i, o);
}

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
STORES(float)

