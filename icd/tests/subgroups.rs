//! Sub-groups through the system loader: the device queries, `clGetKernelSubGroupInfo` (and
//! its KHR alias) with every query and error the spec lists, and one OpenCL C kernel using
//! sub-group built-ins, collectives and non-uniform operations, built by the driver itself.

mod common;

use std::ffi::{c_char, c_void, CString};
use std::ptr::null_mut;

use common::*;
use opencl_sys::{
    cl_bool, cl_device_info, cl_kernel, cl_kernel_sub_group_info, cl_name_version, cl_platform_id,
    CL_DEVICE_EXTENSIONS, CL_DEVICE_MAX_NUM_SUB_GROUPS, CL_DEVICE_MAX_WORK_GROUP_SIZE,
    CL_DEVICE_OPENCL_C_FEATURES, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
    CL_INVALID_DEVICE, CL_INVALID_KERNEL, CL_INVALID_VALUE, CL_KERNEL_COMPILE_NUM_SUB_GROUPS,
    CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, CL_KERNEL_MAX_NUM_SUB_GROUPS,
    CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, CL_SUCCESS,
    CL_TRUE,
};

#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddressForPlatform(
        p: cl_platform_id,
        name: *const c_char,
    ) -> *mut c_void;
    fn clGetDeviceInfo(
        d: cl_device_id,
        name: cl_device_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
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

/// Work-items per sub-group on Ferrocl (codegen's `SUB_GROUP_SIZE`).
const SIZE: usize = 4;

const SOURCE: &str = r#"
kernel void sg(global const int *in, global int *out) {
    size_t g = get_global_id(0);
    int x = in[g];
    uint l = get_sub_group_local_id();
    global int *o = out + g * 8;
    o[0] = get_sub_group_id();
    o[1] = l;
    o[2] = get_sub_group_size();
    o[3] = get_num_sub_groups();
    o[4] = sub_group_reduce_add(x);
    o[5] = sub_group_scan_exclusive_max(x);
    o[6] = (l % 2 == 0) ? sub_group_non_uniform_reduce_add(x) : (int)sub_group_ballot(x > 0).x;
    o[7] = sub_group_shuffle_xor(x, 1);
}
"#;

type SubGroupInfoFn = unsafe extern "C" fn(
    cl_kernel,
    cl_device_id,
    cl_kernel_sub_group_info,
    usize,
    *const c_void,
    usize,
    *mut c_void,
    *mut usize,
) -> cl_int;

fn build(env: &Env) -> Kernel {
    let program = check(
        cl(Program::create_from_source(&env.context, SOURCE)),
        "clCreateProgramWithSource",
    );
    let options = CString::new("-cl-std=CL3.0").expect("options");
    if let Err(code) = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &options,
        None,
        null_mut(),
    ) {
        let log = program.get_build_log(env.device.id()).unwrap_or_default();
        panic!(
            "clBuildProgram failed: {} ({code})\n{log}",
            error_text(code)
        );
    }
    check(cl(Kernel::create(&program, "sg")), "clCreateKernel")
}

/// One `size_t`-valued query; `Err(code)` on failure.
fn query(
    f: SubGroupInfoFn,
    kernel: cl_kernel,
    device: cl_device_id,
    name: cl_kernel_sub_group_info,
    input: &[usize],
) -> Result<usize, cl_int> {
    let mut out = 0usize;
    let mut size = 0usize;
    // SAFETY: input is readable for its length, out/size writable.
    let code = unsafe {
        f(
            kernel,
            device,
            name,
            std::mem::size_of_val(input),
            if input.is_empty() {
                std::ptr::null()
            } else {
                input.as_ptr().cast()
            },
            std::mem::size_of::<usize>(),
            (&mut out as *mut usize).cast(),
            &mut size,
        )
    };
    if code != CL_SUCCESS {
        return Err(code);
    }
    assert_eq!(size, std::mem::size_of::<usize>());
    Ok(out)
}

