//! What kernels enqueue (`kernels/device_enqueue.cl`), both OpenCL C recipes: children with
//! every flag, nested children, ranges and local sizes, local-pointer blocks, events, markers
//! and user events, block queries, profiling captures, full queues and event limits, and
//! children that can never run.

use super::*;

/// The kernel `name` of device_enqueue.cl with recipe `opt`, and a default device queue
/// (`props` besides `CL_QUEUE_ON_DEVICE_DEFAULT`) for it.
fn setup(env: &Env, opt: Opt, name: &str, props: cl_queue_properties) -> (Kernel, Queue) {
    let queue = device_queue(env, DEFAULT | props, &[]);
    (env.kernel("device_enqueue", opt, name), queue)
}

#[test]
fn children_run_with_every_flag() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    for opt in OPTS {
        let (k, _q) = setup(&env, opt, "enqueue_flags", 0);
        for flag in 0..3i32 {
            let n = 256;
            let buf = env.buffer_filled(n, -5i32);
            arg_buf(&k, 0, &buf);
            arg(&k, 1, &flag);
            let (status, _) = launch(&env, &k, &[n], Some(&[16]));
            assert_eq!(status, CL_COMPLETE, "{opt:?} flag {flag}");
            let want: Vec<i32> = (0..n as i32).map(|i| 2 * i + 1).collect();
            assert_eq!(env.read(&buf, n), want, "{opt:?} flag {flag}");
        }
        // A flag enqueue_kernel does not know.
        let buf = env.buffer_filled(4, -5i32);
        arg_buf(&k, 0, &buf);
        arg(&k, 1, &7i32);
        let (status, _) = launch(&env, &k, &[4], None);
        assert_eq!(status, CL_COMPLETE);
        assert_eq!(env.read(&buf, 4), [-1101; 4], "CLK_ENQUEUE_FAILURE - 1000");
    }
}

/// Children enqueueing children, 6 levels; the parent's command completes after all of them,
/// its CL_PROFILING_COMMAND_COMPLETE not before its END (CTS enqueue_profiling).
#[test]
fn nested_children() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let profiling_queue = queue_with(
        &env,
        &[CL_QUEUE_PROPERTIES as cl_queue_properties, PROFILING],
    )
    .unwrap();
    for opt in OPTS {
        let (k, _q) = setup(&env, opt, "nested", 0);
        let buf = env.buffer_filled(8, -1i32);
        arg_buf(&k, 0, &buf);
        arg(&k, 1, &5i32);
        let mut event = null_mut();
        let global = 1usize;
        // SAFETY: valid objects; the event is released below.
        unsafe {
            let r = clEnqueueNDRangeKernel(
                profiling_queue.0,
                k.get(),
                1,
                null(),
                &global,
                null(),
                0,
                null(),
                &mut event,
            );
            assert_eq!(r, CL_SUCCESS);
            assert_eq!(clFinish(profiling_queue.0), CL_SUCCESS);
        }
        let event = Event(event);
        assert_eq!(event.status(), CL_COMPLETE);
        let time = |name| {
            let mut t = 0u64;
            // SAFETY: a ulong answer.
            let r = unsafe {
                clGetEventProfilingInfo(event.0, name, 8, (&mut t as *mut u64).cast(), null_mut())
            };
            assert_eq!(r, CL_SUCCESS);
            t
        };
        let (start, end) = (
            time(CL_PROFILING_COMMAND_START),
            time(CL_PROFILING_COMMAND_END),
        );
        assert!(start <= end && end <= time(CL_PROFILING_COMMAND_COMPLETE));
        assert_eq!(
            env.read(&buf, 8),
            [100, 101, 102, 103, 104, 105, -1, -1],
            "{opt:?}"
        );
    }
}

