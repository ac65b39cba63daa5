// Peak arithmetic (clpeak-like): each work-item runs 8 independent chains x = MAD(x, a, b)
// on vectors of type T, 4 steps per chain per iteration, so the loop is throughput-bound,
// and writes their sum. The kernel's source starts with T and MAD (see src/gaps.rs): an
// explicit fma() for float and double, wrapping mul + add for uint, and separately rounded
// mul + add for half (FP_CONTRACT OFF), each reproducible bit for bit on the host.
#define ROUND \
    x0 = MAD(x0, a, b); x1 = MAD(x1, a, b); x2 = MAD(x2, a, b); x3 = MAD(x3, a, b); \
    x4 = MAD(x4, a, b); x5 = MAD(x5, a, b); x6 = MAD(x6, a, b); x7 = MAD(x7, a, b);

__kernel void peak(__global T* out, __global const T* init, uint iters) {
    uint g = (uint)get_global_id(0);
    T a = init[0], b = init[1];
    // 64 classes of starting values, so the host reference computes 64 items, not all
    __global const T* x = init + 2 + 8 * (g & 63u);
    T x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4], x5 = x[5], x6 = x[6], x7 = x[7];
    for (uint i = 0; i < iters; i++) {
        ROUND ROUND ROUND ROUND
    }
    out[g] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
