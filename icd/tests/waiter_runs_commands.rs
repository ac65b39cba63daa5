//! A thread that waits for commands (clFinish, clWaitForEvents, a blocking read) runs the ready
//! ones itself instead of waiting for the queue's thread (runtime/src/queue.rs, `Queue::help`).
//! Through the loader, these tests check that every ordering rule still holds when it does:
//! in-order launches and reads, out-of-order wait lists, user events, profiling timestamps,
//! printf output, callbacks (which stay off the waiting thread) — and that results are right
//! when the waiting thread has a small stack and a fast-math floating-point environment. No
//! timing asserts: the speed is the benchmark's `launch_sync` row.

mod common;

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use opencl3::command_queue::CommandQueue;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clCreateUserEvent(c: cl_context, err: *mut cl_int) -> cl_event;
    fn clSetUserEventStatus(e: cl_event, status: cl_int) -> cl_int;
    fn clSetEventCallback(
        e: cl_event,
        on: cl_int,
        f: extern "C" fn(cl_event, cl_int, *mut c_void),
        user_data: *mut c_void,
    ) -> cl_int;
}

const SOURCE: &str = r#"
// One step of a sequence whose result depends on the order of the steps.
__kernel void step(__global uint *buf, uint k) {
    size_t i = get_global_id(0);
    buf[i] = buf[i] * 3u + k + (uint)i;
}

__kernel void product(__global float *out, float a, float b) {
    out[get_global_id(0)] = a * b;
}

// A private array of n (<= 262144) words: 1 MiB per work-item.
__kernel void deep(__global uint *out, uint n) {
    uint priv[262144];
    uint g = (uint)get_global_id(0);
    for (uint i = 0; i < n; i++)
        priv[i] = i * 7u + g;
    uint s = 0;
    for (uint i = 0; i < n; i++)
        s += priv[(i * 31u) % n];
    out[g] = s;
}
"#;

/// What `step(k)` makes of `v` at index `i`.
fn step_ref(v: u32, k: u32, i: usize) -> u32 {
    v.wrapping_mul(3).wrapping_add(k).wrapping_add(i as u32)
}

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

fn kernel(env: &Env, name: &str) -> Kernel {
    let program = env.program_from_source(SOURCE, "");
    check(cl(Kernel::create(&program, name)), "clCreateKernel")
}

/// Enqueues `step(k)` over `n` work-items (groups of `local`, or the driver's choice) after
/// `wait`.
fn step(
    q: &CommandQueue,
    kernel: &Kernel,
    buf: &Buffer<u32>,
    k: u32,
    n: usize,
    local: Option<usize>,
    wait: &[cl_event],
) -> Event {
    arg_buf(kernel, 0, buf);
    arg(kernel, 1, &k);
    let local = local.map(|l| [l]);
    // SAFETY: the sizes arrays outlive the call; the arguments are set.
    let r = unsafe {
        q.enqueue_nd_range_kernel(
            kernel.get(),
            1,
            null(),
            [n].as_ptr(),
            local.as_ref().map_or(null(), |l| l.as_ptr()),
            wait,
        )
    };
    check(cl(r), "clEnqueueNDRangeKernel")
}

fn read(q: &CommandQueue, buf: &Buffer<u32>, n: usize, wait: &[cl_event]) -> Vec<u32> {
    let mut out = vec![0u32; n];
    // SAFETY: a blocking read into a host slice of `n` elements.
    let r = unsafe { q.enqueue_read_buffer(buf, CL_BLOCKING, 0, &mut out, wait) };
    check(cl(r), "clEnqueueReadBuffer");
    out
}

fn status(e: &Event) -> cl_int {
    check(cl(e.command_execution_status()), "clGetEventInfo").0
}

struct UserEvent(cl_event);

impl UserEvent {
    fn new(env: &Env) -> UserEvent {
        let mut err = 0;
        // SAFETY: a live context; `err` is writable.
        let e = unsafe { clCreateUserEvent(env.context.get(), &mut err) };
        assert_eq!(err, CL_SUCCESS, "clCreateUserEvent");
        UserEvent(e)
    }

