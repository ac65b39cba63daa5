// cl_intel_subgroups_char, _short and _long, cl_intel_subgroup_local_block_io: the shuffles of
// 8- and 16-bit integers, the char and short broadcasts, reductions and scans, and the block
// reads and writes of uchar, ushort, uint (the _ui names) and ulong on global and local memory.

#ifndef cl_intel_subgroups_char
#error cl_intel_subgroups_char is not defined
#endif
#ifndef cl_intel_subgroups_short
#error cl_intel_subgroups_short is not defined
#endif
#ifndef cl_intel_subgroups_long
#error cl_intel_subgroups_long is not defined
#endif
#ifndef cl_intel_subgroup_local_block_io
#error cl_intel_subgroup_local_block_io is not defined
#endif

// Work-item i writes shuffle(a, c), shuffle_down(a, b, c), shuffle_up(a, b, c) and
// shuffle_xor(a, c) of its inputs to out[4 i .. 4 i + 3].
#define SHUFFLES(T, NAME)                                                                       \
    kernel void shuffles_##NAME(global const T *x, global const T *y, global const uint *c,       \
                                global T *out) {                                                \
        size_t i = get_global_id(0);                                                            \
        T a = x[i], b = y[i];                                                                   \
        uint k = c[i];                                                                          \
        out[4 * i] = intel_sub_group_shuffle(a, k);                                             \
        out[4 * i + 1] = intel_sub_group_shuffle_down(a, b, k);                                 \
        out[4 * i + 2] = intel_sub_group_shuffle_up(a, b, k);                                   \
        out[4 * i + 3] = intel_sub_group_shuffle_xor(a, k);                                     \
    }

// Three-component vectors are 4 apart in buffers: vload3/vstore3 keep them packed.
#define SHUFFLES3(T, NAME)                                                                      \
    kernel void shuffles_##NAME##3(global const T *x, global const T *y, global const uint *c,    \
                                   global T *out) {                                             \
        size_t i = get_global_id(0);                                                            \
        T##3 a = vload3(i, x), b = vload3(i, y);                                                \
        uint k = c[i];                                                                          \
        vstore3(intel_sub_group_shuffle(a, k), 4 * i, out);                                     \
        vstore3(intel_sub_group_shuffle_down(a, b, k), 4 * i + 1, out);                         \
        vstore3(intel_sub_group_shuffle_up(a, b, k), 4 * i + 2, out);                           \
        vstore3(intel_sub_group_shuffle_xor(a, k), 4 * i + 3, out);                             \
    }

