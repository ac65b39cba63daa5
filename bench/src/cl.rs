//! The OpenCL API as this benchmark uses it: `libOpenCL.so.1` loaded at run time, and thin owned
//! wrappers (context + profiling queue, program, kernel, buffer, event) that release on drop.

use libloading::Library;
use opencl_sys::cl_function_types as f;
use opencl_sys::*;
use std::ffi::{c_void, CString};
use std::ptr;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Entry points resolved from the loader; every field is checked non-null at load time.
pub struct Api {
    _lib: Library,
    get_platform_ids: f::clGetPlatformIDs_t,
    get_platform_info: f::clGetPlatformInfo_t,
    get_device_ids: f::clGetDeviceIDs_t,
    get_device_info: f::clGetDeviceInfo_t,
    create_context: f::clCreateContext_t,
    create_queue_with_props: f::clCreateCommandQueueWithProperties_t,
    create_program_with_source: f::clCreateProgramWithSource_t,
    create_program_with_il: f::clCreateProgramWithIL_t,
    build_program: f::clBuildProgram_t,
    get_program_build_info: f::clGetProgramBuildInfo_t,
    create_kernel: f::clCreateKernel_t,
    set_kernel_arg: f::clSetKernelArg_t,
    create_buffer: f::clCreateBuffer_t,
    enqueue_write_buffer: f::clEnqueueWriteBuffer_t,
    enqueue_read_buffer: f::clEnqueueReadBuffer_t,
    enqueue_fill_buffer: f::clEnqueueFillBuffer_t,
    enqueue_copy_buffer: f::clEnqueueCopyBuffer_t,
    enqueue_nd_range_kernel: f::clEnqueueNDRangeKernel_t,
    finish: f::clFinish_t,
    wait_for_events: f::clWaitForEvents_t,
    get_event_profiling_info: f::clGetEventProfilingInfo_t,
    release_event: f::clReleaseEvent_t,
    release_mem_object: f::clReleaseMemObject_t,
    release_kernel: f::clReleaseKernel_t,
    release_program: f::clReleaseProgram_t,
    release_command_queue: f::clReleaseCommandQueue_t,
    release_context: f::clReleaseContext_t,
    get_extension_function_address_for_platform: f::clGetExtensionFunctionAddressForPlatform_t,
}

/// Calls an entry point that `Api::load` has verified to be present.
macro_rules! call {
    ($api:expr, $field:ident ( $($arg:expr),* $(,)? )) => {
        ($api.$field.expect(concat!(stringify!($field), " checked at load")))($($arg),*)
    };
}

fn check(code: cl_int, what: &str) -> Result<(), String> {
    if code == CL_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed: {}", error_name(code)))
    }
}

/// A readable name for the common OpenCL error codes.
pub fn error_name(code: cl_int) -> String {
    let name = match code {
        CL_DEVICE_NOT_FOUND => "CL_DEVICE_NOT_FOUND",
        CL_OUT_OF_RESOURCES => "CL_OUT_OF_RESOURCES",
        CL_OUT_OF_HOST_MEMORY => "CL_OUT_OF_HOST_MEMORY",
        CL_BUILD_PROGRAM_FAILURE => "CL_BUILD_PROGRAM_FAILURE",
        CL_INVALID_VALUE => "CL_INVALID_VALUE",
        CL_INVALID_PLATFORM => "CL_INVALID_PLATFORM",
        CL_INVALID_DEVICE => "CL_INVALID_DEVICE",
        CL_INVALID_CONTEXT => "CL_INVALID_CONTEXT",
        CL_INVALID_QUEUE_PROPERTIES => "CL_INVALID_QUEUE_PROPERTIES",
        CL_INVALID_COMMAND_QUEUE => "CL_INVALID_COMMAND_QUEUE",
        CL_INVALID_MEM_OBJECT => "CL_INVALID_MEM_OBJECT",
        CL_INVALID_BINARY => "CL_INVALID_BINARY",
        CL_INVALID_BUILD_OPTIONS => "CL_INVALID_BUILD_OPTIONS",
        CL_INVALID_PROGRAM => "CL_INVALID_PROGRAM",
        CL_INVALID_PROGRAM_EXECUTABLE => "CL_INVALID_PROGRAM_EXECUTABLE",
        CL_INVALID_KERNEL_NAME => "CL_INVALID_KERNEL_NAME",
        CL_INVALID_KERNEL => "CL_INVALID_KERNEL",
        CL_INVALID_ARG_INDEX => "CL_INVALID_ARG_INDEX",
        CL_INVALID_ARG_VALUE => "CL_INVALID_ARG_VALUE",
        CL_INVALID_ARG_SIZE => "CL_INVALID_ARG_SIZE",
        CL_INVALID_KERNEL_ARGS => "CL_INVALID_KERNEL_ARGS",
        CL_INVALID_WORK_DIMENSION => "CL_INVALID_WORK_DIMENSION",
        CL_INVALID_WORK_GROUP_SIZE => "CL_INVALID_WORK_GROUP_SIZE",
        CL_INVALID_WORK_ITEM_SIZE => "CL_INVALID_WORK_ITEM_SIZE",
        CL_INVALID_EVENT => "CL_INVALID_EVENT",
        CL_INVALID_OPERATION => "CL_INVALID_OPERATION",
        CL_INVALID_BUFFER_SIZE => "CL_INVALID_BUFFER_SIZE",
        CL_PROFILING_INFO_NOT_AVAILABLE => "CL_PROFILING_INFO_NOT_AVAILABLE",
        CL_PLATFORM_NOT_FOUND_KHR => "CL_PLATFORM_NOT_FOUND_KHR",
        _ => return format!("error {code}"),
    };
    name.to_string()
}

