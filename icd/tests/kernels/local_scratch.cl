// A __local pointer argument used without a barrier: each work-item only reads back
// the slot it wrote itself, so no synchronisation is needed.
__kernel void local_scratch(__global const int *in, __global int *out, __local int *tmp)
{
    size_t g = get_global_id(0);
    size_t l = get_local_id(0);
    tmp[l] = in[g] * 3;
    tmp[l] += (int)l;
    out[g] = tmp[l] + 1;
}
