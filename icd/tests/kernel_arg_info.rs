//! clGetKernelArgInfo through the loader: address and access qualifiers, source type names,
//! type qualifiers and argument names of a kernel built from OpenCL C with
//! `-cl-kernel-arg-info`, CL_KERNEL_ARG_INFO_NOT_AVAILABLE without the option and for the same
//! kernel as IL even with it (only programs from source have argument info), and
//! CL_INVALID_ARG_INDEX.

mod common;

use std::ffi::CString;
use std::ptr;

use common::*;
use opencl3::kernel::get_kernel_arg_info;
use opencl_sys::*;

const SOURCE: &str = "typedef struct { int a; float b; } pair;
kernel void k(global const float* restrict a, global volatile int* b, constant int* c,
              local float4* l, pair p, const int n, global uint* restrict const u) {}";

fn built(env: &Env, options: &str) -> Program {
    let p = check(
        cl(Program::create_from_source(&env.context, SOURCE)),
        "clCreateProgramWithSource",
    );
    let options = CString::new(options).unwrap();
    opencl3::program::build_program(
        p.get(),
        env.context.devices(),
        &options,
        None,
        ptr::null_mut(),
    )
    .unwrap_or_else(|e| {
        panic!(
            "build: {e}: {}",
            p.get_build_log(env.device.id()).unwrap_or_default()
        )
    });
    p
}

/// A qualifier answer: cl_uint for address/access qualifiers, cl_bitfield for type qualifiers.
fn info_u64(k: &Kernel, index: u32, param: cl_kernel_arg_info) -> u64 {
    match get_kernel_arg_info(k.get(), index, param).unwrap() {
        cl3::info_type::InfoType::Uint(v) => u64::from(v),
        cl3::info_type::InfoType::Ulong(v) => v,
        other => panic!("param {param:#x}: unexpected answer {other:?}"),
    }
}

fn info_string(k: &Kernel, index: u32, param: cl_kernel_arg_info) -> String {
    String::from(get_kernel_arg_info(k.get(), index, param).unwrap())
}

