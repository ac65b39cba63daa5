//! Work-item functions over 1-, 2- and 3-D NDRanges with global offsets and with
//! `local_work_size = NULL`, checked for every work-item (kernels/workitem.cl).

mod common;

use common::*;

/// ulongs written per work-item by workitem.cl.
const RECORD: usize = 22;

/// Runs workitem.cl over the range and checks all 22 values of every work-item.
fn check_range(
    env: &Env,
    opt: Opt,
    global: &[usize],
    local: Option<&[usize]>,
    offset: Option<&[usize]>,
) {
    let dims = global.len();
    let total: usize = global.iter().product();
    let k = env.kernel("workitem", opt, "workitem");
    let out = env.buffer_filled(total * RECORD, u64::MAX);
    arg_buf(&k, 0, &out);
    env.run(&k, global, local, offset);
    let got = env.read(&out, total * RECORD);
    let ctx = format!("{opt:?} global {global:?} local {local:?} offset {offset:?}");

    // Size of dimension d, 1 past the work dimension (spec: get_global_size etc. return 1).
    let gs = |d: usize| if d < dims { global[d] } else { 1 };
    let off = |d: usize| {
        if d < dims {
            offset.map_or(0, |o| o[d])
        } else {
            0
        }
    };
    // The enqueued local size: given, or what work-item 0 (always in a full group) saw.
    let first = &got[..RECORD];
    let ls = |d: usize| match (d < dims, local) {
        (false, _) => 1,
        (true, Some(l)) => l[d],
        (true, None) => first[1 + 7 * d + 4] as usize,
    };
    for (d, &g) in global.iter().enumerate() {
        let l = ls(d);
        assert!(l >= 1 && l <= g, "{ctx}: chosen local size {l} in dim {d}");
    }

    for lin in 0..total {
        let r = &got[lin * RECORD..(lin + 1) * RECORD];
        assert_ne!(r[0], u64::MAX, "{ctx}: work-item {lin} never ran");
        assert_eq!(r[0], dims as u64, "{ctx}: work-item {lin} get_work_dim");
        let mut rest = lin;
        for d in 0..3 {
            let q = &r[1 + 7 * d..1 + 7 * d + 7];
            let pos = rest % gs(d); // position inside the range, offset excluded
            rest /= gs(d);
            let l = ls(d);
            let group = pos / l;
            let groups = gs(d).div_ceil(l);
            // With a chosen local size the last group may be partial (non-uniform
            // work-groups); with an explicit one the range is a multiple of it here.
            let this_ls = l.min(gs(d) - group * l);
            let want = [
                (off(d) + pos) as u64,
                (pos % l) as u64,
                group as u64,
                gs(d) as u64,
                this_ls as u64,
                groups as u64,
                off(d) as u64,
            ];
            let names = [
                "get_global_id",
                "get_local_id",
                "get_group_id",
                "get_global_size",
                "get_local_size",
                "get_num_groups",
                "get_global_offset",
            ];
            for j in 0..7 {
                assert_eq!(q[j], want[j], "{ctx}: work-item {lin} {}({d})", names[j]);
            }
        }
    }
}

#[test]
fn one_dimension_with_offset() {
    let env = Env::new();
    for opt in OPTS {
        check_range(&env, opt, &[48], Some(&[8]), Some(&[5]));
        check_range(&env, opt, &[48], Some(&[48]), None);
    }
}

#[test]
fn two_dimensions_with_offset() {
    let env = Env::new();
    for opt in OPTS {
        check_range(&env, opt, &[12, 10], Some(&[4, 5]), Some(&[3, 7]));
        check_range(&env, opt, &[12, 10], Some(&[1, 10]), None);
    }
}

#[test]
fn three_dimensions_with_offset() {
    let env = Env::new();
    for opt in OPTS {
        check_range(&env, opt, &[6, 4, 10], Some(&[3, 2, 5]), Some(&[1, 2, 3]));
        check_range(&env, opt, &[6, 4, 10], Some(&[6, 4, 1]), None);
        check_range(
            &env,
            opt,
            &[2, 3, 4],
            Some(&[1, 1, 1]),
            Some(&[1000, 0, 1 << 20]),
        );
    }
}