    fn complete(&self) {
        // SAFETY: a live user event, set once.
        assert_eq!(
            unsafe { clSetUserEventStatus(self.0, CL_COMPLETE) },
            CL_SUCCESS
        );
    }
}

impl Drop for UserEvent {
    fn drop(&mut self) {
        // Released through opencl3's Event.
        drop(Event::new(self.0));
    }
}

// SAFETY: OpenCL event handles may be used from any thread.
unsafe impl Send for UserEvent {}
// SAFETY: as above.
unsafe impl Sync for UserEvent {}

/// Launches of several sizes (one group, a few groups, more work-items than a waiting thread
/// runs itself) and a read, waited for with clFinish, clWaitForEvents and the blocking read:
/// each result is the steps applied in submission order.
#[test]
fn in_order_launches_and_reads_keep_their_order() {
    let env = Env::new();
    let q = queue(&env, 0);
    let k = kernel(&env, "step");
    const N: usize = 4096;
    let buf = env.buffer(&vec![1u32; N]);
    let mut want = vec![1u32; N];
    let shapes: [(usize, Option<usize>); 5] = [
        (64, None),
        (64, Some(16)),
        (1, None),
        (1024, Some(64)),
        (N, Some(64)),
    ];
    for round in 0..30u32 {
        let mut last = None;
        for (j, &(n, local)) in shapes.iter().enumerate() {
            let kk = round * 10 + j as u32;
            last = Some(step(&q, &k, &buf, kk, n, local, &[]));
            for (i, w) in want.iter_mut().enumerate().take(n) {
                *w = step_ref(*w, kk, i);
            }
            match round % 3 {
                0 => check(cl(q.finish()), "clFinish"),
                1 if j % 2 == 0 => check(cl(last.as_ref().unwrap().wait()), "clWaitForEvents"),
                _ => {}
            }
        }
        // The blocking read waits for every launch before it.
        assert_eq!(read(&q, &buf, N, &[]), want, "round {round}");
        assert_eq!(status(last.as_ref().unwrap()), CL_COMPLETE);
    }
}