impl Api {
    /// Opens the system ICD loader; fails if it is absent or lacks an entry point we call.
    pub fn load() -> Result<Rc<Api>, String> {
        // SAFETY: loading the system OpenCL loader runs its (trusted) initialisers only.
        let lib = unsafe { Library::new("libOpenCL.so.1") }
            .map_err(|e| format!("cannot open libOpenCL.so.1: {e}"))?;
        macro_rules! sym {
            ($name:literal) => {
                sym(&lib, concat!($name, "\0"))?
            };
        }
        let api = Api {
            get_platform_ids: sym!("clGetPlatformIDs"),
            get_platform_info: sym!("clGetPlatformInfo"),
            get_device_ids: sym!("clGetDeviceIDs"),
            get_device_info: sym!("clGetDeviceInfo"),
            create_context: sym!("clCreateContext"),
            create_queue_with_props: sym!("clCreateCommandQueueWithProperties"),
            create_program_with_source: sym!("clCreateProgramWithSource"),
            create_program_with_il: sym!("clCreateProgramWithIL"),
            build_program: sym!("clBuildProgram"),
            get_program_build_info: sym!("clGetProgramBuildInfo"),
            create_kernel: sym!("clCreateKernel"),
            set_kernel_arg: sym!("clSetKernelArg"),
            create_buffer: sym!("clCreateBuffer"),
            enqueue_write_buffer: sym!("clEnqueueWriteBuffer"),
            enqueue_read_buffer: sym!("clEnqueueReadBuffer"),
            enqueue_fill_buffer: sym!("clEnqueueFillBuffer"),
            enqueue_copy_buffer: sym!("clEnqueueCopyBuffer"),
            enqueue_nd_range_kernel: sym!("clEnqueueNDRangeKernel"),
            finish: sym!("clFinish"),
            wait_for_events: sym!("clWaitForEvents"),
            get_event_profiling_info: sym!("clGetEventProfilingInfo"),
            release_event: sym!("clReleaseEvent"),
            release_mem_object: sym!("clReleaseMemObject"),
            release_kernel: sym!("clReleaseKernel"),
            release_program: sym!("clReleaseProgram"),
            release_command_queue: sym!("clReleaseCommandQueue"),
            release_context: sym!("clReleaseContext"),
            get_extension_function_address_for_platform: sym!(
                "clGetExtensionFunctionAddressForPlatform"
            ),
            _lib: lib,
        };
        Ok(Rc::new(api))
    }

