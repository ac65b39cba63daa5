//! Executions: two executions of one buffer meeting while both run (simultaneous use), SVM
//! commands and rect copies, a release before the execution ends, kernels that enqueue
//! children.

use super::*;

#[test]
fn executions_of_one_buffer_run_at_the_same_time() {
    let Some((env, api)) = setup() else { return };
    // Each execution counts itself in, then waits (boundedly) for the other: they can only
    // both see 2 if they run at once.
    let program = env.program_from_source(
        "kernel void meet(volatile global int *count, global int *seen) {
             atomic_inc(count);
             int tries = 0;
             while (atomic_add(count, 0) < 2 && tries < 200000000) tries++;
             seen[get_global_offset(0)] = atomic_add(count, 0);
         }",
        "",
    );
    let meet = check(cl(Kernel::create(&program, "meet")), "clCreateKernel");
    let count = env.buffer_filled(1, 0i32);
    let seen = env.buffer_filled(2, 0i32);
    arg_buf(&meet, 0, &count);
    arg_buf(&meet, 1, &seen);
    let queue = check(
        cl(CommandQueue::create_default_with_properties(
            &env.context,
            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
            0,
        )),
        "out-of-order queue",
    );
    let flags = CL_COMMAND_BUFFER_MUTABLE_KHR | CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR;
    let cb = Cb::new(&api, queue.get(), &[CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0]);
    let (_, command) = cb.kernel(&meet, &[], 1, None, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    let first = cb.enqueue(&[]);
    // The second execution writes its own slot.
    let offset = 1usize;
    let mut c = config(command);
    c.global_work_offset = &offset;
    ok(cb.update(&[c]), "clUpdateMutableCommandsKHR");
    let second = cb.enqueue(&[]);
    assert_eq!(event_status(first), CL_COMPLETE);
    assert_eq!(event_status(second), CL_COMPLETE);
    release(first);
    release(second);
    assert_eq!(env.read(&seen, 2), [2, 2], "both executions saw each other");
}

#[test]
fn svm_commands_and_rect_copies() {
    let Some((env, api)) = setup() else { return };
    let n = 256usize;
    let ctx = env.context.get();
    // SAFETY: a valid context; freed below.
    let (src, dst) = unsafe {
        (
            cl3::memory::svm_alloc(ctx, CL_MEM_READ_WRITE, n, 0).expect("clSVMAlloc"),
            cl3::memory::svm_alloc(ctx, CL_MEM_READ_WRITE, n, 0).expect("clSVMAlloc"),
        )
    };
    let cb = Cb::new(&api, env.queue.get(), &[]);
    let (mut filled, mut copied) = (0, 0);
    let pattern = 0x5au8;
    // SAFETY: valid handles; allocations of n bytes.
    unsafe {
        ok(
            call!(
                api,
                svm_fill(
                    cb.raw,
                    ptr::null_mut(),
                    ptr::null(),
                    src,
                    (&pattern as *const u8).cast(),
                    1,
                    n,
                    0,
                    ptr::null(),
                    &mut filled,
                    ptr::null_mut()
                )
            ),
            "clCommandSVMMemFillKHR",
        );
        ok(
            call!(
                api,
                svm_memcpy(
                    cb.raw,
                    ptr::null_mut(),
                    ptr::null(),
                    dst,
                    src,
                    n,
                    1,
                    &filled,
                    &mut copied,
                    ptr::null_mut()
                )
            ),
            "clCommandSVMMemcpyKHR",
        );
    }
    // A 4×4 block of a 16×16 byte buffer copied to the corner of another.
    let a: Vec<u8> = (0..=255).collect();
    let (ba, bb) = (env.buffer(&a), env.buffer_filled(256, 0u8));
    let (src_origin, dst_origin, region) = ([4usize, 2, 0], [0usize, 0, 0], [4usize, 4, 1]);
    // SAFETY: valid handles; three-value arrays.
    ok(
        unsafe {
            call!(
                api,
                copy_rect(
                    cb.raw,
                    ptr::null_mut(),
                    ptr::null(),
                    ba.get(),
                    bb.get(),
                    src_origin.as_ptr(),
                    dst_origin.as_ptr(),
                    region.as_ptr(),
                    16,
                    0,
                    16,
                    0,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                    ptr::null_mut()
                )
            )
        },
        "clCommandCopyBufferRectKHR",
    );
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    cb.run();
    check(cl(env.queue.finish()), "clFinish");
    // SAFETY: the execution is complete; n bytes.
    let got = unsafe { std::slice::from_raw_parts(dst.cast::<u8>(), n) };
    assert!(got.iter().all(|&x| x == pattern));
    let rect = env.read(&bb, 256);
    for y in 0..4 {
        let want: Vec<u8> = (0..4).map(|x| ((y + 2) * 16 + 4 + x) as u8).collect();
        assert_eq!(&rect[y * 16..y * 16 + 4], &want[..], "row {y}");
        assert!(rect[y * 16 + 4..y * 16 + 16].iter().all(|&x| x == 0));
    }
    drop(cb);
    // SAFETY: allocations made above, no longer used.
    unsafe {
        cl3::memory::svm_free(ctx, src).unwrap();
        cl3::memory::svm_free(ctx, dst).unwrap();
    }
}

