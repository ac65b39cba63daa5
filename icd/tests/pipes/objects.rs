//! Pipe objects: the device queries (and `FERROCL_PIPES=off`), creation, info, lifetimes.

use std::ffi::CString;
use std::ptr::{null, null_mut};
use std::sync::atomic::Ordering;

use super::common::*;
use super::*;
use opencl_sys::*;

#[test]
fn the_device_reports_pipes() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    // The API spec's minimums (the Khronos CTS checks them), and Ferrocl's values.
    let args = device_word(&env, CL_DEVICE_MAX_PIPE_ARGS);
    let reservations = device_word(&env, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS);
    let packet = device_word(&env, CL_DEVICE_PIPE_MAX_PACKET_SIZE);
    assert!(args >= 16 && reservations >= 1 && packet >= 1024);
    if !env.other_icd {
        assert_eq!((args, reservations, packet), (16, 65536, 1024));
    }
    // "Devices that support pipes must also return CL_TRUE for
    // CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT" (CTS api consistency_pipes).
    assert_eq!(
        device_word(&env, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT),
        CL_TRUE as u64
    );
    assert!(opencl_c_features(&env).contains(&("__opencl_c_pipes".to_owned(), 3 << 22)));
    if !env.other_icd {
        let caps = spirv_capabilities(&env);
        assert!(caps.contains(&CAPABILITY_PIPES), "{caps:?}");
        // Program-scope pipes (OpenCL C++) are not supported.
        assert!(!caps.contains(&CAPABILITY_PIPE_STORAGE), "{caps:?}");
    }
    // Pipes are part of OpenCL C 2.0 too, which the device offers with every 2.0 feature on
    // (device-side enqueue among them, by default).
    let versions =
        opencl3::device::get_device_data(env.device.id(), CL_DEVICE_OPENCL_C_ALL_VERSIONS)
            .expect("CL_DEVICE_OPENCL_C_ALL_VERSIONS");
    if !env.other_icd {
        assert!(versions
            .chunks_exact(4 + CL_NAME_VERSION_MAX_NAME_SIZE)
            .any(|c| u32::from_ne_bytes(c[..4].try_into().unwrap()) == 2 << 22));
    }
}

/// `FERROCL_PIPES=off`: the queries answer zero, nothing reports the feature, `clCreatePipe`
/// is an invalid operation (CTS api consistency_pipes), and modules with pipes fail to build.
#[test]
fn pipes_off_leaves_no_trace_of_them() {
    if target().other_icd
        || in_child(
            "objects::pipes_off_leaves_no_trace_of_them",
            &[("FERROCL_PIPES", "off")],
        )
    {
        return;
    }
    let env = Env::new();
    for query in [
        CL_DEVICE_PIPE_SUPPORT,
        CL_DEVICE_MAX_PIPE_ARGS,
        CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS,
        CL_DEVICE_PIPE_MAX_PACKET_SIZE,
    ] {
        assert_eq!(device_word(&env, query), 0, "query {query:#x}");
    }
    assert!(!opencl_c_features(&env)
        .iter()
        .any(|(name, _)| name.contains("pipe")));
    assert!(!spirv_capabilities(&env).contains(&CAPABILITY_PIPES));
    assert_eq!(
        try_pipe(env.context.get(), CL_MEM_HOST_NO_ACCESS, 4, 4, null()).err(),
        Some(CL_INVALID_OPERATION)
    );
    // No memory object is a pipe.
    let buf = buffer(&env, 16);
    let mut packet = 0u32;
    // SAFETY: a valid memory object, a 4-byte answer.
    let status = unsafe {
        clGetPipeInfo(
            buf.0,
            CL_PIPE_PACKET_SIZE,
            4,
            (&mut packet as *mut u32).cast(),
            null_mut(),
        )
    };
    assert_eq!(status, CL_INVALID_MEM_OBJECT);
    // IL built where pipes are on: the frontend's gate names the setting.
    let il = common::spirv("pipes", Opt::Optimised);
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let built = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &CString::new("").unwrap(),
        None,
        null_mut(),
    );
    assert_eq!(built, Err(CL_BUILD_PROGRAM_FAILURE));
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    assert!(
        log.contains("capability Pipes") && log.contains("FERROCL_PIPES=off"),
        "{log}"
    );
    // OpenCL C: clang is not told of __opencl_c_pipes, so `pipe` is no type.
    let Err(log) = env.try_program_from_source(
        "kernel void k(__write_only pipe int p, global int *o) { o[0] = 1; }",
        "-cl-std=CL3.0",
    ) else {
        panic!("a pipe argument built without pipes");
    };
    assert!(log.contains("pipe"), "{log}");
    env.program_from_source(
        "#ifdef __opencl_c_pipes\n#error pipes\n#endif\nkernel void k(global int *o) { o[0] = 1; }",
        "-cl-std=CL3.0",
    );
}

