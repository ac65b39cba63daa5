//! The OpenCL C API as the checker uses it: `libOpenCL.so.1` (the ocl-icd loader) opened with
//! libloading, the Ferrocl platform and its first device, programs from OpenCL C source, buffers
//! and kernel launches. Only what the checker needs, with errors as strings.

use opencl_sys::cl_function_types::*;
use opencl_sys::*;
use std::ffi::{c_void, CString};
use std::ptr;

macro_rules! api {
    ($($f:ident: $t:ident,)*) => {
        /// Entry points resolved from the loader (all non-null once loaded).
        #[allow(non_snake_case)]
        struct Api {
            _lib: libloading::Library,
            $($f: $t,)*
        }

        impl Api {
            #[allow(non_snake_case)]
            fn load(path: &str) -> Result<Api, String> {
                // SAFETY: loading the system OpenCL loader runs its initialisers, which is what
                // every OpenCL application does.
                let lib = unsafe { libloading::Library::new(path) }
                    .map_err(|e| format!("cannot load {path}: {e}"))?;
                $(
                    // SAFETY: the symbol has the C signature opencl-sys declares for it.
                    let $f: $t = unsafe {
                        *lib.get::<$t>(concat!(stringify!($f), "\0").as_bytes())
                            .map_err(|e| format!("{path}: {e}"))?
                    };
                    if $f.is_none() {
                        return Err(format!("{path}: {} is null", stringify!($f)));
                    }
                )*
                Ok(Api { _lib: lib, $($f,)* })
            }
        }
    };
}

api! {
    clGetPlatformIDs: clGetPlatformIDs_fn,
    clGetPlatformInfo: clGetPlatformInfo_fn,
    clGetDeviceIDs: clGetDeviceIDs_fn,
    clGetDeviceInfo: clGetDeviceInfo_fn,
    clCreateContext: clCreateContext_fn,
    clCreateCommandQueue: clCreateCommandQueue_fn,
    clCreateProgramWithSource: clCreateProgramWithSource_fn,
    clBuildProgram: clBuildProgram_fn,
    clGetProgramBuildInfo: clGetProgramBuildInfo_fn,
    clCreateKernel: clCreateKernel_fn,
    clSetKernelArg: clSetKernelArg_fn,
    clCreateBuffer: clCreateBuffer_fn,
    clEnqueueWriteBuffer: clEnqueueWriteBuffer_fn,
    clEnqueueReadBuffer: clEnqueueReadBuffer_fn,
    clEnqueueNDRangeKernel: clEnqueueNDRangeKernel_fn,
    clFinish: clFinish_fn,
    clReleaseKernel: clReleaseKernel_fn,
    clReleaseProgram: clReleaseProgram_fn,
    clReleaseMemObject: clReleaseMemObject_fn,
    clReleaseCommandQueue: clReleaseCommandQueue_fn,
    clReleaseContext: clReleaseContext_fn,
}

/// Calls a loaded entry point (checked non-null at load time).
macro_rules! call {
    ($api:expr, $f:ident($($a:expr),* $(,)?)) => {
        ($api.$f.expect(stringify!($f)))($($a),*)
    };
}

fn check(what: &str, code: cl_int) -> Result<(), String> {
    if code == CL_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed: {code}"))
    }
}

/// A context and in-order queue on the chosen platform's first device.
pub struct Device {
    api: Api,
    pub platform_name: String,
    pub device_name: String,
    pub has_double: bool,
    /// A non-zero CL_DEVICE_HALF_FP_CONFIG: cl_khr_fp16.
    pub has_half: bool,
    /// CL_FP_DENORM is absent from the single-precision config: the CTS's flush-to-zero rules.
    pub ftz_f32: bool,
    /// CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in the single-precision config: float `/` and `sqrt`
    /// built with -cl-fp32-correctly-rounded-divide-sqrt are judged as correctly rounded.
    pub cr_divide_sqrt_f32: bool,
    device: cl_device_id,
    context: cl_context,
    queue: cl_command_queue,
}

/// Where the checker looks for the loader.
pub const LOADER: &str = "libOpenCL.so.1";