#[test]
fn argument_info_from_opencl_c() {
    let env = Env::new();
    let p = built(&env, "-cl-kernel-arg-info");
    let k = check(cl(Kernel::create(&p, "k")), "clCreateKernel");
    let global = CL_KERNEL_ARG_ADDRESS_GLOBAL as u64;
    let constant = CL_KERNEL_ARG_ADDRESS_CONSTANT as u64;
    let local = CL_KERNEL_ARG_ADDRESS_LOCAL as u64;
    let private = CL_KERNEL_ARG_ADDRESS_PRIVATE as u64;
    let none = CL_KERNEL_ARG_TYPE_NONE as u64;
    let cst = CL_KERNEL_ARG_TYPE_CONST as u64;
    let restrict = CL_KERNEL_ARG_TYPE_RESTRICT as u64;
    let volatile = CL_KERNEL_ARG_TYPE_VOLATILE as u64;
    let expected = [
        ("a", "float*", global, cst | restrict),
        ("b", "int*", global, volatile),
        ("c", "int*", constant, cst),
        ("l", "float4*", local, none),
        ("p", "pair", private, none),
        ("n", "int", private, none),
        ("u", "uint*", global, restrict),
    ];
    for (i, (name, ty, address, quals)) in expected.into_iter().enumerate() {
        let i = i as u32;
        assert_eq!(info_string(&k, i, CL_KERNEL_ARG_NAME), name);
        assert_eq!(info_string(&k, i, CL_KERNEL_ARG_TYPE_NAME), ty, "{name}");
        assert_eq!(
            info_u64(&k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
            address,
            "{name}"
        );
        assert_eq!(
            info_u64(&k, i, CL_KERNEL_ARG_TYPE_QUALIFIER),
            quals,
            "{name}"
        );
        assert_eq!(
            info_u64(&k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER),
            CL_KERNEL_ARG_ACCESS_NONE as u64,
            "{name}"
        );
    }
    assert_eq!(
        get_kernel_arg_info(k.get(), 7, CL_KERNEL_ARG_NAME).err(),
        Some(CL_INVALID_ARG_INDEX)
    );
    assert_eq!(
        get_kernel_arg_info(k.get(), 0, 0x7777).err(),
        Some(CL_INVALID_VALUE)
    );
}

#[test]
fn argument_info_needs_the_option() {
    let env = Env::new();
    if env.other_icd {
        // PoCL answers argument info without the option, which the spec allows.
        return;
    }
    let p = built(&env, "");
    let k = check(cl(Kernel::create(&p, "k")), "clCreateKernel");
    assert_eq!(
        get_kernel_arg_info(k.get(), 0, CL_KERNEL_ARG_TYPE_NAME).err(),
        Some(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    );
}

/// API spec 3.1 §5.9.4: argument info is "only available if the program object ... is created
/// with clCreateProgramWithSource" (the Khronos CTS pipes `pipe_info` checks it in SPIR-V
/// mode).
#[test]
fn il_programs_have_no_argument_info() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let il = plain_spirv(SOURCE, &["-cl-std=CL1.2"]);
    let p = env.program_from_il(&il, "-cl-kernel-arg-info");
    let k = check(cl(Kernel::create(&p, "k")), "clCreateKernel");
    for param in [CL_KERNEL_ARG_TYPE_NAME, CL_KERNEL_ARG_ADDRESS_QUALIFIER] {
        assert_eq!(
            get_kernel_arg_info(k.get(), 0, param).err(),
            Some(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        );
    }
}

/// §5.9.4 again: CL_KERNEL_ATTRIBUTES is empty for kernels not created from OpenCL C source,
/// though the IL carries the attributes as execution modes (CTS api `kernel_attributes` in
/// SPIR-V mode).
#[test]
fn il_kernels_report_no_attributes() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let source = "kernel __attribute__((reqd_work_group_size(4, 2, 1))) \
                  __attribute__((vec_type_hint(float4))) void k(global int *a) {}";
    let il = plain_spirv(source, &["-cl-std=CL1.2"]);
    let p = env.program_from_il(&il, "");
    let k = check(cl(Kernel::create(&p, "k")), "clCreateKernel");
    assert_eq!(check(cl(k.attributes()), "CL_KERNEL_ATTRIBUTES"), "");
    // The required size still binds: it is the kernel's, not its description's.
    assert_eq!(
        check(
            cl(k.get_compile_work_group_size(env.device.id())),
            "CL_KERNEL_COMPILE_WORK_GROUP_SIZE"
        ),
        vec![4, 2, 1]
    );
}

/// CL_KERNEL_ATTRIBUTES of OpenCL C kernels: the attributes of the declaration, with
/// `vec_type_hint` keeping an unsigned type's name (SPIR-V's VecTypeHint has no signedness;
/// CTS api kernel_attributes).
#[test]
fn kernel_attributes_from_opencl_c() {
    const HINTS: &str = "
kernel __attribute__((vec_type_hint(uint4))) void u4(global int *a) {}
kernel __attribute__((vec_type_hint(uchar2))) void uc2(global int *a) {}
kernel __attribute__((vec_type_hint(ulong))) void ul(global int *a) {}
kernel __attribute__((vec_type_hint(short8))) void s8(global int *a) {}
kernel __attribute__((vec_type_hint(float16))) void f16(global int *a) {}
kernel __attribute__((reqd_work_group_size(4, 2, 1))) void reqd(global int *a) {}
kernel void none(global int *a) {}";
    let env = Env::new();
    let program = env.program_from_source(HINTS, "");
    for (name, want) in [
        ("u4", "vec_type_hint(uint4)"),
        ("uc2", "vec_type_hint(uchar2)"),
        ("ul", "vec_type_hint(ulong)"),
        ("s8", "vec_type_hint(short8)"),
        ("f16", "vec_type_hint(float16)"),
        ("reqd", "reqd_work_group_size(4,2,1)"),
        ("none", ""),
    ] {
        let k = check(cl(Kernel::create(&program, name)), "clCreateKernel");
        let got = check(cl(k.attributes()), "CL_KERNEL_ATTRIBUTES");
        assert_eq!(got, want, "kernel {name}");
    }
}
