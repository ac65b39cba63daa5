//! Platform and device entry points: discovery, the platform/device info queries (answered
//! from the runtime's DeviceConfig table), sub-devices, timers, extension function lookup.
#![allow(non_snake_case)]

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use ferrocl_runtime::command_buffer;
use ferrocl_runtime::config::{self, NameVersion};
use ferrocl_runtime::object::now_ns;
use ferrocl_runtime::platform::{platform, Device, Partition, Platform};
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;

use crate::util::*;

fn name_versions(list: &[NameVersion]) -> Vec<u8> {
    let v: Vec<cl_name_version> = list
        .iter()
        .map(|nv| {
            let mut name = [0u8; CL_NAME_VERSION_MAX_NAME_SIZE];
            let n = nv.name.len().min(CL_NAME_VERSION_MAX_NAME_SIZE - 1);
            name[..n].copy_from_slice(&nv.name.as_bytes()[..n]);
            cl_name_version {
                version: nv.version,
                name,
            }
        })
        .collect();
    arr(&v)
}

/// An array of `const char*` into strings that live as long as the process.
const ACCELERATION_4X8_PACKED: cl_device_info =
    CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED_KHR;

fn c_string_pointers(list: &'static [std::ffi::CString]) -> Vec<u8> {
    let ptrs: Vec<*const c_char> = list.iter().map(|s| s.as_ptr()).collect();
    arr(&ptrs)
}

/// A NULL platform means "ours" (there is one); anything else must be our handle.
unsafe fn check_platform(p: cl_platform_id) -> CLResult<&'static Platform> {
    if p.is_null() {
        return Ok(platform());
    }
    // SAFETY: handle check.
    let got = unsafe { obj::<Platform>(p)? };
    if got.is(platform()) {
        Ok(platform())
    } else {
        Err(CL_INVALID_PLATFORM)
    }
}

unsafe fn platform_ids(n: cl_uint, out: *mut cl_platform_id, num: *mut cl_uint) -> CLResult<()> {
    if (n == 0 && !out.is_null()) || (out.is_null() && num.is_null()) {
        return Err(CL_INVALID_VALUE);
    }
    if !out.is_null() {
        // SAFETY: out has room for n >= 1 entries (caller contract).
        unsafe { *out = handle(platform()) };
    }
    if !num.is_null() {
        // SAFETY: writable (caller contract).
        unsafe { *num = 1 };
    }
    Ok(())
}

pub unsafe extern "C" fn clGetPlatformIDs(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    // SAFETY: pointers per the API contract.
    status(|| unsafe { platform_ids(num_entries, platforms, num_platforms) })
}

/// The ICD loader's discovery entry point.
#[no_mangle]
pub unsafe extern "C" fn clIcdGetPlatformIDsKHR(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    // SAFETY: pointers per the API contract.
    status(|| unsafe { platform_ids(num_entries, platforms, num_platforms) })
}

/// `CL_PLATFORM_SVM_TYPE_CAPABILITIES_KHR` and `CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR`.
fn svm_type_capabilities(level: ferrocl_runtime::svm::SvmLevel) -> Vec<u8> {
    let caps: Vec<cl_svm_capabilities_khr> =
        level.svm_types().iter().map(|t| t.capabilities()).collect();
    arr(&caps)
}

