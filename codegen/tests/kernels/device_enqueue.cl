// Device-side enqueue (codegen/tests/device_enqueue.rs): what each instruction hands the
// runtime's host, and blocks run as kernels with their captured values.

kernel void parent(global int *out, int n) {
    size_t gid = get_global_id(0);
    size_t g2[2] = {4, 6};
    size_t l2[2] = {2, 3};
    int base = 7 + (int)gid;
    queue_t q = get_default_queue();
    clk_event_t ev;
    int r1 = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(n), 0, NULL, &ev,
                            ^{ out[100 + get_global_id(0)] = base; });
    int r2 = enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_2D(g2, l2), 1, &ev, NULL,
                            ^(local void *a, local void *b) {
                                ((local int *)a)[0] = base;
                                out[200] = ((local int *)a)[0] + (int)get_local_size(1);
                            },
                            16u, 32u);
    clk_event_t marker;
    int r3 = enqueue_marker(q, 1, &ev, &marker);
    size_t wg = get_kernel_work_group_size(^{ out[0] = base; });
    clk_event_t user = create_user_event();
    int valid = is_valid_event(user);
    set_user_event_status(user, CL_COMPLETE);
    retain_event(user);
    release_event(user);
    release_event(user);
    capture_event_profiling_info(ev, CLK_PROFILING_COMMAND_EXEC_TIME, out + 300);
    release_event(ev);
    release_event(marker);
    out[gid * 8 + 0] = r1;
    out[gid * 8 + 1] = r2;
    out[gid * 8 + 2] = r3;
    out[gid * 8 + 3] = (int)wg;
    out[gid * 8 + 4] = valid;
}

kernel void refused(global int *out) {
    // A count without a list: refused before the host sees it.
    out[0] = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), 1, NULL,
                            NULL, ^{ out[1] = 1; });
}

// A block called where it is written: llvm-spirv-15 puts its literal at program scope with a
// null pointer cast to generic in a constant expression.
int nested_blocks(void) {
    return ^(int i) {
        return ^(ushort us) { return (int)us + i; }(3);
    }(7) - 10;
}

kernel void direct_block(global int *out) {
    out[0] = nested_blocks();
}
