// Transcendental-heavy: sin, cos, exp, log per element.
__kernel void transcendental(__global const float* in, __global float* out) {
    size_t i = get_global_id(0);
    float x = in[i];
    out[i] = sin(x) * cos(0.5f * x) + exp(-0.25f * x * x) + log(1.0f + x * x);
}
