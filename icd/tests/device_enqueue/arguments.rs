//! `queue_t` kernel arguments, and the kernels of blocks, which applications never see.

use std::ffi::CString;

use super::*;

#[test]
fn queue_arguments_take_device_queues_of_the_context() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let k = env.kernel("device_enqueue", Opt::Optimised, "via_argument");
    let q = device_queue(&env, ON_DEVICE, &[]);
    let env2 = Env::new();
    let foreign = device_queue(&env2, ON_DEVICE, &[]);
    let buf = env.buffer_filled(8, 0i32);
    let set = |size: usize, value: *const c_void| {
        // SAFETY: `value` is NULL or readable for `size` bytes.
        unsafe { clSetKernelArg(k.get(), 1, size, value) }
    };
    let handle = |q: &cl_command_queue| (q as *const cl_command_queue).cast::<c_void>();
    let size = std::mem::size_of::<cl_command_queue>();
    assert_eq!(set(4, handle(&q.0)), CL_INVALID_ARG_SIZE);
    assert_eq!(set(size, null()), CL_INVALID_DEVICE_QUEUE);
    assert_eq!(set(size, handle(&null_mut())), CL_INVALID_DEVICE_QUEUE);
    assert_eq!(
        set(size, handle(&env.queue.get())),
        CL_INVALID_DEVICE_QUEUE,
        "a host queue"
    );
    let mem = buf.get();
    assert_eq!(
        set(size, (&mem as *const cl_mem).cast()),
        CL_INVALID_DEVICE_QUEUE
    );
    assert_eq!(
        set(size, handle(&foreign.0)),
        CL_INVALID_CONTEXT,
        "another context"
    );
    // A device queue for a buffer argument.
    // SAFETY: a handle's address and size.
    let r = unsafe { clSetKernelArg(k.get(), 0, size, handle(&q.0)) };
    assert_eq!(r, CL_INVALID_MEM_OBJECT);

    arg_buf(&k, 0, &buf);
    arg_queue(&k, 1, q.0);
    // No default queue: get_default_queue() is 0, and enqueue_kernel refuses it.
    let (status, _) = launch(&env, &k, &[1], None);
    assert_eq!(status, CL_COMPLETE);
    assert_eq!(env.read(&buf, 8), [0, 9, 9, 9, 9, CLK_INVALID_QUEUE, 0, 0]);
    // The queue made the default: get_default_queue() is the argument's value.
    // SAFETY: valid handles.
    let r = unsafe { clSetDefaultDeviceCommandQueue(env.context.get(), env.device.id(), q.0) };
    assert_eq!(r, CL_SUCCESS);
    let buf = env.buffer_filled(8, 0i32);
    arg_buf(&k, 0, &buf);
    let (status, _) = launch(&env, &k, &[1], None);
    assert_eq!(status, CL_COMPLETE);
    assert_eq!(env.read(&buf, 8), [0, 9, 9, 9, 9, 0, 9, 0]);
    // The queue released after clSetKernelArg: the argument does not keep it (as buffers),
    // and a launch refuses the deleted queue.
    let q2 = device_queue(&env, ON_DEVICE, &[]);
    arg_queue(&k, 1, q2.0);
    let raw = q2.0;
    drop(q2);
    let mut event = null_mut();
    let global = 1usize;
    // SAFETY: valid kernel and queue.
    let r = unsafe {
        clEnqueueNDRangeKernel(
            env.queue.get(),
            k.get(),
            1,
            null(),
            &global,
            null(),
            0,
            null(),
            &mut event,
        )
    };
    assert_eq!(r, CL_INVALID_KERNEL_ARGS, "the queue {raw:?} is gone");
}