#[test]
fn create_pipe_checks_its_arguments() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let ctx = env.context.get();
    let no_host = CL_MEM_HOST_NO_ACCESS;
    // A handle of another type where the context goes (the loader dispatches on it).
    let buf = buffer(&env, 16);
    assert_eq!(
        try_pipe(buf.0 as cl_context, no_host, 4, 4, null()).err(),
        Some(CL_INVALID_CONTEXT)
    );
    // Flags: CL_MEM_READ_WRITE and CL_MEM_HOST_NO_ACCESS only, 0 meaning both.
    for flags in [
        0,
        CL_MEM_READ_WRITE,
        CL_MEM_HOST_NO_ACCESS,
        CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS,
    ] {
        try_pipe(ctx, flags, 4, 4, null())
            .unwrap_or_else(|e| panic!("flags {flags:#x}: {}", error_text(e)));
    }
    for flags in [
        CL_MEM_READ_ONLY,
        CL_MEM_WRITE_ONLY,
        CL_MEM_USE_HOST_PTR,
        CL_MEM_ALLOC_HOST_PTR,
        CL_MEM_COPY_HOST_PTR,
        CL_MEM_HOST_READ_ONLY,
        CL_MEM_HOST_WRITE_ONLY,
        CL_MEM_KERNEL_READ_AND_WRITE,
        CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY,
        1 << 40,
    ] {
        assert_eq!(
            try_pipe(ctx, flags, 4, 4, null()).err(),
            Some(CL_INVALID_VALUE),
            "flags {flags:#x}"
        );
    }
    // "In all OpenCL versions, properties must be NULL": even an empty list is refused.
    let empty: [cl_pipe_properties; 1] = [0];
    assert_eq!(
        try_pipe(ctx, no_host, 4, 4, empty.as_ptr()).err(),
        Some(CL_INVALID_VALUE)
    );
    // Sizes: packets of 1 to CL_DEVICE_PIPE_MAX_PACKET_SIZE bytes, at least one of them.
    let max = device_word(&env, CL_DEVICE_PIPE_MAX_PACKET_SIZE) as u32;
    for (size, count) in [(0, 4), (4, 0), (0, 0), (max + 1, 1), (u32::MAX, 1)] {
        assert_eq!(
            try_pipe(ctx, no_host, size, count, null()).err(),
            Some(CL_INVALID_PIPE_SIZE),
            "{size} x {count}"
        );
    }
    for (size, count) in [(1, 1), (max, 1), (1, 100_000), (max, 64)] {
        try_pipe(ctx, no_host, size, count, null())
            .unwrap_or_else(|e| panic!("{size} x {count}: {}", error_text(e)));
    }
    // More memory than one allocation may have.
    let max_alloc = check(cl(env.device.max_mem_alloc_size()), "max alloc");
    if !env.other_icd {
        assert!(u64::from(max) * u64::from(u32::MAX) > max_alloc);
        assert_eq!(
            try_pipe(ctx, no_host, max, u32::MAX, null()).err(),
            Some(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        );
    }
    // errcode_ret may be NULL.
    // SAFETY: valid arguments; the result is checked.
    let p = unsafe { clCreatePipe(ctx, no_host, 4, 4, null(), null_mut()) };
    assert!(!p.is_null());
    drop(Mem(p));
    // SAFETY: invalid sizes; nothing is created.
    let p = unsafe { clCreatePipe(ctx, no_host, 0, 4, null(), null_mut()) };
    assert!(p.is_null());
}

