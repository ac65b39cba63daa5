// Strided global reads (the source starts with `#define T float` .. `float16`): each work-item
// sums `count` elements of T a fixed stride apart, stride = the global size, so neighbouring
// work-items read neighbouring elements and each element is read once. Memory-bound; the sum
// is in order k = 0, 1, ... (no reassociation allowed), so the host reproduces it bit for bit.
__kernel void strided_read(__global const T* in, __global T* out, uint count) {
    size_t gid = get_global_id(0);
    size_t stride = get_global_size(0);
    T acc = (T)(0.0f);
    for (uint k = 0; k < count; k++) {
        acc += in[gid + k * stride];
    }
    out[gid] = acc;
}
