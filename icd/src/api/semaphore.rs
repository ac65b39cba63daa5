//! `cl_khr_semaphore` entry points (API spec 3.1 §5.15), reached through
//! `clGetExtensionFunctionAddressForPlatform`: creation from properties, the signal and wait
//! commands, the queries, retain and release; and `clGetSemaphoreHandleForTypeKHR` of
//! `cl_khr_external_semaphore`, which the device does not report: no semaphore here has an
//! export handle type, so it validates and answers that error. The semaphore and how signals
//! meet waits are the runtime's (`semaphore.rs`).
#![allow(non_snake_case)]

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_runtime::context::Context;
use ferrocl_runtime::platform::Device;
use ferrocl_runtime::queue::Queue;
use ferrocl_runtime::semaphore::Semaphore;
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;

use crate::util::*;

/// The names this module answers for in `clGetExtensionFunctionAddress*`.
pub fn extension_function(name: &[u8]) -> Option<*mut c_void> {
    Some(match name {
        b"clCreateSemaphoreWithPropertiesKHR" => clCreateSemaphoreWithPropertiesKHR as *mut c_void,
        b"clEnqueueWaitSemaphoresKHR" => clEnqueueWaitSemaphoresKHR as *mut c_void,
        b"clEnqueueSignalSemaphoresKHR" => clEnqueueSignalSemaphoresKHR as *mut c_void,
        b"clGetSemaphoreInfoKHR" => clGetSemaphoreInfoKHR as *mut c_void,
        b"clRetainSemaphoreKHR" => clRetainSemaphoreKHR as *mut c_void,
        b"clReleaseSemaphoreKHR" => clReleaseSemaphoreKHR as *mut c_void,
        b"clGetSemaphoreHandleForTypeKHR" => clGetSemaphoreHandleForTypeKHR as *mut c_void,
        _ => return None,
    })
}

const TYPE: cl_semaphore_properties_khr = CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr;
const DEVICE_LIST: cl_semaphore_properties_khr =
    CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR as cl_semaphore_properties_khr;
const BINARY: cl_semaphore_properties_khr =
    CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr;

/// The creation properties: the device the list names (None without a list) and the list as
/// given, terminator included. A device list runs to its own 0 terminator, so a name is
/// judged before its value is read: an unknown or repeated name ends the walk.
///
/// # Safety
/// `list` is NULL or a property list terminated as the extension describes.
unsafe fn semaphore_properties(
    list: *const cl_semaphore_properties_khr,
) -> CLResult<(Option<Arc<Device>>, Vec<cl_semaphore_properties_khr>)> {
    if list.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let mut raw = Vec::new();
    let mut next = || {
        // SAFETY: every entry read is before the list's terminator (caller contract).
        let v = unsafe { *list.add(raw.len()) };
        raw.push(v);
        v
    };
    let (mut binary, mut device, mut listed) = (false, None, false);
    loop {
        match next() {
            0 => break,
            TYPE if !binary => {
                if next() != BINARY {
                    return Err(CL_INVALID_PROPERTY);
                }
                binary = true;
            }
            DEVICE_LIST if !listed => {
                listed = true;
                let mut devices = Vec::new();
                loop {
                    match next() {
                        0 => break,
                        d => devices.push(d),
                    }
                }
                // Exactly one valid device (it must also be the context's: `Semaphore::new`).
                let [d] = devices[..] else {
                    return Err(CL_INVALID_DEVICE);
                };
                // SAFETY: handle check.
                device = Some(
                    unsafe { arc::<Device>(d as cl_device_id) }.map_err(|_| CL_INVALID_DEVICE)?,
                );
            }
            // Export handle types (cl_khr_external_semaphore) and the rest: not supported.
            _ => return Err(CL_INVALID_PROPERTY),
        }
    }
    if !binary {
        return Err(CL_INVALID_VALUE);
    }
    Ok((device, raw))
}

pub unsafe extern "C" fn clCreateSemaphoreWithPropertiesKHR(
    context: cl_context,
    sema_props: *const cl_semaphore_properties_khr,
    errcode_ret: *mut cl_int,
) -> cl_semaphore_khr {
    // SAFETY: handle checks and API contract.
    unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            let (device, properties) = semaphore_properties(sema_props)?;
            Ok(new_handle(Semaphore::new(ctx, device, properties)?))
        })
    }
}

/// The semaphores of a signal or wait on `q`, checked as both commands' error lists say.
///
/// # Safety
/// `list` is NULL or readable for `n` handles.
unsafe fn queue_semaphores(
    q: &Queue,
    n: cl_uint,
    list: *const cl_semaphore_khr,
) -> CLResult<Vec<Arc<Semaphore>>> {
    if n == 0 || list.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: readable for n handles (caller contract).
    let handles = unsafe { slice(list, n as usize) };
    let mut out = Vec::with_capacity(handles.len());
    for &h in handles {
        // SAFETY: handle check.
        let s = unsafe { arc::<Semaphore>(h) }?;
        if !Arc::ptr_eq(&s.context, &q.context) {
            return Err(CL_INVALID_CONTEXT);
        }
        if !s.is_for(&q.device) {
            return Err(CL_INVALID_COMMAND_QUEUE);
        }
        out.push(s);
    }
    // Binary semaphores take no payload, so the payload list is never read.
    Ok(out)
}