#[test]
fn ranges_and_local_sizes() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    for opt in OPTS {
        let (k, _q) = setup(&env, opt, "ranges", 0);
        let buf = env.buffer_filled(128, -1i32);
        arg_buf(&k, 0, &buf);
        let (status, _) = launch(&env, &k, &[1], None);
        assert_eq!(status, CL_COMPLETE, "{opt:?}");
        let out = env.read(&buf, 128);
        // 2-D: local 3x2, 2 groups in x, work_dim 2.
        assert_eq!(&out[..24], &[3222; 24], "{opt:?}");
        // 3-D with an offset: 1x3x2 groups; local id in z.
        for z in 0..4 {
            for yx in 0..6 {
                assert_eq!(
                    out[24 + z * 6 + yx],
                    132 + 1000 * (z as i32 % 2),
                    "{opt:?} z {z}"
                );
            }
        }
        assert_eq!(&out[48..52], &[0; 4], "{opt:?}: the valid enqueues");
        assert_eq!(
            &out[52..55],
            &[CLK_INVALID_NDRANGE; 3],
            "{opt:?}: a local size zero in one dimension, a zero global size, a local size over the kernel's maximum"
        );
        // Non-uniform: the last group of 10 in groups of 4 has 2.
        assert_eq!(&out[60..70], &[4, 4, 4, 4, 4, 4, 4, 4, 2, 2], "{opt:?}");
        // Chosen local size: every work-item ran.
        assert_eq!(&out[80..104], &[1; 24], "{opt:?}");
    }
}

#[test]
fn blocks_with_local_pointers() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let local_mem = device_word(&env, CL_DEVICE_LOCAL_MEM_SIZE);
    for opt in OPTS {
        let (k, _q) = setup(&env, opt, "local_args", 0);
        let buf = env.buffer_filled(16, -1i32);
        arg_buf(&k, 0, &buf);
        arg(&k, 1, &((local_mem + 1) as u32));
        let (status, _) = launch(&env, &k, &[1], None);
        assert_eq!(status, CL_COMPLETE, "{opt:?}");
        let out = env.read(&buf, 16);
        // Group g reverses its ids 4g..4g+3 (plus 7) and adds 1000 g.
        assert_eq!(&out[..8], &[10, 9, 8, 7, 1014, 1013, 1012, 1011], "{opt:?}");
        assert_eq!(
            &out[8..11],
            &[0, CLK_INVALID_ARG_SIZE, CLK_OUT_OF_RESOURCES],
            "{opt:?}"
        );
    }
}

#[test]
fn events_markers_and_user_events() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    for opt in OPTS {
        let (k, _q) = setup(&env, opt, "events", 0);
        let buf = env.buffer_filled(16, -1i32);
        arg_buf(&k, 0, &buf);
        let (status, _) = launch(&env, &k, &[1], None);
        assert_eq!(status, CL_COMPLETE, "{opt:?}");
        let out = env.read(&buf, 16);
        assert_eq!(&out[..6], &[1, 42, 420, 41, 425, 0], "{opt:?}");
        assert_eq!(&out[6..10], &[0; 4], "{opt:?}: the enqueues");
        assert_eq!(
            out[10], CLK_INVALID_EVENT_WAIT_LIST,
            "{opt:?}: a released event"
        );
        assert_eq!(out[11], -1, "{opt:?}: its child did not run");
    }
}

/// A user event set to CL_COMPLETE lets its waiter run; set to an error, the waiter does not
/// run and the parent's command fails.
#[test]
fn user_event_status_reaches_the_parent() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    for opt in OPTS {
        let (k, _q) = setup(&env, opt, "user_event_status", 0);
        for (status, ran) in [(CL_COMPLETE, 1), (-1234, -1)] {
            let buf = env.buffer_filled(2, -1i32);
            arg_buf(&k, 0, &buf);
            arg(&k, 1, &status);
            let (got, _) = launch(&env, &k, &[1], None);
            assert_eq!(env.read(&buf, 2), [0, ran], "{opt:?} status {status}");
            if status == CL_COMPLETE {
                assert_eq!(got, CL_COMPLETE);
            } else {
                assert!(got < 0, "{opt:?}: the parent's status {got}");
            }
        }
    }
}