fn local_size_for(
    f: SubGroupInfoFn,
    kernel: cl_kernel,
    device: cl_device_id,
    count: usize,
    dims: usize,
) -> Result<Vec<usize>, cl_int> {
    let mut out = vec![usize::MAX; dims];
    let mut size = 0usize;
    // SAFETY: input one readable size_t, out writable for dims values.
    let code = unsafe {
        f(
            kernel,
            device,
            CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
            std::mem::size_of::<usize>(),
            (&count as *const usize).cast(),
            dims * std::mem::size_of::<usize>(),
            out.as_mut_ptr().cast(),
            &mut size,
        )
    };
    if code != CL_SUCCESS {
        return Err(code);
    }
    assert_eq!(size, dims * std::mem::size_of::<usize>());
    Ok(out)
}

fn device_info_bytes(d: cl_device_id, name: cl_device_info) -> Vec<u8> {
    let mut size = 0;
    // SAFETY: size query, then a read into a buffer of that size.
    unsafe {
        assert_eq!(
            clGetDeviceInfo(d, name, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        let mut buf = vec![0u8; size];
        assert_eq!(
            clGetDeviceInfo(d, name, size, buf.as_mut_ptr().cast(), null_mut()),
            CL_SUCCESS
        );
        buf
    }
}

#[test]
fn device_reports_sub_groups() {
    if target().other_icd {
        return;
    }
    let d = device_id();
    let ext = String::from_utf8(device_info_bytes(d, CL_DEVICE_EXTENSIONS)).expect("utf-8");
    let ext = ext.trim_end_matches('\0');
    for e in [
        "cl_khr_subgroups",
        "cl_khr_subgroup_extended_types",
        "cl_khr_subgroup_non_uniform_vote",
        "cl_khr_subgroup_ballot",
        "cl_khr_subgroup_non_uniform_arithmetic",
        "cl_khr_subgroup_shuffle",
        "cl_khr_subgroup_shuffle_relative",
        "cl_khr_subgroup_clustered_reduce",
        "cl_khr_subgroup_rotate",
    ] {
        assert!(ext.split(' ').any(|x| x == e), "{e} missing from {ext}");
    }
    let features = device_info_bytes(d, CL_DEVICE_OPENCL_C_FEATURES);
    let name_size = std::mem::size_of::<cl_name_version>();
    let names: Vec<String> = features
        .chunks(name_size)
        .map(|c| {
            let name = &c[4..];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            String::from_utf8_lossy(&name[..end]).into_owned()
        })
        .collect();
    assert!(
        names.iter().any(|n| n == "__opencl_c_subgroups"),
        "{names:?}"
    );
    let max_wg = usize::from_ne_bytes(
        device_info_bytes(d, CL_DEVICE_MAX_WORK_GROUP_SIZE)[..8]
            .try_into()
            .expect("size_t"),
    );
    let num = cl_uint::from_ne_bytes(
        device_info_bytes(d, CL_DEVICE_MAX_NUM_SUB_GROUPS)[..4]
            .try_into()
            .expect("cl_uint"),
    );
    assert_eq!(num as usize, max_wg.div_ceil(SIZE));
    let ifp = cl_bool::from_ne_bytes(
        device_info_bytes(d, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS)[..4]
            .try_into()
            .expect("cl_bool"),
    );
    // cl_khr_subgroups requires it: spin loops on atomics yield (forward_progress.rs).
    assert_eq!(ifp, CL_TRUE);
}

#[test]
fn kernel_sub_group_info_queries_and_errors() {
    if target().other_icd {
        return;
    }
    let env = Env::new();
    let kernel = build(&env);
    let k = kernel.get();
    let d = env.device.id();
    let platform: cl_platform_id = platform().id();
    let name = CString::new("clGetKernelSubGroupInfoKHR").expect("name");
    // SAFETY: a valid platform and NUL-terminated name.
    let khr = unsafe { clGetExtensionFunctionAddressForPlatform(platform, name.as_ptr()) };
    assert!(!khr.is_null(), "clGetKernelSubGroupInfoKHR is not exported");
    // SAFETY: the driver returns a function with exactly this signature.
    let khr: SubGroupInfoFn = unsafe { std::mem::transmute(khr) };
    let core: SubGroupInfoFn = clGetKernelSubGroupInfo;
    for f in [core, khr] {
        for (local, max, count) in [
            (&[10usize][..], 4, 3),
            (&[3][..], 3, 1),
            (&[8][..], 4, 2),
            (&[3, 2][..], 4, 2),
            (&[3, 1, 3][..], 4, 3),
            (&[16, 16, 4][..], 4, 256),
        ] {
            assert_eq!(
                query(f, k, d, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, local),
                Ok(max),
                "{local:?}"
            );
            assert_eq!(
                query(f, k, d, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, local),
                Ok(count),
                "{local:?}"
            );
        }
        let kernel_max_wg = check(
            cl(kernel.get_work_group_size(d)),
            "CL_KERNEL_WORK_GROUP_SIZE",
        );
        assert_eq!(
            query(f, k, d, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[]),
            Ok(kernel_max_wg.div_ceil(SIZE))
        );
        assert_eq!(query(f, k, d, CL_KERNEL_COMPILE_NUM_SUB_GROUPS, &[]), Ok(0));
        assert_eq!(local_size_for(f, k, d, 3, 1), Ok(vec![12]));
        assert_eq!(local_size_for(f, k, d, 5, 3), Ok(vec![20, 1, 1]));
        assert_eq!(local_size_for(f, k, d, 0, 2), Ok(vec![0, 0]));
        // More sub-groups than the largest work-group holds.
        assert_eq!(local_size_for(f, k, d, kernel_max_wg, 1), Ok(vec![0]));
        // Size only.
        let mut size = 0usize;
        let count = 2usize;
        // SAFETY: readable input, writable size.
        let code = unsafe {
            f(
                k,
                d,
                CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                8,
                (&count as *const usize).cast(),
                0,
                null_mut(),
                &mut size,
            )
        };
        assert_eq!((code, size), (CL_SUCCESS, 3 * std::mem::size_of::<usize>()));

        // Errors.
        let ok_local = [8usize];
        assert_eq!(
            query(f, null_mut(), d, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[]),
            Err(CL_INVALID_KERNEL)
        );
        assert_eq!(
            query(
                f,
                k,
                d.cast::<u8>().wrapping_add(8).cast(),
                CL_KERNEL_MAX_NUM_SUB_GROUPS,
                &[]
            ),
            Err(CL_INVALID_DEVICE)
        );
        assert_eq!(
            query(f, k, d, 0x7fff_ffff, &ok_local),
            Err(CL_INVALID_VALUE)
        );
        for bad in [&[][..], &[1usize, 2, 3, 4][..]] {
            assert_eq!(
                query(f, k, d, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, bad),
                Err(CL_INVALID_VALUE)
            );
            assert_eq!(
                query(f, k, d, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, bad),
                Err(CL_INVALID_VALUE)
            );
        }
        let mut out = 0usize;
        // SAFETY: each call passes a readable input of the stated size (or NULL) and a writable
        // output of the stated size.
        unsafe {
            // input_value NULL with a size; a size that is not a multiple of size_t.
            for (input, input_size) in [(std::ptr::null(), 8usize), (ok_local.as_ptr().cast(), 5)] {
                for q in [
                    CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                    CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                    CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                ] {
                    let code = f(
                        k,
                        d,
                        q,
                        input_size,
                        input,
                        8,
                        (&mut out as *mut usize).cast(),
                        null_mut(),
                    );
                    assert_eq!(
                        code, CL_INVALID_VALUE,
                        "query {q:#x} input size {input_size}"
                    );
                }
            }
            // param_value too small for the result.
            let code = f(
                k,
                d,
                CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                8,
                ok_local.as_ptr().cast(),
                4,
                (&mut out as *mut usize).cast(),
                null_mut(),
            );
            assert_eq!(code, CL_INVALID_VALUE);
            let code = f(
                k,
                d,
                CL_KERNEL_MAX_NUM_SUB_GROUPS,
                0,
                std::ptr::null(),
                2,
                (&mut out as *mut usize).cast(),
                null_mut(),
            );
            assert_eq!(code, CL_INVALID_VALUE);
        }
    }
}

#[test]
fn sub_group_kernel_runs() {
    if target().other_icd {
        return;
    }
    let env = Env::new();
    let kernel = build(&env);
    // 14 work-items in groups of 6 (the last group has 2): sub-groups of 4, 2, 4, 2, 2.
    let n = 14;
    let local = 6;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 7 % 11) - 4).collect();
    let bin = env.buffer(&input);
    let bout = env.buffer_filled(n * 8, i32::MIN);
    arg_buf(&kernel, 0, &bin);
    arg_buf(&kernel, 1, &bout);
    env.run(&kernel, &[n], Some(&[local]), None);
    let out = env.read(&bout, n * 8);
    for group_start in (0..n).step_by(local) {
        let group: Vec<usize> = (group_start..(group_start + local).min(n)).collect();
        for (sg_index, members) in group.chunks(SIZE).enumerate() {
            let xs: Vec<i32> = members.iter().map(|&g| input[g]).collect();
            let even_sum: i32 = xs.iter().step_by(2).sum();
            // Only the odd lanes execute the ballot.
            let ballot: i32 = (0..xs.len())
                .filter(|&j| j % 2 == 1 && xs[j] > 0)
                .map(|j| 1 << j)
                .sum();
            for (l, &g) in members.iter().enumerate() {
                let want = [
                    sg_index as i32,
                    l as i32,
                    xs.len() as i32,
                    group.len().div_ceil(SIZE) as i32,
                    xs.iter().sum(),
                    xs[..l].iter().copied().max().unwrap_or(i32::MIN),
                    if l % 2 == 0 { even_sum } else { ballot },
                    if l ^ 1 < xs.len() {
                        xs[l ^ 1]
                    } else {
                        out[g * 8 + 7]
                    },
                ];
                assert_eq!(&out[g * 8..g * 8 + 8], &want, "work-item {g}");
            }
        }
    }
}

