//! `cl_khr_command_buffer` and `cl_khr_command_buffer_mutable_dispatch` through the loader,
//! with the entry points from `clGetExtensionFunctionAddressForPlatform`: the device queries,
//! fills, copies, kernels and barriers recorded once with sync points and enqueued many times,
//! kernel arguments captured at recording, the buffer and mutable-command queries and states,
//! kernel commands whose arguments, SVM pointers, exec info, offset, global and local sizes
//! change between enqueues (an update never reaching an execution already enqueued; a failed
//! update changing nothing; arguments deferred to an update), executions of one buffer
//! meeting while both run (simultaneous use), SVM commands, a release before the execution
//! ends, failures ending an execution, and bad input → the spec's error codes.

mod common;

use std::ffi::{c_void, CString};
use std::ptr;

use common::*;
use opencl3::kernel::Kernel;
use opencl_sys::*;

/// `CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR` as the Khronos header defines it.
const MUTABLE_DISPATCH_ASSERTS: cl_command_buffer_properties_khr = 0x12B7;

/// The extensions' entry points, looked up as applications do.
struct Api {
    create: clCreateCommandBufferKHR_fn,
    retain: clRetainCommandBufferKHR_fn,
    release: clReleaseCommandBufferKHR_fn,
    finalize: clFinalizeCommandBufferKHR_fn,
    enqueue: clEnqueueCommandBufferKHR_fn,
    barrier: clCommandBarrierWithWaitListKHR_fn,
    copy: clCommandCopyBufferKHR_fn,
    copy_rect: clCommandCopyBufferRectKHR_fn,
    fill: clCommandFillBufferKHR_fn,
    ndrange: clCommandNDRangeKernelKHR_fn,
    svm_memcpy: clCommandSVMMemcpyKHR_fn,
    svm_fill: clCommandSVMMemFillKHR_fn,
    info: clGetCommandBufferInfoKHR_fn,
    update: clUpdateMutableCommandsKHR_fn,
    command_info: clGetMutableCommandInfoKHR_fn,
}

/// Calls entry point `$f` of `$api` (looked up non-NULL).
macro_rules! call {
    ($api:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        ($api.$f.expect(stringify!($f)))($($arg),*)
    };
}

#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddressForPlatform(
        platform: cl_platform_id,
        name: *const std::ffi::c_char,
    ) -> *mut c_void;
}

/// Entry point `name` as the `Option<fn>` type `F` the extension gives it.
///
/// # Safety
/// `F` must be the function pointer type of `name`, as an `Option`.
unsafe fn entry<F: Copy>(name: &str) -> F {
    let c = CString::new(name).unwrap();
    // SAFETY: a valid platform and a NUL-terminated name.
    let p = unsafe { clGetExtensionFunctionAddressForPlatform(platform().id(), c.as_ptr()) };
    assert!(!p.is_null(), "{name} is not reachable");
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: a non-NULL function pointer of the type the caller vouches for.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

fn api() -> Api {
    // SAFETY: each pointer is the driver's function of that name, of the type opencl-sys
    // declares for it.
    unsafe {
        Api {
            create: entry("clCreateCommandBufferKHR"),
            retain: entry("clRetainCommandBufferKHR"),
            release: entry("clReleaseCommandBufferKHR"),
            finalize: entry("clFinalizeCommandBufferKHR"),
            enqueue: entry("clEnqueueCommandBufferKHR"),
            barrier: entry("clCommandBarrierWithWaitListKHR"),
            copy: entry("clCommandCopyBufferKHR"),
            copy_rect: entry("clCommandCopyBufferRectKHR"),
            fill: entry("clCommandFillBufferKHR"),
            ndrange: entry("clCommandNDRangeKernelKHR"),
            svm_memcpy: entry("clCommandSVMMemcpyKHR"),
            svm_fill: entry("clCommandSVMMemFillKHR"),
            info: entry("clGetCommandBufferInfoKHR"),
            update: entry("clUpdateMutableCommandsKHR"),
            command_info: entry("clGetMutableCommandInfoKHR"),
        }
    }
}

#[track_caller]
fn ok(status: cl_int, what: &str) {
    assert_eq!(status, CL_SUCCESS, "{what}: {}", error_text(status));
}

/// A command-buffer released on drop.
struct Cb<'a> {
    api: &'a Api,
    raw: cl_command_buffer_khr,
}

