//! Pipes as kernel arguments: clSetKernelArg, launches and command-buffers holding them,
//! clGetKernelArgInfo.

use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::common::*;
use super::*;
use opencl3::kernel::get_kernel_arg_info;
use opencl_sys::*;

fn set_arg<T>(k: &Kernel, index: cl_uint, value: &T) -> cl_int {
    // SAFETY: `value` is readable for its size.
    unsafe {
        clSetKernelArg(
            k.get(),
            index,
            std::mem::size_of::<T>(),
            (value as *const T).cast(),
        )
    }
}

fn launch(env: &Env, k: cl_kernel, n: usize, wait: &[cl_event]) -> cl_int {
    // SAFETY: a valid queue and kernel; a wait list as long as given.
    unsafe {
        clEnqueueNDRangeKernel(
            env.queue.get(),
            k,
            1,
            null(),
            &n,
            null(),
            wait.len() as cl_uint,
            if wait.is_empty() {
                null()
            } else {
                wait.as_ptr()
            },
            null_mut(),
        )
    }
}

fn read_ints(env: &Env, m: cl_mem, n: usize) -> Vec<i32> {
    let mut out = vec![0i32; n];
    // SAFETY: a blocking read into `n` ints.
    let status = unsafe {
        clEnqueueReadBuffer(
            env.queue.get(),
            m,
            CL_TRUE,
            0,
            4 * n,
            out.as_mut_ptr().cast(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(status, CL_SUCCESS, "clEnqueueReadBuffer");
    out
}

fn pipe_kernel(env: &Env) -> Kernel {
    let program = env.program("pipes", Opt::Optimised);
    check(cl(Kernel::create(&program, "pipe_args")), "clCreateKernel")
}

/// `clSetKernelArg` on a pipe argument takes a pipe object of the kernel's context and
/// nothing else (API spec: "arg_value must point to a pipe memory object"; NULL or another
/// memory object is CL_INVALID_MEM_OBJECT, one of another context CL_INVALID_CONTEXT, API spec
/// 3.1 §5.9.2); a buffer argument takes no pipe. A launch writes what the kernel computes.
#[test]
fn kernel_pipe_arguments() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let k = pipe_kernel(&env);
    let (p, q) = (pipe(&env, 4, 8), pipe(&env, 16, 8));
    let out = buffer(&env, 64);
    let value = 41i32;
    assert_eq!(set_arg(&k, 2, &out.0), CL_SUCCESS);
    assert_eq!(set_arg(&k, 3, &value), CL_SUCCESS);
    let other = Env::new();
    let foreign = pipe(&other, 4, 8);
    let buf = buffer(&env, 16);
    let null_mem: cl_mem = null_mut();
    let not_a_mem = env.context.get();
    let invalid = CL_INVALID_MEM_OBJECT;
    // SAFETY: arg_value is NULL or readable for the size given.
    unsafe {
        assert_eq!(
            clSetKernelArg(k.get(), 0, 4, (&p.0 as *const cl_mem).cast()),
            CL_INVALID_ARG_SIZE
        );
        assert_eq!(clSetKernelArg(k.get(), 0, 8, null()), invalid, "NULL");
    }
    assert_eq!(set_arg(&k, 0, &null_mem), invalid, "a NULL pipe");
    assert_eq!(set_arg(&k, 0, &buf.0), invalid, "a buffer");
    assert_eq!(set_arg(&k, 0, &not_a_mem), invalid, "a context");
    assert_eq!(
        set_arg(&k, 0, &foreign.0),
        CL_INVALID_CONTEXT,
        "another context's pipe"
    );
    if let Some(img) = image(&env) {
        assert_eq!(set_arg(&k, 0, &img.0), invalid, "an image");
    }
    // A pointer argument takes no pipe.
    assert_eq!(set_arg(&k, 2, &p.0), invalid, "a pipe for a buffer");
    assert_eq!(launch(&env, k.get(), 16, &[]), CL_INVALID_KERNEL_ARGS);
    // Either end of a pipe object may be bound to either kind of argument.
    assert_eq!(set_arg(&k, 0, &p.0), CL_SUCCESS);
    assert_eq!(launch(&env, k.get(), 16, &[]), CL_INVALID_KERNEL_ARGS);
    assert_eq!(set_arg(&k, 1, &q.0), CL_SUCCESS);
    assert_eq!(set_arg(&k, 1, &p.0), CL_SUCCESS);
    // A failed call leaves the argument as it was.
    assert_eq!(set_arg(&k, 0, &buf.0), invalid);
    assert_eq!(launch(&env, k.get(), 16, &[]), CL_SUCCESS);
    assert_eq!(read_ints(&env, out.0, 16), vec![41; 16]);
    // A clone has the same arguments.
    let mut err = 0;
    // SAFETY: a valid kernel.
    let clone = unsafe { clCloneKernel(k.get(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let value = -3i32;
    // SAFETY: the clone's argument 3 is an int.
    unsafe {
        assert_eq!(
            clSetKernelArg(clone, 3, 4, (&value as *const i32).cast()),
            CL_SUCCESS
        );
    }
    assert_eq!(launch(&env, clone, 16, &[]), CL_SUCCESS);
    assert_eq!(read_ints(&env, out.0, 16), vec![-3; 16]);
    // SAFETY: the clone's one reference.
    assert_eq!(unsafe { clReleaseKernel(clone) }, CL_SUCCESS);
    // An image argument takes no pipe either.
    if image(&env).is_some() {
        let program = env.program_from_source(
            "kernel void img(read_only image2d_t i, global float4 *o) {
                 o[0] = read_imagef(i, (int2)(0, 0));
             }",
            "-cl-std=CL3.0",
        );
        let k = check(cl(Kernel::create(&program, "img")), "clCreateKernel");
        assert_eq!(set_arg(&k, 0, &p.0), invalid, "a pipe for an image");
    }
}

/// A kernel holds its arguments' memory objects weakly (API spec, clSetKernelArg's note), but
/// a launch holds its pipes until it has run, as it does buffers: the last release while the
/// launch waits deletes the pipe after the launch.
#[test]
fn launches_hold_their_pipes_until_they_have_run() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let k = pipe_kernel(&env);
    let p = pipe(&env, 4, 8).into_raw();
    let deleted = deletion_counter(p);
    let out = buffer(&env, 64);
    let value = 5i32;
    for (index, status) in [
        (0, set_arg(&k, 0, &p)),
        (1, set_arg(&k, 1, &p)),
        (2, set_arg(&k, 2, &out.0)),
        (3, set_arg(&k, 3, &value)),
    ] {
        assert_eq!(status, CL_SUCCESS, "argument {index}");
    }
    let mut err = 0;
    // SAFETY: a valid context.
    let gate = unsafe { clCreateUserEvent(env.context.get(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(launch(&env, k.get(), 16, &[gate]), CL_SUCCESS);
    // SAFETY: the pipe's one reference, given back while the launch waits.
    assert_eq!(unsafe { clReleaseMemObject(p) }, CL_SUCCESS);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(
        deleted.load(Ordering::SeqCst),
        0,
        "deleted before its launch ran"
    );
    // SAFETY: our user event, completed once and released.
    unsafe {
        assert_eq!(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
        assert_eq!(clFinish(env.queue.get()), CL_SUCCESS);
        assert_eq!(clReleaseEvent(gate), CL_SUCCESS);
    }
    assert_eq!(read_ints(&env, out.0, 16), vec![5; 16]);
    wait_for(deleted, 1, "the pipe after its launch");
    // The kernel's argument is gone with it: a new launch is refused.
    assert_eq!(launch(&env, k.get(), 16, &[]), CL_INVALID_KERNEL_ARGS);
}

type CreateCommandBuffer = clCreateCommandBufferKHR_fn;

/// `cl_khr_command_buffer`'s entry point `name`, as the `Option<fn>` type `F` it has.
///
/// # Safety
/// `F` must be the function pointer type of `name`, as an `Option`.
unsafe fn entry<F: Copy>(name: &str) -> F {
    let c = CString::new(name).unwrap();
    // SAFETY: a valid platform and a NUL-terminated name.
    let p = unsafe { clGetExtensionFunctionAddressForPlatform(platform().id(), c.as_ptr()) };
    assert!(!p.is_null(), "{name} is not reachable");
    // SAFETY: a non-NULL function pointer of the type the caller vouches for.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

/// A command-buffer's kernel command captures its pipe arguments at recording and holds the
/// pipes for the command-buffer's life; a mutable update takes a pipe for a pipe argument
/// and refuses a buffer for it.
#[test]
fn command_buffers_record_pipe_arguments() {
    let env = Env::new();
    if !pipes_or_skip(&env) || !env.extension_or_skip("cl_khr_command_buffer_mutable_dispatch") {
        return;
    }
    // SAFETY: each entry point has the type opencl-sys gives it.
    let (create, finalize, enqueue, ndrange, update, release) = unsafe {
        (
            entry::<CreateCommandBuffer>("clCreateCommandBufferKHR").unwrap(),
            entry::<clFinalizeCommandBufferKHR_fn>("clFinalizeCommandBufferKHR").unwrap(),
            entry::<clEnqueueCommandBufferKHR_fn>("clEnqueueCommandBufferKHR").unwrap(),
            entry::<clCommandNDRangeKernelKHR_fn>("clCommandNDRangeKernelKHR").unwrap(),
            entry::<clUpdateMutableCommandsKHR_fn>("clUpdateMutableCommandsKHR").unwrap(),
            entry::<clReleaseCommandBufferKHR_fn>("clReleaseCommandBufferKHR").unwrap(),
        )
    };
    // SAFETY: as above.
    let (copy, fill) = unsafe {
        (
            entry::<clCommandCopyBufferKHR_fn>("clCommandCopyBufferKHR").unwrap(),
            entry::<clCommandFillBufferKHR_fn>("clCommandFillBufferKHR").unwrap(),
        )
    };
    let k = pipe_kernel(&env);
    let p = pipe(&env, 4, 8).into_raw();
    let deleted = deletion_counter(p);
    let other = pipe(&env, 4, 8);
    let out = buffer(&env, 64);
    let value = 9i32;
    for (index, status) in [
        (0, set_arg(&k, 0, &p)),
        (1, set_arg(&k, 1, &p)),
        (2, set_arg(&k, 2, &out.0)),
        (3, set_arg(&k, 3, &value)),
    ] {
        assert_eq!(status, CL_SUCCESS, "argument {index}");
    }
    let queue = env.queue.get();
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        0,
    ];
    let mut err = 0;
    let n = 16usize;
    let mut command: cl_mutable_command_khr = null_mut();
    // SAFETY: valid handles; a zero-terminated property list; arrays of one size.
    let cb = unsafe {
        let cb = create(1, &queue, props.as_ptr(), &mut err);
        assert_eq!(err, CL_SUCCESS, "clCreateCommandBufferKHR");
        let status = ndrange(
            cb,
            null_mut(),
            null(),
            k.get(),
            1,
            null(),
            &n,
            null(),
            0,
            null(),
            null_mut(),
            &mut command,
        );
        assert_eq!(status, CL_SUCCESS, "clCommandNDRangeKernelKHR");
        // The buffer commands of a command-buffer refuse a pipe as the queue's do.
        let (src, dst) = (p, out.0);
        let status = copy(
            cb,
            null_mut(),
            null(),
            src,
            dst,
            0,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(status, CL_INVALID_MEM_OBJECT, "clCommandCopyBufferKHR");
        let pattern = 0i32;
        let status = fill(
            cb,
            null_mut(),
            null(),
            src,
            (&pattern as *const i32).cast(),
            4,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(status, CL_INVALID_MEM_OBJECT, "clCommandFillBufferKHR");
        assert_eq!(finalize(cb), CL_SUCCESS);
        cb
    };
    // The recording holds the pipe: the application's last release does not delete it.
    // SAFETY: the pipe's one reference.
    assert_eq!(unsafe { clReleaseMemObject(p) }, CL_SUCCESS);
    assert_eq!(deleted.load(Ordering::SeqCst), 0, "deleted while recorded");
    let run = || {
        // SAFETY: a finalized command-buffer of this queue.
        unsafe {
            assert_eq!(
                enqueue(0, null_mut(), cb, 0, null(), null_mut()),
                CL_SUCCESS,
                "clEnqueueCommandBufferKHR"
            );
            assert_eq!(clFinish(queue), CL_SUCCESS);
        }
    };
    run();
    assert_eq!(read_ints(&env, out.0, n), vec![9; n]);
    let update_arg = |index: cl_uint, m: &cl_mem, new_value: i32| {
        let args = [
            cl_mutable_dispatch_arg_khr {
                arg_index: index,
                arg_size: std::mem::size_of::<cl_mem>(),
                arg_value: (m as *const cl_mem).cast(),
            },
            cl_mutable_dispatch_arg_khr {
                arg_index: 3,
                arg_size: 4,
                arg_value: (&new_value as *const i32).cast(),
            },
        ];
        let config = cl_mutable_dispatch_config_khr {
            command,
            num_args: 2,
            num_svm_args: 0,
            num_exec_infos: 0,
            work_dim: 0,
            arg_list: args.as_ptr(),
            arg_svm_list: null(),
            exec_info_list: null(),
            global_work_offset: null(),
            global_work_size: null(),
            local_work_size: null(),
        };
        let types = [CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR];
        let mut configs = [(&config as *const cl_mutable_dispatch_config_khr).cast::<c_void>()];
        // SAFETY: one configuration of the type named, whose lists live through the call.
        unsafe { update(cb, 1, types.as_ptr(), configs.as_mut_ptr()) }
    };
    assert_eq!(
        update_arg(0, &out.0, 1),
        CL_INVALID_MEM_OBJECT,
        "a buffer for a pipe"
    );
    assert_eq!(
        update_arg(2, &other.0, 1),
        CL_INVALID_MEM_OBJECT,
        "a pipe for a buffer"
    );
    run();
    assert_eq!(
        read_ints(&env, out.0, n),
        vec![9; n],
        "failed updates change nothing"
    );
    assert_eq!(update_arg(0, &other.0, 12), CL_SUCCESS);
    run();
    assert_eq!(read_ints(&env, out.0, n), vec![12; n]);
    // SAFETY: the command-buffer's one reference.
    assert_eq!(unsafe { release(cb) }, CL_SUCCESS);
    wait_for(deleted, 1, "the pipe after its command-buffer");
}

/// `clGetKernelArgInfo` of pipe arguments: global, their end as the access qualifier, the
/// PIPE type qualifier alone (whatever else their declaration says, as the Khronos CTS api
/// kernel_arg_info expects), the packet type as the type name.
#[test]
fn kernel_arg_info_of_pipes() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let program = env.program_from_source(
        "typedef struct { int a; float b; } pair;
         kernel void info(__write_only pipe int a, __read_only pipe float4 b,
                          read_only pipe pair c, const __write_only pipe uint d,
                          global int *out) {
             out[0] = 1;
         }",
        "-cl-std=CL3.0 -cl-kernel-arg-info",
    );
    let k = check(cl(Kernel::create(&program, "info")), "clCreateKernel");
    let number = |i: u32, param: cl_kernel_arg_info| -> u64 {
        match get_kernel_arg_info(k.get(), i, param).expect("clGetKernelArgInfo") {
            cl3::info_type::InfoType::Uint(v) => u64::from(v),
            cl3::info_type::InfoType::Ulong(v) => v,
            other => panic!("param {param:#x}: {other:?}"),
        }
    };
    let text = |i: u32, param: cl_kernel_arg_info| -> String {
        String::from(get_kernel_arg_info(k.get(), i, param).expect("clGetKernelArgInfo"))
    };
    let write = CL_KERNEL_ARG_ACCESS_WRITE_ONLY as u64;
    let read = CL_KERNEL_ARG_ACCESS_READ_ONLY as u64;
    for (i, (name, ty, access)) in [
        ("a", "int", write),
        ("b", "float4", read),
        ("c", "pair", read),
        ("d", "uint", write),
    ]
    .into_iter()
    .enumerate()
    {
        let i = i as u32;
        assert_eq!(text(i, CL_KERNEL_ARG_NAME), name);
        assert_eq!(text(i, CL_KERNEL_ARG_TYPE_NAME), ty, "{name}");
        assert_eq!(
            number(i, CL_KERNEL_ARG_ADDRESS_QUALIFIER),
            CL_KERNEL_ARG_ADDRESS_GLOBAL as u64,
            "{name}"
        );
        assert_eq!(number(i, CL_KERNEL_ARG_ACCESS_QUALIFIER), access, "{name}");
        assert_eq!(
            number(i, CL_KERNEL_ARG_TYPE_QUALIFIER),
            CL_KERNEL_ARG_TYPE_PIPE as u64,
            "{name}"
        );
    }
    assert_eq!(
        number(4, CL_KERNEL_ARG_TYPE_QUALIFIER),
        CL_KERNEL_ARG_TYPE_NONE as u64
    );
    assert_eq!(
        number(4, CL_KERNEL_ARG_ACCESS_QUALIFIER),
        CL_KERNEL_ARG_ACCESS_NONE as u64
    );
}

fn int_buffer(env: &Env, data: &[i32]) -> Mem {
    let mut err = 0;
    // SAFETY: COPY_HOST_PTR copies `data` during the call.
    let m = unsafe {
        clCreateBuffer(
            env.context.get(),
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            4 * data.len(),
            data.as_ptr() as *mut c_void,
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "clCreateBuffer");
    Mem(m)
}

#[track_caller]
fn run(env: &Env, k: &Kernel, args: &[&cl_mem], n: usize) {
    for (i, m) in args.iter().enumerate() {
        assert_eq!(set_arg(k, i as cl_uint, *m), CL_SUCCESS, "argument {i}");
    }
    assert_eq!(launch(env, k.get(), n, &[]), CL_SUCCESS);
    // SAFETY: a valid queue.
    assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS);
}

/// Through the loader, a producer's packets reach a consumer launched after it, and the
/// packet queries count them: each launch gives the pipe functions the pipe object's ring.
#[test]
fn kernels_pass_packets_through_a_pipe_object() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let program = env.program("pipes", Opt::Optimised);
    let kernel = |name| check(cl(Kernel::create(&program, name)), "clCreateKernel");
    let (produce, consume, count) = (kernel("produce"), kernel("consume"), kernel("count"));
    let p = pipe(&env, 4, 64);
    let src: Vec<i32> = (0..80).map(|i| i * 7 + 3).collect();
    let src_buf = int_buffer(&env, &src);
    let status = buffer(&env, 4 * 80);
    let dst = buffer(&env, 4 * 80);
    let counts = buffer(&env, 8);
    run(&env, &produce, &[&src_buf.0, &p.0, &status.0], 48);
    assert_eq!(read_ints(&env, status.0, 48), vec![0; 48], "48 writes");
    run(&env, &count, &[&p.0, &counts.0], 1);
    assert_eq!(read_ints(&env, counts.0, 2), [48, 64]);
    run(&env, &consume, &[&p.0, &dst.0, &status.0], 64);
    let (read, values) = (read_ints(&env, status.0, 64), read_ints(&env, dst.0, 64));
    // Work-items race for the packets: which one gets which is not fixed, the set is.
    let mut got: Vec<i32> = values
        .iter()
        .zip(&read)
        .filter(|(_, &s)| s == 0)
        .map(|(&v, _)| v)
        .collect();
    got.sort_unstable();
    assert_eq!(got, src[..48], "every packet read once");
    assert_eq!(
        read.iter().filter(|&&s| s == -1).count(),
        16,
        "16 reads of an empty pipe"
    );
    run(&env, &count, &[&p.0, &counts.0], 1);
    assert_eq!(read_ints(&env, counts.0, 2), [0, 64]);
    // A full pipe refuses writes.
    run(&env, &produce, &[&src_buf.0, &p.0, &status.0], 80);
    let wrote = read_ints(&env, status.0, 80);
    assert_eq!(wrote.iter().filter(|&&s| s == 0).count(), 64);
    assert_eq!(wrote.iter().filter(|&&s| s == -1).count(), 16);
    run(&env, &count, &[&p.0, &counts.0], 1);
    assert_eq!(read_ints(&env, counts.0, 2), [64, 64]);
}

/// Packets of `CL_DEVICE_PIPE_MAX_PACKET_SIZE` bytes pass whole (the Khronos CTS
/// pipe_max_packet_size).
#[test]
fn packets_of_the_largest_size_pass_whole() {
    let env = Env::new();
    if !pipes_or_skip(&env) || env.other_icd {
        return;
    }
    let program = env.program("pipes", Opt::Optimised);
    let kernel = |name| check(cl(Kernel::create(&program, name)), "clCreateKernel");
    let (produce, consume) = (kernel("produce_big"), kernel("consume_big"));
    const N: usize = 8;
    let p = pipe(&env, 1024, N as u32);
    let src: Vec<i32> = (0..256 * N as i32)
        .map(|i| i.wrapping_mul(0x9E37_79B1u32 as i32))
        .collect();
    let src_buf = int_buffer(&env, &src);
    let dst = buffer(&env, 1024 * N);
    let status = buffer(&env, 4 * N);
    run(&env, &produce, &[&src_buf.0, &p.0, &status.0], N);
    assert_eq!(read_ints(&env, status.0, N), vec![0; N]);
    run(&env, &consume, &[&p.0, &dst.0, &status.0], N);
    assert_eq!(read_ints(&env, status.0, N), vec![0; N]);
    let chunks = |v: Vec<i32>| {
        let mut c: Vec<Vec<i32>> = v.chunks(256).map(<[i32]>::to_vec).collect();
        c.sort();
        c
    };
    assert_eq!(chunks(read_ints(&env, dst.0, 256 * N)), chunks(src));
}

/// One work-item holds `CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS` reservations of one pipe at
/// once, then commits them, at each end: the Khronos CTS pipe_max_active_reservations, with
/// the reserve ids in a global buffer as there.
#[test]
fn a_work_item_holds_the_reported_number_of_reservations() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let n = device_word(&env, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS);
    let source = format!(
        "kernel void hold_write(global const int *src, __write_only pipe int out,
                                global char *ids, global int *status) {{
             global reserve_id_t *id = (global reserve_id_t *)ids;
             for (int i = 0; i < {n}; i++) {{
                 id[i] = reserve_write_pipe(out, 1);
                 if (!is_valid_reserve_id(id[i])) {{ *status = -1 - i; return; }}
                 write_pipe(out, id[i], 0, &src[i]);
             }}
             // The pipe is full: one more reservation fails.
             *status = is_valid_reserve_id(reserve_write_pipe(out, 1));
             for (int i = 0; i < {n}; i++) commit_write_pipe(out, id[i]);
         }}
         kernel void hold_read(__read_only pipe int in, global int *dst,
                               global char *ids, global int *status) {{
             global reserve_id_t *id = (global reserve_id_t *)ids;
             for (int i = 0; i < {n}; i++) {{
                 id[i] = reserve_read_pipe(in, 1);
                 if (!is_valid_reserve_id(id[i])) {{ *status = -1 - i; return; }}
                 read_pipe(in, id[i], 0, &dst[i]);
             }}
             *status = is_valid_reserve_id(reserve_read_pipe(in, 1));
             for (int i = 0; i < {n}; i++) commit_read_pipe(in, id[i]);
         }}"
    );
    let program = env.program_from_source(&source, "-cl-std=CL3.0");
    let kernel = |name| check(cl(Kernel::create(&program, name)), "clCreateKernel");
    let n = n as usize;
    let p = pipe(&env, 4, n as u32);
    let src: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
    let src_buf = int_buffer(&env, &src);
    let dst = buffer(&env, 4 * n);
    let ids = buffer(&env, 16 * n);
    let status = int_buffer(&env, &[7]);
    let started = Instant::now();
    run(
        &env,
        &kernel("hold_write"),
        &[&src_buf.0, &p.0, &ids.0, &status.0],
        1,
    );
    assert_eq!(
        read_ints(&env, status.0, 1),
        [0],
        "every write reservation held"
    );
    run(
        &env,
        &kernel("hold_read"),
        &[&p.0, &dst.0, &ids.0, &status.0],
        1,
    );
    assert_eq!(
        read_ints(&env, status.0, 1),
        [0],
        "every read reservation held"
    );
    // One work-item's reservations come in order: the packets too.
    assert_eq!(read_ints(&env, dst.0, n), src);
    eprintln!("{n} reservations at each end: {:?}", started.elapsed());
}