#[test]
fn a_released_buffer_finishes_its_executions() {
    let Some((env, api)) = setup() else { return };
    let n = 64usize;
    let data = env.buffer_filled(n, 0i32);
    let add = kernel(&env, "add");
    arg_buf(&add, 0, &data);
    arg(&add, 1, &3i32);
    let mut err = 0;
    let queue = env.queue.get();
    // SAFETY: one valid queue, no properties.
    let raw = unsafe { call!(api, create(1, &queue, ptr::null(), &mut err)) };
    ok(err, "clCreateCommandBufferKHR");
    let cb = std::mem::ManuallyDrop::new(Cb { api: &api, raw });
    cb.kernel(&add, &[], n, None, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    let gate = cl3::event::create_user_event(env.context.get()).unwrap();
    let e = cb.enqueue(&[gate]);
    // SAFETY: the application's only reference; the execution still waits for the gate.
    ok(
        unsafe { call!(api, release(raw)) },
        "clReleaseCommandBufferKHR",
    );
    cl3::event::set_user_event_status(gate, CL_COMPLETE).unwrap();
    assert_eq!(event_status(e), CL_COMPLETE);
    release(e);
    release(gate);
    assert!(env.read(&data, n).iter().all(|&x| x == 3));
}

#[test]
fn kernels_that_enqueue_children_run_in_command_buffers() {
    let Some((env, api)) = setup() else { return };
    let caps = device_u64(&env, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR);
    if !env.feature_or_skip(
        "device-side enqueue in command-buffers",
        caps & CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR != 0,
    ) {
        return;
    }
    // The default device queue the children go to (its default size must hold one child per
    // work-item of the launch).
    // SAFETY: the env's device and context.
    let _device_queue = check(
        cl(unsafe {
            opencl3::command_queue::CommandQueue::create_with_properties(
                &env.context,
                env.device.id(),
                CL_QUEUE_ON_DEVICE
                    | CL_QUEUE_ON_DEVICE_DEFAULT
                    | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                0,
            )
        }),
        "default device queue",
    );
    let program = env.program_from_source(
        "kernel void parent(global const int *in, global int *out) {
             int base = (int)get_global_id(0) * 2;
             enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(2),
                            ^{ out[base + get_global_id(0)] = in[base + get_global_id(0)] + 1; });
         }",
        "-cl-std=CL2.0",
    );
    let parent = check(cl(Kernel::create(&program, "parent")), "clCreateKernel");
    const ITEMS: usize = 16384;
    let input: Vec<i32> = (0..2 * ITEMS as i32).collect();
    let input = env.buffer(&input);
    let out = env.buffer_filled(2 * ITEMS, 0i32);
    arg_buf(&parent, 0, &input);
    arg_buf(&parent, 1, &out);
    let cb = Cb::new(&api, env.queue.get(), &[]);
    cb.kernel(&parent, &[], ITEMS, None, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    cb.run();
    let got = env.read(&out, 2 * ITEMS);
    let wrong = (0..2 * ITEMS).find(|&i| got[i] != i as i32 + 1);
    assert_eq!(wrong, None, "child results: {:?}", wrong.map(|i| got[i]));
}