impl<'a> Cb<'a> {
    #[track_caller]
    fn new(
        api: &'a Api,
        queue: cl_command_queue,
        props: &[cl_command_buffer_properties_khr],
    ) -> Self {
        let mut err = 0;
        let p = if props.is_empty() {
            ptr::null()
        } else {
            props.as_ptr()
        };
        // SAFETY: one valid queue; a zero-terminated property list or NULL.
        let raw = unsafe { call!(api, create(1, &queue, p, &mut err)) };
        ok(err, "clCreateCommandBufferKHR");
        Cb { api, raw }
    }

    fn mutable(api: &'a Api, queue: cl_command_queue) -> Self {
        Self::new(
            api,
            queue,
            &[
                CL_COMMAND_BUFFER_FLAGS_KHR,
                CL_COMMAND_BUFFER_MUTABLE_KHR,
                0,
            ],
        )
    }

    /// `clCommandNDRangeKernelKHR` over a 1-D range; returns the sync point and the handle.
    #[track_caller]
    fn kernel(
        &self,
        kernel: &Kernel,
        props: &[cl_command_properties_khr],
        global: usize,
        local: Option<usize>,
        wait: &[cl_sync_point_khr],
    ) -> (cl_sync_point_khr, cl_mutable_command_khr) {
        let (mut point, mut handle) = (0, ptr::null_mut());
        let status = self.try_kernel(kernel, props, global, local, wait, &mut point, &mut handle);
        ok(status, "clCommandNDRangeKernelKHR");
        (point, handle)
    }

    #[allow(clippy::too_many_arguments)]
    fn try_kernel(
        &self,
        kernel: &Kernel,
        props: &[cl_command_properties_khr],
        global: usize,
        local: Option<usize>,
        wait: &[cl_sync_point_khr],
        point: &mut cl_sync_point_khr,
        handle: &mut cl_mutable_command_khr,
    ) -> cl_int {
        let local = local.as_ref().map_or(ptr::null(), |l| l as *const usize);
        // SAFETY: valid handles; arrays of one size; lists as long as given.
        unsafe {
            call!(
                self.api,
                ndrange(
                    self.raw,
                    ptr::null_mut(),
                    slice_or_null(props),
                    kernel.get(),
                    1,
                    ptr::null(),
                    &global,
                    local,
                    wait.len() as cl_uint,
                    slice_or_null(wait),
                    point,
                    handle
                )
            )
        }
    }

    #[track_caller]
    fn fill(
        &self,
        buf: cl_mem,
        value: i32,
        bytes: usize,
        wait: &[cl_sync_point_khr],
    ) -> cl_sync_point_khr {
        let mut point = 0;
        // SAFETY: valid handles; a 4-byte pattern; a wait list as long as given.
        let status = unsafe {
            call!(
                self.api,
                fill(
                    self.raw,
                    ptr::null_mut(),
                    ptr::null(),
                    buf,
                    (&value as *const i32).cast(),
                    4,
                    0,
                    bytes,
                    wait.len() as cl_uint,
                    slice_or_null(wait),
                    &mut point,
                    ptr::null_mut()
                )
            )
        };
        ok(status, "clCommandFillBufferKHR");
        point
    }

    #[track_caller]
    fn copy(
        &self,
        src: cl_mem,
        dst: cl_mem,
        bytes: usize,
        wait: &[cl_sync_point_khr],
    ) -> cl_sync_point_khr {
        let mut point = 0;
        // SAFETY: valid handles; a wait list as long as given.
        let status = unsafe {
            call!(
                self.api,
                copy(
                    self.raw,
                    ptr::null_mut(),
                    ptr::null(),
                    src,
                    dst,
                    0,
                    0,
                    bytes,
                    wait.len() as cl_uint,
                    slice_or_null(wait),
                    &mut point,
                    ptr::null_mut()
                )
            )
        };
        ok(status, "clCommandCopyBufferKHR");
        point
    }

