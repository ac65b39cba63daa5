// Kernels of machine_code_cache.rs: calls into mathlib and a libcall, a constant table (data the
// code reaches through a relocation), a loop, local memory with barriers, and products that are
// subnormal for the inputs the test gives (flush-to-zero changes them).
constant float weights[8] = {0.5f, 1.5f, -2.0f, 4.0f, 0.25f, -0.75f, 3.0f, 1.0f};

kernel void mix(global const float *in, global float *out, global uint *hashes) {
    size_t i = get_global_id(0);
    float x = in[i];
    out[i] = sin(x) * weights[i & 7] + exp(-x * x) + pow(fabs(x), 0.75f) + fmod(x, 1.3f) +
             floor(x) + ceil(x * 0.3f);
    uint h = as_uint(x);
    for (int r = 0; r < 8; r++)
        h = rotate(h ^ (h >> 13), 7u) * 0x9e3779b9u + popcount(h);
    hashes[i] = h;
}

kernel void tile_sum(global const float *in, global float *out) {
    local float scratch[64];
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    for (uint s = 32; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < s)
            scratch[l] += scratch[l + s];
    }
    if (l == 0)
        out[get_group_id(0)] = scratch[0];
}

kernel void scale(global const float *in, global float *out, float factor) {
    size_t i = get_global_id(0);
    out[i] = in[i] * factor;
}
