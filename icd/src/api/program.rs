//! Program entry points: creation from IL, OpenCL C source or a binary (our SPIR-V), build,
//! compile and link, program and build info.
#![allow(non_snake_case, clippy::too_many_arguments)]

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use ferrocl_runtime::context::Context;
use ferrocl_runtime::platform::Device;
use ferrocl_runtime::program::{BuildOutcome, Program, Source};
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;

use crate::util::*;

type BuildNotify = Option<unsafe extern "C" fn(cl_program, *mut c_void)>;

pub unsafe extern "C" fn clCreateProgramWithIL(
    context: cl_context,
    il: *const c_void,
    length: usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    // SAFETY: handle check; `il` readable for `length` bytes (API contract).
    unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            if il.is_null() || length == 0 {
                return Err(CL_INVALID_VALUE);
            }
            let bytes = slice(il as *const u8, length).to_vec();
            ferrocl_runtime::frontend::is_spirv(&bytes).map_err(|_| CL_INVALID_VALUE)?;
            Ok(new_handle(Program::new(ctx, Source::Il(bytes))))
        })
    }
}

pub unsafe extern "C" fn clCreateProgramWithSource(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    // SAFETY: handle check; strings/lengths per the API contract.
    unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            if count == 0 || strings.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let mut src = Vec::new();
            for i in 0..count as usize {
                let p = *strings.add(i);
                if p.is_null() {
                    return Err(CL_INVALID_VALUE);
                }
                let len = if lengths.is_null() {
                    0
                } else {
                    *lengths.add(i)
                };
                if len == 0 {
                    src.extend_from_slice(CStr::from_ptr(p).to_bytes());
                } else {
                    src.extend_from_slice(slice(p as *const u8, len));
                }
            }
            let text = String::from_utf8_lossy(&src).into_owned();
            Ok(new_handle(Program::new(ctx, Source::OpenClC(text))))
        })
    }
}

/// Checks a device list given to a program call against the program's context.
unsafe fn check_devices(ctx: &Context, n: cl_uint, list: *const cl_device_id) -> CLResult<()> {
    if (n == 0) != list.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: readable for n handles (caller contract).
    for &d in unsafe { slice(list, n as usize) } {
        // SAFETY: handle check.
        let d = unsafe { obj::<Device>(d)? };
        if !ctx.has_device(d) {
            return Err(CL_INVALID_DEVICE);
        }
    }
    Ok(())
}

pub unsafe extern "C" fn clCreateProgramWithBinary(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const u8,
    binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    // SAFETY: handle checks; arrays of num_devices entries (API contract).
    unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            if num_devices == 0 || device_list.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            check_devices(&ctx, num_devices, device_list)?;
            if lengths.is_null() || binaries.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let mut chosen = None;
            let mut result = Ok(());
            for i in 0..num_devices as usize {
                let (len, p) = (*lengths.add(i), *binaries.add(i));
                if len == 0 || p.is_null() {
                    return Err(CL_INVALID_VALUE);
                }
                let bytes = slice(p, len).to_vec();
                let st = if ferrocl_runtime::frontend::is_spirv(&bytes).is_ok() {
                    chosen = Some(bytes);
                    CL_SUCCESS
                } else {
                    result = Err(CL_INVALID_BINARY);
                    CL_INVALID_BINARY
                };
                if !binary_status.is_null() {
                    *binary_status.add(i) = st;
                }
            }
            result?;
            let bytes = chosen.ok_or(CL_INVALID_BINARY)?;
            Ok(new_handle(Program::new(ctx, Source::Binary(bytes))))
        })
    }
}

pub unsafe extern "C" fn clRetainProgram(program: cl_program) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { retain::<Program>(program) })
}

pub unsafe extern "C" fn clReleaseProgram(program: cl_program) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { release::<Program>(program) })
}

unsafe fn options_str<'a>(options: *const c_char) -> CLResult<&'a str> {
    if options.is_null() {
        return Ok("");
    }
    // SAFETY: NUL-terminated (API contract).
    unsafe { CStr::from_ptr(options) }
        .to_str()
        .map_err(|_| CL_INVALID_BUILD_OPTIONS)
}