fn platform_info(param: cl_platform_info) -> CLResult<Vec<u8>> {
    let cfg = &platform().devices[0].config;
    Ok(match param {
        CL_PLATFORM_PROFILE => s(cfg.profile),
        CL_PLATFORM_VERSION => s(cfg.platform_version()),
        CL_PLATFORM_NAME => s(config::PLATFORM_NAME),
        CL_PLATFORM_VENDOR => s(config::PLATFORM_VENDOR),
        CL_PLATFORM_EXTENSIONS => s(&cfg.extension_string()),
        CL_PLATFORM_EXTENSIONS_WITH_VERSION => name_versions(&cfg.extensions),
        CL_PLATFORM_NUMERIC_VERSION => v(cfg.numeric_version),
        CL_PLATFORM_HOST_TIMER_RESOLUTION => v(1 as cl_ulong),
        CL_PLATFORM_ICD_SUFFIX_KHR => s(config::ICD_SUFFIX),
        // cl_khr_icd_unloadable: the loader must not dlclose the library, whose worker
        // threads (one pool per device, started with the platform and never joined) would be
        // left running unmapped code.
        CL_PLATFORM_UNLOADABLE_KHR => b(false),
        // cl_khr_semaphore: binary semaphores only.
        CL_PLATFORM_SEMAPHORE_TYPES_KHR => v(CL_SEMAPHORE_TYPE_BINARY_KHR),
        CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR => {
            v(ferrocl_runtime::command_buffer::PLATFORM_CAPABILITIES)
        }
        // The intersection of the devices' types (cl_khr_unified_svm): every device has the
        // same ones.
        CL_PLATFORM_SVM_TYPE_CAPABILITIES_KHR
            if cfg.has(ferrocl_runtime::features::FeatureId::SharedVirtualMemory) =>
        {
            svm_type_capabilities(cfg.settings.svm)
        }
        _ => return Err(CL_INVALID_VALUE),
    })
}

pub unsafe extern "C" fn clGetPlatformInfo(
    platform_id: cl_platform_id,
    param_name: cl_platform_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; output pointers per the API contract.
        unsafe {
            check_platform(platform_id)?;
            write_info(
                platform_info(param_name),
                param_value_size,
                param_value,
                param_value_size_ret,
            )
        }
    })
}

pub unsafe extern "C" fn clGetDeviceIDs(
    platform_id: cl_platform_id,
    device_type: cl_device_type,
    num_entries: cl_uint,
    devices: *mut cl_device_id,
    num_devices: *mut cl_uint,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let p = unsafe { check_platform(platform_id)? };
        let known = (CL_DEVICE_TYPE_DEFAULT
            | CL_DEVICE_TYPE_CPU
            | CL_DEVICE_TYPE_GPU
            | CL_DEVICE_TYPE_ACCELERATOR
            | CL_DEVICE_TYPE_CUSTOM) as cl_device_type;
        if device_type != CL_DEVICE_TYPE_ALL as cl_device_type
            && (device_type & !known != 0 || device_type == 0)
        {
            return Err(CL_INVALID_DEVICE_TYPE);
        }
        if (num_entries == 0 && !devices.is_null()) || (devices.is_null() && num_devices.is_null())
        {
            return Err(CL_INVALID_VALUE);
        }
        let want = (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT) as cl_device_type;
        if device_type & want == 0 {
            return Err(CL_DEVICE_NOT_FOUND);
        }
        let found: Vec<_> = p.devices.iter().map(|d| handle(&**d)).collect();
        if !devices.is_null() {
            for (i, d) in found.iter().take(num_entries as usize).enumerate() {
                // SAFETY: room for num_entries handles (caller contract).
                unsafe { *devices.add(i) = *d };
            }
        }
        if !num_devices.is_null() {
            // SAFETY: writable (caller contract).
            unsafe { *num_devices = found.len() as cl_uint };
        }
        Ok(())
    })
}

/// `clGetDeviceInfo`'s answer: a query the feature table lists for a feature the device has
/// off is answered with zeros (an empty list stays empty).
fn device_info(d: &Device, param: cl_device_info) -> CLResult<Vec<u8>> {
    let mut answer = device_info_value(d, param)?;
    if d.config.features.zeroes(param) {
        answer.fill(0);
    }
    Ok(answer)
}

