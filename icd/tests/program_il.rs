//! IL programs through the loader: specialization constants (`clSetProgramSpecializationConstant`
//! with its error codes, defaults, set values, `OpSpecConstantOp` folding) and separate
//! compilation (`clCompileProgram` + `clLinkProgram` of SPIR-V modules with `Import`/`Export`
//! linkage, libraries, unresolved imports reported by name).
//!
//! Only meaningful for Ferrocl: Debian's PoCL rejects IL, so against another ICD these tests
//! report that and pass without checking.

mod common;

use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::ptr;

use common::*;
use opencl3::program::{build_program, set_program_specialization_constant};
use opencl3::types::cl_program;
use opencl_sys::*;

/// Assembles `icd/tests/data/<name>.spvasm` with spirv-as (SPIR-V 1.0).
fn assemble(name: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    assemble_text(
        name,
        &std::fs::read_to_string(dir.join(format!("{name}.spvasm"))).expect("read .spvasm"),
    )
}

/// Assembles SPIR-V assembly `text` with spirv-as (SPIR-V 1.0); `name` tells the temporary
/// files apart.
fn assemble_text(name: &str, text: &str) -> Vec<u8> {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out =
        std::env::temp_dir().join(format!("ferrocl-il-{}-{n}-{name}.spv", std::process::id()));
    let source = out.with_extension("spvasm");
    std::fs::write(&source, text).expect("write .spvasm");
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success(), "spirv-as {name}");
    let words = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(out);
    let _ = std::fs::remove_file(source);
    words
}

fn ferrocl_only(env: &Env) -> bool {
    if env.other_icd {
        eprintln!("not checked: the ICD under test does not take SPIR-V");
        return false;
    }
    true
}

fn il_program(env: &Env, il: &[u8]) -> Program {
    check(
        cl(Program::create_from_il(&env.context, il)),
        "clCreateProgramWithIL",
    )
}

fn build(env: &Env, p: &Program) -> Result<(), cl_int> {
    let none = CString::new("").unwrap();
    build_program(p.get(), env.context.devices(), &none, None, ptr::null_mut())
}

fn set_spec<T>(p: &Program, id: u32, value: &T) -> Result<(), cl_int> {
    // SAFETY: value is readable for size_of::<T>() bytes.
    unsafe {
        set_program_specialization_constant(
            p.get(),
            id,
            std::mem::size_of::<T>(),
            (value as *const T).cast::<c_void>(),
        )
    }
}

/// Runs kernel `spec` of a built program: 4 uints and a float.
fn run_spec_kernel(env: &Env, p: &Program) -> (Vec<u32>, f32) {
    let k = check(cl(Kernel::create(p, "spec")), "clCreateKernel");
    let out = env.buffer_filled::<u32>(4, 0xdead);
    let fout = env.buffer_filled::<f32>(1, 0.0);
    arg_buf(&k, 0, &out);
    arg_buf(&k, 1, &fout);
    env.run(&k, &[1], None, None);
    (env.read(&out, 4), env.read(&fout, 1)[0])
}

#[test]
fn spec_constants_defaults_and_set_values() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let il = assemble("spec_constants");

    // Defaults: a = 7, b = 5, flag = true, f = 1.5.
    let p = il_program(&env, &il);
    build(&env, &p).unwrap_or_else(|e| {
        panic!(
            "build: {e}: {}",
            p.get_build_log(env.device.id()).unwrap_or_default()
        )
    });
    assert_eq!(run_spec_kernel(&env, &p), (vec![60, 7, 5, 0], 1.5));

    // Set values: a = 2, b = 9, flag = false, f = -3.25.
    let p = il_program(&env, &il);
    set_spec(&p, 1, &2u32).unwrap();
    set_spec(&p, 2, &9u32).unwrap();
    set_spec(&p, 3, &0u8).unwrap();
    set_spec(&p, 4, &-3.25f32).unwrap();
    build(&env, &p).unwrap();
    assert_eq!(run_spec_kernel(&env, &p), (vec![99, 9, 9, 1], -3.25));

    // A value set again replaces the earlier one; a rebuild picks it up.
    drop(p);
    let p = il_program(&env, &il);
    set_spec(&p, 1, &100u32).unwrap();
    set_spec(&p, 1, &3u32).unwrap();
    build(&env, &p).unwrap();
    assert_eq!(run_spec_kernel(&env, &p).0, vec![40, 3, 5, 1]);
}