#[test]
fn null_local_size() {
    let env = Env::new();
    for opt in OPTS {
        check_range(&env, opt, &[1000], None, None);
        check_range(&env, opt, &[97], None, Some(&[3]));
        check_range(&env, opt, &[30, 7], None, Some(&[1, 2]));
        check_range(&env, opt, &[5, 6, 7], None, None);
    }
}

/// The work-item functions with an index outside 0..2, run-time and constant, return what
/// OpenCL C says (1 for sizes and group counts, 0 for ids and offsets), in 1-, 2- and 3-D
/// ranges, from OpenCL C built by the driver (llvm-spirv-15 alone would index the built-in
/// vectors out of range); `__IMAGE_SUPPORT__` is defined on a device with images (the default) and
/// `__OPENCL_VERSION__` is the device's 310 (OpenCL 3.1).
#[test]
fn work_item_functions_outside_the_dimensions() {
    const SOURCE: &str = r#"
        __kernel void oor(__global ulong *out, uint dim) {
            size_t i = get_global_id(0) + get_global_size(0) *
                (get_global_id(1) + get_global_size(1) * get_global_id(2));
            __global ulong *o = out + 20 * i;
            o[0] = get_global_size(dim);  o[1] = get_global_id(dim);
            o[2] = get_local_size(dim);   o[3] = get_local_id(dim);
            o[4] = get_num_groups(dim);   o[5] = get_group_id(dim);
            o[6] = get_global_offset(dim);
        #if __OPENCL_C_VERSION__ >= 200
            o[7] = get_enqueued_local_size(dim);
        #else
            o[7] = 1;
        #endif
            o[8] = get_global_size(4);    o[9] = get_global_id(4);
            o[10] = get_local_size(3);    o[11] = get_local_id(7);
            o[12] = get_num_groups(5);    o[13] = get_group_id(3);
            o[14] = get_global_offset(9);
        #if __OPENCL_C_VERSION__ >= 200
            o[15] = get_enqueued_local_size(4);
        #else
            o[15] = 1;
        #endif
        #ifdef __IMAGE_SUPPORT__
            o[16] = 99;
        #else
            o[16] = 0;
        #endif
        #ifdef __OPENCL_VERSION__
            o[17] = __OPENCL_VERSION__;
        #endif
        }
    "#;
    let env = Env::new();
    let want_outside: [u64; 16] = [1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1];
    for options in [
        "",
        "-cl-std=CL3.0",
        "-cl-std=CL3.1",
        "-cl-opt-disable",
        // OpenCL C 1.1 has no static functions (CTS compiler opencl_c_versions).
        "-cl-std=CL1.1",
        "-cl-std=CL1.1 -cl-opt-disable",
    ] {
        let program = env.program_from_source(SOURCE, options);
        let k = check(cl(Kernel::create(&program, "oor")), "clCreateKernel");
        for (global, local) in [
            (&[8usize][..], &[4usize][..]),
            (&[4, 6][..], &[2, 3][..]),
            (&[2, 2, 4][..], &[2, 1, 2][..]),
        ] {
            let total: usize = global.iter().product();
            let out = env.buffer_filled(total * 20, u64::MAX);
            arg_buf(&k, 0, &out);
            for dim in [global.len() as u32, 3, 4, 100] {
                arg(&k, 1, &dim);
                env.run(&k, global, Some(local), None);
                let got = env.read(&out, total * 20);
                for item in 0..total {
                    let r = &got[item * 20..item * 20 + 18];
                    let ctx = format!("{options:?} global {global:?} dim {dim} item {item}");
                    if dim >= 3 {
                        assert_eq!(&r[..16], &want_outside[..], "{ctx}");
                    } else {
                        // One past the range's dimensions: size 1, id 0 as well.
                        assert_eq!(&r[..8], &want_outside[..8], "{ctx}");
                    }
                    assert_eq!(r[16], 99, "{ctx}: __IMAGE_SUPPORT__ is not defined");
                    assert_eq!(r[17], 310, "{ctx}: __OPENCL_VERSION__");
                }
            }
        }
    }
}

