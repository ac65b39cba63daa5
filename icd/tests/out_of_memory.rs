//! A nearly exhausted address space (`RLIMIT_AS`, buffers filling it), in a child process:
//! `clBuildProgram` returns `CL_OUT_OF_HOST_MEMORY` instead of aborting the process in the middle
//! of the build (issue #23, defect 2), buffer creation fails with its error code, and once the
//! buffers are released the same build succeeds and the kernel runs. A build that starts with
//! room and runs out of it midway (the JIT's allocations for 512 MiB of program-scope data) is
//! `CL_OUT_OF_HOST_MEMORY` too, with a build log that says so (issue #35).

mod common;

use std::process::Command;

use common::*;
use opencl3::kernel::Kernel;
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

/// In the test process: runs test `name` in a child process (the limit would bind the whole
/// test binary) and checks it passed; true. In that child: false, and the caller runs the body.
fn ran_in_child(name: &str) -> bool {
    if std::env::var(CHILD).is_ok() {
        return false;
    }
    // Without the driver's checks the child hangs or aborts mid-build: bounded.
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
    true
}

/// Limits this process's address space to `bytes` (`RLIM_INFINITY`: no limit).
fn limit_address_space(bytes: u64) {
    let rlimit = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain setrlimit on this process.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rlimit) }, 0);
}

#[test]
fn builds_fail_cleanly_when_the_address_space_is_exhausted() {
    if ran_in_child("builds_fail_cleanly_when_the_address_space_is_exhausted") {
        return;
    }
    let env = Env::new();
    // Everything the limited phase needs is made first: the SPIR-V (clang runs outside the
    // limit) and the queue's thread.
    let il = spirv("float4ops", Opt::Optimised);
    drop(build(&env, &il).expect("a build with room"));
    limit_address_space(vm_size() + (256 << 20));
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

#[test]
fn a_build_that_runs_out_of_memory_midway_is_out_of_host_memory() {
    if ran_in_child("a_build_that_runs_out_of_memory_midway_is_out_of_host_memory") {
        return;
    }
    let env = Env::new();
    let il = spirv("big_globals", Opt::Optimised);
    drop(build(&env, &spirv("float4ops", Opt::Optimised)).expect("a build with room"));
    // Room for the build to start (the driver's headroom check passes) but not for the
    // program's 512 MiB of data.
    limit_address_space(vm_size() + (256 << 20));
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let options = std::ffi::CString::new("").unwrap();
    let built = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &options,
        None,
        std::ptr::null_mut(),
    );
    limit_address_space(libc::RLIM_INFINITY);
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    assert_eq!(
        built.err(),
        Some(opencl_sys::CL_OUT_OF_HOST_MEMORY),
        "clBuildProgram; build log:\n{log}"
    );
    assert!(log.contains("out of host memory"), "{log}");
    let status = opencl3::program::get_program_build_info(
        program.get(),
        env.device.id(),
        opencl_sys::CL_PROGRAM_BUILD_STATUS,
    )
    .expect("CL_PROGRAM_BUILD_STATUS");
    assert_eq!(
        i32::from(status),
        opencl_sys::CL_BUILD_ERROR,
        "the build status"
    );
    // With the room back the same program builds and runs.
    drop(program);
    let program = build(&env, &il).expect("the same build once memory is back");
    let kernel = check(cl(Kernel::create(&program, "sum_all")), "clCreateKernel");
    let out = env.buffer_filled(1, -1i32);
    arg_buf(&kernel, 0, &out);
    arg(&kernel, 1, &3i32);
    env.run(&kernel, &[1], None, None);
    assert_eq!(env.read(&out, 1)[0], 0);
}
