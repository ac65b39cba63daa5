//! `cl_khr_command_buffer_mutable_dispatch`: kernel commands whose arguments, SVM pointers, exec
//! info, offset, global and local sizes change between enqueues; an update never reaching an
//! execution already enqueued; a failed update changing nothing; arguments deferred to an
//! update.

use super::*;

#[test]
fn kernel_commands_change_between_enqueues() {
    let Some((env, api)) = setup() else { return };
    let n = 64usize;
    let (a, b) = (env.buffer_filled(n, 0i32), env.buffer_filled(n, 0i32));
    let add = kernel(&env, "add");
    arg_buf(&add, 0, &a);
    arg(&add, 1, &1i32);
    let cb = Cb::mutable(&api, env.queue.get());
    // Updatable fields default to every field the device reports.
    let (_, add_command) = cb.kernel(&add, &[], n, None, &[]);
    let command = add_command;
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    cb.run();
    assert!(env.read(&a, n).iter().all(|&x| x == 1));
    // A new value: it stays for every later enqueue.
    let five = 5i32;
    let args = [arg_of(1, &five)];
    let mut c = config(command);
    c.num_args = 1;
    c.arg_list = args.as_ptr();
    ok(cb.update(&[c]), "update the value");
    cb.run();
    cb.run();
    assert!(env.read(&a, n).iter().all(|&x| x == 11));
    // Another buffer, and half the range.
    let b_mem = b.get();
    let args = [arg_of(0, &b_mem)];
    let half = n / 2;
    let mut c = config(command);
    c.num_args = 1;
    c.arg_list = args.as_ptr();
    c.global_work_size = &half;
    ok(cb.update(&[c]), "update the buffer and the size");
    cb.run();
    assert!(env.read(&a, n).iter().all(|&x| x == 11), "a no longer used");
    let got = env.read(&b, n);
    assert!(
        got[..half].iter().all(|&x| x == 5) && got[half..].iter().all(|&x| x == 0),
        "{got:?}"
    );
    // An offset: the upper half.
    let offset = half;
    let mut c = config(command);
    c.global_work_offset = &offset;
    ok(cb.update(&[c]), "update the offset");
    cb.run();
    assert!(env.read(&b, n).iter().all(|&x| x == 5));

    // The local size, seen by the kernel.
    let shape = kernel(&env, "shape");
    let out = env.buffer_filled(n, 0i32);
    arg_buf(&shape, 0, &out);
    let sized = Cb::mutable(&api, env.queue.get());
    let (_, command) = sized.kernel(&shape, &[], n, Some(16), &[]);
    ok(sized.finalize(), "clFinalizeCommandBufferKHR");
    sized.run();
    assert!(env
        .read(&out, n)
        .iter()
        .all(|&x| x == 64 * 10000 + 16 * 100));
    let four = 4usize;
    let mut c = config(command);
    c.local_work_size = &four;
    ok(sized.update(&[c]), "update the local size");
    sized.run();
    assert!(env.read(&out, n).iter().all(|&x| x == 64 * 10000 + 4 * 100));
    // A change of the uniformity the application chose is refused (spec), and changes nothing.
    let (global, local) = (60usize, 8usize);
    let mut c = config(command);
    c.global_work_size = &global;
    c.local_work_size = &local;
    assert_eq!(sized.update(&[c]), CL_INVALID_OPERATION);
    sized.run();
    assert!(env.read(&out, n).iter().all(|&x| x == 64 * 10000 + 4 * 100));

    // SVM pointers as arguments, and exec info.
    // SAFETY: a valid context; freed below.
    let svm = unsafe { cl3::memory::svm_alloc(env.context.get(), CL_MEM_READ_WRITE, n * 4, 0) }
        .expect("clSVMAlloc");
    // SAFETY: n ints of the allocation just made (fine- and coarse-grain host memory alike
    // before any command uses it).
    unsafe { std::slice::from_raw_parts_mut(svm.cast::<i32>(), n).fill(100) };
    let svm_args = [cl_mutable_dispatch_arg_khr {
        arg_index: 0,
        arg_size: 0,
        arg_value: svm,
    }];
    let pointers = [svm];
    let exec = [cl_mutable_dispatch_exec_info_khr {
        param_name: CL_KERNEL_EXEC_INFO_SVM_PTRS,
        param_value_size: std::mem::size_of_val(&pointers),
        param_value: pointers.as_ptr().cast(),
    }];
    let mut c = config(add_command);
    c.num_svm_args = 1;
    c.arg_svm_list = svm_args.as_ptr();
    c.num_exec_infos = 1;
    c.exec_info_list = exec.as_ptr();
    ok(cb.update(&[c]), "update to an SVM pointer with exec info");
    cb.run();
    check(cl(env.queue.finish()), "clFinish");
    // SAFETY: the execution is complete.
    let got = unsafe { std::slice::from_raw_parts(svm.cast::<i32>(), n) };
    // The range is still the upper half (offset 32, 32 items).
    assert!(got[..half].iter().all(|&x| x == 100) && got[half..].iter().all(|&x| x == 105));
    // Bad exec info is the spec's error of clSetKernelExecInfo.
    let bad = [cl_mutable_dispatch_exec_info_khr {
        param_name: 0x7fff,
        param_value_size: 4,
        param_value: (&five as *const i32).cast(),
    }];
    let mut c = config(add_command);
    c.num_exec_infos = 1;
    c.exec_info_list = bad.as_ptr();
    assert_eq!(cb.update(&[c]), CL_INVALID_VALUE);
    drop(cb);
    // SAFETY: the allocation made above; no command uses it any more.
    unsafe { cl3::memory::svm_free(env.context.get(), svm) }.unwrap();
}

