//! Work-group shape rules through the system loader: per-kernel local memory
//! (`CL_KERNEL_LOCAL_MEM_SIZE`, launches at the device limit), which programs need uniform
//! work-groups (OpenCL C version, `-cl-uniform-work-group-size`, IL, clLinkProgram),
//! `SubgroupsPerWorkgroup` at launch, `reqd_work_group_size` at build and launch, the default
//! local size (`clGetKernelSuggestedLocalWorkSizeKHR` agrees with NULL launches), and kernels
//! whose barrier frames bound the work-group size.

mod common;

use std::ffi::{c_char, c_void, CString};
use std::ptr::{null, null_mut};

use common::*;
use opencl_sys::{
    cl_command_queue, cl_kernel, cl_kernel_sub_group_info, cl_platform_id,
    CL_INVALID_WORK_GROUP_SIZE, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, CL_OUT_OF_RESOURCES,
    CL_SUCCESS,
};

#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddressForPlatform(
        p: cl_platform_id,
        name: *const c_char,
    ) -> *mut c_void;
    fn clGetKernelSubGroupInfo(
        k: cl_kernel,
        d: cl_device_id,
        name: cl_kernel_sub_group_info,
        input_size: usize,
        input: *const c_void,
        size: usize,
        value: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
}

/// `__local` argument regions start at multiples of this many bytes in the arena (codegen's
/// `LOCAL_ARG_ALIGN`), which `CL_KERNEL_LOCAL_MEM_SIZE` counts.
const LOCAL_ARG_ALIGN: u64 = 128;

/// Enqueues `kernel` and waits; the enqueue's error code, or the command's failure.
fn launch(
    env: &Env,
    kernel: &Kernel,
    global: &[usize],
    local: Option<&[usize]>,
) -> Result<(), cl_int> {
    // SAFETY: the size arrays outlive the call; arguments are the caller's.
    let r = unsafe {
        env.queue.enqueue_nd_range_kernel(
            kernel.get(),
            global.len() as cl_uint,
            null(),
            global.as_ptr(),
            local.map_or(null(), |l| l.as_ptr()),
            &[],
        )
    };
    let event = cl(r)?;
    cl(event.wait())?;
    cl(env.queue.finish())
}

/// `clGetKernelSuggestedLocalWorkSizeKHR`, looked up the way applications find it.
fn suggested(env: &Env, kernel: &Kernel, global: &[usize]) -> Result<Vec<usize>, cl_int> {
    type Suggest = unsafe extern "C" fn(
        cl_command_queue,
        cl_kernel,
        cl_uint,
        *const usize,
        *const usize,
        *mut usize,
    ) -> cl_int;
    let name = CString::new("clGetKernelSuggestedLocalWorkSizeKHR").unwrap();
    // SAFETY: a valid platform and a NUL-terminated name.
    let f = unsafe { clGetExtensionFunctionAddressForPlatform(platform().id(), name.as_ptr()) };
    assert!(
        !f.is_null(),
        "clGetKernelSuggestedLocalWorkSizeKHR is exported"
    );
    // SAFETY: the extension's documented signature.
    let suggest = unsafe { std::mem::transmute::<*mut c_void, Suggest>(f) };
    let mut local = vec![0usize; global.len()];
    // SAFETY: arrays of work_dim values.
    let code = unsafe {
        suggest(
            env.queue.get(),
            kernel.get(),
            global.len() as cl_uint,
            null(),
            global.as_ptr(),
            local.as_mut_ptr(),
        )
    };
    if code == CL_SUCCESS {
        Ok(local)
    } else {
        Err(code)
    }
}

/// Builds OpenCL C `source` with `options`: the program, or the build log.
fn try_build(env: &Env, source: &str, options: &str) -> Result<Program, String> {
    env.try_program_from_source(source, options)
}