#[test]
fn spec_constant_errors() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let p = il_program(&env, &assemble("spec_constants"));
    // No constant with SpecId 99.
    assert_eq!(set_spec(&p, 99, &1u32), Err(CL_INVALID_SPEC_ID));
    // Wrong size: a uint constant set with 8 bytes; a bool with 4 (bools take 1 byte).
    assert_eq!(set_spec(&p, 1, &1u64), Err(CL_INVALID_VALUE));
    assert_eq!(set_spec(&p, 3, &1u32), Err(CL_INVALID_VALUE));
    // NULL value.
    // SAFETY: a NULL value is the error under test.
    let null = unsafe { set_program_specialization_constant(p.get(), 1, 4, ptr::null()) };
    assert_eq!(null, Err(CL_INVALID_VALUE));
    // Not an IL program.
    let src = check(
        cl(Program::create_from_source(
            &env.context,
            "kernel void k() {}",
        )),
        "clCreateProgramWithSource",
    );
    assert_eq!(set_spec(&src, 1, &1u32), Err(CL_INVALID_PROGRAM));
    // Not a program at all.
    // SAFETY: an invalid handle is the error under test.
    let bad = unsafe {
        set_program_specialization_constant(
            ptr::null_mut::<c_void>() as cl_program,
            1,
            4,
            (&1u32 as *const u32).cast(),
        )
    };
    assert_eq!(bad, Err(CL_INVALID_PROGRAM));
}

#[link(name = "OpenCL")]
extern "C" {
    fn clLinkProgram(
        context: cl_context,
        num_devices: cl_uint,
        devices: *const cl_device_id,
        options: *const std::ffi::c_char,
        num_inputs: cl_uint,
        inputs: *const cl_program,
        notify: *const c_void,
        user_data: *mut c_void,
        errcode_ret: *mut cl_int,
    ) -> cl_program;
}

/// A program returned by clLinkProgram, released on drop.
struct Linked(cl_program);

impl Linked {
    fn log(&self, env: &Env) -> String {
        opencl3::program::get_program_build_info(self.0, env.device.id(), CL_PROGRAM_BUILD_LOG)
            .map(String::from)
            .unwrap_or_default()
    }

    fn kernel(&self, name: &str) -> Result<Kernel, cl_int> {
        let name = CString::new(name).unwrap();
        opencl3::kernel::create_kernel(self.0, &name).map(Kernel::new)
    }
}

impl Drop for Linked {
    fn drop(&mut self) {
        // SAFETY: the handle came from clLinkProgram and is released once.
        unsafe { opencl3::program::release_program(self.0).unwrap() };
    }
}

/// Anything clLinkProgram takes as input.
trait Input {
    fn handle(&self) -> cl_program;
}
impl Input for Program {
    fn handle(&self) -> cl_program {
        self.get()
    }
}
impl Input for Linked {
    fn handle(&self) -> cl_program {
        self.0
    }
}

/// clLinkProgram, keeping the program a failed link returns (its log says why).
fn link(env: &Env, inputs: &[&dyn Input], options: &str) -> (Option<Linked>, cl_int) {
    let handles: Vec<cl_program> = inputs.iter().map(|p| p.handle()).collect();
    let options = CString::new(options).unwrap();
    let mut err = CL_SUCCESS;
    // SAFETY: valid context and program handles; the arrays outlive the call.
    let p = unsafe {
        clLinkProgram(
            env.context.get(),
            0,
            ptr::null(),
            options.as_ptr(),
            handles.len() as cl_uint,
            handles.as_ptr(),
            ptr::null(),
            ptr::null_mut(),
            &mut err,
        )
    };
    ((!p.is_null()).then(|| Linked(p)), err)
}