/// An out-of-order queue: a chain through wait lists runs in its order whoever runs it, and
/// an independent launch on another buffer is unaffected.
#[test]
fn out_of_order_wait_lists_order_launches() {
    let env = Env::new();
    let q = queue(&env, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    let (k1, k2) = (kernel(&env, "step"), kernel(&env, "step"));
    const N: usize = 256;
    let (a, b) = (env.buffer(&vec![2u32; N]), env.buffer(&vec![5u32; N]));
    let (mut want_a, mut want_b) = (vec![2u32; N], vec![5u32; N]);
    for round in 0..20u32 {
        let mut chain: Vec<Event> = Vec::new();
        for s in 0..6u32 {
            let kk = round * 100 + s;
            let wait: Vec<cl_event> = chain.last().map(Event::get).into_iter().collect();
            chain.push(step(&q, &k1, &a, kk, N, Some(16), &wait));
            want_a
                .iter_mut()
                .enumerate()
                .for_each(|(i, w)| *w = step_ref(*w, kk, i));
        }
        let free = step(&q, &k2, &b, round, N, None, &[]);
        want_b
            .iter_mut()
            .enumerate()
            .for_each(|(i, w)| *w = step_ref(*w, round, i));
        match round % 3 {
            // Waiting for the end of the chain runs (or waits for) every link before it.
            0 => check(cl(chain.last().unwrap().wait()), "clWaitForEvents"),
            // Waiting for its middle first.
            1 => {
                check(cl(chain[2].wait()), "clWaitForEvents");
                check(cl(q.finish()), "clFinish");
            }
            _ => check(cl(q.finish()), "clFinish"),
        }
        check(cl(free.wait()), "clWaitForEvents");
        for e in chain.iter().chain([&free]) {
            assert_eq!(status(e), CL_COMPLETE);
        }
        let in_order = queue(&env, 0);
        assert_eq!(read(&in_order, &a, N, &[]), want_a, "round {round}");
        assert_eq!(read(&in_order, &b, N, &[]), want_b, "round {round}");
    }
}

/// A launch gated by a user event does not run while the waiting thread runs what it can:
/// neither in an in-order queue (where it also holds every later command) nor in an
/// out-of-order one (where an independent launch goes ahead of it).
#[test]
fn a_user_event_gates_its_launch() {
    let env = Env::new();
    let k = kernel(&env, "step");
    const N: usize = 64;
    for out_of_order in [false, true] {
        let props = if out_of_order {
            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
        } else {
            0
        };
        let q = queue(&env, props);
        let (a, b) = (env.buffer(&vec![1u32; N]), env.buffer(&vec![1u32; N]));
        let before = step(&q, &k, &a, 1, N, None, &[]);
        check(cl(before.wait()), "clWaitForEvents");
        let gate = UserEvent::new(&env);
        let gated = step(&q, &k, &a, 2, N, None, &[gate.0]);
        let after = step(&q, &k, &b, 3, N, None, &[]);
        if out_of_order {
            // Independent of the gate: runs (here or on a runner) and completes.
            check(cl(after.wait()), "clWaitForEvents");
        }
        for _ in 0..100 {
            std::thread::yield_now();
        }
        assert!(status(&gated) > CL_COMPLETE, "ran before its user event");
        if !out_of_order {
            assert!(status(&after) > CL_COMPLETE, "ran before the gated launch");
        }
        // The gate opens from another thread while this one waits in clFinish.
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                gate.complete();
            });
            check(cl(q.finish()), "clFinish");
        });
        for e in [&gated, &after] {
            assert_eq!(status(e), CL_COMPLETE);
        }
        let mut want_a = vec![1u32; N];
        want_a
            .iter_mut()
            .enumerate()
            .for_each(|(i, w)| *w = step_ref(*w, 1, i));
        want_a
            .iter_mut()
            .enumerate()
            .for_each(|(i, w)| *w = step_ref(*w, 2, i));
        let want_b: Vec<u32> = (0..N).map(|i| step_ref(1, 3, i)).collect();
        assert_eq!(read(&q, &a, N, &[]), want_a);
        assert_eq!(read(&q, &b, N, &[]), want_b);
    }
}

/// Profiling timestamps of launches the waiting thread runs: queued <= submit <= start <= end,
/// and in an in-order queue each command starts after the previous one ended.
#[test]
fn profiling_timestamps_stay_monotonic() {
    let env = Env::new();
    let q = queue(&env, CL_QUEUE_PROFILING_ENABLE);
    let k = kernel(&env, "step");
    let buf = env.buffer(&vec![0u32; 256]);
    let mut events = Vec::new();
    for i in 0..40u32 {
        events.push(step(&q, &k, &buf, i, 64 << (i % 3), None, &[]));
        if i % 4 == 3 {
            check(cl(q.finish()), "clFinish");
        } else if i % 4 == 1 {
            check(cl(events.last().unwrap().wait()), "clWaitForEvents");
        }
    }
    check(cl(q.finish()), "clFinish");
    let mut previous_end = 0;
    for (i, e) in events.iter().enumerate() {
        let t = [
            e.profiling_command_queued(),
            e.profiling_command_submit(),
            e.profiling_command_start(),
            e.profiling_command_end(),
        ]
        .map(|t| check(cl(t), "clGetEventProfilingInfo"));
        assert!(
            t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3],
            "command {i}: {t:?}"
        );
        assert!(
            previous_end <= t[2],
            "command {i} started before {} ended",
            i - 1
        );
        previous_end = t[3];
    }
}

static CALLBACK_THREAD: AtomicU64 = AtomicU64::new(0);

fn thread_number() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

extern "C" fn record_thread(_: cl_event, status: cl_int, _: *mut c_void) {
    assert_eq!(status, CL_COMPLETE);
    CALLBACK_THREAD.store(thread_number(), Ordering::Release);
}

