// cl_intel_bfloat16_conversions: float to bfloat16 (as ushort) and back, scalars and vectors of
// 2, 3, 4, 8 and 16, one element per work-item.

#ifndef cl_intel_bfloat16_conversions
#error cl_intel_bfloat16_conversions is not defined
#endif

kernel void to_bf16(global const float *x, global ushort *y) {
    size_t i = get_global_id(0);
    y[i] = intel_convert_bfloat16_as_ushort(x[i]);
}

kernel void from_bf16(global const ushort *x, global float *y) {
    size_t i = get_global_id(0);
    y[i] = intel_convert_as_bfloat16_float(x[i]);
}

#define VECTORS(N)                                                                              \
    kernel void to_bf16_##N(global const float *x, global ushort *y) {                          \
        size_t i = get_global_id(0);                                                            \
        vstore##N(intel_convert_bfloat16##N##_as_ushort##N(vload##N(i, x)), i, y);              \
    }                                                                                           \
    kernel void from_bf16_##N(global const ushort *x, global float *y) {                        \
        size_t i = get_global_id(0);                                                            \
        vstore##N(intel_convert_as_bfloat16##N##_float##N(vload##N(i, x)), i, y);               \
    }

VECTORS(2)
VECTORS(3)
VECTORS(4)
VECTORS(8)
VECTORS(16)