/// clCompileProgram without headers.
fn compile(env: &Env, p: &Program, options: &str) -> Result<(), cl_int> {
    let options = CString::new(options).unwrap();
    opencl3::program::compile_program(
        p.get(),
        env.context.devices(),
        &options,
        &[],
        &[],
        None,
        ptr::null_mut(),
    )
}

fn compiled_il(env: &Env, name: &str) -> Program {
    let p = il_program(env, &assemble(name));
    compile(env, &p, "").unwrap_or_else(|e| {
        panic!(
            "clCompileProgram({name}): {e}\n{}",
            p.get_build_log(env.device.id()).unwrap_or_default()
        )
    });
    p
}

fn binary_type(env: &Env, p: &dyn Input) -> cl_program_binary_type {
    let v = opencl3::program::get_program_build_info(
        p.handle(),
        env.device.id(),
        CL_PROGRAM_BINARY_TYPE,
    )
    .unwrap();
    cl_program_binary_type::from(v)
}

/// Runs kernel `scale` of a linked program over 8 work-items.
fn run_scale(env: &Env, p: &Linked) -> Vec<u32> {
    let k = p.kernel("scale").expect("clCreateKernel");
    let out = env.buffer_filled::<u32>(8, 0);
    arg_buf(&k, 0, &out);
    env.run(&k, &[8], None, None);
    env.read(&out, 8)
}

/// out[i] = mul3(i) + table[i % 4] + twice(i).
fn expected_scale() -> Vec<u32> {
    (0..8u32)
        .map(|i| 3 * i + [10, 20, 30, 40][i as usize % 4] + 2 * i)
        .collect()
}

#[test]
fn il_objects_link_into_an_executable() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let main = compiled_il(&env, "link_main");
    let lib = compiled_il(&env, "link_lib");
    assert_eq!(
        binary_type(&env, &main),
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type
    );
    let (linked, err) = link(&env, &[&main, &lib], "");
    let linked = linked.unwrap();
    assert_eq!(err, CL_SUCCESS, "{}", linked.log(&env));
    assert_eq!(
        binary_type(&env, &linked),
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_program_binary_type
    );
    assert_eq!(run_scale(&env, &linked), expected_scale());
    // The inputs in the other order give the same program.
    let (linked, err) = link(&env, &[&lib, &main], "-cl-fast-relaxed-math");
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(run_scale(&env, &linked.unwrap()), expected_scale());
}

#[test]
fn libraries_link_later() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let lib = compiled_il(&env, "link_lib");
    let (library, err) = link(&env, &[&lib], "-create-library -enable-link-options");
    let library = library.unwrap();
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(
        binary_type(&env, &library),
        CL_PROGRAM_BINARY_TYPE_LIBRARY as cl_program_binary_type
    );
    // A library has no executable: no kernels can be created from it.
    assert_eq!(
        library.kernel("scale").err(),
        Some(CL_INVALID_PROGRAM_EXECUTABLE)
    );
    // A library of an object with unresolved imports is fine too.
    let main = compiled_il(&env, "link_main");
    let (main_library, err) = link(&env, &[&main], "-create-library");
    assert_eq!(err, CL_SUCCESS);
    let (linked, err) = link(&env, &[&main_library.unwrap(), &library], "");
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(run_scale(&env, &linked.unwrap()), expected_scale());
}

