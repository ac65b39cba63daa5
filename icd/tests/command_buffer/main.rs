//! `cl_khr_command_buffer` and `cl_khr_command_buffer_mutable_dispatch` through the loader,
//! with the entry points from `clGetExtensionFunctionAddressForPlatform`: the device queries,
//! fills, copies, kernels and barriers recorded once with sync points and enqueued many times,
//! kernel arguments captured at recording, the buffer and mutable-command queries and states,
//! kernel commands whose arguments, SVM pointers, exec info, offset, global and local sizes
//! change between enqueues (an update never reaching an execution already enqueued; a failed
//! update changing nothing; arguments deferred to an update), executions of one buffer
//! meeting while both run (simultaneous use), SVM commands, a release before the execution
//! ends, failures ending an execution, and bad input → the spec's error codes. By area:
//! `recording.rs`, `mutable_dispatch.rs`, `executions.rs`, `errors.rs`, and
//! `multi_device.rs` for `cl_khr_command_buffer_multi_device` (queues of two sub-devices and
//! two queues of one device in one buffer, remapped copies); this file holds the entry points
//! and helpers they share.

#[path = "../common/mod.rs"]
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
    remap: clRemapCommandBufferKHR_fn,
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
            remap: entry("clRemapCommandBufferKHR"),
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
        let status = self.try_kernel(
            ptr::null_mut(),
            kernel,
            props,
            global,
            local,
            wait,
            &mut point,
            &mut handle,
        );
        ok(status, "clCommandNDRangeKernelKHR");
        (point, handle)
    }

    /// `clCommandNDRangeKernelKHR` recorded to `queue` (NULL: the buffer's only queue).
    #[allow(clippy::too_many_arguments)]
    fn try_kernel(
        &self,
        queue: cl_command_queue,
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
                    queue,
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
        let point = self.try_fill_on(ptr::null_mut(), buf, value, bytes, wait);
        point.unwrap_or_else(|e| panic!("clCommandFillBufferKHR: {}", error_text(e)))
    }

    /// `clCommandFillBufferKHR` of `value` recorded to `queue` (NULL: the buffer's only
    /// queue); the sync point or the error.
    fn try_fill_on(
        &self,
        queue: cl_command_queue,
        buf: cl_mem,
        value: i32,
        bytes: usize,
        wait: &[cl_sync_point_khr],
    ) -> Result<cl_sync_point_khr, cl_int> {
        let mut point = 0;
        // SAFETY: valid handles; a 4-byte pattern; a wait list as long as given.
        let status = unsafe {
            call!(
                self.api,
                fill(
                    self.raw,
                    queue,
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
        if status == CL_SUCCESS {
            Ok(point)
        } else {
            Err(status)
        }
    }

    #[track_caller]
    fn copy(
        &self,
        src: cl_mem,
        dst: cl_mem,
        bytes: usize,
        wait: &[cl_sync_point_khr],
    ) -> cl_sync_point_khr {
        self.copy_on(ptr::null_mut(), src, dst, bytes, wait)
    }

    /// `clCommandCopyBufferKHR` recorded to `queue` (NULL: the buffer's only queue).
    #[track_caller]
    fn copy_on(
        &self,
        queue: cl_command_queue,
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
                    queue,
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

// The tests, by area (after `call!`, which they use).
mod errors;
mod executions;
mod multi_device;
mod mutable_dispatch;
mod recording;
