//! Device-side enqueue through the loader (`__opencl_c_device_enqueue`, API spec 5.1 on-device
//! queues, OpenCL C 6.15.15): the device queries, and their zeros with
//! `FERROCL_DEVICE_ENQUEUE=off` in a child process; on-device queue creation, queries, the
//! default queue and its replacement, the queue limit, host commands refusing device queues;
//! `queue_t` kernel arguments and the kernels of blocks hidden from applications; kernels
//! (`kernels/device_enqueue.cl`) that enqueue children with every flag, nested children,
//! 2-D and 3-D ranges with local sizes, blocks with local pointers, events, markers and user
//! events, the block queries, profiling captures, full queues and event limits, and a child
//! waiting for a user event nobody sets (the parent fails, the host does not hang).

//! By area: `queues.rs` (device queues on the host), `arguments.rs` (kernel arguments and
//! program kernels), `kernels.rs` (what kernels enqueue); this file holds the entry points and
//! helpers they share.

#[path = "../common/mod.rs"]
mod common;

mod arguments;
mod kernels;
mod queues;

use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

use common::*;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clCreateCommandQueueWithProperties(
        c: cl_context,
        d: cl_device_id,
        props: *const cl_queue_properties,
        err: *mut cl_int,
    ) -> cl_command_queue;
    fn clCreateCommandQueue(
        c: cl_context,
        d: cl_device_id,
        props: cl_command_queue_properties,
        err: *mut cl_int,
    ) -> cl_command_queue;
    fn clGetCommandQueueInfo(
        q: cl_command_queue,
        name: cl_command_queue_info,
        size: usize,
        value: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clRetainCommandQueue(q: cl_command_queue) -> cl_int;
    fn clReleaseCommandQueue(q: cl_command_queue) -> cl_int;
    fn clSetDefaultDeviceCommandQueue(
        c: cl_context,
        d: cl_device_id,
        q: cl_command_queue,
    ) -> cl_int;
    fn clFlush(q: cl_command_queue) -> cl_int;
    fn clFinish(q: cl_command_queue) -> cl_int;
    fn clSetKernelArg(k: cl_kernel, i: cl_uint, size: usize, v: *const c_void) -> cl_int;
    fn clEnqueueNDRangeKernel(
        q: cl_command_queue,
        k: cl_kernel,
        dim: cl_uint,
        offset: *const usize,
        global: *const usize,
        local: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueTask(
        q: cl_command_queue,
        k: cl_kernel,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueReadBuffer(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueWriteBuffer(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        ptr: *const c_void,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueFillBuffer(
        q: cl_command_queue,
        m: cl_mem,
        pattern: *const c_void,
        pattern_size: usize,
        offset: usize,
        size: usize,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueMapBuffer(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        flags: cl_map_flags,
        offset: usize,
        size: usize,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
        err: *mut cl_int,
    ) -> *mut c_void;
    fn clEnqueueMarkerWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueBarrierWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clGetEventInfo(
        e: cl_event,
        name: cl_event_info,
        size: usize,
        value: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetEventProfilingInfo(
        e: cl_event,
        name: cl_profiling_info,
        size: usize,
        value: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clReleaseEvent(e: cl_event) -> cl_int;
    fn clCreateKernel(p: cl_program, name: *const c_char, err: *mut cl_int) -> cl_kernel;
    fn clCreateKernelsInProgram(
        p: cl_program,
        n: cl_uint,
        kernels: *mut cl_kernel,
        n_ret: *mut cl_uint,
    ) -> cl_int;
    fn clReleaseKernel(k: cl_kernel) -> cl_int;
    fn clGetKernelArgInfo(
        k: cl_kernel,
        index: cl_uint,
        name: cl_kernel_arg_info,
        size: usize,
        value: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clCreateBuffer(
        c: cl_context,
        flags: cl_mem_flags,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clReleaseMemObject(m: cl_mem) -> cl_int;
}

/// `CL_DEVICE_SPIRV_CAPABILITIES_KHR` number of `DeviceEnqueue`.
const CAPABILITY_DEVICE_ENQUEUE: u32 = 19;

/// The `CLK_*` results of enqueue_kernel (OpenCL C 6.15.15.3).
const CLK_INVALID_QUEUE: i32 = -102;
const CLK_INVALID_NDRANGE: i32 = -160;
const CLK_INVALID_EVENT_WAIT_LIST: i32 = -57;
const CLK_DEVICE_QUEUE_FULL: i32 = -161;
const CLK_INVALID_ARG_SIZE: i32 = -51;
const CLK_EVENT_ALLOCATION_FAILURE: i32 = -100;
const CLK_OUT_OF_RESOURCES: i32 = -5;

/// `CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE`.
const ON_DEVICE: cl_queue_properties =
    (CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) as cl_queue_properties;
/// The same, as the default device queue.
const DEFAULT: cl_queue_properties = ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT as cl_queue_properties;
const PROFILING: cl_queue_properties = CL_QUEUE_PROFILING_ENABLE as cl_queue_properties;

const CHILD: &str = "FERROCL_DEVICE_ENQUEUE_TEST_CHILD";

/// Runs test `name`'s body in a child process with `vars` set (settings are read once per
/// process). In the child returns false and the caller runs the body.
fn in_child(name: &str, vars: &[(&str, &str)]) -> bool {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return false;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .env_remove("FERROCL_DEVICE_ENQUEUE")
        .envs(vars.iter().copied())
        .output()
        .expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child {name} failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "child {name} ran no test:\n{stdout}"
    );
    true
}

/// A command queue (host or device) released when dropped.
struct Queue(cl_command_queue);

impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: a queue this test owns one reference of.
        unsafe { clReleaseCommandQueue(self.0) };
    }
}

/// clCreateCommandQueueWithProperties with `props` (zero-terminated here).
fn queue_with(env: &Env, props: &[cl_queue_properties]) -> Result<Queue, cl_int> {
    let mut list = props.to_vec();
    list.push(0);
    let mut err = 0;
    // SAFETY: valid context and device, a zero-terminated list.
    let q = unsafe {
        clCreateCommandQueueWithProperties(
            env.context.get(),
            env.device.id(),
            list.as_ptr(),
            &mut err,
        )
    };
    if err != CL_SUCCESS {
        assert!(q.is_null());
        return Err(err);
    }
    assert!(!q.is_null());
    Ok(Queue(q))
}

/// A device queue with `props` after `CL_QUEUE_PROPERTIES` (and `more` after them).
fn device_queue(env: &Env, props: cl_queue_properties, more: &[cl_queue_properties]) -> Queue {
    let mut list = vec![CL_QUEUE_PROPERTIES as cl_queue_properties, props];
    list.extend_from_slice(more);
    queue_with(env, &list).unwrap_or_else(|e| panic!("device queue {props:#x}: {e}"))
}

/// The bytes of `clGetCommandQueueInfo(name)`, or its error.
fn queue_info(q: cl_command_queue, name: cl_command_queue_info) -> Result<Vec<u8>, cl_int> {
    let mut size = 0;
    // SAFETY: a size query.
    let r = unsafe { clGetCommandQueueInfo(q, name, 0, null_mut(), &mut size) };
    if r != CL_SUCCESS {
        return Err(r);
    }
    let mut bytes = vec![0u8; size];
    // SAFETY: `size` writable bytes.
    let r = unsafe { clGetCommandQueueInfo(q, name, size, bytes.as_mut_ptr().cast(), null_mut()) };
    if r != CL_SUCCESS {
        return Err(r);
    }
    Ok(bytes)
}

/// A little-endian value of up to 8 bytes.
fn word(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
    u64::from_ne_bytes(b)
}

fn queue_word(q: cl_command_queue, name: cl_command_queue_info) -> u64 {
    word(&queue_info(q, name).unwrap_or_else(|e| panic!("clGetCommandQueueInfo({name:#x}): {e}")))
}

/// `CL_QUEUE_DEVICE_DEFAULT` of `q`.
fn default_of(q: cl_command_queue) -> cl_command_queue {
    queue_word(q, CL_QUEUE_DEVICE_DEFAULT) as cl_command_queue
}

fn device_word(env: &Env, param: cl_device_info) -> u64 {
    word(&opencl3::device::get_device_data(env.device.id(), param).expect("clGetDeviceInfo"))
}

/// The names of `CL_DEVICE_OPENCL_C_FEATURES`.
fn opencl_c_features(env: &Env) -> Vec<String> {
    opencl3::device::get_device_data(env.device.id(), CL_DEVICE_OPENCL_C_FEATURES)
        .expect("CL_DEVICE_OPENCL_C_FEATURES")
        .chunks_exact(4 + CL_NAME_VERSION_MAX_NAME_SIZE)
        .map(|c| {
            let name: Vec<u8> = c[4..].iter().take_while(|&&b| b != 0).copied().collect();
            String::from_utf8(name).unwrap()
        })
        .collect()
}

fn spirv_capabilities(env: &Env) -> Vec<u32> {
    opencl3::device::get_device_data(env.device.id(), CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .expect("CL_DEVICE_SPIRV_CAPABILITIES_KHR")
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// Whether the device has on-device queues: always on Ferrocl (a failure otherwise), maybe
/// not on another ICD under test (the test is skipped).
fn device_enqueue_or_skip(env: &Env) -> bool {
    env.feature_or_skip(
        "device-side enqueue",
        device_word(env, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES) & CL_DEVICE_QUEUE_SUPPORTED != 0,
    )
}

/// Sets argument `index` of `kernel` to the handle `q` (a `queue_t` argument).
#[track_caller]
fn arg_queue(kernel: &Kernel, index: cl_uint, q: cl_command_queue) {
    // SAFETY: the address of a handle, its size.
    let r = unsafe {
        clSetKernelArg(
            kernel.get(),
            index,
            std::mem::size_of::<cl_command_queue>(),
            (&q as *const cl_command_queue).cast(),
        )
    };
    assert_eq!(r, CL_SUCCESS, "clSetKernelArg({index}, queue)");
}

/// Runs `kernel` over `global` (and `local`) on the host queue, waits with clFinish and gives
/// the command's execution status and its event (released by the caller through `Event`).
fn launch(
    env: &Env,
    kernel: &Kernel,
    global: &[usize],
    local: Option<&[usize]>,
) -> (cl_int, Event) {
    let mut event = null_mut();
    // SAFETY: sizes arrays of the launch's dimension; the arguments are the caller's.
    let r = unsafe {
        clEnqueueNDRangeKernel(
            env.queue.get(),
            kernel.get(),
            global.len() as cl_uint,
            null(),
            global.as_ptr(),
            local.map_or(null(), |l| l.as_ptr()),
            0,
            null(),
            &mut event,
        )
    };
    assert_eq!(r, CL_SUCCESS, "clEnqueueNDRangeKernel");
    // SAFETY: a valid host queue.
    assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS, "clFinish");
    let event = Event(event);
    (event.status(), event)
}

/// An event released when dropped.
struct Event(cl_event);

impl Event {
    fn status(&self) -> cl_int {
        let mut status: cl_int = 1;
        // SAFETY: a valid event, a cl_int answer.
        let r = unsafe {
            clGetEventInfo(
                self.0,
                CL_EVENT_COMMAND_EXECUTION_STATUS,
                4,
                (&mut status as *mut cl_int).cast(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        status
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: an event this test owns one reference of.
        unsafe { clReleaseEvent(self.0) };
    }
}