fn notify(f: BuildNotify, p: &Program, user_data: *mut c_void) {
    if let Some(f) = f {
        // SAFETY: the application's callback, called once the build finished (synchronously,
        // which the spec allows).
        unsafe { f(handle(p), user_data) };
    }
}

pub unsafe extern "C" fn clBuildProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let p = obj::<Program>(program)?;
            p.context.check_live()?;
            check_devices(&p.context, num_devices, device_list)?;
            if pfn_notify.is_none() && !user_data.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let opts = options_str(options)?;
            if matches!(p.source, Source::Linked) {
                return Err(CL_INVALID_BINARY);
            }
            let r = p.build(opts);
            notify(pfn_notify, p, user_data);
            match r? {
                BuildOutcome::Ok => Ok(()),
                BuildOutcome::Failed => Err(CL_BUILD_PROGRAM_FAILURE),
                BuildOutcome::OutOfHostMemory => Err(CL_OUT_OF_HOST_MEMORY),
            }
        }
    })
}

pub unsafe extern "C" fn clCompileProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *mut *const c_char,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let p = obj::<Program>(program)?;
            p.context.check_live()?;
            check_devices(&p.context, num_devices, device_list)?;
            if pfn_notify.is_none() && !user_data.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            if (num_input_headers == 0) != input_headers.is_null()
                || (num_input_headers == 0) != header_include_names.is_null()
            {
                return Err(CL_INVALID_VALUE);
            }
            let mut headers = Vec::new();
            for i in 0..num_input_headers as usize {
                let h = obj::<Program>(*input_headers.add(i))?;
                // A header program of another context (API spec 3.1 §5.8.5, clCompileProgram).
                if !Arc::ptr_eq(&h.context, &p.context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                let name = *header_include_names.add(i);
                if name.is_null() {
                    return Err(CL_INVALID_VALUE);
                }
                let text = h.source_text().ok_or(CL_INVALID_OPERATION)?;
                headers.push((
                    CStr::from_ptr(name).to_string_lossy().into_owned(),
                    text.as_bytes().to_vec(),
                ));
            }
            if !matches!(p.source, Source::OpenClC(_) | Source::Il(_)) {
                return Err(CL_INVALID_OPERATION);
            }
            let opts = options_str(options)?;
            let r = p.compile(opts, &headers);
            notify(pfn_notify, p, user_data);
            match r? {
                BuildOutcome::Ok => Ok(()),
                BuildOutcome::Failed => Err(CL_COMPILE_PROGRAM_FAILURE),
                BuildOutcome::OutOfHostMemory => Err(CL_OUT_OF_HOST_MEMORY),
            }
        }
    })
}

pub unsafe extern "C" fn clLinkProgram(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    init();
    let mut outcome = None;
    // SAFETY: handle checks; pointers per the API contract.
    let p = unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            check_devices(&ctx, num_devices, device_list)?;
            if pfn_notify.is_none() && !user_data.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            if num_input_programs == 0 || input_programs.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let inputs = slice(input_programs, num_input_programs as usize)
                .iter()
                .map(|&p| arc::<Program>(p))
                .collect::<CLResult<Vec<_>>>()?;
            if inputs.iter().any(|p| !Arc::ptr_eq(&p.context, &ctx)) {
                return Err(CL_INVALID_CONTEXT);
            }
            let opts = options_str(options)?;
            let (prog, o) = Program::link(ctx, &inputs, opts)?;
            // Only a failed link returns its program; this error drops it, before the
            // callback could see it.
            if o == BuildOutcome::OutOfHostMemory {
                return Err(CL_OUT_OF_HOST_MEMORY);
            }
            notify(pfn_notify, &prog, user_data);
            outcome = Some(o);
            Ok(new_handle(prog))
        })
    };
    // A failed link still returns the program (its log says why) with CL_LINK_PROGRAM_FAILURE.
    if outcome == Some(BuildOutcome::Failed) && !errcode_ret.is_null() {
        // SAFETY: writable (API contract).
        unsafe { *errcode_ret = CL_LINK_PROGRAM_FAILURE };
    }
    p
}

