//! Queues running commands at the same time, through the loader: two kernels of one
//! out-of-order queue overlap (they meet while both run; their profiling windows overlap); a
//! small kernel is not stuck behind a large one; two in-order queues share the workers; markers,
//! barriers (with and without wait lists) and user events order out-of-order commands as the
//! spec says. No wall-clock thresholds: kernels prove they ran together by meeting, and order is
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
    wait(&[free]);
    assert_eq!(env.read(&counters[1], 1), [1], "an independent command ran");
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
    assert_eq!(env.read(&counters[0], 1), [1]);
    assert_eq!(env.read(&counters[2], 1), [1]);
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
