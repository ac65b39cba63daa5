//! `cl_khr_unified_svm` entry points (extension version 0.9.0, as the Khronos headers declare
//! it), reached through `clGetExtensionFunctionAddressForPlatform`: allocation of an SVM type
//! with properties, free with properties, the pointer queries and the type suggestion. The
//! SVM types and the allocations are the runtime's (`svm.rs`); the extension's changes to the
//! SVM commands and kernel arguments live beside those (`svm.rs` here, `command.rs` and
//! `kernel.rs` in the runtime).
#![allow(non_snake_case)]

use std::ffi::c_void;

use ferrocl_runtime::context::Context;
use ferrocl_runtime::platform::Device;
use ferrocl_runtime::svm::{SvmLevel, UnifiedProperties};
use ferrocl_runtime::CLResult;
use opencl_sys::*;

use crate::util::*;

/// The names this module answers for in `clGetExtensionFunctionAddress*` (NULL while the
/// device has no SVM).
pub fn extension_function(name: &[u8]) -> Option<*mut c_void> {
    Some(match name {
        b"clSVMAllocWithPropertiesKHR" => clSVMAllocWithPropertiesKHR as *mut c_void,
        b"clSVMFreeWithPropertiesKHR" => clSVMFreeWithPropertiesKHR as *mut c_void,
        b"clGetSVMPointerInfoKHR" => clGetSVMPointerInfoKHR as *mut c_void,
        b"clGetSVMSuggestedTypeIndexKHR" => clGetSVMSuggestedTypeIndexKHR as *mut c_void,
        _ => return None,
    })
}

/// Every access flag the extension defines.
const ACCESS_FLAGS: cl_svm_alloc_access_flags_khr = CL_SVM_ALLOC_ACCESS_HOST_NOREAD_KHR
    | CL_SVM_ALLOC_ACCESS_HOST_NOWRITE_KHR
    | CL_SVM_ALLOC_ACCESS_DEVICE_NOREAD_KHR
    | CL_SVM_ALLOC_ACCESS_DEVICE_NOWRITE_KHR;

/// The context of a call, CL_INVALID_OPERATION if its devices have no SVM (the extension is
/// not reported then).
unsafe fn svm_context<'a>(context: cl_context) -> CLResult<&'a Context> {
    // SAFETY: handle check.
    let ctx = unsafe { obj::<Context>(context)? };
    if ctx.svm_level() == SvmLevel::Off {
        return Err(CL_INVALID_OPERATION);
    }
    Ok(ctx)
}

/// The allocation properties of a zero-terminated list (NULL: none), for SVM type
/// `type_index`: CL_INVALID_PROPERTY for an unknown or repeated name, a device not of the
/// context, or access flags the extension does not define. The alignment is checked by the
/// registry (`UnifiedProperties::check_alignment`).
unsafe fn alloc_properties(
    ctx: &Context,
    list: *const cl_svm_alloc_properties_khr,
    type_index: u32,
) -> CLResult<UnifiedProperties> {
    // SAFETY: zero-terminated list (caller contract).
    let (pairs, raw) = unsafe { properties(list) };
    let mut out = UnifiedProperties {
        type_index,
        list: raw,
        ..UnifiedProperties::default()
    };
    let mut seen = Vec::new();
    for (name, value) in pairs {
        if seen.contains(&name) {
            return Err(CL_INVALID_PROPERTY);
        }
        seen.push(name);
        match name {
            CL_SVM_ALLOC_ASSOCIATED_DEVICE_HANDLE_KHR if value == 0 => out.device = 0,
            CL_SVM_ALLOC_ASSOCIATED_DEVICE_HANDLE_KHR => {
                // SAFETY: handle check.
                let d = unsafe { obj::<Device>(value as cl_device_id) }
                    .map_err(|_| CL_INVALID_PROPERTY)?;
                if !ctx.has_device(d) {
                    return Err(CL_INVALID_PROPERTY);
                }
                out.device = value as usize;
            }
            CL_SVM_ALLOC_ACCESS_FLAGS_KHR if value & !ACCESS_FLAGS == 0 => out.access = value,
            CL_SVM_ALLOC_ALIGNMENT_KHR => out.alignment = value as usize,
            _ => return Err(CL_INVALID_PROPERTY),
        }
    }
    Ok(out)
}

pub unsafe extern "C" fn clSVMAllocWithPropertiesKHR(
    context: cl_context,
    properties: *const cl_svm_alloc_properties_khr,
    svm_type_index: cl_uint,
    size: usize,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: handle checks and API contract.
    unsafe {
        create(errcode_ret, || {
            let ctx = svm_context(context)?;
            ctx.check_live()?;
            let props = alloc_properties(ctx, properties, svm_type_index)?;
            let p = ctx.svm.alloc_unified(ctx.svm_level(), props, size)?;
            Ok(p.cast())
        })
    }
}

pub unsafe extern "C" fn clSVMFreeWithPropertiesKHR(
    context: cl_context,
    free_properties: *const cl_svm_free_properties_khr,
    flags: cl_svm_free_flags_khr,
    ptr: *mut c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; a zero-terminated list (API contract).
        unsafe {
            let ctx = svm_context(context)?;
            // The extension defines no free property and no free flag.
            if !properties(free_properties).0.is_empty() {
                return Err(CL_INVALID_PROPERTY);
            }
            if flags != 0 {
                return Err(CL_INVALID_VALUE);
            }
            if ptr.is_null() || ctx.svm.free(ptr as usize) {
                Ok(())
            } else {
                Err(CL_INVALID_VALUE)
            }
        }
    })
}

