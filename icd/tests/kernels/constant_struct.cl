// __constant pointer arguments and a struct passed by value (with padding after a
// uchar and an 8-byte-aligned ulong field, to pin down the C ABI layout).
#pragma OPENCL FP_CONTRACT OFF

typedef struct {
    uchar negate;   /* offset 0, then 3 bytes of padding */
    float scale;    /* offset 4 */
    ulong mask;     /* offset 8 */
    int offset;     /* offset 16 */
    float bias[2];  /* offset 20 .. 28, struct size 32 (align 8) */
} Params;

__kernel void apply(__constant float *table, __constant uint *index, uint index_len,
                    Params p, __global const float *in, __global float *out,
                    __global ulong *masked)
{
    size_t i = get_global_id(0);
    float v = in[i] * p.scale + table[index[i % index_len]];
    v = v + p.bias[i & 1] + (float)p.offset;
    out[i] = p.negate ? -v : v;
    masked[i] = ((ulong)i * 0x0101010101010101ul) & p.mask;
}
