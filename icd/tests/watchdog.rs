//! The kernel watchdog (`FERROCL_KERNEL_TIMEOUT`) through the real loader: a kernel that never
//! ends is stopped, its event fails with CL_OUT_OF_RESOURCES, the queue runs the next command
//! correctly and clFinish returns — for a plain loop, a vectorised loop, a loop around barriers
//! and one around a work-group collective. Settings are read once per process, so each test
//! re-runs this binary as a child with the variable set (as config.rs does).

mod common;

use std::process::Command;
use std::ptr;
use std::time::{Duration, Instant};

use common::{arg_buf, check, cl, Env};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::types::cl_int;

const CHILD: &str = "FERROCL_WATCHDOG_TEST_CHILD";

/// Runs test `name`'s body in a child process with `vars` set; returns the child's stderr.
/// In the child returns `None` and the caller runs the body.
fn in_child(name: &str, vars: &[(&str, &str)]) -> Option<String> {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return None;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .env_remove("FERROCL_KERNEL_TIMEOUT")
        .env_remove("FERROCL_LOG")
        .env_remove("FERROCL_DUMP_DIR")
        .env_remove("FERROCL_VECTORIZE")
        .envs(vars.iter().copied());
    let out = cmd.output().expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "child {name} failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "child {name} ran no test:\n{stdout}"
    );
    Some(stderr)
}

/// Kernels that never end while `flag[0]` is 0 (nothing sets it), and one that ends.
const SOURCE: &str = r#"
// Scalar: the loop's trip count depends on memory the loop writes.
kernel void spin(global int *flag, global int *out) {
    int gid = get_global_id(0);
    int n = 0;
    while (flag[0] == 0) {
        n++;
        out[gid] = n;
    }
}

// Vectorised: a uniform loop of arithmetic on each work-item's own value.
kernel void spin_lanes(global const int *flag, global float *out) {
    int gid = get_global_id(0);
    float acc = out[gid];
    int stop = flag[0];
    for (uint i = 0; stop == 0; i++) {
        acc = acc * 0.5f + (float)(i & 7);
    }
    out[gid] = acc;
}

// Barriers in the loop: the work-group function runs every work-item region by region.
kernel void spin_barrier(global int *flag, global int *out, local int *scratch) {
    int lid = get_local_id(0);
    int n = get_local_size(0);
    int sum = 0;
    while (flag[0] == 0) {
        scratch[lid] = lid + sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        sum += scratch[(lid + 1) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = sum;
}

// No loop in the body: the work-item loops alone never get a check.
kernel void twice(global int *a) {
    a[get_global_id(0)] *= 2;
}

kernel void add(global const int *a, global const int *b, global int *c) {
    int gid = get_global_id(0);
    int acc = 0;
    for (int i = 0; i < a[gid]; i++) {
        acc += b[gid];
    }
    c[gid] = acc;
}
"#;

/// A work-group collective in the loop (OpenCL C 3.0 with the collectives feature).
const COLLECTIVE_SOURCE: &str = r#"
kernel void spin_reduce(global int *flag, global int *out) {
    int total = 0;
    while (work_group_reduce_add(flag[0]) == 0) {
        total += 1;
        out[get_global_id(0)] = total;
    }
}
"#;

fn status(event: &Event) -> cl_int {
    check(
        cl(event.command_execution_status()),
        "CL_EVENT_COMMAND_EXECUTION_STATUS",
    )
    .0
}

fn enqueue(env: &Env, kernel: &Kernel, global: usize, local: usize) -> Event {
    // SAFETY: the sizes outlive the call; the arguments were set by the caller.
    let r = unsafe {
        env.queue
            .enqueue_nd_range_kernel(kernel.get(), 1, ptr::null(), &global, &local, &[])
    };
    check(cl(r), "clEnqueueNDRangeKernel")
}

/// Enqueues `stuck` (which never ends) and then a kernel that ends on the same queue; checks
/// that clFinish returns, that the stuck command failed and the next one ran correctly.
fn stopped_then_queue_goes_on(
    env: &Env,
    add: &Kernel,
    stuck: &Kernel,
    global: usize,
    local: usize,
) {
    const N: usize = 256;
    let a: Vec<i32> = (0..N as i32).map(|i| i % 5).collect();
    let b: Vec<i32> = (0..N as i32).collect();
    let (ba, bb, bc) = (env.buffer(&a), env.buffer(&b), env.buffer_filled(N, -1i32));
    arg_buf(add, 0, &ba);
    arg_buf(add, 1, &bb);
    arg_buf(add, 2, &bc);
    let start = Instant::now();
    let stuck_event = enqueue(env, stuck, global, local);
    let add_event = enqueue(env, add, N, 16);
    check(cl(env.queue.finish()), "clFinish");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(60), "clFinish took {took:?}");
    assert_eq!(
        status(&stuck_event),
        opencl3::error_codes::CL_OUT_OF_RESOURCES,
        "the stopped command's event"
    );
    assert_eq!(status(&add_event), opencl3::event::CL_COMPLETE);
    let c = env.read(&bc, N);
    for i in 0..N {
        assert_eq!(c[i], a[i] * b[i], "c[{i}]");
    }
}

#[test]
fn endless_kernels_are_stopped_and_the_queue_goes_on() {
    let stderr = in_child(
        "endless_kernels_are_stopped_and_the_queue_goes_on",
        &[("FERROCL_KERNEL_TIMEOUT", "0.3"), ("FERROCL_LOG", "debug")],
    );
    let Some(stderr) = stderr else {
        let env = Env::new();
        if env.other_icd {
            return; // the variable is Ferrocl's
        }
        let program = env.program_from_source(SOURCE, "");
        let kernel = |name| check(cl(Kernel::create(&program, name)), "clCreateKernel");
        let add = kernel("add");
        let flag = env.buffer(&[0i32]);
        let out = env.buffer_filled(1024, 0i32);
        let out_f = env.buffer_filled(1024, 1.0f32);

        let spin = kernel("spin");
        arg_buf(&spin, 0, &flag);
        arg_buf(&spin, 1, &out);
        // Many groups: those not started when the deadline passes never run.
        stopped_then_queue_goes_on(&env, &add, &spin, 1024, 4);
        // One group: it runs on the queue's own thread.
        stopped_then_queue_goes_on(&env, &add, &spin, 8, 8);

        // Unoptimised: one work-item at a time.
        let plain = env.program_from_source(SOURCE, "-cl-opt-disable");
        let spin = check(cl(Kernel::create(&plain, "spin")), "clCreateKernel");
        arg_buf(&spin, 0, &flag);
        arg_buf(&spin, 1, &out);
        stopped_then_queue_goes_on(&env, &add, &spin, 64, 16);

        let lanes = kernel("spin_lanes");
        arg_buf(&lanes, 0, &flag);
        arg_buf(&lanes, 1, &out_f);
        stopped_then_queue_goes_on(&env, &add, &lanes, 1024, 16);

        let barrier = kernel("spin_barrier");
        arg_buf(&barrier, 0, &flag);
        arg_buf(&barrier, 1, &out);
        common::arg_local(&barrier, 2, 64 * 4);
        stopped_then_queue_goes_on(&env, &add, &barrier, 256, 64);

        let collective = env.program_from_source(COLLECTIVE_SOURCE, "-cl-std=CL3.0");
        let reduce = check(
            cl(Kernel::create(&collective, "spin_reduce")),
            "clCreateKernel",
        );
        arg_buf(&reduce, 0, &flag);
        arg_buf(&reduce, 1, &out);
        stopped_then_queue_goes_on(&env, &add, &reduce, 256, 32);
        return;
    };
    for (name, times) in [
        ("spin", 3),
        ("spin_lanes", 1),
        ("spin_barrier", 1),
        ("spin_reduce", 1),
    ] {
        assert_eq!(
            stderr.matches(&format!(
                "error: kernel {name} was stopped after running longer than FERROCL_KERNEL_TIMEOUT (0.3 s)"
            ))
            .count(),
            times,
            "{name}:\n{stderr}"
        );
    }
    assert!(!stderr.contains("kernel add was stopped"), "{stderr}");
    // Both the scalar and the vectorised forms were stopped.
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("kernel spin:") && l.contains("scalar (")),
        "{stderr}"
    );
    // The vectorised case really runs in vector lanes.
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("kernel spin_lanes:") && l.contains("vectorised (")),
        "{stderr}"
    );
}

