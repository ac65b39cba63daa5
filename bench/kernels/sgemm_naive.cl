// Matrix multiply, naive: C = A * B for n x n row-major matrices, one work-item per element.
__kernel void sgemm_naive(__global const float* A, __global const float* B, __global float* C, uint n) {
    uint col = get_global_id(0);
    uint row = get_global_id(1);
    float acc = 0.0f;
    for (uint k = 0; k < n; k++)
        acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}
