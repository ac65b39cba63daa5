//! Recording and enqueueing: the device queries, commands recorded once with sync points and
//! enqueued many times (in order with regular commands, on substitute and profiling queues,
//! after a failed wait list), a failing command ending its execution, the buffer and
//! mutable-command queries and the states.

use super::*;

#[test]
fn the_device_reports_command_buffers() {
    let Some((env, _)) = setup() else { return };
    let raw = cl3::device::get_device_data(env.device.id(), CL_DEVICE_EXTENSIONS_WITH_VERSION)
        .expect("CL_DEVICE_EXTENSIONS_WITH_VERSION");
    let versions: Vec<(String, cl_version)> = words::<cl_name_version>(&raw)
        .iter()
        .map(|nv| {
            let end = nv
                .name
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(nv.name.len());
            (
                String::from_utf8_lossy(&nv.name[..end]).into_owned(),
                nv.version,
            )
        })
        .collect();
    let version_of = |name: &str| versions.iter().find(|v| v.0 == name).map(|v| v.1);
    let v = |major: u32, minor: u32, patch: u32| (major << 22) | (minor << 12) | patch;
    assert_eq!(version_of("cl_khr_command_buffer"), Some(v(0, 9, 8)));
    assert_eq!(
        version_of("cl_khr_command_buffer_mutable_dispatch"),
        Some(v(0, 9, 5))
    );
    assert_eq!(
        version_of("cl_khr_command_buffer_multi_device"),
        Some(v(0, 9, 2))
    );
    // Device-side enqueue in command-buffers where the device has it (on by default).
    assert_eq!(
        device_u64(&env, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR),
        CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR
            | CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR
            | CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR
            | CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR,
        "printf, simultaneous use, several queues, device-side enqueue"
    );
    assert_eq!(
        device_u64(&env, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR),
        0
    );
    assert_eq!(
        device_u64(
            &env,
            CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR
        ),
        CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
    );
    assert_eq!(
        device_u64(&env, CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR),
        0x1f
    );
}

