// cl_khr_extended_async_copies: a 2D and a 3D copy from global memory into a local tile and
// back out to global memory, for any element size (bytes). The tile starts filled with 0xEE,
// and every work-item copies it out after the import (`tile_out`), so that the lines, planes
// and the gaps between them are checked on both sides. Each group copies its own slice: its
// offsets advance by `group_elems` elements per group on the global side.

#ifndef cl_khr_extended_async_copies
#error cl_khr_extended_async_copies is not defined
#endif

kernel void copy_2d(global const uchar *src, global uchar *dst, local uchar *tile,
                    global uchar *tile_out, ulong elem, ulong per_line, ulong lines,
                    ulong src_off, ulong src_line, ulong tile_off, ulong tile_line, ulong dst_off,
                    ulong dst_line, ulong tile_bytes, ulong group_elems) {
    size_t g = get_group_id(0);
    for (size_t i = get_local_id(0); i < tile_bytes; i += get_local_size(0))
        tile[i] = 0xEE;
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy_2D2D(tile, tile_off, src, src_off + g * group_elems,
                                           elem, per_line, lines, src_line, tile_line, 0);
    wait_group_events(1, &e);
    for (size_t i = get_local_id(0); i < tile_bytes; i += get_local_size(0))
        tile_out[g * tile_bytes + i] = tile[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy_2D2D(dst, dst_off + g * group_elems, tile, tile_off, elem,
                                   per_line, lines, tile_line, dst_line, 0);
    wait_group_events(1, &e);
}

// The planes go in two calls that share one event (the second is given the first's event and
// returns it): planes [0, split) then [split, planes).
kernel void copy_3d(global const uchar *src, global uchar *dst, local uchar *tile,
                    global uchar *tile_out, ulong elem, ulong per_line, ulong lines, ulong planes,
                    ulong split, ulong src_off, ulong src_line, ulong src_plane, ulong tile_off,
                    ulong tile_line, ulong tile_plane, ulong dst_off, ulong dst_line,
                    ulong dst_plane, ulong tile_bytes, ulong group_elems) {
    size_t g = get_group_id(0);
    for (size_t i = get_local_id(0); i < tile_bytes; i += get_local_size(0))
        tile[i] = 0xEE;
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong s = src_off + g * group_elems;
    event_t e = async_work_group_copy_3D3D(tile, tile_off, src, s, elem, per_line, lines, split,
                                           src_line, src_plane, tile_line, tile_plane, 0);
    e = async_work_group_copy_3D3D(tile, tile_off + split * tile_plane, src,
                                   s + split * src_plane, elem, per_line, lines, planes - split,
                                   src_line, src_plane, tile_line, tile_plane, e);
    wait_group_events(1, &e);
    for (size_t i = get_local_id(0); i < tile_bytes; i += get_local_size(0))
        tile_out[g * tile_bytes + i] = tile[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy_3D3D(dst, dst_off + g * group_elems, tile, tile_off, elem,
                                   per_line, lines, planes, tile_line, tile_plane, dst_line,
                                   dst_plane, 0);
    wait_group_events(1, &e);
}

// Typed pointers and sizeof, as applications write it: a float4 tile of 3 lines of 2.
kernel void typed_2d(global const float4 *src, global float4 *dst) {
    local float4 tile[6];
    event_t e = async_work_group_copy_2D2D(tile, 0, src, 1 + 8 * get_group_id(0),
                                           sizeof(float4), 2, 3, 3, 2, 0);
    wait_group_events(1, &e);
    size_t l = get_local_id(0);
    if (l < 6)
        tile[l] *= 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy_2D2D(dst, 8 * get_group_id(0), tile, 0, sizeof(float4), 2, 3, 2, 3,
                                   0);
    wait_group_events(1, &e);
}
