//! `cl_khr_command_buffer`, `cl_khr_command_buffer_mutable_dispatch` and
//! `cl_khr_command_buffer_multi_device` entry points, reached
//! through `clGetExtensionFunctionAddressForPlatform`: argument checks in the order the
//! extension lists its errors, then the runtime's command-buffer (`command_buffer.rs` there).
//! Recorded commands are built by the same runtime constructors as their `clEnqueue*` twins.
#![allow(non_snake_case, clippy::too_many_arguments)]

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_runtime::command::{fill_color_size, Command, HostPtr};
use ferrocl_runtime::command_buffer::{
    CommandBuffer, DispatchUpdate, KernelRecording, MutableCommand,
    CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS, MUTABLE_FIELDS, REQUIRED_QUEUE_PROPERTIES,
    SUPPORTED_QUEUE_PROPERTIES,
};
use ferrocl_runtime::kernel::Kernel;
use ferrocl_runtime::memory::{Mem, Rect};
use ferrocl_runtime::queue::Queue;
use ferrocl_runtime::svm::SvmLevel;
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;

use super::image::{image_origin, triple};
use crate::util::*;

/// The names this module answers for in `clGetExtensionFunctionAddress*`.
pub fn extension_function(name: &[u8]) -> Option<*mut c_void> {
    Some(match name {
        b"clCreateCommandBufferKHR" => clCreateCommandBufferKHR as *mut c_void,
        b"clRetainCommandBufferKHR" => clRetainCommandBufferKHR as *mut c_void,
        b"clReleaseCommandBufferKHR" => clReleaseCommandBufferKHR as *mut c_void,
        b"clFinalizeCommandBufferKHR" => clFinalizeCommandBufferKHR as *mut c_void,
        b"clEnqueueCommandBufferKHR" => clEnqueueCommandBufferKHR as *mut c_void,
        b"clCommandBarrierWithWaitListKHR" => clCommandBarrierWithWaitListKHR as *mut c_void,
        b"clCommandCopyBufferKHR" => clCommandCopyBufferKHR as *mut c_void,
        b"clCommandCopyBufferRectKHR" => clCommandCopyBufferRectKHR as *mut c_void,
        b"clCommandCopyBufferToImageKHR" => clCommandCopyBufferToImageKHR as *mut c_void,
        b"clCommandCopyImageKHR" => clCommandCopyImageKHR as *mut c_void,
        b"clCommandCopyImageToBufferKHR" => clCommandCopyImageToBufferKHR as *mut c_void,
        b"clCommandFillBufferKHR" => clCommandFillBufferKHR as *mut c_void,
        b"clCommandFillImageKHR" => clCommandFillImageKHR as *mut c_void,
        b"clCommandNDRangeKernelKHR" => clCommandNDRangeKernelKHR as *mut c_void,
        b"clCommandSVMMemcpyKHR" => clCommandSVMMemcpyKHR as *mut c_void,
        b"clCommandSVMMemFillKHR" => clCommandSVMMemFillKHR as *mut c_void,
        b"clGetCommandBufferInfoKHR" => clGetCommandBufferInfoKHR as *mut c_void,
        b"clUpdateMutableCommandsKHR" => clUpdateMutableCommandsKHR as *mut c_void,
        b"clGetMutableCommandInfoKHR" => clGetMutableCommandInfoKHR as *mut c_void,
        b"clRemapCommandBufferKHR" => clRemapCommandBufferKHR as *mut c_void,
        _ => return None,
    })
}

