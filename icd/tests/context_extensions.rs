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
    let create = |props: &[cl_context_properties]| {
        cl3::context::create_context(&[device], props.as_ptr(), None, ptr::null_mut())
    };
    let lists: [&[cl_context_properties]; 4] = [
        &[INITIALIZE, 1 << 2, 0],
        &[TERMINATE, 2, 0],
        &[TERMINATE, -1, 0],
        // The same property under the key of OpenCL 1.2's headers: a duplicate.
        &[TERMINATE, CL_TRUE as _, 0x2010, CL_TRUE as _, 0],
    ];
    for props in lists {
        assert_eq!(create(props).err(), Some(CL_INVALID_PROPERTY), "{props:?}");
    }
    // Both properties together, and CL_CONTEXT_PROPERTIES gives them back.
    let props = [INITIALIZE, LOCAL_AND_PRIVATE, TERMINATE, CL_TRUE as _, 0];
    let c = create(&props).expect("both properties");
    let back = cl3::context::get_context_data(c, CL_CONTEXT_PROPERTIES).unwrap();
    assert_eq!(words::<cl_context_properties>(&back), props);
    // SAFETY: the context made above, released once.
    unsafe { cl3::context::release_context(c) }.unwrap();
}

/// The values of a query answer of `T`s.
fn words<T: Copy>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(std::mem::size_of::<T>())
        // SAFETY: whole values of a plain integer or handle type.
        .map(|c| unsafe { ptr::read_unaligned(c.as_ptr().cast::<T>()) })
        .collect()
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
    words::<cl_int>(&cl3::event::get_event_data(e, CL_EVENT_COMMAND_EXECUTION_STATUS).unwrap())[0]
}

#[test]
fn termination_ends_running_and_queued_commands_and_refuses_new_ones() {
    let probe = Env::new();
    if !probe.extension_or_skip("cl_khr_terminate_context") {
        return;
    }
    let capability =
        cl3::device::get_device_data(probe.device.id(), CL_DEVICE_TERMINATE_CAPABILITY_KHR)
            .expect("CL_DEVICE_TERMINATE_CAPABILITY_KHR");
    assert_eq!(
        words::<cl_bitfield>(&capability),
        vec![1],
        "CL_DEVICE_TERMINATE_CAPABILITY_CONTEXT_KHR"
    );
    let terminate = terminate_fn();
    let env = Env::with_context_properties(&[TERMINATE, CL_TRUE as _]);
    let ctx = env.context.get();

    let program = env.program_from_source(SPIN, "");
    let kernel = check(cl(Kernel::create(&program, "spin")), "clCreateKernel");
    let mut host = vec![0i32; 2];
    let base = host.as_mut_ptr();
    let host_buffer = |at: usize| {
        // SAFETY: the host memory outlives the buffers (dropped before `host`).
        let b = unsafe {
            Buffer::<i32>::create(
                &env.context,
                CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                1,
                base.add(at).cast(),
            )
        };
        check(cl(b), "clCreateBuffer")
    };
    let (counter, stop) = (host_buffer(0), host_buffer(1));
    arg_buf(&kernel, 0, &counter);
    arg_buf(&kernel, 1, &stop);

    let queue = env.queue.get();
    let global = 64usize;
    let enqueue_spin = || {
        // SAFETY: valid queue and kernel; one dimension.
        unsafe {
            cl3::command_queue::enqueue_nd_range_kernel(
                queue,
                kernel.get(),
                1,
                ptr::null(),
                &global,
                ptr::null(),
                0,
                ptr::null(),
            )
        }
    };
    let spin_event = enqueue_spin().expect("clEnqueueNDRangeKernel");
    // Behind it in the same queue.
    let mut readback = 0i32;
    // SAFETY: a non-blocking read into `readback`, which outlives the command.
    let behind = unsafe {
        cl3::command_queue::enqueue_read_buffer(
            queue,
            counter.get(),
            CL_FALSE,
            0,
            4,
            (&mut readback as *mut i32).cast(),
            0,
            ptr::null(),
        )
    }
    .expect("clEnqueueReadBuffer");
    cl3::event::set_event_callback(behind, CL_COMPLETE, record_status, ptr::null_mut())
        .expect("clSetEventCallback");
    // A second queue's command waiting for a user event nobody sets yet.
    // SAFETY: valid context and device.
    let queue2 = unsafe { cl3::command_queue::create_command_queue(ctx, env.device.id(), 0) }
        .expect("clCreateCommandQueue");
    let user = cl3::event::create_user_event(ctx).expect("clCreateUserEvent");
    // SAFETY: valid queue; a wait list of one.
    let gated = unsafe { cl3::command_queue::enqueue_marker_with_wait_list(queue2, 1, &user) }
        .expect("clEnqueueMarkerWithWaitList");

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
    assert_eq!(
        cl3::event::wait_for_events(&[spin_event, behind, gated]).err(),
        Some(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    );
    cl3::command_queue::finish(queue).expect("clFinish");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        CALLBACK_STATUS.load(Ordering::SeqCst),
        CL_CONTEXT_TERMINATED_KHR
    );
    assert_eq!(
        cl3::event::get_event_profiling_data(spin_event, CL_PROFILING_COMMAND_END).err(),
        Some(CL_PROFILING_INFO_NOT_AVAILABLE)
    );
    // The kernel left its loop (built with stop checks in a terminable context).
    let deadline = Instant::now() + Duration::from_secs(10);
    while moving(&host) {
        assert!(
            Instant::now() < deadline,
            "the kernel still runs 10 s after the termination"
        );
    }

    // Creating and enqueueing are refused; queries, user events and releases still work.
    let refused = Some(CL_CONTEXT_TERMINATED_KHR);
    // SAFETY: valid handles throughout; nothing is created.
    unsafe {
        let no_host = ptr::null_mut();
        assert_eq!(
            cl3::memory::create_buffer(ctx, CL_MEM_READ_WRITE, 16, no_host).err(),
            refused
        );
        assert_eq!(
            cl3::command_queue::create_command_queue(ctx, env.device.id(), 0).err(),
            refused
        );
        // clSVMAlloc has no error code: NULL.
        assert!(cl3::memory::svm_alloc(ctx, CL_MEM_READ_WRITE, 64, 0).is_err());
        assert_eq!(enqueue_spin().err(), refused, "clEnqueueNDRangeKernel");
        assert_eq!(
            cl3::command_queue::enqueue_marker_with_wait_list(queue2, 0, ptr::null()).err(),
            refused
        );
    }
    assert_eq!(
        cl3::kernel::create_kernel(program.get(), c"spin").err(),
        refused
    );
    assert_eq!(cl3::event::create_user_event(ctx).err(), refused);
    assert_eq!(
        cl3::program::create_program_with_source(ctx, &["kernel void k() {}"]).err(),
        refused
    );
    let devices = cl3::context::get_context_data(ctx, CL_CONTEXT_NUM_DEVICES).unwrap();
    assert_eq!(words::<cl_uint>(&devices), vec![1]);
    cl3::event::set_user_event_status(user, CL_COMPLETE).expect("clSetUserEventStatus");
    // SAFETY: the context is live.
    assert_eq!(
        unsafe { terminate(ctx) },
        CL_CONTEXT_TERMINATED_KHR,
        "a second termination"
    );
    // SAFETY: events and a queue this test made, released once.
    unsafe {
        for e in [spin_event, behind, gated, user] {
            cl3::event::release_event(e).expect("clReleaseEvent");
        }
        cl3::command_queue::release_command_queue(queue2).expect("clReleaseCommandQueue");
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