fn device_info_value(d: &Device, param: cl_device_info) -> CLResult<Vec<u8>> {
    let c = &d.config;
    let zero_u = || v(0 as cl_uint);
    Ok(match param {
        CL_DEVICE_TYPE => v(CL_DEVICE_TYPE_CPU as cl_device_type),
        CL_DEVICE_VENDOR_ID => v(c.vendor_id),
        CL_DEVICE_MAX_COMPUTE_UNITS => v(c.compute_units),
        CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS => v(c.max_work_item_dimensions),
        CL_DEVICE_MAX_WORK_ITEM_SIZES => arr(&c.max_work_item_sizes),
        CL_DEVICE_MAX_WORK_GROUP_SIZE => v(c.max_work_group_size),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR | CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR => {
            v(c.vector_widths[0])
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT | CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT => {
            v(c.vector_widths[1])
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT | CL_DEVICE_NATIVE_VECTOR_WIDTH_INT => {
            v(c.vector_widths[2])
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG | CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG => {
            v(c.vector_widths[3])
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT | CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT => {
            v(c.vector_widths[4])
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE | CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE => {
            v(c.vector_widths[5])
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF | CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF => {
            v(c.vector_widths[6])
        }
        CL_DEVICE_MAX_CLOCK_FREQUENCY => v(c.max_clock_frequency),
        CL_DEVICE_ADDRESS_BITS => v(c.address_bits),
        CL_DEVICE_MAX_MEM_ALLOC_SIZE => v(c.max_mem_alloc_size),
        CL_DEVICE_IMAGE_SUPPORT => b(c.images.is_some()),
        CL_DEVICE_MAX_READ_IMAGE_ARGS => v(c.images.map_or(0, |l| l.max_image_args[0])),
        CL_DEVICE_MAX_WRITE_IMAGE_ARGS => v(c.images.map_or(0, |l| l.max_image_args[1])),
        CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS => v(c.images.map_or(0, |l| l.max_image_args[2])),
        CL_DEVICE_MAX_SAMPLERS => v(c.images.map_or(0, |l| l.max_samplers)),
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT => v(c.images.map_or(0, |l| l.pitch_alignment as cl_uint)),
        CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT => {
            v(c.images.map_or(0, |l| l.base_address_alignment as cl_uint))
        }
        CL_DEVICE_IMAGE2D_MAX_WIDTH => v(c.images.map_or(0, |l| l.image2d_max[0])),
        CL_DEVICE_IMAGE2D_MAX_HEIGHT => v(c.images.map_or(0, |l| l.image2d_max[1])),
        CL_DEVICE_IMAGE3D_MAX_WIDTH => v(c.images.map_or(0, |l| l.image3d_max[0])),
        CL_DEVICE_IMAGE3D_MAX_HEIGHT => v(c.images.map_or(0, |l| l.image3d_max[1])),
        CL_DEVICE_IMAGE3D_MAX_DEPTH => v(c.images.map_or(0, |l| l.image3d_max[2])),
        CL_DEVICE_IMAGE_MAX_BUFFER_SIZE => v(c.images.map_or(0, |l| l.max_buffer_size)),
        CL_DEVICE_IMAGE_MAX_ARRAY_SIZE => v(c.images.map_or(0, |l| l.max_array_size)),
        CL_DEVICE_PIPE_SUPPORT => b(c.pipes.is_some()),
        CL_DEVICE_MAX_PIPE_ARGS => v(c.pipes.map_or(0, |p| p.max_pipe_args)),
        CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS => {
            v(c.pipes.map_or(0, |p| p.max_active_reservations))
        }
        CL_DEVICE_PIPE_MAX_PACKET_SIZE => v(c.pipes.map_or(0, |p| p.max_packet_size)),
        CL_DEVICE_MAX_ON_DEVICE_QUEUES => v(c.device_queues.map_or(0, |q| q.max_queues)),
        CL_DEVICE_MAX_ON_DEVICE_EVENTS => v(c.device_queues.map_or(0, |q| q.max_events)),
        CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE => {
            v(c.device_queues.map_or(0, |q| q.preferred_size))
        }
        CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE => v(c.device_queues.map_or(0, |q| q.max_size)),
        CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT => zero_u(),
        CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE | CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE => {
            v(c.max_global_variable_size)
        }
        CL_DEVICE_IL_VERSION => s(&c.il_version_string()),
        CL_DEVICE_ILS_WITH_VERSION => name_versions(&c.il_versions),
        CL_DEVICE_MAX_PARAMETER_SIZE => v(c.max_parameter_size),
        CL_DEVICE_MEM_BASE_ADDR_ALIGN => v(c.mem_base_addr_align_bits),
        CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE => v(128 as cl_uint),
        CL_DEVICE_SINGLE_FP_CONFIG => v(c.single_fp_config),
        CL_DEVICE_DOUBLE_FP_CONFIG => v(c.double_fp_config),
        CL_DEVICE_HALF_FP_CONFIG => v(c.half_fp_config),
        CL_DEVICE_GLOBAL_MEM_CACHE_TYPE => v(CL_READ_WRITE_CACHE as cl_device_mem_cache_type),
        CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE => v(c.global_mem_cacheline_size),
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE => v(c.global_mem_cache_size),
        CL_DEVICE_GLOBAL_MEM_SIZE => v(c.global_mem_size),
        CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE => v(c.max_constant_buffer_size),
        CL_DEVICE_MAX_CONSTANT_ARGS => v(c.max_constant_args),
        CL_DEVICE_LOCAL_MEM_TYPE => v(CL_LOCAL as cl_device_local_mem_type),
        CL_DEVICE_LOCAL_MEM_SIZE => v(c.local_mem_size),
        CL_DEVICE_ERROR_CORRECTION_SUPPORT => b(false),
        CL_DEVICE_HOST_UNIFIED_MEMORY => b(true),
        CL_DEVICE_PROFILING_TIMER_RESOLUTION => v(c.profiling_timer_resolution),
        CL_DEVICE_ENDIAN_LITTLE => b(cfg!(target_endian = "little")),
        CL_DEVICE_AVAILABLE => b(true),
        CL_DEVICE_COMPILER_AVAILABLE | CL_DEVICE_LINKER_AVAILABLE => b(c.compiler_available()),
        CL_DEVICE_EXECUTION_CAPABILITIES => v(CL_EXEC_KERNEL as cl_device_exec_capabilities),
        CL_DEVICE_QUEUE_ON_HOST_PROPERTIES => v(c.queue_properties),
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES => v(c.device_queues.map_or(0, |q| q.properties)),
        CL_DEVICE_BUILT_IN_KERNELS => s(""),
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION => Vec::new(),
        CL_DEVICE_PLATFORM => v(handle(platform())),
        CL_DEVICE_NAME => s(&c.name),
        CL_DEVICE_VENDOR => s(&c.vendor),
        CL_DRIVER_VERSION => s(config::DRIVER_VERSION),
        CL_DEVICE_PROFILE => s(c.profile),
        CL_DEVICE_VERSION => s(c.device_version),
        CL_DEVICE_NUMERIC_VERSION => v(c.numeric_version),
        CL_DEVICE_OPENCL_C_VERSION => s(c.opencl_c_version),
        CL_DEVICE_OPENCL_C_ALL_VERSIONS => name_versions(&c.opencl_c_all_versions),
        // cl_khr_extended_versioning's one query that OpenCL 3.0 did not make core (ALL_VERSIONS
        // took its place, API spec 4.2): the numeric form of CL_DEVICE_OPENCL_C_VERSION, not
        // the newest version in ALL_VERSIONS; the extension says its queries are always there.
        CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR => v(c.opencl_c_numeric_version()),
        CL_DEVICE_OPENCL_C_FEATURES => name_versions(&c.opencl_c_features),
        CL_DEVICE_EXTENSIONS => s(&c.extension_string()),
        CL_DEVICE_EXTENSIONS_WITH_VERSION => name_versions(&c.extensions),
        CL_DEVICE_PRINTF_BUFFER_SIZE => v(c.printf_buffer_size),
        CL_DEVICE_UUID_KHR => v(c.device_uuid()),
        CL_DRIVER_UUID_KHR => v(config::driver_uuid()),
        // A LUID names a Windows adapter; there is none.
        CL_DEVICE_LUID_VALID_KHR => b(false),
        CL_DEVICE_LUID_KHR => v([0u8; CL_LUID_SIZE_KHR]),
        CL_DEVICE_NODE_MASK_KHR => v(0 as cl_uint),
        CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR => {
            c_string_pointers(config::spirv_extended_instruction_sets())
        }
        CL_DEVICE_SPIRV_EXTENSIONS_KHR => c_string_pointers(config::spirv_extensions(c.features)),
        CL_DEVICE_SPIRV_CAPABILITIES_KHR => arr(&c.spirv_capabilities()),
        config::CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT => v(c.fp_atomic_capabilities[0]),
        config::CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT => v(c.fp_atomic_capabilities[1]),
        config::CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT => v(c.fp_atomic_capabilities[2]),
        CL_DEVICE_PREFERRED_INTEROP_USER_SYNC => b(true),
        CL_DEVICE_PARENT_DEVICE => v(d
            .parent
            .as_ref()
            .map_or(std::ptr::null_mut(), |p| handle(&**p))),
        CL_DEVICE_PARTITION_MAX_SUB_DEVICES => v(d.max_sub_devices()),
        CL_DEVICE_PARTITION_PROPERTIES => arr(&d.partition_properties()),
        CL_DEVICE_PARTITION_AFFINITY_DOMAIN => v(d.affinity_domains()),
        CL_DEVICE_PARTITION_TYPE => arr(&d.partition_type),
        // The spec's answer for a root device, which is not reference counted.
        CL_DEVICE_REFERENCE_COUNT if d.is_root() => v(1 as cl_uint),
        CL_DEVICE_REFERENCE_COUNT => v(d.base().ref_count()),
        CL_DEVICE_SVM_CAPABILITIES => v(c.svm_capabilities),
        CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR => svm_type_capabilities(c.settings.svm),
        CL_DEVICE_SEMAPHORE_TYPES_KHR => v(CL_SEMAPHORE_TYPE_BINARY_KHR),
        // Contexts created with CL_CONTEXT_TERMINATE_KHR build their kernels with the
        // watchdog's loop checks, which a termination sets (runtime termination.rs).
        CL_DEVICE_TERMINATE_CAPABILITY_KHR | config::CL_DEVICE_TERMINATE_CAPABILITY_KHR_1X => {
            v(config::CL_DEVICE_TERMINATE_CAPABILITY_CONTEXT_KHR)
        }
        CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL => v(c.settings.svm.usm_capabilities()[0]),
        CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL => v(c.settings.svm.usm_capabilities()[1]),
        CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL => {
            v(c.settings.svm.usm_capabilities()[2])
        }
        CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL => {
            v(c.settings.svm.usm_capabilities()[3])
        }
        CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL => v(c.settings.svm.usm_capabilities()[4]),
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT => b(c.work_group_collective_functions),
        CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT => b(c.generic_address_space),
        CL_DEVICE_MAX_NUM_SUB_GROUPS => v(c.max_num_sub_groups as cl_uint),
        CL_DEVICE_SUB_GROUP_SIZES_INTEL => arr(&c.sub_group_sizes),
        CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR => v(c.max_named_barriers),
        CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR => v(c.integer_dot_product_capabilities),
        CL_DEVICE_KERNEL_CLOCK_CAPABILITIES_KHR => v(c.kernel_clock_capabilities),
        // opencl-sys spells this constant with a lower-case x, which a pattern would lint.
        CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT_KHR
        | ACCELERATION_4X8_PACKED => v(c.integer_dot_product_acceleration),
        CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => {
            b(c.sub_group_independent_forward_progress)
        }
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES => v(c.atomic_memory_capabilities),
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES => v(c.atomic_fence_capabilities),
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT => b(c.non_uniform_work_group_support),
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES => v(c
            .device_queues
            .map_or(0 as cl_device_device_enqueue_capabilities, |q| {
                q.capabilities
            })),
        CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => v(c.preferred_work_group_size_multiple),
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED => s(c.latest_conformance_version_passed),
        CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR => v(command_buffer::capabilities(c)),
        CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR => {
            v(command_buffer::REQUIRED_QUEUE_PROPERTIES)
        }
        CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR => {
            v(command_buffer::SUPPORTED_QUEUE_PROPERTIES)
        }
        CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR => v(command_buffer::MUTABLE_FIELDS),
        // cl_khr_command_buffer_multi_device: the root devices a device synchronises with
        // natively are all of the platform's (one CPU); their sub-devices go with them.
        CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR => v(platform().devices.len() as cl_uint),
        CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR => arr(&platform()
            .devices
            .iter()
            .map(|d| handle(&**d))
            .collect::<Vec<_>>()),
        _ => return Err(CL_INVALID_VALUE),
    })
}

pub unsafe extern "C" fn clGetDeviceInfo(
    device: cl_device_id,
    param_name: cl_device_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; output pointers per the API contract.
        unsafe {
            let d = obj::<Device>(device)?;
            write_info(
                device_info(d, param_name),
                param_value_size,
                param_value,
                param_value_size_ret,
            )
        }
    })
}

/// Reads a `clCreateSubDevices` property list: one scheme, its value(s), the terminating 0.
///
/// # Safety
/// `p` is a zero-terminated list (API contract).
unsafe fn partition_request(p: *const cl_device_partition_property) -> CLResult<Partition> {
    if p.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: the list goes on until its terminating 0 (caller contract); each read below
    // stops at the first 0 after the scheme.
    let at = |i: usize| unsafe { *p.add(i) };
    let scheme = at(0);
    let (request, next) = match scheme {
        CL_DEVICE_PARTITION_EQUALLY => (Partition::Equally(at(1)), 2),
        CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN => {
            let domain = at(1);
            if domain <= 0 || domain.count_ones() != 1 {
                return Err(CL_INVALID_VALUE);
            }
            (
                Partition::ByAffinityDomain(domain as cl_device_affinity_domain),
                2,
            )
        }
        CL_DEVICE_PARTITION_BY_COUNTS => {
            let mut counts = Vec::new();
            let mut i = 1;
            while at(i) != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END {
                counts.push(at(i));
                i += 1;
            }
            // CL_DEVICE_PARTITION_BY_COUNTS_LIST_END is 0, the list's own terminator too: the
            // list ends here whether or not a second 0 follows (reading on could run past it).
            return Ok(Partition::ByCounts(counts));
        }
        _ => return Err(CL_INVALID_VALUE),
    };
    // A scheme's value is 0 only in a list cut short; a second scheme is not allowed.
    if at(1) == 0 || at(next) != 0 {
        return Err(CL_INVALID_VALUE);
    }
    Ok(request)
}

pub unsafe extern "C" fn clCreateSubDevices(
    in_device: cl_device_id,
    properties: *const cl_device_partition_property,
    num_devices: cl_uint,
    out_devices: *mut cl_device_id,
    num_devices_ret: *mut cl_uint,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; the property list and output arrays per the API contract.
        unsafe {
            let device = arc::<Device>(in_device)?;
            let plan = device.plan_partition(&partition_request(properties)?)?;
            let count = plan.units.len();
            if !out_devices.is_null() {
                if (num_devices as usize) < count {
                    return Err(CL_INVALID_VALUE);
                }
                for (i, sub) in device.create_sub_devices(plan)?.into_iter().enumerate() {
                    *out_devices.add(i) = new_handle(sub);
                }
            }
            if !num_devices_ret.is_null() {
                *num_devices_ret = count as cl_uint;
            }
        }
        Ok(())
    })
}

pub unsafe extern "C" fn clRetainDevice(device: cl_device_id) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let d = unsafe { obj::<Device>(device)? };
        if d.is_root() {
            // Root devices are not reference counted (spec).
            return Ok(());
        }
        // SAFETY: handle check.
        unsafe { retain::<Device>(device) }
    })
}