#[test]
fn sub_group_kernel_from_il_runs_with_both_recipes() {
    let env = Env::new();
    // 2-D: 5 x 3 work-items in groups of 3 x 2 (6 work-items: sub-groups of 4 and 2; the
    // last column of groups has 2 x 2 and 2 x 1 work-items).
    let global = [5usize, 3];
    let local = [3usize, 2];
    let n = global[0] * global[1];
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 5 % 9) - 2).collect();
    for opt in OPTS {
        let kernel = env.kernel("subgroup_basic", opt, "subgroup_basic");
        let bin = env.buffer(&input);
        let bout = env.buffer_filled(n * 5, i32::MIN);
        arg_buf(&kernel, 0, &bin);
        arg_buf(&kernel, 1, &bout);
        env.run(&kernel, &global, Some(&local), None);
        let out = env.read(&bout, n * 5);
        for gy in 0..global[1].div_ceil(local[1]) {
            for gx in 0..global[0].div_ceil(local[0]) {
                // The group's work-items in linear local order, as global linear ids.
                let mut items = Vec::new();
                for y in gy * local[1]..((gy + 1) * local[1]).min(global[1]) {
                    for x in gx * local[0]..((gx + 1) * local[0]).min(global[0]) {
                        items.push(y * global[0] + x);
                    }
                }
                for members in items.chunks(SIZE) {
                    let xs: Vec<i32> = members.iter().map(|&g| input[g]).collect();
                    for (l, &g) in members.iter().enumerate() {
                        let o = &out[g * 5..g * 5 + 5];
                        let want = [
                            l as i32,
                            xs.iter().sum(),
                            *xs[..=l].iter().min().expect("non-empty"),
                            xs[0],
                        ];
                        assert_eq!(&o[..4], &want, "{opt:?} work-item {g}");
                        assert_eq!(o[4] != 0, xs.contains(&3), "{opt:?} work-item {g}: any");
                    }
                }
            }
        }
    }
}

