//! `cl_intel_unified_shared_memory` entry points, reached through
//! `clGetExtensionFunctionAddressForPlatform`: host, device and shared allocations (all host
//! memory on a CPU, in the context's SVM registry), frees, the allocation queries, USM kernel
//! arguments and exec info, and the fill, copy, migrate and advice commands.
#![allow(non_snake_case, clippy::too_many_arguments)]

use std::ffi::c_void;
use std::sync::Arc;

use ferrocl_runtime::command::Command;
use ferrocl_runtime::context::Context;
use ferrocl_runtime::kernel::Kernel;
use ferrocl_runtime::platform::Device;
use ferrocl_runtime::svm::{AllocationKind, SvmLevel};
use ferrocl_runtime::CLResult;
use opencl_sys::*;

use super::queue::submit;
use super::svm::{enqueue_fill, enqueue_memcpy, svm_queue, WaitAndEvent};
use crate::util::*;

/// The names this module answers for in `clGetExtensionFunctionAddress*` (NULL while the
/// extension is off).
pub fn extension_function(name: &[u8]) -> Option<*mut c_void> {
    Some(match name {
        b"clHostMemAllocINTEL" => clHostMemAllocINTEL as *mut c_void,
        b"clDeviceMemAllocINTEL" => clDeviceMemAllocINTEL as *mut c_void,
        b"clSharedMemAllocINTEL" => clSharedMemAllocINTEL as *mut c_void,
        b"clMemFreeINTEL" => clMemFreeINTEL as *mut c_void,
        b"clMemBlockingFreeINTEL" => clMemBlockingFreeINTEL as *mut c_void,
        b"clGetMemAllocInfoINTEL" => clGetMemAllocInfoINTEL as *mut c_void,
        b"clSetKernelArgMemPointerINTEL" => clSetKernelArgMemPointerINTEL as *mut c_void,
        b"clEnqueueMemFillINTEL" => clEnqueueMemFillINTEL as *mut c_void,
        b"clEnqueueMemsetINTEL" => clEnqueueMemsetINTEL as *mut c_void,
        b"clEnqueueMemcpyINTEL" => clEnqueueMemcpyINTEL as *mut c_void,
        b"clEnqueueMigrateMemINTEL" => clEnqueueMigrateMemINTEL as *mut c_void,
        b"clEnqueueMemAdviseINTEL" => clEnqueueMemAdviseINTEL as *mut c_void,
        _ => return None,
    })
}

/// `CL_MEM_ALLOC_FLAGS_INTEL` as a `clGetMemAllocInfoINTEL` query: the extension gives the
/// property name and the query one value, opencl-sys types it as a property.
const ALLOC_FLAGS_QUERY: cl_mem_info_intel = CL_MEM_ALLOC_FLAGS_INTEL as cl_mem_info_intel;

/// The USM context of a call, CL_INVALID_OPERATION if its devices have no USM.
unsafe fn usm_context<'a>(context: cl_context) -> CLResult<&'a Context> {
    // SAFETY: handle check.
    let ctx = unsafe { obj::<Context>(context)? };
    if ctx.svm_level() == SvmLevel::Off {
        return Err(CL_INVALID_OPERATION);
    }
    Ok(ctx)
}

/// `CL_MEM_ALLOC_FLAGS_INTEL` from a zero-terminated property list (0 when absent);
/// CL_INVALID_PROPERTY for any other name or a repeated one.
unsafe fn alloc_flags(list: *const cl_mem_properties_intel) -> CLResult<cl_bitfield> {
    // SAFETY: zero-terminated list (caller contract).
    let (pairs, _) = unsafe { properties(list) };
    let mut flags = None;
    for (name, value) in pairs {
        if name != CL_MEM_ALLOC_FLAGS_INTEL || flags.is_some() {
            return Err(CL_INVALID_PROPERTY);
        }
        flags = Some(value);
    }
    Ok(flags.unwrap_or(0))
}

/// The device of a device or shared allocation, checked to belong to `ctx`.
unsafe fn context_device(ctx: &Context, device: cl_device_id) -> CLResult<Arc<Device>> {
    // SAFETY: handle check.
    let d = unsafe { arc::<Device>(device) }.map_err(|_| CL_INVALID_DEVICE)?;
    if !ctx.has_device(&d) {
        return Err(CL_INVALID_DEVICE);
    }
    Ok(d)
}