/// Builds SPIR-V `il` with `options`: the program, or the build log.
fn try_build_il(env: &Env, il: &[u8], options: &str) -> Result<Program, String> {
    let program = check(
        cl(Program::create_from_il(&env.context, il)),
        "clCreateProgramWithIL",
    );
    let c_options = CString::new(options).unwrap();
    match opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &c_options,
        None,
        null_mut(),
    ) {
        Ok(()) => Ok(program),
        Err(_) => Err(program.get_build_log(env.device.id()).unwrap_or_default()),
    }
}

/// Assembles SPIR-V assembly `text` for `env_version` (e.g. "spv1.0") with spirv-as.
fn assemble_text(text: &str, env_version: &str, tag: &str) -> Vec<u8> {
    let dir = std::env::temp_dir();
    let src = dir.join(format!("ferrocl-wgs-{}-{tag}.spvasm", std::process::id()));
    let out = src.with_extension("spv");
    std::fs::write(&src, text).unwrap();
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", env_version])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success(), "spirv-as {tag}");
    let words = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(src);
    let _ = std::fs::remove_file(out);
    words
}

/// `icd/tests/data/<name>.spvasm`, assembled for `env_version`.
fn assemble_file(name: &str, env_version: &str) -> Vec<u8> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/{name}.spvasm"));
    assemble_text(&std::fs::read_to_string(path).unwrap(), env_version, name)
}

fn kernel(program: &Program, name: &str) -> Kernel {
    check(cl(Kernel::create(program, name)), "clCreateKernel")
}

fn local_mem(env: &Env, k: &Kernel) -> u64 {
    check(
        cl(k.get_local_mem_size(env.device.id())),
        "CL_KERNEL_LOCAL_MEM_SIZE",
    )
}

const TWO_TILES: &str = r#"
kernel void small_tile(global int *out, local int *extra) {
    local int tile[64];
    size_t l = get_local_id(0);
    tile[l] = (int)l;
    extra[l] = (int)l * 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t next = (l + 1) % get_local_size(0);
    out[get_global_id(0)] = tile[next] + extra[next];
}

kernel void big_tile(global int *out, local int *first, local char *second) {
    local float big[8192];
    size_t l = get_local_id(0);
    big[l] = (float)l;
    first[l] = 100;
    second[l] = 7;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t next = (l + 1) % get_local_size(0);
    out[get_global_id(0)] = (int)big[next] + first[next] + second[next];
}
"#;

