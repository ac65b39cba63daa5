// Private vectors are aligned to their size (OpenCL C 6.3.5), 128 bytes for 16 longs: the
// address of each, modulo its size, is written out (0 expected), without and with a barrier
// (barrier kernels keep private variables in the work-item frame).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define ADDRESSES(out)                                                          \
    char2 c2; short4 s4; int8 i8; long16 l16; float16 f16; double8 d8; uchar16 uc16; \
    long4 l4; double16 d16;                                                     \
    out[0] = (ulong)&c2 % sizeof(c2);   out[1] = (ulong)&s4 % sizeof(s4);       \
    out[2] = (ulong)&i8 % sizeof(i8);   out[3] = (ulong)&l16 % sizeof(l16);     \
    out[4] = (ulong)&f16 % sizeof(f16); out[5] = (ulong)&d8 % sizeof(d8);       \
    out[6] = (ulong)&uc16 % sizeof(uc16); out[7] = (ulong)&l4 % sizeof(l4);     \
    out[8] = (ulong)&d16 % sizeof(d16);

__kernel void private_alignment(__global ulong *out) {
    __global ulong *o = out + 9 * get_global_id(0);
    ADDRESSES(o)
}

__kernel void private_alignment_barrier(__global ulong *out) {
    __global ulong *o = out + 9 * get_global_id(0);
    long16 keep = (long16)(get_global_id(0));
    barrier(CLK_LOCAL_MEM_FENCE);
    ADDRESSES(o)
    barrier(CLK_LOCAL_MEM_FENCE);
    o[0] += (ulong)(keep.s3 - get_global_id(0));
}