/// Reads a zero-terminated property list whose names are all in `known`, each at most once:
/// CL_INVALID_VALUE otherwise. A name is checked before its value is read, so a list cut
/// short after an unknown name is not read past it. Returns the pairs and the raw list
/// (terminator included; empty for NULL).
///
/// # Safety
/// `p` is NULL or a list whose every known name is followed by a value, up to a 0 name.
unsafe fn property_list(p: *const cl_properties, known: &[cl_properties]) -> CLResult<Props> {
    let mut pairs: Vec<(cl_properties, cl_properties)> = Vec::new();
    let mut raw = Vec::new();
    if p.is_null() {
        return Ok((pairs, raw));
    }
    let mut i = 0;
    loop {
        // SAFETY: within the list up to its terminator (caller contract).
        let name = unsafe { *p.add(i) };
        raw.push(name);
        if name == 0 {
            return Ok((pairs, raw));
        }
        if !known.contains(&name) || pairs.iter().any(|&(n, _)| n == name) {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: a known name has its value next (caller contract).
        let value = unsafe { *p.add(i + 1) };
        raw.push(value);
        pairs.push((name, value));
        i += 2;
    }
}

type Props = (Vec<(cl_properties, cl_properties)>, Vec<cl_properties>);

/// A sync-point wait list as given: CL_INVALID_SYNC_POINT_WAIT_LIST_KHR when the pointer and
/// the count disagree.
///
/// # Safety
/// `list` is NULL or readable for `n` values.
unsafe fn sync_points<'a>(
    n: cl_uint,
    list: *const cl_sync_point_khr,
) -> CLResult<&'a [cl_sync_point_khr]> {
    if (n == 0) != list.is_null() {
        return Err(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR);
    }
    // SAFETY: readable for n values (caller contract).
    Ok(unsafe { slice(list, n as usize) })
}

/// What every recording entry point checks first, in the extension's order: the
/// command-buffer, the queue (NULL for a buffer of one queue, else one of its queues:
/// [`CommandBuffer::queue_index`]), the Recording state,
/// the mutable handle (kernel commands only may ask for one), the properties (none are defined
/// for commands other than kernels) and the shape of the wait list.
///
/// # Safety
/// Handles are checked; pointers per the API contract.
unsafe fn recording<'a>(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    mutable_handle: *mut cl_mutable_command_khr,
    (n, list): (cl_uint, *const cl_sync_point_khr),
) -> CLResult<(Arc<CommandBuffer>, usize, &'a [cl_sync_point_khr])> {
    // SAFETY: handle check.
    let cb = unsafe { arc::<CommandBuffer>(command_buffer)? };
    let queue = if command_queue.is_null() {
        None
    } else {
        // SAFETY: handle check.
        Some(unsafe { obj::<Queue>(command_queue)? })
    };
    let queue = cb.queue_index(queue)?;
    cb.check_recording()?;
    if !mutable_handle.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: zero-terminated when not NULL (API contract); no name is known.
    unsafe { property_list(properties, &[])? };
    // SAFETY: caller contract.
    let wait = unsafe { sync_points(n, list)? };
    cb.check_wait_list(wait)?;
    Ok((cb, queue, wait))
}

/// A memory object of a recorded command: CL_INVALID_MEM_OBJECT for a bad handle,
/// CL_INVALID_CONTEXT for another context than the command-buffer's.
///
/// # Safety
/// Handle check.
unsafe fn mem_of(cb: &CommandBuffer, m: cl_mem) -> CLResult<Arc<Mem>> {
    // SAFETY: handle check.
    let m = unsafe { arc::<Mem>(m)? };
    if !Arc::ptr_eq(&m.context, &cb.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(m)
}

/// Records `command` to the queue of index `queue` and writes its sync point.
///
/// # Safety
/// `sync_point` is NULL or writable.
unsafe fn record(
    cb: &CommandBuffer,
    queue: usize,
    command: Command,
    wait: &[cl_sync_point_khr],
    sync_point: *mut cl_sync_point_khr,
) -> CLResult<()> {
    let point = cb.record(queue, command, wait)?;
    if !sync_point.is_null() {
        // SAFETY: writable (caller contract).
        unsafe { *sync_point = point };
    }
    Ok(())
}

pub unsafe extern "C" fn clCreateCommandBufferKHR(
    num_queues: cl_uint,
    queues: *const cl_command_queue,
    properties: *const cl_command_buffer_properties_khr,
    errcode_ret: *mut cl_int,
) -> cl_command_buffer_khr {
    // SAFETY: handle checks; pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            if num_queues == 0 || queues.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let queues = slice(queues, num_queues as usize)
                .iter()
                .map(|&q| arc::<Queue>(q))
                .collect::<CLResult<Vec<_>>>()?;
            queues[0].context.check_live()?;
            let known = [
                CL_COMMAND_BUFFER_FLAGS_KHR,
                CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS,
            ];
            let (pairs, raw) = property_list(properties, &known)?;
            let value = |name| pairs.iter().find(|p| p.0 == name).map_or(0, |p| p.1);
            let flags = value(CL_COMMAND_BUFFER_FLAGS_KHR);
            let asserts = value(CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS);
            Ok(new_handle(CommandBuffer::new(queues, raw, flags, asserts)?))
        })
    }
}

