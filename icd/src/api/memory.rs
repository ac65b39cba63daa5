//! Memory object entry points: buffer, sub-buffer and pipe creation, info, destructor
//! callbacks, and the buffer commands (read/write/copy/fill, rect variants, map/unmap,
//! migrate), which are converted into runtime [`Command`]s (the checks and the work live
//! there).
#![allow(non_snake_case, clippy::too_many_arguments)]

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_runtime::command::{Command, HostPtr};
use ferrocl_runtime::context::Context;
use ferrocl_runtime::memory::{Mem, Rect};
use ferrocl_runtime::queue::Queue;
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;

use super::queue::submit;
use crate::util::*;

unsafe fn buffer(
    context: cl_context,
    props: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    // SAFETY: handle check.
    let ctx = unsafe { arc::<Context>(context)? };
    ctx.check_live()?;
    // SAFETY: zero-terminated list (caller contract).
    let (pairs, raw) = unsafe { properties(props) };
    if !pairs.is_empty() {
        // No buffer properties are supported (none are defined by core OpenCL 3.0).
        return Err(CL_INVALID_PROPERTY);
    }
    ferrocl_runtime::memory::check_flags(flags)?;
    if size == 0 {
        return Err(CL_INVALID_BUFFER_SIZE);
    }
    // SAFETY: with USE/COPY_HOST_PTR the application guarantees `host_ptr` covers `size` bytes
    // (and for USE_HOST_PTR outlives the buffer); the runtime checks pointer/flag agreement.
    let m = unsafe { Mem::new_buffer(ctx, flags, size, host_ptr.cast(), raw)? };
    Ok(new_handle(m))
}

pub unsafe extern "C" fn clCreateBuffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            buffer(context, std::ptr::null(), flags, size, host_ptr)
        })
    }
}

pub unsafe extern "C" fn clCreateBufferWithProperties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            buffer(context, properties, flags, size, host_ptr)
        })
    }
}

pub unsafe extern "C" fn clCreateSubBuffer(
    buf: cl_mem,
    flags: cl_mem_flags,
    buffer_create_type: cl_buffer_create_type,
    buffer_create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            let parent = arc::<Mem>(buf)?;
            parent.context.check_live()?;
            if buffer_create_type != CL_BUFFER_CREATE_TYPE_REGION {
                return Err(CL_INVALID_VALUE);
            }
            if buffer_create_info.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let region = *(buffer_create_info as *const cl_buffer_region);
            Ok(new_handle(Mem::new_sub_buffer(
                &parent,
                flags,
                region.origin,
                region.size,
            )?))
        })
    }
}

pub unsafe extern "C" fn clRetainMemObject(memobj: cl_mem) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { retain::<Mem>(memobj) })
}

pub unsafe extern "C" fn clReleaseMemObject(memobj: cl_mem) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { release::<Mem>(memobj) })
}

pub unsafe extern "C" fn clGetMemObjectInfo(
    memobj: cl_mem,
    param_name: cl_mem_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let m = obj::<Mem>(memobj)?;
            let val = match param_name {
                CL_MEM_TYPE => Ok(v(m.mem_type())),
                CL_MEM_FLAGS => Ok(v(m.flags)),
                CL_MEM_SIZE => Ok(v(m.mem_size())),
                CL_MEM_HOST_PTR => Ok(v(m.host_ptr as *mut c_void)),
                CL_MEM_MAP_COUNT => Ok(v(m.map_count())),
                CL_MEM_REFERENCE_COUNT => Ok(v(m.base().ref_count())),
                CL_MEM_CONTEXT => Ok(v(handle(&*m.context))),
                CL_MEM_ASSOCIATED_MEMOBJECT => {
                    Ok(v(m.parent().map_or(std::ptr::null_mut(), |p| handle(&**p))))
                }
                CL_MEM_OFFSET => Ok(v(m.origin_in_parent())),
                CL_MEM_USES_SVM_POINTER => Ok(b(m.svm.is_some())),
                CL_MEM_PROPERTIES => Ok(arr(&m.properties)),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clCreatePipe(
    context: cl_context,
    flags: cl_mem_flags,
    pipe_packet_size: cl_uint,
    pipe_max_packets: cl_uint,
    properties: *const cl_pipe_properties,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: handle check; errcode_ret per the API contract.
    unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            // "In all OpenCL versions, properties must be NULL" (API spec 5.4.1): none is
            // defined, not even an empty list.
            if !properties.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            Ok(new_handle(Mem::new_pipe(
                ctx,
                flags,
                pipe_packet_size,
                pipe_max_packets,
            )?))
        })
    }
}

pub unsafe extern "C" fn clGetPipeInfo(
    pipe: cl_mem,
    param_name: cl_pipe_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let m = obj::<Mem>(pipe)?;
            let p = m.expect_pipe()?;
            let val = match param_name {
                CL_PIPE_PACKET_SIZE => Ok(v(p.packet_size() as cl_uint)),
                CL_PIPE_MAX_PACKETS => Ok(v(p.max_packets() as cl_uint)),
                // Created without properties (the only way): size 0.
                CL_PIPE_PROPERTIES => Ok(arr::<cl_pipe_properties>(&[])),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clSetMemObjectDestructorCallback(
    memobj: cl_mem,
    pfn_notify: Option<unsafe extern "C" fn(cl_mem, *mut c_void)>,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let m = unsafe { obj::<Mem>(memobj)? };
        let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        m.add_destructor(f, user_data as usize);
        Ok(())
    })
}

