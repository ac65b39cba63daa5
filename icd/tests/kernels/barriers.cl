// Barrier patterns run by icd/tests/barriers.rs at any local size (1, primes, the device
// maximum): every kernel works for any work-group size, and every barrier is reached by the
// whole work-group (loop trip counts and branch conditions are work-group uniform).

// Tree reduction of each work-group's inputs in local memory; also for sizes that are not
// powers of two (the upper half folds onto the lower, rounding up).
kernel void reduce_sum(global const int *in, global int *out, local int *scratch) {
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t width = get_local_size(0); width > 1;) {
        size_t upper = (width + 1) / 2;
        if (l + upper < width)
            scratch[l] += scratch[l + upper];
        barrier(CLK_LOCAL_MEM_FENCE);
        width = upper;
    }
    if (l == 0)
        out[get_group_id(0)] = scratch[0];
}

// Inclusive Hillis-Steele scan with two buffers whose pointers swap every step: the
// pointers are private values live across the barrier.
kernel void scan_inclusive(global const int *in, global int *out, local int *buf) {
    size_t l = get_local_id(0), n = get_local_size(0);
    local int *src = buf;
    local int *dst = buf + n;
    src[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t off = 1; off < n; off *= 2) {
        dst[l] = l >= off ? src[l] + src[l - off] : src[l];
        barrier(CLK_LOCAL_MEM_FENCE);
        local int *t = src;
        src = dst;
        dst = t;
    }
    out[get_global_id(0)] = src[l];
}

#define TILE 16

// C (M×N) = A (M×K) × B (K×N) in 16×16 tiles; the range is rounded up to whole tiles and
// work-items outside C load zeros and store nothing.
kernel void matmul_tiled(global const float *a, global const float *b, global float *c,
                         int m, int n, int k) {
    local float as[TILE][TILE];
    local float bs[TILE][TILE];
    int col = get_global_id(0), row = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        int ak = t * TILE + lx, bk = t * TILE + ly;
        as[ly][lx] = (row < m && ak < k) ? a[row * k + ak] : 0.0f;
        bs[ly][lx] = (bk < k && col < n) ? b[bk * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = 0; i < TILE; i++)
            acc += as[ly][i] * bs[i][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < m && col < n)
        c[row * n + col] = acc;
}

// Barriers in a loop that every work-item leaves by the same early break at `stop`.
kernel void loop_break(global int *out, local int *buf, int stop) {
    size_t l = get_local_id(0), n = get_local_size(0);
    int acc = 0;
    buf[l] = (int)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 100; i++) {
        if (i == stop)
            break;
        acc += buf[(l + i) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[l] += 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = acc;
}

// Barriers in a loop whose iterations with i % skip == 0 `continue` past both of them.
kernel void loop_continue(global int *out, local int *buf, int skip) {
    size_t l = get_local_id(0), n = get_local_size(0);
    int acc = 0;
    for (int i = 0; i < 20; i++) {
        if (i % skip == 0)
            continue;
        buf[l] = (int)l * i;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += buf[(l + 1) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = acc;
}

// Barriers under a condition uniform in each work-group but different between groups.
kernel void uniform_if(global int *out, local int *buf, int flag) {
    size_t l = get_local_id(0), n = get_local_size(0);
    buf[l] = (int)l + 1;
    int v = 0;
    if ((int)(get_group_id(0) % 2) == flag) {
        barrier(CLK_LOCAL_MEM_FENCE);
        v = buf[n - 1 - l];
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[l] = v * 2;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = buf[(l + 1) % n] + v;
}

// Barriers inside a function that is called, not inlined, three times in a loop.
__attribute__((noinline)) int rotate_through_local(local int *buf, int v) {
    size_t l = get_local_id(0), n = get_local_size(0);
    buf[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int r = buf[(l + 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

kernel void barrier_in_call(global const int *in, global int *out, local int *buf) {
    int v = in[get_global_id(0)];
    for (int k = 0; k < 3; k++)
        v = rotate_through_local(buf, v) + k;
    out[get_global_id(0)] = v;
}

// 64 barriers in a row after the first: 32 rotations of the group's values by one place.
#define ROTATE                                                                              \
    {                                                                                       \
        int t = buf[(l + 1) % n];                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        buf[l] = t + 1;                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    }
#define ROTATE4 ROTATE ROTATE ROTATE ROTATE
#define ROTATE16 ROTATE4 ROTATE4 ROTATE4 ROTATE4

kernel void many_barriers(global const int *in, global int *out, local int *buf) {
    size_t l = get_local_id(0), n = get_local_size(0);
    buf[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    ROTATE16 ROTATE16
    out[get_global_id(0)] = buf[l];
}

// A private array, indexed by values known only at run time, live across barriers.
kernel void private_array(global const int *in, global int *out, local int *buf) {
    size_t l = get_local_id(0), n = get_local_size(0);
    int priv[16];
    for (int i = 0; i < 16; i++)
        priv[i] = in[get_global_id(0)] * (i + 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < 4; r++) {
        buf[l] = priv[r * 4 + (l % 4)];
        barrier(CLK_LOCAL_MEM_FENCE);
        priv[(r * 5 + l) % 16] += buf[(l + 1) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int s = 0;
    for (int i = 0; i < 16; i++)
        s += priv[i] * (i + 1);
    out[get_global_id(0)] = s;
}

// Exchange through global memory: barrier(CLK_GLOBAL_MEM_FENCE) orders the group's global
// stores before its loads.
kernel void global_exchange(global int *data, global int *out) {
    size_t l = get_local_id(0), n = get_local_size(0);
    size_t g = get_global_id(0) - get_global_offset(0);
    data[g] = (int)(l * 3 + 1);
    barrier(CLK_GLOBAL_MEM_FENCE);
    out[g] = data[g - l + (l + 1) % n];
}
