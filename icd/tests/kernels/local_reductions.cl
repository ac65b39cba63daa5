// A reduction and a scan written by hand in local memory with barriers, and
// async_work_group_copy / async_work_group_strided_copy in both directions (OpenCL C 1.2).

// Tree sum: the work-item at each even multiple of the stride adds its neighbour's slot, any
// work-group size (a neighbour past the end is skipped); one sum per work-group.
kernel void local_sum(global const int *in, global int *sums, local int *scratch) {
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t stride = 1; stride < n; stride *= 2) {
        if (l % (2 * stride) == 0 && l + stride < n)
            scratch[l] += scratch[l + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        sums[get_group_id(0)] = scratch[0];
}

// Hillis-Steele inclusive scan, double-buffered in two local arrays.
kernel void local_scan(global const int *in, global int *out, local int *a, local int *b) {
    size_t l = get_local_id(0), n = get_local_size(0);
    a[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    local int *src = a;
    local int *dst = b;
    for (size_t d = 1; d < n; d *= 2) {
        dst[l] = l >= d ? src[l] + src[l - d] : src[l];
        barrier(CLK_LOCAL_MEM_FENCE);
        local int *t = src;
        src = dst;
        dst = t;
    }
    out[get_global_id(0)] = src[l];
}

// Each work-group copies its slice of `src` into the tile in two chained copies (one event),
// transforms it, copies it out to `dst`; then gathers every `stride`-th element of its slice of
// `strided_src` into the tile, negates it and scatters it to every `stride`-th element of
// `strided_dst`.
#define ASYNC_COPIES(T, TRANSFORM)                                                          \
    kernel void async_copies_##T(global const T *src, global T *dst,                        \
                                 global const T *strided_src, global T *strided_dst,        \
                                 local T *tile, uint stride) {                              \
        size_t l = get_local_id(0), n = get_local_size(0);                                  \
        size_t first = get_global_id(0) - l;                                                \
        size_t half_n = n / 2;                                                              \
        event_t e = async_work_group_copy(tile, src + first, half_n, 0);                    \
        e = async_work_group_copy(tile + half_n, src + first + half_n, n - half_n, e);      \
        wait_group_events(1, &e);                                                           \
        tile[l] = TRANSFORM;                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        e = async_work_group_copy(dst + first, (local const T *)tile, n, 0);                \
        wait_group_events(1, &e);                                                           \
        e = async_work_group_strided_copy(tile, strided_src + first * stride, n, stride, 0);\
        wait_group_events(1, &e);                                                           \
        tile[l] = -tile[l];                                                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        e = async_work_group_strided_copy(strided_dst + first * stride,                     \
                                          (local const T *)tile, n, stride, 0);             \
        wait_group_events(1, &e);                                                           \
    }

ASYNC_COPIES(int, tile[l] * 3 + (int)l)
ASYNC_COPIES(float4, tile[l] * 3.0f + (float4)((float)l))
