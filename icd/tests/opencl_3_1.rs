//! OpenCL 3.1 through the loader: the platform and device report 3.1 (numeric versions, OpenCL C
//! 3.1 among the language versions while `CL_DEVICE_OPENCL_C_VERSION` stays 1.2), every
//! extension 3.1 requires and their queries under the core names, OpenCL C 3.1 builds with its
//! macros and the built-ins it makes core, a `__local` argument of zero bytes runs, objects of
//! another context are CL_INVALID_CONTEXT (clSetKernelArg, clCompileProgram's headers), and
//! with `FERROCL_SUBGROUPS=off` the device is an OpenCL 3.0 one (no OpenCL C 3.1, zero-size
//! local arguments refused). printf's `z` and `t` length modifiers are in `printf.rs`.

mod common;

use std::ffi::{c_char, c_void, CString};
use std::process::Command;
use std::ptr::{null, null_mut};

use common::*;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use opencl_sys::*;

/// The core names OpenCL 3.1 gives the queries of the extensions it promotes (OpenCL-Headers
/// `CL/cl.h` under `CL_VERSION_3_1`; the values of the KHR names).
const CL_DEVICE_UUID: cl_device_info = 0x106A;
const CL_DRIVER_UUID: cl_device_info = 0x106B;
const CL_DEVICE_LUID_VALID: cl_device_info = 0x106C;
const CL_DEVICE_NODE_MASK: cl_device_info = 0x106E;
const CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES: cl_device_info = 0x1073;
const CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4X8BIT_PACKED: u64 = 1 << 0;
const CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS: cl_device_info = 0x12B9;
const CL_DEVICE_SPIRV_EXTENSIONS: cl_device_info = 0x12BA;
const CL_DEVICE_SPIRV_CAPABILITIES: cl_device_info = 0x12BB;
/// `CL_DEVICE_MAX_WORK_GROUP_SIZES`, 3.1's name of `CL_DEVICE_MAX_WORK_ITEM_SIZES`.
const CL_DEVICE_MAX_WORK_GROUP_SIZES: cl_device_info = 0x1005;

#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddressForPlatform(
        platform: cl_platform_id,
        name: *const c_char,
    ) -> *mut c_void;
    fn clSetKernelArg(k: cl_kernel, index: cl_uint, size: usize, value: *const c_void) -> cl_int;
    fn clSetKernelExecInfo(
        k: cl_kernel,
        name: cl_kernel_exec_info,
        size: usize,
        value: *const c_void,
    ) -> cl_int;
    fn clCreateSamplerWithProperties(
        context: cl_context,
        properties: *const cl_sampler_properties,
        errcode_ret: *mut cl_int,
    ) -> cl_sampler;
    fn clReleaseSampler(sampler: cl_sampler) -> cl_int;
    fn clCreateProgramWithSource(
        context: cl_context,
        count: cl_uint,
        strings: *const *const c_char,
        lengths: *const usize,
        errcode_ret: *mut cl_int,
    ) -> cl_program;
    #[allow(clippy::too_many_arguments)]
    fn clCompileProgram(
        program: cl_program,
        num_devices: cl_uint,
        devices: *const cl_device_id,
        options: *const c_char,
        num_headers: cl_uint,
        headers: *const cl_program,
        header_names: *const *const c_char,
        notify: Option<extern "C" fn(cl_program, *mut c_void)>,
        user_data: *mut c_void,
    ) -> cl_int;
    fn clReleaseProgram(program: cl_program) -> cl_int;
}

const CHILD: &str = "FERROCL_V31_TEST_CHILD";

