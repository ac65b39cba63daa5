//! Pipes on the host side (`__opencl_c_pipes`, API spec 5.4, `FERROCL_PIPES`) through the
//! loader: the device queries, and their zeros with `FERROCL_PIPES=off` in a child process;
//! every `clCreatePipe` error; `clGetPipeInfo` and `clGetMemObjectInfo` on a pipe; reference
//! counts and destructor callbacks; a pipe refused by every host command and by sub-buffer and
//! image creation; `clSetKernelArg` on pipe arguments and pipes given to buffer and image
//! arguments; launches and command-buffer kernel commands holding the pipe object until they
//! have run; `clGetKernelArgInfo` of pipe arguments. The kernels (`kernels/pipes.cl`) declare
//! pipe arguments but use no pipe built-in: what kernels do with pipes is codegen's.

//! By area: `objects.rs` (queries, creation, info, lifetimes), `commands.rs` (host commands),
//! `kernels.rs` (kernel arguments, launches, command-buffers, argument info); this file holds
//! the entry points and helpers they share.

#[path = "../common/mod.rs"]
mod common;

mod commands;
mod kernels;
mod objects;

use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clCreatePipe(
        c: cl_context,
        flags: cl_mem_flags,
        packet_size: cl_uint,
        max_packets: cl_uint,
        props: *const cl_pipe_properties,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clGetPipeInfo(
        m: cl_mem,
        name: cl_pipe_info,
        size: usize,
        value: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetMemObjectInfo(
        m: cl_mem,
        name: cl_mem_info,
        size: usize,
        value: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clRetainMemObject(m: cl_mem) -> cl_int;
    fn clReleaseMemObject(m: cl_mem) -> cl_int;
    fn clSetMemObjectDestructorCallback(
        m: cl_mem,
        f: extern "C" fn(cl_mem, *mut c_void),
        user: *mut c_void,
    ) -> cl_int;
    fn clCreateBuffer(
        c: cl_context,
        flags: cl_mem_flags,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateSubBuffer(
        m: cl_mem,
        flags: cl_mem_flags,
        kind: cl_buffer_create_type,
        info: *const c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateImage(
        c: cl_context,
        flags: cl_mem_flags,
        format: *const cl_image_format,
        desc: *const cl_image_desc,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clGetImageInfo(
        m: cl_mem,
        name: cl_image_info,
        size: usize,
        value: *mut c_void,
        ret: *mut usize,
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
    fn clEnqueueCopyBuffer(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_offset: usize,
        dst_offset: usize,
        size: usize,
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
    fn clEnqueueReadBufferRect(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        buffer_origin: *const usize,
        host_origin: *const usize,
        region: *const usize,
        buffer_row_pitch: usize,
        buffer_slice_pitch: usize,
        host_row_pitch: usize,
        host_slice_pitch: usize,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueWriteBufferRect(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        buffer_origin: *const usize,
        host_origin: *const usize,
        region: *const usize,
        buffer_row_pitch: usize,
        buffer_slice_pitch: usize,
        host_row_pitch: usize,
        host_slice_pitch: usize,
        ptr: *const c_void,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyBufferRect(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_origin: *const usize,
        dst_origin: *const usize,
        region: *const usize,
        src_row_pitch: usize,
        src_slice_pitch: usize,
        dst_row_pitch: usize,
        dst_slice_pitch: usize,
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
    fn clEnqueueUnmapMemObject(
        q: cl_command_queue,
        m: cl_mem,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueMigrateMemObjects(
        q: cl_command_queue,
        n_mems: cl_uint,
        mems: *const cl_mem,
        flags: cl_mem_migration_flags,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueReadImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        origin: *const usize,
        region: *const usize,
        row_pitch: usize,
        slice_pitch: usize,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueWriteImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        origin: *const usize,
        region: *const usize,
        row_pitch: usize,
        slice_pitch: usize,
        ptr: *const c_void,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueFillImage(
        q: cl_command_queue,
        m: cl_mem,
        color: *const c_void,
        origin: *const usize,
        region: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyImage(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_origin: *const usize,
        dst_origin: *const usize,
        region: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyImageToBuffer(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_origin: *const usize,
        region: *const usize,
        dst_offset: usize,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyBufferToImage(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_offset: usize,
        dst_origin: *const usize,
        region: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueMapImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        flags: cl_map_flags,
        origin: *const usize,
        region: *const usize,
        row_pitch: *mut usize,
        slice_pitch: *mut usize,
        n: cl_uint,
        wait: *const cl_event,
        e: *mut cl_event,
        err: *mut cl_int,
    ) -> *mut c_void;
    fn clSetKernelArg(k: cl_kernel, i: cl_uint, size: usize, v: *const c_void) -> cl_int;
    fn clCloneKernel(k: cl_kernel, err: *mut cl_int) -> cl_kernel;
    fn clReleaseKernel(k: cl_kernel) -> cl_int;
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
    fn clCreateUserEvent(c: cl_context, err: *mut cl_int) -> cl_event;
    fn clSetUserEventStatus(e: cl_event, status: cl_int) -> cl_int;
    fn clReleaseEvent(e: cl_event) -> cl_int;
    fn clFinish(q: cl_command_queue) -> cl_int;
    fn clGetExtensionFunctionAddressForPlatform(
        platform: cl_platform_id,
        name: *const c_char,
    ) -> *mut c_void;
}

/// `CL_DEVICE_SPIRV_CAPABILITIES_KHR` numbers of the SPIR-V specification.
const CAPABILITY_PIPES: u32 = 17;
const CAPABILITY_PIPE_STORAGE: u32 = 60;

const CHILD: &str = "FERROCL_PIPES_TEST_CHILD";

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
        .env_remove("FERROCL_PIPES")
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

/// A memory object released when dropped.
struct Mem(cl_mem);

impl Mem {
    /// The handle, with the reference the caller now releases itself.
    fn into_raw(self) -> cl_mem {
        let m = self.0;
        std::mem::forget(self);
        m
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        // SAFETY: the reference this wrapper owns, released once.
        let status = unsafe { clReleaseMemObject(self.0) };
        if !std::thread::panicking() {
            assert_eq!(status, CL_SUCCESS, "clReleaseMemObject");
        }
    }
}

/// `clCreatePipe`: the pipe or the error code (and the returned handle is then NULL).
fn try_pipe(
    ctx: cl_context,
    flags: u64,
    packet_size: u32,
    max_packets: u32,
    properties: *const cl_pipe_properties,
) -> Result<Mem, cl_int> {
    let mut err = CL_SUCCESS;
    // SAFETY: the properties are NULL or a zero-terminated list (the callers'); errcode valid.
    let p = unsafe {
        clCreatePipe(
            ctx,
            flags as cl_mem_flags,
            packet_size,
            max_packets,
            properties,
            &mut err,
        )
    };
    if err == CL_SUCCESS {
        assert!(!p.is_null(), "clCreatePipe: success and NULL");
        Ok(Mem(p))
    } else {
        assert!(
            p.is_null(),
            "clCreatePipe: {} and a handle",
            error_text(err)
        );
        Err(err)
    }
}

#[track_caller]
fn pipe(env: &Env, packet_size: u32, max_packets: u32) -> Mem {
    try_pipe(
        env.context.get(),
        CL_MEM_HOST_NO_ACCESS,
        packet_size,
        max_packets,
        null(),
    )
    .unwrap_or_else(|e| panic!("clCreatePipe: {}", error_text(e)))
}

fn buffer(env: &Env, bytes: usize) -> Mem {
    let mut err = 0;
    // SAFETY: a valid context, no host pointer.
    let m = unsafe {
        clCreateBuffer(
            env.context.get(),
            CL_MEM_READ_WRITE,
            bytes,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "clCreateBuffer");
    Mem(m)
}

/// A 4×4 RGBA8 2D image, when the device has images.
fn image(env: &Env) -> Option<Mem> {
    if !check(cl(env.device.image_support()), "CL_DEVICE_IMAGE_SUPPORT") {
        return None;
    }
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNORM_INT8,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: 4,
        image_height: 4,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    };
    let mut err = 0;
    // SAFETY: valid format and descriptor, no host pointer.
    let m = unsafe {
        clCreateImage(
            env.context.get(),
            CL_MEM_READ_WRITE,
            &format,
            &desc,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS, "clCreateImage");
    Some(Mem(m))
}

/// The bytes of a two-call info query (`f(size, value, size_ret)`).
fn info_bytes(f: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> Vec<u8> {
    let mut size = 0;
    assert_eq!(f(0, null_mut(), &mut size), CL_SUCCESS, "info size");
    let mut bytes = vec![0u8; size];
    assert_eq!(
        f(size, bytes.as_mut_ptr().cast(), null_mut()),
        CL_SUCCESS,
        "info value"
    );
    bytes
}

fn mem_info(m: cl_mem, param: cl_mem_info) -> Vec<u8> {
    // SAFETY: the two-call protocol on a valid memory object.
    info_bytes(|size, value, ret| unsafe { clGetMemObjectInfo(m, param, size, value, ret) })
}

fn pipe_info(m: cl_mem, param: cl_pipe_info) -> Vec<u8> {
    // SAFETY: the two-call protocol on a valid memory object.
    info_bytes(|size, value, ret| unsafe { clGetPipeInfo(m, param, size, value, ret) })
}

fn word(bytes: &[u8]) -> u64 {
    match bytes.len() {
        4 => u32::from_ne_bytes(bytes.try_into().unwrap()).into(),
        8 => u64::from_ne_bytes(bytes.try_into().unwrap()),
        n => panic!("an answer of {n} bytes"),
    }
}

fn device_word(env: &Env, param: cl_device_info) -> u64 {
    word(&opencl3::device::get_device_data(env.device.id(), param).expect("clGetDeviceInfo"))
}

/// The names of `CL_DEVICE_OPENCL_C_FEATURES` with their versions.
fn opencl_c_features(env: &Env) -> Vec<(String, u32)> {
    opencl3::device::get_device_data(env.device.id(), CL_DEVICE_OPENCL_C_FEATURES)
        .expect("CL_DEVICE_OPENCL_C_FEATURES")
        .chunks_exact(4 + CL_NAME_VERSION_MAX_NAME_SIZE)
        .map(|c| {
            let version = u32::from_ne_bytes(c[..4].try_into().unwrap());
            let name: Vec<u8> = c[4..].iter().take_while(|&&b| b != 0).copied().collect();
            (String::from_utf8(name).unwrap(), version)
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

/// Whether the device has pipes: always on Ferrocl (a failure otherwise), maybe not on
/// another ICD under test (the test is skipped).
fn pipes_or_skip(env: &Env) -> bool {
    env.feature_or_skip("pipes", device_word(env, CL_DEVICE_PIPE_SUPPORT) != 0)
}

/// The destructor callback of these tests: counts its calls in the `AtomicUsize` it is given.
extern "C" fn count_deletion(_m: cl_mem, user: *mut c_void) {
    // SAFETY: the user data is a leaked `AtomicUsize` (`deletion_counter`).
    unsafe { &*(user as *const AtomicUsize) }.fetch_add(1, Ordering::SeqCst);
}

/// A counter of `m`'s deletion (its destructor callbacks run just before it is freed).
fn deletion_counter(m: cl_mem) -> &'static AtomicUsize {
    let counter: &'static AtomicUsize = Box::leak(Box::new(AtomicUsize::new(0)));
    // SAFETY: a valid memory object; the counter lives for the process.
    let status = unsafe {
        clSetMemObjectDestructorCallback(
            m,
            count_deletion,
            counter as *const AtomicUsize as *mut c_void,
        )
    };
    assert_eq!(status, CL_SUCCESS, "clSetMemObjectDestructorCallback");
    counter
}

/// Waits up to 10 s for `counter` to reach `want` (a deletion after a command completes
/// happens when the driver lets the command go, which may be just after its event completes).
#[track_caller]
fn wait_for(counter: &AtomicUsize, want: usize, what: &str) {
    let start = Instant::now();
    while counter.load(Ordering::SeqCst) != want {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{what}: {} deletions, not {want}",
            counter.load(Ordering::SeqCst)
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}
