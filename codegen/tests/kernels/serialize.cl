// The program cache's round trip (tests/serialize.rs): calls into mathlib and libcalls,
// program-scope constant and global data (one initialised with another's address, one large
// and zero), local memory with barriers, a vectorised loop, printf formats, an image read and
// a literal sampler.

constant float weights[4] = {0.5f, 1.5f, -2.0f, 4.0f};
global int counter = 7;
global int *global_ptr = &counter;
global float zeros[1 << 18];

kernel void math(global const float *in, global float *out) {
    size_t i = get_global_id(0);
    float x = in[i];
    out[i] = sin(x) * weights[i & 3] + exp(x * 0.1f) + fmod(x, 0.7f) + floor(x * 3.0f) +
             pow(fabs(x) + 1.0f, 0.3f);
}

kernel void globals(global int *out) {
    size_t i = get_global_id(0);
    out[i] = *global_ptr + (int)i + (int)zeros[i * 7];
}

kernel void reduce(global const float *in, global float *out) {
    local float scratch[64];
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    for (uint s = get_local_size(0) / 2; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < s)
            scratch[l] += scratch[l + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0)
        out[get_group_id(0)] = scratch[0];
}

kernel void loops(global const uint *in, global uint *out, uint rounds) {
    size_t i = get_global_id(0);
    uint h = in[i];
    for (uint r = 0; r < rounds; r++)
        h = rotate(h ^ (h >> 7), 5u) * 0x9e3779b9u + popcount(h);
    out[i] = h;
}

kernel void printing(global const int *in) {
    printf("%d %s %v2hlf\n", in[0], "text", (float2)(1.0f, 2.0f));
}

kernel void image(read_only image2d_t img, global float4 *out) {
    out[0] = read_imagef(img, (int2)(0, 0));
}

kernel void literal_sampler(read_only image2d_t img, global float4 *out) {
    const sampler_t s = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
    out[0] = read_imagef(img, s, (float2)(0.5f, 0.5f));
}
