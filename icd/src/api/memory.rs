//! Memory object entry points: buffer and sub-buffer creation, info, destructor callbacks, and
//! the buffer commands (read/write/copy/fill, rect variants, map/unmap, migrate).
#![allow(non_snake_case, clippy::too_many_arguments)]

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_runtime::context::Context;
use ferrocl_runtime::memory::{fill, Mem, Rect};
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
                CL_MEM_TYPE => Ok(v(CL_MEM_OBJECT_BUFFER as cl_mem_object_type)),
                CL_MEM_FLAGS => Ok(v(m.flags)),
                CL_MEM_SIZE => Ok(v(m.size)),
                CL_MEM_HOST_PTR => Ok(v(m.host_ptr as *mut c_void)),
                CL_MEM_MAP_COUNT => Ok(v(m.map_count.load(std::sync::atomic::Ordering::Acquire))),
                CL_MEM_REFERENCE_COUNT => Ok(v(m.base().ref_count())),
                CL_MEM_CONTEXT => Ok(v(handle(&*m.context))),
                CL_MEM_ASSOCIATED_MEMOBJECT => Ok(v(m
                    .parent
                    .as_ref()
                    .map_or(std::ptr::null_mut(), |p| handle(&**p)))),
                CL_MEM_OFFSET => Ok(v(m.parent.as_ref().map_or(0, |p| m.offset - p.offset))),
                CL_MEM_USES_SVM_POINTER => Ok(b(false)),
                CL_MEM_PROPERTIES => Ok(arr(&m.properties)),
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

pub unsafe extern "C" fn clGetSupportedImageFormats(
    context: cl_context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
    _num_entries: cl_uint,
    _image_formats: *mut cl_image_format,
    num_image_formats: *mut cl_uint,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        unsafe { obj::<Context>(context)? };
        ferrocl_runtime::memory::check_flags(flags)?;
        let known = [
            CL_MEM_OBJECT_IMAGE1D,
            CL_MEM_OBJECT_IMAGE1D_ARRAY,
            CL_MEM_OBJECT_IMAGE1D_BUFFER,
            CL_MEM_OBJECT_IMAGE2D,
            CL_MEM_OBJECT_IMAGE2D_ARRAY,
            CL_MEM_OBJECT_IMAGE3D,
        ];
        if !known.contains(&image_type) {
            return Err(CL_INVALID_VALUE);
        }
        // No device of the context supports images: zero formats.
        if !num_image_formats.is_null() {
            // SAFETY: writable (caller contract).
            unsafe { *num_image_formats = 0 };
        }
        Ok(())
    })
}

/// Queue and buffer of a buffer command, checked to share a context.
unsafe fn queue_and_mem(q: cl_command_queue, m: cl_mem) -> CLResult<(Arc<Queue>, Arc<Mem>)> {
    // SAFETY: handle checks.
    let (q, m) = unsafe { (arc::<Queue>(q)?, arc::<Mem>(m)?) };
    if !Arc::ptr_eq(&q.context, &m.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok((q, m))
}

fn host_can_read(m: &Mem) -> CLResult<()> {
    if m.has_flag(CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) {
        return Err(CL_INVALID_OPERATION);
    }
    Ok(())
}

fn host_can_write(m: &Mem) -> CLResult<()> {
    if m.has_flag(CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) {
        return Err(CL_INVALID_OPERATION);
    }
    Ok(())
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
            host_can_read(&m)?;
            if ptr.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            m.check_range(offset, size)?;
            let dst = ptr as usize;
            let mm = m.clone();
            submit(
                &q,
                CL_COMMAND_READ_BUFFER,
                wait,
                blocking_read != 0,
                event,
                Box::new(move || {
                    // SAFETY: range checked; the application keeps `ptr` valid until the command
                    // completes (spec).
                    std::ptr::copy(mm.address().add(offset), dst as *mut u8, size);
                    Ok(())
                }),
            )
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
            host_can_write(&m)?;
            if ptr.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            m.check_range(offset, size)?;
            let src = ptr as usize;
            let mm = m.clone();
            submit(
                &q,
                CL_COMMAND_WRITE_BUFFER,
                wait,
                blocking_write != 0,
                event,
                Box::new(move || {
                    // SAFETY: as for reads.
                    std::ptr::copy(src as *const u8, mm.address().add(offset), size);
                    Ok(())
                }),
            )
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
            if size == 0 {
                return Err(CL_INVALID_VALUE);
            }
            src.check_range(src_offset, size)?;
            dst.check_range(dst_offset, size)?;
            let s = src.address() as usize + src_offset;
            let d = dst.address() as usize + dst_offset;
            if Arc::ptr_eq(&src.storage, &dst.storage) && s < d + size && d < s + size {
                return Err(CL_MEM_COPY_OVERLAP);
            }
            submit(
                &q,
                CL_COMMAND_COPY_BUFFER,
                wait,
                false,
                event,
                Box::new(move || {
                    let _keep = (&src, &dst);
                    // SAFETY: both ranges checked, no overlap.
                    std::ptr::copy_nonoverlapping(s as *const u8, d as *mut u8, size);
                    Ok(())
                }),
            )
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
            if pattern.is_null()
                || !matches!(pattern_size, 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128)
                || !offset.is_multiple_of(pattern_size)
                || !size.is_multiple_of(pattern_size)
            {
                return Err(CL_INVALID_VALUE);
            }
            m.check_range(offset, size)?;
            // The pattern is copied now: the application may reuse its memory at once.
            let pat = slice(pattern as *const u8, pattern_size).to_vec();
            submit(
                &q,
                CL_COMMAND_FILL_BUFFER,
                wait,
                false,
                event,
                Box::new(move || {
                    // SAFETY: range checked.
                    fill(m.address().add(offset), size, &pat);
                    Ok(())
                }),
            )
        }
    })
}

