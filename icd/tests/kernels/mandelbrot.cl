// Escape-time Mandelbrot. Contraction is OFF so every operation is a separately
// rounded IEEE f32 op and the host (Rust, which never contracts) computes the same
// bits: iteration counts must match exactly.
#pragma OPENCL FP_CONTRACT OFF

__kernel void mandelbrot(__global uint *out, float x0, float y0, float dx, float dy,
                         uint width, uint max_iter)
{
    uint px = get_global_id(0);
    uint py = get_global_id(1);
    float cx = x0 + dx * (float)px;
    float cy = y0 + dy * (float)py;
    float zx = 0.0f;
    float zy = 0.0f;
    uint i = 0;
    while (i < max_iter) {
        float zx2 = zx * zx;
        float zy2 = zy * zy;
        if (zx2 + zy2 > 4.0f)
            break;
        float nzx = (zx2 - zy2) + cx;
        zy = (2.0f * zx) * zy + cy;
        zx = nzx;
        i++;
    }
    out[py * width + px] = i;
}
