//! Program-scope `__global` variables (`__opencl_c_program_scope_global_variables`) through the
//! loader, from OpenCL C 3.0 built by the device's compiler: initializers (scalars, arrays,
//! structs, addresses of other variables and of their elements), values shared by all kernels
//! of a program and kept across launches, separate programs having separate variables, and
//! `CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE`.

mod common;

use common::{arg_buf, Env};
use opencl3::program::Program;
use opencl_sys::*;

const SOURCE: &str = r#"
typedef struct { int a; float b; } pair;
global int counter = 5;
global float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
global pair pr = {7, 0.25f};
global int* p_counter = &counter;
global float* p_third = &table[2];
global float* global p_pair_b = &pr.b;
constant int cst[2] = {10, 20};
constant int* pc = &cst[1];
global int zeroed[8];

kernel void bump(global int* out) {
    size_t g = get_global_id(0);
    atomic_inc(&counter);
    atomic_add(&zeroed[g & 7], 1);
    out[g] = *pc + (int)(*p_third * 2.0f) + pr.a;
}

kernel void read_back(global float* out) {
    out[0] = (float)*p_counter;
    for (int i = 0; i < 8; i++)
        out[1 + i] = (float)zeroed[i];
    out[9] = *p_pair_b;
    out[10] = table[3];
}
"#;

fn build(env: &Env) -> Program {
    env.program_from_source(SOURCE, "-cl-std=CL3.0")
}

#[test]
fn globals_are_initialised_shared_and_persistent() {
    let env = Env::new();
    let features = env.device.opencl_c_features().unwrap_or_default();
    let has = features.iter().any(|f| {
        let name: Vec<u8> = f.name.iter().take_while(|&&c| c != 0).copied().collect();
        name == b"__opencl_c_program_scope_global_variables"
    });
    if !env.feature_or_skip("__opencl_c_program_scope_global_variables", has) {
        return;
    }
    let program = build(&env);
    let size = opencl3::program::get_program_build_info(
        program.get(),
        env.device.id(),
        CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
    )
    .map(usize::from)
    .unwrap();
    // counter 4 + table 16 + pair 8 + three pointers 24 + zeroed 32 (the constant-space ones
    // do not count), give or take alignment padding reported by the device: at least 84.
    assert!(size >= 84, "{size}");

    let bump = opencl3::kernel::Kernel::create(&program, "bump").unwrap();
    let read = opencl3::kernel::Kernel::create(&program, "read_back").unwrap();
    let n = 1000usize;
    let out = env.buffer_filled(n, 0i32);
    arg_buf(&bump, 0, &out);
    for _ in 0..3 {
        env.run(&bump, &[n], Some(&[8]), None);
    }
    // *pc = 20, *p_third = 3.5 -> 7, pr.a = 7.
    assert_eq!(env.read(&out, n), vec![34; n]);
    let back = env.buffer_filled(11, 0.0f32);
    arg_buf(&read, 0, &back);
    env.run(&read, &[1], None, None);
    let mut want = vec![(5 + 3 * n) as f32];
    want.extend([(3 * n / 8) as f32; 8]);
    want.extend([0.25, 4.5]);
    assert_eq!(
        env.read(&back, 11),
        want,
        "values persist across launches and kernels"
    );

    // A second program of the same source has its own, freshly initialised variables.
    let other = build(&env);
    let read2 = opencl3::kernel::Kernel::create(&other, "read_back").unwrap();
    arg_buf(&read2, 0, &back);
    env.run(&read2, &[1], None, None);
    assert_eq!(env.read(&back, 1), vec![5.0]);
}
