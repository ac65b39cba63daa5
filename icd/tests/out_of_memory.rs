//! A nearly exhausted address space (`RLIMIT_AS`, buffers filling it), in a child process:
//! `clBuildProgram` returns `CL_OUT_OF_HOST_MEMORY` instead of aborting the process in the middle
//! of the build (issue #23, defect 2), buffer creation fails with its error code, and once the
//! buffers are released the same build succeeds and the kernel runs.

mod common;

use std::process::Command;

use common::*;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::program::Program;

const CHILD: &str = "FERROCL_OOM_TEST_CHILD";

/// The process's virtual size in bytes (`VmSize` of /proc/self/status).
fn vm_size() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmSize");
    kb * 1024
}

fn build(env: &Env, il: &[u8]) -> Result<Program, i32> {
    let program = cl(Program::create_from_il(&env.context, il))?;
    let options = std::ffi::CString::new("").unwrap();
    opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &options,
        None,
        std::ptr::null_mut(),
    )?;
    Ok(program)
}

#[test]
fn builds_fail_cleanly_when_the_address_space_is_exhausted() {
    let name = "builds_fail_cleanly_when_the_address_space_is_exhausted";
    if std::env::var(CHILD).is_err() {
        // Without the driver's headroom check the child hangs or aborts mid-build: bounded.
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("FERROCL_CACHE", "off")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run the test binary as a child");
        let start = std::time::Instant::now();
        while child.try_wait().expect("wait for the child").is_none() {
            if start.elapsed() > std::time::Duration::from_secs(120) {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let out = child.wait_with_output().expect("the child's output");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "the child died or failed ({:?})\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
            out.status
        );
        return;
    }
    let env = Env::new();
    // Everything the limited phase needs is made first: the SPIR-V (clang runs outside the
    // limit) and the queue's thread.
    let il = spirv("float4ops", Opt::Optimised);
    drop(build(&env, &il).expect("a build with room"));
    let limit = vm_size() + (256 << 20);
    let rlimit = libc::rlimit {
        rlim_cur: limit,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain setrlimit on this process.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rlimit) }, 0);
    let mut buffers = Vec::new();
    let chunk = 8 << 20;
    let error = loop {
        // SAFETY: no host pointer.
        let b = unsafe {
            Buffer::<u8>::create(&env.context, CL_MEM_READ_WRITE, chunk, std::ptr::null_mut())
        };
        match cl(b) {
            Ok(b) => buffers.push(b),
            Err(e) => break e,
        }
        assert!(buffers.len() < 1000, "the limit did not bind");
    };
    assert!(
        [
            opencl_sys::CL_MEM_OBJECT_ALLOCATION_FAILURE,
            opencl_sys::CL_OUT_OF_HOST_MEMORY
        ]
        .contains(&error),
        "buffer creation: {error}"
    );
    assert!(!buffers.is_empty());
    // Under 8 MiB of address space left: the build refuses instead of aborting midway.
    assert_eq!(
        build(&env, &il).err(),
        Some(opencl_sys::CL_OUT_OF_HOST_MEMORY)
    );
    drop(buffers);
    let program = build(&env, &il).expect("the same build once memory is back");
    drop(program);
}
