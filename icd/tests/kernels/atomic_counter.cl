// Global atomics under real concurrency: every work-item of many groups hits the same words.
// (64-bit atomics are covered by codegen's tests: spirv-val's OpenCL environments do not know
// cl_khr_int64_base_atomics and refuse the Int64Atomics capability this harness validates.)
__kernel void count(__global uint *counter, __global uint *sum, __global uint *hist,
                    __global const uint *data) {
    uint i = get_global_id(0);
    atomic_inc(counter);
    atomic_add(sum, i);
    atomic_inc(&hist[data[i] & 63]);
}