    /// Every platform the loader reports, with its name and version.
    pub fn platforms(&self) -> Result<Vec<PlatformInfo>, String> {
        let mut n: cl_uint = 0;
        // SAFETY: size query with valid out-pointer.
        let code = unsafe { call!(self, get_platform_ids(0, ptr::null_mut(), &mut n)) };
        if code == CL_PLATFORM_NOT_FOUND_KHR || n == 0 {
            return Ok(Vec::new());
        }
        check(code, "clGetPlatformIDs")?;
        let mut ids = vec![ptr::null_mut(); n as usize];
        // SAFETY: `ids` holds `n` entries.
        check(
            unsafe { call!(self, get_platform_ids(n, ids.as_mut_ptr(), ptr::null_mut())) },
            "clGetPlatformIDs",
        )?;
        ids.into_iter()
            .map(|id| {
                Ok(PlatformInfo {
                    id,
                    name: self.platform_string(id, CL_PLATFORM_NAME)?,
                    version: self.platform_string(id, CL_PLATFORM_VERSION)?,
                })
            })
            .collect()
    }

    fn platform_string(
        &self,
        id: cl_platform_id,
        param: cl_platform_info,
    ) -> Result<String, String> {
        info_string(|size, value, ret| {
            // SAFETY: two-call info protocol with buffers sized by the caller.
            unsafe { call!(self, get_platform_info(id, param, size, value, ret)) }
        })
        .map_err(|e| format!("clGetPlatformInfo: {e}"))
    }

    fn device_string(&self, id: cl_device_id, param: cl_device_info) -> Result<String, String> {
        info_string(|size, value, ret| {
            // SAFETY: two-call info protocol with buffers sized by the caller.
            unsafe { call!(self, get_device_info(id, param, size, value, ret)) }
        })
        .map_err(|e| format!("clGetDeviceInfo: {e}"))
    }
}

/// Resolves a NUL-terminated symbol name to a non-null function pointer.
fn sym<F: Copy>(lib: &Library, name: &str) -> Result<Option<F>, String> {
    let shown = name.trim_end_matches('\0');
    // SAFETY: the caller's field type is the C signature opencl-sys declares for this symbol.
    let s = unsafe { lib.get::<Option<F>>(name.as_bytes()) }
        .map_err(|e| format!("loader lacks {shown}: {e}"))?;
    let v = *s;
    if v.is_none() {
        return Err(format!("loader symbol {shown} is null"));
    }
    Ok(v)
}