/// Each kernel of a program counts only its own `__local` variables, plus the `__local`
/// arguments set so far (unset ones count 0, API spec); each argument region starts at a
/// multiple of LOCAL_ARG_ALIGN, so the query is exactly the arena bytes a launch takes — the
/// number a launch compares with CL_DEVICE_LOCAL_MEM_SIZE. A launch at exactly the limit runs;
/// one byte more is CL_OUT_OF_RESOURCES.
#[test]
fn local_memory_is_counted_per_kernel() {
    if target().other_icd {
        return; // the exact values are Ferrocl's layout
    }
    let env = Env::new();
    let limit = check(cl(env.device.local_mem_size()), "CL_DEVICE_LOCAL_MEM_SIZE");
    assert!(limit >= 64 << 10, "CL_DEVICE_LOCAL_MEM_SIZE {limit}");
    assert_eq!(limit % LOCAL_ARG_ALIGN, 0);
    let program = env.program_from_source(TWO_TILES, "");
    let small = kernel(&program, "small_tile");
    let big = kernel(&program, "big_tile");
    assert_eq!(local_mem(&env, &small), 256, "int tile[64] only");
    assert_eq!(local_mem(&env, &big), 32768, "float big[8192] only");
    arg_local(&small, 1, 100);
    assert_eq!(local_mem(&env, &small), 256 + 100);
    arg_local(&big, 1, 1000);
    assert_eq!(local_mem(&env, &big), 32768 + 1000);
    arg_local(&big, 2, 10);
    assert_eq!(
        local_mem(&env, &big),
        (32768 + 1000u64).next_multiple_of(LOCAL_ARG_ALIGN) + 10
    );

    // At the device limit.
    let n = 64;
    let out = env.buffer_filled(n, -1i32);
    arg_buf(&small, 0, &out);
    arg_local(&small, 1, (limit - 256) as usize);
    assert_eq!(local_mem(&env, &small), limit);
    check(
        launch(&env, &small, &[n], Some(&[n])),
        "small_tile at the limit",
    );
    let want: Vec<i32> = (0..n).map(|l| 3 * ((l + 1) % n) as i32).collect();
    assert_eq!(env.read(&out, n), want);
    arg_local(&small, 1, (limit - 256 + 1) as usize);
    assert_eq!(
        launch(&env, &small, &[n], Some(&[n])),
        Err(CL_OUT_OF_RESOURCES)
    );

    let out = env.buffer_filled(n, -1i32);
    arg_buf(&big, 0, &out);
    arg_local(&big, 1, (limit - 32768 - LOCAL_ARG_ALIGN) as usize);
    arg_local(&big, 2, LOCAL_ARG_ALIGN as usize);
    assert_eq!(local_mem(&env, &big), limit);
    check(
        launch(&env, &big, &[n], Some(&[n])),
        "big_tile at the limit",
    );
    let want: Vec<i32> = (0..n).map(|l| ((l + 1) % n) as i32 + 107).collect();
    assert_eq!(env.read(&out, n), want);
    arg_local(&big, 2, LOCAL_ARG_ALIGN as usize + 1);
    assert_eq!(
        launch(&env, &big, &[n], Some(&[n])),
        Err(CL_OUT_OF_RESOURCES)
    );

    // Hand-written SPIR-V: the Workgroup array reached only through scan_via_helper's callee
    // counts for that kernel alone.
    let program = try_build_il(&env, &assemble_file("barriers", "spv1.0"), "").expect("builds");
    let scan = kernel(&program, "scan_via_helper");
    let reduce = kernel(&program, "tree_reduce");
    assert_eq!(local_mem(&env, &scan), 1024);
    assert_eq!(local_mem(&env, &reduce), 0);
    arg_local(&reduce, 2, 4 * 13);
    assert_eq!(local_mem(&env, &reduce), 4 * 13);
}

const LOCAL_SIZES: &str = r#"
kernel void sizes(global uint *out) {
    out[get_global_id(0)] = get_local_size(0);
}
"#;

/// Runs `sizes` over `global` work-items with `local`, checking every work-item saw its
/// group's size (the last group smaller when `global` is not a multiple).
fn check_sizes(env: &Env, k: &Kernel, global: usize, local: usize) {
    let out = env.buffer_filled(global, 0u32);
    arg_buf(k, 0, &out);
    check(launch(env, k, &[global], Some(&[local])), "sizes");
    let want: Vec<u32> = (0..global)
        .map(|i| local.min(global - i / local * local) as u32)
        .collect();
    assert_eq!(
        env.read(&out, global),
        want,
        "global {global} local {local}"
    );
}

