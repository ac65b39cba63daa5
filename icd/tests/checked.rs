//! Checked mode through the real loader: programs built with `-cl-ferrocl-checked` stop at the
//! first out-of-bounds access — global, constant, `__local` (variables and arguments), private,
//! sub-buffer, pointers of unknown object — and at integer division by zero; the command's
//! event gets CL_OUT_OF_RESOURCES, memory beside the object is proven untouched, and the queue
//! goes on. Correct kernels give the results they give unchecked. `FERROCL_CHECKED=on` and the
//! stderr report are tested in a child process (settings are read once per process).

mod common;

use std::process::Command;
use std::ptr;

use common::{arg, arg_buf, arg_local, check, cl, Env};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::types::cl_int;

const CHECKED: &str = "-cl-ferrocl-checked";

const SOURCE: &str = r#"
kernel void shift_write(global int *out, int shift) {
    int gid = get_global_id(0);
    out[gid + shift] = gid;
}

kernel void shift_read(global const int *in, global int *out, int shift) {
    int gid = get_global_id(0);
    out[gid] = in[gid + shift];
}

kernel void constant_read(constant int *table, global int *out, int shift) {
    int gid = get_global_id(0);
    out[gid] = table[gid + shift];
}

kernel void local_variable(global int *out, int shift) {
    local int tile[16];
    int lid = get_local_id(0);
    tile[lid] = lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[(lid + shift) % 32];
}

kernel void local_argument(global int *out, local int *scratch) {
    int lid = get_local_id(0);
    scratch[lid] = lid * 3;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = scratch[get_local_size(0) - 1 - lid];
}

kernel void private_array(global const int *index, global int *out) {
    int gid = get_global_id(0);
    int a[8];
    for (int i = 0; i < 8; i++) a[i] = i * gid;
    a[index[gid]] = -1;
    int sum = 0;
    for (int i = 0; i < 8; i++) sum += a[i];
    out[gid] = sum;
}

kernel void divide(global const int *a, global const int *b, global int *q) {
    int gid = get_global_id(0);
    q[gid] = a[gid] / b[gid];
}

// The pointer goes through an integer: its object is unknown at build time, so the access is
// looked up among the launch's memory at run time.
kernel void through_integer(global int *out, long byte_offset) {
    int gid = get_global_id(0);
    global int *p = (global int *)((ulong)out + byte_offset);
    p[gid] = gid;
}