/// The two-call `clGet*Info` protocol for a string value.
fn info_string(
    mut get: impl FnMut(usize, *mut c_void, *mut usize) -> cl_int,
) -> Result<String, String> {
    let mut size = 0usize;
    check(get(0, ptr::null_mut(), &mut size), "size query")?;
    let mut buf = vec![0u8; size.max(1)];
    check(
        get(buf.len(), buf.as_mut_ptr().cast(), ptr::null_mut()),
        "value query",
    )?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

pub struct PlatformInfo {
    pub id: cl_platform_id,
    pub name: String,
    pub version: String,
}

/// A context on the platform's first device, with one in-order profiling queue.
pub struct Context {
    api: Rc<Api>,
    platform: cl_platform_id,
    device: cl_device_id,
    context: cl_context,
    queue: cl_command_queue,
    pub device_name: String,
}

impl Context {
    pub fn new(api: &Rc<Api>, platform: cl_platform_id) -> Result<Context, String> {
        let mut device: cl_device_id = ptr::null_mut();
        // SAFETY: one device requested into a valid slot.
        check(
            unsafe {
                call!(
                    api,
                    get_device_ids(
                        platform,
                        CL_DEVICE_TYPE_ALL,
                        1,
                        &mut device,
                        ptr::null_mut()
                    )
                )
            },
            "clGetDeviceIDs",
        )?;
        let device_name = api.device_string(device, CL_DEVICE_NAME)?;
        let props: [cl_context_properties; 3] = [
            CL_CONTEXT_PLATFORM as cl_context_properties,
            platform as cl_context_properties,
            0,
        ];
        let mut err = CL_SUCCESS;
        // SAFETY: valid property list and device array of length 1.
        let context = unsafe {
            call!(
                api,
                create_context(props.as_ptr(), 1, &device, None, ptr::null_mut(), &mut err)
            )
        };
        check(err, "clCreateContext")?;
        let qprops: [cl_queue_properties; 3] = [
            CL_QUEUE_PROPERTIES as cl_queue_properties,
            CL_QUEUE_PROFILING_ENABLE,
            0,
        ];
        // SAFETY: valid context, device and zero-terminated property list.
        let queue = unsafe {
            call!(
                api,
                create_queue_with_props(context, device, qprops.as_ptr(), &mut err)
            )
        };
        if err != CL_SUCCESS {
            // SAFETY: the context was created above and is released once.
            unsafe { call!(api, release_context(context)) };
            return Err(format!(
                "clCreateCommandQueueWithProperties failed: {}",
                error_name(err)
            ));
        }
        Ok(Context {
            api: api.clone(),
            platform,
            device,
            context,
            queue,
            device_name,
        })
    }

    /// Creates a program from OpenCL C or SPIR-V and builds it; returns it with the host time
    /// `clBuildProgram` took. A build failure gives the build log's first non-empty line.
    pub fn build(&self, code: &ProgramCode, options: &str) -> Result<(Program, Duration), String> {
        let mut err = CL_SUCCESS;
        let program = match code {
            ProgramCode::Source(src) => {
                let csrc = CString::new(src.as_str()).map_err(|e| e.to_string())?;
                let mut p = csrc.as_ptr();
                // SAFETY: one NUL-terminated string, lengths NULL.
                unsafe {
                    call!(
                        self.api,
                        create_program_with_source(self.context, 1, &mut p, ptr::null(), &mut err)
                    )
                }
            }
            ProgramCode::Il(words) => {
                // SAFETY: `words` is a live byte buffer of the given length.
                unsafe {
                    call!(
                        self.api,
                        create_program_with_il(
                            self.context,
                            words.as_ptr().cast(),
                            words.len(),
                            &mut err
                        )
                    )
                }
            }
        };
        let what = match code {
            ProgramCode::Source(_) => "clCreateProgramWithSource",
            ProgramCode::Il(_) => "clCreateProgramWithIL",
        };
        check(err, what)?;
        let program = Program {
            api: self.api.clone(),
            raw: program,
        };
        let opts = CString::new(options).map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        // SAFETY: valid program and device list of length 1; synchronous build.
        let code = unsafe {
            call!(
                self.api,
                build_program(
                    program.raw,
                    1,
                    &self.device,
                    opts.as_ptr(),
                    None,
                    ptr::null_mut()
                )
            )
        };
        let took = t0.elapsed();
        if code != CL_SUCCESS {
            let log = info_string(|size, value, ret| {
                // SAFETY: two-call info protocol.
                unsafe {
                    call!(
                        self.api,
                        get_program_build_info(
                            program.raw,
                            self.device,
                            CL_PROGRAM_BUILD_LOG,
                            size,
                            value,
                            ret
                        )
                    )
                }
            })
            .unwrap_or_default();
            let first = log
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("");
            return Err(format!("clBuildProgram: {} {first}", error_name(code)));
        }
        Ok((program, took))
    }

    pub fn kernel(&self, program: &Program, name: &str) -> Result<Kernel, String> {
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        let mut err = CL_SUCCESS;
        // SAFETY: built program, NUL-terminated name.
        let raw = unsafe {
            call!(
                self.api,
                create_kernel(program.raw, cname.as_ptr(), &mut err)
            )
        };
        check(err, "clCreateKernel")?;
        Ok(Kernel {
            api: self.api.clone(),
            raw,
        })
    }

    /// A device buffer of `size` bytes, initialised from `init` when given.
    pub fn buffer(&self, size: usize, init: Option<&[u8]>) -> Result<Buffer, String> {
        let mut err = CL_SUCCESS;
        let (flags, host) = match init {
            Some(data) => {
                assert_eq!(data.len(), size);
                (
                    CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                    data.as_ptr() as *mut c_void,
                )
            }
            None => (CL_MEM_READ_WRITE, ptr::null_mut()),
        };
        // SAFETY: `host` is either null or a buffer of `size` bytes copied during the call.
        let raw = unsafe {
            call!(
                self.api,
                create_buffer(self.context, flags, size.max(1), host, &mut err)
            )
        };
        check(err, "clCreateBuffer")?;
        Ok(Buffer {
            api: self.api.clone(),
            raw,
            size,
        })
    }

    pub fn write(&self, buf: &Buffer, data: &[u8]) -> Result<(), String> {
        assert!(data.len() <= buf.size);
        // SAFETY: blocking write from a live slice.
        check(
            unsafe {
                call!(
                    self.api,
                    enqueue_write_buffer(
                        self.queue,
                        buf.raw,
                        CL_TRUE,
                        0,
                        data.len(),
                        data.as_ptr().cast(),
                        0,
                        ptr::null(),
                        ptr::null_mut()
                    )
                )
            },
            "clEnqueueWriteBuffer",
        )
    }

    pub fn read(&self, buf: &Buffer) -> Result<Vec<u8>, String> {
        self.read_at(buf, 0, buf.size)
    }

    /// Bytes `offset..offset + len` of the buffer (the sampled checks of 1 GiB buffers).
    pub fn read_at(&self, buf: &Buffer, offset: usize, len: usize) -> Result<Vec<u8>, String> {
        assert!(offset + len <= buf.size);
        let mut out = vec![0u8; len];
        // SAFETY: blocking read of `len` bytes into a slice of that length, inside the buffer.
        check(
            unsafe {
                call!(
                    self.api,
                    enqueue_read_buffer(
                        self.queue,
                        buf.raw,
                        CL_TRUE,
                        offset,
                        len,
                        out.as_mut_ptr().cast(),
                        0,
                        ptr::null(),
                        ptr::null_mut()
                    )
                )
            },
            "clEnqueueReadBuffer",
        )?;
        Ok(out)
    }

    /// Whether the device lists extension `name` in `CL_DEVICE_EXTENSIONS`.
    pub fn has_extension(&self, name: &str) -> Result<bool, String> {
        let extensions = self.api.device_string(self.device, CL_DEVICE_EXTENSIONS)?;
        Ok(extensions.split_whitespace().any(|e| e == name))
    }

    /// Enqueues `clEnqueueFillBuffer` of the whole buffer with `pattern`; returns its event
    /// when `want_event`.
    pub fn fill(
        &self,
        buf: &Buffer,
        pattern: &[u8],
        want_event: bool,
    ) -> Result<Option<Event>, String> {
        assert!(buf.size.is_multiple_of(pattern.len()));
        let mut ev: cl_event = ptr::null_mut();
        // SAFETY: the pattern is a live slice of its length (copied during the call), the
        // range is the whole buffer; the event slot is valid or null.
        check(
            unsafe {
                call!(
                    self.api,
                    enqueue_fill_buffer(
                        self.queue,
                        buf.raw,
                        pattern.as_ptr().cast(),
                        pattern.len(),
                        0,
                        buf.size,
                        0,
                        ptr::null(),
                        if want_event { &mut ev } else { ptr::null_mut() },
                    )
                )
            },
            "clEnqueueFillBuffer",
        )?;
        Ok(want_event.then(|| Event {
            api: self.api.clone(),
            raw: ev,
        }))
    }

    /// Enqueues `clEnqueueCopyBuffer` of all of `src` into `dst` (of the same size).
    pub fn copy(
        &self,
        src: &Buffer,
        dst: &Buffer,
        want_event: bool,
    ) -> Result<Option<Event>, String> {
        assert_eq!(src.size, dst.size);
        let mut ev: cl_event = ptr::null_mut();
        // SAFETY: two distinct buffers of `src.size` bytes; the event slot is valid or null.
        check(
            unsafe {
                call!(
                    self.api,
                    enqueue_copy_buffer(
                        self.queue,
                        src.raw,
                        dst.raw,
                        0,
                        0,
                        src.size,
                        0,
                        ptr::null(),
                        if want_event { &mut ev } else { ptr::null_mut() },
                    )
                )
            },
            "clEnqueueCopyBuffer",
        )?;
        Ok(want_event.then(|| Event {
            api: self.api.clone(),
            raw: ev,
        }))
    }

    /// Enqueues an NDRange; returns its event when `want_event`.
    pub fn enqueue(
        &self,
        kernel: &Kernel,
        global: &[usize],
        local: Option<&[usize]>,
        want_event: bool,
    ) -> Result<Option<Event>, String> {
        let mut ev: cl_event = ptr::null_mut();
        let local_ptr = local.map_or(ptr::null(), |l| l.as_ptr());
        // SAFETY: sizes arrays have `global.len()` entries; event slot is valid or null.
        check(
            unsafe {
                call!(
                    self.api,
                    enqueue_nd_range_kernel(
                        self.queue,
                        kernel.raw,
                        global.len() as cl_uint,
                        ptr::null(),
                        global.as_ptr(),
                        local_ptr,
                        0,
                        ptr::null(),
                        if want_event { &mut ev } else { ptr::null_mut() },
                    )
                )
            },
            "clEnqueueNDRangeKernel",
        )?;
        Ok(want_event.then(|| Event {
            api: self.api.clone(),
            raw: ev,
        }))
    }

    /// A command-buffer (`cl_khr_command_buffer`) on the queue holding `count` launches of
    /// `kernel` with its current arguments, finalized; an error naming what is missing when
    /// the device does not offer the extension.
    /// `overlapping`: the buffer will be enqueued again before its last execution ended,
    /// which versions before 0.9.8 refuse (their Pending state; PoCL 3.1 has 0.9.0).
    pub fn command_buffer(
        &self,
        kernel: &Kernel,
        global: &[usize],
        local: Option<&[usize]>,
        count: usize,
        overlapping: bool,
    ) -> Result<CommandBuffer, String> {
        let extensions = self.api.device_string(self.device, CL_DEVICE_EXTENSIONS)?;
        if !extensions
            .split_whitespace()
            .any(|e| e == "cl_khr_command_buffer")
        {
            return Err("no cl_khr_command_buffer".into());
        }
        if let Some(version) = self.extension_version("cl_khr_command_buffer") {
            let (major, minor, patch) = (version >> 22, (version >> 12) & 0x3ff, version & 0xfff);
            if overlapping && (major, minor, patch) < (0, 9, 8) {
                return Err(format!(
                    "cl_khr_command_buffer {major}.{minor}.{patch}: no enqueue while an execution is pending (0.9.8)"
                ));
            }
        }
        let lookup = |name: &str| -> Result<*mut c_void, String> {
            let cname = CString::new(name).map_err(|e| e.to_string())?;
            // SAFETY: a platform of the loader and a NUL-terminated name.
            let p = unsafe {
                call!(
                    self.api,
                    get_extension_function_address_for_platform(self.platform, cname.as_ptr())
                )
            };
            if p.is_null() {
                Err(format!("{name} not found"))
            } else {
                Ok(p)
            }
        };
        // The five entry points used here have the same C signature in every version of the
        // extension (PoCL 3.1 reports 0.9.0).
        // SAFETY: each pointer is the platform's function of that name, of the type
        // opencl-sys declares for it.
        let fns = unsafe {
            CommandBufferFns {
                create: std::mem::transmute::<*mut c_void, clCreateCommandBufferKHR_fn>(lookup(
                    "clCreateCommandBufferKHR",
                )?),
                ndrange: std::mem::transmute::<*mut c_void, clCommandNDRangeKernelKHR_fn>(lookup(
                    "clCommandNDRangeKernelKHR",
                )?),
                finalize: std::mem::transmute::<*mut c_void, clFinalizeCommandBufferKHR_fn>(
                    lookup("clFinalizeCommandBufferKHR")?,
                ),
                enqueue: std::mem::transmute::<*mut c_void, clEnqueueCommandBufferKHR_fn>(lookup(
                    "clEnqueueCommandBufferKHR",
                )?),
                release: std::mem::transmute::<*mut c_void, clReleaseCommandBufferKHR_fn>(lookup(
                    "clReleaseCommandBufferKHR",
                )?),
            }
        };
        let mut err = CL_SUCCESS;
        // SAFETY: one valid queue, no properties.
        let raw = unsafe { call!(fns, create(1, &self.queue, ptr::null(), &mut err)) };
        check(err, "clCreateCommandBufferKHR")?;
        let cb = CommandBuffer { fns, raw };
        let local_ptr = local.map_or(ptr::null(), |l| l.as_ptr());
        for _ in 0..count {
            // SAFETY: valid handles; size arrays of `global.len()` entries; no sync points.
            check(
                unsafe {
                    call!(
                        cb.fns,
                        ndrange(
                            cb.raw,
                            ptr::null_mut(),
                            ptr::null(),
                            kernel.raw,
                            global.len() as cl_uint,
                            ptr::null(),
                            global.as_ptr(),
                            local_ptr,
                            0,
                            ptr::null(),
                            ptr::null_mut(),
                            ptr::null_mut()
                        )
                    )
                },
                "clCommandNDRangeKernelKHR",
            )?;
        }
        // SAFETY: a command-buffer in the recording state.
        check(
            unsafe { call!(cb.fns, finalize(cb.raw)) },
            "clFinalizeCommandBufferKHR",
        )?;
        Ok(cb)
    }

    /// The version of extension `name` from `CL_DEVICE_EXTENSIONS_WITH_VERSION`, if the
    /// device answers that query and lists it.
    fn extension_version(&self, name: &str) -> Option<cl_version> {
        let mut size = 0usize;
        let query = CL_DEVICE_EXTENSIONS_WITH_VERSION;
        // SAFETY: a size query.
        let code = unsafe {
            call!(
                self.api,
                get_device_info(self.device, query, 0, ptr::null_mut(), &mut size)
            )
        };
        let entry = std::mem::size_of::<cl_name_version>();
        if code != CL_SUCCESS || !size.is_multiple_of(entry) {
            return None;
        }
        let mut list = vec![
            cl_name_version {
                version: 0,
                name: [0; CL_NAME_VERSION_MAX_NAME_SIZE],
            };
            size / entry
        ];
        // SAFETY: `list` holds `size` bytes of cl_name_version entries.
        let code = unsafe {
            call!(
                self.api,
                get_device_info(
                    self.device,
                    query,
                    size,
                    list.as_mut_ptr().cast(),
                    ptr::null_mut()
                )
            )
        };
        if code != CL_SUCCESS {
            return None;
        }
        list.iter().find_map(|nv| {
            let end = nv
                .name
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(nv.name.len());
            (&nv.name[..end] == name.as_bytes()).then_some(nv.version)
        })
    }

    /// The context and queue handles, for measurements that call entry points `Api` does not
    /// load (`svm.rs`).
    pub fn raw_handles(&self) -> (cl_context, cl_command_queue) {
        (self.context, self.queue)
    }

    pub fn finish(&self) -> Result<(), String> {
        // SAFETY: valid queue.
        check(unsafe { call!(self.api, finish(self.queue)) }, "clFinish")
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: created in `new`, released once.
        unsafe {
            call!(self.api, release_command_queue(self.queue));
            call!(self.api, release_context(self.context));
        }
    }
}

/// What a program is created from.
pub enum ProgramCode {
    Source(String),
    Il(Vec<u8>),
}

pub struct Program {
    api: Rc<Api>,
    raw: cl_program,
}
impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: owned handle released once.
        unsafe { call!(self.api, release_program(self.raw)) };
    }
}

