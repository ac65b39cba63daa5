// Atomics on local memory in barrier-free kernels: plain read-modify-write sequences, atomic
// only while one work-item runs them at a time, so the work-item vectoriser must leave them.

// Each work-item takes a ticket from a per-group counter (the harness starts local memory at
// zero and keeps it between groups).
__kernel void local_counter(__global uint *tickets) {
    __local uint counter;
    tickets[get_global_id(0)] = atomic_inc(&counter);
}

// The running maximum of a local value and a local float swapped by every work-item, each
// keeping the value it replaced.
__kernel void local_max_and_xchg(__global const uint *in, __global uint *olds,
                                 __global float *swapped) {
    __local uint best;
    __local float last;
    size_t i = get_global_id(0);
    olds[i] = atomic_max(&best, in[i]);
    swapped[i] = atomic_xchg(&last, (float)in[i]);
}

// The same ticket counter next to work the vectoriser would take: the whole loop stays scalar.
__kernel void counter_and_stream(__global const float *a, __global float *b,
                                 __global uint *tickets) {
    __local uint counter;
    size_t i = get_global_id(0);
    b[i] = a[i] * 2.0f + 1.0f;
    tickets[i] = atomic_add(&counter, 3u);
}
