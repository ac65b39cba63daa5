// Reduction with local memory and barriers: one partial sum per 256-item work-group.
#define WG 256
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const float* in, __global float* partial) {
    __local float scratch[WG];
    uint lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
