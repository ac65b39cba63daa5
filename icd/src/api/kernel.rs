//! Kernel entry points: creation, arguments, kernel/arg/work-group info, and the NDRange and
//! task commands.
#![allow(non_snake_case, clippy::too_many_arguments)]

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use ferrocl_runtime::command::Command;
use ferrocl_runtime::device_queue::DeviceQueue;
use ferrocl_runtime::frontend::{AccessQualifier, AddressQualifier, ArgKind};
use ferrocl_runtime::kernel::{ArgValue, Kernel};
use ferrocl_runtime::memory::Mem;
use ferrocl_runtime::platform::Device;
use ferrocl_runtime::program::Program;
use ferrocl_runtime::queue::Queue;
use ferrocl_runtime::sampler::Sampler;
use ferrocl_runtime::CLResult;
use ferrocl_runtime::ClObject;
use opencl_sys::*;

use super::queue::submit;
use crate::util::*;

pub unsafe extern "C" fn clCreateKernel(
    program: cl_program,
    kernel_name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    // SAFETY: handle check; name NUL-terminated (API contract).
    unsafe {
        create(errcode_ret, || {
            let p = arc::<Program>(program)?;
            p.context.check_live()?;
            if kernel_name.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let name = CStr::from_ptr(kernel_name)
                .to_str()
                .map_err(|_| CL_INVALID_KERNEL_NAME)?;
            Ok(new_handle(Kernel::new(&p, name)?))
        })
    }
}

pub unsafe extern "C" fn clCreateKernelsInProgram(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let p = arc::<Program>(program)?;
            p.context.check_live()?;
            let built = p.built().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
            // Not the kernels that run blocks (device-side enqueue).
            let names: Vec<String> = built
                .code
                .kernels()
                .iter()
                .filter(|k| !k.info.block_invoke)
                .map(|k| k.info.name.clone())
                .collect();
            if !kernels.is_null() {
                if (num_kernels as usize) < names.len() {
                    return Err(CL_INVALID_VALUE);
                }
                for (i, n) in names.iter().enumerate() {
                    *kernels.add(i) = new_handle(Kernel::new(&p, n)?);
                }
            }
            if !num_kernels_ret.is_null() {
                *num_kernels_ret = names.len() as cl_uint;
            }
            Ok(())
        }
    })
}

pub unsafe extern "C" fn clCloneKernel(
    source_kernel: cl_kernel,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    // SAFETY: handle check.
    unsafe {
        create(errcode_ret, || {
            let k = obj::<Kernel>(source_kernel)?;
            k.program.context.check_live()?;
            Ok(new_handle(k.clone_kernel()))
        })
    }
}

pub unsafe extern "C" fn clRetainKernel(kernel: cl_kernel) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { retain::<Kernel>(kernel) })
}

pub unsafe extern "C" fn clReleaseKernel(kernel: cl_kernel) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { release::<Kernel>(kernel) })
}