impl Device {
    /// Opens the loader and picks the first platform whose name contains `platform`
    /// (case-insensitive). The loader reads `OCL_ICD_VENDORS` (set by the caller) or, without
    /// it, the ICDs registered in `/etc/OpenCL/vendors`.
    pub fn open(platform: &str) -> Result<Device, String> {
        let api = Api::load(LOADER)?;
        // SAFETY (whole block): standard OpenCL calls with valid out-pointers sized as passed.
        unsafe {
            let mut n = 0;
            check(
                "clGetPlatformIDs",
                call!(api, clGetPlatformIDs(0, ptr::null_mut(), &mut n)),
            )?;
            let mut ids = vec![ptr::null_mut(); n as usize];
            check(
                "clGetPlatformIDs",
                call!(api, clGetPlatformIDs(n, ids.as_mut_ptr(), ptr::null_mut())),
            )?;
            let mut names = Vec::new();
            let mut chosen = None;
            for &id in &ids {
                let name = info_string(|size, p, ret| {
                    call!(api, clGetPlatformInfo(id, CL_PLATFORM_NAME, size, p, ret))
                })?;
                if chosen.is_none() && name.to_lowercase().contains(&platform.to_lowercase()) {
                    chosen = Some((id, name.clone()));
                }
                names.push(name);
            }
            let Some((pid, platform_name)) = chosen else {
                return Err(format!(
                    "no OpenCL platform named like {platform:?} (found: {names:?}); set OCL_ICD_VENDORS or use --icd"
                ));
            };
            let mut device = ptr::null_mut();
            check(
                "clGetDeviceIDs",
                call!(
                    api,
                    clGetDeviceIDs(pid, CL_DEVICE_TYPE_ALL, 1, &mut device, ptr::null_mut())
                ),
            )?;
            let device_name = info_string(|size, p, ret| {
                call!(api, clGetDeviceInfo(device, CL_DEVICE_NAME, size, p, ret))
            })?;
            let mut single: cl_device_fp_config = 0;
            let mut double: cl_device_fp_config = 0;
            check(
                "clGetDeviceInfo",
                call!(
                    api,
                    clGetDeviceInfo(
                        device,
                        CL_DEVICE_SINGLE_FP_CONFIG,
                        8,
                        &mut single as *mut _ as *mut c_void,
                        ptr::null_mut()
                    )
                ),
            )?;
            // A device without fp64 may reject the query: treat that as "no double".
            let _ = call!(
                api,
                clGetDeviceInfo(
                    device,
                    CL_DEVICE_DOUBLE_FP_CONFIG,
                    8,
                    &mut double as *mut _ as *mut c_void,
                    ptr::null_mut()
                )
            );
            let mut half: cl_device_fp_config = 0;
            let _ = call!(
                api,
                clGetDeviceInfo(
                    device,
                    CL_DEVICE_HALF_FP_CONFIG,
                    8,
                    &mut half as *mut _ as *mut c_void,
                    ptr::null_mut()
                )
            );
            let mut err = 0;
            let context = call!(
                api,
                clCreateContext(ptr::null(), 1, &device, None, ptr::null_mut(), &mut err)
            );
            check("clCreateContext", err)?;
            let queue = call!(api, clCreateCommandQueue(context, device, 0, &mut err));
            check("clCreateCommandQueue", err)?;
            Ok(Device {
                api,
                platform_name,
                device_name,
                has_double: double != 0,
                has_half: half != 0,
                ftz_f32: single & CL_FP_DENORM == 0,
                cr_divide_sqrt_f32: single & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0,
                device,
                context,
                queue,
            })
        }
    }

    /// Builds OpenCL C source; on failure the error carries the build log.
    pub fn program(&self, source: &str, options: &str) -> Result<Program<'_>, String> {
        let src = CString::new(source).map_err(|e| e.to_string())?;
        let opts = CString::new(options).map_err(|e| e.to_string())?;
        // SAFETY: valid strings and out-pointers; the program is released by Program's Drop.
        unsafe {
            let mut err = 0;
            let mut p = src.as_ptr();
            let program = call!(
                self.api,
                clCreateProgramWithSource(self.context, 1, &mut p, ptr::null(), &mut err)
            );
            check("clCreateProgramWithSource", err)?;
            let prog = Program { dev: self, program };
            let code = call!(
                self.api,
                clBuildProgram(
                    program,
                    1,
                    &self.device,
                    opts.as_ptr(),
                    None,
                    ptr::null_mut()
                )
            );
            if code != CL_SUCCESS {
                let log = info_string(|size, v, ret| {
                    call!(
                        self.api,
                        clGetProgramBuildInfo(
                            program,
                            self.device,
                            CL_PROGRAM_BUILD_LOG,
                            size,
                            v,
                            ret
                        )
                    )
                })
                .unwrap_or_default();
                return Err(format!("clBuildProgram failed ({code}): {}", log.trim()));
            }
            Ok(prog)
        }
    }

    /// A read-write buffer of `bytes` bytes.
    pub fn buffer(&self, bytes: usize) -> Result<Buffer<'_>, String> {
        let mut err = 0;
        // SAFETY: no host pointer; the buffer is released by Buffer's Drop.
        let mem = unsafe {
            call!(
                self.api,
                clCreateBuffer(
                    self.context,
                    CL_MEM_READ_WRITE,
                    bytes,
                    ptr::null_mut(),
                    &mut err
                )
            )
        };
        check("clCreateBuffer", err)?;
        Ok(Buffer {
            dev: self,
            mem,
            bytes,
        })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: handles created in open() and not released elsewhere.
        unsafe {
            call!(self.api, clReleaseCommandQueue(self.queue));
            call!(self.api, clReleaseContext(self.context));
        }
    }
}