/// Runs test `name`'s body in a child process with `vars` set (the settings are read once per
/// process); in the child (`CHILD` = name) returns false and the caller runs the body.
fn in_child(name: &str, vars: &[(&str, &str)]) -> bool {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return false;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .env_remove("FERROCL_SUBGROUPS")
        .env_remove("FERROCL_SVM")
        .envs(vars.iter().copied())
        .output()
        .expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child {name} failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

fn platform_id() -> cl_platform_id {
    platform().id()
}

fn device_data(param: cl_device_info) -> Vec<u8> {
    cl3::device::get_device_data(device_id(), param)
        .unwrap_or_else(|e| panic!("clGetDeviceInfo({param:#x}): {e}"))
}

fn device_string(param: cl_device_info) -> String {
    let mut bytes = device_data(param);
    assert_eq!(bytes.pop(), Some(0), "NUL-terminated");
    String::from_utf8(bytes).expect("ASCII")
}

fn device_u32(param: cl_device_info) -> u32 {
    u32::from_ne_bytes(device_data(param)[..4].try_into().unwrap())
}

fn platform_data(param: cl_platform_info) -> Vec<u8> {
    cl3::platform::get_platform_data(platform_id(), param)
        .unwrap_or_else(|e| panic!("clGetPlatformInfo({param:#x}): {e}"))
}

/// The (name, version) pairs of a `cl_name_version` array query.
fn name_versions(param: cl_device_info) -> Vec<(String, cl_version)> {
    let bytes = device_data(param);
    let size = std::mem::size_of::<cl_name_version>();
    assert_eq!(bytes.len() % size, 0);
    bytes
        .chunks(size)
        .map(|c| {
            let version = u32::from_ne_bytes(c[..4].try_into().unwrap());
            let name = &c[4..];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            (String::from_utf8_lossy(&name[..end]).into_owned(), version)
        })
        .collect()
}

const fn version(major: u32, minor: u32) -> cl_version {
    (major << 22) | (minor << 12)
}

/// The OpenCL C versions of `CL_DEVICE_OPENCL_C_ALL_VERSIONS`, as (major, minor).
fn opencl_c_versions() -> Vec<(u32, u32)> {
    name_versions(CL_DEVICE_OPENCL_C_ALL_VERSIONS)
        .into_iter()
        .map(|(name, v)| {
            assert_eq!(name, "OpenCL C");
            (v >> 22, (v >> 12) & 0x3ff)
        })
        .collect()
}

/// Whether the platform under test is Ferrocl; another ICD (`FERROCL_TEST_PLATFORM_ICD`) is
/// not held to OpenCL 3.1.
fn ferrocl_or_skip(env: &Env) -> bool {
    if env.other_icd {
        eprintln!("skipped: OpenCL 3.1 is checked on Ferrocl only");
    }
    !env.other_icd
}

#[test]
fn platform_and_device_report_opencl_3_1() {
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    let text = |bytes: Vec<u8>| {
        String::from_utf8_lossy(&bytes)
            .trim_end_matches('\0')
            .to_owned()
    };
    assert_eq!(
        text(platform_data(CL_PLATFORM_VERSION)),
        "OpenCL 3.1 Ferrocl"
    );
    let numeric = u32::from_ne_bytes(
        platform_data(CL_PLATFORM_NUMERIC_VERSION)[..4]
            .try_into()
            .unwrap(),
    );
    assert_eq!(numeric, version(3, 1));
    assert_eq!(device_string(CL_DEVICE_VERSION), "OpenCL 3.1 Ferrocl");
    assert_eq!(device_u32(CL_DEVICE_NUMERIC_VERSION), version(3, 1));
    // API spec 3.1 §4.2: a 3.x device reports OpenCL C 1.2 here, the rest in ALL_VERSIONS.
    assert!(device_string(CL_DEVICE_OPENCL_C_VERSION).starts_with("OpenCL C 1.2 "));
    assert_eq!(
        device_u32(CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR),
        version(1, 2)
    );
    // OpenCL C 2.0 too: the device has every OpenCL C 2.0 feature (device-side enqueue and
    // pipes included).
    assert_eq!(
        opencl_c_versions(),
        [(1, 0), (1, 1), (1, 2), (2, 0), (3, 0), (3, 1)]
    );
}

/// API spec 3.1 §4.2.1: the nine extensions every 3.1 device reports, sub-groups (§4.2,
/// `CL_DEVICE_MAX_NUM_SUB_GROUPS`), SPIR-V 1.0 to 1.4; the queries of the promoted extensions
/// answered under their core names, `CL_DEVICE_HOST_UNIFIED_MEMORY` true for a CPU.
#[test]
fn the_extensions_and_queries_opencl_3_1_requires() {
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    let extensions = device_string(CL_DEVICE_EXTENSIONS);
    let with_version: Vec<String> = name_versions(CL_DEVICE_EXTENSIONS_WITH_VERSION)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for name in [
        "cl_khr_spirv_queries",
        "cl_khr_extended_bit_ops",
        "cl_khr_suggested_local_work_size",
        "cl_khr_device_uuid",
        "cl_khr_integer_dot_product",
        "cl_khr_subgroup_extended_types",
        "cl_khr_subgroup_rotate",
        "cl_khr_subgroup_shuffle",
        "cl_khr_subgroup_shuffle_relative",
    ] {
        assert!(
            extensions.split_whitespace().any(|e| e == name),
            "{name} missing from CL_DEVICE_EXTENSIONS"
        );
        assert!(with_version.iter().any(|e| e == name), "{name}");
    }
    assert!(device_u32(CL_DEVICE_MAX_NUM_SUB_GROUPS) > 0);
    let ils = device_string(CL_DEVICE_IL_VERSION);
    for minor in 0..=4 {
        let il = format!("SPIR-V_1.{minor}");
        assert!(ils.split_whitespace().any(|v| v == il), "{il} in {ils}");
    }
    // The core names are the KHR names' values: the same answers.
    assert_eq!(device_data(CL_DEVICE_UUID), device_data(CL_DEVICE_UUID_KHR));
    assert_eq!(device_data(CL_DEVICE_UUID).len(), 16);
    assert_eq!(device_data(CL_DRIVER_UUID).len(), 16);
    assert_eq!(device_data(CL_DEVICE_LUID_VALID), [0; 4]);
    assert_eq!(device_u32(CL_DEVICE_NODE_MASK), 0);
    let dot = u64::from_ne_bytes(
        device_data(CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES)[..8]
            .try_into()
            .unwrap(),
    );
    // API spec 3.1 §4.2: required of every device with OpenCL C 3.1.
    assert_ne!(dot & CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4X8BIT_PACKED, 0);
    assert!(!device_data(CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS).is_empty());
    assert!(!device_data(CL_DEVICE_SPIRV_EXTENSIONS).is_empty());
    assert!(!device_data(CL_DEVICE_SPIRV_CAPABILITIES).is_empty());
    assert_eq!(
        device_data(CL_DEVICE_MAX_WORK_GROUP_SIZES),
        device_data(CL_DEVICE_MAX_WORK_ITEM_SIZES)
    );
    // Clarified and no longer deprecated in 3.1: the device's memory is the host's.
    assert_eq!(device_u32(CL_DEVICE_HOST_UNIFIED_MEMORY), CL_TRUE);
    // clGetKernelSuggestedLocalWorkSize is core in 3.1; the loader reaches it as the KHR name.
    let name = CString::new("clGetKernelSuggestedLocalWorkSizeKHR").unwrap();
    // SAFETY: a valid platform and a NUL-terminated name.
    let f = unsafe { clGetExtensionFunctionAddressForPlatform(platform_id(), name.as_ptr()) };
    assert!(!f.is_null());
}

const VERSIONS_SOURCE: &str = r#"
kernel void versions(global int *out) {
    out[0] = __OPENCL_C_VERSION__;
    out[1] = CL_VERSION_3_1;
    out[2] = CL_VERSION_3_0;
    out[3] = __OPENCL_VERSION__;
#if defined(__opencl_c_atomic_scope_device) && defined(__opencl_c_atomic_order_seq_cst) \
    && defined(__opencl_c_work_group_collective_functions) && defined(__opencl_c_int64)
    out[4] = 1;
#else
    out[4] = 0;
#endif
#if __OPENCL_C_VERSION__ >= CL_VERSION_3_1
    out[5] = 31;
#else
    out[5] = 30;
#endif
}
"#;

const PROMOTED_SOURCE: &str = r#"
// Built-ins OpenCL C 3.1 makes core (extended bit operations, integer dot products, sub-group
// shuffles, relative shuffles, rotates and extended types).
kernel void promoted(global int *out) {
    uint l = get_sub_group_local_id();
    int x = 10 * (int)l + 1;
    global int *o = out + 8 * get_global_id(0);
    o[0] = sub_group_shuffle_xor(x, 1u);
    o[1] = sub_group_rotate(x, 1);
    o[2] = sub_group_shuffle_up(x, 1u);
    o[3] = sub_group_broadcast((char)x, 2u);
    o[4] = dot((char4)(1, -2, 3, -4), (char4)(5, 6, 7, 8));
    o[5] = (int)dot_4x8packed_uu_uint(0x01020304u, 0x01010101u);
    o[6] = (int)bitfield_extract_unsigned(0xABCDu, 4u, 8u);
    o[7] = (int)bit_reverse(1u);
}
"#;

fn run_versions(env: &Env, options: &str) -> Vec<i32> {
    let program = env.program_from_source(VERSIONS_SOURCE, options);
    let k = Kernel::create(&program, "versions").expect("clCreateKernel");
    let out = env.buffer_filled(6, -1i32);
    arg_buf(&k, 0, &out);
    env.run(&k, &[1], None, None);
    env.read(&out, 6)
}

#[test]
fn opencl_c_3_1_builds_with_its_macros_and_core_built_ins() {
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    // OpenCL C 3.1 §6.12: __OPENCL_C_VERSION__ 310, CL_VERSION_3_1 310; the device is 3.1.
    assert_eq!(
        run_versions(&env, "-cl-std=CL3.1"),
        [310, 310, 300, 310, 1, 31]
    );
    // CL_VERSION_3_1 is defined in every version, as clang defines CL_VERSION_3_0.
    assert_eq!(
        run_versions(&env, "-cl-std=CL3.0"),
        [300, 310, 300, 310, 1, 30]
    );
    assert_eq!(run_versions(&env, "")[..4], [120, 310, 300, 310]);
    for options in ["-cl-std=CL3.1", "-cl-std=CL3.1 -cl-opt-disable"] {
        let program = env.program_from_source(PROMOTED_SOURCE, options);
        let k = Kernel::create(&program, "promoted").expect("clCreateKernel");
        let out = env.buffer_filled(32, 0i32);
        arg_buf(&k, 0, &out);
        env.run(&k, &[4], Some(&[4]), None);
        let got = env.read(&out, 32);
        for l in 0..4usize {
            let x = |lane: usize| 10 * lane as i32 + 1;
            let o = &got[8 * l..8 * l + 8];
            assert_eq!(o[0], x(l ^ 1), "shuffle_xor, lane {l} ({options})");
            assert_eq!(o[1], x((l + 1) % 4), "rotate, lane {l} ({options})");
            if l > 0 {
                assert_eq!(o[2], x(l - 1), "shuffle_up, lane {l} ({options})");
            }
            assert_eq!(o[3], x(2), "broadcast of a char, lane {l} ({options})");
            assert_eq!(o[4], 5 - 12 + 21 - 32, "dot ({options})");
            assert_eq!(o[5], 10, "dot_4x8packed_uu_uint ({options})");
            assert_eq!(o[6], 0xBC, "bitfield_extract_unsigned ({options})");
            assert_eq!(o[7] as u32, 0x8000_0000, "bit_reverse ({options})");
        }
    }
}

const LOCAL_SOURCE: &str = r#"
kernel void reverse(local int *none, local int *scratch, global int *out) {
    uint l = get_local_id(0), n = get_local_size(0);
    scratch[l] = 3 * (int)get_global_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = scratch[n - 1 - l];
}

kernel void only_none(local float4 *none, global int *out) {
    out[get_global_id(0)] = (int)get_global_id(0) + 7;
}
"#;

/// API spec 3.1 §5.9.2: on an OpenCL 3.1 platform a `__local` argument may be zero bytes ("no
/// local memory is required"); the kernel runs.
#[test]
fn a_zero_size_local_argument_runs() {
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    let program = env.program_from_source(LOCAL_SOURCE, "-cl-std=CL3.1");
    let k = Kernel::create(&program, "reverse").expect("clCreateKernel");
    arg_local(&k, 0, 0);
    arg_local(&k, 1, 16 * 4);
    let out = env.buffer_filled(64, -1i32);
    arg_buf(&k, 2, &out);
    env.run(&k, &[64], Some(&[16]), None);
    let want: Vec<i32> = (0..64).map(|i| 3 * ((i / 16) * 16 + 15 - i % 16)).collect();
    assert_eq!(env.read(&out, 64), want);
    // The only local argument empty: no local memory at all.
    let k = Kernel::create(&program, "only_none").expect("clCreateKernel");
    arg_local(&k, 0, 0);
    let out = env.buffer_filled(32, -1i32);
    arg_buf(&k, 1, &out);
    env.run(&k, &[32], Some(&[8]), None);
    assert_eq!(env.read(&out, 32), (7..39).collect::<Vec<i32>>());
    // A non-NULL value is still refused.
    let v = 0i32;
    // SAFETY: a valid kernel; the value pointer is readable for the size given.
    let r = unsafe { clSetKernelArg(k.get(), 0, 0, (&v as *const i32).cast()) };
    assert_eq!(r, CL_INVALID_ARG_VALUE);
}

/// API spec 3.1 §5.9.2 (clSetKernelArg) and §5.8.5 (clCompileProgram): an object of another
/// context is CL_INVALID_CONTEXT.
#[test]
fn objects_of_another_context_are_invalid_context() {
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    let other = Env::new();
    let foreign = other.buffer_filled(4, 0i32);
    let program = env.program_from_source(
        "kernel void k(global int *p, sampler_t s) { p[0] = 1; }",
        "-cl-std=CL3.1",
    );
    let k = Kernel::create(&program, "k").expect("clCreateKernel");
    let mem = foreign.get();
    // SAFETY: valid handles; each value pointer is readable for the size given.
    unsafe {
        assert_eq!(
            clSetKernelArg(k.get(), 0, 8, (&mem as *const cl_mem).cast()),
            CL_INVALID_CONTEXT
        );
        let mut err = 0;
        let props: [cl_sampler_properties; 1] = [0];
        let sampler = clCreateSamplerWithProperties(other.context.get(), props.as_ptr(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            clSetKernelArg(k.get(), 1, 8, (&sampler as *const cl_sampler).cast()),
            CL_INVALID_CONTEXT
        );
        clReleaseSampler(sampler);
    }
    // A header program of another context.
    let header = CString::new("#define TWO 2\n").unwrap();
    let main =
        CString::new("#include \"two.h\"\nkernel void k(global int *p) { p[0] = TWO; }").unwrap();
    let name = CString::new("two.h").unwrap();
    // SAFETY: valid contexts and NUL-terminated sources; the programs are released below.
    unsafe {
        let mut err = 0;
        let sources = [header.as_ptr()];
        let foreign_header =
            clCreateProgramWithSource(other.context.get(), 1, sources.as_ptr(), null(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let sources = [main.as_ptr()];
        let p = clCreateProgramWithSource(env.context.get(), 1, sources.as_ptr(), null(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let names = [name.as_ptr()];
        let compile = |h: cl_program| {
            clCompileProgram(
                p,
                0,
                null(),
                null(),
                1,
                &h,
                names.as_ptr(),
                None,
                null_mut(),
            )
        };
        assert_eq!(compile(foreign_header), CL_INVALID_CONTEXT);
        let own_header = clCreateProgramWithSource(
            env.context.get(),
            1,
            [header.as_ptr()].as_ptr(),
            null(),
            &mut err,
        );
        assert_eq!(compile(own_header), CL_SUCCESS);
        for q in [foreign_header, own_header, p] {
            clReleaseProgram(q);
        }
    }
}

/// `FERROCL_SUBGROUPS=off` takes away what OpenCL 3.1 requires: the device and platform are
/// OpenCL 3.0, OpenCL C 3.1 is not offered (`-cl-std=CL3.1` fails the build, API spec 3.1
/// §5.8.6.5), and a `__local` argument of zero bytes is CL_INVALID_ARG_SIZE again.
#[test]
fn without_sub_groups_the_device_is_opencl_3_0() {
    if in_child(
        "without_sub_groups_the_device_is_opencl_3_0",
        &[("FERROCL_SUBGROUPS", "off")],
    ) {
        return;
    }
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    assert_eq!(device_string(CL_DEVICE_VERSION), "OpenCL 3.0 Ferrocl");
    assert_eq!(device_u32(CL_DEVICE_NUMERIC_VERSION), version(3, 0));
    let platform = platform_data(CL_PLATFORM_VERSION);
    assert_eq!(&platform[..], b"OpenCL 3.0 Ferrocl\0");
    assert_eq!(
        opencl_c_versions(),
        [(1, 0), (1, 1), (1, 2), (2, 0), (3, 0)]
    );
    let Err(log) = env.try_program_from_source(VERSIONS_SOURCE, "-cl-std=CL3.1") else {
        panic!("-cl-std=CL3.1 built on an OpenCL 3.0 device");
    };
    assert!(
        log.contains("CL_INVALID_BUILD_OPTIONS") || log.contains("-43"),
        "{log}"
    );
    assert!(log.contains("OpenCL C 3.1"), "{log}");
    // __OPENCL_VERSION__ follows the device.
    assert_eq!(
        run_versions(&env, "-cl-std=CL3.0"),
        [300, 310, 300, 300, 1, 30]
    );
    let program: Program = env.program_from_source(LOCAL_SOURCE, "-cl-std=CL3.0");
    let k = Kernel::create(&program, "only_none").expect("clCreateKernel");
    // SAFETY: a valid kernel; a local argument takes a NULL value.
    let r = unsafe { clSetKernelArg(k.get(), 0, 0, null::<c_void>()) };
    assert_eq!(r, CL_INVALID_ARG_SIZE);
}

/// API spec 3.1 §5.9.2, clSetKernelExecInfo: only `CL_TRUE` for
/// `CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM` needs fine-grain system SVM; `CL_FALSE` is taken
/// on a device without SVM.
#[test]
fn fine_grain_system_false_needs_no_svm() {
    if in_child(
        "fine_grain_system_false_needs_no_svm",
        &[("FERROCL_SVM", "off")],
    ) {
        return;
    }
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    let program = env.program_from_source("kernel void k(global int *p) { p[0] = 1; }", "");
    let k = Kernel::create(&program, "k").expect("clCreateKernel");
    let set = |value: cl_bool| {
        // SAFETY: a valid kernel; the value is one cl_bool.
        unsafe {
            clSetKernelExecInfo(
                k.get(),
                CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM,
                std::mem::size_of::<cl_bool>(),
                (&value as *const cl_bool).cast(),
            )
        }
    };
    assert_eq!(set(CL_FALSE), CL_SUCCESS);
    assert_eq!(set(CL_TRUE), CL_INVALID_OPERATION);
}

/// A program that hard-codes OpenCL C 2.0 (the CTS `pipe_info` test, programs written for
/// OpenCL 2.x devices) builds, using 2.0 features it never asks for; without
/// device-side enqueue the device lacks a 2.0 feature, does not list 2.0, and refuses
/// `-cl-std=CL2.0` (API spec §5.8.6.5).
const OPENCL_C_2_0_SOURCE: &str = r#"
kernel void twenty(global int *out, __write_only pipe int p) {
    global int *g = out;
    generic int *any = g;
    any[0] = __OPENCL_C_VERSION__;
    out[1] = get_kernel_work_group_size(^{ out[3] = 1; }) > 0 ? 1 : 2;
    out[2] = is_valid_reserve_id(reserve_write_pipe(p, 1)) ? 3 : 4;
}
"#;

#[test]
fn opencl_c_2_0_is_offered_with_every_2_0_feature() {
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    assert!(opencl_c_versions().contains(&(2, 0)));
    let program = env.program_from_source(OPENCL_C_2_0_SOURCE, "-cl-std=CL2.0");
    let names = program.get_kernel_names().expect("CL_PROGRAM_KERNEL_NAMES");
    // The block's kernel is the device's, not the program's.
    assert_eq!(names, "twenty");
    assert!(Kernel::create(&program, "twenty").is_ok());
}

#[test]
fn without_device_enqueue_opencl_c_2_0_is_not_offered() {
    if in_child(
        "without_device_enqueue_opencl_c_2_0_is_not_offered",
        &[("FERROCL_DEVICE_ENQUEUE", "off")],
    ) {
        return;
    }
    let env = Env::new();
    if !ferrocl_or_skip(&env) {
        return;
    }
    assert!(!opencl_c_versions().contains(&(2, 0)));
    let Err(log) = env.try_program_from_source(OPENCL_C_2_0_SOURCE, "-cl-std=CL2.0") else {
        panic!("-cl-std=CL2.0 built without device-side enqueue");
    };
    assert!(
        log.contains("CL_INVALID_BUILD_OPTIONS") || log.contains("-43"),
        "{log}"
    );
}