/// Assembles `icd/tests/data/<name>.spvasm` as SPIR-V 1.3 (spirv-val's OpenCL environments stop
/// at 2.2, SPIR-V 1.2, so it is checked as plain SPIR-V 1.3).
fn assemble_1_3(name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    assemble_at(&dir.join(format!("{name}.spvasm")))
}

/// The SPIR-V 1.3 module of the assembly at `source`, validated.
fn assemble_at(source: &std::path::Path) -> Vec<u8> {
    let name = source
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("module");
    let out = std::env::temp_dir().join(format!("ferrocl-sg-{}-{name}.spv", std::process::id()));
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.3"])
        .arg(source)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success(), "spirv-as {name}");
    let st = std::process::Command::new("spirv-val")
        .args(["--target-env", "spv1.3"])
        .arg(&out)
        .status()
        .expect("spirv-val (spirv-tools) is installed");
    assert!(st.success(), "spirv-val {name}");
    let words = std::fs::read(&out).expect("assembled module");
    let _ = std::fs::remove_file(out);
    words
}

/// Builds IL; the program, or the build log.
fn build_il(env: &Env, il: &[u8]) -> Result<Program, String> {
    let program = check(
        cl(Program::create_from_il(&env.context, il)),
        "clCreateProgramWithIL",
    );
    let options = CString::new("").expect("options");
    match opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &options,
        None,
        null_mut(),
    ) {
        Ok(()) => Ok(program),
        Err(_) => Err(program.get_build_log(env.device.id()).unwrap_or_default()),
    }
}

