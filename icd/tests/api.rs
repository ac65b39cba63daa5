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
    fn clCreateImage(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        desc: *const cl_image_desc,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateSampler(
        c: cl_context,
        n: cl_bool,
        a: cl_addressing_mode,
        f: cl_filter_mode,
        err: *mut cl_int,
    ) -> cl_sampler;
    fn clSVMAlloc(c: cl_context, f: cl_svm_mem_flags, size: usize, align: cl_uint) -> *mut c_void;
    fn clCreatePipe(
        c: cl_context,
        f: cl_mem_flags,
        packet_size: cl_uint,
        max_packets: cl_uint,
        p: *const cl_pipe_properties,
        err: *mut cl_int,
    ) -> cl_mem;
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
    let out = std::env::temp_dir().join(format!("ferrocl-api-{}-{name}.spv", std::process::id()));
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(data_dir().join(format!("{name}.spvasm")))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success());
    std::fs::read(out).unwrap()
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

#[test]
fn platform_queries() {
    let p = platform();
    let mut size = 0;
    // SAFETY: valid pointers throughout.
    unsafe {
        assert_eq!(
            clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        let mut name = vec![0u8; size];
        assert_eq!(
            clGetPlatformInfo(
                p,
                CL_PLATFORM_NAME,
                size,
                name.as_mut_ptr().cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(&name, b"Ferrocl\0");
        // Too small a buffer: CL_INVALID_VALUE.
        assert_eq!(
            clGetPlatformInfo(p, CL_PLATFORM_NAME, 3, name.as_mut_ptr().cast(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clGetPlatformInfo(p, 0xdead, 0, null_mut(), &mut size),
            CL_INVALID_VALUE
        );
        let mut ver: cl_version = 0;
        assert_eq!(
            clGetPlatformInfo(
                p,
                CL_PLATFORM_NUMERIC_VERSION,
                4,
                (&mut ver as *mut cl_version).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(ver, 3 << 22);
        let mut ext = vec![0u8; 2048];
        assert_eq!(
            clGetPlatformInfo(
                p,
                CL_PLATFORM_EXTENSIONS,
                2048,
                ext.as_mut_ptr().cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert!(String::from_utf8_lossy(&ext).contains("cl_khr_icd"));
        assert_eq!(
            clGetPlatformIDs(0, null_mut(), null_mut()),
            CL_INVALID_VALUE
        );
        // A device handle is not a platform.
        assert_eq!(
            clGetPlatformInfo(
                device() as cl_platform_id,
                CL_PLATFORM_NAME,
                0,
                null_mut(),
                &mut size
            ),
            CL_INVALID_PLATFORM
        );
    }
}

#[test]
fn device_queries() {
    let d = device();
    assert_eq!(
        device_value::<cl_device_type>(d, CL_DEVICE_TYPE),
        CL_DEVICE_TYPE_CPU as cl_device_type
    );
    assert_eq!(device_value::<cl_uint>(d, CL_DEVICE_ADDRESS_BITS), 64);
    assert_eq!(
        device_value::<usize>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE),
        4096
    );
    assert_eq!(
        device_value::<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE),
        256 * 1024
    );
    assert_eq!(
        device_value::<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT),
        CL_FALSE
    );
    assert_eq!(
        device_value::<cl_bool>(d, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT),
        CL_TRUE
    );
    assert_eq!(
        device_value::<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN),
        1024
    );
    assert!(device_value::<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS) >= 1);
    assert_eq!(
        device_value::<cl_device_atomic_capabilities>(d, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES),
        (CL_DEVICE_ATOMIC_ORDER_RELAXED
            | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
            | CL_DEVICE_ATOMIC_ORDER_SEQ_CST
            | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
            | CL_DEVICE_ATOMIC_SCOPE_DEVICE) as cl_device_atomic_capabilities
    );
    let il = device_string(d, CL_DEVICE_IL_VERSION);
    assert!(
        il.starts_with("SPIR-V_1.0") && il.ends_with("SPIR-V_1.6"),
        "{il}"
    );
    let ext = device_string(d, CL_DEVICE_EXTENSIONS);
    for e in [
        "cl_khr_icd",
        "cl_khr_il_program",
        "cl_khr_fp64",
        "cl_khr_fp16",
        "cl_khr_global_int32_base_atomics",
        "cl_khr_int64_extended_atomics",
    ] {
        assert!(ext.split(' ').any(|x| x == e), "{ext}");
    }
    // Sub-groups and fp16 are on by default (subgroups.rs and half.rs check them).
    assert!(!ext.contains("image"));
    assert!(ext.split(' ').any(|x| x == "cl_khr_subgroups"), "{ext}");
    assert_eq!(
        device_string(d, CL_DEVICE_OPENCL_C_VERSION),
        "OpenCL C 1.2 Ferrocl"
    );
    let mut size = 0;
    // SAFETY: size query only.
    unsafe {
        assert_eq!(
            clGetDeviceInfo(d, CL_DEVICE_ILS_WITH_VERSION, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        assert_eq!(size, 7 * std::mem::size_of::<cl_name_version>());
        assert_eq!(
            clGetDeviceInfo(null_mut(), CL_DEVICE_NAME, 0, null_mut(), &mut size),
            CL_INVALID_DEVICE
        );
        assert_eq!(
            clGetDeviceInfo(d, 0xffff, 0, null_mut(), &mut size),
            CL_INVALID_VALUE
        );
        let mut out = null_mut();
        assert_eq!(
            clGetDeviceIDs(platform(), CL_DEVICE_TYPE_GPU, 1, &mut out, null_mut()),
            CL_DEVICE_NOT_FOUND
        );
        let props = [
            CL_DEVICE_PARTITION_EQUALLY as cl_device_partition_property,
            1,
            0,
        ];
        assert_eq!(
            clCreateSubDevices(d, props.as_ptr(), 0, null_mut(), null_mut()),
            CL_INVALID_VALUE
        );
        let (mut dt, mut ht) = (0, 0);
        assert_eq!(clGetDeviceAndHostTimer(d, &mut dt, &mut ht), CL_SUCCESS);
        assert!(dt > 0 && ht > 0);
    }
}

#[test]
fn context_lifecycle_and_errors() {
    let d = device();
    let mut err = 0;
    // SAFETY: valid and deliberately invalid arguments; no invalid pointer is dereferenced.
    unsafe {
        let props = [
            CL_CONTEXT_PLATFORM as cl_context_properties,
            platform() as cl_context_properties,
            0,
        ];
        let ctx = clCreateContext(props.as_ptr(), 1, &d, null(), null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut refs: cl_uint = 0;
        assert_eq!(clRetainContext(ctx), CL_SUCCESS);
        assert_eq!(
            clGetContextInfo(
                ctx,
                CL_CONTEXT_REFERENCE_COUNT,
                4,
                (&mut refs as *mut cl_uint).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(refs, 2);
        let mut got = [0isize; 3];
        let mut size = 0;
        assert_eq!(
            clGetContextInfo(
                ctx,
                CL_CONTEXT_PROPERTIES,
                24,
                got.as_mut_ptr().cast(),
                &mut size
            ),
            CL_SUCCESS
        );
        assert_eq!((size, got), (24, props));
        assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
        assert_eq!(clReleaseContext(ctx), CL_SUCCESS);

        assert!(clCreateContext(null(), 0, &d, null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        assert!(clCreateContext(null(), 1, null(), null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        let bad = [
            CL_CONTEXT_PLATFORM as cl_context_properties,
            d as cl_context_properties,
            0,
        ];
        assert!(clCreateContext(bad.as_ptr(), 1, &d, null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_PLATFORM);
        let unknown = [0x7777isize, 1, 0];
        assert!(clCreateContext(unknown.as_ptr(), 1, &d, null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_PROPERTY);
        let not_dev = platform() as cl_device_id;
        assert!(clCreateContext(null(), 1, &not_dev, null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_DEVICE);
        assert_eq!(clReleaseContext(null_mut()), CL_INVALID_CONTEXT);
        assert_eq!(
            clGetContextInfo(
                d as cl_context,
                CL_CONTEXT_NUM_DEVICES,
                0,
                null_mut(),
                &mut size
            ),
            CL_INVALID_CONTEXT
        );
    }
}

static DESTROYED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
extern "C" fn on_destroy(_m: cl_mem, _u: *mut c_void) {
    DESTROYED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn buffers_read_write_copy_fill_map() {
    let env = Env::new(0);
    // SAFETY: buffers and host arrays are sized for every command.
    unsafe {
        let n = 1024usize;
        let a = env.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        let b = env.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        let src: Vec<u32> = (0..n as u32).collect();
        assert_eq!(
            clEnqueueWriteBuffer(
                env.q,
                a,
                CL_TRUE,
                0,
                n * 4,
                src.as_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueCopyBuffer(env.q, a, b, 0, 0, n * 4, 0, null(), null_mut()),
            CL_SUCCESS
        );
        let pat = 0xabcd_ef01u32;
        assert_eq!(
            clEnqueueFillBuffer(
                env.q,
                b,
                (&pat as *const u32).cast(),
                4,
                16,
                32,
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        let mut out = vec![0u32; n];
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                b,
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
        for (i, v) in out.iter().enumerate() {
            let want = if (4..12).contains(&i) { pat } else { i as u32 };
            assert_eq!(*v, want, "index {i}");
        }
        // Rect read: a 2x3 block from a 32-int-wide matrix.
        let (bo, ho, region) = ([4usize * 4, 2, 0], [0usize, 0, 0], [2usize * 4, 3, 1]);
        let mut rect = [0u32; 6];
        assert_eq!(
            clEnqueueReadBufferRect(
                env.q,
                a,
                CL_TRUE,
                bo.as_ptr(),
                ho.as_ptr(),
                region.as_ptr(),
                128,
                0,
                8,
                0,
                rect.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(rect, [68, 69, 100, 101, 132, 133]);

        // Map is zero-copy and counted.
        let mut err = 0;
        let p = clEnqueueMapBuffer(
            env.q,
            a,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE,
            8,
            16,
            0,
            null(),
            null_mut(),
            &mut err,
        ) as *mut u32;
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(*p, 2);
        *p = 77;
        let mut count: cl_uint = 0;
        assert_eq!(
            clGetMemObjectInfo(
                a,
                CL_MEM_MAP_COUNT,
                4,
                (&mut count as *mut cl_uint).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(count, 1);
        assert_eq!(
            clEnqueueUnmapMemObject(env.q, a, p.cast(), 0, null(), null_mut()),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueUnmapMemObject(env.q, a, p.cast(), 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        let mut one = 0u32;
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                a,
                CL_TRUE,
                8,
                4,
                (&mut one as *mut u32).cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(one, 77);

        // Sub-buffer shares storage.
        let region = cl_buffer_region {
            origin: 128,
            size: 64,
        };
        let sub = clCreateSubBuffer(
            a,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                sub,
                CL_TRUE,
                0,
                4,
                (&mut one as *mut u32).cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(one, 32);
        let bad = cl_buffer_region {
            origin: 4,
            size: 64,
        };
        assert!(clCreateSubBuffer(
            a,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&bad as *const cl_buffer_region).cast(),
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);

        // Errors.
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                a,
                CL_TRUE,
                n * 4 - 2,
                4,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueReadBuffer(env.q, a, CL_TRUE, 0, 4, null_mut(), 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                env.ctx as cl_mem,
                CL_TRUE,
                0,
                4,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(
            clEnqueueCopyBuffer(env.q, a, a, 0, 8, 16, 0, null(), null_mut()),
            CL_MEM_COPY_OVERLAP
        );
        assert_eq!(
            clEnqueueFillBuffer(
                env.q,
                a,
                (&pat as *const u32).cast(),
                3,
                0,
                12,
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                a,
                CL_TRUE,
                0,
                4,
                out.as_mut_ptr().cast(),
                1,
                null(),
                null_mut()
            ),
            CL_INVALID_EVENT_WAIT_LIST
        );
        assert!(clCreateBuffer(env.ctx, 0, 0, null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_BUFFER_SIZE);
        assert!(clCreateBuffer(
            env.ctx,
            CL_MEM_USE_HOST_PTR as cl_mem_flags,
            16,
            null_mut(),
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_INVALID_HOST_PTR);
        assert!(clCreateBuffer(
            env.ctx,
            (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) as cl_mem_flags,
            16,
            null_mut(),
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        let ro = env.buffer(CL_MEM_HOST_NO_ACCESS, 16, null_mut());
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                ro,
                CL_TRUE,
                0,
                4,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_OPERATION
        );

        // Destructor callbacks run once the last reference is gone (the sub-buffer holds `a`).
        let before = DESTROYED.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            clSetMemObjectDestructorCallback(a, on_destroy, null_mut()),
            CL_SUCCESS
        );
        assert_eq!(clRetainMemObject(a), CL_SUCCESS);
        assert_eq!(clReleaseMemObject(a), CL_SUCCESS);
        assert_eq!(clReleaseMemObject(a), CL_SUCCESS);
        assert_eq!(DESTROYED.load(std::sync::atomic::Ordering::SeqCst), before);
        assert_eq!(clReleaseMemObject(sub), CL_SUCCESS);
        assert_eq!(
            DESTROYED.load(std::sync::atomic::Ordering::SeqCst),
            before + 1
        );
        for m in [b, ro] {
            assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
        }
    }
}

#[test]
fn use_host_ptr_is_zero_copy() {
    let env = Env::new(0);
    let mut host = vec![5u32; 64];
    // SAFETY: `host` outlives the buffer.
    unsafe {
        let m = env.buffer(CL_MEM_USE_HOST_PTR, 256, host.as_mut_ptr().cast());
        let mut err = 0;
        let p = clEnqueueMapBuffer(
            env.q,
            m,
            CL_TRUE,
            CL_MAP_READ,
            0,
            256,
            0,
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(p, host.as_mut_ptr().cast());
        assert_eq!(
            clEnqueueUnmapMemObject(env.q, m, p, 0, null(), null_mut()),
            CL_SUCCESS
        );
        let mut hp: *mut c_void = null_mut();
        assert_eq!(
            clGetMemObjectInfo(
                m,
                CL_MEM_HOST_PTR,
                8,
                (&mut hp as *mut *mut c_void).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(hp, host.as_mut_ptr().cast());
        assert_eq!(clFinish(env.q), CL_SUCCESS);
        assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
    }
}

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

#[test]
fn program_from_il_errors_and_build_log() {
    let env = Env::new(0);
    let mut err = 0;
    // SAFETY: valid handles; byte buffers sized as passed.
    unsafe {
        let junk = [1u8, 2, 3, 4, 5, 6, 7, 8];
        assert!(
            clCreateProgramWithIL(env.ctx, junk.as_ptr().cast(), junk.len(), &mut err).is_null()
        );
        assert_eq!(err, CL_INVALID_VALUE);
        assert!(clCreateProgramWithIL(env.ctx, null(), 0, &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);

        let bad = spirv("physical32");
        let p = clCreateProgramWithIL(env.ctx, bad.as_ptr().cast(), bad.len(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut il_size = 0;
        assert_eq!(
            clGetProgramInfo(p, CL_PROGRAM_IL, 0, null_mut(), &mut il_size),
            CL_SUCCESS
        );
        assert_eq!(il_size, bad.len());
        assert_eq!(
            clBuildProgram(p, 0, null(), null(), null(), null_mut()),
            CL_BUILD_PROGRAM_FAILURE
        );
        let log = build_log(p, env.dev);
        assert!(log.contains("Physical32"), "{log}");
        let mut status: cl_build_status = 0;
        assert_eq!(
            clGetProgramBuildInfo(
                p,
                env.dev,
                CL_PROGRAM_BUILD_STATUS,
                4,
                (&mut status as *mut cl_build_status).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(status, CL_BUILD_ERROR);
        let name = CString::new("k").unwrap();
        assert!(clCreateKernel(p, name.as_ptr(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE);
        let mut n = 0usize;
        assert_eq!(
            clGetProgramInfo(
                p,
                CL_PROGRAM_NUM_KERNELS,
                8,
                (&mut n as *mut usize).cast(),
                null_mut()
            ),
            CL_INVALID_PROGRAM_EXECUTABLE
        );
        let opt = CString::new("-cl-no-such-option").unwrap();
        assert_eq!(
            clBuildProgram(p, 0, null(), opt.as_ptr(), null(), null_mut()),
            CL_INVALID_BUILD_OPTIONS
        );
        // Options the CTS passes to IL programs are accepted (preprocessor ones ignored).
        let ok = CString::new(
            "-cl-std=CL3.0 -D FOO=1 -I /tmp -cl-kernel-arg-info -cl-denorms-are-zero -w",
        )
        .unwrap();
        assert_eq!(
            clBuildProgram(p, 0, null(), ok.as_ptr(), null(), null_mut()),
            CL_BUILD_PROGRAM_FAILURE
        );
        assert_eq!(clReleaseProgram(p), CL_SUCCESS);
        // (A garbage pointer cannot be tested through the loader: ocl-icd reads the dispatch
        // table from the handle before we see it. Handles of the wrong type are detected.)
        assert_eq!(clReleaseProgram(env.ctx as cl_program), CL_INVALID_PROGRAM);
    }
}

#[test]
fn program_from_source_reports_compiler_errors() {
    let env = Env::new(0);
    let mut err = 0;
    let src = CString::new("kernel void k(global int *p) { p[0] = undeclared; }").unwrap();
    let ptrs = [src.as_ptr()];
    // SAFETY: valid handles and strings.
    unsafe {
        let p = clCreateProgramWithSource(env.ctx, 1, ptrs.as_ptr(), null(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let compiler: cl_bool = device_value(env.dev, CL_DEVICE_COMPILER_AVAILABLE);
        let r = clBuildProgram(p, 1, &env.dev, null(), null(), null_mut());
        if compiler == CL_TRUE {
            assert_eq!(r, CL_BUILD_PROGRAM_FAILURE);
            let log = build_log(p, env.dev);
            assert!(log.contains("undeclared"), "{log}");
        } else {
            assert_eq!(r, CL_COMPILER_NOT_AVAILABLE);
        }
        assert_eq!(clReleaseProgram(p), CL_SUCCESS);
        assert!(clCreateProgramWithSource(env.ctx, 0, ptrs.as_ptr(), null(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
    }
}

#[test]
fn unsupported_features_give_spec_errors() {
    let env = Env::new(0);
    let mut err = 0;
    // SAFETY: the stubs only validate and fail; nothing is dereferenced.
    unsafe {
        let fmt = cl_image_format {
            image_channel_order: CL_RGBA,
            image_channel_data_type: CL_FLOAT,
        };
        let desc: cl_image_desc = std::mem::zeroed();
        assert!(clCreateImage(env.ctx, 0, &fmt, &desc, null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_OPERATION);
        assert!(clCreateSampler(
            env.ctx,
            CL_FALSE,
            CL_ADDRESS_NONE,
            CL_FILTER_NEAREST,
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_INVALID_OPERATION);
        assert!(clSVMAlloc(env.ctx, CL_MEM_READ_WRITE as cl_svm_mem_flags, 64, 0).is_null());
        // No pipes (CL_DEVICE_PIPE_SUPPORT false): creating one is an invalid operation, and
        // no memory object is a pipe (API spec 3.0, optional features; CTS consistency_pipes).
        assert!(clCreatePipe(env.ctx, CL_MEM_HOST_NO_ACCESS, 4, 4, null(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_OPERATION);
        let buf = clCreateBuffer(env.ctx, CL_MEM_READ_WRITE, 4, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut packet = 0u32;
        assert_eq!(
            clGetPipeInfo(
                buf,
                CL_PIPE_PACKET_SIZE,
                4,
                (&mut packet as *mut u32).cast(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(clReleaseMemObject(buf), CL_SUCCESS);
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

#[test]
fn compile_link_and_binaries() {
    let env = Env::new(0);
    let mut err = 0;
    let il = spirv("store");
    // SAFETY: valid handles; buffers sized as passed.
    unsafe {
        let p = clCreateProgramWithIL(env.ctx, il.as_ptr().cast(), il.len(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            clCompileProgram(p, 0, null(), null(), 0, null(), null(), null(), null_mut()),
            CL_SUCCESS
        );
        let mut bt: cl_program_binary_type = 0;
        assert_eq!(
            clGetProgramBuildInfo(
                p,
                env.dev,
                CL_PROGRAM_BINARY_TYPE,
                4,
                (&mut bt as *mut cl_program_binary_type).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(
            bt,
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type
        );

        // The same object twice defines its kernel twice: a link failure with a log.
        let two = [p, p];
        let linked = clLinkProgram(
            env.ctx,
            0,
            null(),
            null(),
            2,
            two.as_ptr(),
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_LINK_PROGRAM_FAILURE);
        assert!(!linked.is_null());
        let log = build_log(linked, env.dev);
        assert!(log.contains("and again by input program 1"), "{log}");
        assert_eq!(clReleaseProgram(linked), CL_SUCCESS);
        // One input links into an executable.
        let one = clLinkProgram(
            env.ctx,
            0,
            null(),
            null(),
            1,
            &p,
            null(),
            null_mut(),
            &mut err,
        );
        assert!(!one.is_null());
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(clReleaseProgram(one), CL_SUCCESS);

        // CL_PROGRAM_BINARIES gives SPIR-V back, with the binary type recorded: a binary
        // loaded again reports the type it was saved with (CTS compiler program_binary_type).
        let binary_of = |prog: cl_program| -> Vec<u8> {
            let mut size = 0usize;
            assert_eq!(
                clGetProgramInfo(
                    prog,
                    CL_PROGRAM_BINARY_SIZES,
                    8,
                    (&mut size as *mut usize).cast(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            let mut bin = vec![0u8; size];
            let mut ptrs = [bin.as_mut_ptr()];
            assert_eq!(
                clGetProgramInfo(
                    prog,
                    CL_PROGRAM_BINARIES,
                    8,
                    ptrs.as_mut_ptr().cast(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            bin
        };
        let type_of = |prog: cl_program| -> cl_program_binary_type {
            let mut bt: cl_program_binary_type = 0;
            assert_eq!(
                clGetProgramBuildInfo(
                    prog,
                    env.dev,
                    CL_PROGRAM_BINARY_TYPE,
                    std::mem::size_of::<cl_program_binary_type>(),
                    (&mut bt as *mut cl_program_binary_type).cast(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            bt
        };
        let load = |bin: &[u8]| -> cl_program {
            let (mut st, mut err) = (1, 1);
            let bp = [bin.as_ptr()];
            let prog = clCreateProgramWithBinary(
                env.ctx,
                1,
                &env.dev,
                &bin.len(),
                bp.as_ptr(),
                &mut st,
                &mut err,
            );
            assert_eq!((err, st), (CL_SUCCESS, CL_SUCCESS));
            prog
        };
        let library_options = CString::new("-create-library").unwrap();
        let library = clLinkProgram(
            env.ctx,
            0,
            null(),
            library_options.as_ptr(),
            1,
            &p,
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let executable = clLinkProgram(
            env.ctx,
            0,
            null(),
            null(),
            1,
            &p,
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        for (prog, ty) in [
            (p, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT),
            (library, CL_PROGRAM_BINARY_TYPE_LIBRARY),
            (executable, CL_PROGRAM_BINARY_TYPE_EXECUTABLE),
        ] {
            let bin = binary_of(prog);
            assert_eq!(bin[..4], il[..4], "a SPIR-V module");
            let from_bin = load(&bin);
            assert_eq!(type_of(from_bin), ty as cl_program_binary_type);
            if ty == CL_PROGRAM_BINARY_TYPE_EXECUTABLE {
                // An executable binary still needs clBuildProgram, and builds.
                assert_eq!(
                    clBuildProgram(from_bin, 0, null(), null(), null(), null_mut()),
                    CL_SUCCESS
                );
                assert_eq!(
                    type_of(from_bin),
                    CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_program_binary_type
                );
            } else {
                // Objects and libraries loaded from binaries link.
                let linked = clLinkProgram(
                    env.ctx,
                    0,
                    null(),
                    null(),
                    1,
                    &from_bin,
                    null(),
                    null_mut(),
                    &mut err,
                );
                assert_eq!(err, CL_SUCCESS, "linking a reloaded {ty:#x}");
                assert_eq!(clReleaseProgram(linked), CL_SUCCESS);
            }
            assert_eq!(clReleaseProgram(from_bin), CL_SUCCESS);
        }
        // Plain SPIR-V is accepted as a binary too: a compiled object.
        let from_il = load(&il);
        assert_eq!(
            type_of(from_il),
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type
        );
        assert_eq!(clReleaseProgram(from_il), CL_SUCCESS);
        assert_eq!(clReleaseProgram(library), CL_SUCCESS);
        assert_eq!(clReleaseProgram(executable), CL_SUCCESS);
        let mut st = 1;
        let junk = [0u8; 16];
        let jp = [junk.as_ptr()];
        let jl = 16usize;
        assert!(clCreateProgramWithBinary(
            env.ctx,
            1,
            &env.dev,
            &jl,
            jp.as_ptr(),
            &mut st,
            &mut err
        )
        .is_null());
        assert_eq!((err, st), (CL_INVALID_BINARY, CL_INVALID_BINARY));
        assert_eq!(clReleaseProgram(p), CL_SUCCESS);
    }
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