    #[track_caller]
    fn barrier(&self, wait: &[cl_sync_point_khr]) -> cl_sync_point_khr {
        let mut point = 0;
        // SAFETY: valid handle; a wait list as long as given.
        let status = unsafe {
            call!(
                self.api,
                barrier(
                    self.raw,
                    ptr::null_mut(),
                    ptr::null(),
                    wait.len() as cl_uint,
                    slice_or_null(wait),
                    &mut point,
                    ptr::null_mut()
                )
            )
        };
        ok(status, "clCommandBarrierWithWaitListKHR");
        point
    }

    fn finalize(&self) -> cl_int {
        // SAFETY: valid handle.
        unsafe { call!(self.api, finalize(self.raw)) }
    }

    /// Enqueues on the buffer's queue, after `wait`; returns the event.
    fn try_enqueue(&self, wait: &[cl_event]) -> Result<cl_event, cl_int> {
        let mut event = ptr::null_mut();
        // SAFETY: valid handle; a wait list as long as given.
        let status = unsafe {
            call!(
                self.api,
                enqueue(
                    0,
                    ptr::null_mut(),
                    self.raw,
                    wait.len() as cl_uint,
                    slice_or_null(wait),
                    &mut event
                )
            )
        };
        if status == CL_SUCCESS {
            Ok(event)
        } else {
            Err(status)
        }
    }

    #[track_caller]
    fn enqueue(&self, wait: &[cl_event]) -> cl_event {
        self.try_enqueue(wait)
            .unwrap_or_else(|e| panic!("clEnqueueCommandBufferKHR: {}", error_text(e)))
    }

    /// Enqueues, waits, checks the execution completed and releases its event.
    #[track_caller]
    fn run(&self) {
        let e = self.enqueue(&[]);
        assert_eq!(event_status(e), CL_COMPLETE);
        release(e);
    }

    fn info(&self, param: cl_command_buffer_info_khr) -> Vec<u8> {
        info_bytes(|size, value, ret| {
            // SAFETY: the two-call protocol with a buffer of `size` bytes.
            unsafe { call!(self.api, info(self.raw, param, size, value, ret)) }
        })
    }

    fn state(&self) -> cl_command_buffer_state_khr {
        u32::from_ne_bytes(
            self.info(CL_COMMAND_BUFFER_STATE_KHR)[..4]
                .try_into()
                .unwrap(),
        )
    }

    /// `clUpdateMutableCommandsKHR` with these configurations.
    fn update(&self, configs: &[cl_mutable_dispatch_config_khr]) -> cl_int {
        let types = vec![CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR; configs.len()];
        let mut pointers: Vec<*const c_void> = configs
            .iter()
            .map(|c| (c as *const cl_mutable_dispatch_config_khr).cast())
            .collect();
        // SAFETY: valid handle; arrays of `configs.len()` entries.
        unsafe {
            call!(
                self.api,
                update(
                    self.raw,
                    configs.len() as cl_uint,
                    types.as_ptr(),
                    pointers.as_mut_ptr()
                )
            )
        }
    }
}

impl Drop for Cb<'_> {
    fn drop(&mut self) {
        // SAFETY: the reference `new` created, released once.
        let status = unsafe { call!(self.api, release(self.raw)) };
        if !std::thread::panicking() {
            ok(status, "clReleaseCommandBufferKHR");
        }
    }
}

fn slice_or_null<T>(s: &[T]) -> *const T {
    if s.is_empty() {
        ptr::null()
    } else {
        s.as_ptr()
    }
}

/// The two-call info protocol: the size, then the bytes.
fn info_bytes(mut get: impl FnMut(usize, *mut c_void, *mut usize) -> cl_int) -> Vec<u8> {
    let mut size = 0;
    ok(get(0, ptr::null_mut(), &mut size), "size query");
    let mut out = vec![0u8; size];
    if size > 0 {
        ok(
            get(size, out.as_mut_ptr().cast(), ptr::null_mut()),
            "value query",
        );
    }
    out
}

fn words<T: Copy>(bytes: &[u8]) -> Vec<T> {
    let n = std::mem::size_of::<T>();
    assert_eq!(bytes.len() % n, 0);
    bytes
        .chunks_exact(n)
        // SAFETY: `n` bytes of a plain integer or handle type.
        .map(|c| unsafe { ptr::read_unaligned(c.as_ptr().cast::<T>()) })
        .collect()
}

