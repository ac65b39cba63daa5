// Streaming copy of T elements (float8 or float16; the source starts with T): one vector
// load and store per work-item.
__kernel void copy_vec(__global const T* in, __global T* out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
}