/// OpenCL C before 2.0 (the default CL1.2) and `-cl-uniform-work-group-size` need the global
/// size to be a multiple of the local size; OpenCL C 3.0 and IL do not (API spec,
/// clEnqueueNDRangeKernel).
#[test]
fn uniform_work_groups_follow_the_program() {
    let env = Env::new();
    let non_uniform = |options: &str| {
        let program = env.program_from_source(LOCAL_SIZES, options);
        let k = kernel(&program, "sizes");
        let out = env.buffer_filled(100, 0u32);
        arg_buf(&k, 0, &out);
        launch(&env, &k, &[100], Some(&[8]))
    };
    assert_eq!(non_uniform(""), Err(CL_INVALID_WORK_GROUP_SIZE));
    assert_eq!(
        non_uniform("-cl-std=CL1.2"),
        Err(CL_INVALID_WORK_GROUP_SIZE)
    );
    assert_eq!(
        non_uniform("-cl-std=CL3.0 -cl-uniform-work-group-size"),
        Err(CL_INVALID_WORK_GROUP_SIZE)
    );
    assert_eq!(non_uniform("-cl-std=CL3.0"), Ok(()));

    let cl12 = env.program_from_source(LOCAL_SIZES, "");
    check_sizes(&env, &kernel(&cl12, "sizes"), 100, 10);
    let cl30 = env.program_from_source(LOCAL_SIZES, "-cl-std=CL3.0");
    check_sizes(&env, &kernel(&cl30, "sizes"), 100, 8);
    check_sizes(&env, &kernel(&cl30, "sizes"), 5, 8);

    if env.other_icd {
        return; // PoCL 3.1 takes no SPIR-V
    }
    // IL: only the option matters, not -cl-std.
    let il = assemble_file("barriers", "spv1.0");
    for (options, uniform) in [
        ("", false),
        ("-cl-std=CL1.2", false),
        ("-cl-uniform-work-group-size", true),
    ] {
        let program = try_build_il(&env, &il, options).expect("builds");
        let k = kernel(&program, "tree_reduce");
        let input = env.buffer(&vec![1i32; 100]);
        let out = env.buffer_filled(13, 0i32);
        arg_buf(&k, 0, &input);
        arg_buf(&k, 1, &out);
        arg_local(&k, 2, 4 * 8);
        let got = launch(&env, &k, &[100], Some(&[8]));
        if uniform {
            assert_eq!(got, Err(CL_INVALID_WORK_GROUP_SIZE), "IL with {options:?}");
        } else {
            assert_eq!(got, Ok(()), "IL with {options:?}");
            let mut want = vec![8; 12];
            want.push(4);
            assert_eq!(env.read(&out, 13), want);
        }
    }
}

const LINK_MAIN: &str = r#"
uint group_size(void);
kernel void sizes(global uint *out) {
    out[get_global_id(0)] = group_size();
}
"#;

const LINK_HELPER: &str = r#"
uint group_size(void) { return get_local_size(0); }
"#;

/// A linked program allows non-uniform work-groups only when every input does, whichever
/// input comes first.
#[test]
fn linked_programs_combine_the_uniform_rule() {
    let env = Env::new();
    let compile = |source: &str, options: &str| {
        let mut p = check(
            cl(Program::create_from_source(&env.context, source)),
            "clCreateProgramWithSource",
        );
        check(
            cl(p.compile(env.context.devices(), options, &[], &[])),
            "clCompileProgram",
        );
        p
    };
    let link = |inputs: &[&Program]| -> Kernel {
        let handles: Vec<_> = inputs.iter().map(|p| p.get()).collect();
        let options = CString::new("").unwrap();
        // SAFETY: the context's own device; valid compiled programs.
        let linked = unsafe {
            opencl3::program::link_program(
                env.context.get(),
                env.context.devices(),
                &options,
                &handles,
                None,
                null_mut(),
            )
        };
        let linked = check(linked, "clLinkProgram");
        let name = CString::new("sizes").unwrap();
        let k = check(
            opencl3::kernel::create_kernel(linked, &name),
            "clCreateKernel",
        );
        // SAFETY: the kernel keeps the program alive.
        check(
            unsafe { opencl3::program::release_program(linked) },
            "clReleaseProgram",
        );
        Kernel::new(k)
    };
    let main3 = compile(LINK_MAIN, "-cl-std=CL3.0");
    let helper3 = compile(LINK_HELPER, "-cl-std=CL3.0");
    let helper12 = compile(LINK_HELPER, "-cl-std=CL1.2");
    let helper_uniform = compile(LINK_HELPER, "-cl-std=CL3.0 -cl-uniform-work-group-size");
    let main12 = compile(LINK_MAIN, "");

    let both3 = link(&[&main3, &helper3]);
    check_sizes(&env, &both3, 100, 8);
    for (what, k) in [
        ("CL3.0 + CL1.2", link(&[&main3, &helper12])),
        ("CL3.0 + uniform option", link(&[&main3, &helper_uniform])),
        ("CL1.2 + CL3.0", link(&[&main12, &helper3])),
    ] {
        let out = env.buffer_filled(100, 0u32);
        arg_buf(&k, 0, &out);
        assert_eq!(
            launch(&env, &k, &[100], Some(&[8])),
            Err(CL_INVALID_WORK_GROUP_SIZE),
            "{what}"
        );
        check_sizes(&env, &k, 100, 20);
    }
}