#[test]
fn without_a_timeout_kernels_carry_no_check() {
    let dir = std::env::temp_dir().join(format!("ferrocl-watchdog-dump-{}", std::process::id()));
    let dir_str = dir.to_str().expect("utf-8 temp dir").to_owned();
    for timeout in ["off", "5"] {
        let name = "without_a_timeout_kernels_carry_no_check";
        let dump = format!("{dir_str}-{timeout}");
        if in_child(
            name,
            &[
                ("FERROCL_KERNEL_TIMEOUT", timeout),
                ("FERROCL_DUMP_DIR", &dump),
            ],
        )
        .is_none()
        {
            let env = Env::new();
            if env.other_icd {
                return;
            }
            let program = env.program_from_source(SOURCE, "");
            let add = check(cl(Kernel::create(&program, "add")), "clCreateKernel");
            // A kernel that ends in time runs as without the watchdog.
            let a: Vec<i32> = (0..64).map(|i| i % 7).collect();
            let b: Vec<i32> = (0..64).collect();
            let (ba, bb, bc) = (env.buffer(&a), env.buffer(&b), env.buffer_filled(64, 0i32));
            arg_buf(&add, 0, &ba);
            arg_buf(&add, 1, &bb);
            arg_buf(&add, 2, &bc);
            env.run(&add, &[64], Some(&[16]), None);
            let c = env.read(&bc, 64);
            for i in 0..64 {
                assert_eq!(c[i], a[i] * b[i], "c[{i}]");
            }
            return;
        }
        let program = std::path::Path::new(&dump).join("program-0");
        let clif = std::fs::read_to_string(program.join("add.opt.clif")).expect("dumped add");
        let loop_free =
            std::fs::read_to_string(program.join("twice.opt.clif")).expect("dumped twice");
        // The stop check is the only atomic load in these kernels. With a timeout even a
        // kernel without loops of its own gets one, at its work-item loops: their counters
        // live in the stack frame, where a stray private write can make them endless.
        for (text, what) in [(&clif, "add"), (&loop_free, "twice")] {
            assert_eq!(
                text.contains("atomic_load"),
                timeout != "off",
                "{what}, FERROCL_KERNEL_TIMEOUT={timeout}:\n{text}"
            );
        }
        std::fs::remove_dir_all(&dump).ok();
    }
}