pub unsafe extern "C" fn clRetainCommandBufferKHR(command_buffer: cl_command_buffer_khr) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { retain::<CommandBuffer>(command_buffer) })
}

pub unsafe extern "C" fn clReleaseCommandBufferKHR(
    command_buffer: cl_command_buffer_khr,
) -> cl_int {
    // Executions already enqueued hold what they run; the buffer itself may go.
    // SAFETY: handle check.
    status(|| unsafe { release::<CommandBuffer>(command_buffer) })
}

pub unsafe extern "C" fn clFinalizeCommandBufferKHR(
    command_buffer: cl_command_buffer_khr,
) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { obj::<CommandBuffer>(command_buffer)?.finalize() })
}

pub unsafe extern "C" fn clEnqueueCommandBufferKHR(
    num_queues: cl_uint,
    queues: *mut cl_command_queue,
    command_buffer: cl_command_buffer_khr,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let cb = obj::<CommandBuffer>(command_buffer)?;
            if (num_queues == 0) != queues.is_null()
                || (num_queues != 0 && num_queues as usize != cb.queues.len())
            {
                return Err(CL_INVALID_VALUE);
            }
            let queues = if queues.is_null() {
                cb.queues.clone()
            } else {
                // Substitutes: each of the device and context of the queue it replaces.
                let given = slice(queues, num_queues as usize)
                    .iter()
                    .map(|&q| arc::<Queue>(q))
                    .collect::<CLResult<Vec<_>>>()?;
                for (q, own) in given.iter().zip(&cb.queues) {
                    if !Arc::ptr_eq(&q.context, &cb.context) {
                        return Err(CL_INVALID_CONTEXT);
                    }
                    if !Arc::ptr_eq(&q.device, &own.device) {
                        return Err(CL_INVALID_DEVICE);
                    }
                }
                given
            };
            if queues.iter().any(|q| {
                !has_all(SUPPORTED_QUEUE_PROPERTIES, q.properties)
                    || !has_all(q.properties, REQUIRED_QUEUE_PROPERTIES)
            }) {
                return Err(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR);
            }
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &cb.context)?;
            out_event(event, cb.enqueue(&queues, wait)?);
            Ok(())
        }
    })
}

/// Whether `props` has every bit of `bits`.
fn has_all(props: cl_command_queue_properties, bits: cl_command_queue_properties) -> bool {
    props & bits == bits
}

pub unsafe extern "C" fn clCommandBarrierWithWaitListKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            // Commands run in recording order, so a barrier already waits for everything
            // recorded before it and holds everything after.
            let command = Command::Sync {
                command_type: CL_COMMAND_BARRIER as cl_command_type,
            };
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandCopyBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            let (src, dst) = (mem_of(&cb, src_buffer)?, mem_of(&cb, dst_buffer)?);
            let command = Command::copy_buffer(src, dst, src_offset, dst_offset, size)?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandCopyBufferRectKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            let (src, dst) = (mem_of(&cb, src_buffer)?, mem_of(&cb, dst_buffer)?);
            let rect = Rect {
                region: triple(region)?,
                src_origin: triple(src_origin)?,
                src_row_pitch,
                src_slice_pitch,
                dst_origin: triple(dst_origin)?,
                dst_row_pitch,
                dst_slice_pitch,
            };
            let command = Command::copy_buffer_rect(src, dst, rect)?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandCopyBufferToImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            let (src, dst) = (mem_of(&cb, src_buffer)?, mem_of(&cb, dst_image)?);
            let dst_at = image_origin(dst_origin, &dst)?;
            let command =
                Command::copy_buffer_to_image(src, dst, src_offset, dst_at, triple(region)?)?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandCopyImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            let (src, dst) = (mem_of(&cb, src_image)?, mem_of(&cb, dst_image)?);
            let (src_at, dst_at) = (
                image_origin(src_origin, &src)?,
                image_origin(dst_origin, &dst)?,
            );
            let command = Command::copy_image(src, dst, src_at, dst_at, triple(region)?)?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandCopyImageToBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            let (src, dst) = (mem_of(&cb, src_image)?, mem_of(&cb, dst_buffer)?);
            let src_at = image_origin(src_origin, &src)?;
            let command =
                Command::copy_image_to_buffer(src, dst, src_at, triple(region)?, dst_offset)?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandFillBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            let m = mem_of(&cb, buffer)?;
            if pattern.is_null() || pattern_size == 0 {
                return Err(CL_INVALID_VALUE);
            }
            // The pattern is copied now: the application may reuse its memory.
            let pattern = slice(pattern as *const u8, pattern_size);
            let command = Command::fill_buffer(m, pattern, offset, size)?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandFillImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            let m = mem_of(&cb, image)?;
            let size = fill_color_size(m.expect_image()?);
            if fill_color.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: the colour holds `size` bytes for this image (API contract).
            let color = slice(fill_color as *const u8, size);
            let origin = image_origin(origin, &m)?;
            let command = Command::fill_image(m, color, origin, triple(region)?)?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandSVMMemcpyKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            if cb.context.svm_level() == SvmLevel::Off {
                return Err(CL_INVALID_OPERATION);
            }
            let (dst, src) = (HostPtr::new(dst_ptr)?, HostPtr::new(src_ptr)?);
            let command = Command::svm_memcpy(
                &cb.context,
                CL_COMMAND_SVM_MEMCPY as cl_command_type,
                dst,
                src,
                size,
            )?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