/// A kernel with `SubgroupsPerWorkgroup 3` (tests/data/subgroup_dispatch.spvasm, sub-groups of
/// 4) launches only with 9 to 12 work-items per group; NULL launches and the suggested size
/// give it 12, and CL_KERNEL_WORK_GROUP_SIZE says 12.
#[test]
fn sub_groups_per_work_group_bounds_the_local_size() {
    if target().other_icd {
        return;
    }
    let env = Env::new();
    assert!(env.has_extension("cl_khr_subgroups"));
    let program =
        try_build_il(&env, &assemble_file("subgroup_dispatch", "spv1.3"), "").expect("builds");
    let k = kernel(&program, "fixed");
    assert_eq!(
        check(
            cl(k.get_work_group_size(env.device.id())),
            "CL_KERNEL_WORK_GROUP_SIZE"
        ),
        12
    );
    let out = env.buffer_filled(120, u32::MAX);
    arg_buf(&k, 0, &out);
    for bad in [[8usize, 1], [13, 1], [4, 4], [1, 1]] {
        assert_eq!(
            launch(&env, &k, &[120, 2], Some(&bad)),
            Err(CL_INVALID_WORK_GROUP_SIZE),
            "local {bad:?}"
        );
    }
    for good in [[12usize, 1], [9, 1], [5, 2], [10, 1]] {
        assert_eq!(
            launch(&env, &k, &[120, 2], Some(&good)),
            Ok(()),
            "local {good:?}"
        );
    }
    assert_eq!(suggested(&env, &k, &[120]), Ok(vec![12]));
    assert_eq!(suggested(&env, &k, &[100]), Ok(vec![12]));
    // Each work-item writes its sub-group id + 1000 (see the .spvasm); 100 = 8 groups of 12
    // and one of 4, all sub-groups full.
    let out = env.buffer_filled(100, u32::MAX);
    arg_buf(&k, 0, &out);
    check(launch(&env, &k, &[100], None), "NULL local size");
    let want: Vec<u32> = (0..100u32).map(|i| i % 12 / 4 + 1000).collect();
    assert_eq!(env.read(&out, 100), want);
    // The sub-group count query agrees.
    let info = |count: usize| {
        let mut local = usize::MAX;
        // SAFETY: input and output sized as passed.
        let code = unsafe {
            clGetKernelSubGroupInfo(
                k.get(),
                env.device.id(),
                CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                std::mem::size_of::<usize>(),
                (&count as *const usize).cast(),
                std::mem::size_of::<usize>(),
                (&mut local as *mut usize).cast(),
                null_mut(),
            )
        };
        assert_eq!(
            code, CL_SUCCESS,
            "CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT({count})"
        );
        local
    };
    assert_eq!(info(3), 12);
    assert_eq!(info(2), 0);
}

const REQUIRED: &str = r#"
kernel __attribute__((reqd_work_group_size(8, 4, 1))) void required(global uint *out) {
    if (get_global_id(0) == 0 && get_global_id(1) == 0) {
        out[0] = get_local_size(0);
        out[1] = get_local_size(1);
        out[2] = get_local_size(2);
    }
}
"#;

