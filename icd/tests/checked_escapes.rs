//! The holes a hostile probe found in the safety nets (issue #35), through the real loader:
//! checked mode stops every write through a pointer chosen at run time (a select of a private
//! array and a buffer, a private pointer made from an integer) before it lands — never writing
//! into the work-group function's stack frame — and every write into `__constant` data instead
//! of letting the read-only page end the application; SPIR-V that declares a variable in one
//! storage class and types it in another, or stores into `UniformConstant`, is refused with a
//! build log naming the rule. The reports say what was accessed, with the real size.

mod common;

use std::process::Command;
use std::ptr;

use common::{arg, arg_buf, check, cl, Env};
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use opencl3::types::cl_int;

const CHECKED: &str = "-cl-std=CL3.0 -cl-ferrocl-checked";

const SOURCE: &str = r#"
// A generic pointer chosen at run time between a private array and the work-item's window
// of the buffer (8 ints: 0-3 free, 4 the array's sum).
kernel void select_write(global int *o, int sel, int i, int v) {
    int gid = get_global_id(0);
    int pr[4] = {gid, gid + 1, gid + 2, gid + 3};
    generic int *g = sel ? (generic int *)pr : (generic int *)(o + 8 * gid);
    g[i] = v;
    o[8 * gid + 4] = pr[0] + pr[1] + pr[2] + pr[3];
}

// A private pointer made from an integer: its object is unknown at build time.
kernel void private_through_integer(global int *o, int i) {
    int gid = get_global_id(0);
    int pr[4] = {gid, 2 * gid, 3 * gid, 4 * gid};
    private int *q = (private int *)((ulong)&pr[0] + 4 * i);
    *q = 7;
    o[gid] = pr[0] + pr[1] + pr[2] + pr[3];
}

// The same across a barrier: the array lives in the work-item frame, beside values kept
// across the barrier.
kernel void private_through_integer_barrier(global int *o, int i) {
    int gid = get_global_id(0);
    int pr[4] = {gid, 2 * gid, 3 * gid, 4 * gid};
    private int *q = (private int *)((ulong)&pr[0] + 4 * i);
    barrier(CLK_LOCAL_MEM_FENCE);
    *q = 7;
    o[gid] = pr[0] + pr[1] + pr[2] + pr[3];
}

constant int table[4] = {1, 2, 3, 4};

// A global pointer made from the address of constant data: readable, never writable.
kernel void constant_through_integer(global int *o, int write, int i) {
    global int *p = (global int *)(ulong)&table[0];
    if (write) p[i] = 9;
    o[get_global_id(0)] = p[i];
}

// A broadcast whose local id lies outside the work-group (found by the fuzz target: a mutated
// constant made it (1, 2^40), which read far outside the group's work-item frames).
kernel void broadcast_from(global int *o, ulong y) {
    int v = (int)get_local_id(0) * 3 + 5;
    o[get_global_id(1) * get_global_size(0) + get_global_id(0)] =
        work_group_broadcast(v, (size_t)1, (size_t)y);
}

typedef struct { int a[5]; } Five;

kernel void struct_copy(global Five *dst, global const Five *src, int shift) {
    int gid = get_global_id(0);
    dst[gid] = src[gid + shift];
}
"#;

const COMPLETE: cl_int = opencl3::event::CL_COMPLETE;
const FAILED: cl_int = opencl3::error_codes::CL_OUT_OF_RESOURCES;

/// Enqueues `kernel` over `global` work-items in groups of `local`, waits, and returns the
/// command's status.
fn launch(env: &Env, kernel: &Kernel, global: usize, local: usize) -> cl_int {
    launch_nd(env, kernel, &[global], &[local])
}

