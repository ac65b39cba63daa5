// vload_half / vstore_half in every width and rounding mode (Float16Buffer: no cl_khr_fp16).

kernel void load_half(global const half *p, global float *o) {
    size_t i = get_global_id(0);
    o[i] = vload_half(i, p);
}

#define LOADS(n)                                                               \
    kernel void load_half##n(global const half *p, global float *o) {         \
        size_t i = get_global_id(0);                                           \
        vstore##n(vload_half##n(i, p), i, o);                                  \
    }                                                                          \
    kernel void loada_half##n(global const half *p, global float *o) {        \
        size_t i = get_global_id(0);                                           \
        vstore##n(vloada_half##n(i, p), i, o);                                 \
    }
LOADS(2)
LOADS(3)
LOADS(4)
LOADS(8)
LOADS(16)

// Scalar stores: store_<type>_<mode> (mode "def" is the device default).
#define STORE1(T, MODE, SUFFIX)                                                \
    kernel void store_##T##_##MODE(global const T *x, global half *q) {       \
        size_t i = get_global_id(0);                                           \
        vstore_half##SUFFIX(x[i], i, q);                                       \
    }
#define STOREN(T, n, MODE, SUFFIX)                                             \
    kernel void store_##T##n##_##MODE(global const T *x, global half *q) {    \
        size_t i = get_global_id(0);                                           \
        vstore_half##n##SUFFIX(vload##n(i, x), i, q);                          \
    }                                                                          \
    kernel void storea_##T##n##_##MODE(global const T *x, global half *q) {   \
        size_t i = get_global_id(0);                                           \
        vstorea_half##n##SUFFIX(vload##n(i, x), i, q);                         \
    }
#define STORES(T, MODE, SUFFIX)                                                \
    STORE1(T, MODE, SUFFIX)                                                    \
    STOREN(T, 2, MODE, SUFFIX)                                                 \
    STOREN(T, 3, MODE, SUFFIX)                                                 \
    STOREN(T, 4, MODE, SUFFIX)                                                 \
    STOREN(T, 8, MODE, SUFFIX)                                                 \
    STOREN(T, 16, MODE, SUFFIX)
#define ALL_MODES(T)                                                           \
    STORES(T, def, )                                                           \
    STORES(T, rte, _rte)                                                       \
    STORES(T, rtz, _rtz)                                                       \
    STORES(T, rtp, _rtp)                                                       \
    STORES(T, rtn, _rtn)
ALL_MODES(float)
ALL_MODES(double)