/// The shared part of the three *Rect commands.
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
    Rect {
        region: r3(region),
        src_origin: r3(src_origin),
        src_row_pitch,
        src_slice_pitch,
        dst_origin: r3(dst_origin),
        dst_row_pitch,
        dst_slice_pitch,
    }
    .normalise()
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
            host_can_read(&m)?;
            if ptr.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let r = rect_args(
                buffer_origin,
                host_origin,
                region,
                buffer_row_pitch,
                buffer_slice_pitch,
                host_row_pitch,
                host_slice_pitch,
            )?;
            if r.src_extent().is_none_or(|e| e > m.size) || r.dst_extent().is_none() {
                return Err(CL_INVALID_VALUE);
            }
            let dst = ptr as usize;
            submit(
                &q,
                CL_COMMAND_READ_BUFFER_RECT,
                wait,
                blocking_read != 0,
                event,
                Box::new(move || {
                    // SAFETY: source extent checked; the host side is the application's promise.
                    r.copy(m.address(), dst as *mut u8);
                    Ok(())
                }),
            )
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
            host_can_write(&m)?;
            if ptr.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            // Host side is the source here.
            let r = rect_args(
                host_origin,
                buffer_origin,
                region,
                host_row_pitch,
                host_slice_pitch,
                buffer_row_pitch,
                buffer_slice_pitch,
            )?;
            if r.dst_extent().is_none_or(|e| e > m.size) || r.src_extent().is_none() {
                return Err(CL_INVALID_VALUE);
            }
            let src = ptr as usize;
            submit(
                &q,
                CL_COMMAND_WRITE_BUFFER_RECT,
                wait,
                blocking_write != 0,
                event,
                Box::new(move || {
                    // SAFETY: destination extent checked; host side per the application.
                    r.copy(src as *const u8, m.address());
                    Ok(())
                }),
            )
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
            let r = rect_args(
                src_origin,
                dst_origin,
                region,
                src_row_pitch,
                src_slice_pitch,
                dst_row_pitch,
                dst_slice_pitch,
            )?;
            let se = r
                .src_extent()
                .filter(|&e| e <= src.size)
                .ok_or(CL_INVALID_VALUE)?;
            let de = r
                .dst_extent()
                .filter(|&e| e <= dst.size)
                .ok_or(CL_INVALID_VALUE)?;
            if Arc::ptr_eq(&src.storage, &dst.storage) {
                if Arc::ptr_eq(&src, &dst)
                    && (r.src_row_pitch != r.dst_row_pitch
                        || r.src_slice_pitch != r.dst_slice_pitch)
                {
                    return Err(CL_INVALID_VALUE);
                }
                let s0 = src.address() as usize;
                let d0 = dst.address() as usize;
                if s0 < d0 + de && d0 < s0 + se {
                    // Conservative: overlapping byte spans of the two rectangles.
                    return Err(CL_MEM_COPY_OVERLAP);
                }
            }
            submit(
                &q,
                CL_COMMAND_COPY_BUFFER_RECT,
                wait,
                false,
                event,
                Box::new(move || {
                    // SAFETY: both extents checked.
                    r.copy(src.address(), dst.address());
                    Ok(())
                }),
            )
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
            let known =
                (CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags;
            if map_flags & !known != 0
                || (map_flags & CL_MAP_WRITE_INVALIDATE_REGION as cl_map_flags != 0
                    && map_flags & (CL_MAP_READ | CL_MAP_WRITE) as cl_map_flags != 0)
            {
                return Err(CL_INVALID_VALUE);
            }
            if map_flags & CL_MAP_READ as cl_map_flags != 0 {
                host_can_read(&m)?;
            }
            if map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags != 0 {
                host_can_write(&m)?;
            }
            if size == 0 {
                return Err(CL_INVALID_VALUE);
            }
            m.check_range(offset, size)?;
            // Zero-copy: the pointer is the buffer's own memory (the application's for
            // USE_HOST_PTR); the command only orders the map after earlier commands.
            let p = m.map(offset);
            let mm = m.clone();
            let r = submit(
                &q,
                CL_COMMAND_MAP_BUFFER,
                wait,
                blocking_map != 0,
                event,
                Box::new(move || {
                    let _keep = mm;
                    Ok(())
                }),
            );
            if let Err(e) = r {
                let _ = m.unmap_check(p);
                m.unmap_done();
                return Err(e);
            }
            Ok(p.cast::<c_void>())
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
            m.unmap_check(mapped_ptr.cast())?;
            submit(
                &q,
                CL_COMMAND_UNMAP_MEM_OBJECT,
                wait,
                false,
                event,
                Box::new(move || {
                    m.unmap_done();
                    Ok(())
                }),
            )
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
            let known = (CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)
                as cl_mem_migration_flags;
            if flags & !known != 0 {
                return Err(CL_INVALID_VALUE);
            }
            let mut keep = Vec::new();
            for &m in slice(mem_objects, num_mem_objects as usize) {
                let m = arc::<Mem>(m)?;
                if !Arc::ptr_eq(&m.context, &q.context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                keep.push(m);
            }
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            // Host and device share memory: migration only orders the command.
            submit(
                &q,
                CL_COMMAND_MIGRATE_MEM_OBJECTS,
                wait,
                false,
                event,
                Box::new(move || {
                    drop(keep);
                    Ok(())
                }),
            )
        }
    })
}