unsafe fn usm_alloc(
    context: cl_context,
    device: Option<cl_device_id>,
    kind: AllocationKind,
    properties: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
) -> CLResult<*mut c_void> {
    // SAFETY: handle checks and API contract.
    unsafe {
        let ctx = usm_context(context)?;
        ctx.check_live()?;
        let (device_handle, max_alloc) = match device {
            Some(d) => {
                let d = context_device(ctx, d)?;
                (handle(&*d) as usize, d.config.max_mem_alloc_size)
            }
            None => (0, ctx.max_mem_alloc_size()),
        };
        let flags = alloc_flags(properties)?;
        let p = ctx
            .svm
            .alloc_usm(kind, device_handle, flags, size, alignment, max_alloc)?;
        Ok(p.cast())
    }
}

pub unsafe extern "C" fn clHostMemAllocINTEL(
    context: cl_context,
    properties: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: API contract.
    unsafe {
        create(errcode_ret, || {
            usm_alloc(
                context,
                None,
                AllocationKind::UsmHost,
                properties,
                size,
                alignment,
            )
        })
    }
}

pub unsafe extern "C" fn clDeviceMemAllocINTEL(
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: API contract.
    unsafe {
        create(errcode_ret, || {
            usm_alloc(
                context,
                Some(device),
                AllocationKind::UsmDevice,
                properties,
                size,
                alignment,
            )
        })
    }
}

pub unsafe extern "C" fn clSharedMemAllocINTEL(
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: API contract.
    unsafe {
        create(errcode_ret, || {
            // A NULL device: an allocation with no associated device.
            let device = (!device.is_null()).then_some(device);
            usm_alloc(
                context,
                device,
                AllocationKind::UsmShared,
                properties,
                size,
                alignment,
            )
        })
    }
}

pub unsafe extern "C" fn clMemFreeINTEL(context: cl_context, ptr: *mut c_void) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let ctx = unsafe { usm_context(context)? };
        // Commands still using the memory hold it: the free is deferred until they end.
        ctx.svm.free_usm(ptr as usize).map(drop)
    })
}

pub unsafe extern "C" fn clMemBlockingFreeINTEL(context: cl_context, ptr: *mut c_void) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let ctx = unsafe { usm_context(context)? };
        if let Some(allocation) = ctx.svm.free_usm(ptr as usize)? {
            // Every enqueued command that uses the allocation holds it until it completes.
            let mut wait = std::time::Duration::from_micros(10);
            while Arc::strong_count(&allocation) > 1 {
                std::thread::sleep(wait);
                wait = (wait * 2).min(std::time::Duration::from_millis(1));
            }
        }
        Ok(())
    })
}

pub unsafe extern "C" fn clGetMemAllocInfoINTEL(
    context: cl_context,
    ptr: *const c_void,
    param_name: cl_mem_info_intel,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let ctx = usm_context(context)?;
            // SVM allocations are not USM ones: CL_MEM_TYPE_UNKNOWN_INTEL, as for any pointer.
            let allocation = ctx.svm.find(ptr as usize).filter(|a| !a.kind.is_svm());
            let val = match param_name {
                CL_MEM_ALLOC_TYPE_INTEL => Ok(v(allocation
                    .as_ref()
                    .map_or(CL_MEM_TYPE_UNKNOWN_INTEL, |a| a.kind.usm_type()))),
                CL_MEM_ALLOC_BASE_PTR_INTEL => {
                    Ok(v(allocation.as_ref().map_or(0, |a| a.base()) as *mut c_void))
                }
                CL_MEM_ALLOC_SIZE_INTEL => Ok(v(allocation.as_ref().map_or(0, |a| a.size()))),
                CL_MEM_ALLOC_DEVICE_INTEL => Ok(v(
                    allocation.as_ref().map_or(0, |a| a.device) as cl_device_id
                )),
                ALLOC_FLAGS_QUERY => {
                    let flags: cl_mem_alloc_flags_intel =
                        allocation.as_ref().map_or(0, |a| a.flags);
                    Ok(v(flags))
                }
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clSetKernelArgMemPointerINTEL(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_value: *const c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let k = unsafe { obj::<Kernel>(kernel)? };
        k.set_arg_usm_pointer(arg_index as usize, arg_value as usize)
    })
}