/// `clEnqueueSignalSemaphoresKHR` (`signal`) and `clEnqueueWaitSemaphoresKHR`, which take the
/// same arguments and have the same errors: among them CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
/// at once for an event of the wait list that has already failed.
///
/// # Safety
/// The pointers as the extension gives them.
unsafe fn enqueue(
    signal: bool,
    command_queue: cl_command_queue,
    (num_sema_objects, sema_objects): (cl_uint, *const cl_semaphore_khr),
    (num_events, events, event): (cl_uint, *const cl_event, *mut cl_event),
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = arc::<Queue>(command_queue)?;
            let semaphores = queue_semaphores(&q, num_sema_objects, sema_objects)?;
            let wait = wait_list(num_events, events, &q.context)?;
            if wait.iter().any(|e| e.status() < 0) {
                return Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
            }
            let e = if signal {
                Semaphore::enqueue_signal(&q, semaphores, wait)?
            } else {
                Semaphore::enqueue_wait(&q, semaphores, wait)?
            };
            out_event(event, e);
            Ok(())
        }
    })
}

pub unsafe extern "C" fn clEnqueueWaitSemaphoresKHR(
    command_queue: cl_command_queue,
    num_sema_objects: cl_uint,
    sema_objects: *const cl_semaphore_khr,
    _sema_payload_list: *const cl_semaphore_payload_khr,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: API contract.
    unsafe {
        enqueue(
            false,
            command_queue,
            (num_sema_objects, sema_objects),
            (num_events_in_wait_list, event_wait_list, event),
        )
    }
}

pub unsafe extern "C" fn clEnqueueSignalSemaphoresKHR(
    command_queue: cl_command_queue,
    num_sema_objects: cl_uint,
    sema_objects: *const cl_semaphore_khr,
    _sema_payload_list: *const cl_semaphore_payload_khr,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: API contract.
    unsafe {
        enqueue(
            true,
            command_queue,
            (num_sema_objects, sema_objects),
            (num_events_in_wait_list, event_wait_list, event),
        )
    }
}

pub unsafe extern "C" fn clGetSemaphoreInfoKHR(
    sema_object: cl_semaphore_khr,
    param_name: cl_semaphore_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let s = obj::<Semaphore>(sema_object)?;
            let val = match param_name {
                CL_SEMAPHORE_CONTEXT_KHR => Ok(v(handle(&*s.context))),
                CL_SEMAPHORE_REFERENCE_COUNT_KHR => Ok(v(s.base().ref_count())),
                CL_SEMAPHORE_PROPERTIES_KHR => Ok(arr(&s.properties)),
                CL_SEMAPHORE_TYPE_KHR => Ok(v(CL_SEMAPHORE_TYPE_BINARY_KHR)),
                CL_SEMAPHORE_PAYLOAD_KHR => Ok(v(s.payload())),
                CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR => {
                    let devices: Vec<cl_device_id> =
                        s.devices.iter().map(|d| handle(&**d)).collect();
                    Ok(arr(&devices))
                }
                // cl_khr_external_semaphore's queries: nothing to export.
                CL_SEMAPHORE_EXPORTABLE_KHR => Ok(b(false)),
                CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR_QUERY => Ok(Vec::new()),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

/// `CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR` as a `clGetSemaphoreInfoKHR` query: the header
/// gives it the property type, the query the info type.
const CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR_QUERY: cl_semaphore_info_khr =
    CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR as cl_semaphore_info_khr;

pub unsafe extern "C" fn clRetainSemaphoreKHR(sema_object: cl_semaphore_khr) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { retain::<Semaphore>(sema_object) })
}

pub unsafe extern "C" fn clReleaseSemaphoreKHR(sema_object: cl_semaphore_khr) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { release::<Semaphore>(sema_object) })
}

pub unsafe extern "C" fn clGetSemaphoreHandleForTypeKHR(
    sema_object: cl_semaphore_khr,
    device: cl_device_id,
    _handle_type: cl_external_semaphore_handle_type_khr,
    _handle_size: usize,
    _handle_ptr: *mut c_void,
    _handle_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks.
        unsafe {
            let s = obj::<Semaphore>(sema_object)?;
            let d = obj::<Device>(device).map_err(|_| CL_INVALID_DEVICE)?;
            if !s.is_for(d) {
                return Err(CL_INVALID_DEVICE);
            }
            // No handle type is in the semaphore's export list (there are none to ask for at
            // creation), which the extension answers with CL_INVALID_VALUE.
            Err(CL_INVALID_VALUE)
        }
    })
}