/// Waits for `e` and returns its final status.
fn event_status(e: cl_event) -> cl_int {
    let _ = cl3::event::wait_for_events(&[e]);
    let raw = cl3::event::get_event_data(e, CL_EVENT_COMMAND_EXECUTION_STATUS).unwrap();
    i32::from_ne_bytes(raw[..4].try_into().unwrap())
}

fn release(e: cl_event) {
    // SAFETY: an event this test owns, released once.
    unsafe { cl3::event::release_event(e) }.unwrap();
}

/// A mutable-dispatch configuration for `command` changing nothing yet.
fn config(command: cl_mutable_command_khr) -> cl_mutable_dispatch_config_khr {
    cl_mutable_dispatch_config_khr {
        command,
        num_args: 0,
        num_svm_args: 0,
        num_exec_infos: 0,
        work_dim: 0,
        arg_list: ptr::null(),
        arg_svm_list: ptr::null(),
        exec_info_list: ptr::null(),
        global_work_offset: ptr::null(),
        global_work_size: ptr::null(),
        local_work_size: ptr::null(),
    }
}

fn arg_of<T>(index: cl_uint, value: &T) -> cl_mutable_dispatch_arg_khr {
    cl_mutable_dispatch_arg_khr {
        arg_index: index,
        arg_size: std::mem::size_of::<T>(),
        arg_value: (value as *const T).cast(),
    }
}

const KERNELS: &str = "
    kernel void add(global int *data, int value) {
        data[get_global_id(0)] += value;
    }
    kernel void set(global int *data, int value) {
        data[get_global_id(0)] = value;
    }
    kernel void shape(global int *out) {
        size_t i = get_global_id(0);
        out[i] = (int)(get_global_size(0) * 10000 + get_local_size(0) * 100 + get_global_offset(0));
    }
";

fn kernel(env: &Env, name: &str) -> Kernel {
    let program = env.program_from_source(KERNELS, "-cl-std=CL3.0");
    check(cl(Kernel::create(&program, name)), "clCreateKernel")
}

/// The environment and entry points, or None when another ICD under test lacks the extension.
fn setup() -> Option<(Env, Api)> {
    let env = Env::new();
    let ext = check(cl(env.device.extensions()), "CL_DEVICE_EXTENSIONS");
    if env.other_icd && !ext.contains("cl_khr_command_buffer_mutable_dispatch") {
        eprintln!("the platform under test has no cl_khr_command_buffer_mutable_dispatch");
        return None;
    }
    Some((env, api()))
}

fn device_u64(env: &Env, param: cl_device_info) -> u64 {
    let raw = cl3::device::get_device_data(env.device.id(), param).expect("clGetDeviceInfo");
    u64::from_ne_bytes(raw[..8].try_into().unwrap())
}

#[test]
fn the_device_reports_command_buffers() {
    let Some((env, _)) = setup() else { return };
    let raw = cl3::device::get_device_data(env.device.id(), CL_DEVICE_EXTENSIONS_WITH_VERSION)
        .expect("CL_DEVICE_EXTENSIONS_WITH_VERSION");
    let versions: Vec<(String, cl_version)> = words::<cl_name_version>(&raw)
        .iter()
        .map(|nv| {
            let end = nv
                .name
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(nv.name.len());
            (
                String::from_utf8_lossy(&nv.name[..end]).into_owned(),
                nv.version,
            )
        })
        .collect();
    let version_of = |name: &str| versions.iter().find(|v| v.0 == name).map(|v| v.1);
    let v = |major: u32, minor: u32, patch: u32| (major << 22) | (minor << 12) | patch;
    assert_eq!(version_of("cl_khr_command_buffer"), Some(v(0, 9, 8)));
    assert_eq!(
        version_of("cl_khr_command_buffer_mutable_dispatch"),
        Some(v(0, 9, 5))
    );
    assert_eq!(
        device_u64(&env, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR),
        CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR
            | CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR,
        "printf and simultaneous use, no device-side enqueue"
    );
    assert_eq!(
        device_u64(&env, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR),
        0
    );
    assert_eq!(
        device_u64(
            &env,
            CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR
        ),
        CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
    );
    assert_eq!(
        device_u64(&env, CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR),
        0x1f
    );
}