#define SHUFFLE_TYPE(T)                                                                         \
    SHUFFLES(T, T)                                                                              \
    SHUFFLES(T##2, T##2)                                                                        \
    SHUFFLES3(T, T)                                                                             \
    SHUFFLES(T##4, T##4)                                                                        \
    SHUFFLES(T##8, T##8)                                                                        \
    SHUFFLES(T##16, T##16)

SHUFFLE_TYPE(char)
SHUFFLE_TYPE(uchar)
SHUFFLE_TYPE(short)
SHUFFLE_TYPE(ushort)

// Work-item i writes, for its value a: the broadcast of the sub-group's last work-item, the
// three reductions, the three exclusive and the three inclusive scans to out[10 i .. 10 i + 9].
#define COLLECTIVES(T)                                                                          \
    kernel void collectives_##T(global const T *x, global T *out) {                            \
        size_t i = get_global_id(0);                                                            \
        T a = x[i];                                                                             \
        global T *o = out + 10 * i;                                                             \
        o[0] = intel_sub_group_broadcast(a, get_sub_group_size() - 1);                         \
        o[1] = intel_sub_group_reduce_add(a);                                                   \
        o[2] = intel_sub_group_reduce_min(a);                                                   \
        o[3] = intel_sub_group_reduce_max(a);                                                   \
        o[4] = intel_sub_group_scan_exclusive_add(a);                                           \
        o[5] = intel_sub_group_scan_exclusive_min(a);                                           \
        o[6] = intel_sub_group_scan_exclusive_max(a);                                           \
        o[7] = intel_sub_group_scan_inclusive_add(a);                                           \
        o[8] = intel_sub_group_scan_inclusive_min(a);                                           \
        o[9] = intel_sub_group_scan_inclusive_max(a);                                           \
    }

COLLECTIVES(char)
COLLECTIVES(uchar)
COLLECTIVES(short)
COLLECTIVES(ushort)

// Block reads and writes. Each sub-group owns REGION elements of the buffer: slot j (64
// elements, so every slot starts 16-byte aligned) holds the block of the j-th width, read with
// READ and written back with WRITE plus j + 1. Elements of a slot past its block are untouched.
#define REGION (5 * 64)
#define BLOCK(T, READ, WRITE, N, J, P, Q)                                                       \
    {                                                                                           \
        T##N v = READ##N(P + (J) * 64);                                                         \
        WRITE##N(Q + (J) * 64, v + (T##N)(J + 1));                                              \
    }
#define BLOCKS_TO_8(T, READ, WRITE, P, Q)                                                       \
    BLOCK(T, READ, WRITE, , 0, P, Q)                                                            \
    BLOCK(T, READ, WRITE, 2, 1, P, Q)                                                           \
    BLOCK(T, READ, WRITE, 4, 2, P, Q)                                                           \
    BLOCK(T, READ, WRITE, 8, 3, P, Q)
#define BLOCKS_TO_16(T, READ, WRITE, P, Q)                                                      \
    BLOCKS_TO_8(T, READ, WRITE, P, Q)                                                           \
    BLOCK(T, READ, WRITE, 16, 4, P, Q)

// Global memory: in to out (out starts as a pattern the test checks is kept elsewhere).
#define GLOBAL_BLOCKS(NAME, T, READ, WRITE, WIDTHS)                                             \
    kernel void global_##NAME(global const T *in, global T *out) {                              \
        size_t s = get_global_id(0) / get_max_sub_group_size();                                 \
        global const T *p = in + REGION * s;                                                    \
        global T *q = out + REGION * s;                                                         \
        WIDTHS(T, READ, WRITE, p, q)                                                            \
    }

// Local memory: the group's regions of in and of out are copied to the two halves of the tile,
// the blocks read from the first half and written to the second, which is then copied out.
#define LOCAL_BLOCKS(NAME, T, READ, WRITE, WIDTHS)                                              \
    kernel void local_##NAME(global const T *in, global T *out, local T *tile) {                \
        size_t n = get_local_size(0), lid = get_local_id(0);                                    \
        size_t all = REGION * get_num_sub_groups();                                             \
        size_t base = all * get_group_id(0);                                                    \
        for (size_t e = lid; e < all; e += n) {                                                 \
            tile[e] = in[base + e];                                                             \
            tile[all + e] = out[base + e];                                                      \
        }                                                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                           \
        local const T *p = tile + REGION * get_sub_group_id();                                  \
        local T *q = tile + all + REGION * get_sub_group_id();                                  \
        WIDTHS(T, READ, WRITE, p, q)                                                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                           \
        for (size_t e = lid; e < all; e += n)                                                   \
            out[base + e] = tile[all + e];                                                      \
    }

GLOBAL_BLOCKS(uc, uchar, intel_sub_group_block_read_uc, intel_sub_group_block_write_uc, BLOCKS_TO_16)
GLOBAL_BLOCKS(us, ushort, intel_sub_group_block_read_us, intel_sub_group_block_write_us, BLOCKS_TO_8)
GLOBAL_BLOCKS(ui, uint, intel_sub_group_block_read_ui, intel_sub_group_block_write_ui, BLOCKS_TO_8)
GLOBAL_BLOCKS(ul, ulong, intel_sub_group_block_read_ul, intel_sub_group_block_write_ul, BLOCKS_TO_8)

LOCAL_BLOCKS(uc, uchar, intel_sub_group_block_read_uc, intel_sub_group_block_write_uc, BLOCKS_TO_16)
LOCAL_BLOCKS(us, ushort, intel_sub_group_block_read_us, intel_sub_group_block_write_us, BLOCKS_TO_8)
LOCAL_BLOCKS(ui, uint, intel_sub_group_block_read_ui, intel_sub_group_block_write_ui, BLOCKS_TO_8)
LOCAL_BLOCKS(ul, ulong, intel_sub_group_block_read_ul, intel_sub_group_block_write_ul, BLOCKS_TO_8)
// The un-suffixed uint names of cl_intel_subgroups on local memory.
LOCAL_BLOCKS(u, uint, intel_sub_group_block_read, intel_sub_group_block_write, BLOCKS_TO_8)
