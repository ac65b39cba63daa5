// Kernels for tests/gathers.rs: loads and stores at an address of their own per work-item
// (gathers and scatters in wide code), 64-bit index arithmetic, under masks and in loops whose
// trip counts differ per work-item.

// lower_bound of each key in a sorted array, in size_t indices (the shape of DPC++'s merge
// sort), then 64-bit arithmetic of every kind on the result.
__kernel void lower_bound_size_t(__global const float *sorted, __global const float *keys,
                                 __global ulong *out, ulong n) {
    size_t i = get_global_id(0);
    float key = keys[i];
    size_t lo = 0, count = n;
    while (count > 0) {
        size_t step = count >> 1;
        size_t mid = lo + step;
        if (sorted[mid] < key) {
            lo = mid + 1;
            count -= step + 1;
        } else {
            count = step;
        }
    }
    long s = (long)lo - (long)i;
    ulong mixed = lo * 0x9e3779b97f4a7c15ul ^ (lo << 7) ^ ((ulong)s >> 3) ^ (ulong)(s >> 2);
    mixed += min(lo, (size_t)i) + max(lo, (size_t)i) + (ulong)min(s, (long)-5) + (ulong)abs(s);
    out[2 * i] = lo;
    out[2 * i + 1] = mixed + (lo > 17 ? lo : (ulong)i) + (uint)(mixed >> 29);
}

// Loads under a mask whose inactive work-items' indices are far out of bounds (a load there
// would fault): a gather must not touch them.
__kernel void masked_far_loads(__global const float *a, __global const uint *idx,
                               __global float *o, __global uint *w, uint n) {
    size_t i = get_global_id(0);
    uint k = idx[i];
    float x = -1.0f;
    uint y = 7;
    if (k < n) {
        x = a[k];
        y = ((__global const uint *)a)[n - 1 - k];
    }
    o[i] = x;
    w[i] = y;
}

// Stores where several work-items write one address, with and without a mask: the last
// work-item (in order) wins, as in the scalar loop. Each statement writes its own region.
__kernel void colliding_stores(__global const uint *idx, __global uint *o, __global float *f,
                               uint n) {
    uint i = get_global_id(0);
    uint k = idx[i];
    if (k % 3 != 0)
        o[k % n] = i;
    o[n + k % 7] = 2 * i;
    if (i & 1)
        f[k % 5] = (float)i * 0.5f;
}

// Uniform, contiguous and gathered loads mixed in one loop with a varying trip count, summed
// in 64 bits.
__kernel void gather_loop(__global const uint *a, __global const uint *idx, __global ulong *out,
                          uint n) {
    size_t i = get_global_id(0);
    ulong acc = i;
    uint trips = idx[i] % 9;
    size_t at = idx[i] % n;
    for (uint t = 0; t < trips; t++) {
        acc = acc * 31 + a[at] + a[t] + (ulong)a[(i + t) % n];
        at = (at * 5 + a[at]) % n;
    }
    out[i] = acc;
}

// Loads and stores at consecutive addresses under masks: a bounds check where n is not a whole
// number of vectors, and inside it a condition on the data (wide code's masked loads and
// stores; the work-items outside either must leave memory alone).
__kernel void masked_contiguous(__global const float *a, __global float *o, ulong n) {
    size_t i = get_global_id(0);
    if (i < n) {
        float x = a[i];
        if (x > 0.5f)
            o[i] = x * 3.0f;
    }
}