/// The value `clSetKernelArg` would set for argument `idx` of `k` (also the arguments of a
/// `cl_mutable_dispatch_config_khr`).
///
/// # Safety
/// `arg_value` is NULL or readable for `arg_size` bytes (API contract).
pub(crate) unsafe fn arg_value(
    k: &Kernel,
    idx: usize,
    arg_size: usize,
    arg_value: *const c_void,
) -> CLResult<ArgValue> {
    // SAFETY: handle checks; arg_value readable for arg_size bytes (caller contract).
    unsafe {
        Ok(match k.arg_kind(idx)? {
            ArgKind::Buffer { .. } => {
                if arg_size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                let h = if arg_value.is_null() {
                    std::ptr::null_mut()
                } else {
                    *(arg_value as *const cl_mem)
                };
                if h.is_null() {
                    ArgValue::Mem(None)
                } else {
                    let m = arc::<Mem>(h)?;
                    // An object of another context: CL_INVALID_CONTEXT (API spec 3.1 §5.9.2).
                    if !Arc::ptr_eq(&m.context, &k.program.context) {
                        return Err(CL_INVALID_CONTEXT);
                    }
                    // A pointer argument takes a buffer, not an image or a pipe.
                    m.expect_buffer()?;
                    ArgValue::Mem(Some(Arc::downgrade(&m)))
                }
            }
            ArgKind::Local => {
                if !arg_value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                // Zero bytes (no local memory) is valid on an OpenCL 3.1 platform, whose
                // version is its device's (API spec 3.1 §5.9.2).
                let config = &k.program.context.devices[0].config;
                if arg_size == 0 && !config.allows_empty_local_args() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                ArgValue::Local(arg_size)
            }
            ArgKind::Value { size, .. } => {
                if arg_size != *size {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                ArgValue::Bytes(slice(arg_value as *const u8, arg_size).to_vec())
            }
            ArgKind::Sampler => {
                if arg_size != std::mem::size_of::<cl_sampler>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_SAMPLER);
                }
                let s = obj::<Sampler>(*(arg_value as *const cl_sampler))?;
                if !Arc::ptr_eq(&s.context, &k.program.context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                ArgValue::Sampler(s.descriptor())
            }
            ArgKind::Image { access, image_type } => {
                if arg_size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_MEM_OBJECT);
                }
                let m = arc::<Mem>(*(arg_value as *const cl_mem))?;
                if !Arc::ptr_eq(&m.context, &k.program.context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                // An image of another type than declared ("not valid for the kernel argument",
                // API spec): a 3D image for an image2d_t, an RGBA image for an
                // image2d_depth_t, ...
                if !m.expect_image()?.fits_argument(*image_type) {
                    return Err(CL_INVALID_MEM_OBJECT);
                }
                // A read-only argument cannot take a write-only image, nor the reverse.
                let refused = match access {
                    AccessQualifier::ReadOnly => CL_MEM_WRITE_ONLY,
                    AccessQualifier::WriteOnly => CL_MEM_READ_ONLY,
                    _ => 0,
                };
                if refused != 0 && m.has_flag(refused) {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                ArgValue::Image(Arc::downgrade(&m))
            }
            // A pipe object, never NULL (the API spec's "must point to a valid memory
            // object"); another memory object is "not valid for the kernel argument"
            // (CL_INVALID_MEM_OBJECT), one of another context CL_INVALID_CONTEXT. Either end
            // of a pipe object may be bound to a read_only or write_only argument.
            ArgKind::Pipe { .. } => {
                if arg_size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_MEM_OBJECT);
                }
                let m = arc::<Mem>(*(arg_value as *const cl_mem))?;
                if !Arc::ptr_eq(&m.context, &k.program.context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                m.expect_pipe()?;
                ArgValue::Pipe(Arc::downgrade(&m))
            }
            // A device queue of the kernel's context (API spec: CL_INVALID_DEVICE_QUEUE for
            // anything else, a host queue included).
            ArgKind::Queue => {
                if arg_size != std::mem::size_of::<cl_command_queue>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_DEVICE_QUEUE);
                }
                let q = arc::<DeviceQueue>(*(arg_value as *const cl_command_queue))
                    .map_err(|_| CL_INVALID_DEVICE_QUEUE)?;
                // A device queue of another context: CL_INVALID_CONTEXT, as for memory objects
                // and samplers (API spec 3.1 §5.9.2).
                if !Arc::ptr_eq(&q.context, &k.program.context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                ArgValue::Queue(Arc::downgrade(&q))
            }
            // The literal of a block's kernel, which applications cannot create.
            ArgKind::BlockLiteral => return Err(CL_INVALID_ARG_INDEX),
        })
    }
}

pub unsafe extern "C" fn clSetKernelArg(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; arg_value readable for arg_size bytes (API contract).
        unsafe {
            let k = obj::<Kernel>(kernel)?;
            let idx = arg_index as usize;
            let value = self::arg_value(k, idx, arg_size, arg_value)?;
            k.set_arg(idx, arg_size, value)
        }
    })
}

