//! On-device queues on the host: the device queries, creation rules, queue queries, the
//! default queue, the queue limit, host commands refusing device queues, and
//! `FERROCL_DEVICE_ENQUEUE=off`.

use std::ffi::CString;

use super::*;

/// The queries the CTS device_execution device_info and api consistency_device_enqueue check,
/// with Ferrocl's values.
#[test]
fn device_queries_answer_the_limits() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let caps = device_word(&env, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES);
    assert_eq!(
        caps & CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT,
        CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT
    );
    let props = device_word(&env, CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES);
    let required = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
    assert_eq!(props & required, required);
    let preferred = device_word(&env, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE);
    let max = device_word(&env, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE);
    assert!(preferred >= 16 << 10 && max >= 256 << 10 && preferred <= max);
    assert!(device_word(&env, CL_DEVICE_MAX_ON_DEVICE_QUEUES) >= 1);
    assert!(device_word(&env, CL_DEVICE_MAX_ON_DEVICE_EVENTS) >= 1024);
    assert_eq!(
        device_word(&env, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT),
        1
    );
    if !env.other_icd {
        assert_eq!(
            caps,
            CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT
        );
        assert_eq!((preferred, max), (4 << 20, 8 << 20));
        assert_eq!(device_word(&env, CL_DEVICE_MAX_ON_DEVICE_QUEUES), 4);
        assert_eq!(device_word(&env, CL_DEVICE_MAX_ON_DEVICE_EVENTS), 1024);
        let features = opencl_c_features(&env);
        for f in [
            "__opencl_c_device_enqueue",
            "__opencl_c_generic_address_space",
            "__opencl_c_program_scope_global_variables",
        ] {
            assert!(features.iter().any(|n| n == f), "{f}");
        }
        assert!(spirv_capabilities(&env).contains(&CAPABILITY_DEVICE_ENQUEUE));
    }
}

#[test]
fn device_queue_creation_rules_and_queries() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let props = CL_QUEUE_PROPERTIES as cl_queue_properties;
    let size = CL_QUEUE_SIZE as cl_queue_properties;
    let max = device_word(&env, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE);
    let ooo = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_queue_properties;
    let bad: &[(&[cl_queue_properties], cl_int)] = &[
        // A device queue is out-of-order.
        (
            &[props, CL_QUEUE_ON_DEVICE as cl_queue_properties],
            CL_INVALID_VALUE,
        ),
        // The default flag and the size go with CL_QUEUE_ON_DEVICE only.
        (
            &[
                props,
                ooo | CL_QUEUE_ON_DEVICE_DEFAULT as cl_queue_properties,
            ],
            CL_INVALID_VALUE,
        ),
        (&[size, 1024], CL_INVALID_VALUE),
        (&[props, ooo, size, 1024], CL_INVALID_VALUE),
        (&[props, ON_DEVICE, size, max + 1], CL_INVALID_VALUE),
        (&[props, ON_DEVICE, size, 0], CL_INVALID_VALUE),
        (
            &[props, ON_DEVICE, size, 1024, size, 1024],
            CL_INVALID_VALUE,
        ),
        // Hints are for host queues.
        (
            &[props, ON_DEVICE, CL_QUEUE_PRIORITY_KHR, 1],
            CL_INVALID_QUEUE_PROPERTIES,
        ),
    ];
    for (list, want) in bad {
        assert_eq!(queue_with(&env, list).err(), Some(*want), "{list:x?}");
    }
    // clCreateCommandQueue makes host queues only.
    let mut err = 0;
    // SAFETY: valid context and device.
    let q = unsafe {
        clCreateCommandQueue(
            env.context.get(),
            env.device.id(),
            ON_DEVICE as cl_command_queue_properties,
            &mut err,
        )
    };
    assert!(q.is_null());
    assert_eq!(err, CL_INVALID_VALUE);

    let q = device_queue(&env, ON_DEVICE | PROFILING, &[size, 4096]);
    assert_eq!(queue_word(q.0, CL_QUEUE_SIZE), 4096);
    assert_eq!(
        queue_info(q.0, CL_QUEUE_SIZE).unwrap().len(),
        4,
        "a cl_uint"
    );
    assert_eq!(queue_word(q.0, CL_QUEUE_PROPERTIES), ON_DEVICE | PROFILING);
    let array: Vec<u64> = queue_info(q.0, CL_QUEUE_PROPERTIES_ARRAY)
        .unwrap()
        .chunks_exact(8)
        .map(word)
        .collect();
    assert_eq!(array, [props, ON_DEVICE | PROFILING, size, 4096, 0]);
    assert_eq!(queue_word(q.0, CL_QUEUE_CONTEXT), env.context.get() as u64);
    assert_eq!(queue_word(q.0, CL_QUEUE_DEVICE), env.device.id() as u64);
    assert_eq!(queue_word(q.0, CL_QUEUE_REFERENCE_COUNT), 1);
    assert_eq!(queue_info(q.0, 0xdead).err(), Some(CL_INVALID_VALUE));
    // SAFETY: a valid device queue, retained and released once.
    unsafe {
        assert_eq!(clRetainCommandQueue(q.0), CL_SUCCESS);
        assert_eq!(queue_word(q.0, CL_QUEUE_REFERENCE_COUNT), 2);
        assert_eq!(clReleaseCommandQueue(q.0), CL_SUCCESS);
    }
    // The size defaults to the preferred one.
    let plain = device_queue(&env, ON_DEVICE, &[]);
    assert_eq!(
        queue_word(plain.0, CL_QUEUE_SIZE),
        device_word(&env, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE)
    );
    // A host queue has no size.
    assert_eq!(
        queue_info(env.queue.get(), CL_QUEUE_SIZE).err(),
        Some(CL_INVALID_COMMAND_QUEUE)
    );
}