#[test]
fn recorded_commands_run_at_every_enqueue() {
    let Some((env, api)) = setup() else { return };
    let n = 1000usize;
    let bytes = n * 4;
    let (a, b) = (env.buffer_filled(n, 0i32), env.buffer_filled(n, 0i32));
    let add = kernel(&env, "add");
    let cb = Cb::new(&api, env.queue.get(), &[]);
    // fill a → a += 2 → barrier → copy a to b → b += 10, each waiting on the one before.
    let filled = cb.fill(a.get(), 1, bytes, &[]);
    arg_buf(&add, 0, &a);
    arg(&add, 1, &2i32);
    let (added, handle) = cb.kernel(&add, &[], n, None, &[filled]);
    // The recorded command keeps the arguments it was recorded with.
    arg(&add, 1, &1000i32);
    let barrier = cb.barrier(&[]);
    let copied = cb.copy(a.get(), b.get(), bytes, &[barrier]);
    arg_buf(&add, 0, &b);
    arg(&add, 1, &10i32);
    let (last, _) = cb.kernel(&add, &[], n, Some(8), &[copied, added]);
    let points = [filled, added, barrier, copied, last];
    assert!(points.iter().all(|&p| p != 0), "{points:?}");
    assert!(points.windows(2).all(|w| w[0] != w[1]), "{points:?}");
    assert!(!handle.is_null(), "kernel commands have handles");
    assert_eq!(cb.state(), CL_COMMAND_BUFFER_STATE_RECORDING_KHR);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    assert_eq!(cb.state(), CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
    // Later clSetKernelArg calls do not reach it either.
    arg(&add, 1, &-7i32);
    for round in 0..5 {
        cb.run();
        assert!(env.read(&a, n).iter().all(|&x| x == 3), "round {round}");
        assert!(env.read(&b, n).iter().all(|&x| x == 13), "round {round}");
        // Regular commands interleave with the executions.
        let zeros = vec![0i32; n];
        // SAFETY: a blocking write from a live slice of the buffer's size.
        let e = unsafe {
            cl3::command_queue::enqueue_write_buffer(
                env.queue.get(),
                b.get(),
                CL_BLOCKING,
                0,
                bytes,
                zeros.as_ptr().cast(),
                0,
                ptr::null(),
            )
        }
        .expect("clEnqueueWriteBuffer");
        release(e);
    }
    // A buffer enqueued many times without waiting: each execution adds once, in order.
    let counter = env.buffer_filled(n, 0i32);
    let many = Cb::new(&api, env.queue.get(), &[]);
    arg_buf(&add, 0, &counter);
    arg(&add, 1, &1i32);
    many.kernel(&add, &[], n, None, &[]);
    ok(many.finalize(), "clFinalizeCommandBufferKHR");
    let events: Vec<cl_event> = (0..50).map(|_| many.enqueue(&[])).collect();
    check(cl(env.queue.finish()), "clFinish");
    assert!(env.read(&counter, n).iter().all(|&x| x == 50));
    for e in events {
        assert_eq!(event_status(e), CL_COMPLETE);
        let ty = cl3::event::get_event_data(e, CL_EVENT_COMMAND_TYPE).unwrap();
        assert_eq!(
            u32::from_ne_bytes(ty[..4].try_into().unwrap()),
            CL_COMMAND_COMMAND_BUFFER_KHR
        );
        release(e);
    }
}

#[test]
fn profiling_queues_substitute_queues_and_failed_wait_lists() {
    let Some((env, api)) = setup() else { return };
    let n = 256usize;
    let data = env.buffer_filled(n, 0i32);
    let add = kernel(&env, "add");
    arg_buf(&add, 0, &data);
    arg(&add, 1, &1i32);
    let cb = Cb::new(&api, env.queue.get(), &[]);
    cb.kernel(&add, &[], n, None, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    // Another queue of the same device and context, with profiling, out of order.
    let props = CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    let other = check(
        cl(CommandQueue::create_default_with_properties(
            &env.context,
            props,
            0,
        )),
        "clCreateCommandQueueWithProperties",
    );
    let mut queues = [other.get()];
    let mut event = ptr::null_mut();
    // SAFETY: valid handles; one queue.
    ok(
        unsafe {
            call!(
                api,
                enqueue(1, queues.as_mut_ptr(), cb.raw, 0, ptr::null(), &mut event)
            )
        },
        "clEnqueueCommandBufferKHR on a substitute queue",
    );
    assert_eq!(event_status(event), CL_COMPLETE);
    let queue_of = cl3::event::get_event_data(event, CL_EVENT_COMMAND_QUEUE).unwrap();
    assert_eq!(words::<usize>(&queue_of)[0], other.get() as usize);
    let start = cl3::event::get_event_profiling_data(event, CL_PROFILING_COMMAND_START).unwrap();
    let end = cl3::event::get_event_profiling_data(event, CL_PROFILING_COMMAND_END).unwrap();
    let (start, end) = (words::<u64>(&start)[0], words::<u64>(&end)[0]);
    assert!(start > 0 && end >= start, "{start}..{end}");
    release(event);
    assert!(env.read(&data, n).iter().all(|&x| x == 1));
    // A failed event of the wait list fails the execution, which runs nothing.
    let gate = cl3::event::create_user_event(env.context.get()).unwrap();
    let e = cb.enqueue(&[gate]);
    cl3::event::set_user_event_status(gate, -1).unwrap();
    assert_eq!(
        event_status(e),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    release(e);
    release(gate);
    assert!(env.read(&data, n).iter().all(|&x| x == 1));
}

#[test]
fn a_failing_command_ends_its_execution() {
    let Some((env, api)) = setup() else { return };
    if env.other_icd {
        return; // checked mode is Ferrocl's
    }
    // Checked mode stops the out-of-bounds write and fails the command.
    let program = env.program_from_source(
        "kernel void past_the_end(global int *data) { data[get_global_id(0) + 64] = 1; }",
        "-cl-ferrocl-checked",
    );
    let bad = check(
        cl(Kernel::create(&program, "past_the_end")),
        "clCreateKernel",
    );
    let small = env.buffer_filled(64, 0i32);
    let other = env.buffer_filled(64, 0i32);
    arg_buf(&bad, 0, &small);
    let cb = Cb::new(&api, env.queue.get(), &[]);
    cb.kernel(&bad, &[], 64, None, &[]);
    cb.fill(other.get(), 5, 256, &[]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    let e = cb.enqueue(&[]);
    assert_eq!(event_status(e), CL_OUT_OF_RESOURCES);
    release(e);
    assert!(
        env.read(&other, 64).iter().all(|&x| x == 0),
        "the fill after it did not run"
    );
    assert!(env.read(&small, 64).iter().all(|&x| x == 0));
}

#[test]
fn queries_and_states() {
    let Some((env, api)) = setup() else { return };
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        0,
    ];
    let cb = Cb::new(&api, env.queue.get(), &props);
    assert_eq!(
        words::<cl_uint>(&cb.info(CL_COMMAND_BUFFER_NUM_QUEUES_KHR)),
        [1]
    );
    assert_eq!(
        words::<usize>(&cb.info(CL_COMMAND_BUFFER_QUEUES_KHR)),
        [env.queue.get() as usize]
    );
    assert_eq!(
        words::<usize>(&cb.info(CL_COMMAND_BUFFER_CONTEXT_KHR)),
        [env.context.get() as usize]
    );
    assert_eq!(
        words::<cl_command_buffer_properties_khr>(&cb.info(CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR)),
        props
    );
    let refs = || words::<cl_uint>(&cb.info(CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR))[0];
    assert_eq!(refs(), 1);
    // SAFETY: valid handle.
    ok(
        unsafe { call!(api, retain(cb.raw)) },
        "clRetainCommandBufferKHR",
    );
    assert_eq!(refs(), 2);
    // SAFETY: the reference just taken.
    ok(
        unsafe { call!(api, release(cb.raw)) },
        "clReleaseCommandBufferKHR",
    );
    assert_eq!(refs(), 1);
    let plain = Cb::new(&api, env.queue.get(), &[]);
    assert!(
        plain
            .info(CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR)
            .is_empty(),
        "NULL properties"
    );

    // The mutable-command queries, as recorded.
    let shape = kernel(&env, "shape");
    let out = env.buffer_filled(64, 0i32);
    arg_buf(&shape, 0, &out);
    let kprops = [
        CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
        CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR,
        0,
    ];
    let (_, with_props) = cb.kernel(&shape, &kprops, 32, Some(8), &[]);
    let (_, without) = cb.kernel(&shape, &[], 16, None, &[]);
    let command_info = |c: cl_mutable_command_khr, param| {
        info_bytes(|size, value, ret| {
            // SAFETY: the two-call protocol with a buffer of `size` bytes.
            unsafe { call!(api, command_info(c, param, size, value, ret)) }
        })
    };
    let handle_of = |c, param| words::<usize>(&command_info(c, param))[0];
    assert_eq!(
        handle_of(with_props, CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR),
        env.queue.get() as usize
    );
    assert_eq!(
        handle_of(with_props, CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR),
        cb.raw as usize
    );
    assert_eq!(
        handle_of(with_props, CL_MUTABLE_DISPATCH_KERNEL_KHR),
        shape.get() as usize
    );
    assert_eq!(
        words::<cl_uint>(&command_info(
            with_props,
            CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR
        )),
        [CL_COMMAND_NDRANGE_KERNEL]
    );
    assert_eq!(
        words::<cl_command_properties_khr>(&command_info(
            with_props,
            CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR
        )),
        kprops
    );
    assert!(command_info(without, CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR).is_empty());
    assert_eq!(
        words::<cl_uint>(&command_info(
            with_props,
            CL_MUTABLE_DISPATCH_DIMENSIONS_KHR
        )),
        [1]
    );
    let sizes = |c, param| words::<usize>(&command_info(c, param));
    assert_eq!(
        sizes(with_props, CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR),
        [32]
    );
    assert_eq!(
        sizes(with_props, CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR),
        [8]
    );
    assert_eq!(
        sizes(with_props, CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR),
        [0]
    );
    assert_eq!(
        sizes(without, CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR),
        [0],
        "a local size left to the device reads as zeros"
    );
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    assert_eq!(cb.state(), CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
    // An update shows in the queries.
    let global = 48usize;
    let mut c = config(with_props);
    c.global_work_size = &global;
    ok(cb.update(&[c]), "clUpdateMutableCommandsKHR");
    assert_eq!(
        sizes(with_props, CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR),
        [48]
    );
    cb.run();
    let got = env.read(&out, 64);
    // The second command (16 items, local size chosen) ran after the first (48 of 8).
    assert!(
        got[..16].iter().all(|&x| x == 16 * 10000 + 16 * 100),
        "{:?}",
        &got[..16]
    );
    assert!(
        got[16..48].iter().all(|&x| x == 48 * 10000 + 8 * 100),
        "{:?}",
        &got[16..48]
    );
    assert!(got[48..].iter().all(|&x| x == 0));
}

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
        cb.try_kernel(&set, &[], n, None, &[], &mut point, &mut handle),
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
    let two = [queue, queue];
    assert_eq!(create(2, two.as_ptr(), &[]), CL_INVALID_VALUE, "two queues");
    assert_eq!(create(0, two.as_ptr(), &[]), CL_INVALID_VALUE, "no queue");
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
        create(1, &queue, &[f, 1 << 2, 0]),
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
    assert_eq!(
        fill(
            &cb,
            queue,
            ptr::null(),
            data.get(),
            256,
            none,
            ptr::null_mut()
        ),
        CL_INVALID_COMMAND_QUEUE
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
        cb.try_kernel(&add, &unterminated, 64, None, &[], &mut point, &mut handle),
        CL_INVALID_VALUE
    );
    let bad_fields = [CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, 1 << 26, 0];
    assert_eq!(
        cb.try_kernel(&add, &bad_fields, 64, None, &[], &mut point, &mut handle),
        CL_INVALID_VALUE
    );
    let asserts = [
        CL_MUTABLE_DISPATCH_ASSERTS_KHR,
        CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR,
        0,
    ];
    assert_eq!(
        cb.try_kernel(&add, &asserts, 64, None, &[], &mut point, &mut handle),
        CL_INVALID_VALUE,
        "no additional work-groups needs a local size"
    );
    assert_eq!(
        cb.try_kernel(&add, &asserts, 64, Some(8), &[], &mut point, &mut handle),
        CL_SUCCESS
    );
    assert_eq!(
        cb.try_kernel(&add, &[], 64, Some(5000), &[], &mut point, &mut handle),
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
        cb.try_kernel(&foreign_kernel, &[], 64, None, &[], &mut point, &mut handle),
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