pub unsafe extern "C" fn clGetKernelInfo(
    kernel: cl_kernel,
    param_name: cl_kernel_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let k = obj::<Kernel>(kernel)?;
            let val = match param_name {
                CL_KERNEL_FUNCTION_NAME => Ok(s(&k.info().name)),
                CL_KERNEL_NUM_ARGS => Ok(v(k.info().args.len() as cl_uint)),
                CL_KERNEL_REFERENCE_COUNT => Ok(v(k.base().ref_count())),
                CL_KERNEL_CONTEXT => Ok(v(handle(&*k.program.context))),
                CL_KERNEL_PROGRAM => Ok(v(handle(&*k.program))),
                CL_KERNEL_ATTRIBUTES => Ok(s(&k.attributes())),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clGetKernelArgInfo(
    kernel: cl_kernel,
    arg_indx: cl_uint,
    param_name: cl_kernel_arg_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let k = obj::<Kernel>(kernel)?;
            let arg = k
                .info()
                .args
                .get(arg_indx as usize)
                .ok_or(CL_INVALID_ARG_INDEX)?;
            if !k.built.options.kernel_arg_info {
                return Err(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
            }
            let val = match param_name {
                CL_KERNEL_ARG_ADDRESS_QUALIFIER => Ok(v(match arg.address {
                    AddressQualifier::Global => CL_KERNEL_ARG_ADDRESS_GLOBAL,
                    AddressQualifier::Constant => CL_KERNEL_ARG_ADDRESS_CONSTANT,
                    AddressQualifier::Local => CL_KERNEL_ARG_ADDRESS_LOCAL,
                    AddressQualifier::Private => CL_KERNEL_ARG_ADDRESS_PRIVATE,
                }
                    as cl_kernel_arg_address_qualifier)),
                CL_KERNEL_ARG_ACCESS_QUALIFIER => Ok(v(match arg.access {
                    AccessQualifier::ReadOnly => CL_KERNEL_ARG_ACCESS_READ_ONLY,
                    AccessQualifier::WriteOnly => CL_KERNEL_ARG_ACCESS_WRITE_ONLY,
                    AccessQualifier::ReadWrite => CL_KERNEL_ARG_ACCESS_READ_WRITE,
                    AccessQualifier::None => CL_KERNEL_ARG_ACCESS_NONE,
                }
                    as cl_kernel_arg_access_qualifier)),
                CL_KERNEL_ARG_TYPE_NAME => arg
                    .type_name
                    .as_deref()
                    .map(s)
                    .ok_or(CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
                // A pipe reports PIPE alone, whatever other qualifiers its declaration has
                // (what the Khronos CTS api kernel_arg_info expects).
                CL_KERNEL_ARG_TYPE_QUALIFIER if arg.qualifiers.is_pipe => {
                    Ok(v(CL_KERNEL_ARG_TYPE_PIPE as cl_kernel_arg_type_qualifier))
                }
                CL_KERNEL_ARG_TYPE_QUALIFIER => {
                    let q = arg.qualifiers;
                    let mut bits = CL_KERNEL_ARG_TYPE_NONE as cl_kernel_arg_type_qualifier;
                    if q.is_const {
                        bits |= CL_KERNEL_ARG_TYPE_CONST as cl_kernel_arg_type_qualifier;
                    }
                    if q.is_restrict {
                        bits |= CL_KERNEL_ARG_TYPE_RESTRICT as cl_kernel_arg_type_qualifier;
                    }
                    if q.is_volatile {
                        bits |= CL_KERNEL_ARG_TYPE_VOLATILE as cl_kernel_arg_type_qualifier;
                    }
                    Ok(v(bits))
                }
                CL_KERNEL_ARG_NAME => arg
                    .name
                    .as_deref()
                    .map(s)
                    .ok_or(CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

/// The device a per-device kernel query is about: `device`, which must be in the kernel's
/// context, or with NULL the context's only device.
///
/// # Safety
/// `device` is NULL or a handle the caller passed in.
unsafe fn kernel_device(k: &Kernel, device: cl_device_id) -> CLResult<&Device> {
    if device.is_null() {
        return match k.program.context.devices.as_slice() {
            [only] => Ok(only),
            _ => Err(CL_INVALID_DEVICE),
        };
    }
    // SAFETY: handle check (caller contract).
    let d = unsafe { obj::<Device>(device)? };
    if !k.program.context.has_device(d) {
        return Err(CL_INVALID_DEVICE);
    }
    Ok(d)
}

pub unsafe extern "C" fn clGetKernelWorkGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_work_group_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; outputs per the API contract.
        unsafe {
            let k = obj::<Kernel>(kernel)?;
            let d = kernel_device(k, device)?;
            let val = match param_name {
                CL_KERNEL_WORK_GROUP_SIZE => Ok(v(k.max_work_group_size(d))),
                CL_KERNEL_COMPILE_WORK_GROUP_SIZE => Ok(arr(&k
                    .info()
                    .reqd_work_group_size
                    .map_or([0usize; 3], |r| r.map(|x| x as usize)))),
                CL_KERNEL_LOCAL_MEM_SIZE => Ok(v(k.local_mem_size() as cl_ulong)),
                CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => {
                    Ok(v(d.config.preferred_work_group_size_multiple))
                }
                CL_KERNEL_PRIVATE_MEM_SIZE => Ok(v(k.code().private_mem_size as cl_ulong)),
                // cl_intel_required_subgroup_size, reported with sub-groups.
                CL_KERNEL_SPILL_MEM_SIZE_INTEL if !d.config.sub_group_sizes.is_empty() => {
                    Ok(v(k.code().spill_mem_size as cl_ulong))
                }
                // Only for custom devices and built-in kernels.
                CL_KERNEL_GLOBAL_WORK_SIZE => Err(CL_INVALID_VALUE),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clGetKernelSubGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; inputs and outputs per the API contract.
        unsafe {
            let k = obj::<Kernel>(kernel)?;
            let d = kernel_device(k, device)?;
            if !Kernel::sub_groups_supported(d) {
                return Err(CL_INVALID_OPERATION);
            }
            let size_t = std::mem::size_of::<usize>();
            // The NDRANGE queries take the local size of 1 to 3 dimensions.
            let local_size = || -> CLResult<Vec<usize>> {
                let dims = input_value_size / size_t;
                if input_value.is_null()
                    || !input_value_size.is_multiple_of(size_t)
                    || !(1..=3).contains(&dims)
                {
                    return Err(CL_INVALID_VALUE);
                }
                // SAFETY: readable for input_value_size bytes (API contract).
                let local = std::slice::from_raw_parts(input_value.cast::<usize>(), dims);
                Ok(local.to_vec())
            };
            let val = match param_name {
                CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE => {
                    local_size().map(|l| v(k.max_sub_group_size_for(&l)))
                }
                CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE => {
                    local_size().map(|l| v(k.sub_group_count_for(&l)))
                }
                CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT => {
                    if input_value.is_null() || input_value_size != size_t {
                        Err(CL_INVALID_VALUE)
                    } else {
                        // SAFETY: readable size_t (checked size, API contract).
                        let count = *input_value.cast::<usize>();
                        // The local size has as many dimensions as the output has room for.
                        let dims = if param_value.is_null() {
                            3
                        } else {
                            (param_value_size / size_t).min(3)
                        };
                        if dims == 0 {
                            Err(CL_INVALID_VALUE)
                        } else {
                            Ok(arr(&k.local_size_for_sub_group_count(d, count, dims)))
                        }
                    }
                }
                CL_KERNEL_MAX_NUM_SUB_GROUPS => Ok(v(k.max_num_sub_groups(d))),
                CL_KERNEL_COMPILE_NUM_SUB_GROUPS => Ok(v(k.compile_num_sub_groups())),
                // cl_intel_required_subgroup_size: `intel_reqd_sub_group_size`, or 0.
                CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL => Ok(v(k
                    .info()
                    .required_sub_group_size
                    .map_or(0, |n| n as usize))),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

/// `cl_khr_subgroups`' name for [`clGetKernelSubGroupInfo`].
pub unsafe extern "C" fn clGetKernelSubGroupInfoKHR(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    // SAFETY: same contract.
    unsafe {
        clGetKernelSubGroupInfo(
            kernel,
            device,
            param_name,
            input_value_size,
            input_value,
            param_value_size,
            param_value,
            param_value_size_ret,
        )
    }
}

unsafe fn read3(p: *const usize, dims: usize, default: usize) -> Option<[usize; 3]> {
    if p.is_null() {
        return None;
    }
    let mut out = [default; 3];
    for (d, o) in out.iter_mut().enumerate().take(dims) {
        // SAFETY: readable for `dims` values (API contract).
        *o = unsafe { *p.add(d) };
    }
    Some(out)
}

/// The queue and kernel of a launch (or launch-size query), checked to share a context, and
/// the work dimension checked to be 1–3.
///
/// # Safety
/// Handles are checked; see `arc`.
unsafe fn launch_target(
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
) -> CLResult<(Arc<Queue>, Arc<Kernel>, usize)> {
    // SAFETY: `arc` validates the handles' dispatch pointer and type tag.
    let (q, k) = unsafe { (arc::<Queue>(command_queue)?, arc::<Kernel>(kernel)?) };
    if !Arc::ptr_eq(&q.context, &k.program.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    if !(1..=3).contains(&work_dim) {
        return Err(CL_INVALID_WORK_DIMENSION);
    }
    Ok((q, k, work_dim as usize))
}

pub unsafe extern "C" fn clEnqueueNDRangeKernel(
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; arrays of work_dim values (API contract).
        unsafe {
            let (q, k, dims) = launch_target(command_queue, kernel, work_dim)?;
            // No global size (as a size of 0 in any dimension) is an empty range: the command
            // completes without running a work-item (OpenCL 2.1 and later).
            let global = read3(global_work_size, dims, 1).unwrap_or([0; 3]);
            let offset = read3(global_work_offset, dims, 0).unwrap_or([0; 3]);
            let local = read3(local_work_size, dims, 1);
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let launch = k.prepare_launch(&q.device, dims, offset, global, local)?;
            submit(&q, Command::kernel(launch), wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueTask(
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks (API contract).
        unsafe {
            let q = arc::<Queue>(command_queue)?;
            let k = arc::<Kernel>(kernel)?;
            if !Arc::ptr_eq(&q.context, &k.program.context) {
                return Err(CL_INVALID_CONTEXT);
            }
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let launch = k.prepare_launch(&q.device, 1, [0; 3], [1, 1, 1], Some([1, 1, 1]))?;
            submit(&q, Command::task(launch), wait, false, event)
        }
    })
}

/// `clGetKernelSuggestedLocalWorkSizeKHR` (cl_khr_suggested_local_work_size): the work-group
/// size a launch with `local_work_size = NULL` would use.
pub unsafe extern "C" fn clGetKernelSuggestedLocalWorkSize(
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    suggested_local_work_size: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks; arrays of work_dim values (API contract).
        unsafe {
            let (q, k, dims) = launch_target(command_queue, kernel, work_dim)?;
            let global = read3(global_work_size, dims, 1).ok_or(CL_INVALID_GLOBAL_WORK_SIZE)?;
            if global[..dims].contains(&0) {
                return Err(CL_INVALID_GLOBAL_WORK_SIZE);
            }
            let offset = read3(global_work_offset, dims, 0).unwrap_or([0; 3]);
            if suggested_local_work_size.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let local = k.suggested_local_size(&q.device, dims, offset, global)?;
            std::ptr::copy_nonoverlapping(local.as_ptr(), suggested_local_work_size, dims);
            Ok(())
        }
    })
}