pub struct Kernel {
    api: Rc<Api>,
    raw: cl_kernel,
}
impl Kernel {
    pub fn raw_handle(&self) -> cl_kernel {
        self.raw
    }

    pub fn set_buffer(&self, index: u32, buf: &Buffer) -> Result<(), String> {
        // SAFETY: a cl_mem argument is passed by pointer to the handle.
        check(
            unsafe {
                call!(
                    self.api,
                    set_kernel_arg(
                        self.raw,
                        index,
                        std::mem::size_of::<cl_mem>(),
                        (&buf.raw as *const cl_mem).cast()
                    )
                )
            },
            "clSetKernelArg",
        )
    }
    pub fn set_bytes(&self, index: u32, bytes: &[u8]) -> Result<(), String> {
        // SAFETY: scalar argument passed by pointer with its size.
        check(
            unsafe {
                call!(
                    self.api,
                    set_kernel_arg(self.raw, index, bytes.len(), bytes.as_ptr().cast())
                )
            },
            "clSetKernelArg",
        )
    }
}
impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: owned handle released once.
        unsafe { call!(self.api, release_kernel(self.raw)) };
    }
}

/// The `cl_khr_command_buffer` entry points the launch rows use.
struct CommandBufferFns {
    create: clCreateCommandBufferKHR_fn,
    ndrange: clCommandNDRangeKernelKHR_fn,
    finalize: clFinalizeCommandBufferKHR_fn,
    enqueue: clEnqueueCommandBufferKHR_fn,
    release: clReleaseCommandBufferKHR_fn,
}