/// A child waiting for a user event no kernel sets: clFinish returns, the child never ran,
/// the parent's event has an error status, and the queue goes on.
#[test]
fn a_child_waiting_forever_fails_instead_of_hanging() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    for opt in OPTS {
        let (k, _q) = setup(&env, opt, "never_set", 0);
        let buf = env.buffer_filled(3, -1i32);
        arg_buf(&k, 0, &buf);
        let started = std::time::Instant::now();
        let (status, _) = launch(&env, &k, &[1], None);
        assert!(status < 0, "{opt:?}: the parent's status {status}");
        assert!(started.elapsed().as_secs() < 60);
        assert_eq!(env.read(&buf, 3), [0, -1, 5], "{opt:?}");
        // The queue still runs commands.
        let (k2, _q2) = (env.kernel("device_enqueue", opt, "enqueue_flags"), ());
        let buf = env.buffer_filled(4, 0i32);
        arg_buf(&k2, 0, &buf);
        arg(&k2, 1, &0i32);
        let (status, _) = launch(&env, &k2, &[4], None);
        assert_eq!(status, CL_COMPLETE);
        assert_eq!(env.read(&buf, 4), [1, 3, 5, 7]);
    }
}

#[test]
fn block_queries_answer_as_the_host_api() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let max = device_word(&env, CL_DEVICE_MAX_WORK_GROUP_SIZE) as u32;
    for opt in OPTS {
        let (k, _q) = setup(&env, opt, "block_queries", 0);
        let buf = env.buffer_filled(12, 0u32);
        arg_buf(&k, 0, &buf);
        let (status, _) = launch(&env, &k, &[1], None);
        assert_eq!(status, CL_COMPLETE, "{opt:?}");
        let out = env.read(&buf, 12);
        let multiple = check(
            cl(k.get_work_group_size_multiple(env.device.id())),
            "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE",
        ) as u32;
        assert_eq!(out[0], max, "{opt:?}: a block without barriers");
        assert_eq!(out[1], multiple, "{opt:?}");
        // 10 work-items in sub-groups of 4.
        assert_eq!(&out[2..4], &[3, 4], "{opt:?}");
        assert!(out[4] >= 1 && out[4] <= max, "{opt:?}: {}", out[4]);
        assert_eq!(&out[10..12], &[0, 0], "{opt:?}: the blocks never ran");
    }
}

/// capture_event_profiling_info: end − start and complete − start of a child, written when it
/// completes (asked before it ran) or at once (asked by a child that waited for it); nothing
/// on a queue without profiling.
#[test]
fn profiling_captures() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    for opt in OPTS {
        let k = env.kernel("device_enqueue", opt, "profiling");
        for props in [PROFILING, 0] {
            let q = device_queue(&env, ON_DEVICE | props, &[]);
            let buf = env.buffer_filled(8, u64::MAX);
            arg_buf(&k, 0, &buf);
            arg_queue(&k, 1, q.0);
            let (status, _) = launch(&env, &k, &[1], None);
            assert_eq!(status, CL_COMPLETE, "{opt:?}");
            let out = env.read(&buf, 8);
            assert_eq!(&out[4..6], &[0, 0], "{opt:?}: the enqueues");
            if props == PROFILING {
                assert!(out[0] > 0 && out[0] <= out[1], "{opt:?}: {out:?}");
                assert!(out[1] < 60_000_000_000, "{opt:?}: {out:?}");
                assert_eq!(&out[2..4], &out[0..2], "{opt:?}: the same times");
            } else {
                assert_eq!(&out[..4], &[u64::MAX; 4], "{opt:?}: nothing captured");
            }
        }
    }
}