/// `reqd_work_group_size`: used for NULL launches (and suggested), its dimensionality checked
/// against the launch's, explicit sizes must match; sizes no launch could satisfy fail the
/// build with a log naming the kernel and the limit.
#[test]
fn required_work_group_size() {
    let env = Env::new();
    let program = env.program_from_source(REQUIRED, "");
    let k = kernel(&program, "required");
    assert_eq!(
        check(
            cl(k.get_work_group_size(env.device.id())),
            "CL_KERNEL_WORK_GROUP_SIZE"
        ),
        32
    );
    assert_eq!(
        check(
            cl(k.get_compile_work_group_size(env.device.id())),
            "CL_KERNEL_COMPILE_WORK_GROUP_SIZE"
        ),
        vec![8, 4, 1]
    );
    let out = env.buffer_filled(3, 0u32);
    arg_buf(&k, 0, &out);
    check(launch(&env, &k, &[64, 64], None), "2-D NULL launch");
    assert_eq!(env.read(&out, 3), vec![8, 4, 1]);
    check(launch(&env, &k, &[64, 64, 2], None), "3-D NULL launch");
    check(launch(&env, &k, &[64, 64], Some(&[8, 4])), "explicit 8×4");
    assert_eq!(
        launch(&env, &k, &[64, 64], Some(&[4, 8])),
        Err(CL_INVALID_WORK_GROUP_SIZE)
    );
    assert_eq!(
        launch(&env, &k, &[64], None),
        Err(CL_INVALID_WORK_GROUP_SIZE),
        "2-D size in 1-D"
    );
    assert_eq!(
        launch(&env, &k, &[64], Some(&[8])),
        Err(CL_INVALID_WORK_GROUP_SIZE)
    );
    // CL1.2 source: uniform, and 8 does not divide 60.
    assert_eq!(
        launch(&env, &k, &[60, 64], None),
        Err(CL_INVALID_WORK_GROUP_SIZE)
    );
    if !env.other_icd {
        assert_eq!(suggested(&env, &k, &[64, 64]), Ok(vec![8, 4]));
        assert_eq!(suggested(&env, &k, &[64]), Err(CL_INVALID_WORK_GROUP_SIZE));
    }
    // A CL3.0 program may end in a smaller group.
    let cl30 = env.program_from_source(REQUIRED, "-cl-std=CL3.0");
    let k = kernel(&cl30, "required");
    arg_buf(&k, 0, &out);
    check(launch(&env, &k, &[60, 62], None), "non-uniform NULL launch");
    assert_eq!(env.read(&out, 3), vec![8, 4, 1]);

    if env.other_icd {
        return; // the limits and logs below are Ferrocl's
    }
    let unbuildable = |attr: &str| {
        let source = format!(
            "kernel void fine(global int *o) {{ o[0] = 1; }}\n\
             kernel __attribute__((reqd_work_group_size({attr}))) void too_big(global int *o) {{ o[0] = 2; }}\n"
        );
        try_build(&env, &source, "")
            .err()
            .unwrap_or_else(|| panic!("reqd_work_group_size({attr}) built"))
    };
    let log = unbuildable("5000, 1, 1");
    assert!(
        log.contains("kernel 'too_big'")
            && log.contains("reqd_work_group_size(5000,1,1)")
            && log.contains("CL_DEVICE_MAX_WORK_ITEM_SIZES"),
        "{log}"
    );
    let log = unbuildable("64, 64, 2");
    assert!(
        log.contains("kernel 'too_big'") && log.contains("CL_DEVICE_MAX_WORK_GROUP_SIZE"),
        "{log}"
    );
    // The device maximum itself builds.
    let max = check(
        cl(env.device.max_work_group_size()),
        "CL_DEVICE_MAX_WORK_GROUP_SIZE",
    );
    assert!(max >= 4096);
    let at_max = format!(
        "kernel __attribute__((reqd_work_group_size({max}, 1, 1))) void at_max(global int *o) {{ o[get_global_id(0)] = get_local_size(0); }}\n"
    );
    let program = try_build(&env, &at_max, "").expect("the device maximum builds");
    let k = kernel(&program, "at_max");
    let out = env.buffer_filled(max, 0i32);
    arg_buf(&k, 0, &out);
    check(launch(&env, &k, &[max], None), "at_max");
    assert!(env.read(&out, max).iter().all(|&v| v as usize == max));
    // clang rejects a zero size in OpenCL C; SPIR-V can still say it.
    let zero = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "zero"
               OpExecutionMode %k LocalSize 0 1 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
          %k = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let Err(log) = try_build_il(&env, &assemble_text(zero, "spv1.0", "zero"), "") else {
        panic!("LocalSize 0 1 1 built");
    };
    assert!(
        log.contains("kernel 'zero'") && log.contains("zero dimension"),
        "{log}"
    );
}