#[test]
fn recorded_commands_run_at_every_enqueue() {
    let Some((env, api)) = setup() else { return };
    let n = 1000usize;
    let bytes = n * 4;
    let (a, b) = (env.buffer_filled(n, 0i32), env.buffer_filled(n, 0i32));
    let add = kernel(&env, "add");
    let cb = Cb::new(&api, env.queue.get(), &[]);
    // fill a → a += 2 → barrier → copy a to b → b += 10, each waiting on the one before.
    let filled = cb.fill(a.get(), 1, bytes, &[]);
    arg_buf(&add, 0, &a);
    arg(&add, 1, &2i32);
    let (added, handle) = cb.kernel(&add, &[], n, None, &[filled]);
    // The recorded command keeps the arguments it was recorded with.
    arg(&add, 1, &1000i32);
    let barrier = cb.barrier(&[]);
    let copied = cb.copy(a.get(), b.get(), bytes, &[barrier]);
    arg_buf(&add, 0, &b);
    arg(&add, 1, &10i32);
    let (last, _) = cb.kernel(&add, &[], n, Some(8), &[copied, added]);
    let points = [filled, added, barrier, copied, last];
    assert!(points.iter().all(|&p| p != 0), "{points:?}");
    assert!(points.windows(2).all(|w| w[0] != w[1]), "{points:?}");
    assert!(!handle.is_null(), "kernel commands have handles");
    assert_eq!(cb.state(), CL_COMMAND_BUFFER_STATE_RECORDING_KHR);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    assert_eq!(cb.state(), CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
    // Later clSetKernelArg calls do not reach it either.
    arg(&add, 1, &-7i32);
    for round in 0..5 {
        cb.run();
        assert!(env.read(&a, n).iter().all(|&x| x == 3), "round {round}");
        assert!(env.read(&b, n).iter().all(|&x| x == 13), "round {round}");
        // Regular commands interleave with the executions.
        let zeros = vec![0i32; n];
        // SAFETY: a blocking write from a live slice of the buffer's size.
        let e = unsafe {
            cl3::command_queue::enqueue_write_buffer(
                env.queue.get(),
                b.get(),
                CL_BLOCKING,
                0,
                bytes,
                zeros.as_ptr().cast(),
                0,
                ptr::null(),
            )
        }
        .expect("clEnqueueWriteBuffer");
        release(e);
    }
    // A buffer enqueued many times without waiting: each execution adds once, in order.
    let counter = env.buffer_filled(n, 0i32);
    let many = Cb::new(&api, env.queue.get(), &[]);
    arg_buf(&add, 0, &counter);
    arg(&add, 1, &1i32);
    many.kernel(&add, &[], n, None, &[]);
    ok(many.finalize(), "clFinalizeCommandBufferKHR");
    let events: Vec<cl_event> = (0..50).map(|_| many.enqueue(&[])).collect();
    check(cl(env.queue.finish()), "clFinish");
    assert!(env.read(&counter, n).iter().all(|&x| x == 50));
    for e in events {
        assert_eq!(event_status(e), CL_COMPLETE);
        let ty = cl3::event::get_event_data(e, CL_EVENT_COMMAND_TYPE).unwrap();
        assert_eq!(
            u32::from_ne_bytes(ty[..4].try_into().unwrap()),
            CL_COMMAND_COMMAND_BUFFER_KHR
        );
        release(e);
    }
}

#[test]
fn profiling_queues_substitute_queues_and_failed_wait_lists() {
    let Some((env, api)) = setup() else { return };
    let n = 256usize;
    let data = env.buffer_filled(n, 0i32);
    let add = kernel(&env, "add");
    arg_buf(&add, 0, &data);
    arg(&add, 1, &1i32);
    let cb = Cb::new(&api, env.queue.get(), &[]);
    cb.kernel(&add, &[], n, None, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    // Another queue of the same device and context, with profiling, out of order.
    let props = CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    let other = check(
        cl(CommandQueue::create_default_with_properties(
            &env.context,
            props,
            0,
        )),
        "clCreateCommandQueueWithProperties",
    );
    let mut queues = [other.get()];
    let mut event = ptr::null_mut();
    // SAFETY: valid handles; one queue.
    ok(
        unsafe {
            call!(
                api,
                enqueue(1, queues.as_mut_ptr(), cb.raw, 0, ptr::null(), &mut event)
            )
        },
        "clEnqueueCommandBufferKHR on a substitute queue",
    );
    assert_eq!(event_status(event), CL_COMPLETE);
    let queue_of = cl3::event::get_event_data(event, CL_EVENT_COMMAND_QUEUE).unwrap();
    assert_eq!(words::<usize>(&queue_of)[0], other.get() as usize);
    let start = cl3::event::get_event_profiling_data(event, CL_PROFILING_COMMAND_START).unwrap();
    let end = cl3::event::get_event_profiling_data(event, CL_PROFILING_COMMAND_END).unwrap();
    let (start, end) = (words::<u64>(&start)[0], words::<u64>(&end)[0]);
    assert!(start > 0 && end >= start, "{start}..{end}");
    release(event);
    assert!(env.read(&data, n).iter().all(|&x| x == 1));
    // A failed event of the wait list fails the execution, which runs nothing.
    let gate = cl3::event::create_user_event(env.context.get()).unwrap();
    let e = cb.enqueue(&[gate]);
    cl3::event::set_user_event_status(gate, -1).unwrap();
    assert_eq!(
        event_status(e),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    release(e);
    release(gate);
    assert!(env.read(&data, n).iter().all(|&x| x == 1));
}

#[test]
fn a_failing_command_ends_its_execution() {
    let Some((env, api)) = setup() else { return };
    if env.other_icd {
        return; // checked mode is Ferrocl's
    }
    // Checked mode stops the out-of-bounds write and fails the command.
    let program = env.program_from_source(
        "kernel void past_the_end(global int *data) { data[get_global_id(0) + 64] = 1; }",
        "-cl-ferrocl-checked",
    );
    let bad = check(
        cl(Kernel::create(&program, "past_the_end")),
        "clCreateKernel",
    );
    let small = env.buffer_filled(64, 0i32);
    let other = env.buffer_filled(64, 0i32);
    arg_buf(&bad, 0, &small);
    let cb = Cb::new(&api, env.queue.get(), &[]);
    cb.kernel(&bad, &[], 64, None, &[]);
    cb.fill(other.get(), 5, 256, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    let e = cb.enqueue(&[]);
    assert_eq!(event_status(e), CL_OUT_OF_RESOURCES);
    release(e);
    assert!(
        env.read(&other, 64).iter().all(|&x| x == 0),
        "the fill after it did not run"
    );
    assert!(env.read(&small, 64).iter().all(|&x| x == 0));
}

#[test]
fn queries_and_states() {
    let Some((env, api)) = setup() else { return };
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        0,
    ];
    let cb = Cb::new(&api, env.queue.get(), &props);
    assert_eq!(
        words::<cl_uint>(&cb.info(CL_COMMAND_BUFFER_NUM_QUEUES_KHR)),
        [1]
    );
    assert_eq!(
        words::<usize>(&cb.info(CL_COMMAND_BUFFER_QUEUES_KHR)),
        [env.queue.get() as usize]
    );
    assert_eq!(
        words::<usize>(&cb.info(CL_COMMAND_BUFFER_CONTEXT_KHR)),
        [env.context.get() as usize]
    );
    assert_eq!(
        words::<cl_command_buffer_properties_khr>(&cb.info(CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR)),
        props
    );
    let refs = || words::<cl_uint>(&cb.info(CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR))[0];
    assert_eq!(refs(), 1);
    // SAFETY: valid handle.
    ok(
        unsafe { call!(api, retain(cb.raw)) },
        "clRetainCommandBufferKHR",
    );
    assert_eq!(refs(), 2);
    // SAFETY: the reference just taken.
    ok(
        unsafe { call!(api, release(cb.raw)) },
        "clReleaseCommandBufferKHR",
    );
    assert_eq!(refs(), 1);
    let plain = Cb::new(&api, env.queue.get(), &[]);
    assert!(
        plain
            .info(CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR)
            .is_empty(),
        "NULL properties"
    );

    // The mutable-command queries, as recorded.
    let shape = kernel(&env, "shape");
    let out = env.buffer_filled(64, 0i32);
    arg_buf(&shape, 0, &out);
    let kprops = [
        CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
        CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR,
        0,
    ];
    let (_, with_props) = cb.kernel(&shape, &kprops, 32, Some(8), &[]);
    let (_, without) = cb.kernel(&shape, &[], 16, None, &[]);
    let command_info = |c: cl_mutable_command_khr, param| {
        info_bytes(|size, value, ret| {
            // SAFETY: the two-call protocol with a buffer of `size` bytes.
            unsafe { call!(api, command_info(c, param, size, value, ret)) }
        })
    };
    let handle_of = |c, param| words::<usize>(&command_info(c, param))[0];
    assert_eq!(
        handle_of(with_props, CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR),
        env.queue.get() as usize
    );
    assert_eq!(
        handle_of(with_props, CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR),
        cb.raw as usize
    );
    assert_eq!(
        handle_of(with_props, CL_MUTABLE_DISPATCH_KERNEL_KHR),
        shape.get() as usize
    );
    assert_eq!(
        words::<cl_uint>(&command_info(
            with_props,
            CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR
        )),
        [CL_COMMAND_NDRANGE_KERNEL]
    );
    assert_eq!(
        words::<cl_command_properties_khr>(&command_info(
            with_props,
            CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR
        )),
        kprops
    );
    assert!(command_info(without, CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR).is_empty());
    assert_eq!(
        words::<cl_uint>(&command_info(
            with_props,
            CL_MUTABLE_DISPATCH_DIMENSIONS_KHR
        )),
        [1]
    );
    let sizes = |c, param| words::<usize>(&command_info(c, param));
    assert_eq!(
        sizes(with_props, CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR),
        [32]
    );
    assert_eq!(
        sizes(with_props, CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR),
        [8]
    );
    assert_eq!(
        sizes(with_props, CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR),
        [0]
    );
    assert_eq!(
        sizes(without, CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR),
        [0],
        "a local size left to the device reads as zeros"
    );
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    assert_eq!(cb.state(), CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
    // An update shows in the queries.
    let global = 48usize;
    let mut c = config(with_props);
    c.global_work_size = &global;
    ok(cb.update(&[c]), "clUpdateMutableCommandsKHR");
    assert_eq!(
        sizes(with_props, CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR),
        [48]
    );
    cb.run();
    let got = env.read(&out, 64);
    // The second command (16 items, local size chosen) ran after the first (48 of 8).
    assert!(
        got[..16].iter().all(|&x| x == 16 * 10000 + 16 * 100),
        "{:?}",
        &got[..16]
    );
    assert!(
        got[16..48].iter().all(|&x| x == 48 * 10000 + 8 * 100),
        "{:?}",
        &got[16..48]
    );
    assert!(got[48..].iter().all(|&x| x == 0));
}
