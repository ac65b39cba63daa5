// Sub-groups: cl_khr_subgroups and the cl_khr_subgroup_* extensions (OpenCL C 3.0 with
// __opencl_c_subgroups). Every kernel writes per work-item results at its global linear id.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

size_t linear_gid(void) {
    return (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) + get_global_id(0);
}

kernel void sg_ids(global uint *out) {
    global uint *o = out + linear_gid() * 7;
    o[0] = get_sub_group_size();
    o[1] = get_max_sub_group_size();
    o[2] = get_num_sub_groups();
    o[3] = get_enqueued_num_sub_groups();
    o[4] = get_sub_group_id();
    o[5] = get_sub_group_local_id();
    o[6] = (uint)((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0));
}

// The uniform collectives (cl_khr_subgroups for int/uint/long/ulong/half/float/double,
// cl_khr_subgroup_extended_types for char/uchar/short/ushort), the non-uniform arithmetic with
// lane 1 of every sub-group inactive, and shuffles, rotate and clustered reductions.
#define COMMON(T)                                                                        \
    size_t g = linear_gid();                                                             \
    T x = in[g];                                                                         \
    uint l = get_sub_group_local_id();                                                   \
    uint n = get_sub_group_size();                                                       \
    global T *o = out + g * 32;                                                          \
    o[0] = sub_group_reduce_add(x);                                                      \
    o[1] = sub_group_reduce_min(x);                                                      \
    o[2] = sub_group_reduce_max(x);                                                      \
    o[3] = sub_group_scan_inclusive_add(x);                                              \
    o[4] = sub_group_scan_inclusive_min(x);                                              \
    o[5] = sub_group_scan_inclusive_max(x);                                              \
    o[6] = sub_group_scan_exclusive_add(x);                                              \
    o[7] = sub_group_scan_exclusive_min(x);                                              \
    o[8] = sub_group_scan_exclusive_max(x);                                              \
    o[9] = sub_group_broadcast(x, n - 1);                                                \
    if (l != 1) {                                                                        \
        o[10] = sub_group_non_uniform_reduce_add(x);                                     \
        o[11] = sub_group_non_uniform_reduce_mul(x);                                     \
        o[12] = sub_group_non_uniform_reduce_min(x);                                     \
        o[13] = sub_group_non_uniform_reduce_max(x);                                     \
        o[14] = sub_group_non_uniform_scan_inclusive_add(x);                             \
        o[15] = sub_group_non_uniform_scan_inclusive_mul(x);                             \
        o[16] = sub_group_non_uniform_scan_exclusive_min(x);                             \
        o[17] = sub_group_non_uniform_scan_exclusive_max(x);                             \
        o[18] = sub_group_non_uniform_broadcast(x, 0);                                   \
    }                                                                                    \
    if (l != 0)                                                                          \
        o[19] = sub_group_broadcast_first(x);                                            \
    o[20] = sub_group_shuffle(x, (l + 1) % n);                                           \
    o[21] = sub_group_shuffle_xor(x, 1);                                                 \
    o[22] = sub_group_shuffle_up(x, 1);                                                  \
    o[23] = sub_group_shuffle_down(x, 1);                                                \
    o[24] = sub_group_rotate(x, 1);                                                      \
    o[25] = sub_group_clustered_rotate(x, 3, 2);                                         \
    o[26] = sub_group_clustered_reduce_add(x, 2);                                        \
    o[27] = sub_group_clustered_reduce_mul(x, 1);                                        \
    o[28] = sub_group_clustered_reduce_min(x, 4);                                        \
    o[29] = sub_group_clustered_reduce_max(x, 2);                                        \
    o[30] = sub_group_non_uniform_all_equal(x) ? 1 : 0;                                  \
    if (l != 2)                                                                          \
        o[31] = sub_group_non_uniform_all_equal(x == x ? (T)5 : (T)6) ? 1 : 0;