pub unsafe extern "C" fn clGetSVMPointerInfoKHR(
    context: cl_context,
    device: cl_device_id,
    ptr: *const c_void,
    param_name: cl_svm_pointer_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; outputs per the API contract.
        unsafe {
            let ctx = svm_context(context)?;
            if !device.is_null() {
                let d = obj::<Device>(device).map_err(|_| CL_INVALID_DEVICE)?;
                if !ctx.has_device(d) {
                    return Err(CL_INVALID_DEVICE);
                }
            }
            let level = ctx.svm_level();
            // Only SVM allocations (of either API) answer; USM ones and other memory get the
            // defaults the extension gives for "not an SVM allocation".
            let found = ctx
                .svm
                .find(ptr as usize)
                .and_then(|a| a.svm_type_index(level).map(|i| (a, i)));
            let (allocation, type_index) = found.unzip();
            let unified = allocation.as_ref().and_then(|a| a.unified.as_ref());
            // Every device of a context has the same SVM types, so the capabilities do not
            // depend on `device`.
            let val = match param_name {
                CL_SVM_INFO_TYPE_INDEX_KHR => Ok(v(type_index.unwrap_or(cl_uint::MAX))),
                CL_SVM_INFO_CAPABILITIES_KHR => Ok(v(type_index
                    .and_then(|i| level.type_capabilities(i))
                    .unwrap_or(0))),
                CL_SVM_INFO_PROPERTIES_KHR => Ok(arr(unified.map_or(&[][..], |u| &u.list))),
                CL_SVM_INFO_ACCESS_FLAGS_KHR => Ok(v(unified.map_or(0, |u| u.access))),
                CL_SVM_INFO_BASE_PTR_KHR => {
                    Ok(v(allocation.as_ref().map_or(0, |a| a.base()) as *mut c_void))
                }
                CL_SVM_INFO_SIZE_KHR => Ok(v(allocation.as_ref().map_or(0, |a| a.size()))),
                CL_SVM_INFO_ASSOCIATED_DEVICE_HANDLE_KHR => Ok(v(allocation
                    .as_ref()
                    .map_or(0, |a| a.device)
                    as cl_device_id)),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clGetSVMSuggestedTypeIndexKHR(
    context: cl_context,
    required_capabilities: cl_svm_capabilities_khr,
    desired_capabilities: cl_svm_capabilities_khr,
    properties: *const cl_svm_alloc_properties_khr,
    _size: usize,
    suggested_svm_type_index: *mut cl_uint,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; the list and the output per the API contract.
        unsafe {
            let ctx = svm_context(context)?;
            let props = alloc_properties(ctx, properties, 0)?;
            props.check_alignment()?;
            if suggested_svm_type_index.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            *suggested_svm_type_index = suggest_type(
                ctx.svm_level(),
                required_capabilities,
                desired_capabilities,
                props.device != 0,
            );
            Ok(())
        }
    })
}

/// The SVM type for `required` capabilities (`CL_UINT_MAX` if none has them all): the one with
/// the most of `desired`, then, without an associated device, one that needs none, then the
/// first in the list. Every size fits every type here (host memory), so the size plays no part.
fn suggest_type(
    level: SvmLevel,
    required: cl_svm_capabilities_khr,
    desired: cl_svm_capabilities_khr,
    has_device: bool,
) -> cl_uint {
    let rank = |caps: cl_svm_capabilities_khr| {
        let unassociated = caps & CL_SVM_CAPABILITY_DEVICE_UNASSOCIATED_KHR != 0;
        ((caps & desired).count_ones(), has_device || unassociated)
    };
    level
        .svm_types()
        .iter()
        .map(|t| t.capabilities())
        .enumerate()
        .filter(|&(_, caps)| caps & required == required)
        // max_by_key keeps the last of equals: rank in reverse order to keep the first.
        .rev()
        .max_by_key(|&(_, caps)| rank(caps))
        .map_or(cl_uint::MAX, |(i, _)| i as cl_uint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_meet_the_requirements_and_prefer_the_desired() {
        let fine = SvmLevel::FineGrain;
        // Only the system type is system-allocated.
        assert_eq!(
            suggest_type(fine, CL_SVM_CAPABILITY_SYSTEM_ALLOCATED_KHR, 0, false),
            5
        );
        // Device ownership needs the device type, associated device or not.
        assert_eq!(
            suggest_type(fine, CL_SVM_CAPABILITY_DEVICE_OWNED_KHR, 0, false),
            2
        );
        // Device read alone: the first type, coarse-grain buffers.
        assert_eq!(
            suggest_type(fine, CL_SVM_CAPABILITY_DEVICE_READ_KHR, 0, true),
            0
        );
        // Desiring host reads moves it to fine grain, the first type with them.
        assert_eq!(
            suggest_type(
                fine,
                CL_SVM_CAPABILITY_DEVICE_READ_KHR,
                CL_SVM_CAPABILITY_HOST_READ_KHR,
                true
            ),
            1
        );
        assert_eq!(suggest_type(fine, 1 << 40, 0, false), cl_uint::MAX);
        // Coarse grain has no fine-grain type: host reads come from the host type (index 2
        // in its shorter list).
        assert_eq!(
            suggest_type(
                SvmLevel::CoarseGrain,
                CL_SVM_CAPABILITY_HOST_READ_KHR,
                0,
                false
            ),
            2
        );
    }
}