/// The extension and feature macros an OpenCL C 3.0 source sees are the device's: clang-15's
/// default header defines several for every SPIR target (images, all-devices scope, float
/// atomics…), the driver undefines those the device does not report (CTS compiler
/// features_macro).
#[test]
fn feature_macros_are_the_devices() {
    const MACROS: &[&str] = &[
        "__opencl_c_read_write_images",
        "__opencl_c_atomic_scope_all_devices",
        "__opencl_c_atomic_scope_device",
        "__opencl_c_atomic_order_seq_cst",
        "__opencl_c_work_group_collective_functions",
        "__opencl_c_images",
        "__opencl_c_pipes",
        "__opencl_c_device_enqueue",
        "__opencl_c_generic_address_space",
        "__opencl_c_program_scope_global_variables",
        "__opencl_c_integer_dot_product_input_4x8bit",
        "cl_khr_subgroup_ballot",
        "cl_khr_extended_bit_ops",
        "cl_khr_integer_dot_product",
        "cl_ext_float_atomics",
    ];
    let env = Env::new();
    let features: Vec<String> = check(cl(env.device.opencl_c_features()), "features")
        .iter()
        .map(|f| {
            let name: Vec<u8> = f.name.iter().copied().take_while(|&c| c != 0).collect();
            String::from_utf8_lossy(&name).into_owned()
        })
        .collect();
    let extensions = check(cl(env.device.extensions()), "extensions");
    let mut source = String::from("__kernel void macros(__global int *out) {\n");
    for (i, m) in MACROS.iter().enumerate() {
        source += &format!("#ifdef {m}\n out[{i}] = 1;\n#else\n out[{i}] = 0;\n#endif\n");
    }
    source += "}\n";
    let program = env.program_from_source(&source, "-cl-std=CL3.0");
    let k = check(cl(Kernel::create(&program, "macros")), "clCreateKernel");
    let out = env.buffer_filled(MACROS.len(), -1i32);
    arg_buf(&k, 0, &out);
    env.run(&k, &[1], None, None);
    let got = env.read(&out, MACROS.len());
    for (m, &defined) in MACROS.iter().zip(&got) {
        let reported = features.iter().any(|f| f == m) || extensions.split(' ').any(|e| e == *m);
        assert_eq!(
            defined == 1,
            reported,
            "{m}: defined {defined}, reported {reported}"
        );
    }
    // The ones clang defines and the device has stay defined.
    assert_eq!(got[2], 1, "__opencl_c_atomic_scope_device");
}

/// Empty ranges (a global size of 0 in any dimension, or no global size at all) are accepted
/// and complete without running a work-item (OpenCL 2.1+, CTS api zero_sized_enqueue), with or
/// without a local size.
#[test]
fn empty_ranges_complete_without_running() {
    const SOURCE: &str = "__kernel void mark(__global int *out) { out[0] = 1; }";
    let env = Env::new();
    let program = env.program_from_source(SOURCE, "-cl-std=CL3.0");
    let k = check(cl(Kernel::create(&program, "mark")), "clCreateKernel");
    let out = env.buffer_filled(1, 0i32);
    arg_buf(&k, 0, &out);
    let ranges: [&[usize]; 6] = [&[0], &[0, 0], &[1, 0], &[0, 1], &[1, 1, 0], &[0, 0, 0]];
    for global in ranges {
        env.run(&k, global, None, None);
        let ones = vec![1usize; global.len()];
        env.run(&k, global, Some(&ones), None);
    }
    for dims in 1..=3u32 {
        // SAFETY: no global size, no local size, no offset: nothing is read.
        let r = unsafe {
            env.queue.enqueue_nd_range_kernel(
                k.get(),
                dims,
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                &[],
            )
        };
        let event = check(cl(r), "clEnqueueNDRangeKernel without a global size");
        check(cl(event.wait()), "clWaitForEvents");
    }
    assert_eq!(env.read(&out, 1), [0], "a work-item ran");
    // A real range still runs.
    env.run(&k, &[1], None, None);
    assert_eq!(env.read(&out, 1), [1]);
}
