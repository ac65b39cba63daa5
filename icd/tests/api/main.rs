//! API tests through the real ICD loader: libOpenCL.so (ocl-icd) finds libferrocl.so via
//! OCL_ICD_VENDORS. Covers discovery and info queries, object lifecycles, buffer commands,
//! programs from IL/source, events, and the error paths (invalid handles, NULL pointers, wrong
//! sizes), and one kernel run with argument errors, an offset and uneven groups.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void, CString};
use std::path::PathBuf;
use std::ptr::{null, null_mut};
use std::sync::Once;

use opencl_sys::*;

mod execution;
mod memory;
mod programs;
mod queries;

#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddressForPlatform(
        p: cl_platform_id,
        name: *const c_char,
    ) -> *mut c_void;
    fn clGetPlatformIDs(n: cl_uint, p: *mut cl_platform_id, num: *mut cl_uint) -> cl_int;
    fn clGetPlatformInfo(
        p: cl_platform_id,
        name: cl_platform_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetDeviceIDs(
        p: cl_platform_id,
        t: cl_device_type,
        n: cl_uint,
        d: *mut cl_device_id,
        num: *mut cl_uint,
    ) -> cl_int;
    fn clGetDeviceInfo(
        d: cl_device_id,
        name: cl_device_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clCreateContext(
        props: *const cl_context_properties,
        n: cl_uint,
        d: *const cl_device_id,
        f: *const c_void,
        u: *mut c_void,
        err: *mut cl_int,
    ) -> cl_context;
    fn clRetainContext(c: cl_context) -> cl_int;
    fn clReleaseContext(c: cl_context) -> cl_int;
    fn clGetContextInfo(
        c: cl_context,
        name: cl_context_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clCreateCommandQueueWithProperties(
        c: cl_context,
        d: cl_device_id,
        p: *const cl_queue_properties,
        err: *mut cl_int,
    ) -> cl_command_queue;
    fn clReleaseCommandQueue(q: cl_command_queue) -> cl_int;
    fn clFinish(q: cl_command_queue) -> cl_int;
    fn clCreateBuffer(
        c: cl_context,
        f: cl_mem_flags,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateSubBuffer(
        m: cl_mem,
        f: cl_mem_flags,
        t: cl_buffer_create_type,
        info: *const c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clRetainMemObject(m: cl_mem) -> cl_int;
    fn clReleaseMemObject(m: cl_mem) -> cl_int;
    fn clGetMemObjectInfo(
        m: cl_mem,
        name: cl_mem_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clSetMemObjectDestructorCallback(
        m: cl_mem,
        f: extern "C" fn(cl_mem, *mut c_void),
        u: *mut c_void,
    ) -> cl_int;
    fn clEnqueueReadBuffer(
        q: cl_command_queue,
        m: cl_mem,
        b: cl_bool,
        off: usize,
        size: usize,
        p: *mut c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueWriteBuffer(
        q: cl_command_queue,
        m: cl_mem,
        b: cl_bool,
        off: usize,
        size: usize,
        p: *const c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyBuffer(
        q: cl_command_queue,
        s: cl_mem,
        d: cl_mem,
        so: usize,
        doff: usize,
        size: usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueFillBuffer(
        q: cl_command_queue,
        m: cl_mem,
        pat: *const c_void,
        ps: usize,
        off: usize,
        size: usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueReadBufferRect(
        q: cl_command_queue,
        m: cl_mem,
        b: cl_bool,
        bo: *const usize,
        ho: *const usize,
        r: *const usize,
        brp: usize,
        bsp: usize,
        hrp: usize,
        hsp: usize,
        p: *mut c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueMapBuffer(
        q: cl_command_queue,
        m: cl_mem,
        b: cl_bool,
        f: cl_map_flags,
        off: usize,
        size: usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
        err: *mut cl_int,
    ) -> *mut c_void;
    fn clEnqueueUnmapMemObject(
        q: cl_command_queue,
        m: cl_mem,
        p: *mut c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueMarkerWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clCreateUserEvent(c: cl_context, err: *mut cl_int) -> cl_event;
    fn clSetUserEventStatus(e: cl_event, s: cl_int) -> cl_int;
    fn clWaitForEvents(n: cl_uint, e: *const cl_event) -> cl_int;
    fn clGetEventInfo(
        e: cl_event,
        name: cl_event_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetEventProfilingInfo(
        e: cl_event,
        name: cl_profiling_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clReleaseEvent(e: cl_event) -> cl_int;
    fn clCreateProgramWithIL(
        c: cl_context,
        il: *const c_void,
        len: usize,
        err: *mut cl_int,
    ) -> cl_program;
    fn clCreateProgramWithSource(
        c: cl_context,
        n: cl_uint,
        s: *const *const c_char,
        l: *const usize,
        err: *mut cl_int,
    ) -> cl_program;
    fn clBuildProgram(
        p: cl_program,
        n: cl_uint,
        d: *const cl_device_id,
        o: *const c_char,
        f: *const c_void,
        u: *mut c_void,
    ) -> cl_int;
    fn clGetProgramBuildInfo(
        p: cl_program,
        d: cl_device_id,
        name: cl_program_build_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetProgramInfo(
        p: cl_program,
        name: cl_program_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clReleaseProgram(p: cl_program) -> cl_int;
    fn clCreateKernel(p: cl_program, name: *const c_char, err: *mut cl_int) -> cl_kernel;
    fn clSetKernelArg(k: cl_kernel, i: cl_uint, size: usize, v: *const c_void) -> cl_int;
    fn clEnqueueNDRangeKernel(
        q: cl_command_queue,
        k: cl_kernel,
        dim: cl_uint,
        off: *const usize,
        g: *const usize,
        l: *const usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clReleaseKernel(k: cl_kernel) -> cl_int;
    fn clSetDefaultDeviceCommandQueue(
        c: cl_context,
        d: cl_device_id,
        q: cl_command_queue,
    ) -> cl_int;
    fn clGetPipeInfo(
        m: cl_mem,
        name: cl_pipe_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clCreateSubDevices(
        d: cl_device_id,
        p: *const cl_device_partition_property,
        n: cl_uint,
        out: *mut cl_device_id,
        num: *mut cl_uint,
    ) -> cl_int;
    fn clCompileProgram(
        p: cl_program,
        n: cl_uint,
        d: *const cl_device_id,
        o: *const c_char,
        nh: cl_uint,
        h: *const cl_program,
        hn: *const *const c_char,
        f: *const c_void,
        u: *mut c_void,
    ) -> cl_int;
    fn clLinkProgram(
        c: cl_context,
        n: cl_uint,
        d: *const cl_device_id,
        o: *const c_char,
        np: cl_uint,
        p: *const cl_program,
        f: *const c_void,
        u: *mut c_void,
        err: *mut cl_int,
    ) -> cl_program;
    fn clCreateProgramWithBinary(
        c: cl_context,
        n: cl_uint,
        d: *const cl_device_id,
        l: *const usize,
        b: *const *const u8,
        st: *mut cl_int,
        err: *mut cl_int,
    ) -> cl_program;
    fn clCreateCommandQueue(
        c: cl_context,
        d: cl_device_id,
        p: cl_command_queue_properties,
        err: *mut cl_int,
    ) -> cl_command_queue;
    fn clGetCommandQueueInfo(
        q: cl_command_queue,
        name: cl_command_queue_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clEnqueueBarrierWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clSetEventCallback(
        e: cl_event,
        t: cl_int,
        f: extern "C" fn(cl_event, cl_int, *mut c_void),
        u: *mut c_void,
    ) -> cl_int;
    fn clFlush(q: cl_command_queue) -> cl_int;
    fn clGetDeviceAndHostTimer(d: cl_device_id, dt: *mut cl_ulong, ht: *mut cl_ulong) -> cl_int;
}

/// Points the loader at the freshly built libferrocl.so (…/target/debug/deps/api-x →
/// …/target/debug/deps/libferrocl.so, else …/target/debug/libferrocl.so) before the first CL
/// call.
fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let exe = std::env::current_exe().unwrap();
        let deps = exe.parent().unwrap();
        // `cargo test` refreshes target/debug/deps/libferrocl.so but not the copy in
        // target/debug/ (only `cargo build` does): prefer the one beside the test binary.
        let lib = [
            deps.join("libferrocl.so"),
            deps.parent().unwrap().join("libferrocl.so"),
        ]
        .into_iter()
        .find(|p| p.exists())
        .expect("libferrocl.so missing: build with `cargo build -p ferrocl-icd`");
        let icd = std::env::temp_dir().join(format!("ferrocl-api-test-{}.icd", std::process::id()));
        std::fs::write(&icd, format!("{}\n", lib.display())).unwrap();
        // SAFETY: called once, before any thread of this test binary reads the environment
        // through the loader.
        unsafe { std::env::set_var("OCL_ICD_VENDORS", &icd) };
    });
}

fn platform() -> cl_platform_id {
    setup();
    let mut p = null_mut();
    let mut n = 0;
    // SAFETY: valid out pointers.
    assert_eq!(unsafe { clGetPlatformIDs(1, &mut p, &mut n) }, CL_SUCCESS);
    assert_eq!(n, 1, "exactly the Ferrocl platform is visible");
    p
}

fn device() -> cl_device_id {
    let mut d = null_mut();
    // SAFETY: valid out pointer.
    assert_eq!(
        unsafe { clGetDeviceIDs(platform(), CL_DEVICE_TYPE_ALL, 1, &mut d, null_mut()) },
        CL_SUCCESS
    );
    d
}

struct Env {
    dev: cl_device_id,
    ctx: cl_context,
    q: cl_command_queue,
}

impl Env {
    fn new(props: cl_command_queue_properties) -> Env {
        let dev = device();
        let mut err = 0;
        // SAFETY: valid arguments.
        unsafe {
            let ctx = clCreateContext(null(), 1, &dev, null(), null_mut(), &mut err);
            assert_eq!(err, CL_SUCCESS);
            let qp = [CL_QUEUE_PROPERTIES as cl_queue_properties, props, 0];
            let q = clCreateCommandQueueWithProperties(ctx, dev, qp.as_ptr(), &mut err);
            assert_eq!(err, CL_SUCCESS);
            Env { dev, ctx, q }
        }
    }

    fn buffer(&self, flags: u64, size: usize, host: *mut c_void) -> cl_mem {
        let mut err = 0;
        // SAFETY: valid context.
        let m = unsafe { clCreateBuffer(self.ctx, flags as cl_mem_flags, size, host, &mut err) };
        assert_eq!(err, CL_SUCCESS);
        m
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: our handles.
        unsafe {
            assert_eq!(clReleaseCommandQueue(self.q), CL_SUCCESS);
            assert_eq!(clReleaseContext(self.ctx), CL_SUCCESS);
        }
    }
}

fn device_string(d: cl_device_id, p: cl_device_info) -> String {
    let mut size = 0;
    // SAFETY: two-call protocol.
    unsafe {
        assert_eq!(clGetDeviceInfo(d, p, 0, null_mut(), &mut size), CL_SUCCESS);
        let mut buf = vec![0u8; size];
        assert_eq!(
            clGetDeviceInfo(d, p, size, buf.as_mut_ptr().cast(), null_mut()),
            CL_SUCCESS
        );
        assert_eq!(buf.pop(), Some(0), "NUL-terminated");
        String::from_utf8(buf).unwrap()
    }
}

fn device_value<T: Copy + Default>(d: cl_device_id, p: cl_device_info) -> T {
    let mut v = T::default();
    let mut size = 0;
    // SAFETY: T-sized output.
    let r = unsafe {
        clGetDeviceInfo(
            d,
            p,
            std::mem::size_of::<T>(),
            (&mut v as *mut T).cast(),
            &mut size,
        )
    };
    assert_eq!(r, CL_SUCCESS, "param {p:#x}");
    assert_eq!(size, std::mem::size_of::<T>(), "param {p:#x}");
    v
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Assembles `tests/data/<name>.spvasm` with spirv-as (SPIR-V 1.0).
fn spirv(name: &str) -> Vec<u8> {
    // A file of its own per call: tests running at once assemble the same module, and one
    // writing the file while another reads it gave an empty module (CL_INVALID_VALUE).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!(
        "ferrocl-api-{}-{call}-{name}.spv",
        std::process::id()
    ));
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(data_dir().join(format!("{name}.spvasm")))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success());
    let module = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    module
}

fn build_log(p: cl_program, d: cl_device_id) -> String {
    let mut size = 0;
    // SAFETY: two-call protocol.
    unsafe {
        assert_eq!(
            clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        let mut buf = vec![0u8; size];
        assert_eq!(
            clGetProgramBuildInfo(
                p,
                d,
                CL_PROGRAM_BUILD_LOG,
                size,
                buf.as_mut_ptr().cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        buf.pop();
        String::from_utf8(buf).unwrap()
    }
}