/// A finalized command-buffer on the context's queue.
pub struct CommandBuffer {
    fns: CommandBufferFns,
    raw: cl_command_buffer_khr,
}

impl CommandBuffer {
    /// Enqueues the recorded commands on the queue they were recorded for.
    pub fn enqueue(&self) -> Result<(), String> {
        // SAFETY: a finalized command-buffer; no wait list, no event.
        check(
            unsafe {
                call!(
                    self.fns,
                    enqueue(
                        0,
                        ptr::null_mut(),
                        self.raw,
                        0,
                        ptr::null(),
                        ptr::null_mut()
                    )
                )
            },
            "clEnqueueCommandBufferKHR",
        )
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        // SAFETY: created in `Context::command_buffer`, released once.
        unsafe { call!(self.fns, release(self.raw)) };
    }
}

pub struct Buffer {
    api: Rc<Api>,
    raw: cl_mem,
    pub size: usize,
}
impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: owned handle released once.
        unsafe { call!(self.api, release_mem_object(self.raw)) };
    }
}

pub struct Event {
    api: Rc<Api>,
    raw: cl_event,
}
impl Event {
    /// Waits for the command and returns END − START from its profiling info, in nanoseconds.
    pub fn profiled_ns(&self) -> Result<u64, String> {
        // SAFETY: one valid event.
        check(
            unsafe { call!(self.api, wait_for_events(1, &self.raw)) },
            "clWaitForEvents",
        )?;
        let get = |param| -> Result<u64, String> {
            let mut v: cl_ulong = 0;
            // SAFETY: cl_ulong-sized out value.
            check(
                unsafe {
                    call!(
                        self.api,
                        get_event_profiling_info(
                            self.raw,
                            param,
                            std::mem::size_of::<cl_ulong>(),
                            (&mut v as *mut cl_ulong).cast(),
                            ptr::null_mut()
                        )
                    )
                },
                "clGetEventProfilingInfo",
            )?;
            Ok(v)
        };
        let start = get(CL_PROFILING_COMMAND_START)?;
        let end = get(CL_PROFILING_COMMAND_END)?;
        Ok(end.saturating_sub(start))
    }
}
impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: owned handle released once.
        unsafe { call!(self.api, release_event(self.raw)) };
    }
}