/// A queue takes what its CL_QUEUE_SIZE holds (CLK_DEVICE_QUEUE_FULL then); a launch's
/// children hold at most CL_DEVICE_MAX_ON_DEVICE_EVENTS events (CLK_EVENT_ALLOCATION_FAILURE).
#[test]
fn full_queues_and_event_limits() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) || env.other_icd {
        return;
    }
    for opt in OPTS {
        let k = env.kernel("device_enqueue", opt, "fill_queue");
        let small = device_queue(
            &env,
            ON_DEVICE,
            &[CL_QUEUE_SIZE as cl_queue_properties, 1024],
        );
        let buf = env.buffer_filled(3, 0i32);
        arg_buf(&k, 0, &buf);
        arg_queue(&k, 1, small.0);
        let (status, _) = launch(&env, &k, &[1], None);
        assert_eq!(status, CL_COMPLETE, "{opt:?}");
        let out = env.read(&buf, 3);
        assert!(out[0] >= 1 && out[0] < 100, "{opt:?}: {out:?}");
        assert_eq!(out[1], out[0], "{opt:?}: every enqueued child ran");
        assert_eq!(out[2], CLK_DEVICE_QUEUE_FULL, "{opt:?}");
        // The queue's space is back once its commands have run.
        let (status, _) = launch(&env, &k, &[1], None);
        assert_eq!(status, CL_COMPLETE);
        assert_eq!(env.read(&buf, 3)[0], out[0], "{opt:?}");

        let (k, _q) = setup(&env, opt, "many_events", 0);
        let buf = env.buffer_filled(3, -1i32);
        arg_buf(&k, 0, &buf);
        let (status, _) = launch(&env, &k, &[1], None);
        assert_eq!(status, CL_COMPLETE, "{opt:?}");
        let max = device_word(&env, CL_DEVICE_MAX_ON_DEVICE_EVENTS) as i32;
        assert_eq!(
            env.read(&buf, 3),
            [max, CLK_EVENT_ALLOCATION_FAILURE, -1],
            "{opt:?}"
        );
    }
}

/// Many parents at once, from two host queues, each work-item enqueueing a child.
#[test]
fn concurrent_parents() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let (k1, _q) = setup(&env, Opt::Optimised, "enqueue_flags", 0);
    let k2 = env.kernel("device_enqueue", Opt::O0, "enqueue_flags");
    let other = queue_with(&env, &[]).unwrap();
    let n = 1024;
    let bufs: Vec<_> = (0..2).map(|_| env.buffer_filled(n, 0i32)).collect();
    let mut events = Vec::new();
    for (i, (k, q)) in [(&k1, env.queue.get()), (&k2, other.0)]
        .into_iter()
        .enumerate()
    {
        arg_buf(k, 0, &bufs[i]);
        arg(k, 1, &(i as i32));
        let mut e = null_mut();
        // SAFETY: valid objects; the events are released below.
        let r =
            unsafe { clEnqueueNDRangeKernel(q, k.get(), 1, null(), &n, null(), 0, null(), &mut e) };
        assert_eq!(r, CL_SUCCESS);
        events.push(Event(e));
    }
    // SAFETY: valid host queues.
    unsafe {
        assert_eq!(clFinish(env.queue.get()), CL_SUCCESS);
        assert_eq!(clFinish(other.0), CL_SUCCESS);
    }
    let want: Vec<i32> = (0..n as i32).map(|i| 2 * i + 1).collect();
    for (e, b) in events.iter().zip(&bufs) {
        assert_eq!(e.status(), CL_COMPLETE);
        assert_eq!(env.read(b, n), want);
    }
}

/// `FERROCL_KERNEL_TIMEOUT` covers the children: a child that never ends is stopped, and the
/// parent's command fails with CL_OUT_OF_RESOURCES.
#[test]
fn the_watchdog_stops_a_runaway_child() {
    if target().other_icd
        || in_child(
            "kernels::the_watchdog_stops_a_runaway_child",
            &[("FERROCL_KERNEL_TIMEOUT", "0.5")],
        )
    {
        return;
    }
    let env = Env::new();
    let (k, _q) = setup(&env, Opt::Optimised, "runaway", 0);
    let buf = env.buffer_filled(3, 0i32);
    arg_buf(&k, 0, &buf);
    let started = std::time::Instant::now();
    let (status, _) = launch(&env, &k, &[1], None);
    assert_eq!(status, CL_OUT_OF_RESOURCES);
    assert!(started.elapsed().as_secs() < 30);
    let out = env.read(&buf, 3);
    assert_eq!(out[..2], [0, 0]);
    assert!(out[2] > 0, "the child ran: {out:?}");
}
