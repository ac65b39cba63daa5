// Spin loops: work-items that wait on an atomic for another work-item of their group (yield
// points, independent forward progress of sub-groups), and loops that run atomics without
// waiting (no yield points). OpenCL C 3.0 with sub-groups.

#define OP_END 0
#define OP_STORE 1
#define OP_WAIT 2
#define OP_ADD 3
#define CELLS 40

// Each sub-group's lane 0 runs a little program of (op | cell << 8, value) steps against the
// group's cells: store a value, wait until a cell holds one, or add one to it `value` times.
// Programs wait on each other across sub-groups. After every step all lanes take part in a
// sub-group reduction (it must see the whole sub-group: the spinning lane included) and a
// sub-group barrier.
kernel void sub_group_steps(global const int2 *code, global int *cells_out, global int *errors) {
    local atomic_int cells[CELLS];
    uint lid = get_local_id(0);
    for (uint c = lid; c < CELLS; c += get_local_size(0))
        atomic_init(&cells[c], 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    global const int2 *pc =
        code + (get_group_id(0) * get_enqueued_num_sub_groups() + get_sub_group_id()) * (CELLS + 1);
    bool leader = get_sub_group_local_id() == 0;
    for (;;) {
        int members = sub_group_reduce_add(1);
        if (members != (int)get_sub_group_size())
            atomic_fetch_add_explicit((global atomic_int *)errors, 1, memory_order_relaxed);
        int2 step = *pc++;
        int op = step.x & 0xff, cell = step.x >> 8, value = step.y;
        if (op == OP_END)
            break;
        if (leader) {
            if (op == OP_STORE) {
                atomic_store_explicit(&cells[cell], value, memory_order_relaxed,
                                      memory_scope_work_group);
            } else if (op == OP_WAIT) {
                while (atomic_load_explicit(&cells[cell], memory_order_relaxed,
                                            memory_scope_work_group) != value)
                    ;
            } else {
                for (int i = 0; i < value; i++)
                    atomic_fetch_add_explicit(&cells[cell], 1, memory_order_relaxed,
                                              memory_scope_work_group);
            }
        }
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint c = lid; c < CELLS; c += get_local_size(0))
        cells_out[get_group_id(0) * CELLS + c] =
            atomic_load_explicit(&cells[c], memory_order_relaxed, memory_scope_work_group);
}

// No barrier at all: work-item 0 of each group waits for the group's last work-item (another
// sub-group) to raise the group's flag.
kernel void wait_for_last(global volatile int *flags, global int *out) {
    size_t g = get_group_id(0), l = get_local_id(0), n = get_local_size(0);
    if (l == 0) {
        int polls = 0;
        while (atomic_or(&flags[g], 0) == 0)
            polls++;
        out[get_global_id(0)] = 1000 + (polls > 0);
    } else {
        if (l == n - 1)
            atomic_xchg(&flags[g], 1);
        out[get_global_id(0)] = (int)l;
    }
}

// Sub-groups take turns in reverse order (the last one first), each waiting for the one after
// it; every work-item reads the order-dependent total after the work-group barrier.
kernel void relay(global int *out) {
    local atomic_int turn;
    local int total;
    int sg = (int)get_sub_group_id(), groups = (int)get_num_sub_groups();
    if (get_local_id(0) == 0) {
        atomic_init(&turn, groups - 1);
        total = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_sub_group_local_id() == 0) {
        while (atomic_load_explicit(&turn, memory_order_acquire, memory_scope_work_group) != sg)
            ;
        total = total * 3 + sg + 1;
        atomic_store_explicit(&turn, sg - 1, memory_order_release, memory_scope_work_group);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = total;
}

// A spin lock (compare-exchange loop) around a non-atomic update: every work-item of the
// group gets in once.
kernel void spin_lock(global int *lock, global int *counter) {
    while (atomic_cmpxchg(&lock[get_group_id(0)], 0, 1) != 0)
        ;
    counter[get_group_id(0)] += 1;
    atomic_xchg(&lock[get_group_id(0)], 0);
}

// The waiting done through a flag set in a branch (control dependence on the atomic).
kernel void wait_with_flag(global volatile int *flags, global int *out) {
    size_t g = get_group_id(0), l = get_local_id(0);
    if (l == 0) {
        bool done = false;
        while (!done) {
            if (atomic_add(&flags[g], 0) == 2)
                done = true;
        }
        out[g] = atomic_add(&flags[g], 0);
    } else if (l == 5) {
        atomic_inc(&flags[g]);
        atomic_inc(&flags[g]);
    }
}

// Atomics in loops that wait for nobody: no yield points.
kernel void histogram(global const uchar *data, global int *hist, int n) {
    size_t g = get_global_id(0);
    for (int i = 0; i < n; i++)
        atomic_inc(&hist[data[g * n + i] & 15]);
}

kernel void claim_slots(global int *next, global int *slots, int n) {
    for (int i = 0; i < n; i++) {
        int at = atomic_inc(next);
        slots[at] = (int)get_global_id(0);
    }
}