/// The USM `clSetKernelExecInfo` names; None for the others.
pub fn set_kernel_exec_info(
    k: &Kernel,
    param_name: cl_kernel_exec_info,
    value: &[u8],
) -> Option<CLResult<()>> {
    let indirect = |kind| {
        let on = match value.try_into() {
            Ok(bytes) => cl_bool::from_ne_bytes(bytes) != 0,
            Err(_) => return Err(CL_INVALID_VALUE),
        };
        k.set_indirect_access(kind, on)
    };
    Some(match param_name {
        CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL => {
            let size = std::mem::size_of::<usize>();
            if !value.len().is_multiple_of(size) {
                return Some(Err(CL_INVALID_VALUE));
            }
            let pointers = value
                .chunks_exact(size)
                .map(|c| usize::from_ne_bytes(c.try_into().expect("pointer-sized chunk")))
                .collect();
            k.set_usm_pointers(pointers)
        }
        CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL => indirect(AllocationKind::UsmHost),
        CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL => indirect(AllocationKind::UsmDevice),
        CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL => indirect(AllocationKind::UsmShared),
        _ => return None,
    })
}

pub unsafe extern "C" fn clEnqueueMemFillINTEL(
    command_queue: cl_command_queue,
    dst_ptr: *mut c_void,
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
            CL_COMMAND_MEMFILL_INTEL,
            dst_ptr,
            pattern,
            pattern_size,
            size,
            (num_events_in_wait_list, event_wait_list, event),
        )
    }
}

/// The deprecated byte fill of the extension's first revisions: `value` as an unsigned char.
pub unsafe extern "C" fn clEnqueueMemsetINTEL(
    command_queue: cl_command_queue,
    dst_ptr: *mut c_void,
    value: cl_int,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let byte = value as u8;
    // SAFETY: API contract; the pattern lives through the call, which copies it.
    unsafe {
        clEnqueueMemFillINTEL(
            command_queue,
            dst_ptr,
            (&byte as *const u8).cast(),
            1,
            size,
            num_events_in_wait_list,
            event_wait_list,
            event,
        )
    }
}

pub unsafe extern "C" fn clEnqueueMemcpyINTEL(
    command_queue: cl_command_queue,
    blocking: cl_bool,
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
            CL_COMMAND_MEMCPY_INTEL,
            blocking,
            dst_ptr,
            src_ptr,
            size,
            (num_events_in_wait_list, event_wait_list, event),
        )
    }
}

pub unsafe extern "C" fn clEnqueueMigrateMemINTEL(
    command_queue: cl_command_queue,
    ptr: *const c_void,
    size: usize,
    flags: cl_mem_migration_flags,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: API contract.
    unsafe {
        enqueue_ordering(
            command_queue,
            (num_events_in_wait_list, event_wait_list, event),
            |context| {
                let regions = [(ptr as usize, size)];
                Command::svm_migrate(context, CL_COMMAND_MIGRATEMEM_INTEL, &regions, flags)
            },
        )
    }
}

/// Advice is a placement hint; host and device share memory, so every hint is accepted and
/// has nothing to change (the extension: an unsupported hint is ignored).
pub unsafe extern "C" fn clEnqueueMemAdviseINTEL(
    command_queue: cl_command_queue,
    ptr: *const c_void,
    size: usize,
    _advice: cl_mem_advice_intel,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: API contract.
    unsafe {
        enqueue_ordering(
            command_queue,
            (num_events_in_wait_list, event_wait_list, event),
            |context| {
                let regions = [(ptr as usize, size)];
                Command::svm_order(context, CL_COMMAND_MEMADVISE_INTEL, &regions)
            },
        )
    }
}

/// Migration and advice: commands that only order, built by `command` once the queue and
/// wait list are checked.
unsafe fn enqueue_ordering(
    command_queue: cl_command_queue,
    (num_events, events, event): WaitAndEvent,
    command: impl FnOnce(&Context) -> CLResult<Command>,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let q = svm_queue(command_queue)?;
            let wait = wait_list(num_events, events, &q.context)?;
            let command = command(&q.context)?;
            submit(&q, command, wait, false, event)
        }
    })
}
