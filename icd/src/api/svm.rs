//! Shared virtual memory entry points: allocation and free, the SVM commands (memcpy, fill,
//! map/unmap, migrate, free), SVM kernel arguments and `clSetKernelExecInfo`. The registry and
//! the commands are the runtime's (`svm.rs`, `command.rs`).
#![allow(non_snake_case, clippy::too_many_arguments)]

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_runtime::command::{Command, HostPtr, SvmFreeCallback};
use ferrocl_runtime::context::Context;
use ferrocl_runtime::kernel::Kernel;
use ferrocl_runtime::queue::Queue;
use ferrocl_runtime::svm::SvmLevel;
use ferrocl_runtime::CLResult;
use opencl_sys::*;

use super::queue::submit;
use crate::util::*;

/// The queue of an SVM or USM command, CL_INVALID_OPERATION if its context has neither.
pub(super) unsafe fn svm_queue(q: cl_command_queue) -> CLResult<Arc<Queue>> {
    // SAFETY: handle check.
    let q = unsafe { arc::<Queue>(q)? };
    if q.context.svm_level() == SvmLevel::Off {
        return Err(CL_INVALID_OPERATION);
    }
    Ok(q)
}

/// A command's wait list and event out-pointer, as the C API passes them.
pub(super) type WaitAndEvent = (cl_uint, *const cl_event, *mut cl_event);

/// `clEnqueueSVMMemcpy` and `clEnqueueMemcpyINTEL` (`command_type`).
pub(super) unsafe fn enqueue_memcpy(
    command_queue: cl_command_queue,
    command_type: cl_command_type,
    blocking: cl_bool,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    (num_events, events, event): WaitAndEvent,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = svm_queue(command_queue)?;
            let wait = wait_list(num_events, events, &q.context)?;
            // cl_khr_unified_svm lets clEnqueueSVMMemcpy take NULL pointers for no bytes; USM
            // does not.
            let empty = size == 0 && command_type == CL_COMMAND_SVM_MEMCPY as cl_command_type;
            let (dst, src) = (
                HostPtr::or_empty(dst, empty)?,
                HostPtr::or_empty(src, empty)?,
            );
            let command = Command::svm_memcpy(&q.context, command_type, dst, src, size)?;
            submit(&q, command, wait, blocking != 0, event)
        }
    })
}

