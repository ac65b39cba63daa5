// Kernels of tests/wide_backend.rs: a vectorisable loop-free kernel with float math and a
// conversion, one with a loop and divergence, and one with a switch (a jump table in LLVM's
// code) and a constant table.
__kernel void saxpy(__global float* y, __global const float* x, float a) {
    size_t i = get_global_id(0);
    y[i] = fma(a, x[i], y[i]) + (float)(int)(x[i] * 3.0f);
}

__kernel void collatz(__global uint* out) {
    uint n = (uint)get_global_id(0) + 1;
    uint steps = 0;
    while (n != 1 && steps < 1000) {
        n = (n & 1) ? 3 * n + 1 : n / 2;
        steps++;
    }
    out[get_global_id(0)] = steps;
}

__constant int table[7] = {3, 1, 4, 1, 5, 9, 2};

__kernel void cases(__global int* out, __global const int* in) {
    size_t i = get_global_id(0);
    int v = in[i];
    int r;
    switch (v & 7) {
    case 0: r = v * 3; break;
    case 1: r = v ^ 0x55; break;
    case 2: r = table[(uint)v % 7]; break;
    case 3: r = v >> 2; break;
    case 4: r = -v; break;
    case 5: r = v + table[i % 7]; break;
    default: r = 7; break;
    }
    out[i] = r;
}