#[test]
fn pipe_info_and_memory_object_info() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let p = pipe(&env, 12, 100);
    assert_eq!(word(&pipe_info(p.0, CL_PIPE_PACKET_SIZE)), 12);
    assert_eq!(word(&pipe_info(p.0, CL_PIPE_MAX_PACKETS)), 100);
    // Created without properties: none to return (size 0).
    assert!(pipe_info(p.0, CL_PIPE_PROPERTIES).is_empty());
    let mut value = 0u32;
    let mut size = 99usize;
    // SAFETY: a valid pipe; the sizes passed are those of `value`, or smaller.
    unsafe {
        assert_eq!(
            clGetPipeInfo(p.0, CL_PIPE_PROPERTIES, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        assert_eq!(size, 0);
        assert_eq!(
            clGetPipeInfo(
                p.0,
                CL_PIPE_PACKET_SIZE,
                2,
                (&mut value as *mut u32).cast(),
                null_mut()
            ),
            CL_INVALID_VALUE,
            "a value too small"
        );
        for bad in [CL_MEM_TYPE, CL_PIPE_PROPERTIES + 1, 0] {
            assert_eq!(
                clGetPipeInfo(p.0, bad, 4, (&mut value as *mut u32).cast(), null_mut()),
                CL_INVALID_VALUE,
                "param {bad:#x}"
            );
        }
    }
    // Not a pipe: a buffer, an image, a handle of another type.
    let buf = buffer(&env, 16);
    let img = image(&env);
    let context_handle = env.context.get() as cl_mem;
    for (m, what) in [(buf.0, "buffer"), (context_handle, "context")]
        .into_iter()
        .chain(img.as_ref().map(|i| (i.0, "image")))
    {
        // SAFETY: a handle the driver checks; a 4-byte answer.
        let status = unsafe {
            clGetPipeInfo(
                m,
                CL_PIPE_PACKET_SIZE,
                4,
                (&mut value as *mut u32).cast(),
                null_mut(),
            )
        };
        assert_eq!(status, CL_INVALID_MEM_OBJECT, "{what}");
    }
    // What every memory object answers.
    assert_eq!(word(&mem_info(p.0, CL_MEM_TYPE)), CL_MEM_OBJECT_PIPE as u64);
    assert_eq!(word(&mem_info(p.0, CL_MEM_FLAGS)), CL_MEM_HOST_NO_ACCESS);
    assert_eq!(
        word(&mem_info(p.0, CL_MEM_SIZE)),
        1200,
        "100 packets of 12 bytes"
    );
    assert_eq!(word(&mem_info(p.0, CL_MEM_HOST_PTR)), 0);
    assert_eq!(word(&mem_info(p.0, CL_MEM_MAP_COUNT)), 0);
    assert_eq!(word(&mem_info(p.0, CL_MEM_REFERENCE_COUNT)), 1);
    assert_eq!(
        word(&mem_info(p.0, CL_MEM_CONTEXT)),
        env.context.get() as u64
    );
    assert_eq!(word(&mem_info(p.0, CL_MEM_ASSOCIATED_MEMOBJECT)), 0);
    assert_eq!(word(&mem_info(p.0, CL_MEM_OFFSET)), 0);
    assert_eq!(
        word(&mem_info(p.0, CL_MEM_USES_SVM_POINTER)),
        CL_FALSE as u64
    );
    assert!(mem_info(p.0, CL_MEM_PROPERTIES).is_empty());
    // Flags are reported as given, 0 too (as for buffers).
    let defaults = try_pipe(env.context.get(), 0, 1, 1, null()).unwrap();
    assert_eq!(word(&mem_info(defaults.0, CL_MEM_FLAGS)), 0);
    let rw = try_pipe(env.context.get(), CL_MEM_READ_WRITE, 1024, 3, null()).unwrap();
    assert_eq!(word(&mem_info(rw.0, CL_MEM_FLAGS)), CL_MEM_READ_WRITE);
    assert_eq!(word(&mem_info(rw.0, CL_MEM_SIZE)), 3072);
}

#[test]
fn retains_releases_and_destructor_callbacks() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let p = pipe(&env, 4, 8).into_raw();
    let deleted = deletion_counter(p);
    // SAFETY: a valid pipe; every reference taken here is given back below.
    unsafe {
        assert_eq!(clRetainMemObject(p), CL_SUCCESS);
        assert_eq!(word(&mem_info(p, CL_MEM_REFERENCE_COUNT)), 2);
        assert_eq!(clReleaseMemObject(p), CL_SUCCESS);
        assert_eq!(word(&mem_info(p, CL_MEM_REFERENCE_COUNT)), 1);
        assert_eq!(deleted.load(Ordering::SeqCst), 0);
        assert_eq!(clReleaseMemObject(p), CL_SUCCESS);
    }
    assert_eq!(
        deleted.load(Ordering::SeqCst),
        1,
        "deleted at the last release"
    );
}
