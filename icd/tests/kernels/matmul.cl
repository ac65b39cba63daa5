// Naive C[M x N] = A[M x K] * B[K x N], row-major, one output element per work-item,
// global size (N, M). The host feeds small integers, so every sum is exact whatever
// the compiler does with a*b+c.
__kernel void matmul(__global const float *A, __global const float *B, __global float *C,
                     uint M, uint N, uint K)
{
    uint col = get_global_id(0);
    uint row = get_global_id(1);
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (uint k = 0; k < K; k++)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}