pub unsafe extern "C" fn clCommandSVMMemFillKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                properties,
                mutable_handle,
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            if cb.context.svm_level() == SvmLevel::Off {
                return Err(CL_INVALID_OPERATION);
            }
            if pattern.is_null() || pattern_size == 0 {
                return Err(CL_INVALID_VALUE);
            }
            let pattern = slice(pattern as *const u8, pattern_size);
            let command = Command::svm_mem_fill(
                &cb.context,
                CL_COMMAND_SVM_MEMFILL as cl_command_type,
                HostPtr::new(svm_ptr)?,
                pattern,
                size,
            )?;
            record(&cb, queue, command, wait, sync_point)
        }
    })
}

/// `work_dim` values from a C array, the rest `default`.
///
/// # Safety
/// `p` is NULL or readable for `dims` values.
unsafe fn sizes(p: *const usize, dims: usize, default: usize) -> Option<[usize; 3]> {
    if p.is_null() {
        return None;
    }
    let mut out = [default; 3];
    // SAFETY: readable for dims values (caller contract).
    out[..dims].copy_from_slice(unsafe { slice(p, dims) });
    Some(out)
}

pub unsafe extern "C" fn clCommandNDRangeKernelKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    properties: *const cl_command_properties_khr,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_sync_points_in_wait_list: cl_uint,
    sync_point_wait_list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; pointers per the API contract.
        unsafe {
            // A kernel command may ask for its handle (cl_khr_command_buffer_mutable_dispatch).
            let (cb, queue, wait) = recording(
                command_buffer,
                command_queue,
                std::ptr::null(),
                std::ptr::null_mut(),
                (num_sync_points_in_wait_list, sync_point_wait_list),
            )?;
            let known = [
                CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
                CL_MUTABLE_DISPATCH_ASSERTS_KHR,
            ];
            let (pairs, raw) = property_list(properties, &known)?;
            let value = |name| pairs.iter().find(|p| p.0 == name).map(|p| p.1);
            let updatable = value(CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR);
            let asserts = value(CL_MUTABLE_DISPATCH_ASSERTS_KHR).unwrap_or(0);
            let field_bits = CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR
                | CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR
                | CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR
                | CL_MUTABLE_DISPATCH_ARGUMENTS_KHR
                | CL_MUTABLE_DISPATCH_EXEC_INFO_KHR;
            if updatable.is_some_and(|u| u & !field_bits != 0)
                || asserts & !ferrocl_runtime::command_buffer::KNOWN_ASSERTS != 0
            {
                return Err(CL_INVALID_VALUE);
            }
            let k = arc::<Kernel>(kernel)?;
            if !(1..=3).contains(&work_dim) {
                return Err(CL_INVALID_WORK_DIMENSION);
            }
            let dims = work_dim as usize;
            let recorded = KernelRecording {
                queue,
                kernel: k,
                properties: raw,
                // Arguments may be missing only where the properties say they will be set.
                defer_args: updatable.is_some_and(|u| u & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR != 0),
                updatable: updatable.unwrap_or(MUTABLE_FIELDS),
                asserts,
                work_dim: dims,
                offset: sizes(global_work_offset, dims, 0).unwrap_or([0; 3]),
                // No global size is an empty range, as for clEnqueueNDRangeKernel.
                global: sizes(global_work_size, dims, 1).unwrap_or([0; 3]),
                local: sizes(local_work_size, dims, 1),
            };
            let (point, command) = cb.record_kernel(recorded, wait)?;
            if !sync_point.is_null() {
                *sync_point = point;
            }
            if !mutable_handle.is_null() {
                *mutable_handle = handle(&*command);
            }
            Ok(())
        }
    })
}