#[test]
fn sub_group_execution_modes_and_bool_operations() {
    if target().other_icd {
        return;
    }
    let env = Env::new();
    let program = build_il(&env, &assemble_1_3("subgroup_dispatch")).expect("builds");
    let kernel = check(cl(Kernel::create(&program, "fixed")), "clCreateKernel");
    assert_eq!(
        query(
            clGetKernelSubGroupInfo,
            kernel.get(),
            env.device.id(),
            CL_KERNEL_COMPILE_NUM_SUB_GROUPS,
            &[]
        ),
        Ok(3)
    );
    let by_id = check(cl(Kernel::create(&program, "by_id")), "clCreateKernel");
    assert_eq!(
        query(
            clGetKernelSubGroupInfo,
            by_id.get(),
            env.device.id(),
            CL_KERNEL_COMPILE_NUM_SUB_GROUPS,
            &[]
        ),
        Ok(5)
    );
    // 10 work-items in one group: sub-groups of 4, 4 and 2.
    let n = 10;
    let bout = env.buffer_filled(n, u32::MAX);
    arg_buf(&kernel, 0, &bout);
    env.run(&kernel, &[n], Some(&[n]), None);
    let out = env.read(&bout, n);
    let want: Vec<u32> = (0..n as u32).map(|i| i / SIZE as u32 + 1000).collect();
    assert_eq!(out, want);

    // Execution mode SubgroupSize 8: 20 work-items make sub-groups of 8, 8 and 4.
    let program = build_il(&env, &assemble_1_3("subgroup_size_8")).expect("SubgroupSize 8 builds");
    let eight = check(cl(Kernel::create(&program, "eight")), "clCreateKernel");
    let n = 20;
    let info = |param| {
        query(
            clGetKernelSubGroupInfo,
            eight.get(),
            env.device.id(),
            param,
            &[n],
        )
    };
    assert_eq!(info(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE), Ok(8));
    assert_eq!(info(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE), Ok(3));
    let bout = env.buffer_filled(n, u32::MAX);
    arg_buf(&eight, 0, &bout);
    env.run(&eight, &[n], Some(&[n]), None);
    let want: Vec<u32> = (0..n as u32).map(|i| 1000 + i / 8).collect();
    assert_eq!(env.read(&bout, n), want);
    // A size the device lacks fails the build, naming the kernel and the sizes it has.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/subgroup_size_8.spvasm"),
    )
    .expect("module text");
    let name = format!("subgroup_size_6_{}", std::process::id());
    let path = std::env::temp_dir().join(format!("{name}.spvasm"));
    std::fs::write(&path, text.replace("SubgroupSize 8", "SubgroupSize 6")).expect("write");
    let six = assemble_at(&path);
    let _ = std::fs::remove_file(&path);
    let Err(log) = build_il(&env, &six) else {
        panic!("a kernel requiring sub-groups of 6 must not build");
    };
    assert!(
        log.contains("kernel 'eight' requires sub-groups of 6 work-items")
            && log.contains("4, 8, 16, 32"),
        "{log}"
    );
}
