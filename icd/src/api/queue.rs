//! Command queue and event entry points: queue creation and info, flush/finish, markers and
//! barriers, events (wait, info, profiling, user events, callbacks).
#![allow(non_snake_case)]

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_runtime::command::Command;
use ferrocl_runtime::context::Context;
use ferrocl_runtime::device_queue::{Created, DeviceQueue};
use ferrocl_runtime::event::{wait_all, Event};
use ferrocl_runtime::executor::{JobHints, Priority, Throttle};
use ferrocl_runtime::platform::Device;
use ferrocl_runtime::queue::Queue;
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;

use crate::util::*;

/// Enqueues `work`; blocking commands wait for it and report a failed wait list.
///
/// # Safety
/// `event` is NULL or writable.
pub unsafe fn submit(
    q: &Arc<Queue>,
    command: Command,
    wait: Vec<Arc<Event>>,
    blocking: bool,
    event: *mut cl_event,
) -> CLResult<()> {
    let e = q.submit(command, wait)?;
    // SAFETY: caller contract.
    unsafe { out_event(event, e.clone()) };
    if blocking && e.wait() < 0 {
        return Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    }
    Ok(())
}

/// A host queue, or with `CL_QUEUE_ON_DEVICE` in `props` a device queue (`size` its
/// `CL_QUEUE_SIZE` if given).
unsafe fn new_queue(
    context: cl_context,
    device: cl_device_id,
    props: cl_command_queue_properties,
    raw: Vec<cl_queue_properties>,
    hints: QueueHints,
    size: Option<u64>,
) -> CLResult<cl_command_queue> {
    // SAFETY: handle checks.
    let (c, d) = unsafe { (arc::<Context>(context)?, arc::<Device>(device)?) };
    c.check_live()?;
    if !c.has_device(&d) {
        return Err(CL_INVALID_DEVICE);
    }
    let known = (CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        as cl_command_queue_properties;
    let on_device = CL_QUEUE_ON_DEVICE as cl_command_queue_properties;
    let default = CL_QUEUE_ON_DEVICE_DEFAULT as cl_command_queue_properties;
    if props & !(known | on_device | default) != 0 {
        return Err(CL_INVALID_VALUE);
    }
    if props & on_device != 0 {
        return Ok(match DeviceQueue::create(&c, &d, props, raw, size)? {
            Created::New(q) => new_handle(q),
            // Its reference count was incremented for the caller.
            Created::ExistingDefault(q) => handle(&*q),
        });
    }
    // CL_QUEUE_ON_DEVICE_DEFAULT and CL_QUEUE_SIZE only go with CL_QUEUE_ON_DEVICE.
    if props & default != 0 || size.is_some() {
        return Err(CL_INVALID_VALUE);
    }
    let job_hints = hints.for_device(&d);
    Ok(new_handle(Queue::new(c, d, props, raw, job_hints)?))
}

pub unsafe extern "C" fn clCreateCommandQueue(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            // Device queues are made by clCreateCommandQueueWithProperties only.
            let device_bits =
                (CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT) as cl_command_queue_properties;
            if properties & device_bits != 0 {
                return Err(CL_INVALID_VALUE);
            }
            new_queue(
                context,
                device,
                properties,
                Vec::new(),
                QueueHints::default(),
                None,
            )
        })
    }
}