#[test]
fn an_update_reaches_only_later_enqueues() {
    let Some((env, api)) = setup() else { return };
    let n = 128usize;
    let (a, b) = (env.buffer_filled(n, 0i32), env.buffer_filled(n, 0i32));
    let set = kernel(&env, "set");
    arg_buf(&set, 0, &a);
    arg(&set, 1, &1i32);
    let cb = Cb::mutable(&api, env.queue.get());
    let (_, command) = cb.kernel(&set, &[], n, None, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    // The first execution waits for a user event; the update comes before it runs.
    let gate = cl3::event::create_user_event(env.context.get()).unwrap();
    let first = cb.enqueue(&[gate]);
    let two = 2i32;
    let b_mem = b.get();
    let args = [arg_of(0, &b_mem), arg_of(1, &two)];
    let mut c = config(command);
    c.num_args = 2;
    c.arg_list = args.as_ptr();
    ok(cb.update(&[c]), "clUpdateMutableCommandsKHR");
    let second = cb.enqueue(&[]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(
        event_status_now(first) > CL_COMPLETE,
        "still waiting for the gate"
    );
    cl3::event::set_user_event_status(gate, CL_COMPLETE).unwrap();
    assert_eq!(event_status(first), CL_COMPLETE);
    assert_eq!(event_status(second), CL_COMPLETE);
    assert!(
        env.read(&a, n).iter().all(|&x| x == 1),
        "the first execution kept its arguments"
    );
    assert!(env.read(&b, n).iter().all(|&x| x == 2));
    for e in [first, second, gate] {
        release(e);
    }
}

/// The status of `e` now, without waiting.
fn event_status_now(e: cl_event) -> cl_int {
    let raw = cl3::event::get_event_data(e, CL_EVENT_COMMAND_EXECUTION_STATUS).unwrap();
    i32::from_ne_bytes(raw[..4].try_into().unwrap())
}

#[test]
fn a_failed_update_changes_nothing() {
    let Some((env, api)) = setup() else { return };
    let n = 64usize;
    let data = env.buffer_filled(n, 0i32);
    let add = kernel(&env, "add");
    arg_buf(&add, 0, &data);
    arg(&add, 1, &1i32);
    let cb = Cb::mutable(&api, env.queue.get());
    let (_, first) = cb.kernel(&add, &[], n, None, &[]);
    let (_, second) = cb.kernel(&add, &[], n, None, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    let ten = 10i32;
    let good = [arg_of(1, &ten)];
    let bad = [arg_of(7, &ten)];
    let mut c1 = config(first);
    c1.num_args = 1;
    c1.arg_list = good.as_ptr();
    let mut c2 = config(second);
    c2.num_args = 1;
    c2.arg_list = bad.as_ptr();
    assert_eq!(cb.update(&[c1, c2]), CL_INVALID_ARG_INDEX);
    cb.run();
    assert!(
        env.read(&data, n).iter().all(|&x| x == 2),
        "neither command changed"
    );
    c2.arg_list = good.as_ptr();
    ok(cb.update(&[c1, c2]), "clUpdateMutableCommandsKHR");
    cb.run();
    assert!(env.read(&data, n).iter().all(|&x| x == 22));
}

#[test]
fn arguments_may_be_deferred_to_an_update() {
    let Some((env, api)) = setup() else { return };
    let n = 64usize;
    let data = env.buffer_filled(n, 0i32);
    let set = kernel(&env, "set");
    arg(&set, 1, &9i32);
    let cb = Cb::mutable(&api, env.queue.get());
    // Without CL_MUTABLE_DISPATCH_ARGUMENTS_KHR in the properties a missing argument is an
    // error, as for clEnqueueNDRangeKernel.
    let (mut point, mut handle) = (0, ptr::null_mut());
    assert_eq!(
        cb.try_kernel(
            ptr::null_mut(),
            &set,
            &[],
            n,
            None,
            &[],
            &mut point,
            &mut handle
        ),
        CL_INVALID_KERNEL_ARGS
    );
    let props = [
        CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
        CL_MUTABLE_DISPATCH_ARGUMENTS_KHR,
        0,
    ];
    let (_, command) = cb.kernel(&set, &props, n, None, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    assert_eq!(cb.state(), CL_COMMAND_BUFFER_STATE_FINALIZED_KHR);
    assert_eq!(cb.try_enqueue(&[]).err(), Some(CL_INVALID_OPERATION));
    let data_mem = data.get();
    let args = [arg_of(0, &data_mem)];
    let mut c = config(command);
    c.num_args = 1;
    c.arg_list = args.as_ptr();
    ok(cb.update(&[c]), "clUpdateMutableCommandsKHR");
    assert_eq!(cb.state(), CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
    cb.run();
    assert!(env.read(&data, n).iter().all(|&x| x == 9));
}