/// Each block of `device_enqueue.cl` becomes a kernel (llvm-spirv's `__<kernel>_block_invoke*`
/// entry points): the program lists none of them, and clCreateKernel refuses their names.
#[test]
fn block_kernels_are_no_application_kernels() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let source = std::fs::read_to_string(kernel_source("device_enqueue")).unwrap();
    let mut names: Vec<String> = source
        .lines()
        .filter_map(|l| l.strip_prefix("kernel void "))
        .map(|l| l.split('(').next().unwrap().to_owned())
        .collect();
    names.sort();
    for opt in OPTS {
        let program = env.program("device_enqueue", opt);
        let listed = check(cl(program.get_kernel_names()), "CL_PROGRAM_KERNEL_NAMES");
        let mut listed: Vec<&str> = listed.split(';').collect();
        listed.sort();
        assert_eq!(listed, names, "{opt:?}");
        assert_eq!(
            check(cl(program.get_num_kernels()), "CL_PROGRAM_NUM_KERNELS"),
            names.len()
        );
        let mut n = 0;
        // SAFETY: a count query, then room for `n` kernels.
        unsafe {
            assert_eq!(
                clCreateKernelsInProgram(program.get(), 0, null_mut(), &mut n),
                CL_SUCCESS
            );
            assert_eq!(n as usize, names.len());
            let mut kernels = vec![null_mut(); n as usize];
            assert_eq!(
                clCreateKernelsInProgram(program.get(), n, kernels.as_mut_ptr(), null_mut()),
                CL_SUCCESS
            );
            for k in kernels {
                assert_eq!(clReleaseKernel(k), CL_SUCCESS);
            }
        }
        // The block kernels are in the module, under llvm-spirv's names.
        let il = common::spirv("device_enqueue", opt);
        let block = "__enqueue_flags_block_invoke_kernel";
        assert!(
            il.windows(block.len()).any(|w| w == block.as_bytes()),
            "{block} is in the module"
        );
        let name = CString::new(block).unwrap();
        let mut err = 0;
        // SAFETY: a built program, a NUL-terminated name.
        let k = unsafe { clCreateKernel(program.get(), name.as_ptr(), &mut err) };
        assert!(k.is_null());
        assert_eq!(err, CL_INVALID_KERNEL_NAME);
    }
}

/// `clGetKernelArgInfo` of a `queue_t` argument.
#[test]
fn queue_arguments_have_argument_info() {
    let env = Env::new();
    if !device_enqueue_or_skip(&env) {
        return;
    }
    let program = env.program_from_source(
        "kernel void k(global int *out, queue_t q) {\n\
         enqueue_kernel(q, CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), ^{ out[0] = 1; });\n}",
        "-cl-std=CL3.0 -cl-kernel-arg-info",
    );
    let k = check(cl(Kernel::create(&program, "k")), "clCreateKernel");
    let info = |name: cl_kernel_arg_info| -> Vec<u8> {
        let mut size = 0;
        // SAFETY: a size query, then `size` writable bytes.
        unsafe {
            assert_eq!(
                clGetKernelArgInfo(k.get(), 1, name, 0, null_mut(), &mut size),
                CL_SUCCESS
            );
            let mut bytes = vec![0u8; size];
            assert_eq!(
                clGetKernelArgInfo(
                    k.get(),
                    1,
                    name,
                    size,
                    bytes.as_mut_ptr().cast(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            bytes
        }
    };
    assert_eq!(
        word(&info(CL_KERNEL_ARG_ADDRESS_QUALIFIER)),
        CL_KERNEL_ARG_ADDRESS_PRIVATE as u64
    );
    assert_eq!(
        word(&info(CL_KERNEL_ARG_ACCESS_QUALIFIER)),
        CL_KERNEL_ARG_ACCESS_NONE as u64
    );
    assert_eq!(
        word(&info(CL_KERNEL_ARG_TYPE_QUALIFIER)),
        CL_KERNEL_ARG_TYPE_NONE as u64
    );
    assert_eq!(info(CL_KERNEL_ARG_TYPE_NAME), b"queue_t\0");
    assert_eq!(info(CL_KERNEL_ARG_NAME), b"q\0");
    let q = device_queue(&env, ON_DEVICE, &[]);
    arg_queue(&k, 1, q.0);
}
