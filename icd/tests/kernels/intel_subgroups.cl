// cl_intel_subgroups: the four shuffles for each type the extension lists, and the buffer
// block reads and writes. Work-item i writes shuffle(a, c), shuffle_down(a, b, c),
// shuffle_up(a, b, c) and shuffle_xor(a, c) of its inputs to out[4 i .. 4 i + 3].

#ifndef cl_intel_subgroups
#error cl_intel_subgroups is not defined
#endif
#ifndef cl_intel_required_subgroup_size
#error cl_intel_required_subgroup_size is not defined
#endif

#define SHUFFLES(T, NAME)                                                                       \
    kernel void shuffles_##NAME(global const T *x, global const T *y, global const uint *c,       \
                                global T *out) {                                                \
        size_t i = get_global_id(0);                                                            \
        T a = x[i], b = y[i];                                                                   \
        uint k = c[i];                                                                          \
        out[4 * i] = intel_sub_group_shuffle(a, k);                                             \
        out[4 * i + 1] = intel_sub_group_shuffle_down(a, b, k);                                 \
        out[4 * i + 2] = intel_sub_group_shuffle_up(a, b, k);                                   \
        out[4 * i + 3] = intel_sub_group_shuffle_xor(a, k);                                     \
    }

SHUFFLES(int, int)
SHUFFLES(uint, uint)
SHUFFLES(long, long)
SHUFFLES(ulong, ulong)
SHUFFLES(float, float)
SHUFFLES(float2, float2)
SHUFFLES(float4, float4)
SHUFFLES(float8, float8)
SHUFFLES(float16, float16)
SHUFFLES(int2, int2)
SHUFFLES(int4, int4)
SHUFFLES(uint8, uint8)
SHUFFLES(int16, int16)
SHUFFLES(double, double)

#pragma OPENCL EXTENSION cl_khr_fp16 : enable
SHUFFLES(half, half)

// Three-component vectors are 16 bytes apart in buffers: vload3/vstore3 keep them packed.
kernel void shuffles_float3(global const float *x, global const float *y, global const uint *c,
                            global float *out) {
    size_t i = get_global_id(0);
    float3 a = vload3(i, x), b = vload3(i, y);
    uint k = c[i];
    vstore3(intel_sub_group_shuffle(a, k), 4 * i, out);
    vstore3(intel_sub_group_shuffle_down(a, b, k), 4 * i + 1, out);
    vstore3(intel_sub_group_shuffle_up(a, b, k), 4 * i + 2, out);
    vstore3(intel_sub_group_shuffle_xor(a, k), 4 * i + 3, out);
}

// Each sub-group (s its index in the launch, sub-groups of 4) reads the 60 uints at
// `in + 60 s` with the four block reads side by side (4, 8, 16 and 32 uints) and writes each
// read's values plus its width to the same places of `out + 60 s`.
kernel void block_io(global const uint *in, global uint *out) {
    size_t s = get_global_id(0) / get_max_sub_group_size();
    global const uint *p = in + 60 * s;
    global uint *q = out + 60 * s;
    uint a = intel_sub_group_block_read(p);
    uint2 b = intel_sub_group_block_read2(p + 4);
    uint4 c = intel_sub_group_block_read4(p + 12);
    uint8 d = intel_sub_group_block_read8(p + 28);
    intel_sub_group_block_write(q, a + 1);
    intel_sub_group_block_write2(q + 4, b + 2);
    intel_sub_group_block_write4(q + 12, c + 4);
    intel_sub_group_block_write8(q + 28, d + 8);
}

__attribute__((intel_reqd_sub_group_size(4)))
kernel void required_size(global uint *out) {
    size_t i = get_global_id(0);
    out[i] = get_max_sub_group_size() * 100 + get_sub_group_local_id();
}