/// A command whose event has a callback is left to the queue's thread: the application may
/// hold a lock around its wait that the callback takes. Its result and the commands after it
/// are still right.
#[test]
fn callbacks_do_not_run_on_the_waiting_thread() {
    let env = Env::new();
    let k = kernel(&env, "step");
    const N: usize = 64;
    for props in [0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE] {
        let q = queue(&env, props);
        let buf = env.buffer(&vec![0u32; N]);
        let gate = UserEvent::new(&env);
        let watched = step(&q, &k, &buf, 7, N, None, &[gate.0]);
        // SAFETY: a live event; the callback is a plain function that ignores user data.
        let r =
            unsafe { clSetEventCallback(watched.get(), CL_COMPLETE, record_thread, null_mut()) };
        assert_eq!(r, CL_SUCCESS);
        let next = step(&q, &k, &buf, 8, N, None, &[watched.get()]);
        CALLBACK_THREAD.store(0, Ordering::Release);
        gate.complete();
        check(cl(next.wait()), "clWaitForEvents");
        check(cl(q.finish()), "clFinish");
        // The callback comes once the event completed; it may still be on its way.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while CALLBACK_THREAD.load(Ordering::Acquire) == 0 {
            assert!(std::time::Instant::now() < deadline, "no callback");
            std::thread::yield_now();
        }
        assert_ne!(CALLBACK_THREAD.load(Ordering::Acquire), thread_number());
        let want: Vec<u32> = (0..N).map(|i| step_ref(step_ref(0, 7, i), 8, i)).collect();
        assert_eq!(read(&q, &buf, N, &[]), want);
    }
}

/// MXCSR flush-to-zero (bit 15) and denormals-are-zero (bit 6), as fast-math code sets them.
const FTZ_DAZ: u32 = (1 << 15) | (1 << 6);

fn read_mxcsr() -> u32 {
    let mut v = 0u32;
    // SAFETY: stmxcsr stores MXCSR into the local.
    unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack)) };
    v
}

fn write_mxcsr(v: u32) {
    // SAFETY: a value read from MXCSR with only FTZ/DAZ changed: no reserved bits.
    unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack)) };
}

/// A waiting thread with a fast-math floating-point environment runs kernels with the
/// device's (denormals kept: the device reports CL_FP_DENORM unless FERROCL_FTZ is on), and
/// gets its own environment back.
#[test]
fn kernels_run_with_the_device_floating_point_environment() {
    let env = Env::new();
    if std::env::var("FERROCL_FTZ").is_ok() {
        return;
    }
    let k = kernel(&env, "product");
    let out = env.buffer(&[0f32; 64]);
    // A denormal result, and a denormal input.
    let cases = [(1e-30f32, 1e-10f32), (1e-40f32, 2.0f32)];
    let wants = cases.map(|(a, b)| std::hint::black_box(a) * std::hint::black_box(b));
    assert!(wants.iter().all(|w| w.is_subnormal()));
    std::thread::spawn(move || {
        let q = queue(&env, 0);
        let fast_math = read_mxcsr() | FTZ_DAZ;
        write_mxcsr(fast_math);
        for _ in 0..20 {
            for ((a, b), want) in cases.iter().zip(wants) {
                arg_buf(&k, 0, &out);
                arg(&k, 1, a);
                arg(&k, 2, b);
                // SAFETY: the size array outlives the call; the arguments are set.
                let r = unsafe {
                    q.enqueue_nd_range_kernel(k.get(), 1, null(), [64usize].as_ptr(), null(), &[])
                };
                check(cl(r), "clEnqueueNDRangeKernel");
                check(cl(q.finish()), "clFinish");
                assert_eq!(read_mxcsr(), fast_math, "the caller's MXCSR is restored");
                let mut got = vec![0f32; 64];
                // SAFETY: a blocking read into 64 floats.
                let r = unsafe { q.enqueue_read_buffer(&out, CL_BLOCKING, 0, &mut got, &[]) };
                check(cl(r), "clEnqueueReadBuffer");
                assert!(
                    got.iter().all(|g| g.to_bits() == want.to_bits()),
                    "{a:e} * {b:e}: {:e}, want {want:e}",
                    got[0]
                );
            }
        }
    })
    .join()
    .unwrap();
}