pub unsafe extern "C" fn clCreateCommandQueueWithProperties(
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            let (pairs, raw) = properties_list(properties);
            let mut props = 0;
            let mut hints = QueueHints::default();
            let mut size = None;
            let mut seen = Vec::new();
            for (k, val) in pairs {
                if seen.contains(&k) {
                    return Err(CL_INVALID_VALUE);
                }
                seen.push(k);
                match k {
                    k if k == CL_QUEUE_PROPERTIES as cl_queue_properties => {
                        props = val as cl_command_queue_properties
                    }
                    k if k == CL_QUEUE_SIZE as cl_queue_properties => size = Some(val),
                    CL_QUEUE_PRIORITY_KHR => {
                        hints.priority = match cl_uint::try_from(val).unwrap_or(0) {
                            CL_QUEUE_PRIORITY_HIGH_KHR => Priority::High,
                            CL_QUEUE_PRIORITY_MED_KHR => Priority::Medium,
                            CL_QUEUE_PRIORITY_LOW_KHR => Priority::Low,
                            _ => return Err(CL_INVALID_VALUE),
                        }
                    }
                    CL_QUEUE_THROTTLE_KHR => {
                        hints.throttle = match cl_uint::try_from(val).unwrap_or(0) {
                            CL_QUEUE_THROTTLE_HIGH_KHR => Throttle::High,
                            CL_QUEUE_THROTTLE_MED_KHR => Throttle::Medium,
                            CL_QUEUE_THROTTLE_LOW_KHR => Throttle::Low,
                            _ => return Err(CL_INVALID_VALUE),
                        }
                    }
                    _ => return Err(CL_INVALID_VALUE),
                }
            }
            // Priority and throttle hints are for host queues only (cl_khr_priority_hints,
            // cl_khr_throttle_hints).
            let on_device =
                (CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT) as cl_command_queue_properties;
            if hints != QueueHints::default() && props & on_device != 0 {
                return Err(CL_INVALID_QUEUE_PROPERTIES);
            }
            new_queue(context, device, props, raw, hints, size)
        })
    }
}

/// The hint properties of clCreateCommandQueueWithProperties.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct QueueHints {
    priority: Priority,
    throttle: Throttle,
}

impl QueueHints {
    fn for_device(self, device: &Device) -> JobHints {
        JobHints::new(self.priority, self.throttle, device.pool.threads())
    }
}

unsafe fn properties_list(
    p: *const cl_queue_properties,
) -> (
    Vec<(cl_queue_properties, cl_queue_properties)>,
    Vec<cl_queue_properties>,
) {
    // SAFETY: zero-terminated (caller contract).
    unsafe { properties(p) }
}

/// Whether `q` is a device queue (a handle of ours with that tag), not a host queue.
///
/// # Safety
/// As [`obj`].
unsafe fn is_device_queue(q: cl_command_queue) -> bool {
    // SAFETY: caller contract.
    unsafe { obj::<DeviceQueue>(q).is_ok() }
}

pub unsafe extern "C" fn clRetainCommandQueue(q: cl_command_queue) -> cl_int {
    // SAFETY: handle checks.
    status(|| unsafe {
        if is_device_queue(q) {
            retain::<DeviceQueue>(q)
        } else {
            retain::<Queue>(q)
        }
    })
}

pub unsafe extern "C" fn clReleaseCommandQueue(q: cl_command_queue) -> cl_int {
    // Every enqueue is already flushed; pending commands keep running (they hold their own
    // references) as the spec's implicit flush requires. A device queue's commands belong to
    // the launches that enqueued them, which hold it.
    // SAFETY: handle checks.
    status(|| unsafe {
        if is_device_queue(q) {
            release::<DeviceQueue>(q)
        } else {
            release::<Queue>(q)
        }
    })
}

/// `clSetDefaultDeviceCommandQueue`: a device queue of `device` in `context` becomes its
/// default device queue (`get_default_queue`, `CL_QUEUE_DEVICE_DEFAULT`).
pub unsafe extern "C" fn clSetDefaultDeviceCommandQueue(
    context: cl_context,
    device: cl_device_id,
    command_queue: cl_command_queue,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks.
        unsafe {
            let c = obj::<Context>(context)?;
            let d = arc::<Device>(device)?;
            if !c.has_device(&d) {
                return Err(CL_INVALID_DEVICE);
            }
            let replaceable = d
                .config
                .device_queues
                .is_some_and(|l| l.capabilities & CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT != 0);
            if !replaceable {
                return Err(CL_INVALID_OPERATION);
            }
            arc::<DeviceQueue>(command_queue)?.make_default(c, &d)
        }
    })
}