/// As [`launch`], in as many dimensions as `global` has.
fn launch_nd(env: &Env, kernel: &Kernel, global: &[usize], local: &[usize]) -> cl_int {
    // SAFETY: the sizes outlive the call; the arguments were set by the caller.
    let r = unsafe {
        env.queue.enqueue_nd_range_kernel(
            kernel.get(),
            global.len() as u32,
            ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            &[],
        )
    };
    let event = check(cl(r), "clEnqueueNDRangeKernel");
    check(cl(env.queue.finish()), "clFinish");
    check(
        cl(event.command_execution_status()),
        "CL_EVENT_COMMAND_EXECUTION_STATUS",
    )
    .0
}

/// The checked program at both recipes (optimised, and `-O0` where every variable stays in
/// memory), or None against another driver (checked mode is Ferrocl's).
fn programs(env: &Env) -> Vec<(String, Program)> {
    if env.other_icd {
        return Vec::new();
    }
    [CHECKED.to_owned(), format!("{CHECKED} -cl-opt-disable")]
        .into_iter()
        .map(|options| {
            let program = env.program_from_source(SOURCE, &options);
            (options, program)
        })
        .collect()
}

fn kernel(program: &Program, name: &str) -> Kernel {
    check(cl(Kernel::create(program, name)), "clCreateKernel")
}

#[test]
fn a_select_of_a_private_array_and_a_buffer_is_bounded_by_both() {
    let env = Env::new();
    const N: usize = 64;
    for (options, program) in programs(&env) {
        let k = kernel(&program, "select_write");
        for local in [1, N] {
            let out = env.buffer_filled(8 * N, -1i32);
            arg_buf(&k, 0, &out);
            // Inside the private array: the sum sees the write.
            for i in 0..4 {
                arg(&k, 1, &1i32);
                arg(&k, 2, &i);
                arg(&k, 3, &100i32);
                assert_eq!(launch(&env, &k, N, local), COMPLETE, "{options}: pr[{i}]");
                let got = env.read(&out, 8 * N);
                for gid in 0..N as i32 {
                    let want = 4 * gid + 6 - (gid + i) + 100;
                    assert_eq!(got[8 * gid as usize + 4], want, "{options}: pr[{i}], {gid}");
                }
            }
            // Past either end of the array: every write stopped, none lands in the frame
            // (0x41414141 40 ints on used to overwrite a saved register and spin forever).
            for i in (4..=32).chain(-4..=-1).chain([40]) {
                arg(&k, 1, &1i32);
                arg(&k, 2, &i);
                arg(&k, 3, &0x4141_4141i32);
                assert_eq!(
                    launch(&env, &k, N, local),
                    FAILED,
                    "{options}: pr[{i}], local size {local}"
                );
            }
            // The buffer side: inside the buffer passes, past its end fails.
            arg(&k, 1, &0i32);
            arg(&k, 2, &5i32);
            arg(&k, 3, &55i32);
            assert_eq!(launch(&env, &k, N, local), COMPLETE, "{options}: o[8g + 5]");
            let got = env.read(&out, 8 * N);
            assert!((0..N).all(|g| got[8 * g + 5] == 55), "{options}");
            arg(&k, 2, &8i32);
            assert_eq!(launch(&env, &k, N, local), FAILED, "{options}: o[8N]");
        }
    }
}

#[test]
fn a_private_pointer_made_from_an_integer_reaches_only_private_variables() {
    let env = Env::new();
    const N: usize = 64;
    let programs = programs(&env);
    let names = ["private_through_integer", "private_through_integer_barrier"];
    for ((options, program), name) in programs
        .iter()
        .flat_map(|p| names.iter().map(move |n| (p, *n)))
    {
        let k = kernel(program, name);
        let out = env.buffer_filled(N, 0i32);
        arg_buf(&k, 0, &out);
        for local in [1, N] {
            for i in 0..4 {
                arg(&k, 1, &i);
                assert_eq!(
                    launch(&env, &k, N, local),
                    COMPLETE,
                    "{name} {options}: pr[{i}]"
                );
                let got = env.read(&out, N);
                for gid in 0..N as i32 {
                    assert_eq!(
                        got[gid as usize],
                        10 * gid - (i + 1) * gid + 7,
                        "{name} {options}"
                    );
                }
            }
            // At -O0 every local of a kernel with barriers is a variable of the work-item
            // frame, so a few ints past `pr` are another private variable: there, go as far
            // as the next work-items' frames, which are not this work-item's memory.
            let wild: Vec<i32> = if options.contains("opt-disable") && name.ends_with("barrier") {
                vec![64, 200, 4096, -64, -200, -4096]
            } else {
                (4..=10).chain(-6..=-1).collect()
            };
            for i in wild {
                arg(&k, 1, &i);
                assert_eq!(
                    launch(&env, &k, N, local),
                    FAILED,
                    "{name} {options}: pr[{i}], local size {local}"
                );
            }
        }
    }
}