/// `clEnqueueSVMMemFill`, `clEnqueueMemFillINTEL` and `clEnqueueMemsetINTEL` (`command_type`).
pub(super) unsafe fn enqueue_fill(
    command_queue: cl_command_queue,
    command_type: cl_command_type,
    dst: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    (num_events, events, event): WaitAndEvent,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = svm_queue(command_queue)?;
            let wait = wait_list(num_events, events, &q.context)?;
            if pattern.is_null() || pattern_size == 0 {
                return Err(CL_INVALID_VALUE);
            }
            let pattern = slice(pattern as *const u8, pattern_size);
            // As for the copy: a NULL destination for no bytes (clEnqueueSVMMemFill only).
            let empty = size == 0 && command_type == CL_COMMAND_SVM_MEMFILL as cl_command_type;
            let dst = HostPtr::or_empty(dst, empty)?;
            let command = Command::svm_mem_fill(&q.context, command_type, dst, pattern, size)?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clSVMAlloc(
    context: cl_context,
    flags: cl_svm_mem_flags,
    size: usize,
    alignment: cl_uint,
) -> *mut c_void {
    // SAFETY: handle check.
    let Ok(ctx) = (unsafe { obj::<Context>(context) }) else {
        return std::ptr::null_mut();
    };
    if ctx.check_live().is_err() {
        return std::ptr::null_mut();
    }
    // Every error is a NULL result (the spec gives clSVMAlloc no error code).
    ctx.svm
        .alloc(
            ctx.svm_level(),
            flags,
            size,
            alignment,
            ctx.max_mem_alloc_size(),
        )
        .map_or(std::ptr::null_mut(), |p| p.cast())
}

pub unsafe extern "C" fn clSVMFree(context: cl_context, svm_pointer: *mut c_void) {
    // SAFETY: handle check.
    if let Ok(ctx) = unsafe { obj::<Context>(context) } {
        // NULL, a pointer freed before and a pointer from elsewhere are no-ops.
        ctx.svm.free(svm_pointer as usize);
    }
}

pub unsafe extern "C" fn clEnqueueSVMFree(
    command_queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *mut c_void,
    pfn_free_func: Option<SvmFreeCallback>,
    user_data: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = svm_queue(command_queue)?;
            if (num_svm_pointers == 0) != svm_pointers.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let pointers: Vec<usize> = slice(svm_pointers, num_svm_pointers as usize)
                .iter()
                .map(|&p| p as usize)
                .collect();
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::svm_free(
                q.context.clone(),
                handle(&*q) as usize,
                pointers,
                pfn_free_func.map(|f| (f, user_data as usize)),
            );
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueSVMMemcpy(
    command_queue: cl_command_queue,
    blocking_copy: cl_bool,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: API contract.
    unsafe {
        enqueue_memcpy(
            command_queue,
            CL_COMMAND_SVM_MEMCPY as cl_command_type,
            blocking_copy,
            dst_ptr,
            src_ptr,
            size,
            (num_events_in_wait_list, event_wait_list, event),
        )
    }
}

pub unsafe extern "C" fn clEnqueueSVMMemFill(
    command_queue: cl_command_queue,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: API contract.
    unsafe {
        enqueue_fill(
            command_queue,
            CL_COMMAND_SVM_MEMFILL as cl_command_type,
            svm_ptr,
            pattern,
            pattern_size,
            size,
            (num_events_in_wait_list, event_wait_list, event),
        )
    }
}

pub unsafe extern "C" fn clEnqueueSVMMap(
    command_queue: cl_command_queue,
    blocking_map: cl_bool,
    flags: cl_map_flags,
    svm_ptr: *mut c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = svm_queue(command_queue)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::svm_map(&q.context, flags, svm_ptr as usize, size)?;
            submit(&q, command, wait, blocking_map != 0, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueSVMUnmap(
    command_queue: cl_command_queue,
    svm_ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = svm_queue(command_queue)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::svm_unmap(&q.context, svm_ptr as usize)?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueSVMMigrateMem(
    command_queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *const c_void,
    sizes: *const usize,
    flags: cl_mem_migration_flags,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = svm_queue(command_queue)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            if num_svm_pointers == 0 || svm_pointers.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let n = num_svm_pointers as usize;
            let pointers = slice(svm_pointers, n);
            // A size of 0 (or no sizes) names the whole allocation from the pointer on; a NULL
            // pointer with no size is skipped (cl_khr_unified_svm's change to the command).
            let regions: Vec<(usize, usize)> = (0..n)
                .map(|i| {
                    let size = if sizes.is_null() { 0 } else { *sizes.add(i) };
                    (pointers[i] as usize, size)
                })
                .filter(|&region| region != (0, 0))
                .collect();
            let command = Command::svm_migrate(
                &q.context,
                CL_COMMAND_SVM_MIGRATE_MEM as cl_command_type,
                &regions,
                flags,
            )?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clSetKernelArgSVMPointer(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_value: *const c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let k = unsafe { obj::<Kernel>(kernel)? };
        k.set_arg_svm_pointer(arg_index as usize, arg_value as usize)
    })
}

/// What `clSetKernelExecInfo` does to `k` (also the exec info of a
/// `cl_mutable_dispatch_config_khr`).
///
/// # Safety
/// `param_value` is NULL or readable for `param_value_size` bytes (API contract).
pub(crate) unsafe fn set_exec_info(
    k: &Kernel,
    param_name: cl_kernel_exec_info,
    param_value_size: usize,
    param_value: *const c_void,
) -> CLResult<()> {
    if !param_value.is_null() {
        // SAFETY: param_value_size bytes (caller contract).
        let value = unsafe { slice(param_value as *const u8, param_value_size) };
        if let Some(r) = super::usm::set_kernel_exec_info(k, param_name, value) {
            return r;
        }
    }
    match param_name {
        // No pointers (size 0, NULL) unsets the ones set before.
        CL_KERNEL_EXEC_INFO_SVM_PTRS if param_value_size == 0 && param_value.is_null() => {
            k.set_svm_pointers(Vec::new())
        }
        _ if param_value.is_null() => Err(CL_INVALID_VALUE),
        CL_KERNEL_EXEC_INFO_SVM_PTRS => {
            let size = std::mem::size_of::<*const c_void>();
            if param_value_size == 0 || !param_value_size.is_multiple_of(size) {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: param_value_size bytes of pointers (caller contract).
            let pointers =
                unsafe { slice(param_value as *const *const c_void, param_value_size / size) };
            k.set_svm_pointers(pointers.iter().map(|&p| p as usize).collect())
        }
        CL_KERNEL_EXEC_INFO_SVM_INDIRECT_ACCESS_KHR => {
            if param_value_size != std::mem::size_of::<cl_bool>() {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: one cl_bool (checked size, caller contract).
            let on = unsafe { *(param_value as *const cl_bool) } != 0;
            k.set_svm_indirect_access(on)
        }
        CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM => {
            if param_value_size != std::mem::size_of::<cl_bool>() {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: one cl_bool (checked size, caller contract).
            let on = unsafe { *(param_value as *const cl_bool) } != 0;
            k.set_fine_grain_system(on)
        }
        _ => Err(CL_INVALID_VALUE),
    }
}

pub unsafe extern "C" fn clSetKernelExecInfo(
    kernel: cl_kernel,
    param_name: cl_kernel_exec_info,
    param_value_size: usize,
    param_value: *const c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; param_value per the API contract.
        unsafe {
            let k = obj::<Kernel>(kernel)?;
            set_exec_info(k, param_name, param_value_size, param_value)
        }
    })
}
