// language: -cl-std=CL3.0
// Device-side enqueue kernels of icd/tests/device_enqueue/: each records what its children did
// (and what enqueue_kernel returned) in `out`, which the host checks after clFinish.

// One child per work-item with the flag given; the child doubles the id the parent wrote.
kernel void enqueue_flags(global int *out, int flag) {
    size_t i = get_global_id(0);
    out[i] = (int)i;
    int r = enqueue_kernel(get_default_queue(), (kernel_enqueue_flags_t)flag, ndrange_1D(1),
                           ^{ out[i] = out[i] * 2 + 1; });
    if (r != CLK_SUCCESS)
        out[i] = r - 1000;
}

// A chain of children, each enqueueing the next until `depth`; level d writes out[d].
void nest(global int *out, int level, int depth) {
    out[level] = level + 100;
    if (level < depth) {
        int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(1),
                               ^{ nest(out, level + 1, depth); });
        if (r != CLK_SUCCESS)
            out[level] = r - 1000;
    }
}

kernel void nested(global int *out, int depth) {
    nest(out, 0, depth);
}

// 2-D and 3-D ranges with local sizes, a non-uniform 1-D range, and ranges enqueue_kernel must
// refuse. Run by one work-item.
kernel void ranges(global int *out) {
    queue_t q = get_default_queue();
    size_t g2[2] = {6, 4};
    size_t l2[2] = {3, 2};
    out[48] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_2D(g2, l2), ^{
        size_t x = get_global_id(0), y = get_global_id(1);
        out[y * 6 + x] = (int)(get_local_size(0) * 1000 + get_local_size(1) * 100 +
                               get_num_groups(0) * 10 + get_work_dim());
    });
    size_t o3[3] = {1, 2, 3};
    size_t g3[3] = {2, 3, 4};
    size_t l3[3] = {2, 1, 2};
    out[49] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_3D(o3, g3, l3), ^{
        size_t x = get_global_id(0) - 1, y = get_global_id(1) - 2, z = get_global_id(2) - 3;
        out[24 + (z * 3 + y) * 2 + x] = (int)(get_num_groups(0) * 100 + get_num_groups(1) * 10 +
                                              get_num_groups(2) + get_local_id(2) * 1000);
    });
    // Non-uniform: 10 work-items in groups of 4, the last of 2.
    out[50] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP, ndrange_1D(10, 4),
                             ^{ out[60 + get_global_id(0)] = (int)get_local_size(0); });
    // The device chooses the local size.
    out[51] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_2D(g2),
                             ^{ out[80 + get_global_id(1) * 6 + get_global_id(0)] = 1; });
    size_t half_local[2] = {3, 0};
    out[52] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_2D(g2, half_local),
                             ^{ out[0] = -7; });
    size_t zero_global[2] = {0, 4};
    out[53] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_2D(zero_global, l2),
                             ^{ out[0] = -7; });
    out[54] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(8192, 8192),
                             ^{ out[0] = -7; });
}

// A block with two local pointers: the child reverses each group's values through local
// memory. Then a zero local size and one larger than the device's local memory.
kernel void local_args(global int *out, uint huge) {
    int base = 7;
    out[8] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(8, 4),
        ^(local void *a, local void *b) {
            local int *x = (local int *)a;
            local int *y = (local int *)b;
            size_t l = get_local_id(0);
            x[l] = (int)get_global_id(0) + base;
            y[l] = 1000 * (int)get_group_id(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = x[3 - l] + y[l];
        }, 16u, 16u);
    out[9] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                            ^(local void *p) { out[0] = -7; }, 0u);
    out[10] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                             ^(local void *p) { out[0] = -7; }, huge);
}

