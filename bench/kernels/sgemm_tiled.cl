// Matrix multiply, 16x16 tiles staged in local memory; n must be a multiple of 16.
#define TS 16
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void sgemm_tiled(__global const float* A, __global const float* B, __global float* C, uint n) {
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    uint tx = get_local_id(0), ty = get_local_id(1);
    uint col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (uint t = 0; t < n; t += TS) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < TS; k++)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}