/// A waiting thread with a small stack runs a kernel with 1 MiB of private memory per
/// work-item: kernels never run on the application's own stack.
#[test]
fn a_waiting_thread_with_a_small_stack_runs_deep_kernels() {
    let env = Env::new();
    let k = kernel(&env, "deep");
    const N: usize = 16;
    let n = 262_144u32;
    let out = env.buffer(&[0u32; N]);
    let want: Vec<u32> = (0..N as u32)
        .map(|g| {
            (0..n).fold(0u32, |s, i| {
                let j = i.wrapping_mul(31) % n;
                s.wrapping_add(j.wrapping_mul(7).wrapping_add(g))
            })
        })
        .collect();
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let q = queue(&env, 0);
            for _ in 0..3 {
                arg_buf(&k, 0, &out);
                arg(&k, 1, &n);
                // SAFETY: the size array outlives the call; the arguments are set.
                let r = unsafe {
                    q.enqueue_nd_range_kernel(k.get(), 1, null(), [N].as_ptr(), null(), &[])
                };
                let e = check(cl(r), "clEnqueueNDRangeKernel");
                check(cl(e.wait()), "clWaitForEvents");
                let mut got = vec![0u32; N];
                // SAFETY: a blocking read into N words.
                let r = unsafe { q.enqueue_read_buffer(&out, CL_BLOCKING, 0, &mut got, &[]) };
                check(cl(r), "clEnqueueReadBuffer");
                assert_eq!(got, want);
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

const CHILD: &str = "FERROCL_WAITER_TEST_CHILD";
const BEGIN: &str = "@@ output begins\n";
const END: &str = "@@ output ends\n";

/// Runs test `name` in a child process (this binary again) and returns what it printed between
/// [`BEGIN`] and [`END`]; in the child returns `None` and the caller runs the body.
fn child_stdout(name: &str) -> Option<String> {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return None;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .output()
        .expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child {name} failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, rest) = stdout.split_once(BEGIN).expect("begin marker");
    Some(rest.split_once(END).expect("end marker").0.to_owned())
}

/// A line on stdout, flushed (kernel printf writes through the C library's stdout).
fn marker(text: &str) {
    use std::io::Write;
    print!("{text}");
    std::io::stdout().flush().expect("flush stdout");
}

/// Kernel printf of launches the waiting thread runs comes out in command order, each before
/// the wait for its command returns, in an in-order queue and along an out-of-order chain.
#[test]
fn printf_output_follows_command_order() {
    const LAUNCHES: i32 = 12;
    let Some(out) = child_stdout("printf_output_follows_command_order") else {
        let env = Env::new();
        let k = env.kernel("printf", Opt::O0, "print_tagged");
        marker(BEGIN);
        for props in [0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE] {
            let q = queue(&env, props);
            let mut last: Option<Event> = None;
            for tag in 0..LAUNCHES {
                arg(&k, 0, &tag);
                let wait: Vec<cl_event> = last.as_ref().map(Event::get).into_iter().collect();
                // SAFETY: the size array outlives the call; the argument is set.
                let r = unsafe {
                    q.enqueue_nd_range_kernel(k.get(), 1, null(), [1usize].as_ptr(), null(), &wait)
                };
                let e = check(cl(r), "clEnqueueNDRangeKernel");
                match tag % 3 {
                    0 => {
                        check(cl(e.wait()), "clWaitForEvents");
                        marker(&format!("waited {tag}\n"));
                    }
                    1 => {
                        check(cl(q.finish()), "clFinish");
                        marker(&format!("finished {tag}\n"));
                    }
                    _ => {}
                }
                last = Some(e);
            }
            check(cl(q.finish()), "clFinish");
            marker("queue done\n");
        }
        marker(END);
        return;
    };
    let mut want = String::new();
    for _ in 0..2 {
        for tag in 0..LAUNCHES {
            want += &format!("command {tag} item 0\n");
            match tag % 3 {
                0 => want += &format!("waited {tag}\n"),
                1 => want += &format!("finished {tag}\n"),
                _ => {}
            }
        }
        want += "queue done\n";
    }
    assert_eq!(out, want);
}