pub unsafe extern "C" fn clReleaseDevice(device: cl_device_id) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let d = unsafe { obj::<Device>(device)? };
        if d.is_root() {
            return Ok(());
        }
        // Contexts, queues and programs on the sub-device hold their own references.
        // SAFETY: handle check.
        unsafe { release::<Device>(device) }
    })
}

pub unsafe extern "C" fn clGetHostTimer(
    device: cl_device_id,
    host_timestamp: *mut cl_ulong,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        unsafe { obj::<Device>(device)? };
        if host_timestamp.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: non-NULL, writable (caller contract).
        unsafe { *host_timestamp = now_ns() };
        Ok(())
    })
}

pub unsafe extern "C" fn clGetDeviceAndHostTimer(
    device: cl_device_id,
    device_timestamp: *mut cl_ulong,
    host_timestamp: *mut cl_ulong,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        unsafe { obj::<Device>(device)? };
        if host_timestamp.is_null() || device_timestamp.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // The device is the host: one clock serves both (and profiling timestamps).
        let t = now_ns();
        // SAFETY: non-NULL, writable (caller contract).
        unsafe {
            *device_timestamp = t;
            *host_timestamp = t;
        }
        Ok(())
    })
}

fn extension_function(name: &CStr) -> *mut c_void {
    match name.to_bytes() {
        b"clIcdGetPlatformIDsKHR" => clIcdGetPlatformIDsKHR as *mut c_void,
        b"clGetPlatformInfo" => clGetPlatformInfo as *mut c_void,
        b"clCreateProgramWithILKHR" => super::program::clCreateProgramWithIL as *mut c_void,
        b"clGetKernelSuggestedLocalWorkSizeKHR" => {
            super::kernel::clGetKernelSuggestedLocalWorkSize as *mut c_void
        }
        // Answers CL_INVALID_OPERATION on a device with FERROCL_SUBGROUPS=off.
        b"clGetKernelSubGroupInfoKHR" => super::kernel::clGetKernelSubGroupInfoKHR as *mut c_void,
        b"clTerminateContextKHR" => super::context::clTerminateContextKHR as *mut c_void,
        b"clCreateCommandQueueWithPropertiesKHR" => {
            super::queue::clCreateCommandQueueWithProperties as *mut c_void
        }
        // cl_khr_command_buffer and cl_khr_command_buffer_mutable_dispatch.
        cb if super::command_buffer::extension_function(cb).is_some() => {
            super::command_buffer::extension_function(cb).unwrap_or(std::ptr::null_mut())
        }
        sema if super::semaphore::extension_function(sema).is_some() => {
            super::semaphore::extension_function(sema).unwrap_or(std::ptr::null_mut())
        }
        // cl_intel_unified_shared_memory and cl_khr_unified_svm, while the device reports them.
        svm if platform().devices[0]
            .config
            .has(ferrocl_runtime::features::FeatureId::SharedVirtualMemory) =>
        {
            super::usm::extension_function(svm)
                .or_else(|| super::unified_svm::extension_function(svm))
                .unwrap_or(std::ptr::null_mut())
        }
        _ => std::ptr::null_mut(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void {
    init();
    if func_name.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a non-NULL name is a NUL-terminated string (API contract).
    extension_function(unsafe { CStr::from_ptr(func_name) })
}

#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddressForPlatform(
    platform_id: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    init();
    // SAFETY: handle check.
    if func_name.is_null()
        || unsafe { check_platform(platform_id) }.is_err()
        || platform_id.is_null()
    {
        return std::ptr::null_mut();
    }
    // SAFETY: as above.
    extension_function(unsafe { CStr::from_ptr(func_name) })
}

/// A hint; nothing to unload (clang runs as a separate process).
pub unsafe extern "C" fn clUnloadCompiler() -> cl_int {
    CL_SUCCESS
}

pub unsafe extern "C" fn clUnloadPlatformCompiler(platform_id: cl_platform_id) -> cl_int {
    status(|| {
        if platform_id.is_null() {
            return Err(CL_INVALID_PLATFORM);
        }
        // SAFETY: handle check.
        unsafe { check_platform(platform_id).map(|_| ()) }
    })
}

/// The devices of a context-creating call, all ours.
///
/// # Safety
/// `devices` is NULL or readable for `n` handles.
pub unsafe fn device_list(n: cl_uint, devices: *const cl_device_id) -> CLResult<Vec<Arc<Device>>> {
    if n == 0 || devices.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: readable for n (caller contract).
    unsafe { slice(devices, n as usize) }
        .iter()
        // SAFETY: handle check.
        .map(|&d| unsafe { arc::<Device>(d) })
        .collect()
}