#[test]
fn link_failures_name_the_symbol() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let main = compiled_il(&env, "link_main");
    let lib = compiled_il(&env, "link_lib");

    let (p, err) = link(&env, &[&main], "");
    assert_eq!(err, CL_LINK_PROGRAM_FAILURE);
    let log = p.unwrap().log(&env);
    assert!(
        log.contains("unresolved import \"mul3\"") && log.contains("unresolved import \"table\""),
        "{log}"
    );
    assert!(
        !log.contains("__spirv_BuiltIn"),
        "built-ins are not imports to resolve: {log}"
    );

    let (p, err) = link(&env, &[&lib, &main, &lib], "");
    assert_eq!(err, CL_LINK_PROGRAM_FAILURE);
    let log = p.unwrap().log(&env);
    assert!(
        log.contains("\"mul3\" is defined by input program 0 and again by input program 2"),
        "{log}"
    );

    // Options: unknown ones and -enable-link-options without -create-library.
    assert_eq!(
        link(&env, &[&main, &lib], "-bogus").1,
        CL_INVALID_LINKER_OPTIONS
    );
    assert_eq!(
        link(&env, &[&main, &lib], "-enable-link-options").1,
        CL_INVALID_LINKER_OPTIONS
    );
    // clBuildProgram links nothing: the same imports are reported.
    let whole = il_program(&env, &assemble("link_main"));
    assert_eq!(build(&env, &whole), Err(CL_BUILD_PROGRAM_FAILURE));
    let log = whole.get_build_log(env.device.id()).unwrap();
    assert!(
        log.contains("unresolved import \"mul3\" (function"),
        "{log}"
    );
    assert!(
        log.contains("unresolved import \"table\" (variable"),
        "{log}"
    );

    // An IL program that was never compiled is not a linkable object.
    let raw = il_program(&env, &assemble("link_lib"));
    assert_eq!(link(&env, &[&main, &raw], "").1, CL_INVALID_OPERATION);
}

#[test]
fn opencl_c_objects_link() {
    let env = Env::new();
    let caller = check(
        cl(Program::create_from_source(
            &env.context,
            "int helper(int x);\n\
             kernel void use_helper(global int* out) { int i = get_global_id(0); out[i] = helper(i); }",
        )),
        "clCreateProgramWithSource",
    );
    let callee = check(
        cl(Program::create_from_source(
            &env.context,
            "int helper(int x) { return x * 7 - 2; }",
        )),
        "clCreateProgramWithSource",
    );
    compile(&env, &caller, "").unwrap();
    compile(&env, &callee, "").unwrap();
    let (linked, err) = link(&env, &[&caller, &callee], "");
    let linked = linked.unwrap();
    assert_eq!(err, CL_SUCCESS, "{}", linked.log(&env));
    let k = linked.kernel("use_helper").expect("clCreateKernel");
    let out = env.buffer_filled::<i32>(16, 0);
    arg_buf(&k, 0, &out);
    env.run(&k, &[16], None, None);
    assert_eq!(
        env.read(&out, 16),
        (0..16).map(|i| i * 7 - 2).collect::<Vec<i32>>()
    );
}

