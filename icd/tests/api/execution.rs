//! Events, user events, markers and profiling; kernel arguments and launches; legacy queue
//! calls and callbacks; queues used from several threads.

use super::*;

#[test]
fn events_user_markers_profiling() {
    let env = Env::new(CL_QUEUE_PROFILING_ENABLE as cl_command_queue_properties);
    let mut err = 0;
    // SAFETY: valid handles and out pointers.
    unsafe {
        let user = clCreateUserEvent(env.ctx, &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut marker = null_mut();
        assert_eq!(
            clEnqueueMarkerWithWaitList(env.q, 1, &user, &mut marker),
            CL_SUCCESS
        );
        let mut st: cl_int = 0;
        assert_eq!(
            clGetEventInfo(
                marker,
                CL_EVENT_COMMAND_EXECUTION_STATUS,
                4,
                (&mut st as *mut cl_int).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert!(st > CL_COMPLETE, "the marker waits for the user event");
        assert_eq!(clSetUserEventStatus(user, CL_COMPLETE), CL_SUCCESS);
        assert_eq!(
            clSetUserEventStatus(user, CL_COMPLETE),
            CL_INVALID_OPERATION
        );
        assert_eq!(clWaitForEvents(1, &marker), CL_SUCCESS);
        let (mut q, mut s, mut b, mut e) = (0u64, 0u64, 0u64, 0u64);
        for (p, v) in [
            (CL_PROFILING_COMMAND_QUEUED, &mut q),
            (CL_PROFILING_COMMAND_SUBMIT, &mut s),
            (CL_PROFILING_COMMAND_START, &mut b),
            (CL_PROFILING_COMMAND_END, &mut e),
        ] {
            assert_eq!(
                clGetEventProfilingInfo(marker, p, 8, (v as *mut u64).cast(), null_mut()),
                CL_SUCCESS
            );
        }
        assert!(q > 0 && q <= s && s <= b && b <= e, "{q} {s} {b} {e}");
        assert_eq!(
            clGetEventProfilingInfo(
                user,
                CL_PROFILING_COMMAND_END,
                8,
                (&mut e as *mut u64).cast(),
                null_mut()
            ),
            CL_PROFILING_INFO_NOT_AVAILABLE
        );

        // A failed user event fails its dependants.
        let user2 = clCreateUserEvent(env.ctx, &mut err);
        let mut m2 = null_mut();
        assert_eq!(
            clEnqueueMarkerWithWaitList(env.q, 1, &user2, &mut m2),
            CL_SUCCESS
        );
        assert_eq!(clSetUserEventStatus(user2, -1), CL_SUCCESS);
        assert_eq!(
            clWaitForEvents(1, &m2),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        );
        for ev in [user, marker, user2, m2] {
            assert_eq!(clReleaseEvent(ev), CL_SUCCESS);
        }
        assert_eq!(clWaitForEvents(0, null()), CL_INVALID_VALUE);
        assert_eq!(clReleaseEvent(env.q as cl_event), CL_INVALID_EVENT);
    }
}

/// Needs the codegen (not on this branch): builds a hand-written kernel, checks argument
/// errors, runs it over a non-uniform range with an offset and checks every element.
#[test]
fn kernel_args_and_execution() {
    let env = Env::new(0);
    let mut err = 0;
    let il = spirv("store");
    // SAFETY: valid handles; argument values sized as passed.
    unsafe {
        let p = clCreateProgramWithIL(env.ctx, il.as_ptr().cast(), il.len(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            clBuildProgram(p, 0, null(), null(), null(), null_mut()),
            CL_SUCCESS,
            "{}",
            build_log(p, env.dev)
        );
        let name = CString::new("store").unwrap();
        let k = clCreateKernel(p, name.as_ptr(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let n = 1000usize;
        let buf = env.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        let g = [n - 3];
        let off = [3usize];
        let l = [64usize];
        // The launch the test repeats: 1000 - 3 items from offset 3 in groups of 64.
        let launch = |dims: cl_uint| {
            clEnqueueNDRangeKernel(
                env.q,
                k,
                dims,
                off.as_ptr(),
                g.as_ptr(),
                l.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(launch(1), CL_INVALID_KERNEL_ARGS);
        let v = 100u32;
        assert_eq!(
            clSetKernelArg(k, 2, 4, (&v as *const u32).cast()),
            CL_INVALID_ARG_INDEX
        );
        assert_eq!(
            clSetKernelArg(k, 1, 8, (&v as *const u32).cast()),
            CL_INVALID_ARG_SIZE
        );
        assert_eq!(
            clSetKernelArg(k, 0, 4, (&buf as *const cl_mem).cast()),
            CL_INVALID_ARG_SIZE
        );
        let not_mem = env.q;
        assert_eq!(
            clSetKernelArg(k, 0, 8, (&not_mem as *const cl_command_queue).cast()),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(
            clSetKernelArg(k, 0, 8, (&buf as *const cl_mem).cast()),
            CL_SUCCESS
        );
        assert_eq!(
            clSetKernelArg(k, 1, 4, (&v as *const u32).cast()),
            CL_SUCCESS
        );
        // cl_khr_suggested_local_work_size, looked up the way applications find it.
        let fname = CString::new("clGetKernelSuggestedLocalWorkSizeKHR").unwrap();
        let f = clGetExtensionFunctionAddressForPlatform(platform(), fname.as_ptr());
        assert!(!f.is_null());
        type Suggest = unsafe extern "C" fn(
            cl_command_queue,
            cl_kernel,
            cl_uint,
            *const usize,
            *const usize,
            *mut usize,
        ) -> cl_int;
        let suggest: Suggest = std::mem::transmute::<*mut c_void, Suggest>(f);
        let mut local = [0usize; 2];
        let g2 = [96usize, 20];
        assert_eq!(
            suggest(env.q, k, 2, null(), g2.as_ptr(), local.as_mut_ptr()),
            CL_SUCCESS
        );
        assert!(
            local.iter().zip(g2).all(|(l, g)| *l >= 1 && g % l == 0),
            "{local:?}"
        );
        assert!(local[0] * local[1] > 1, "{local:?}");
        let zero = [0usize];
        assert_eq!(
            suggest(env.q, k, 1, null(), zero.as_ptr(), local.as_mut_ptr()),
            CL_INVALID_GLOBAL_WORK_SIZE
        );
        assert_eq!(
            suggest(env.q, k, 4, null(), g2.as_ptr(), local.as_mut_ptr()),
            CL_INVALID_WORK_DIMENSION
        );
        assert_eq!(
            suggest(env.q, k, 1, null(), g2.as_ptr(), null_mut()),
            CL_INVALID_VALUE
        );
        // The program stays alive while the kernel does.
        assert_eq!(clReleaseProgram(p), CL_SUCCESS);
        assert_eq!(launch(1), CL_SUCCESS);
        assert_eq!(launch(4), CL_INVALID_WORK_DIMENSION);
        let mut out = vec![0u32; n];
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                buf,
                CL_TRUE,
                0,
                n * 4,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        for (i, x) in out.iter().enumerate() {
            let want = if i < 3 { 0 } else { 100 + i as u32 };
            assert_eq!(*x, want, "index {i}");
        }
        // A kernel argument does not keep its buffer: the last release deletes it (destructor
        // callback) while the kernel lives, and a launch with it is then refused.
        assert_eq!(
            clSetMemObjectDestructorCallback(buf, on_arg_destroyed, null_mut()),
            CL_SUCCESS
        );
        assert_eq!(clFinish(env.q), CL_SUCCESS);
        assert_eq!(clReleaseMemObject(buf), CL_SUCCESS);
        assert_eq!(ARG_DESTROYED.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(launch(1), CL_INVALID_KERNEL_ARGS);
        assert_eq!(clReleaseKernel(k), CL_SUCCESS);
    }
}

static ARG_DESTROYED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
extern "C" fn on_arg_destroyed(_m: cl_mem, _u: *mut c_void) {
    ARG_DESTROYED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

static CALLBACKS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
extern "C" fn on_event(_e: cl_event, status: cl_int, _u: *mut c_void) {
    assert_eq!(status, CL_COMPLETE);
    CALLBACKS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn legacy_queue_barrier_and_callbacks() {
    let dev = device();
    let mut err = 0;
    // SAFETY: valid handles and out pointers.
    unsafe {
        let ctx = clCreateContext(null(), 1, &dev, null(), null_mut(), &mut err);
        let q = clCreateCommandQueue(
            ctx,
            dev,
            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_command_queue_properties,
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let mut props: cl_command_queue_properties = 0;
        assert_eq!(
            clGetCommandQueueInfo(
                q,
                CL_QUEUE_PROPERTIES,
                8,
                (&mut props as *mut cl_command_queue_properties).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(
            props,
            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_command_queue_properties
        );
        let mut qctx: cl_context = null_mut();
        assert_eq!(
            clGetCommandQueueInfo(
                q,
                CL_QUEUE_CONTEXT,
                8,
                (&mut qctx as *mut cl_context).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(qctx, ctx);
        assert!(clCreateCommandQueue(ctx, dev, 1 << 20, &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        let mut ev = null_mut();
        assert_eq!(
            clEnqueueBarrierWithWaitList(q, 0, null(), &mut ev),
            CL_SUCCESS
        );
        assert_eq!(clFlush(q), CL_SUCCESS);
        assert_eq!(clFinish(q), CL_SUCCESS);
        let before = CALLBACKS.load(std::sync::atomic::Ordering::SeqCst);
        // Registered after completion: called at once.
        assert_eq!(
            clSetEventCallback(ev, CL_COMPLETE, on_event, null_mut()),
            CL_SUCCESS
        );
        assert_eq!(
            CALLBACKS.load(std::sync::atomic::Ordering::SeqCst),
            before + 1
        );
        assert_eq!(
            clSetEventCallback(ev, 42, on_event, null_mut()),
            CL_INVALID_VALUE
        );
        let mut ty: cl_command_type = 0;
        assert_eq!(
            clGetEventInfo(
                ev,
                CL_EVENT_COMMAND_TYPE,
                4,
                (&mut ty as *mut cl_command_type).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(ty, CL_COMMAND_BARRIER);
        assert_eq!(clReleaseEvent(ev), CL_SUCCESS);
        assert_eq!(clReleaseCommandQueue(q), CL_SUCCESS);
        assert_eq!(clFinish(ctx as cl_command_queue), CL_INVALID_COMMAND_QUEUE);
        assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
    }
}

#[test]
fn concurrent_queues_on_one_context() {
    let env = Env::new(0);
    let (ctx, dev) = (env.ctx as usize, env.dev as usize);
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            std::thread::spawn(move || {
                let (ctx, dev) = (ctx as cl_context, dev as cl_device_id);
                let mut err = 0;
                // SAFETY: each thread uses its own queue and buffers on the shared context.
                unsafe {
                    let q = clCreateCommandQueueWithProperties(ctx, dev, null(), &mut err);
                    assert_eq!(err, CL_SUCCESS);
                    for i in 0..50u32 {
                        let data = vec![t * 1000 + i; 256];
                        let m = clCreateBuffer(
                            ctx,
                            CL_MEM_COPY_HOST_PTR as cl_mem_flags,
                            1024,
                            data.as_ptr() as *mut c_void,
                            &mut err,
                        );
                        assert_eq!(err, CL_SUCCESS);
                        let mut out = vec![0u32; 256];
                        assert_eq!(
                            clEnqueueReadBuffer(
                                q,
                                m,
                                CL_FALSE,
                                0,
                                1024,
                                out.as_mut_ptr().cast(),
                                0,
                                null(),
                                null_mut()
                            ),
                            CL_SUCCESS
                        );
                        // Released before the read ran: the command keeps the buffer alive.
                        assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
                        assert_eq!(clFinish(q), CL_SUCCESS);
                        assert!(out.iter().all(|&x| x == t * 1000 + i));
                    }
                    assert_eq!(clReleaseCommandQueue(q), CL_SUCCESS);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
