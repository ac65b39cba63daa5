// Kernels with work-group barriers, as issue "Work-group execution" lists them.

__kernel void reduce_sum(__global const float *in, __global float *out, __local float *scratch) {
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = scratch[0];
}

#define TILE 4
__kernel void matmul_tiled(__global const float *a, __global const float *b, __global float *c, int n) {
    __local float ta[TILE][TILE], tb[TILE][TILE];
    int lr = get_local_id(1), lc = get_local_id(0);
    int row = get_global_id(1), col = get_global_id(0);
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        ta[lr][lc] = a[row * n + t * TILE + lc];
        tb[lr][lc] = b[(t * TILE + lr) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; ++k) acc += ta[lr][k] * tb[k][lc];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}

// Barrier in a loop left early with a uniform break; private array live across barriers.
__kernel void loop_break(__global int *out, __local int *shared, int stop) {
    int l = get_local_id(0), n = get_local_size(0);
    int history[4] = {0, 0, 0, 0};
    for (int i = 0; i < 100; ++i) {
        shared[l] = l * i;
        barrier(CLK_LOCAL_MEM_FENCE);
        history[i & 3] += shared[(l + 1) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i == stop) break;
    }
    out[get_global_id(0)] = history[0] + 10 * history[1] + 100 * history[2] + 1000 * history[3];
}

static int neighbour_sum(__local int *s, int l, int n) {
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = s[(l + n - 1) % n] + s[(l + 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);
    return v;
}

// Barrier under a uniform condition and inside a called function; several barriers in a row.
__kernel void branch_and_call(__global int *out, __local int *s, int mode) {
    int l = get_local_id(0), n = get_local_size(0);
    s[l] = l + 1;
    int v = 0;
    if (mode > 0) {
        v = neighbour_sum(s, l, n);
        s[l] = v;
    } else {
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = s[(l + 2) % n] * 1000 + v;
}

// 80 barriers once unrolled: beyond the specialisation budget, so the optimised build takes the
// dispatching round loop while -O0 (a loop with two barriers) takes specialised regions.
__kernel void many_barriers(__global int *out, __local int *s) {
    int l = get_local_id(0), n = get_local_size(0);
    int acc = l;
#pragma unroll
    for (int i = 0; i < 40; ++i) {
        s[l] = acc * 3 + i;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += s[(l + i) % n] ^ (acc >> 3);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = acc;
}

// async_work_group_copy / strided copy and wait_group_events.
__kernel void async_copies(__global const float4 *in, __global float *out, __global float *strided_out,
                           __local float4 *tile) {
    event_t e = async_work_group_copy(tile, in + get_group_id(0) * get_local_size(0), get_local_size(0), 0);
    wait_group_events(1, &e);
    size_t l = get_local_id(0);
    out[get_global_id(0)] = tile[l].x + tile[l].w;
    barrier(CLK_LOCAL_MEM_FENCE);
    // Local -> global with a stride of 2 floats: .x and .z of each tile element.
    event_t e2 = async_work_group_strided_copy(strided_out + get_group_id(0) * get_local_size(0) * 4,
                                               (__local const float *)tile, get_local_size(0) * 2, 2, 0);
    wait_group_events(1, &e2);
}

// A fixed-size reduction: optimised, the loop is unrolled and everything live across its
// barriers derives from the local id or the arguments, so it is recomputed, not kept per
// work-item.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void reduce_fixed(__global const float *in, __global float *out) {
    __local float scratch[64];
    uint l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 32; s > 0; s >>= 1) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = scratch[0];
}

// Work-items past the end return before the barrier (undefined behaviour by the letter of
// the spec, common in practice): the others still synchronise among themselves.
__kernel void early_return(__global const int *in, __global int *out, int n) {
    __local int s[16];
    int gid = get_global_id(0), l = get_local_id(0);
    if (gid >= n) return;
    s[l] = in[gid] * 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    int active = min((int)get_local_size(0), n - (int)(get_group_id(0) * get_local_size(0)));
    out[gid] = s[active - 1 - l];
}

// Some work-items return between two barriers (again undefined, again must work for the
// rest): divergence found in a later round.
__kernel void return_between_barriers(__global int *out) {
    __local int s[16], t[16];
    int l = get_local_id(0), gid = get_global_id(0);
    s[l] = l + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l >= 3) { out[gid] = -s[l]; return; }
    t[l] = s[l] + s[l + 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[gid] = t[2 - l];
}

// Work-items that disagree on which barrier they reach (undefined behaviour): the group
// must still finish.
__kernel void divergent_barriers(__global int *out) {
    int l = get_local_id(0);
    if (l % 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = 1;
    } else {
        barrier(CLK_GLOBAL_MEM_FENCE);
        out[get_global_id(0)] = 2;
    }
}