/// `cl_khr_spirv_queries`: the lists are what the frontend accepts.
#[test]
fn spirv_queries() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let id = env.device.id();
    let extensions = env.device.extensions().unwrap();
    assert!(extensions.contains("cl_khr_spirv_queries"), "{extensions}");
    let strings = |param| -> Vec<String> {
        let bytes = opencl3::device::get_device_data(id, param).unwrap();
        bytes
            .chunks_exact(std::mem::size_of::<usize>())
            .map(|c| {
                let p = usize::from_ne_bytes(c.try_into().unwrap()) as *const std::ffi::c_char;
                // SAFETY: the driver returns pointers to NUL-terminated strings it keeps alive.
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    };
    let sets = strings(CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR);
    assert!(sets.iter().any(|s| s == "OpenCL.std"), "{sets:?}");
    let spv_extensions = strings(CL_DEVICE_SPIRV_EXTENSIONS_KHR);
    for e in ["SPV_KHR_linkonce_odr", "SPV_KHR_no_integer_wrap_decoration"] {
        assert!(
            spv_extensions.iter().any(|s| s == e),
            "{e} in {spv_extensions:?}"
        );
    }
    let caps: Vec<u32> = opencl3::device::get_device_data(id, CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .unwrap()
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    // Addresses 4, Linkage 5, Kernel 6, Int64 11 are there; Shader 1 is not.
    for cap in [4, 5, 6, 11] {
        assert!(caps.contains(&cap), "capability {cap} in {caps:?}");
    }
    assert!(!caps.contains(&1), "{caps:?}");
}

/// Built-in variables in UniformConstant, as the SPIR-V 1.0-era LLVM/SPIR-V translator wrote
/// them, are taken as Input with one warning each in the build log, and the kernel computes;
/// the same built-ins in a storage class no generator used are still refused, and so is the
/// legacy form when its pointer type also serves an ordinary UniformConstant variable.
#[test]
fn legacy_uniform_constant_builtins_are_taken_as_input() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/legacy_builtins.spvasm"),
    )
    .unwrap();
    let p = il_program(&env, &assemble_text("legacy_builtins", &text));
    build(&env, &p).unwrap_or_else(|e| {
        panic!(
            "build: {e}: {}",
            p.get_build_log(env.device.id()).unwrap_or_default()
        )
    });
    let log = p.get_build_log(env.device.id()).unwrap();
    for builtin in ["GlobalInvocationId", "GlobalSize"] {
        assert_eq!(
            log.matches(&format!(
                "warning: env 2.9: built-in variable {builtin} is in the UniformConstant storage class"
            ))
            .count(),
            1,
            "{log}"
        );
    }
    assert_eq!(log.lines().count(), 2, "{log}");
    let k = check(cl(Kernel::create(&p, "legacy")), "clCreateKernel");
    const N: usize = 37;
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| 0.5 * i as f32).collect();
    let (da, db) = (env.buffer(&a), env.buffer(&b));
    let out = env.buffer_filled::<f32>(N, -1.0);
    arg_buf(&k, 0, &da);
    arg_buf(&k, 1, &db);
    arg_buf(&k, 2, &out);
    env.run(&k, &[N], None, None);
    let want: Vec<f32> = (0..N).map(|i| a[i] + b[i] * N as f32).collect();
    assert_eq!(env.read(&out, N), want);

    let refused = |name: &str, text: &str, expect: &str| {
        let p = il_program(&env, &assemble_text(name, text));
        assert_eq!(build(&env, &p), Err(CL_BUILD_PROGRAM_FAILURE), "{name}");
        let log = p.get_build_log(env.device.id()).unwrap();
        assert!(log.contains(expect), "{name}: {log}");
    };
    // CrossWorkgroup built-ins: no generator wrote them.
    let cross = text
        .replace(
            "OpTypePointer UniformConstant %v3ulong",
            "OpTypePointer CrossWorkgroup %v3ulong",
        )
        .replace(
            "OpTypePointer UniformConstant %ulong",
            "OpTypePointer CrossWorkgroup %ulong",
        )
        .replace(
            "OpVariable %ptr_builtin_v3ulong UniformConstant",
            "OpVariable %ptr_builtin_v3ulong CrossWorkgroup",
        );
    refused(
        "legacy_cross_workgroup",
        &cross,
        "built-in variable GlobalInvocationId must be in the Input storage class, found CrossWorkgroup",
    );
    // An ordinary constant of the built-in's pointer type: the type cannot change for both.
    let shared = text.replace(
        "     %kernel = OpFunction",
        "  %v3_null = OpConstantNull %v3ulong\n\
         %table = OpVariable %ptr_builtin_v3ulong UniformConstant %v3_null\n\
         %kernel = OpFunction",
    );
    refused(
        "legacy_shared_type",
        &shared,
        "built-in variable GlobalInvocationId must be in the Input storage class, found UniformConstant",
    );
}
