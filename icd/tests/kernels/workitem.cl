// Records every work-item function for every work-item. Each work-item writes
// WI_RECORD ulongs at its linear index (computed from global ids minus offsets):
// [0] work_dim, then for d = 0..2: global_id, local_id, group_id, global_size,
// local_size, num_groups, global_offset (7 values per dimension) -> 22 values.
#define WI_RECORD 22

__kernel void workitem(__global ulong *out)
{
    size_t lin = 0;
    for (int d = 2; d >= 0; d--)
        lin = lin * get_global_size(d) + (get_global_id(d) - get_global_offset(d));
    __global ulong *r = out + lin * WI_RECORD;
    r[0] = get_work_dim();
    for (uint d = 0; d < 3; d++) {
        __global ulong *q = r + 1 + 7 * d;
        q[0] = get_global_id(d);
        q[1] = get_local_id(d);
        q[2] = get_group_id(d);
        q[3] = get_global_size(d);
        q[4] = get_local_size(d);
        q[5] = get_num_groups(d);
        q[6] = get_global_offset(d);
    }
}