pub unsafe extern "C" fn clGetCommandBufferInfoKHR(
    command_buffer: cl_command_buffer_khr,
    param_name: cl_command_buffer_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let cb = obj::<CommandBuffer>(command_buffer)?;
            let val = match param_name {
                CL_COMMAND_BUFFER_NUM_QUEUES_KHR => Ok(v(cb.queues.len() as cl_uint)),
                CL_COMMAND_BUFFER_QUEUES_KHR => Ok(arr(&cb
                    .queues
                    .iter()
                    .map(|q| handle(&**q))
                    .collect::<Vec<_>>())),
                CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR => Ok(v(cb.base().ref_count())),
                CL_COMMAND_BUFFER_STATE_KHR => Ok(v(cb.state().code())),
                CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR => Ok(arr(&cb.properties)),
                CL_COMMAND_BUFFER_CONTEXT_KHR => Ok(v(handle(&*cb.context))),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

/// Reads one `cl_mutable_dispatch_config_khr` into an update of `cb`: the command is checked
/// to belong to `cb`, the fields to be updatable, and the arguments and exec info are applied
/// to a copy of the command's (as clSetKernelArg, clSetKernelArgSVMPointer and
/// clSetKernelExecInfo would apply them).
///
/// # Safety
/// `config` points at a `cl_mutable_dispatch_config_khr` whose arrays are as long as its
/// counts say (API contract).
unsafe fn dispatch_update(
    cb: &CommandBuffer,
    config: &cl_mutable_dispatch_config_khr,
) -> CLResult<DispatchUpdate> {
    // SAFETY: handle check.
    let command = unsafe { arc::<MutableCommand>(config.command)? };
    cb.owns(&command)?;
    let (num_args, num_svm, num_exec) = (
        config.num_args as usize,
        config.num_svm_args as usize,
        config.num_exec_infos as usize,
    );
    command.check_update(
        config.work_dim as usize,
        !config.global_work_offset.is_null(),
        !config.global_work_size.is_null(),
        !config.local_work_size.is_null(),
        num_args + num_svm > 0,
        num_exec > 0,
    )?;
    if (num_args == 0) != config.arg_list.is_null()
        || (num_svm == 0) != config.arg_svm_list.is_null()
        || (num_exec == 0) != config.exec_info_list.is_null()
    {
        return Err(CL_INVALID_VALUE);
    }
    let kernel = command.arguments();
    // SAFETY: each list holds its count of entries (caller contract).
    let (args, svm_args, exec_infos) = unsafe {
        (
            slice(config.arg_list, num_args),
            slice(config.arg_svm_list, num_svm),
            slice(config.exec_info_list, num_exec),
        )
    };
    for a in args {
        let idx = a.arg_index as usize;
        // SAFETY: arg_value readable for arg_size bytes (API contract).
        let value = unsafe { super::kernel::arg_value(&kernel, idx, a.arg_size, a.arg_value)? };
        kernel.set_arg(idx, a.arg_size, value)?;
    }
    for a in svm_args {
        // arg_size is ignored for SVM arguments (spec).
        kernel.set_arg_svm_pointer(a.arg_index as usize, a.arg_value as usize)?;
    }
    for e in exec_infos {
        // SAFETY: param_value readable for param_value_size bytes (API contract).
        unsafe {
            super::svm::set_exec_info(
                &kernel,
                e.param_name as cl_kernel_exec_info,
                e.param_value_size,
                e.param_value,
            )?
        };
    }
    let dims = command.work_dim;
    // SAFETY: each size array holds work_dim values (API contract).
    let (offset, global, local) = unsafe {
        (
            sizes(config.global_work_offset, dims, 0),
            sizes(config.global_work_size, dims, 1),
            sizes(config.local_work_size, dims, 1),
        )
    };
    Ok(DispatchUpdate {
        command,
        kernel,
        offset,
        global,
        local,
    })
}

pub unsafe extern "C" fn clUpdateMutableCommandsKHR(
    command_buffer: cl_command_buffer_khr,
    num_configs: cl_uint,
    config_types: *const cl_command_buffer_update_type_khr,
    configs: *mut *const c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; arrays per the API contract.
        unsafe {
            let cb = obj::<CommandBuffer>(command_buffer)?;
            cb.check_updatable()?;
            let n = num_configs as usize;
            if (n == 0) != config_types.is_null() || (n == 0) != configs.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let types = slice(config_types, n);
            let configs = slice(configs as *const *const c_void, n);
            let mut updates = Vec::with_capacity(n);
            for (&ty, &config) in types.iter().zip(configs) {
                if ty != CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR || config.is_null() {
                    return Err(CL_INVALID_VALUE);
                }
                let config = &*(config as *const cl_mutable_dispatch_config_khr);
                updates.push(dispatch_update(cb, config)?);
            }
            cb.update(updates)
        }
    })
}