pub unsafe extern "C" fn clGetCommandQueueInfo(
    q: cl_command_queue,
    param_name: cl_command_queue_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            if is_device_queue(q) {
                let q = obj::<DeviceQueue>(q)?;
                let val = queue_info(
                    param_name,
                    (&q.context, &q.device, q.base().ref_count()),
                    q.properties,
                    &q.properties_array,
                    Some(q.size),
                );
                return write_info(val, param_value_size, param_value, param_value_size_ret);
            }
            let q = obj::<Queue>(q)?;
            let val = queue_info(
                param_name,
                (&q.context, &q.device, q.base().ref_count()),
                q.properties,
                &q.properties_array,
                None,
            );
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

/// The `clGetCommandQueueInfo` answers of a host queue, or of a device queue (`size` its
/// `CL_QUEUE_SIZE`; a host queue has none).
fn queue_info(
    param_name: cl_command_queue_info,
    (context, device, refs): (&Context, &Device, cl_uint),
    properties: cl_command_queue_properties,
    properties_array: &[cl_queue_properties],
    size: Option<u32>,
) -> CLResult<Vec<u8>> {
    match param_name {
        CL_QUEUE_CONTEXT => Ok(v(handle(context))),
        CL_QUEUE_DEVICE => Ok(v(handle(device))),
        CL_QUEUE_REFERENCE_COUNT => Ok(v(refs)),
        CL_QUEUE_PROPERTIES => Ok(v(properties)),
        CL_QUEUE_PROPERTIES_ARRAY => Ok(arr(properties_array)),
        // Only a device queue has a size.
        CL_QUEUE_SIZE => size.map(v).ok_or(CL_INVALID_COMMAND_QUEUE),
        // The current default device queue of the device (NULL if none).
        CL_QUEUE_DEVICE_DEFAULT => Ok(v(context
            .device_queues
            .default_of(device)
            .map_or(std::ptr::null_mut(), |q| handle(&*q)))),
        _ => Err(CL_INVALID_VALUE),
    }
}

pub unsafe extern "C" fn clFlush(q: cl_command_queue) -> cl_int {
    // Commands are submitted to the worker as they are enqueued.
    // SAFETY: handle check.
    status(|| unsafe { obj::<Queue>(q).map(|_| ()) })
}

pub unsafe extern "C" fn clFinish(q: cl_command_queue) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        unsafe { obj::<Queue>(q)? }.finish();
        Ok(())
    })
}

unsafe fn marker(
    q: cl_command_queue,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    ty: u32,
) -> CLResult<()> {
    // SAFETY: handle check and API contract.
    unsafe {
        let q = arc::<Queue>(q)?;
        let wait = wait_list(n, list, &q.context)?;
        // In-order execution: a marker/barrier with no wait list already follows every
        // earlier command.
        let command = Command::Sync {
            command_type: ty as cl_command_type,
        };
        submit(&q, command, wait, false, event)
    }
}

pub unsafe extern "C" fn clEnqueueMarkerWithWaitList(
    q: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: API contract.
    status(|| unsafe {
        marker(
            q,
            num_events_in_wait_list,
            event_wait_list,
            event,
            CL_COMMAND_MARKER,
        )
    })
}

pub unsafe extern "C" fn clEnqueueBarrierWithWaitList(
    q: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: API contract.
    status(|| unsafe {
        marker(
            q,
            num_events_in_wait_list,
            event_wait_list,
            event,
            CL_COMMAND_BARRIER,
        )
    })
}

pub unsafe extern "C" fn clEnqueueMarker(q: cl_command_queue, event: *mut cl_event) -> cl_int {
    status(|| {
        if event.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: API contract.
        unsafe { marker(q, 0, std::ptr::null(), event, CL_COMMAND_MARKER) }
    })
}

pub unsafe extern "C" fn clEnqueueBarrier(q: cl_command_queue) -> cl_int {
    // SAFETY: API contract.
    status(|| unsafe {
        marker(
            q,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
            CL_COMMAND_BARRIER,
        )
    })
}