#[test]
fn writes_into_constant_data_are_faults_not_crashes() {
    let env = Env::new();
    for (options, program) in programs(&env) {
        let k = kernel(&program, "constant_through_integer");
        let out = env.buffer_filled(8, 0i32);
        arg_buf(&k, 0, &out);
        arg(&k, 1, &0i32);
        arg(&k, 2, &1i32);
        assert_eq!(launch(&env, &k, 8, 8), COMPLETE, "{options}: read");
        assert_eq!(env.read(&out, 8), vec![2; 8], "{options}");
        arg(&k, 1, &1i32);
        assert_eq!(launch(&env, &k, 8, 8), FAILED, "{options}: write");
        // Reading past the table is out of bounds too.
        arg(&k, 1, &0i32);
        arg(&k, 2, &4i32);
        assert_eq!(launch(&env, &k, 8, 8), FAILED, "{options}: read past");
    }
}

#[test]
fn a_broadcast_from_outside_the_group_is_a_fault_not_a_crash() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    for checked in [true, false] {
        let options = if checked { CHECKED } else { "-cl-std=CL3.0" };
        let program = env.program_from_source(SOURCE, options);
        let k = kernel(&program, "broadcast_from");
        let out = env.buffer_filled(16, -1i32);
        arg_buf(&k, 0, &out);
        // In the group: the value of work-item (1, 0).
        arg(&k, 1, &0u64);
        assert_eq!(launch_nd(&env, &k, &[4, 4], &[4, 4]), COMPLETE, "{options}");
        assert_eq!(env.read(&out, 16), vec![8; 16], "{options}");
        for y in [4u64, 1 << 40] {
            arg(&k, 1, &y);
            let status = launch_nd(&env, &k, &[4, 4], &[4, 4]);
            if checked {
                assert_eq!(status, FAILED, "y = {y}");
            } else {
                // Undefined, but never a read outside the group: work-item 0's value.
                assert_eq!(status, COMPLETE, "y = {y}");
                assert_eq!(env.read(&out, 16), vec![5; 16], "y = {y}");
            }
        }
    }
}

/// Assembles `text` and builds it: Ok, or the build log.
fn build_spirv(env: &Env, name: &str, text: &str) -> Result<(), String> {
    let il = common::assemble_text(name, text, "1.0");
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let none = std::ffi::CString::new("").expect("no NUL");
    match opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &none,
        None,
        ptr::null_mut(),
    ) {
        Ok(()) => Ok(()),
        Err(code) => {
            assert_eq!(code, opencl3::error_codes::CL_BUILD_PROGRAM_FAILURE);
            Err(program.get_build_log(env.device.id()).unwrap_or_default())
        }
    }
}

/// A kernel storing 7 through `%var`, declared by `declaration`.
fn store_module(declaration: &str) -> String {
    format!(
        r#"
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %uint = OpTypeInt 32 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
     %ptr_wg = OpTypePointer Workgroup %uint
     %ptr_uc = OpTypePointer UniformConstant %uint
         %c7 = OpConstant %uint 7
{declaration}
          %k = OpFunction %void None %fn
      %entry = OpLabel
               OpStore %var %c7
               OpReturn
               OpFunctionEnd
"#
    )
}

