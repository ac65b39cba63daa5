// Unsigned division and remainder by a divisor every work-item shares
// (src/vectorize/division.rs): 64-bit and 32-bit, and coordinates from a linear size_t index.

__kernel void divide_size_t(__global const ulong* in, __global ulong* q, __global ulong* r,
                            ulong w) {
    size_t i = get_global_id(0);
    q[i] = in[i] / w;
    r[i] = in[i] % w;
}

__kernel void divide_uint(__global const uint* in, __global uint* q, __global uint* r, uint w) {
    size_t i = get_global_id(0);
    q[i] = in[i] / w;
    r[i] = in[i] % w;
}

__kernel void coordinates(__global uint* out, ulong w) {
    size_t i = get_global_id(0);
    out[i] = (uint)(i / w) * 1000u + (uint)(i % w);
}

__kernel void divide_long(__global const long* in, __global long* q, __global long* r, long w) {
    size_t i = get_global_id(0);
    q[i] = in[i] / w;
    r[i] = in[i] % w;
}

__kernel void divide_int(__global const int* in, __global int* q, __global int* r, int w) {
    size_t i = get_global_id(0);
    q[i] = in[i] / w;
    r[i] = in[i] % w;
}

__kernel void int_coordinates(__global int* out, int w) {
    int i = get_global_id(0);
    out[i] = (i / w) * 1000 + i % w;
}
