//! Queues running commands at the same time, through the loader: two kernels of one
//! out-of-order queue overlap (they meet while both run; their profiling windows overlap); a
//! small kernel is not stuck behind a large one; two in-order queues share the workers; markers,
//! barriers (with and without wait lists) and user events order out-of-order commands as the
//! spec says; `cl_khr_priority_hints` and `cl_khr_throttle_hints` (accepted, reported, a
//! high-priority queue's kernel served before a low-priority one's, a low throttle holding a
//! kernel to half the workers). No wall-clock thresholds: kernels prove they ran together by meeting, and order is
//! read from counters the kernels record.

mod common;

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use common::*;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clEnqueueNDRangeKernel(
        q: cl_command_queue,
        k: cl_kernel,
        dims: cl_uint,
        offset: *const usize,
        global: *const usize,
        local: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueMarkerWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueBarrierWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    fn clCreateUserEvent(c: cl_context, err: *mut cl_int) -> cl_event;
    fn clSetUserEventStatus(e: cl_event, status: cl_int) -> cl_int;
    fn clGetEventInfo(
        e: cl_event,
        param: cl_event_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    fn clGetEventProfilingInfo(
        e: cl_event,
        param: cl_profiling_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    fn clWaitForEvents(n: cl_uint, events: *const cl_event) -> cl_int;
    fn clReleaseEvent(e: cl_event) -> cl_int;
    fn clFinish(q: cl_command_queue) -> cl_int;
}

/// A queue on the test device with `properties` (CL_QUEUE_PROPERTIES).
fn queue(env: &Env, properties: cl_command_queue_properties) -> CommandQueue {
    check(
        cl(CommandQueue::create_default_with_properties(
            &env.context,
            properties,
            0,
        )),
        "clCreateCommandQueueWithProperties",
    )
}

const OUT_OF_ORDER: cl_command_queue_properties =
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;

/// Enqueues `kernel` over `groups` work-groups of one work-item after `wait`.
fn launch(q: &CommandQueue, kernel: &Kernel, groups: usize, wait: &[cl_event]) -> cl_event {
    let (global, local) = ([groups], [1usize]);
    let mut event = null_mut();
    // SAFETY: arguments are set by the caller; arrays outlive the call.
    let e = unsafe {
        clEnqueueNDRangeKernel(
            q.get(),
            kernel.get(),
            1,
            null(),
            global.as_ptr(),
            local.as_ptr(),
            wait.len() as cl_uint,
            if wait.is_empty() {
                null()
            } else {
                wait.as_ptr()
            },
            &mut event,
        )
    };
    assert_eq!(e, CL_SUCCESS, "clEnqueueNDRangeKernel");
    event
}

fn status(e: cl_event) -> cl_int {
    let mut s: cl_int = 0;
    // SAFETY: a live event; 4 writable bytes.
    let r = unsafe {
        clGetEventInfo(
            e,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            4,
            (&mut s as *mut cl_int).cast(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS);
    s
}

fn wait(events: &[cl_event]) {
    // SAFETY: live events.
    assert_eq!(
        unsafe { clWaitForEvents(events.len() as cl_uint, events.as_ptr()) },
        CL_SUCCESS
    );
}

fn window(e: cl_event) -> (cl_ulong, cl_ulong) {
    let get = |which| {
        let mut t: cl_ulong = 0;
        // SAFETY: a completed event of a profiling queue; 8 writable bytes.
        let r = unsafe {
            clGetEventProfilingInfo(e, which, 8, (&mut t as *mut cl_ulong).cast(), null_mut())
        };
        assert_eq!(r, CL_SUCCESS);
        t
    };
    (
        get(CL_PROFILING_COMMAND_START),
        get(CL_PROFILING_COMMAND_END),
    )
}

fn release(events: &[cl_event]) {
    for &e in events {
        // SAFETY: an event this test owns.
        assert_eq!(unsafe { clReleaseEvent(e) }, CL_SUCCESS);
    }
}

const KERNELS: &str = r#"
// Each group arrives and waits (boundedly) until `expected` groups have: only groups running at
// the same time all get through; one that gives up counts itself in `missed`.
__kernel void rendezvous(volatile __global int *arrived, int expected, __global int *missed)
{
    atomic_inc(arrived);
    ulong spins = 0;
    while (atomic_add(arrived, 0) < expected) {
        if (++spins == (1UL << 32)) { atomic_inc(missed); return; }
    }
}

// Some arithmetic per group, then one tick on `mine`; the group that ticks last records how
// far `theirs` had come.
__kernel void busy(__global int *mine, volatile __global int *theirs, __global int *seen,
                   int work, __global float *sink)
{
    float x = (float)get_group_id(0);
    for (int i = 0; i < work; i++)
        x = x * 0.999f + 1.0f;
    sink[get_group_id(0) & 63] = x;
    if (atomic_inc(mine) == (int)get_num_groups(0) - 1)
        *seen = atomic_add(theirs, 0);
}

__kernel void tick(__global int *counter) { atomic_inc(counter); }

// As `busy`, and the first group to start also records how far `theirs` had come.
__kernel void watched(volatile __global int *mine, volatile __global int *theirs,
                      __global int *seen_first, __global int *seen_last, int work,
                      __global float *sink)
{
    if (get_group_id(0) == 0)
        *seen_first = atomic_add(theirs, 0);
    float x = (float)get_group_id(0);
    for (int i = 0; i < work; i++)
        x = x * 0.999f + 1.0f;
    sink[get_group_id(0) & 63] = x;
    if (atomic_inc(mine) == (int)get_num_groups(0) - 1)
        *seen_last = atomic_add(theirs, 0);
}

// `rendezvous` that gives up soon: for groups that are not expected to meet.
__kernel void short_rendezvous(volatile __global int *arrived, int expected,
                               __global int *missed)
{
    atomic_inc(arrived);
    int spins = 0;
    while (atomic_add(arrived, 0) < expected) {
        if (++spins == (1 << 22)) { atomic_inc(missed); return; }
    }
}
"#;

#[test]
fn an_out_of_order_queue_overlaps_two_kernels() {
    let env = Env::new();
    let q = queue(&env, OUT_OF_ORDER);
    let program = env.program_from_source(KERNELS, "");
    let kernel = check(cl(Kernel::create(&program, "rendezvous")), "clCreateKernel");
    let (arrived, missed) = (env.buffer(&[0i32]), env.buffer(&[0i32]));
    arg_buf(&kernel, 0, &arrived);
    arg(&kernel, 1, &2i32);
    arg_buf(&kernel, 2, &missed);
    // Two one-group kernels that no event orders: they meet only if they run at once.
    let a = launch(&q, &kernel, 1, &[]);
    let b = launch(&q, &kernel, 1, &[]);
    wait(&[a, b]);
    assert_eq!(
        env.read(&missed, 1),
        [0],
        "a kernel waited in vain for the other"
    );
    assert_eq!(env.read(&arrived, 1), [2]);
    let (wa, wb) = (window(a), window(b));
    assert!(
        wa.0 < wb.1 && wb.0 < wa.1,
        "profiling windows overlap: {wa:?} {wb:?}"
    );
    release(&[a, b]);
}

/// Sets up `busy` for `mine`/`theirs`/`seen` with `work` iterations per group.
fn busy_kernel(
    program: &Program,
    mine: &Buffer<i32>,
    theirs: &Buffer<i32>,
    seen: &Buffer<i32>,
    work: i32,
    sink: &Buffer<f32>,
) -> Kernel {
    let k = check(cl(Kernel::create(program, "busy")), "clCreateKernel");
    arg_buf(&k, 0, mine);
    arg_buf(&k, 1, theirs);
    arg_buf(&k, 2, seen);
    arg(&k, 3, &work);
    arg_buf(&k, 4, sink);
    k
}

#[test]
fn a_small_kernel_is_not_stuck_behind_a_large_one() {
    let env = Env::new();
    let q = queue(&env, OUT_OF_ORDER);
    let program = env.program_from_source(KERNELS, "");
    let (large_done, small_done) = (env.buffer(&[0i32]), env.buffer(&[0i32]));
    let (large_saw, small_saw) = (env.buffer(&[-1i32]), env.buffer(&[-1i32]));
    let sink = env.buffer(&[0f32; 64]);
    const LARGE_GROUPS: usize = 1 << 14;
    let large = busy_kernel(
        &program,
        &large_done,
        &small_done,
        &large_saw,
        20_000,
        &sink,
    );
    let small = busy_kernel(&program, &small_done, &large_done, &small_saw, 10, &sink);
    let big = launch(&q, &large, LARGE_GROUPS, &[]);
    // Two groups: the small kernel needs the device's workers too, not only its queue thread.
    let little = launch(&q, &small, 2, &[]);
    wait(&[big, little]);
    let saw = env.read(&small_saw, 1)[0];
    assert!(
        (saw as usize) < LARGE_GROUPS / 2,
        "the small kernel finished after {saw} of {LARGE_GROUPS} groups of the large one"
    );
    assert!(window(little).1 < window(big).1);
    assert_eq!(env.read(&large_done, 1), [LARGE_GROUPS as i32]);
    release(&[big, little]);
}

#[test]
fn two_in_order_queues_share_the_workers() {
    let env = Env::new();
    let queues = [queue(&env, 0), queue(&env, 0)];
    let program = env.program_from_source(KERNELS, "");
    let done = [env.buffer(&[0i32]), env.buffer(&[0i32])];
    let saw = [env.buffer(&[-1i32]), env.buffer(&[-1i32])];
    let sink = env.buffer(&[0f32; 64]);
    const GROUPS: i32 = 1 << 13;
    let kernels = [
        busy_kernel(&program, &done[0], &done[1], &saw[0], 20_000, &sink),
        busy_kernel(&program, &done[1], &done[0], &saw[1], 20_000, &sink),
    ];
    let events = [
        launch(&queues[0], &kernels[0], GROUPS as usize, &[]),
        launch(&queues[1], &kernels[1], GROUPS as usize, &[]),
    ];
    wait(&events);
    // The kernel that finished first saw how far the other had come: with the workers shared
    // the other is well along, where finishing one job before the next would leave it near 0.
    let seen = [env.read(&saw[0], 1)[0], env.read(&saw[1], 1)[0]];
    let first = *seen.iter().min().unwrap();
    assert!(
        first >= GROUPS / 4,
        "when one queue's kernel ended the other's had run {first} of {GROUPS} groups"
    );
    release(&events);
}

#[test]
fn markers_barriers_and_user_events_order_out_of_order_commands() {
    let env = Env::new();
    let q = queue(&env, OUT_OF_ORDER);
    let program = env.program_from_source(KERNELS, "");
    let counters: Vec<Buffer<i32>> = (0..3).map(|_| env.buffer(&[0i32])).collect();
    let ticks: Vec<Kernel> = counters
        .iter()
        .map(|c| {
            let k = check(cl(Kernel::create(&program, "tick")), "clCreateKernel");
            arg_buf(&k, 0, c);
            k
        })
        .collect();
    let mut err = 0;
    // SAFETY: a live context.
    let gate = unsafe { clCreateUserEvent(env.context.get(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let gated = launch(&q, &ticks[0], 1, &[gate]);
    let (mut marker, mut barrier, mut listed_marker) = (null_mut(), null_mut(), null_mut());
    // SAFETY: live queue and events; outputs writable.
    unsafe {
        // No wait list: waits for every earlier command (the gated one) and holds nothing.
        assert_eq!(
            clEnqueueMarkerWithWaitList(q.get(), 0, null(), &mut marker),
            CL_SUCCESS
        );
        // A wait list of its own: waits for that only.
        assert_eq!(
            clEnqueueMarkerWithWaitList(q.get(), 1, &marker, &mut listed_marker),
            CL_SUCCESS
        );
    }
    let free = launch(&q, &ticks[1], 1, &[]);
    // Polled, not waited for: a queue that ran its commands in order would never get here
    // (the gate opens below), and a hang is no test result.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while status(free) > CL_COMPLETE {
        assert!(
            std::time::Instant::now() < deadline,
            "an independent command waits behind one held by a user event"
        );
        std::thread::yield_now();
    }
    assert_eq!(status(free), CL_COMPLETE);
    for e in [gated, marker, listed_marker] {
        assert!(status(e) > CL_COMPLETE, "still waiting for the user event");
    }
    // A barrier without a wait list holds every later command until the gate opens.
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            clEnqueueBarrierWithWaitList(q.get(), 0, null(), &mut barrier),
            CL_SUCCESS
        );
    }
    let held = launch(&q, &ticks[2], 1, &[]);
    // The in-order read below sees the counters only after these commands complete, so the
    // check of `held` is on its event alone.
    assert!(status(held) > CL_COMPLETE && status(barrier) > CL_COMPLETE);
    // SAFETY: the user event this test created.
    assert_eq!(
        unsafe { clSetUserEventStatus(gate, CL_COMPLETE) },
        CL_SUCCESS
    );
    // SAFETY: a live queue.
    assert_eq!(unsafe { clFinish(q.get()) }, CL_SUCCESS);
    for e in [gated, marker, listed_marker, barrier, held] {
        assert_eq!(status(e), CL_COMPLETE);
    }
    let after = |e| window(e).0;
    let ended = |e| window(e).1;
    assert!(
        ended(gated) <= after(marker),
        "the marker followed the gated kernel"
    );
    assert!(
        ended(barrier) <= after(held),
        "the barrier held the later kernel"
    );
    for counter in &counters {
        assert_eq!(env.read(counter, 1), [1]);
    }
    release(&[gated, marker, listed_marker, free, barrier, held, gate]);
}

#[test]
fn a_failed_user_event_fails_only_its_waiters() {
    let env = Env::new();
    let q = queue(&env, OUT_OF_ORDER);
    let program = env.program_from_source(KERNELS, "");
    let counter = env.buffer(&[0i32]);
    let tick = check(cl(Kernel::create(&program, "tick")), "clCreateKernel");
    arg_buf(&tick, 0, &counter);
    let mut err = 0;
    // SAFETY: a live context.
    let gate = unsafe { clCreateUserEvent(env.context.get(), &mut err) };
    let waiter = launch(&q, &tick, 1, &[gate]);
    let mut barrier = null_mut();
    // SAFETY: live queue; output writable.
    unsafe {
        assert_eq!(
            clEnqueueBarrierWithWaitList(q.get(), 0, null(), &mut barrier),
            CL_SUCCESS
        );
    }
    let after = launch(&q, &tick, 1, &[]);
    // SAFETY: the user event this test created.
    assert_eq!(unsafe { clSetUserEventStatus(gate, -1234) }, CL_SUCCESS);
    // SAFETY: a live queue.
    assert_eq!(unsafe { clFinish(q.get()) }, CL_SUCCESS);
    assert_eq!(status(waiter), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    // Ordered after the failed command by the barrier, not by a wait list: they run.
    assert_eq!(status(barrier), CL_COMPLETE);
    assert_eq!(status(after), CL_COMPLETE);
    assert_eq!(env.read(&counter, 1), [1]);
    release(&[waiter, barrier, after, gate]);
}

/// A queue with the given CL_QUEUE_PROPERTIES_ARRAY-style list (zero-terminated).
fn queue_with(env: &Env, props: &[cl_queue_properties]) -> Result<cl_command_queue, cl_int> {
    // SAFETY: the device belongs to the context; the list is zero-terminated.
    unsafe {
        cl3::command_queue::create_command_queue_with_properties(
            env.context.get(),
            env.device.id(),
            props.as_ptr(),
        )
    }
}

fn release_queue(q: cl_command_queue) {
    // SAFETY: a queue this test created.
    unsafe { cl3::command_queue::release_command_queue(q) }.expect("clReleaseCommandQueue");
}

#[test]
fn priority_and_throttle_hints_are_accepted_and_reported() {
    let env = Env::new();
    let extensions = check(cl(env.device.extensions()), "CL_DEVICE_EXTENSIONS");
    for name in ["cl_khr_priority_hints", "cl_khr_throttle_hints"] {
        assert!(extensions.split(' ').any(|e| e == name), "{name}");
    }
    let props = [
        CL_QUEUE_PRIORITY_KHR,
        CL_QUEUE_PRIORITY_HIGH_KHR as cl_queue_properties,
        CL_QUEUE_THROTTLE_KHR,
        CL_QUEUE_THROTTLE_LOW_KHR as cl_queue_properties,
        0,
    ];
    let q = queue_with(&env, &props).expect("a queue with both hints");
    let array = check(
        cl3::command_queue::get_command_queue_data(q, CL_QUEUE_PROPERTIES_ARRAY),
        "CL_QUEUE_PROPERTIES_ARRAY",
    );
    let reported: Vec<cl_queue_properties> = array
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(reported, props);
    // The hinted queue computes like any other.
    let program = env.program_from_source(KERNELS, "");
    let counter = env.buffer(&[0i32]);
    let tick = check(cl(Kernel::create(&program, "tick")), "clCreateKernel");
    arg_buf(&tick, 0, &counter);
    let (global, local) = ([1000usize], [10usize]);
    let mut event = null_mut();
    // SAFETY: arguments set; arrays outlive the call.
    unsafe {
        assert_eq!(
            clEnqueueNDRangeKernel(
                q,
                tick.get(),
                1,
                null(),
                global.as_ptr(),
                local.as_ptr(),
                0,
                null(),
                &mut event
            ),
            CL_SUCCESS
        );
    }
    wait(&[event]);
    assert_eq!(env.read(&counter, 1), [1000]);
    release(&[event]);
    release_queue(q);
    // Every value of each, with the others.
    for priority in [
        CL_QUEUE_PRIORITY_HIGH_KHR,
        CL_QUEUE_PRIORITY_MED_KHR,
        CL_QUEUE_PRIORITY_LOW_KHR,
    ] {
        let props = [
            CL_QUEUE_PROPERTIES as cl_queue_properties,
            OUT_OF_ORDER,
            CL_QUEUE_PRIORITY_KHR,
            priority as cl_queue_properties,
            0,
        ];
        release_queue(queue_with(&env, &props).expect("priority"));
    }
    for throttle in [
        CL_QUEUE_THROTTLE_HIGH_KHR,
        CL_QUEUE_THROTTLE_MED_KHR,
        CL_QUEUE_THROTTLE_LOW_KHR,
    ] {
        let props = [CL_QUEUE_THROTTLE_KHR, throttle as cl_queue_properties, 0];
        release_queue(queue_with(&env, &props).expect("throttle"));
    }
    let bad: &[(&[cl_queue_properties], cl_int)] = &[
        (&[CL_QUEUE_PRIORITY_KHR, 0, 0], CL_INVALID_VALUE),
        (&[CL_QUEUE_PRIORITY_KHR, 3, 0], CL_INVALID_VALUE),
        (&[CL_QUEUE_PRIORITY_KHR, 1 << 3, 0], CL_INVALID_VALUE),
        (&[CL_QUEUE_PRIORITY_KHR, 1 << 32, 0], CL_INVALID_VALUE),
        (&[CL_QUEUE_THROTTLE_KHR, 6, 0], CL_INVALID_VALUE),
        (
            &[CL_QUEUE_PRIORITY_KHR, 1, CL_QUEUE_PRIORITY_KHR, 1, 0],
            CL_INVALID_VALUE,
        ),
        (
            &[
                CL_QUEUE_PROPERTIES as cl_queue_properties,
                (CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
                    as cl_queue_properties,
                CL_QUEUE_PRIORITY_KHR,
                1,
                0,
            ],
            CL_INVALID_QUEUE_PROPERTIES,
        ),
        (
            &[
                CL_QUEUE_PROPERTIES as cl_queue_properties,
                (CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
                    as cl_queue_properties,
                CL_QUEUE_THROTTLE_KHR,
                4,
                0,
            ],
            CL_INVALID_QUEUE_PROPERTIES,
        ),
    ];
    for (props, want) in bad {
        assert_eq!(queue_with(&env, props).err(), Some(*want), "{props:?}");
    }
}

#[test]
fn a_high_priority_queue_is_served_before_a_low_priority_one() {
    let env = Env::new();
    let program = env.program_from_source(KERNELS, "");
    let hinted = |priority: cl_uint| {
        queue_with(
            &env,
            &[CL_QUEUE_PRIORITY_KHR, priority as cl_queue_properties, 0],
        )
        .expect("queue with a priority")
    };
    let (low_q, high_q) = (
        hinted(CL_QUEUE_PRIORITY_LOW_KHR),
        hinted(CL_QUEUE_PRIORITY_HIGH_KHR),
    );
    // The low-priority kernel's progress is host memory the test reads while it runs.
    let mut low_done_host = vec![0i32; 1];
    // SAFETY: the vector outlives the buffer and is only read through volatile loads while
    // kernels use it.
    let low_done = check(
        cl(unsafe {
            Buffer::<i32>::create(
                &env.context,
                CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_USE_HOST_PTR,
                1,
                low_done_host.as_mut_ptr().cast(),
            )
        }),
        "clCreateBuffer(USE_HOST_PTR)",
    );
    let high_done = env.buffer(&[0i32]);
    let (unused_first, unused_last) = (env.buffer(&[0i32]), env.buffer(&[0i32]));
    // The low kernel's progress when the high kernel's first group starts and when its last
    // group ends.
    let (first, last) = (env.buffer(&[-1i32]), env.buffer(&[-1i32]));
    let sink = env.buffer(&[0f32; 64]);
    const LOW_GROUPS: usize = 4096;
    const HIGH_GROUPS: usize = 2048;
    let watched = |mine: &Buffer<i32>,
                   theirs: &Buffer<i32>,
                   seen_first: &Buffer<i32>,
                   seen_last: &Buffer<i32>| {
        let k = check(cl(Kernel::create(&program, "watched")), "clCreateKernel");
        arg_buf(&k, 0, mine);
        arg_buf(&k, 1, theirs);
        arg_buf(&k, 2, seen_first);
        arg_buf(&k, 3, seen_last);
        arg(&k, 4, &20_000i32);
        arg_buf(&k, 5, &sink);
        k
    };
    let low = watched(&low_done, &high_done, &unused_first, &unused_last);
    let high = watched(&high_done, &low_done, &first, &last);
    let enqueue = |q: cl_command_queue, k: &Kernel, groups: usize| {
        let (global, local) = ([groups], [1usize]);
        let mut event = null_mut();
        // SAFETY: arguments set; arrays outlive the call.
        let e = unsafe {
            clEnqueueNDRangeKernel(
                q,
                k.get(),
                1,
                null(),
                global.as_ptr(),
                local.as_ptr(),
                0,
                null(),
                &mut event,
            )
        };
        assert_eq!(e, CL_SUCCESS);
        event
    };
    let low_event = enqueue(low_q, &low, LOW_GROUPS);
    // SAFETY: an aligned i32 the kernel updates with atomics; a volatile read sees a value.
    while unsafe { std::ptr::read_volatile(low_done_host.as_ptr()) } == 0 {
        std::thread::yield_now();
    }
    let high_event = enqueue(high_q, &high, HIGH_GROUPS);
    wait(&[high_event, low_event]);
    let (first, last) = (env.read(&first, 1)[0], env.read(&last, 1)[0]);
    // While the high-priority kernel ran, the workers took no new low-priority work: the low
    // kernel advanced only by the chunks already running when it arrived (at most one chunk
    // of LOW_GROUPS / (workers * 16) groups per worker).
    let advanced = last - first;
    assert!(
        (advanced as usize) < HIGH_GROUPS / 4,
        "the low-priority kernel ran {advanced} groups while the high-priority one ran {HIGH_GROUPS}"
    );
    assert_eq!(env.read(&high_done, 1), [HIGH_GROUPS as i32]);
    release(&[low_event, high_event]);
    drop(low_done);
    release_queue(low_q);
    release_queue(high_q);
}

#[test]
fn a_low_throttle_holds_a_kernel_to_half_the_workers() {
    let env = Env::new();
    let units = check(
        cl(env.device.max_compute_units()),
        "CL_DEVICE_MAX_COMPUTE_UNITS",
    ) as usize;
    let q = queue_with(
        &env,
        &[
            CL_QUEUE_THROTTLE_KHR,
            CL_QUEUE_THROTTLE_LOW_KHR as cl_queue_properties,
            0,
        ],
    )
    .expect("throttled queue");
    let program = env.program_from_source(KERNELS, "");
    let kernel = check(
        cl(Kernel::create(&program, "short_rendezvous")),
        "clCreateKernel",
    );
    // One group more than half the workers: they can never all run at once, so at least the
    // first to arrive gives up waiting.
    let groups = units.div_ceil(2) + 1;
    let (arrived, missed) = (env.buffer(&[0i32]), env.buffer(&[0i32]));
    arg_buf(&kernel, 0, &arrived);
    arg(&kernel, 1, &(groups as i32));
    arg_buf(&kernel, 2, &missed);
    let (global, local) = ([groups], [1usize]);
    let mut event = null_mut();
    // SAFETY: arguments set; arrays outlive the call.
    unsafe {
        assert_eq!(
            clEnqueueNDRangeKernel(
                q,
                kernel.get(),
                1,
                null(),
                global.as_ptr(),
                local.as_ptr(),
                0,
                null(),
                &mut event
            ),
            CL_SUCCESS
        );
    }
    wait(&[event]);
    assert_eq!(env.read(&arrived, 1), [groups as i32]);
    assert!(
        env.read(&missed, 1)[0] >= 1,
        "all {groups} groups ran at once"
    );
    release(&[event]);
    release_queue(q);
}