/// With NULL local sizes the device picks about 256 work-items (more for a large range of a
/// kernel without barriers, below): divisors when the program
/// needs uniform groups, otherwise full groups of whole sub-groups with a smaller last one (a
/// prime global size no longer runs in groups of 1). The suggested size is the same choice.
#[test]
fn default_local_size() {
    if target().other_icd {
        return; // the choice is the implementation's
    }
    let env = Env::new();
    let source = r#"
kernel void shape(global uint *out) {
    out[2 * get_global_id(0)] = get_enqueued_local_size(0);
    out[2 * get_global_id(0) + 1] = get_local_size(0);
}
"#;
    let cl30 = env.program_from_source(source, "-cl-std=CL3.0");
    let k = kernel(&cl30, "shape");
    let n = 1009;
    let out = env.buffer_filled(2 * n, 0u32);
    arg_buf(&k, 0, &out);
    assert_eq!(suggested(&env, &k, &[1009]), Ok(vec![256]));
    assert_eq!(suggested(&env, &k, &[1024]), Ok(vec![256]));
    assert_eq!(suggested(&env, &k, &[300]), Ok(vec![150]));
    assert_eq!(suggested(&env, &k, &[10, 1009]), Ok(vec![10, 25]));
    check(launch(&env, &k, &[n], None), "NULL local size");
    let got = env.read(&out, 2 * n);
    for i in 0..n {
        let last = i >= 768;
        assert_eq!(got[2 * i], 256, "enqueued size of work-item {i}");
        assert_eq!(
            got[2 * i + 1],
            if last { 241 } else { 256 },
            "size of work-item {i}"
        );
    }
    // CL1.2 programs keep uniform groups: the largest divisor.
    let cl12 = env.program_from_source(LOCAL_SIZES, "");
    let k = kernel(&cl12, "sizes");
    assert_eq!(
        suggested(&env, &k, &[1009]),
        Err(opencl_sys::CL_INVALID_KERNEL_ARGS)
    );
    arg_buf(&k, 0, &out);
    assert_eq!(suggested(&env, &k, &[1009]), Ok(vec![1]));
    assert_eq!(suggested(&env, &k, &[1000]), Ok(vec![250]));
    // A large range of a kernel without barriers: up to 4096 work-items, 32 groups per
    // compute unit (1009 is prime: dimension 1 gets the rest of the budget).
    let budget = chosen_budget(&env, 1009 * 1024);
    let want = if budget >= 1009 {
        vec![1009, 1 << (budget / 1009).ilog2()]
    } else {
        vec![1, 1 << budget.ilog2()]
    };
    assert_eq!(suggested(&env, &k, &[1009, 1024]), Ok(want));
}

/// The budget of a chosen work-group of a kernel without barriers over `items` work-items:
/// 32 groups per compute unit, between 256 and 4096 work-items.
fn chosen_budget(env: &Env, items: usize) -> usize {
    let units = check(
        cl(env.device.max_compute_units()),
        "CL_DEVICE_MAX_COMPUTE_UNITS",
    ) as usize;
    (items / (units.max(1) * 32)).clamp(256, 4096)
}