/// Queries a string property with the usual size-then-value protocol.
unsafe fn info_string(
    mut q: impl FnMut(usize, *mut c_void, *mut usize) -> cl_int,
) -> Result<String, String> {
    let mut size = 0;
    check("info query", q(0, ptr::null_mut(), &mut size))?;
    let mut buf = vec![0u8; size];
    check(
        "info query",
        q(size, buf.as_mut_ptr().cast(), ptr::null_mut()),
    )?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

pub struct Buffer<'d> {
    dev: &'d Device,
    mem: cl_mem,
    bytes: usize,
}

impl Buffer<'_> {
    /// Blocking write of `data` (as bytes) at offset 0.
    pub fn write<T: Copy>(&self, data: &[T]) -> Result<(), String> {
        let bytes = std::mem::size_of_val(data);
        assert!(bytes <= self.bytes);
        // SAFETY: blocking write from a live slice of `bytes` bytes.
        check("clEnqueueWriteBuffer", unsafe {
            call!(
                self.dev.api,
                clEnqueueWriteBuffer(
                    self.dev.queue,
                    self.mem,
                    CL_TRUE,
                    0,
                    bytes,
                    data.as_ptr().cast(),
                    0,
                    ptr::null(),
                    ptr::null_mut()
                )
            )
        })
    }

    /// Blocking read into `data`.
    pub fn read<T: Copy>(&self, data: &mut [T]) -> Result<(), String> {
        let bytes = std::mem::size_of_val(data);
        assert!(bytes <= self.bytes);
        // SAFETY: blocking read into a live slice of `bytes` bytes.
        check("clEnqueueReadBuffer", unsafe {
            call!(
                self.dev.api,
                clEnqueueReadBuffer(
                    self.dev.queue,
                    self.mem,
                    CL_TRUE,
                    0,
                    bytes,
                    data.as_mut_ptr().cast(),
                    0,
                    ptr::null(),
                    ptr::null_mut()
                )
            )
        })
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        // SAFETY: created by Device::buffer, released once.
        unsafe { call!(self.dev.api, clReleaseMemObject(self.mem)) };
    }
}

pub struct Program<'d> {
    dev: &'d Device,
    program: cl_program,
}

impl Program<'_> {
    /// Runs kernel `name` over `global` work-items with the buffers as its arguments, in order,
    /// and waits for it.
    pub fn run(&self, name: &str, args: &[&Buffer<'_>], global: usize) -> Result<(), String> {
        let api = &self.dev.api;
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        // SAFETY: valid program and kernel handles; each argument is a cl_mem passed by address.
        unsafe {
            let mut err = 0;
            let k = call!(api, clCreateKernel(self.program, cname.as_ptr(), &mut err));
            check("clCreateKernel", err)?;
            let mut result = Ok(());
            for (i, b) in args.iter().enumerate() {
                let code = call!(
                    api,
                    clSetKernelArg(
                        k,
                        i as cl_uint,
                        std::mem::size_of::<cl_mem>(),
                        &b.mem as *const cl_mem as *const c_void
                    )
                );
                result = result.and(check("clSetKernelArg", code));
            }
            if result.is_ok() {
                let code = call!(
                    api,
                    clEnqueueNDRangeKernel(
                        self.dev.queue,
                        k,
                        1,
                        ptr::null(),
                        &global,
                        ptr::null(),
                        0,
                        ptr::null(),
                        ptr::null_mut()
                    )
                );
                result = check("clEnqueueNDRangeKernel", code)
                    .and_then(|_| check("clFinish", call!(api, clFinish(self.dev.queue))));
            }
            call!(api, clReleaseKernel(k));
            result
        }
    }
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: created by Device::program, released once.
        unsafe { call!(self.dev.api, clReleaseProgram(self.program)) };
    }
}