/// Queue and memory object of a command, checked to share a context.
pub(crate) unsafe fn queue_and_mem(
    q: cl_command_queue,
    m: cl_mem,
) -> CLResult<(Arc<Queue>, Arc<Mem>)> {
    // SAFETY: handle checks.
    let (q, m) = unsafe { (arc::<Queue>(q)?, arc::<Mem>(m)?) };
    if !Arc::ptr_eq(&q.context, &m.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok((q, m))
}

pub unsafe extern "C" fn clEnqueueReadBuffer(
    command_queue: cl_command_queue,
    buf: cl_mem,
    blocking_read: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, buf)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::read_buffer(m, offset, size, HostPtr::new(ptr)?)?;
            submit(&q, command, wait, blocking_read != 0, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueWriteBuffer(
    command_queue: cl_command_queue,
    buf: cl_mem,
    blocking_write: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, buf)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::write_buffer(m, offset, size, HostPtr::new(ptr)?)?;
            submit(&q, command, wait, blocking_write != 0, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueCopyBuffer(
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, src) = queue_and_mem(command_queue, src_buffer)?;
            let (_, dst) = queue_and_mem(command_queue, dst_buffer)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::copy_buffer(src, dst, src_offset, dst_offset, size)?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueFillBuffer(
    command_queue: cl_command_queue,
    buf: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, buf)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            if pattern.is_null() || pattern_size == 0 {
                return Err(CL_INVALID_VALUE);
            }
            let pattern = slice(pattern as *const u8, pattern_size);
            let command = Command::fill_buffer(m, pattern, offset, size)?;
            submit(&q, command, wait, false, event)
        }
    })
}

/// The origins, region and pitches of a *Rect command, in the order the runtime's [`Rect`]
/// wants them (source side first).
unsafe fn rect_args(
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
) -> CLResult<Rect> {
    if src_origin.is_null() || dst_origin.is_null() || region.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: each points at 3 size_t values (API contract).
    let r3 = |p: *const usize| unsafe { [*p, *p.add(1), *p.add(2)] };
    Ok(Rect {
        region: r3(region),
        src_origin: r3(src_origin),
        src_row_pitch,
        src_slice_pitch,
        dst_origin: r3(dst_origin),
        dst_row_pitch,
        dst_slice_pitch,
    })
}

pub unsafe extern "C" fn clEnqueueReadBufferRect(
    command_queue: cl_command_queue,
    buf: cl_mem,
    blocking_read: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, buf)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let dst = HostPtr::new(ptr)?;
            let rect = rect_args(
                buffer_origin,
                host_origin,
                region,
                buffer_row_pitch,
                buffer_slice_pitch,
                host_row_pitch,
                host_slice_pitch,
            )?;
            let command = Command::read_buffer_rect(m, rect, dst)?;
            submit(&q, command, wait, blocking_read != 0, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueWriteBufferRect(
    command_queue: cl_command_queue,
    buf: cl_mem,
    blocking_write: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, buf)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let src = HostPtr::new(ptr)?;
            let rect = rect_args(
                host_origin,
                buffer_origin,
                region,
                host_row_pitch,
                host_slice_pitch,
                buffer_row_pitch,
                buffer_slice_pitch,
            )?;
            let command = Command::write_buffer_rect(m, rect, src)?;
            submit(&q, command, wait, blocking_write != 0, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueCopyBufferRect(
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, src) = queue_and_mem(command_queue, src_buffer)?;
            let (_, dst) = queue_and_mem(command_queue, dst_buffer)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let rect = rect_args(
                src_origin,
                dst_origin,
                region,
                src_row_pitch,
                src_slice_pitch,
                dst_row_pitch,
                dst_slice_pitch,
            )?;
            let command = Command::copy_buffer_rect(src, dst, rect)?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueMapBuffer(
    command_queue: cl_command_queue,
    buf: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: handle checks and API pointer contract.
    unsafe {
        create(errcode_ret, || {
            let (q, m) = queue_and_mem(command_queue, buf)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let (command, ptr) = Command::map_buffer(m.clone(), map_flags, offset, size)?;
            if let Err(e) = submit(&q, command, wait, blocking_map != 0, event) {
                Command::cancel_map(&m, ptr);
                return Err(e);
            }
            Ok(ptr.cast::<c_void>())
        })
    }
}

pub unsafe extern "C" fn clEnqueueUnmapMemObject(
    command_queue: cl_command_queue,
    memobj: cl_mem,
    mapped_ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, memobj)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::unmap(m, mapped_ptr.cast())?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueMigrateMemObjects(
    command_queue: cl_command_queue,
    num_mem_objects: cl_uint,
    mem_objects: *const cl_mem,
    flags: cl_mem_migration_flags,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = arc::<Queue>(command_queue)?;
            if num_mem_objects == 0 || mem_objects.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let mut mems = Vec::new();
            for &m in slice(mem_objects, num_mem_objects as usize) {
                let m = arc::<Mem>(m)?;
                if !Arc::ptr_eq(&m.context, &q.context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                mems.push(m);
            }
            let command = Command::migrate(mems, flags)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            submit(&q, command, wait, false, event)
        }
    })
}