/// Kernels without barriers get larger chosen groups on large ranges (each group is a call of
/// the work-group function); a kernel with a barrier keeps about 256 work-items.
#[test]
fn default_local_size_grows_without_barriers() {
    if target().other_icd {
        return; // the choice is the implementation's
    }
    let env = Env::new();
    let source = r#"
kernel void plain(global uint *out) {
    out[get_global_id(0)] = get_local_size(0);
}
kernel void with_barrier(global uint *out, local uint *tmp) {
    tmp[get_local_id(0)] = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - get_local_id(0)];
}
"#;
    let program = env.program_from_source(source, "-cl-std=CL3.0");
    let n = 1 << 20;
    let out = env.buffer_filled(n, 0u32);
    let plain = kernel(&program, "plain");
    arg_buf(&plain, 0, &out);
    let budget = chosen_budget(&env, n);
    let want = 1 << budget.ilog2();
    assert_eq!(suggested(&env, &plain, &[n]), Ok(vec![want]));
    check(launch(&env, &plain, &[n], None), "plain");
    let got = env.read(&out, n);
    assert!(got.iter().all(|&s| s as usize == want), "group sizes");
    // Small ranges keep groups of 256.
    assert_eq!(suggested(&env, &plain, &[4096]), Ok(vec![256]));
    let with_barrier = kernel(&program, "with_barrier");
    arg_buf(&with_barrier, 0, &out);
    arg_local(&with_barrier, 1, 4 * 4096);
    assert_eq!(suggested(&env, &with_barrier, &[n]), Ok(vec![256]));
    check(launch(&env, &with_barrier, &[n], None), "with_barrier");
    let got = env.read(&out, n);
    assert!(got.iter().all(|&s| s == 256), "group sizes with a barrier");
}

const BIG_FRAME: &str = r#"
kernel void big_frame(global int *out, int reads) {
    int priv[16384];
    size_t l = get_local_id(0);
    for (int i = 0; i < 16384; i++)
        priv[i] = (int)l + i;
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = 0;
    for (int i = 0; i < reads; i++)
        s += priv[(i * 7 + l) % 16384];
    out[get_global_id(0)] = s;
}
"#;

/// A kernel keeping 64 KiB of private memory per work-item across a barrier: its
/// CL_KERNEL_PRIVATE_MEM_SIZE says so, CL_KERNEL_WORK_GROUP_SIZE shrinks so a group's frames
/// stay within Ferrocl's 64 MiB budget, larger explicit sizes are refused with
/// CL_INVALID_WORK_GROUP_SIZE (not an abort of the host), and the largest allowed size runs.
#[test]
fn large_frames_bound_the_work_group_size() {
    if target().other_icd {
        return;
    }
    let env = Env::new();
    let program = env.program_from_source(BIG_FRAME, "-cl-std=CL3.0");
    let k = kernel(&program, "big_frame");
    let private = check(
        cl(k.get_private_mem_size(env.device.id())),
        "CL_KERNEL_PRIVATE_MEM_SIZE",
    );
    assert!(
        (65536..65536 + 4096).contains(&private),
        "CL_KERNEL_PRIVATE_MEM_SIZE {private}"
    );
    let max = check(
        cl(k.get_work_group_size(env.device.id())),
        "CL_KERNEL_WORK_GROUP_SIZE",
    );
    assert_eq!(
        max as u64,
        (64u64 << 20) / private,
        "frames of one group fit 64 MiB"
    );
    let reads = 5i32;
    let out = env.buffer_filled(4096, 0i32);
    arg_buf(&k, 0, &out);
    arg(&k, 1, &reads);
    assert_eq!(
        launch(&env, &k, &[4096], Some(&[4096])),
        Err(CL_INVALID_WORK_GROUP_SIZE)
    );
    assert_eq!(
        launch(&env, &k, &[4096], Some(&[max + 1])),
        Err(CL_INVALID_WORK_GROUP_SIZE)
    );
    let want = |n: usize, local: usize| -> Vec<i32> {
        (0..n)
            .map(|g| {
                let l = g % local;
                (0..reads)
                    .map(|i| l as i32 + ((i as usize * 7 + l) % 16384) as i32)
                    .sum()
            })
            .collect()
    };
    check(
        launch(&env, &k, &[max * 2], Some(&[max])),
        "the largest group",
    );
    assert_eq!(env.read(&out, max * 2), want(max * 2, max));
    // NULL: the chooser stays within the kernel's limit.
    let chosen = suggested(&env, &k, &[4096]).expect("suggested");
    assert!(chosen[0] <= max, "{chosen:?}");
    check(launch(&env, &k, &[4096], None), "NULL local size");
    assert_eq!(env.read(&out, 4096), want(4096, chosen[0]));
}
