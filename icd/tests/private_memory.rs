//! Large private arrays, through the loader: kernels whose private array is 2 MiB, 3 MiB or
//! 16 MiB, every index in range, either run correctly or fail cleanly, and never write beyond
//! the stack (a `CL_MEM_USE_HOST_PTR` guard buffer beside them is checked untouched); a kernel
//! over the device's private-memory limit fails to build with a log naming the array. Launches
//! of one work-group (run on the queue's thread) and of many (run on the worker pool) are both
//! covered.

mod common;

use common::*;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE, CL_MEM_USE_HOST_PTR};

/// `out[g] = arr[idx[g]]` after every element of a `floats`-element private array is written.
fn source(floats: usize) -> String {
    format!(
        "kernel void big(global float *out, global const int *idx) {{
             float arr[{floats}];
             for (int i = 0; i < {floats}; i++) arr[i] = (float)(i % 1000) + 0.5f;
             size_t g = get_global_id(0);
             out[g] = arr[idx[g]];
         }}"
    )
}

const GUARD_WORDS: usize = 1 << 20;
const GUARD: u32 = 0x5eed_f00d;

#[test]
fn large_private_arrays_run_or_fail_cleanly() {
    let env = Env::new();
    // A host buffer used in place by the device: what a stack clash overwrote.
    let mut guard = vec![GUARD; GUARD_WORDS];
    // SAFETY: `guard` outlives the buffer, which is released at the end of this function.
    let guard_buffer = unsafe {
        Buffer::<u32>::create(
            &env.context,
            CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
            GUARD_WORDS,
            guard.as_mut_ptr().cast(),
        )
    }
    .expect("clCreateBuffer(USE_HOST_PTR)");
    for (mib, must_run) in [(2, true), (3, true), (16, false)] {
        let floats = (mib << 20) / 4;
        let program = match env.try_program_from_source(&source(floats), "") {
            Ok(p) => p,
            Err(log) => {
                assert!(!must_run, "{mib} MiB: {log}");
                assert!(log.contains("private memory"), "{mib} MiB: {log}");
                continue;
            }
        };
        let k = Kernel::create(&program, "big").expect("clCreateKernel");
        let n = 16;
        let idx: Vec<i32> = (0..n).map(|i| (i * 7919 % floats) as i32).collect();
        let didx = env.buffer(&idx);
        let out = env.buffer_filled(n, -1.0f32);
        arg_buf(&k, 0, &out);
        arg_buf(&k, 1, &didx);
        // One work-group (the queue's thread), then one work-item per group (the pool).
        for local in [n, 1] {
            env.run(&k, &[n], Some(&[local]), None);
            let got = env.read(&out, n);
            for (g, v) in got.iter().enumerate() {
                let want = (idx[g] % 1000) as f32 + 0.5;
                assert_eq!(*v, want, "{mib} MiB, local {local}, work-item {g}");
            }
        }
        // The guard is untouched, through the device and on the host.
        assert!(
            env.read(&guard_buffer, GUARD_WORDS)
                .iter()
                .all(|&w| w == GUARD),
            "{mib} MiB: the guard buffer was overwritten"
        );
    }
    drop(guard_buffer);
    assert!(guard.iter().all(|&w| w == GUARD));
}

#[test]
fn private_memory_over_the_limit_fails_the_build() {
    let env = Env::new();
    if env.other_icd {
        return; // the limit and its message are Ferrocl's
    }
    let floats = (20 << 20) / 4;
    let log = env
        .try_program_from_source(&source(floats), "")
        .map(|_| ())
        .expect_err("a 20 MiB private array must not build");
    assert!(log.contains("CL_BUILD_PROGRAM_FAILURE"), "{log}");
    assert!(
        log.contains("private memory of a work-item exceeds"),
        "{log}"
    );
    assert!(log.contains("'arr'") || log.contains("OpVariable"), "{log}");
    // Two arrays that fit alone but not together, at -O0 as well.
    let two = "kernel void k(global float *out) {
                   float a[3145728], b[3145728];
                   for (int i = 0; i < 3145728; i++) { a[i] = i; b[i] = 2 * i; }
                   out[0] = a[(int)out[1]] + b[(int)out[2]]; }";
    for options in ["", "-cl-opt-disable"] {
        let log = env
            .try_program_from_source(two, options)
            .map(|_| ())
            .expect_err("24 MiB of private arrays must not build");
        assert!(
            log.contains("private memory of a work-item exceeds"),
            "{options}: {log}"
        );
    }
}