// User events, kernel events, a marker: 1 waits for the user event the parent sets last, 2
// for 1, the marker for both, 4 for the marker.
kernel void events(global int *out) {
    queue_t q = get_default_queue();
    clk_event_t user = create_user_event();
    clk_event_t e1, e2, marker;
    out[0] = is_valid_event(user);
    out[6] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &user, &e1,
                            ^{ out[1] = out[3] + 1; });
    out[7] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &e1, &e2,
                            ^{ out[2] = out[1] * 10; });
    clk_event_t both[2] = {e1, e2};
    out[8] = enqueue_marker(q, 2, both, &marker);
    retain_event(marker);
    release_event(marker);
    out[9] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &marker, NULL,
                            ^{ out[4] = out[2] + 5; });
    out[3] = 41;
    set_user_event_status(user, CL_COMPLETE);
    release_event(user);
    release_event(e1);
    release_event(e2);
    release_event(marker);
    out[5] = is_valid_event(user);
    // A released event is no valid wait list entry.
    out[10] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &user, NULL,
                             ^{ out[11] = 1; });
}

// A child waiting for a user event the parent sets to `status`: CL_COMPLETE runs it, an error
// does not (and fails the parent's command).
kernel void user_event_status(global int *out, int status) {
    clk_event_t user = create_user_event();
    out[0] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1,
                            &user, NULL, ^{ out[1] = 1; });
    set_user_event_status(user, status);
    release_event(user);
}

// A child waiting for a user event nobody sets: it cannot run, the parent's command fails.
kernel void never_set(global int *out) {
    clk_event_t user = create_user_event();
    out[0] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1,
                            &user, NULL, ^{ out[1] = 1; });
    out[2] = 5;
    release_event(user);
}

// The block queries.
kernel void block_queries(global uint *out) {
    void (^block)(void) = ^{ out[10] = 1; };
    out[0] = get_kernel_work_group_size(block);
    out[1] = get_kernel_preferred_work_group_size_multiple(block);
    ndrange_t r = ndrange_1D(64, 10);
    out[2] = get_kernel_sub_group_count_for_ndrange(r, block);
    out[3] = get_kernel_max_sub_group_size_for_ndrange(r, block);
    void (^with_barrier)(void) = ^{
        out[11] = 1;
        barrier(CLK_GLOBAL_MEM_FENCE);
    };
    out[4] = get_kernel_work_group_size(with_barrier);
}

// Execution times of a child, captured before it ran (written when it completes) and by a
// child that waits for it; `q` decides whether the queue profiles.
kernel void profiling(global ulong *out, queue_t q) {
    clk_event_t e;
    int r = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(256), 0, NULL, &e, ^{
        ulong x = get_global_id(0);
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005UL + 1442695040888963407UL;
        if (x == 42)
            out[9] = x;
    });
    capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, out);
    int r2 = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, &e, NULL, ^{
        capture_event_profiling_info(e, CLK_PROFILING_COMMAND_EXEC_TIME, out + 2);
        release_event(e);
    });
    out[4] = (ulong)(long)r;
    out[5] = (ulong)(long)r2;
}

// Enqueues through a queue_t argument, and to the default queue (which may not exist). (No
// comparison of queue_t values: llvm-spirv-15 turns it into an invalid OpConvertPtrToU.)
kernel void via_argument(global int *out, queue_t q) {
    out[0] = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(4),
                            ^{ out[1 + get_global_id(0)] = 9; });
    out[5] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                            ^{ out[6] = 9; });
}

// Enqueues into `q` until it is full (one work-item): out[0] children enqueued, out[1] what
// they counted, out[2] the refusal.
kernel void fill_queue(global int *out, queue_t q) {
    int n = 0;
    int refused = 0;
    for (int i = 0; i < 100000; i++) {
        int r = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),
                               ^{ atomic_inc((volatile global int *)out + 1); });
        if (r != CLK_SUCCESS) {
            refused = r;
            break;
        }
        n++;
    }
    out[0] = n;
    out[2] = refused;
}

// Creates user events until the device refuses one (one work-item): out[0] made, out[1] what
// an enqueue asking for an event then returns.
kernel void many_events(global int *out) {
    int made = 0;
    for (int i = 0; i < 5000; i++) {
        clk_event_t e = create_user_event();
        if (!is_valid_event(e))
            break;
        made++;
    }
    out[0] = made;
    clk_event_t e;
    out[1] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 0,
                            NULL, &e, ^{ out[2] = 1; });
}

// A child that never ends unless the host sets out[1]: only the kernel watchdog stops it.
kernel void runaway(global int *out) {
    out[0] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), ^{
        volatile global int *v = out;
        while (v[1] == 0)
            v[2] += 1;
    });
}