pub unsafe extern "C" fn clGetMutableCommandInfoKHR(
    command: cl_mutable_command_khr,
    param_name: cl_mutable_command_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let c = obj::<MutableCommand>(command)?;
            let cb = c.command_buffer().ok_or(CL_INVALID_MUTABLE_COMMAND_KHR)?;
            let (offset, global, local) = c.sizes();
            let dims = c.work_dim;
            let val = match param_name {
                CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR => Ok(v(handle(&*cb.queues[c.queue_index]))),
                CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR => Ok(v(handle(&*cb))),
                CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR => {
                    Ok(v(CL_COMMAND_NDRANGE_KERNEL as cl_command_type))
                }
                CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR => Ok(arr(&c.properties)),
                CL_MUTABLE_DISPATCH_KERNEL_KHR => Ok(v(handle(&*c.kernel))),
                CL_MUTABLE_DISPATCH_DIMENSIONS_KHR => Ok(v(dims as cl_uint)),
                CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR => Ok(arr(&offset[..dims])),
                CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR => Ok(arr(&global[..dims])),
                CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR => Ok(arr(&local[..dims])),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

/// `clRemapCommandBufferKHR` (cl_khr_command_buffer_multi_device): a deep copy of
/// `command_buffer` whose commands target `queues` ([`CommandBuffer::remap`]), and the copies
/// of the given command handles.
pub unsafe extern "C" fn clRemapCommandBufferKHR(
    command_buffer: cl_command_buffer_khr,
    automatic: cl_bool,
    num_queues: cl_uint,
    queues: *const cl_command_queue,
    num_handles: cl_uint,
    handles: *const cl_mutable_command_khr,
    handles_ret: *mut cl_mutable_command_khr,
    errcode_ret: *mut cl_int,
) -> cl_command_buffer_khr {
    // SAFETY: handle checks; pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            let cb = obj::<CommandBuffer>(command_buffer)?;
            if num_queues == 0 || queues.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            if (num_handles == 0) != handles.is_null()
                || (num_handles == 0) != handles_ret.is_null()
            {
                return Err(CL_INVALID_VALUE);
            }
            let wanted = slice(handles, num_handles as usize)
                .iter()
                .map(|&h| {
                    let c = obj::<MutableCommand>(h).map_err(|_| CL_INVALID_VALUE)?;
                    cb.owns(c).map_err(|_| CL_INVALID_VALUE)?;
                    Ok(c as *const MutableCommand)
                })
                .collect::<CLResult<Vec<_>>>()?;
            let queues = slice(queues, num_queues as usize)
                .iter()
                .map(|&q| arc::<Queue>(q))
                .collect::<CLResult<Vec<_>>>()?;
            cb.context.check_live()?;
            let (copy, kernels) = cb.remap(automatic != CL_FALSE, queues)?;
            // Written only on success (spec).
            for (i, want) in wanted.iter().enumerate() {
                let (_, remapped) = kernels
                    .iter()
                    .find(|(original, _)| std::ptr::eq(&**original, *want))
                    .ok_or(CL_INVALID_VALUE)?;
                *handles_ret.add(i) = handle(&**remapped);
            }
            Ok(new_handle(copy))
        })
    }
}