#define INT_KERNEL(T)                                                                    \
    kernel void sg_##T(global const T *in, global T *out, global T *bits) {              \
        COMMON(T)                                                                        \
        global T *b = bits + g * 9;                                                      \
        b[0] = sub_group_non_uniform_reduce_and(x);                                      \
        b[1] = sub_group_non_uniform_reduce_or(x);                                       \
        b[2] = sub_group_non_uniform_reduce_xor(x);                                      \
        if (l != 1) {                                                                    \
            b[3] = sub_group_non_uniform_scan_inclusive_and(x);                          \
            b[4] = sub_group_non_uniform_scan_exclusive_or(x);                           \
            b[5] = sub_group_non_uniform_scan_inclusive_xor(x);                          \
        }                                                                                \
        b[6] = sub_group_clustered_reduce_and(x, 2);                                     \
        b[7] = sub_group_clustered_reduce_or(x, 4);                                      \
        b[8] = sub_group_clustered_reduce_xor(x, 2);                                     \
    }

#define FLOAT_KERNEL(T)                                                                  \
    kernel void sg_##T(global const T *in, global T *out) { COMMON(T) }

INT_KERNEL(char)
INT_KERNEL(uchar)
INT_KERNEL(short)
INT_KERNEL(ushort)
INT_KERNEL(int)
INT_KERNEL(uint)
INT_KERNEL(long)
INT_KERNEL(ulong)
FLOAT_KERNEL(float)
FLOAT_KERNEL(double)
FLOAT_KERNEL(half)

// Votes, ballots and logical operations; lanes with x < 0 sit out the non-uniform ones.
kernel void sg_votes(global const int *in, global int *out) {
    size_t g = linear_gid();
    int x = in[g];
    global int *o = out + g * 26;
    o[0] = sub_group_all(x > 0);
    o[1] = sub_group_any(x > 40);
    o[2] = sub_group_elect();
    uint4 ballot = sub_group_ballot(x > 10);
    o[3] = ballot.x;
    o[4] = ballot.y | ballot.z | ballot.w;
    o[5] = sub_group_inverse_ballot(ballot);
    o[6] = sub_group_ballot_bit_extract(ballot, 2);
    o[7] = sub_group_ballot_bit_count(ballot);
    o[8] = sub_group_ballot_inclusive_scan(ballot);
    o[9] = sub_group_ballot_exclusive_scan(ballot);
    o[10] = ballot.x ? sub_group_ballot_find_lsb(ballot) : -1;
    o[11] = ballot.x ? sub_group_ballot_find_msb(ballot) : -1;
    o[12] = get_sub_group_eq_mask().x;
    o[13] = get_sub_group_ge_mask().x;
    o[14] = get_sub_group_gt_mask().x;
    o[15] = get_sub_group_le_mask().x;
    o[16] = get_sub_group_lt_mask().x;
    if (x >= 0) {
        o[17] = sub_group_non_uniform_all(x > 5);
        o[18] = sub_group_non_uniform_any(x > 40);
        o[19] = sub_group_elect();
        o[20] = sub_group_non_uniform_reduce_logical_and(x > 5);
        o[21] = sub_group_non_uniform_scan_inclusive_logical_or(x > 40);
        o[22] = sub_group_non_uniform_scan_exclusive_logical_xor(x & 1);
        o[23] = sub_group_ballot(x > 10).x;
    }
    // Bits past the largest sub-group size do not count.
    o[24] = sub_group_ballot_bit_count((uint4)(0xff, 0, 0, 0));
    o[25] = sub_group_ballot_find_msb((uint4)(0xff, 0, 0, 0));
}

// sub_group_broadcast (extended types) and sub_group_non_uniform_broadcast on vectors.
#define VEC_KERNEL(T)                                                                    \
    kernel void sgv_##T(global const T *in, global T *out) {                             \
        size_t g = linear_gid();                                                         \
        T x = in[g];                                                                     \
        uint l = get_sub_group_local_id();                                               \
        out[g * 3] = sub_group_broadcast(x, 1);                                          \
        if (l != 0)                                                                      \
            out[g * 3 + 1] = sub_group_non_uniform_broadcast(x, get_sub_group_size() - 1); \
        out[g * 3 + 2] = sub_group_broadcast(x, 0);                                         \
    }
VEC_KERNEL(char2)
VEC_KERNEL(uchar3)
VEC_KERNEL(short4)
VEC_KERNEL(ushort8)
VEC_KERNEL(int16)
VEC_KERNEL(uint2)
VEC_KERNEL(long3)
VEC_KERNEL(ulong4)
VEC_KERNEL(float8)
VEC_KERNEL(double16)