#[test]
fn stores_into_uniform_constant_are_refused_at_build() {
    let env = Env::new();
    if env.other_icd {
        return; // Debian's PoCL takes no SPIR-V
    }
    // The Storage Class operand says UniformConstant (read-only data), the type Workgroup.
    let mismatch = store_module("        %var = OpVariable %ptr_wg UniformConstant %c7");
    let log = build_spirv(&env, "storage-mismatch", &mismatch)
        .expect_err("a variable whose storage class differs from its type's must not build");
    assert!(
        log.contains(
            "Storage Class operand (UniformConstant) must be the same as the Storage \
                      Class of its result type (Workgroup)"
        ),
        "{log}"
    );
    // Consistent, but stored to.
    let constant = store_module("        %var = OpVariable %ptr_uc UniformConstant %c7");
    let log = build_spirv(&env, "store-constant", &constant)
        .expect_err("a store into UniformConstant must not build");
    assert!(
        log.contains("OpStore Pointer points to UniformConstant storage, which is read-only"),
        "{log}"
    );
    // The same variable only read builds.
    let read = store_module("        %var = OpVariable %ptr_uc UniformConstant %c7").replace(
        "               OpStore %var %c7\n",
        "          %x = OpLoad %uint %var\n",
    );
    build_spirv(&env, "read-constant", &read).expect("reading UniformConstant builds");
}

const CHILD: &str = "FERROCL_CHECKED_ESCAPES_CHILD";

/// The reports of the faults above, read from the stderr of a child process (the driver
/// writes each fault there once).
#[test]
fn reports_name_the_objects_and_the_real_size() {
    let name = "reports_name_the_objects_and_the_real_size";
    if std::env::var(CHILD).as_deref() != Ok(name) {
        if Env::new().other_icd {
            return;
        }
        let exe = std::env::current_exe().expect("test binary path");
        let out = Command::new(exe)
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, name)
            .env_remove("FERROCL_LOG")
            .output()
            .expect("run the test binary as a child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
        assert!(stdout.contains("1 passed"), "{stdout}");
        for want in [
            // The copy of a 20-byte struct, past the source buffer.
            "kernel 'struct_copy', work-item (3, 0, 0): read of 20 bytes at offset 80 of \
             argument 'src' (80 bytes) is out of bounds",
            "kernel 'constant_through_integer', work-item (0, 0, 0): write of 4 bytes at address",
            "the address is in __constant data, which is read-only",
            "kernel 'select_write', work-item (0, 0, 0): write of 4 bytes at address",
            "is outside each object the pointer may point into: argument 'o' or private \
             variable 'pr'",
        ] {
            assert!(stderr.contains(want), "no {want:?} in stderr:\n{stderr}");
        }
        return;
    }
    let env = Env::new();
    let program = env.program_from_source(SOURCE, CHECKED);
    let k = kernel(&program, "struct_copy");
    let src = env.buffer_filled(4 * 5, 1i32);
    let dst = env.buffer_filled(4 * 5, 0i32);
    arg_buf(&k, 0, &dst);
    arg_buf(&k, 1, &src);
    arg(&k, 2, &1i32);
    assert_eq!(launch(&env, &k, 4, 4), FAILED);
    let k = kernel(&program, "constant_through_integer");
    let out = env.buffer_filled(1, 0i32);
    arg_buf(&k, 0, &out);
    arg(&k, 1, &1i32);
    arg(&k, 2, &1i32);
    assert_eq!(launch(&env, &k, 1, 1), FAILED);
    let k = kernel(&program, "select_write");
    let out = env.buffer_filled(8, 0i32);
    arg_buf(&k, 0, &out);
    arg(&k, 1, &1i32);
    arg(&k, 2, &4i32);
    arg(&k, 3, &1i32);
    assert_eq!(launch(&env, &k, 1, 1), FAILED);
}
