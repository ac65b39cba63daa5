//! The two extensions that are context properties, through the loader:
//! - `cl_khr_initialize_memory`: in a context made with `CL_CONTEXT_MEMORY_INITIALIZE_KHR`,
//!   kernels that read local memory (static `__local` arrays and `__local` arguments) or
//!   private arrays (small and large, with and without barriers) before writing them read
//!   zeros, right after kernels of a plain context left other values in the same memory (which
//!   the plain context's second run shows are there to be seen); bad property values refused.
//! - `cl_khr_terminate_context`: the capability query; a kernel that would never end, a command
//!   queued behind it and one waiting for a user event all end with `CL_CONTEXT_TERMINATED_KHR`
//!   at once (callbacks told, waits returning, no profiling times), the kernel stops running
//!   (its counter in host memory stops moving); afterwards creating objects and enqueueing
//!   are refused with that code while queries, user event status and releases work; a second
//!   termination, a context made without the property and bad handles give the spec's codes.

mod common;

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use common::*;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clCreateContext(
        properties: *const cl_context_properties,
        num_devices: cl_uint,
        devices: *const cl_device_id,
        notify: Option<
            unsafe extern "C" fn(*const std::ffi::c_char, *const c_void, usize, *mut c_void),
        >,
        user_data: *mut c_void,
        err: *mut cl_int,
    ) -> cl_context;
    fn clGetContextInfo(
        c: cl_context,
        name: cl_uint,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clReleaseContext(c: cl_context) -> cl_int;
    fn clGetDeviceInfo(
        d: cl_device_id,
        name: cl_uint,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clCreateCommandQueue(
        c: cl_context,
        d: cl_device_id,
        p: cl_bitfield,
        err: *mut cl_int,
    ) -> cl_command_queue;
    fn clReleaseCommandQueue(q: cl_command_queue) -> cl_int;
    fn clFinish(q: cl_command_queue) -> cl_int;
    fn clCreateBuffer(
        c: cl_context,
        f: cl_mem_flags,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateKernel(p: cl_program, name: *const std::ffi::c_char, err: *mut cl_int) -> cl_kernel;
    fn clCreateProgramWithSource(
        c: cl_context,
        count: cl_uint,
        strings: *const *const std::ffi::c_char,
        lengths: *const usize,
        err: *mut cl_int,
    ) -> cl_program;
    fn clSVMAlloc(c: cl_context, f: cl_bitfield, size: usize, align: cl_uint) -> *mut c_void;
    fn clEnqueueNDRangeKernel(
        q: cl_command_queue,
        k: cl_kernel,
        dim: cl_uint,
        offset: *const usize,
        global: *const usize,
        local: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueReadBuffer(
        q: cl_command_queue,
        b: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        ptr: *mut c_void,
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
    fn clCreateUserEvent(c: cl_context, err: *mut cl_int) -> cl_event;
    fn clSetUserEventStatus(e: cl_event, status: cl_int) -> cl_int;
    fn clSetEventCallback(
        e: cl_event,
        on: cl_int,
        f: Option<extern "C" fn(cl_event, cl_int, *mut c_void)>,
        user_data: *mut c_void,
    ) -> cl_int;
    fn clGetEventInfo(
        e: cl_event,
        name: cl_uint,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetEventProfilingInfo(
        e: cl_event,
        name: cl_uint,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clWaitForEvents(n: cl_uint, events: *const cl_event) -> cl_int;
    fn clReleaseEvent(e: cl_event) -> cl_int;
}

const INITIALIZE: cl_context_properties = CL_CONTEXT_MEMORY_INITIALIZE_KHR as _;
const LOCAL_AND_PRIVATE: cl_context_properties =
    (CL_CONTEXT_MEMORY_INITIALIZE_LOCAL_KHR | CL_CONTEXT_MEMORY_INITIALIZE_PRIVATE_KHR) as _;
const TERMINATE: cl_context_properties = CL_CONTEXT_TERMINATE_KHR as _;

/// Kernels that read memory before writing it unless `dirty` is non-zero, in which case they
/// fill it with `dirty` first. The reads go through indices from memory, so the compiler
/// cannot fold them.
const READS_BEFORE_WRITES: &str = r#"
kernel void local_reads(global const int *idx, global int *out, local int *arg, int dirty) {
    local int tile[64];
    size_t l = get_local_id(0);
    if (dirty) {
        tile[l] = dirty;
        arg[l] = dirty;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t g = get_global_id(0);
    out[2 * g] = tile[idx[g] & 63];
    out[2 * g + 1] = arg[idx[g] & 63];
}

kernel void private_reads(global const int *idx, global int *out, int dirty) {
    int small[4];
    int big[200];
    if (dirty) {
        for (int i = 0; i < 4; i++) small[i] = dirty;
        for (int i = 0; i < 200; i++) big[i] = dirty;
    }
    size_t g = get_global_id(0);
    out[2 * g] = small[idx[g] & 3];
    out[2 * g + 1] = big[idx[g] % 200];
}

kernel void private_reads_with_barrier(global const int *idx, global int *out, int dirty) {
    int small[4];
    int big[200];
    if (dirty) {
        for (int i = 0; i < 4; i++) small[i] = dirty;
        for (int i = 0; i < 200; i++) big[i] = dirty;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t g = get_global_id(0);
    out[2 * g] = small[idx[g] & 3];
    out[2 * g + 1] = big[idx[g] % 200];
}
"#;

const ITEMS: usize = 1024;
const GROUP: usize = 64;
const DIRT: i32 = 0x5a5a_5a5a;

/// Runs kernel `name` of READS_BEFORE_WRITES in `env` once with `dirty` (filling the memory)
/// and once without; what the second run read.
fn dirty_then_read(env: &Env, name: &str) -> Vec<i32> {
    let program = env.program_from_source(READS_BEFORE_WRITES, "-cl-std=CL3.0");
    let kernel = check(cl(Kernel::create(&program, name)), "clCreateKernel");
    let idx: Vec<i32> = (0..ITEMS as i32).map(|i| i.wrapping_mul(7919)).collect();
    let idx = env.buffer(&idx);
    let out = env.buffer_filled(2 * ITEMS, -1i32);
    arg_buf(&kernel, 0, &idx);
    arg_buf(&kernel, 1, &out);
    let dirty_index = if name == "local_reads" {
        arg_local(&kernel, 2, GROUP * 4);
        3
    } else {
        2
    };
    for dirty in [DIRT, 0] {
        arg(&kernel, dirty_index, &dirty);
        env.run(&kernel, &[ITEMS], Some(&[GROUP]), None);
    }
    env.read(&out, 2 * ITEMS)
}

#[test]
fn initialized_memory_reads_zero_where_a_plain_context_reads_leftovers() {
    let plain = Env::new();
    if !plain.extension_or_skip("cl_khr_initialize_memory") {
        return;
    }
    let zeroing = Env::with_context_properties(&[INITIALIZE, LOCAL_AND_PRIVATE]);
    let mut failures = Vec::new();
    for name in ["local_reads", "private_reads", "private_reads_with_barrier"] {
        // The plain context shows the memory holds what the dirty run left (in some lanes:
        // the groups of the second run need not land on the threads of the first, so the
        // pair is run a few times).
        let leftovers_seen = (0..8).any(|_| dirty_then_read(&plain, name).contains(&DIRT));
        assert!(
            leftovers_seen,
            "{name}: the plain context never read what the dirty run left, so this test \
             would prove nothing"
        );
        // Now with the plain context's dirt in the same memory.
        for round in 0..3 {
            let _ = dirty_then_read(&plain, name);
            let got = dirty_then_read(&zeroing, name);
            if let Some(i) = got.iter().position(|&v| v != 0) {
                failures.push(format!(
                    "{name} round {round}: output {i} read {:#x}",
                    got[i]
                ));
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "in a context that zeroes local and private memory:\n{}",
        failures.join("\n")
    );
}

#[test]
fn only_local_memory_is_zeroed_when_only_local_is_asked() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_initialize_memory") {
        return;
    }
    let local_only = Env::with_context_properties(&[
        INITIALIZE,
        CL_CONTEXT_MEMORY_INITIALIZE_LOCAL_KHR as cl_context_properties,
    ]);
    for _ in 0..3 {
        let _ = dirty_then_read(&env, "local_reads");
        let got = dirty_then_read(&local_only, "local_reads");
        assert!(got.iter().all(|&v| v == 0), "local memory not zeroed");
    }
    // Private memory keeps what was there: the bit is not set.
    let private_leftovers =
        (0..8).any(|_| dirty_then_read(&local_only, "private_reads").contains(&DIRT));
    assert!(
        private_leftovers,
        "private memory zeroed without being asked"
    );
}

#[test]
fn bad_context_property_values_are_refused() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_initialize_memory")
        || !env.extension_or_skip("cl_khr_terminate_context")
    {
        return;
    }
    let device = env.device.id();
    let lists: [&[cl_context_properties]; 4] = [
        &[INITIALIZE, 1 << 2, 0],
        &[TERMINATE, 2, 0],
        &[TERMINATE, -1, 0],
        // The same property under the key of OpenCL 1.2's headers: a duplicate.
        &[TERMINATE, CL_TRUE as _, 0x2010, CL_TRUE as _, 0],
    ];
    for props in lists {
        let mut err = 0;
        // SAFETY: a zero-terminated property list and one device.
        let c =
            unsafe { clCreateContext(props.as_ptr(), 1, &device, None, ptr::null_mut(), &mut err) };
        assert!(c.is_null(), "{props:?}");
        assert_eq!(err, CL_INVALID_PROPERTY, "{props:?}");
    }
    // Both properties together, and CL_CONTEXT_PROPERTIES gives them back.
    let props = [INITIALIZE, LOCAL_AND_PRIVATE, TERMINATE, CL_TRUE as _, 0];
    let mut err = 0;
    // SAFETY: as above.
    let c = unsafe { clCreateContext(props.as_ptr(), 1, &device, None, ptr::null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let mut back = [0 as cl_context_properties; 5];
    // SAFETY: a buffer of the list's size.
    let r = unsafe {
        clGetContextInfo(
            c,
            CL_CONTEXT_PROPERTIES,
            std::mem::size_of_val(&back),
            back.as_mut_ptr().cast(),
            ptr::null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS);
    assert_eq!(back, props);
    // SAFETY: the context made above.
    assert_eq!(unsafe { clReleaseContext(c) }, CL_SUCCESS);
}

// ---- cl_khr_terminate_context ----

type TerminateFn = unsafe extern "C" fn(cl_context) -> cl_int;

fn terminate_fn() -> TerminateFn {
    // SAFETY: the extension's entry point, with the signature of its header.
    unsafe { extension_entry::<TerminateFn>("clTerminateContextKHR") }
}

/// Counts until told to stop, in host memory (`CL_MEM_USE_HOST_PTR`) the test watches.
const SPIN: &str = r#"
kernel void spin(volatile global int *counter, volatile global int *stop) {
    if (get_global_id(0) == 0) {
        while (*stop == 0) {
            *counter += 1;
        }
    }
}
"#;

static CALLBACK_STATUS: AtomicI32 = AtomicI32::new(1);

extern "C" fn record_status(_: cl_event, status: cl_int, _: *mut c_void) {
    CALLBACK_STATUS.store(status, Ordering::SeqCst);
}

fn event_status(e: cl_event) -> cl_int {
    let mut status: cl_int = 1;
    // SAFETY: a live event; a cl_int result.
    let r = unsafe {
        clGetEventInfo(
            e,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            std::mem::size_of::<cl_int>(),
            (&mut status as *mut cl_int).cast(),
            ptr::null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS);
    status
}

#[test]
fn termination_ends_running_and_queued_commands_and_refuses_new_ones() {
    let probe = Env::new();
    if !probe.extension_or_skip("cl_khr_terminate_context") {
        return;
    }
    let mut capability: cl_bitfield = 0;
    // SAFETY: a bitfield result.
    let r = unsafe {
        clGetDeviceInfo(
            probe.device.id(),
            CL_DEVICE_TERMINATE_CAPABILITY_KHR,
            std::mem::size_of::<cl_bitfield>(),
            (&mut capability as *mut cl_bitfield).cast(),
            ptr::null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS);
    assert_eq!(
        capability & 1,
        1,
        "CL_DEVICE_TERMINATE_CAPABILITY_CONTEXT_KHR"
    );
    let terminate = terminate_fn();
    let env = Env::with_context_properties(&[TERMINATE, CL_TRUE as _]);
    let ctx = env.context.get();

    let program = env.program_from_source(SPIN, "");
    let kernel = check(cl(Kernel::create(&program, "spin")), "clCreateKernel");
    let mut host = vec![0i32; 2];
    // SAFETY: the host memory outlives the buffers (dropped before `host`).
    let counter = unsafe {
        Buffer::<i32>::create(
            &env.context,
            CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
            1,
            host.as_mut_ptr().cast(),
        )
    };
    let counter = check(cl(counter), "clCreateBuffer");
    // SAFETY: as above.
    let stop = unsafe {
        Buffer::<i32>::create(
            &env.context,
            CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
            1,
            host.as_mut_ptr().add(1).cast(),
        )
    };
    let stop = check(cl(stop), "clCreateBuffer");
    arg_buf(&kernel, 0, &counter);
    arg_buf(&kernel, 1, &stop);

    let queue = env.queue.get();
    let mut spin_event = ptr::null_mut();
    let global = 64usize;
    // SAFETY: valid queue and kernel; one dimension.
    let r = unsafe {
        clEnqueueNDRangeKernel(
            queue,
            kernel.get(),
            1,
            ptr::null(),
            &global,
            ptr::null(),
            0,
            ptr::null(),
            &mut spin_event,
        )
    };
    assert_eq!(r, CL_SUCCESS);
    // Behind it in the same queue.
    let mut readback = 0i32;
    let mut behind = ptr::null_mut();
    // SAFETY: a non-blocking read into `readback`, which outlives the command.
    let r = unsafe {
        clEnqueueReadBuffer(
            queue,
            counter.get(),
            CL_FALSE,
            0,
            4,
            (&mut readback as *mut i32).cast(),
            0,
            ptr::null(),
            &mut behind,
        )
    };
    assert_eq!(r, CL_SUCCESS);
    // SAFETY: a live event; the callback is a plain function.
    assert_eq!(
        unsafe { clSetEventCallback(behind, CL_COMPLETE, Some(record_status), ptr::null_mut()) },
        CL_SUCCESS
    );
    // A second queue's command waiting for a user event nobody sets yet.
    let mut err = 0;
    // SAFETY: valid context and device.
    let queue2 = unsafe { clCreateCommandQueue(ctx, env.device.id(), 0, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    // SAFETY: valid context.
    let user = unsafe { clCreateUserEvent(ctx, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let mut gated = ptr::null_mut();
    // SAFETY: valid queue and wait list.
    assert_eq!(
        unsafe { clEnqueueMarkerWithWaitList(queue2, 1, &user, &mut gated) },
        CL_SUCCESS
    );

    // The kernel is running: its counter moves.
    let moving = |host: &Vec<i32>| {
        // SAFETY: the kernel writes this memory concurrently; a volatile read of an aligned
        // i32 sees one of its values.
        let read = || unsafe { ptr::read_volatile(host.as_ptr()) };
        let before = read();
        std::thread::sleep(Duration::from_millis(50));
        read() != before
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !moving(&host) {
        assert!(
            Instant::now() < deadline,
            "the spinning kernel never started"
        );
    }

    let started = Instant::now();
    // SAFETY: a live context made with CL_CONTEXT_TERMINATE_KHR.
    assert_eq!(unsafe { terminate(ctx) }, CL_SUCCESS);
    for (what, e) in [
        ("kernel", spin_event),
        ("read behind it", behind),
        ("gated marker", gated),
    ] {
        assert_eq!(
            event_status(e),
            CL_CONTEXT_TERMINATED_KHR,
            "{what}'s status right after the termination"
        );
    }
    // SAFETY: live events.
    let waited = unsafe { clWaitForEvents(3, [spin_event, behind, gated].as_ptr()) };
    assert_eq!(waited, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    // SAFETY: a live queue.
    assert_eq!(unsafe { clFinish(queue) }, CL_SUCCESS);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        CALLBACK_STATUS.load(Ordering::SeqCst),
        CL_CONTEXT_TERMINATED_KHR
    );
    let mut t: cl_ulong = 0;
    // SAFETY: a live event; a cl_ulong result.
    let r = unsafe {
        clGetEventProfilingInfo(
            spin_event,
            CL_PROFILING_COMMAND_END,
            8,
            (&mut t as *mut cl_ulong).cast(),
            ptr::null_mut(),
        )
    };
    assert_eq!(r, CL_PROFILING_INFO_NOT_AVAILABLE);
    // The kernel left its loop (built with stop checks in a terminable context).
    let deadline = Instant::now() + Duration::from_secs(10);
    while moving(&host) {
        assert!(
            Instant::now() < deadline,
            "the kernel still runs 10 s after the termination"
        );
    }

    // Creating and enqueueing are refused; queries, user events and releases still work.
    // SAFETY: valid handles throughout; the results are checked.
    unsafe {
        let b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16, ptr::null_mut(), &mut err);
        assert!(b.is_null());
        assert_eq!(err, CL_CONTEXT_TERMINATED_KHR, "clCreateBuffer");
        let q = clCreateCommandQueue(ctx, env.device.id(), 0, &mut err);
        assert!(q.is_null());
        assert_eq!(err, CL_CONTEXT_TERMINATED_KHR, "clCreateCommandQueue");
        let k = clCreateKernel(program.get(), c"spin".as_ptr(), &mut err);
        assert!(k.is_null());
        assert_eq!(err, CL_CONTEXT_TERMINATED_KHR, "clCreateKernel");
        let u = clCreateUserEvent(ctx, &mut err);
        assert!(u.is_null());
        assert_eq!(err, CL_CONTEXT_TERMINATED_KHR, "clCreateUserEvent");
        let src = c"kernel void k() {}".as_ptr();
        let p = clCreateProgramWithSource(ctx, 1, &src, ptr::null(), &mut err);
        assert!(p.is_null());
        assert_eq!(err, CL_CONTEXT_TERMINATED_KHR, "clCreateProgramWithSource");
        assert!(clSVMAlloc(ctx, CL_MEM_READ_WRITE, 64, 0).is_null());
        let r = clEnqueueNDRangeKernel(
            queue,
            kernel.get(),
            1,
            ptr::null(),
            &global,
            ptr::null(),
            0,
            ptr::null(),
            ptr::null_mut(),
        );
        assert_eq!(r, CL_CONTEXT_TERMINATED_KHR, "clEnqueueNDRangeKernel");
        let r = clEnqueueMarkerWithWaitList(queue2, 0, ptr::null(), ptr::null_mut());
        assert_eq!(r, CL_CONTEXT_TERMINATED_KHR, "clEnqueueMarkerWithWaitList");
        let mut devices: cl_uint = 0;
        let r = clGetContextInfo(
            ctx,
            CL_CONTEXT_NUM_DEVICES,
            4,
            (&mut devices as *mut cl_uint).cast(),
            ptr::null_mut(),
        );
        assert_eq!((r, devices), (CL_SUCCESS, 1));
        assert_eq!(clSetUserEventStatus(user, CL_COMPLETE), CL_SUCCESS);
        assert_eq!(
            terminate(ctx),
            CL_CONTEXT_TERMINATED_KHR,
            "a second termination"
        );
        for e in [spin_event, behind, gated, user] {
            assert_eq!(clReleaseEvent(e), CL_SUCCESS);
        }
        assert_eq!(clReleaseCommandQueue(queue2), CL_SUCCESS);
    }
    drop((kernel, program, counter, stop, env));
    drop(host);
}

#[test]
fn termination_needs_the_property_and_a_context() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_terminate_context") {
        return;
    }
    let terminate = terminate_fn();
    // SAFETY: a live context made without CL_CONTEXT_TERMINATE_KHR, then bad handles.
    unsafe {
        assert_eq!(terminate(env.context.get()), CL_INVALID_OPERATION);
        assert_eq!(terminate(ptr::null_mut()), CL_INVALID_CONTEXT);
        assert_eq!(terminate(env.queue.get() as cl_context), CL_INVALID_CONTEXT);
    }
    // A context made with the property set to false cannot be terminated either, and one
    // never terminated runs its commands as any other.
    let not_terminable = Env::with_context_properties(&[TERMINATE, CL_FALSE as _]);
    // SAFETY: a live context.
    assert_eq!(
        unsafe { terminate(not_terminable.context.get()) },
        CL_INVALID_OPERATION
    );
    let terminable = Env::with_context_properties(&[TERMINATE, CL_TRUE as _]);
    let program = terminable.program_from_source(
        "kernel void twice(global int *a) { a[get_global_id(0)] *= 2; }",
        "",
    );
    let kernel = check(cl(Kernel::create(&program, "twice")), "clCreateKernel");
    let data: Vec<i32> = (0..256).collect();
    let buf = terminable.buffer(&data);
    arg_buf(&kernel, 0, &buf);
    terminable.run(&kernel, &[256], None, None);
    let got = terminable.read(&buf, 256);
    assert!(got.iter().zip(&data).all(|(g, d)| *g == 2 * d));
}