// Divergence between sub-groups: collectives inside branches and loops taken by some
// sub-groups only, and sub-group barriers around local memory.
kernel void sg_diverge(global const int *in, global int *out, local int *scratch) {
    size_t g = linear_gid();
    int x = in[g];
    uint sg = get_sub_group_id();
    uint l = get_sub_group_local_id();
    uint lid = sg * get_max_sub_group_size() + l;
    global int *o = out + g * 5;
    if (sg % 2 == 0)
        o[0] = sub_group_reduce_add(x);
    else
        o[0] = sub_group_scan_inclusive_max(x);
    int acc = 0;
    for (uint i = 0; i <= sg % 3; i++)
        acc += sub_group_broadcast(x + (int)i, 0) + sub_group_reduce_max(x * (int)i);
    o[1] = acc;
    scratch[lid] = x;
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    uint next = sg * get_max_sub_group_size() + (l + 1) % get_sub_group_size();
    o[2] = scratch[next];
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    if (sg == 1) {
        scratch[lid] = x * 3;
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        o[3] = scratch[next];
    } else {
        o[3] = -7;
    }
    // Within a sub-group: a loop whose trip count differs per lane.
    int s = 0;
    for (uint i = 0; i < l + 1; i++)
        s += sub_group_non_uniform_reduce_add(x + (int)i);
    o[4] = s;
}

// Only sub-group barriers: a body without cuts runs whole sub-groups in vector lanes when the
// x local size allows (codegen kernel.rs `lockstep_lanes`), the cut body otherwise. Exchanges
// through local memory in a straight line, in a uniform loop, in a branch whole sub-groups
// take, and through a private array indexed per lane.
void lockstep_body(global const int *in, global int *out, local int *scratch) {
    size_t g = linear_gid();
    int x = in[g];
    uint l = get_sub_group_local_id();
    uint n = get_sub_group_size();
    uint sg = get_sub_group_id();
    uint first = sg * get_max_sub_group_size();
    int mine[4];
    scratch[first + l] = x * 3;
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    int acc = scratch[first + (l + 1) % n];
    for (int i = 0; i < 3; i++) {
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        scratch[first + l] = acc + i;
        mine[i] = acc;
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        acc += scratch[first + (n - 1 - l)];
    }
    if (sg % 2 == 1) {
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        scratch[first + l] = acc * 2;
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        acc = scratch[first + (l + 2) % n];
    }
    mine[3] = acc;
    out[g * 2] = acc;
    out[g * 2 + 1] = mine[l % 4] - mine[(l + 1) % 4];
}

kernel void sg_lockstep(global const int *in, global int *out, local int *scratch) {
    lockstep_body(in, out, scratch);
}

// Large enough (resume points × instructions) for the single dispatching loop instead of one
// work-item loop per resume point (codegen kernel.rs "rounds").
#define STEP4(a) a a a a
#define STEP64(a) STEP4(STEP4(STEP4(a)))
kernel void sg_rounds(global const int *in, global int *out) {
    size_t g = linear_gid();
    int x = in[g];
    uint l = get_sub_group_local_id();
    uint sg = get_sub_group_id();
    int acc = 0;
    STEP64(STEP4(acc += sub_group_reduce_add(x) + sub_group_scan_inclusive_add(acc & 7);))
    out[g * 4] = acc;
    int s = 0;
    if (l != 1)
        s = sub_group_non_uniform_reduce_add(x);
    out[g * 4 + 1] = s;
    int t = 0;
    for (uint i = 0; i < l + 1; i++)
        t += sub_group_non_uniform_reduce_add(x + (int)i);
    out[g * 4 + 2] = t;
    out[g * 4 + 3] = (sg % 2) ? sub_group_reduce_max(x) : sub_group_broadcast(x, 0);
}

// The same sub-group barriers in the single dispatching loop (its collectives keep it there).
kernel void sg_lockstep_rounds(global const int *in, global int *out, local int *scratch,
                               global int *sums) {
    int x = in[linear_gid()];
    int sum = 0;
    STEP64(STEP4(sum += sub_group_reduce_add(x);))
    sums[linear_gid()] = sum;
    lockstep_body(in, out, scratch);
}
