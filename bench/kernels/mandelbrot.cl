// Compute-bound with divergent loops: escape iteration count per pixel.
__kernel void mandelbrot(__global uint* out, uint width, uint height, uint max_iter) {
    uint px = get_global_id(0), py = get_global_id(1);
    float cr = -2.0f + 2.5f * (float)px / (float)width;
    float ci = -1.25f + 2.5f * (float)py / (float)height;
    float zr = 0.0f, zi = 0.0f;
    uint i = 0;
    while (i < max_iter && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        i++;
    }
    out[py * width + px] = i;
}
