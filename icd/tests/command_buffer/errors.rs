//! Bad input → the spec's error codes.

use super::*;

#[test]
fn bad_input_gets_the_spec_errors() {
    let Some((env, api)) = setup() else { return };
    let queue = env.queue.get();
    let data = env.buffer_filled(64, 0i32);
    let add = kernel(&env, "add");
    arg_buf(&add, 0, &data);
    arg(&add, 1, &1i32);
    let create = |n: cl_uint,
                  queues: *const cl_command_queue,
                  props: &[cl_command_buffer_properties_khr]| {
        let mut err = 0;
        // SAFETY: the lists are as long as given or NULL; a buffer made is released at once.
        let cb = unsafe { call!(api, create(n, queues, slice_or_null(props), &mut err)) };
        if !cb.is_null() {
            // SAFETY: the reference just made.
            unsafe { call!(api, release(cb)) };
        }
        err
    };
    // clCreateCommandBufferKHR.
    let other_context = check(cl(Context::from_device(&env.device)), "clCreateContext");
    let other_context_queue = check(
        cl(CommandQueue::create_default_with_properties(
            &other_context,
            0,
            0,
        )),
        "clCreateCommandQueueWithProperties",
    );
    let mixed = [queue, other_context_queue.get()];
    assert_eq!(
        create(2, mixed.as_ptr(), &[]),
        CL_INVALID_CONTEXT,
        "queues of two contexts"
    );
    assert_eq!(create(0, mixed.as_ptr(), &[]), CL_INVALID_VALUE, "no queue");
    assert_eq!(create(1, ptr::null(), &[]), CL_INVALID_VALUE, "NULL queues");
    let not_a_queue = [env.context.get() as cl_command_queue];
    assert_eq!(
        create(1, not_a_queue.as_ptr(), &[]),
        CL_INVALID_COMMAND_QUEUE
    );
    let f = CL_COMMAND_BUFFER_FLAGS_KHR;
    assert_eq!(
        create(
            1,
            &queue,
            &[
                f,
                CL_COMMAND_BUFFER_MUTABLE_KHR,
                f,
                CL_COMMAND_BUFFER_MUTABLE_KHR,
                0
            ]
        ),
        CL_INVALID_VALUE,
        "a property twice"
    );
    assert_eq!(
        create(1, &queue, &[f, 1 << 3, 0]),
        CL_INVALID_VALUE,
        "an unknown flag"
    );
    assert_eq!(
        create(1, &queue, &[0x7777, 0]),
        CL_INVALID_VALUE,
        "an unknown property"
    );
    assert_eq!(
        create(1, &queue, &[MUTABLE_DISPATCH_ASSERTS, 1 << 5, 0]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        create(1, &queue, &[MUTABLE_DISPATCH_ASSERTS, 1, 0]),
        CL_SUCCESS
    );

    // Wrong handles everywhere a command-buffer is expected.
    let bad_cb = queue as cl_command_buffer_khr;
    // SAFETY: the driver validates the handles; every pointer is NULL or valid.
    unsafe {
        assert_eq!(call!(api, retain(bad_cb)), CL_INVALID_COMMAND_BUFFER_KHR);
        assert_eq!(
            call!(api, release(ptr::null_mut())),
            CL_INVALID_COMMAND_BUFFER_KHR
        );
        assert_eq!(call!(api, finalize(bad_cb)), CL_INVALID_COMMAND_BUFFER_KHR);
        assert_eq!(
            call!(
                api,
                enqueue(0, ptr::null_mut(), bad_cb, 0, ptr::null(), ptr::null_mut())
            ),
            CL_INVALID_COMMAND_BUFFER_KHR
        );
        assert_eq!(
            call!(
                api,
                barrier(
                    bad_cb,
                    ptr::null_mut(),
                    ptr::null(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                    ptr::null_mut()
                )
            ),
            CL_INVALID_COMMAND_BUFFER_KHR
        );
        assert_eq!(
            call!(
                api,
                info(
                    bad_cb,
                    CL_COMMAND_BUFFER_STATE_KHR,
                    0,
                    ptr::null_mut(),
                    ptr::null_mut()
                )
            ),
            CL_INVALID_COMMAND_BUFFER_KHR
        );
        assert_eq!(
            call!(api, update(bad_cb, 0, ptr::null(), ptr::null_mut())),
            CL_INVALID_COMMAND_BUFFER_KHR
        );
    }

    // Recording.
    let cb = Cb::mutable(&api, queue);
    let (mut point, mut handle) = (0, ptr::null_mut());
    let fill = |cb: &Cb,
                q: cl_command_queue,
                props: *const cl_command_properties_khr,
                mem: cl_mem,
                size: usize,
                wait: (cl_uint, *const cl_sync_point_khr),
                handle: *mut cl_mutable_command_khr| {
        let v = 0i32;
        // SAFETY: the driver validates handles and lists; every pointer is NULL or valid.
        unsafe {
            call!(
                api,
                fill(
                    cb.raw,
                    q,
                    props,
                    mem,
                    (&v as *const i32).cast(),
                    4,
                    0,
                    size,
                    wait.0,
                    wait.1,
                    ptr::null_mut(),
                    handle
                )
            )
        }
    };
    let none = (0, ptr::null());
    // A queue the buffer was not created with, of its context or of another
    // (cl_khr_command_buffer_multi_device).
    let second_queue = check(
        cl(CommandQueue::create_default_with_properties(
            &env.context,
            0,
            0,
        )),
        "clCreateCommandQueueWithProperties",
    );
    assert_eq!(
        fill(
            &cb,
            second_queue.get(),
            ptr::null(),
            data.get(),
            256,
            none,
            ptr::null_mut()
        ),
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(
        fill(
            &cb,
            other_context_queue.get(),
            ptr::null(),
            data.get(),
            256,
            none,
            ptr::null_mut()
        ),
        CL_INVALID_CONTEXT
    );
    let mut h = ptr::null_mut();
    assert_eq!(
        fill(
            &cb,
            ptr::null_mut(),
            ptr::null(),
            data.get(),
            256,
            none,
            &mut h
        ),
        CL_INVALID_VALUE,
        "only kernel commands have handles"
    );
    let props = [1 as cl_command_properties_khr, 0, 0];
    assert_eq!(
        fill(
            &cb,
            ptr::null_mut(),
            props.as_ptr(),
            data.get(),
            256,
            none,
            ptr::null_mut()
        ),
        CL_INVALID_VALUE,
        "no properties for fills"
    );
    let empty = [0 as cl_command_properties_khr];
    assert_eq!(
        fill(
            &cb,
            ptr::null_mut(),
            empty.as_ptr(),
            data.get(),
            256,
            none,
            ptr::null_mut()
        ),
        CL_SUCCESS,
        "an empty list"
    );
    assert_eq!(
        fill(
            &cb,
            ptr::null_mut(),
            ptr::null(),
            data.get(),
            512,
            none,
            ptr::null_mut()
        ),
        CL_INVALID_VALUE,
        "past the end"
    );
    assert_eq!(
        fill(
            &cb,
            ptr::null_mut(),
            ptr::null(),
            queue as cl_mem,
            256,
            none,
            ptr::null_mut()
        ),
        CL_INVALID_MEM_OBJECT
    );
    let other_context = check(cl(Context::from_device(&env.device)), "clCreateContext");
    // SAFETY: a plain buffer of another context.
    let foreign =
        unsafe { Buffer::<i32>::create(&other_context, CL_MEM_READ_WRITE, 64, ptr::null_mut()) }
            .unwrap();
    assert_eq!(
        fill(
            &cb,
            ptr::null_mut(),
            ptr::null(),
            foreign.get(),
            256,
            none,
            ptr::null_mut()
        ),
        CL_INVALID_CONTEXT
    );
    let sync = |wait: (cl_uint, *const cl_sync_point_khr)| {
        fill(
            &cb,
            ptr::null_mut(),
            ptr::null(),
            data.get(),
            256,
            wait,
            ptr::null_mut(),
        )
    };
    let (zero, later) = ([0 as cl_sync_point_khr], [100 as cl_sync_point_khr]);
    assert_eq!(sync((1, ptr::null())), CL_INVALID_SYNC_POINT_WAIT_LIST_KHR);
    assert_eq!(
        sync((0, zero.as_ptr())),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    assert_eq!(
        sync((1, zero.as_ptr())),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
        "0 names no command"
    );
    assert_eq!(
        sync((1, later.as_ptr())),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
        "not recorded yet"
    );
    let one = [1 as cl_sync_point_khr];
    assert_eq!(sync((1, one.as_ptr())), CL_SUCCESS);
    // Kernel commands: properties, sizes and the other kernel errors of clEnqueueNDRangeKernel.
    let unterminated = [0x7777 as cl_command_properties_khr];
    assert_eq!(
        cb.try_kernel(
            ptr::null_mut(),
            &add,
            &unterminated,
            64,
            None,
            &[],
            &mut point,
            &mut handle
        ),
        CL_INVALID_VALUE
    );
    let bad_fields = [CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, 1 << 26, 0];
    assert_eq!(
        cb.try_kernel(
            ptr::null_mut(),
            &add,
            &bad_fields,
            64,
            None,
            &[],
            &mut point,
            &mut handle
        ),
        CL_INVALID_VALUE
    );
    let asserts = [
        CL_MUTABLE_DISPATCH_ASSERTS_KHR,
        CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR,
        0,
    ];
    assert_eq!(
        cb.try_kernel(
            ptr::null_mut(),
            &add,
            &asserts,
            64,
            None,
            &[],
            &mut point,
            &mut handle
        ),
        CL_INVALID_VALUE,
        "no additional work-groups needs a local size"
    );
    assert_eq!(
        cb.try_kernel(
            ptr::null_mut(),
            &add,
            &asserts,
            64,
            Some(8),
            &[],
            &mut point,
            &mut handle
        ),
        CL_SUCCESS
    );
    assert_eq!(
        cb.try_kernel(
            ptr::null_mut(),
            &add,
            &[],
            64,
            Some(5000),
            &[],
            &mut point,
            &mut handle
        ),
        CL_INVALID_WORK_ITEM_SIZE
    );
    let foreign_program = {
        let other = Env {
            device: Device::new(env.device.id()),
            context: other_context,
            queue: check(
                cl(CommandQueue::create_default_with_properties(
                    &Context::from_device(&env.device).unwrap(),
                    0,
                    0,
                )),
                "queue",
            ),
            other_icd: env.other_icd,
        };
        other.program_from_source(KERNELS, "")
    };
    let foreign_kernel = check(
        cl(Kernel::create(&foreign_program, "add")),
        "clCreateKernel",
    );
    assert_eq!(
        cb.try_kernel(
            ptr::null_mut(),
            &foreign_kernel,
            &[],
            64,
            None,
            &[],
            &mut point,
            &mut handle
        ),
        CL_INVALID_CONTEXT
    );
    let (_, command) = cb.kernel(
        &add,
        &[
            CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
            CL_MUTABLE_DISPATCH_ARGUMENTS_KHR,
            0,
        ],
        64,
        None,
        &[],
    );

    // Not finalized yet: no enqueue, no update.
    assert_eq!(cb.try_enqueue(&[]).err(), Some(CL_INVALID_OPERATION));
    assert_eq!(cb.update(&[config(command)]), CL_INVALID_OPERATION);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    assert_eq!(cb.finalize(), CL_INVALID_OPERATION, "finalized twice");
    assert_eq!(
        sync((0, ptr::null())),
        CL_INVALID_OPERATION,
        "recording after finalize"
    );

    // clEnqueueCommandBufferKHR.
    // SAFETY: the driver validates handles and lists.
    unsafe {
        let enqueue = |n: cl_uint, queues: *mut cl_command_queue, wait: &[cl_event]| {
            call!(
                api,
                enqueue(
                    n,
                    queues,
                    cb.raw,
                    wait.len() as cl_uint,
                    slice_or_null(wait),
                    ptr::null_mut()
                )
            )
        };
        let mut queues = [queue, queue];
        assert_eq!(enqueue(1, ptr::null_mut(), &[]), CL_INVALID_VALUE);
        assert_eq!(enqueue(0, queues.as_mut_ptr(), &[]), CL_INVALID_VALUE);
        assert_eq!(enqueue(2, queues.as_mut_ptr(), &[]), CL_INVALID_VALUE);
        let mut not_a_queue = [data.get() as cl_command_queue];
        assert_eq!(
            enqueue(1, not_a_queue.as_mut_ptr(), &[]),
            CL_INVALID_COMMAND_QUEUE
        );
        let foreign_queue = check(
            cl(CommandQueue::create_default_with_properties(
                &Context::from_device(&env.device).unwrap(),
                0,
                0,
            )),
            "clCreateCommandQueueWithProperties",
        );
        let mut foreign = [foreign_queue.get()];
        assert_eq!(enqueue(1, foreign.as_mut_ptr(), &[]), CL_INVALID_CONTEXT);
        let foreign_event =
            cl3::event::create_user_event(foreign_program.get_context().unwrap()).unwrap();
        assert_eq!(
            enqueue(0, ptr::null_mut(), &[foreign_event]),
            CL_INVALID_CONTEXT
        );
        release(foreign_event);
        assert_eq!(
            enqueue(0, ptr::null_mut(), &[ptr::null_mut()]),
            CL_INVALID_EVENT_WAIT_LIST
        );
        assert_eq!(
            call!(
                api,
                enqueue(0, ptr::null_mut(), cb.raw, 1, ptr::null(), ptr::null_mut())
            ),
            CL_INVALID_EVENT_WAIT_LIST
        );
        assert_eq!(enqueue(0, ptr::null_mut(), &[]), CL_SUCCESS);
        check(cl(env.queue.finish()), "clFinish");
    }

    // Queries.
    let mut small = 0u16;
    // SAFETY: a 2-byte output for a 4-byte answer.
    unsafe {
        assert_eq!(
            call!(
                api,
                info(
                    cb.raw,
                    CL_COMMAND_BUFFER_NUM_QUEUES_KHR,
                    2,
                    (&mut small as *mut u16).cast(),
                    ptr::null_mut()
                )
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            call!(
                api,
                info(
                    cb.raw,
                    CL_COMMAND_BUFFER_FLAGS_KHR as cl_command_buffer_info_khr,
                    0,
                    ptr::null_mut(),
                    ptr::null_mut()
                )
            ),
            CL_INVALID_VALUE,
            "not a query"
        );
        assert_eq!(
            call!(
                api,
                command_info(
                    cb.raw as cl_mutable_command_khr,
                    CL_MUTABLE_DISPATCH_DIMENSIONS_KHR,
                    0,
                    ptr::null_mut(),
                    ptr::null_mut()
                )
            ),
            CL_INVALID_MUTABLE_COMMAND_KHR
        );
        assert_eq!(
            call!(
                api,
                command_info(command, 0x7777, 0, ptr::null_mut(), ptr::null_mut())
            ),
            CL_INVALID_VALUE
        );
    }

    // clUpdateMutableCommandsKHR.
    let four = 4usize;
    let with = |f: &dyn Fn(&mut cl_mutable_dispatch_config_khr)| {
        let mut c = config(command);
        f(&mut c);
        cb.update(&[c])
    };
    assert_eq!(
        with(&|c| c.global_work_size = &four),
        CL_INVALID_OPERATION,
        "only arguments are updatable"
    );
    assert_eq!(with(&|c| c.local_work_size = &four), CL_INVALID_OPERATION);
    assert_eq!(
        with(&|c| c.global_work_offset = &four),
        CL_INVALID_OPERATION
    );
    assert_eq!(with(&|c| c.num_exec_infos = 1), CL_INVALID_OPERATION);
    assert_eq!(
        with(&|c| c.work_dim = 2),
        CL_INVALID_OPERATION,
        "another work_dim"
    );
    assert_eq!(with(&|c| c.work_dim = 1), CL_SUCCESS, "the same work_dim");
    assert_eq!(
        with(&|c| c.num_args = 1),
        CL_INVALID_VALUE,
        "no argument list"
    );
    let seven = 7i32;
    let wrong_size = [cl_mutable_dispatch_arg_khr {
        arg_index: 1,
        arg_size: 2,
        arg_value: (&seven as *const i32).cast(),
    }];
    assert_eq!(
        with(&|c| {
            c.num_args = 1;
            c.arg_list = wrong_size.as_ptr();
        }),
        CL_INVALID_ARG_SIZE
    );
    let not_a_buffer = [arg_of(0, &queue)];
    assert_eq!(
        with(&|c| {
            c.num_args = 1;
            c.arg_list = not_a_buffer.as_ptr();
        }),
        CL_INVALID_MEM_OBJECT
    );
    let mut c = config(cb.raw as cl_mutable_command_khr);
    assert_eq!(
        cb.update(&[c]),
        CL_INVALID_MUTABLE_COMMAND_KHR,
        "not a command"
    );
    let other = Cb::mutable(&api, queue);
    let (_, other_command) = other.kernel(&add, &[], 64, None, &[]);
    c.command = other_command;
    assert_eq!(
        cb.update(&[c]),
        CL_INVALID_MUTABLE_COMMAND_KHR,
        "another buffer's command"
    );
    // SAFETY: the driver validates the lists.
    unsafe {
        let types = [CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR];
        let mut configs = [ptr::null::<c_void>()];
        assert_eq!(
            call!(api, update(cb.raw, 1, types.as_ptr(), configs.as_mut_ptr())),
            CL_INVALID_VALUE,
            "a NULL config"
        );
        let good = config(command);
        configs[0] = (&good as *const cl_mutable_dispatch_config_khr).cast();
        let wrong_type = [7];
        assert_eq!(
            call!(
                api,
                update(cb.raw, 1, wrong_type.as_ptr(), configs.as_mut_ptr())
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            call!(api, update(cb.raw, 0, types.as_ptr(), configs.as_mut_ptr())),
            CL_INVALID_VALUE
        );
        assert_eq!(
            call!(api, update(cb.raw, 1, ptr::null(), configs.as_mut_ptr())),
            CL_INVALID_VALUE
        );
        assert_eq!(
            call!(api, update(cb.raw, 1, types.as_ptr(), configs.as_mut_ptr())),
            CL_SUCCESS
        );
    }
    // A buffer created without CL_COMMAND_BUFFER_MUTABLE_KHR cannot be updated.
    let fixed = Cb::new(&api, queue, &[]);
    let (_, fixed_command) = fixed.kernel(&add, &[], 64, None, &[]);
    ok(fixed.finalize(), "clFinalizeCommandBufferKHR");
    assert_eq!(fixed.update(&[config(fixed_command)]), CL_INVALID_OPERATION);
}
