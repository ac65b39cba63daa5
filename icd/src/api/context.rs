//! Context entry points: creation from devices or a type, properties, info, destructor
//! callbacks, retain/release.
#![allow(non_snake_case)]

use std::ffi::{c_char, c_void};

use ferrocl_runtime::context::Context;
use ferrocl_runtime::platform::{platform, Platform};
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;

use super::platform::device_list;
use crate::util::*;

type Notify = Option<unsafe extern "C" fn(*const c_char, *const c_void, usize, *mut c_void)>;

const MEMORY_INITIALIZE: cl_context_properties =
    CL_CONTEXT_MEMORY_INITIALIZE_KHR as cl_context_properties;
const TERMINATE: cl_context_properties = CL_CONTEXT_TERMINATE_KHR as cl_context_properties;
const TERMINATE_1X: cl_context_properties =
    ferrocl_runtime::config::CL_CONTEXT_TERMINATE_KHR_1X as cl_context_properties;

/// Checks the context property list (CL_CONTEXT_PLATFORM must name our platform; each key at
/// most once) and returns the raw list for CL_CONTEXT_PROPERTIES.
unsafe fn context_properties(
    p: *const cl_context_properties,
) -> CLResult<Vec<cl_context_properties>> {
    // SAFETY: zero-terminated list (caller contract).
    let (pairs, raw) = unsafe { properties(p) };
    let mut seen = Vec::new();
    for (k, val) in pairs {
        // The 1.2 headers' key for the same property: both at once is a duplicate.
        let k = if k == TERMINATE_1X { TERMINATE } else { k };
        if seen.contains(&k) {
            return Err(CL_INVALID_PROPERTY);
        }
        seen.push(k);
        match k {
            CL_CONTEXT_PLATFORM => {
                // SAFETY: handle check.
                let pl = unsafe { obj::<Platform>(val as *mut c_void) }
                    .map_err(|_| CL_INVALID_PLATFORM)?;
                if !pl.is(platform()) {
                    return Err(CL_INVALID_PLATFORM);
                }
            }
            CL_CONTEXT_INTEROP_USER_SYNC => {
                if val != CL_TRUE as isize && val != CL_FALSE as isize {
                    return Err(CL_INVALID_PROPERTY);
                }
            }
            // cl_khr_initialize_memory: a bit-field of the memory to zero.
            MEMORY_INITIALIZE => {
                let known = CL_CONTEXT_MEMORY_INITIALIZE_LOCAL_KHR
                    | CL_CONTEXT_MEMORY_INITIALIZE_PRIVATE_KHR;
                if val as cl_context_memory_initialize_khr & !known != 0 {
                    return Err(CL_INVALID_PROPERTY);
                }
            }
            // cl_khr_terminate_context: every device can be terminated
            // (CL_DEVICE_TERMINATE_CAPABILITY_CONTEXT_KHR), so CL_TRUE is never refused for
            // the devices.
            TERMINATE => {
                if val != CL_TRUE as isize && val != CL_FALSE as isize {
                    return Err(CL_INVALID_PROPERTY);
                }
            }
            _ => return Err(CL_INVALID_PROPERTY),
        }
    }
    Ok(raw)
}

pub unsafe extern "C" fn clCreateContext(
    properties: *const cl_context_properties,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    pfn_notify: Notify,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            let props = context_properties(properties)?;
            if pfn_notify.is_none() && !user_data.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let devs = device_list(num_devices, devices)?;
            // No asynchronous errors are ever reported, so pfn_notify is never called.
            Ok(new_handle(Context::new(devs, props)))
        })
    }
}

pub unsafe extern "C" fn clCreateContextFromType(
    properties: *const cl_context_properties,
    device_type: cl_device_type,
    pfn_notify: Notify,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            let props = context_properties(properties)?;
            if pfn_notify.is_none() && !user_data.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let mut n = 0;
            let mut d = std::ptr::null_mut();
            let r = super::platform::clGetDeviceIDs(
                std::ptr::null_mut(),
                device_type,
                1,
                &mut d,
                &mut n,
            );
            if r != CL_SUCCESS {
                return Err(r);
            }
            let devs = device_list(n, &d)?;
            Ok(new_handle(Context::new(devs, props)))
        })
    }
}

pub unsafe extern "C" fn clRetainContext(context: cl_context) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { retain::<Context>(context) })
}

pub unsafe extern "C" fn clReleaseContext(context: cl_context) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { release::<Context>(context) })
}

pub unsafe extern "C" fn clGetContextInfo(
    context: cl_context,
    param_name: cl_context_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let c = obj::<Context>(context)?;
            let val = match param_name {
                CL_CONTEXT_REFERENCE_COUNT => Ok(v(c.base().ref_count())),
                CL_CONTEXT_NUM_DEVICES => Ok(v(c.devices.len() as cl_uint)),
                CL_CONTEXT_DEVICES => Ok(arr(&c
                    .devices
                    .iter()
                    .map(|d| handle(&**d))
                    .collect::<Vec<_>>())),
                CL_CONTEXT_PROPERTIES => Ok(arr(&c.properties)),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clSetContextDestructorCallback(
    context: cl_context,
    pfn_notify: Option<unsafe extern "C" fn(cl_context, *mut c_void)>,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let c = unsafe { obj::<Context>(context)? };
        let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        // Only queries, retain and release remain for a terminated context (API spec 3.1
        // §4.4, clTerminateContextKHR).
        c.check_live()?;
        c.add_destructor(f, user_data as usize)
    })
}

/// `cl_khr_terminate_context` (API spec 3.1 §4.4): ends the context's commands at once —
/// their events end with `CL_CONTEXT_TERMINATED_KHR`, running kernels leave their loops — and
/// refuses what would create objects or enqueue commands in it from now on (runtime's
/// termination.rs).
pub unsafe extern "C" fn clTerminateContextKHR(context: cl_context) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let c = unsafe { obj::<Context>(context)? };
        c.termination
            .as_ref()
            .ok_or(CL_INVALID_OPERATION)?
            .terminate()
    })
}