/// One default device queue per device and context: asking for another gives it again
/// (retained); clSetDefaultDeviceCommandQueue replaces it; its last release ends it.
#[test]
fn the_default_queue_and_its_replacement() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let host = env.queue.get();
    assert!(default_of(host).is_null());
    let first = device_queue(&env, DEFAULT, &[]);
    assert_eq!(default_of(host), first.0);
    assert_eq!(default_of(first.0), first.0);
    let again = device_queue(&env, DEFAULT | PROFILING, &[]);
    assert_eq!(again.0, first.0, "the default queue already made");
    assert_eq!(queue_word(first.0, CL_QUEUE_REFERENCE_COUNT), 2);
    drop(again);
    let other = device_queue(&env, ON_DEVICE, &[]);
    assert_eq!(default_of(host), first.0);
    // SAFETY: valid handles, and the errors' invalid ones.
    unsafe {
        let (c, d) = (env.context.get(), env.device.id());
        assert_eq!(clSetDefaultDeviceCommandQueue(c, d, other.0), CL_SUCCESS);
        assert_eq!(default_of(host), other.0);
        assert_eq!(default_of(first.0), other.0);
        assert_eq!(clSetDefaultDeviceCommandQueue(c, d, first.0), CL_SUCCESS);
        assert_eq!(default_of(other.0), first.0);
        assert_eq!(
            clSetDefaultDeviceCommandQueue(c, d, host),
            CL_INVALID_COMMAND_QUEUE,
            "a host queue"
        );
        assert_eq!(
            clSetDefaultDeviceCommandQueue(c, d, null_mut()),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(
            clSetDefaultDeviceCommandQueue(null_mut(), d, other.0),
            CL_INVALID_CONTEXT
        );
        assert_eq!(
            clSetDefaultDeviceCommandQueue(c, null_mut(), other.0),
            CL_INVALID_DEVICE
        );
        // A device queue of another context.
        let env2 = Env::new();
        let foreign = device_queue(&env2, ON_DEVICE, &[]);
        assert_eq!(
            clSetDefaultDeviceCommandQueue(c, d, foreign.0),
            CL_INVALID_COMMAND_QUEUE
        );
        assert!(default_of(env2.queue.get()).is_null());
    }
    // The application's last release of the default: there is none any more, and a new one
    // can be made.
    drop(first);
    assert!(default_of(host).is_null());
    let second = device_queue(&env, DEFAULT, &[]);
    assert_eq!(default_of(other.0), second.0);
    assert_ne!(second.0, other.0);
}

/// `CL_DEVICE_MAX_ON_DEVICE_QUEUES` queues besides the default one (the CTS device_queue
/// creates that many next to it); one more is CL_OUT_OF_RESOURCES.
#[test]
fn the_queue_limit() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) || env.other_icd {
        return;
    }
    let max = device_word(&env, CL_DEVICE_MAX_ON_DEVICE_QUEUES) as usize;
    let _default = device_queue(&env, DEFAULT, &[]);
    let mut queues: Vec<Queue> = (0..max)
        .map(|_| device_queue(&env, ON_DEVICE, &[]))
        .collect();
    let list = [CL_QUEUE_PROPERTIES as cl_queue_properties, ON_DEVICE];
    assert_eq!(queue_with(&env, &list).err(), Some(CL_OUT_OF_RESOURCES));
    // Asking for the default again hands out the existing one.
    let again = device_queue(&env, DEFAULT, &[]);
    drop(again);
    // Other contexts count their own.
    let env2 = Env::new();
    let _elsewhere = device_queue(&env2, ON_DEVICE, &[]);
    queues.pop();
    queues.push(device_queue(&env, ON_DEVICE, &[]));
}