pub unsafe extern "C" fn clEnqueueWaitForEvents(
    q: cl_command_queue,
    num_events: cl_uint,
    event_list: *const cl_event,
) -> cl_int {
    status(|| {
        if num_events == 0 || event_list.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: API contract.
        unsafe {
            marker(
                q,
                num_events,
                event_list,
                std::ptr::null_mut(),
                CL_COMMAND_BARRIER,
            )
        }
    })
}

pub unsafe extern "C" fn clWaitForEvents(
    num_events: cl_uint,
    event_list: *const cl_event,
) -> cl_int {
    status(|| {
        if num_events == 0 || event_list.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: readable for num_events (API contract); handle checks.
        let events = unsafe {
            slice(event_list, num_events as usize)
                .iter()
                .map(|&e| arc::<Event>(e))
                .collect::<CLResult<Vec<_>>>()?
        };
        if events
            .iter()
            .any(|e| !Arc::ptr_eq(&e.context, &events[0].context))
        {
            return Err(CL_INVALID_CONTEXT);
        }
        wait_all(&events)
    })
}

pub unsafe extern "C" fn clGetEventInfo(
    event: cl_event,
    param_name: cl_event_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let e = obj::<Event>(event)?;
            let val = match param_name {
                CL_EVENT_COMMAND_QUEUE => Ok(v(e
                    .reported_queue()
                    .map_or(std::ptr::null_mut(), |q| handle(&**q)))),
                CL_EVENT_CONTEXT => Ok(v(handle(&*e.context))),
                CL_EVENT_COMMAND_TYPE => Ok(v(e.command_type)),
                CL_EVENT_COMMAND_EXECUTION_STATUS => Ok(v(e.status())),
                CL_EVENT_REFERENCE_COUNT => Ok(v(e.base().ref_count())),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clGetEventProfilingInfo(
    event: cl_event,
    param_name: cl_profiling_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let e = obj::<Event>(event)?;
            if !e.profiled() {
                return Err(CL_PROFILING_INFO_NOT_AVAILABLE);
            }
            let which = match param_name {
                CL_PROFILING_COMMAND_QUEUED => 0,
                CL_PROFILING_COMMAND_SUBMIT => 1,
                CL_PROFILING_COMMAND_START => 2,
                CL_PROFILING_COMMAND_END | CL_PROFILING_COMMAND_COMPLETE => 3,
                _ => return Err(CL_INVALID_VALUE),
            };
            let t = e.profiling(which).ok_or(CL_PROFILING_INFO_NOT_AVAILABLE)?;
            write_info(
                Ok(v(t as cl_ulong)),
                param_value_size,
                param_value,
                param_value_size_ret,
            )
        }
    })
}

pub unsafe extern "C" fn clRetainEvent(event: cl_event) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { retain::<Event>(event) })
}

pub unsafe extern "C" fn clReleaseEvent(event: cl_event) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { release::<Event>(event) })
}

pub unsafe extern "C" fn clCreateUserEvent(
    context: cl_context,
    errcode_ret: *mut cl_int,
) -> cl_event {
    // SAFETY: handle check, API contract.
    unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            Ok(new_handle(Event::new_user(ctx)))
        })
    }
}

pub unsafe extern "C" fn clSetUserEventStatus(event: cl_event, execution_status: cl_int) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let e = unsafe { obj::<Event>(event)? };
        if !e.is_user() {
            return Err(CL_INVALID_EVENT);
        }
        e.set_user_status(execution_status)
    })
}

pub unsafe extern "C" fn clSetEventCallback(
    event: cl_event,
    command_exec_callback_type: cl_int,
    pfn_notify: Option<unsafe extern "C" fn(cl_event, cl_int, *mut c_void)>,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let e = unsafe { obj::<Event>(event)? };
        let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        if !matches!(
            command_exec_callback_type,
            CL_SUBMITTED | CL_RUNNING | CL_COMPLETE
        ) {
            return Err(CL_INVALID_VALUE);
        }
        e.add_callback(f, user_data as usize, command_exec_callback_type);
        Ok(())
    })
}