/// Times commands by their events' profiling counters (the `--svm` and `--images`
/// comparisons, which call entry points `Api` does not wrap).
pub struct EventTimer {
    wait: f::clWaitForEvents_t,
    profiling: f::clGetEventProfilingInfo_t,
    release_event: f::clReleaseEvent_t,
}

impl EventTimer {
    pub fn load(lib: &Library) -> Result<EventTimer, String> {
        macro_rules! sym {
            ($name:literal) => {{
                // SAFETY: the symbol has the OpenCL signature of its name.
                let s = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{}: {e}", $name))?;
                Some(*s)
            }};
        }
        Ok(EventTimer {
            wait: sym!("clWaitForEvents"),
            profiling: sym!("clGetEventProfilingInfo"),
            release_event: sym!("clReleaseEvent"),
        })
    }

    /// Waits for `event` (from a call that returned `status`) and returns END − START in
    /// milliseconds, releasing the event.
    pub fn elapsed_ms(&self, event: cl_event, status: cl_int, what: &str) -> Result<f64, String> {
        if status != CL_SUCCESS {
            return Err(format!("{what}: error {status}"));
        }
        let get = |param| {
            let mut v: cl_ulong = 0;
            // SAFETY: a cl_ulong out value for a valid event.
            unsafe {
                self.profiling.expect("loaded")(
                    event,
                    param,
                    8,
                    (&mut v as *mut cl_ulong).cast(),
                    ptr::null_mut(),
                )
            };
            v
        };
        // SAFETY: one valid event, released once.
        unsafe { self.wait.expect("loaded")(1, &event) };
        let ns = get(CL_PROFILING_COMMAND_END).saturating_sub(get(CL_PROFILING_COMMAND_START));
        // SAFETY: as above.
        unsafe { self.release_event.expect("loaded")(event) };
        Ok(ns as f64 / 1e6)
    }
}
