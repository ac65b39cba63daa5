// Division and remainder by a divisor every work-item shares (src/vectorize/division.rs):
// unsigned and signed, 64-bit and 32-bit, and coordinates from a linear index.

// q = in / w and r = in % w of element type T.
#define DIVIDE(name, T)                                                                    \
    __kernel void name(__global const T* in, __global T* q, __global T* r, T w) {          \
        size_t i = get_global_id(0);                                                       \
        q[i] = in[i] / w;                                                                  \
        r[i] = in[i] % w;                                                                  \
    }

DIVIDE(divide_size_t, ulong)
DIVIDE(divide_uint, uint)
DIVIDE(divide_long, long)
DIVIDE(divide_int, int)

__kernel void coordinates(__global uint* out, ulong w) {
    size_t i = get_global_id(0);
    out[i] = (uint)(i / w) * 1000u + (uint)(i % w);
}

__kernel void int_coordinates(__global int* out, int w) {
    int i = get_global_id(0);
    out[i] = (i / w) * 1000 + i % w;
}

// Constant divisors: 32-bit lanes divide as vectors (LLVM multiplies by the reciprocal), the
// signed ones negative dividends included; 64-bit lanes through doubles.
__kernel void constant_divisors(__global const int* in, __global int* out) {
    size_t i = get_global_id(0);
    int x = in[i];
    uint u = (uint)x;
    ulong l = (ulong)(long)x * 0x10001ul;
    out[4 * i] = (int)(u % 13u) + (int)(u / 1000u) * 16;
    out[4 * i + 1] = x / 7 + x % -3;
    out[4 * i + 2] = (int)(l / 10ul) ^ (int)(l % 10ul);
    out[4 * i + 3] = x / -1 + (x % 1);
}