pub unsafe extern "C" fn clGetProgramInfo(
    program: cl_program,
    param_name: cl_program_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let p = obj::<Program>(program)?;
            let executable = || p.built().ok_or(CL_INVALID_PROGRAM_EXECUTABLE);
            let val = match param_name {
                CL_PROGRAM_REFERENCE_COUNT => Ok(v(p.base().ref_count())),
                CL_PROGRAM_CONTEXT => Ok(v(handle(&*p.context))),
                CL_PROGRAM_NUM_DEVICES => Ok(v(p.context.devices.len() as cl_uint)),
                CL_PROGRAM_DEVICES => Ok(arr(&p
                    .context
                    .devices
                    .iter()
                    .map(|d| handle(&**d))
                    .collect::<Vec<_>>())),
                // IL and binary programs have no source: an empty string.
                CL_PROGRAM_SOURCE => Ok(s(p.source_text().unwrap_or(""))),
                CL_PROGRAM_IL => Ok(p.il().map(<[u8]>::to_vec).unwrap_or_default()),
                CL_PROGRAM_BINARY_SIZES => {
                    Ok(arr(&vec![p.binary().len(); p.context.devices.len()]))
                }
                CL_PROGRAM_BINARIES => {
                    // An array of application-owned pointers, one per device.
                    let n = p.context.devices.len();
                    let need = n * std::mem::size_of::<*mut u8>();
                    if !param_value.is_null() {
                        if param_value_size < need {
                            return Err(CL_INVALID_VALUE);
                        }
                        let bin = p.binary();
                        for i in 0..n {
                            let dst = *(param_value as *const *mut u8).add(i);
                            if !dst.is_null() {
                                std::ptr::copy_nonoverlapping(bin.as_ptr(), dst, bin.len());
                            }
                        }
                    }
                    if !param_value_size_ret.is_null() {
                        *param_value_size_ret = need;
                    }
                    return Ok(());
                }
                // Without the kernels that run blocks (device-side enqueue).
                CL_PROGRAM_NUM_KERNELS => executable().map(|b| {
                    v(b.code
                        .kernels()
                        .iter()
                        .filter(|k| !k.info.block_invoke)
                        .count())
                }),
                CL_PROGRAM_KERNEL_NAMES => executable().map(|b| {
                    s(&b.code
                        .kernels()
                        .iter()
                        .filter(|k| !k.info.block_invoke)
                        .map(|k| k.info.name.as_str())
                        .collect::<Vec<_>>()
                        .join(";"))
                }),
                CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT | CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT => {
                    Ok(b(false))
                }
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clGetProgramBuildInfo(
    program: cl_program,
    device: cl_device_id,
    param_name: cl_program_build_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; outputs per the API contract.
        unsafe {
            let p = obj::<Program>(program)?;
            let d = obj::<Device>(device)?;
            if !p.context.has_device(d) {
                return Err(CL_INVALID_DEVICE);
            }
            let val = match param_name {
                CL_PROGRAM_BUILD_STATUS => Ok(v(p.build_status())),
                CL_PROGRAM_BUILD_OPTIONS => Ok(s(&p.build_options())),
                CL_PROGRAM_BUILD_LOG => Ok(s(&p.build_log())),
                CL_PROGRAM_BINARY_TYPE => Ok(v(p.binary_type())),
                CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => Ok(v(p
                    .built()
                    .map_or(0, |b| b.code.global_variable_bytes as usize))),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clSetProgramSpecializationConstant(
    program: cl_program,
    spec_id: cl_uint,
    spec_size: usize,
    spec_value: *const c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; spec_value readable for spec_size bytes (API contract).
        unsafe {
            let p = obj::<Program>(program)?;
            if spec_value.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            p.set_spec_constant(spec_id, slice(spec_value.cast::<u8>(), spec_size))
        }
    })
}
