// language: -cl-std=CL3.0 -Xclang -cl-ext=-all,+__opencl_c_subgroups,+cl_khr_subgroups,+__opencl_c_atomic_order_acq_rel,+__opencl_c_atomic_order_seq_cst,+__opencl_c_atomic_scope_device,+__opencl_c_int64
// Independent forward progress of sub-groups: work-items that spin on atomics until another
// sub-group of their work-group (or another work-item) has written them, run by
// icd/tests/forward_progress.rs.

#define CELLS 48

// Each sub-group's lane 0 interprets its own list of steps, one int each: bits 0-3 the
// operation (0 end, 1 store, 2 wait until equal, 3 add one `value` times), bits 4-9 the cell,
// bits 12-30 the value. The lists make sub-groups wait for each other's stores and counts.
kernel void interpret(global const int *steps, global int *cells_out) {
    local atomic_int cells[CELLS];
    int lid = (int)get_local_id(0);
    if (lid < CELLS)
        atomic_init(&cells[lid], 0);
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    global const int *step =
        steps + (get_group_id(0) * get_enqueued_num_sub_groups() + get_sub_group_id()) *
                    (CELLS + 1);
    bool mine = get_sub_group_local_id() == 0;
    bool running = true;
    while (running) {
        int s = *step++;
        int op = s & 0xf, cell = (s >> 4) & 0x3f, value = s >> 12;
        switch (op) {
        case 1:
            if (mine)
                atomic_store(&cells[cell], value);
            break;
        case 2:
            if (mine)
                while (atomic_load(&cells[cell]) != value)
                    ;
            break;
        case 3:
            if (mine)
                for (int i = 0; i < value; ++i)
                    atomic_fetch_add(&cells[cell], 1);
            break;
        default:
            running = false;
        }
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    }
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < CELLS)
        cells_out[get_group_id(0) * CELLS + lid] = atomic_load(&cells[lid]);
}

// No barriers: work-item 0 of each group waits for the group's last work-item to raise the
// group's flag; it reports how often it looked.
kernel void first_waits_for_last(global atomic_int *flags, global int *out) {
    size_t g = get_group_id(0), l = get_local_id(0);
    if (l == 0) {
        int looks = 1;
        while (atomic_load(&flags[g]) == 0)
            looks++;
        out[get_global_id(0)] = looks;
    } else {
        if (l == get_local_size(0) - 1)
            atomic_store(&flags[g], 1);
        out[get_global_id(0)] = 0;
    }
}

// Producers (lane 0 of sub-groups 1..n) claim slots of a local queue and fill them; each
// publishes its slot once the consumer has acknowledged the one before. The consumer (lane 0
// of sub-group 0, which runs first) takes the values as they are published. Most work-items
// reach the work-group barrier long before the consumer is done; after it every work-item
// reports the sum the consumer saw.
kernel void produce_consume(global const int *values, global int *consumed, global int *sums) {
    local int queue[256];
    local atomic_int claimed, published, acknowledged;
    local int total;
    int sg = (int)get_sub_group_id(), producers = (int)get_num_sub_groups() - 1;
    if (get_local_id(0) == 0) {
        atomic_init(&claimed, 0);
        atomic_init(&published, 0);
        atomic_init(&acknowledged, 0);
        total = -1;
    }
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    size_t g = get_group_id(0);
    if (get_sub_group_local_id() == 0) {
        if (sg == 0) {
            int sum = 0;
            for (int i = 0; i < producers; i++) {
                while (atomic_load_explicit(&published, memory_order_acquire,
                                            memory_scope_work_group) <= i)
                    ;
                consumed[g * 256 + i] = queue[i];
                sum += queue[i];
                atomic_store_explicit(&acknowledged, i + 1, memory_order_release,
                                      memory_scope_work_group);
            }
            total = sum;
        } else {
            int slot = atomic_fetch_add_explicit(&claimed, 1, memory_order_relaxed,
                                                 memory_scope_work_group);
            queue[slot] = values[g * 256 + sg];
            while (atomic_load_explicit(&acknowledged, memory_order_acquire,
                                        memory_scope_work_group) != slot)
                ;
            atomic_store_explicit(&published, slot + 1, memory_order_release,
                                  memory_scope_work_group);
        }
    }
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    sums[get_global_id(0)] = total;
}