/// Host commands, clFlush and clFinish take host queues only.
#[test]
fn host_commands_refuse_device_queues() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let q = device_queue(&env, ON_DEVICE, &[]);
    let mut err = 0;
    // SAFETY: valid objects, a device queue where a host queue belongs; nothing is written.
    unsafe {
        let m = clCreateBuffer(
            env.context.get(),
            CL_MEM_READ_WRITE,
            64,
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let mut data = [0u8; 64];
        let pattern = 0u32;
        assert_eq!(
            clEnqueueReadBuffer(
                q.0,
                m,
                CL_TRUE,
                0,
                64,
                data.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(
            clEnqueueWriteBuffer(
                q.0,
                m,
                CL_TRUE,
                0,
                64,
                data.as_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(
            clEnqueueFillBuffer(
                q.0,
                m,
                (&pattern as *const u32).cast(),
                4,
                0,
                64,
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_COMMAND_QUEUE
        );
        let p = clEnqueueMapBuffer(
            q.0,
            m,
            CL_TRUE,
            CL_MAP_READ,
            0,
            64,
            0,
            null(),
            null_mut(),
            &mut err,
        );
        assert!(p.is_null());
        assert_eq!(err, CL_INVALID_COMMAND_QUEUE);
        assert_eq!(
            clEnqueueMarkerWithWaitList(q.0, 0, null(), null_mut()),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(
            clEnqueueBarrierWithWaitList(q.0, 0, null(), null_mut()),
            CL_INVALID_COMMAND_QUEUE
        );
        let k = env.kernel("device_enqueue", Opt::Optimised, "enqueue_flags");
        let global = 1usize;
        assert_eq!(
            clEnqueueNDRangeKernel(
                q.0,
                k.get(),
                1,
                null(),
                &global,
                null(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(
            clEnqueueTask(q.0, k.get(), 0, null(), null_mut()),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(clFlush(q.0), CL_INVALID_COMMAND_QUEUE);
        assert_eq!(clFinish(q.0), CL_INVALID_COMMAND_QUEUE);
        assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
    }
}

/// `FERROCL_DEVICE_ENQUEUE=off`: the queries answer zero, nothing reports the feature, device
/// queues are refused (CTS api consistency_device_enqueue), and modules with device-side
/// enqueue fail to build.
#[test]
fn device_enqueue_off_leaves_no_trace_of_it() {
    if target().other_icd
        || in_child(
            "queues::device_enqueue_off_leaves_no_trace_of_it",
            &[("FERROCL_DEVICE_ENQUEUE", "off")],
        )
    {
        return;
    }
    let env = Env::new();
    for query in [
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES,
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES,
        CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE,
        CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE,
        CL_DEVICE_MAX_ON_DEVICE_QUEUES,
        CL_DEVICE_MAX_ON_DEVICE_EVENTS,
    ] {
        assert_eq!(device_word(&env, query), 0, "query {query:#x}");
    }
    assert!(!opencl_c_features(&env)
        .iter()
        .any(|n| n == "__opencl_c_device_enqueue"));
    assert!(!spirv_capabilities(&env).contains(&CAPABILITY_DEVICE_ENQUEUE));
    let list = [CL_QUEUE_PROPERTIES as cl_queue_properties, ON_DEVICE];
    assert_eq!(
        queue_with(&env, &list).err(),
        Some(CL_INVALID_QUEUE_PROPERTIES)
    );
    let list = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        DEFAULT,
        CL_QUEUE_SIZE as u64,
        4096,
    ];
    assert_eq!(
        queue_with(&env, &list).err(),
        Some(CL_INVALID_QUEUE_PROPERTIES)
    );
    assert_eq!(
        queue_info(env.queue.get(), CL_QUEUE_SIZE).err(),
        Some(CL_INVALID_COMMAND_QUEUE)
    );
    assert!(default_of(env.queue.get()).is_null());
    // SAFETY: valid context and device.
    let r =
        unsafe { clSetDefaultDeviceCommandQueue(env.context.get(), env.device.id(), null_mut()) };
    assert_eq!(r, CL_INVALID_OPERATION);
    // IL built where device-side enqueue is on: the frontend's gate names the setting.
    let il = common::spirv("device_enqueue", Opt::Optimised);
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
        log.contains("DeviceEnqueue") && log.contains("FERROCL_DEVICE_ENQUEUE=off"),
        "{log}"
    );
    // OpenCL C: clang is not told of __opencl_c_device_enqueue.
    env.program_from_source(
        "#ifdef __opencl_c_device_enqueue\n#error device enqueue\n#endif\nkernel void k(global int *o) { o[0] = 1; }",
        "-cl-std=CL3.0",
    );
    assert!(env
        .try_program_from_source(
            "kernel void k(global int *o) { enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), ^{ o[0] = 1; }); }",
            "-cl-std=CL3.0",
        )
        .is_err());
}
