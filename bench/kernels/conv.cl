// Stencil / 5x5 convolution with weights in __constant memory, clamped borders.
#define R 2
__kernel void conv(__global const float* in, __global float* out, __constant float* w,
                   uint width, uint height) {
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dy = -R; dy <= R; dy++) {
        int yy = clamp(y + dy, 0, (int)height - 1);
        for (int dx = -R; dx <= R; dx++) {
            int xx = clamp(x + dx, 0, (int)width - 1);
            acc += w[(dy + R) * (2 * R + 1) + dx + R] * in[yy * width + xx];
        }
    }
    out[y * width + x] = acc;
}