kernel void divergent_barrier(global int *out, int split) {
    int lid = get_local_id(0);
    if (lid < split) {
        out[lid] = 1;
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    out[get_global_id(0)] += 1;
}

kernel void two_barriers(global int *out, int split) {
    int lid = get_local_id(0);
    if (lid < split) {
        out[lid] = 1;
        barrier(CLK_GLOBAL_MEM_FENCE);
    } else {
        out[lid] = 2;
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    out[lid] += 1;
}

// Consecutive work-items write downwards: the vector check's first and last lanes swap roles.
kernel void reverse_write(global int *out, int n) {
    int gid = get_global_id(0);
    out[n - 1 - gid] = gid;
}

// The check sits in a branch the work-items take differently: in the vectorised kernel only
// the lanes that take it may fail it.
kernel void masked_scatter(global int *out, global const int *index) {
    int gid = get_global_id(0);
    if (gid % 3 == 0) out[index[gid]] = gid;
}

static void put(global float *p, int i, float v) { p[i] = v; }

kernel void scale(global const float *in, global float *out, float k) {
    int gid = get_global_id(0);
    put(out, gid, in[gid] * k);
}
"#;

fn status(event: &Event) -> cl_int {
    check(
        cl(event.command_execution_status()),
        "CL_EVENT_COMMAND_EXECUTION_STATUS",
    )
    .0
}

/// Enqueues `kernel` over `global` work-items in groups of `local`, waits for the queue, and
/// returns the command's status.
fn launch(env: &Env, kernel: &Kernel, global: usize, local: usize) -> cl_int {
    // SAFETY: the sizes outlive the call; the arguments were set by the caller.
    let r = unsafe {
        env.queue
            .enqueue_nd_range_kernel(kernel.get(), 1, ptr::null(), &global, &local, &[])
    };
    let event = check(cl(r), "clEnqueueNDRangeKernel");
    check(cl(env.queue.finish()), "clFinish");
    status(&event)
}

const COMPLETE: cl_int = opencl3::event::CL_COMPLETE;
const FAILED: cl_int = opencl3::error_codes::CL_OUT_OF_RESOURCES;

struct Fixture {
    env: Env,
    program: opencl3::program::Program,
}

impl Fixture {
    fn new() -> Option<Fixture> {
        let env = Env::new();
        if env.other_icd {
            return None; // checked mode is Ferrocl's
        }
        let program = env.program_from_source(SOURCE, CHECKED);
        Some(Fixture { env, program })
    }

    fn kernel(&self, name: &str) -> Kernel {
        check(cl(Kernel::create(&self.program, name)), "clCreateKernel")
    }
}

/// A sub-buffer of the first `n` ints of `parent`, whose next ints are the guard.
fn sub_buffer(parent: &Buffer<i32>, n: usize) -> Buffer<i32> {
    // SAFETY: the region (the first `n` ints) lies inside the parent.
    let r = unsafe { parent.create_sub_buffer(CL_MEM_READ_WRITE, 0, n) };
    check(cl(r), "clCreateSubBuffer")
}

#[test]
fn global_writes_past_a_sub_buffer_are_stopped_before_they_land() {
    let Some(f) = Fixture::new() else { return };
    const N: usize = 64;
    let parent = f.env.buffer_filled(2 * N, 0x5a5a_5a5ai32);
    let sub = sub_buffer(&parent, N);
    let k = f.kernel("shift_write");
    arg_buf(&k, 0, &sub);
    arg(&k, 1, &0i32);
    assert_eq!(launch(&f.env, &k, N, 16), COMPLETE);
    arg(&k, 1, &1i32);
    assert_eq!(launch(&f.env, &k, N, 16), FAILED);
    let all = f.env.read(&parent, 2 * N);
    assert!(
        all[N..].iter().all(|&v| v == 0x5a5a_5a5a),
        "the guard beside the sub-buffer was written: {:?}",
        &all[N..N + 4]
    );
    // Negative offsets are caught too.
    arg(&k, 1, &-1i32);
    assert_eq!(launch(&f.env, &k, N, 16), FAILED);
    // The queue goes on, and in-bounds launches still complete.
    arg(&k, 1, &0i32);
    assert_eq!(launch(&f.env, &k, N, 16), COMPLETE);
    let all = f.env.read(&parent, N);
    assert_eq!(all, (0..N as i32).collect::<Vec<_>>());
}

#[test]
fn global_and_constant_reads_past_the_end_fail() {
    let Some(f) = Fixture::new() else { return };
    const N: usize = 32;
    let input = f.env.buffer(&(0..N as i32).collect::<Vec<_>>());
    let out = f.env.buffer_filled(N, 0i32);
    for name in ["shift_read", "constant_read"] {
        let k = f.kernel(name);
        arg_buf(&k, 0, &input);
        arg_buf(&k, 1, &out);
        arg(&k, 2, &0i32);
        assert_eq!(launch(&f.env, &k, N, 8), COMPLETE, "{name}");
        assert_eq!(f.env.read(&out, N), (0..N as i32).collect::<Vec<_>>());
        arg(&k, 2, &1i32);
        assert_eq!(launch(&f.env, &k, N, 8), FAILED, "{name}");
    }
}

#[test]
fn local_variables_and_arguments_are_bounded() {
    let Some(f) = Fixture::new() else { return };
    let out = f.env.buffer_filled(64, 0i32);
    let k = f.kernel("local_variable");
    arg_buf(&k, 0, &out);
    arg(&k, 1, &1i32);
    // 16 work-items: tile[(lid + 1) % 32] reads tile[16] for the last one.
    assert_eq!(launch(&f.env, &k, 16, 16), FAILED);
    arg(&k, 1, &0i32);
    assert_eq!(launch(&f.env, &k, 16, 16), COMPLETE);
    // 32 work-items write tile[16..32]: past the array.
    assert_eq!(launch(&f.env, &k, 32, 32), FAILED);

    let k = f.kernel("local_argument");
    arg_buf(&k, 0, &out);
    arg_local(&k, 1, 16 * 4);
    assert_eq!(launch(&f.env, &k, 16, 16), COMPLETE);
    let got = f.env.read(&out, 16);
    assert_eq!(got, (0..16).rev().map(|l| l * 3).collect::<Vec<_>>());
    arg_local(&k, 1, 15 * 4);
    assert_eq!(launch(&f.env, &k, 16, 16), FAILED);
}

#[test]
fn private_arrays_are_bounded() {
    let Some(f) = Fixture::new() else { return };
    const N: usize = 16;
    let out = f.env.buffer_filled(N, 0i32);
    let k = f.kernel("private_array");
    let index = f.env.buffer(&[7i32; N]);
    arg_buf(&k, 0, &index);
    arg_buf(&k, 1, &out);
    assert_eq!(launch(&f.env, &k, N, 4), COMPLETE);
    let got = f.env.read(&out, N);
    for (gid, v) in got.iter().enumerate() {
        assert_eq!(*v, 21 * gid as i32 - 1, "out[{gid}]");
    }
    let mut wild = vec![3i32; N];
    wild[9] = 8;
    let index = f.env.buffer(&wild);
    arg_buf(&k, 0, &index);
    assert_eq!(launch(&f.env, &k, N, 4), FAILED);
    wild[9] = -1;
    let index = f.env.buffer(&wild);
    arg_buf(&k, 0, &index);
    assert_eq!(launch(&f.env, &k, N, 4), FAILED);
}

#[test]
fn integer_division_by_zero_fails() {
    let Some(f) = Fixture::new() else { return };
    const N: usize = 8;
    let a = f.env.buffer(&[10i32; N]);
    let mut divisors = vec![2i32; N];
    let b = f.env.buffer(&divisors);
    let q = f.env.buffer_filled(N, 0i32);
    let k = f.kernel("divide");
    arg_buf(&k, 0, &a);
    arg_buf(&k, 1, &b);
    arg_buf(&k, 2, &q);
    assert_eq!(launch(&f.env, &k, N, 4), COMPLETE);
    assert_eq!(f.env.read(&q, N), vec![5; N]);
    divisors[5] = 0;
    let b = f.env.buffer(&divisors);
    arg_buf(&k, 1, &b);
    assert_eq!(launch(&f.env, &k, N, 4), FAILED);
}

#[test]
fn divergent_barriers_fail() {
    let Some(f) = Fixture::new() else { return };
    let out = f.env.buffer_filled(8, 0i32);
    for name in ["divergent_barrier", "two_barriers"] {
        let k = f.kernel(name);
        arg_buf(&k, 0, &out);
        // Every work-item on the same side: uniform, fine.
        arg(&k, 1, &8i32);
        assert_eq!(launch(&f.env, &k, 8, 8), COMPLETE, "{name}");
        arg(&k, 1, &0i32);
        assert_eq!(launch(&f.env, &k, 8, 8), COMPLETE, "{name}");
        // Half of the group on each side.
        arg(&k, 1, &4i32);
        assert_eq!(launch(&f.env, &k, 8, 8), FAILED, "{name}");
    }
}

#[test]
fn pointers_of_unknown_object_are_looked_up() {
    let Some(f) = Fixture::new() else { return };
    const N: usize = 16;
    let out = f.env.buffer_filled(2 * N, 0i32);
    let k = f.kernel("through_integer");
    arg_buf(&k, 0, &out);
    arg(&k, 1, &(4 * N as i64));
    assert_eq!(launch(&f.env, &k, N, 4), COMPLETE);
    assert_eq!(
        f.env.read(&out, 2 * N)[N..],
        (0..N as i32).collect::<Vec<_>>()[..]
    );
    // Far away from every buffer of the launch.
    arg(&k, 1, &(1i64 << 40));
    assert_eq!(launch(&f.env, &k, N, 4), FAILED);
}

#[test]
fn correct_kernels_compute_what_they_do_unchecked() {
    let Some(f) = Fixture::new() else { return };
    const N: usize = 1000;
    let input: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let bin = f.env.buffer(&input);
    let bout = f.env.buffer_filled(N, 0f32);
    let k = f.kernel("scale");
    arg_buf(&k, 0, &bin);
    arg_buf(&k, 1, &bout);
    arg(&k, 2, &3f32);
    // 1000 = 125 groups of 8: the function's pointer parameter keeps the argument's bounds.
    assert_eq!(launch(&f.env, &k, N, 8), COMPLETE);
    let got = f.env.read(&bout, N);
    for i in 0..N {
        assert_eq!(got[i], input[i] * 3.0, "out[{i}]");
    }
}

#[test]
fn descending_accesses_are_bounded_at_both_ends() {
    let Some(f) = Fixture::new() else { return };
    const N: usize = 64;
    let parent = f.env.buffer_filled(2 * N, 0x5a5a_5a5ai32);
    let out = sub_buffer(&parent, N);
    let k = f.kernel("reverse_write");
    arg_buf(&k, 0, &out);
    arg(&k, 1, &(N as i32));
    assert_eq!(launch(&f.env, &k, N, 16), COMPLETE);
    let got = f.env.read(&parent, N);
    assert_eq!(got, (0..N as i32).rev().collect::<Vec<_>>());
    // Work-item 0 writes one past the end; work-item 63 one before the start.
    for n in [N as i32 + 1, N as i32 - 1] {
        arg(&k, 1, &n);
        assert_eq!(launch(&f.env, &k, N, 16), FAILED, "n = {n}");
    }
    assert!(f.env.read(&parent, 2 * N)[N..]
        .iter()
        .all(|&v| v == 0x5a5a_5a5a));
}

#[test]
fn checks_in_varying_branches_see_only_the_lanes_that_take_them() {
    let Some(f) = Fixture::new() else { return };
    const N: usize = 64;
    let k = f.kernel("masked_scatter");
    let out = f.env.buffer_filled(N, -1i32);
    // Work-items that skip the store point far out of bounds: they must not fail.
    let index: Vec<i32> = (0..N as i32)
        .map(|g| if g % 3 == 0 { g } else { 1 << 20 })
        .collect();
    let index_buf = f.env.buffer(&index);
    arg_buf(&k, 0, &out);
    arg_buf(&k, 1, &index_buf);
    assert_eq!(launch(&f.env, &k, N, 16), COMPLETE);
    let got = f.env.read(&out, N);
    for (g, v) in got.iter().enumerate() {
        let want = if g % 3 == 0 { g as i32 } else { -1 };
        assert_eq!(*v, want, "out[{g}]");
    }
    // One that takes it does: nothing lands beyond the buffer, the launch fails.
    let mut wild = index.clone();
    wild[33] = N as i32;
    let guard = f.env.buffer_filled(2 * N, 7i32);
    let sub = sub_buffer(&guard, N);
    let wild_buf = f.env.buffer(&wild);
    arg_buf(&k, 0, &sub);
    arg_buf(&k, 1, &wild_buf);
    assert_eq!(launch(&f.env, &k, N, 16), FAILED);
    assert!(f.env.read(&guard, 2 * N)[N..].iter().all(|&v| v == 7));
}

const CHILD: &str = "FERROCL_CHECKED_TEST_CHILD";

#[test]
fn ferrocl_checked_on_checks_every_program_and_reports_on_stderr() {
    let name = "ferrocl_checked_on_checks_every_program_and_reports_on_stderr";
    if std::env::var(CHILD).as_deref() != Ok(name) {
        let exe = std::env::current_exe().expect("test binary path");
        let out = Command::new(exe)
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, name)
            .env("FERROCL_CHECKED", "on")
            .env("FERROCL_LOG", "debug")
            .output()
            .expect("run the test binary as a child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
        if !stdout.contains("1 passed") || Env::new().other_icd {
            return;
        }
        assert!(
            stderr
                .lines()
                .any(|l| l.contains("kernel shift_write:") && l.contains("vectorised")),
            "checked shift_write is not vectorised:\n{stderr}"
        );
        for want in [
            "ferrocl: checked mode: kernel 'shift_write', work-item (63, 0, 0): write of 4 bytes at offset 256 of argument 'out' (256 bytes) is out of bounds",
            "kernel 'divide', work-item (",
            "integer division by zero in OpSDiv",
            "kernel 'divergent_barrier', work-item (4, 0, 0): divergent barrier",
            // Checked kernels are vectorised, and a vector check reports its own lane.
            "kernel shift_write: 10 SPIR-V instructions",
            "kernel 'masked_scatter', work-item (33, 0, 0): write of 4 bytes at offset 256 of \
             argument 'out' (256 bytes) is out of bounds",
        ] {
            assert!(stderr.contains(want), "no {want:?} in stderr:\n{stderr}");
        }
        return;
    }
    let env = Env::new();
    if env.other_icd {
        return;
    }
    // No build option: the variable alone turns checks on.
    let program = env.program_from_source(SOURCE, "");
    let k = check(
        cl(Kernel::create(&program, "shift_write")),
        "clCreateKernel",
    );
    let out = env.buffer_filled(64, 0i32);
    arg_buf(&k, 0, &out);
    arg(&k, 1, &1i32);
    assert_eq!(launch(&env, &k, 64, 64), FAILED);
    let k = check(cl(Kernel::create(&program, "divide")), "clCreateKernel");
    let a = env.buffer(&[1i32; 4]);
    let b = env.buffer(&[1i32, 1, 0, 1]);
    arg_buf(&k, 0, &a);
    arg_buf(&k, 1, &b);
    arg_buf(&k, 2, &out);
    assert_eq!(launch(&env, &k, 4, 4), FAILED);
    let k = check(
        cl(Kernel::create(&program, "divergent_barrier")),
        "clCreateKernel",
    );
    arg_buf(&k, 0, &out);
    arg(&k, 1, &4i32);
    assert_eq!(launch(&env, &k, 8, 8), FAILED);
    let k = check(
        cl(Kernel::create(&program, "masked_scatter")),
        "clCreateKernel",
    );
    let mut index: Vec<i32> = (0..64).collect();
    index[33] = 64;
    let index = env.buffer(&index);
    arg_buf(&k, 0, &out);
    arg_buf(&k, 1, &index);
    assert_eq!(launch(&env, &k, 64, 64), FAILED);
}
