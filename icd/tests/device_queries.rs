//! Every platform and device query through the loader (issue #37, "every answer exact"): each
//! query the OpenCL 3.0 headers define for `clGetPlatformInfo` and `clGetDeviceInfo`, and each
//! query of every extension the platform or device reports, asked for its size and then its
//! value, on every device of the platform and on a sub-device; each answer must succeed with a
//! size its type allows (the table below, from the API spec's tables in 4.1 and 4.2 and each
//! extension's specification). The extended-versioning answers must agree with the strings
//! they extend, and `clinfo`'s full output against this driver alone has no error line.

mod common;

use std::ffi::{c_void, CStr};
use std::mem::size_of;
use std::process::Command;
use std::ptr::null_mut;

use common::*;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clGetPlatformInfo(
        platform: cl_platform_id,
        name: cl_platform_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    fn clGetDeviceInfo(
        device: cl_device_id,
        name: cl_device_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    fn clCreateSubDevices(
        device: cl_device_id,
        properties: *const cl_device_partition_property,
        num_devices: cl_uint,
        out: *mut cl_device_id,
        num_ret: *mut cl_uint,
    ) -> cl_int;
    fn clReleaseDevice(device: cl_device_id) -> cl_int;
}

// cl_ext_float_atomics (cl_ext.h), which opencl-sys 0.6 lacks.
const CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4231;
const CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4232;
const CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4233;

/// What size an answer of a query's type may have.
#[derive(Clone, Copy, Debug)]
enum Rule {
    /// A scalar or fixed-size struct of exactly this many bytes.
    Bytes(usize),
    /// A NUL-terminated string: at least the NUL, which is its only one.
    Str,
    /// An array (possibly empty) of elements of this many bytes.
    Array(usize),
    /// `cl_name_version[]`: whole elements, each name NUL-terminated within its field.
    NameVersions,
    /// `const char*[]`: whole pointers, each to a NUL-terminated string.
    StrPtrs,
    /// `size_t[CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS]`.
    PerDimension,
}

const UINT: Rule = Rule::Bytes(size_of::<cl_uint>());
const ULONG: Rule = Rule::Bytes(size_of::<cl_ulong>());
const SIZE: Rule = Rule::Bytes(size_of::<usize>());
const BOOL: Rule = Rule::Bytes(size_of::<cl_bool>());
const BITFIELD: Rule = Rule::Bytes(size_of::<cl_bitfield>());
const HANDLE: Rule = Rule::Bytes(size_of::<*mut c_void>());
const VERSION: Rule = Rule::Bytes(size_of::<cl_version>());
const STR: Rule = Rule::Str;
const NAMES: Rule = Rule::NameVersions;

/// One query: its name, value, size rule and the extension that defines it (None: OpenCL 3.0
/// core, asked whatever is reported).
type Query = (&'static str, cl_uint, Rule, Option<&'static str>);

macro_rules! q {
    ($name:ident, $rule:expr) => {
        (stringify!($name), $name, $rule, None)
    };
    ($name:ident, $rule:expr, $extension:literal) => {
        (stringify!($name), $name, $rule, Some($extension))
    };
}

/// `clGetPlatformInfo` (API spec 4.1, the platform queries table).
const PLATFORM_QUERIES: &[Query] = &[
    q!(CL_PLATFORM_PROFILE, STR),
    q!(CL_PLATFORM_VERSION, STR),
    q!(CL_PLATFORM_NAME, STR),
    q!(CL_PLATFORM_VENDOR, STR),
    q!(CL_PLATFORM_EXTENSIONS, STR),
    q!(CL_PLATFORM_HOST_TIMER_RESOLUTION, ULONG),
    q!(CL_PLATFORM_NUMERIC_VERSION, VERSION),
    q!(CL_PLATFORM_EXTENSIONS_WITH_VERSION, NAMES),
    q!(CL_PLATFORM_ICD_SUFFIX_KHR, STR, "cl_khr_icd"),
    q!(
        CL_PLATFORM_NUMERIC_VERSION_KHR,
        VERSION,
        "cl_khr_extended_versioning"
    ),
    q!(
        CL_PLATFORM_EXTENSIONS_WITH_VERSION_KHR,
        NAMES,
        "cl_khr_extended_versioning"
    ),
    q!(
        CL_PLATFORM_SVM_TYPE_CAPABILITIES_KHR,
        Rule::Array(size_of::<cl_bitfield>()),
        "cl_khr_unified_svm"
    ),
    q!(
        CL_PLATFORM_SEMAPHORE_TYPES_KHR,
        Rule::Array(size_of::<cl_uint>()),
        "cl_khr_semaphore"
    ),
    q!(CL_PLATFORM_UNLOADABLE_KHR, BOOL, "cl_khr_icd_unloadable"),
    q!(
        CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR,
        BITFIELD,
        "cl_khr_command_buffer_multi_device"
    ),
];

/// `clGetDeviceInfo` (API spec 4.2, the device queries table, deprecated queries included:
/// cl.h still defines them and applications still ask).
const DEVICE_QUERIES: &[Query] = &[
    q!(CL_DEVICE_TYPE, BITFIELD),
    q!(CL_DEVICE_VENDOR_ID, UINT),
    q!(CL_DEVICE_MAX_COMPUTE_UNITS, UINT),
    q!(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, UINT),
    q!(CL_DEVICE_MAX_WORK_GROUP_SIZE, SIZE),
    q!(CL_DEVICE_MAX_WORK_ITEM_SIZES, Rule::PerDimension),
    q!(CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, UINT),
    q!(CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, UINT),
    q!(CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, UINT),
    q!(CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, UINT),
    q!(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, UINT),
    q!(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, UINT),
    q!(CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, UINT),
    q!(CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR, UINT),
    q!(CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT, UINT),
    q!(CL_DEVICE_NATIVE_VECTOR_WIDTH_INT, UINT),
    q!(CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, UINT),
    q!(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, UINT),
    q!(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, UINT),
    q!(CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, UINT),
    q!(CL_DEVICE_MAX_CLOCK_FREQUENCY, UINT),
    q!(CL_DEVICE_ADDRESS_BITS, UINT),
    q!(CL_DEVICE_MAX_MEM_ALLOC_SIZE, ULONG),
    q!(CL_DEVICE_IMAGE_SUPPORT, BOOL),
    q!(CL_DEVICE_MAX_READ_IMAGE_ARGS, UINT),
    q!(CL_DEVICE_MAX_WRITE_IMAGE_ARGS, UINT),
    q!(CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, UINT),
    q!(CL_DEVICE_IL_VERSION, STR),
    q!(CL_DEVICE_ILS_WITH_VERSION, NAMES),
    q!(CL_DEVICE_IMAGE2D_MAX_WIDTH, SIZE),
    q!(CL_DEVICE_IMAGE2D_MAX_HEIGHT, SIZE),
    q!(CL_DEVICE_IMAGE3D_MAX_WIDTH, SIZE),
    q!(CL_DEVICE_IMAGE3D_MAX_HEIGHT, SIZE),
    q!(CL_DEVICE_IMAGE3D_MAX_DEPTH, SIZE),
    q!(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, SIZE),
    q!(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, SIZE),
    q!(CL_DEVICE_MAX_SAMPLERS, UINT),
    q!(CL_DEVICE_IMAGE_PITCH_ALIGNMENT, UINT),
    q!(CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, UINT),
    q!(CL_DEVICE_MAX_PIPE_ARGS, UINT),
    q!(CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, UINT),
    q!(CL_DEVICE_PIPE_MAX_PACKET_SIZE, UINT),
    q!(CL_DEVICE_MAX_PARAMETER_SIZE, SIZE),
    q!(CL_DEVICE_MEM_BASE_ADDR_ALIGN, UINT),
    q!(CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE, UINT),
    q!(CL_DEVICE_SINGLE_FP_CONFIG, BITFIELD),
    q!(CL_DEVICE_DOUBLE_FP_CONFIG, BITFIELD),
    q!(CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, UINT),
    q!(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, UINT),
    q!(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, ULONG),
    q!(CL_DEVICE_GLOBAL_MEM_SIZE, ULONG),
    q!(CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, ULONG),
    q!(CL_DEVICE_MAX_CONSTANT_ARGS, UINT),
    q!(CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, SIZE),
    q!(CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE, SIZE),
    q!(CL_DEVICE_LOCAL_MEM_TYPE, UINT),
    q!(CL_DEVICE_LOCAL_MEM_SIZE, ULONG),
    q!(CL_DEVICE_ERROR_CORRECTION_SUPPORT, BOOL),
    q!(CL_DEVICE_HOST_UNIFIED_MEMORY, BOOL),
    q!(CL_DEVICE_PROFILING_TIMER_RESOLUTION, SIZE),
    q!(CL_DEVICE_ENDIAN_LITTLE, BOOL),
    q!(CL_DEVICE_AVAILABLE, BOOL),
    q!(CL_DEVICE_COMPILER_AVAILABLE, BOOL),
    q!(CL_DEVICE_LINKER_AVAILABLE, BOOL),
    q!(CL_DEVICE_EXECUTION_CAPABILITIES, BITFIELD),
    // Also CL_DEVICE_QUEUE_PROPERTIES, its deprecated name.
    q!(CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, BITFIELD),
    q!(CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, BITFIELD),
    q!(CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, UINT),
    q!(CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, UINT),
    q!(CL_DEVICE_MAX_ON_DEVICE_QUEUES, UINT),
    q!(CL_DEVICE_MAX_ON_DEVICE_EVENTS, UINT),
    q!(CL_DEVICE_BUILT_IN_KERNELS, STR),
    q!(CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, NAMES),
    q!(CL_DEVICE_PLATFORM, HANDLE),
    q!(CL_DEVICE_NAME, STR),
    q!(CL_DEVICE_VENDOR, STR),
    q!(CL_DRIVER_VERSION, STR),
    q!(CL_DEVICE_PROFILE, STR),
    q!(CL_DEVICE_VERSION, STR),
    q!(CL_DEVICE_NUMERIC_VERSION, VERSION),
    q!(CL_DEVICE_OPENCL_C_VERSION, STR),
    q!(CL_DEVICE_OPENCL_C_ALL_VERSIONS, NAMES),
    q!(CL_DEVICE_OPENCL_C_FEATURES, NAMES),
    q!(CL_DEVICE_EXTENSIONS, STR),
    q!(CL_DEVICE_EXTENSIONS_WITH_VERSION, NAMES),
    q!(CL_DEVICE_PRINTF_BUFFER_SIZE, SIZE),
    q!(CL_DEVICE_PREFERRED_INTEROP_USER_SYNC, BOOL),
    q!(CL_DEVICE_PARENT_DEVICE, HANDLE),
    q!(CL_DEVICE_PARTITION_MAX_SUB_DEVICES, UINT),
    q!(
        CL_DEVICE_PARTITION_PROPERTIES,
        Rule::Array(size_of::<cl_device_partition_property>())
    ),
    q!(CL_DEVICE_PARTITION_AFFINITY_DOMAIN, BITFIELD),
    q!(
        CL_DEVICE_PARTITION_TYPE,
        Rule::Array(size_of::<cl_device_partition_property>())
    ),
    q!(CL_DEVICE_REFERENCE_COUNT, UINT),
    q!(CL_DEVICE_SVM_CAPABILITIES, BITFIELD),
    q!(CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT, UINT),
    q!(CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT, UINT),
    q!(CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT, UINT),
    q!(CL_DEVICE_MAX_NUM_SUB_GROUPS, UINT),
    q!(CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS, BOOL),
    q!(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, BITFIELD),
    q!(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, BITFIELD),
    q!(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, BOOL),
    q!(CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT, BOOL),
    q!(CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, BOOL),
    q!(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, BITFIELD),
    q!(CL_DEVICE_PIPE_SUPPORT, BOOL),
    q!(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, SIZE),
    q!(CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED, STR),
    // Extensions, in the order of their specifications' "New Enums" sections.
    q!(CL_DEVICE_HALF_FP_CONFIG, BITFIELD, "cl_khr_fp16"),
    q!(CL_DEVICE_IL_VERSION_KHR, STR, "cl_khr_il_program"),
    q!(
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT_KHR,
        UINT,
        "cl_khr_image2d_from_buffer"
    ),
    q!(
        CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT_KHR,
        UINT,
        "cl_khr_image2d_from_buffer"
    ),
    q!(
        CL_DEVICE_NUMERIC_VERSION_KHR,
        VERSION,
        "cl_khr_extended_versioning"
    ),
    q!(
        CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR,
        VERSION,
        "cl_khr_extended_versioning"
    ),
    q!(
        CL_DEVICE_EXTENSIONS_WITH_VERSION_KHR,
        NAMES,
        "cl_khr_extended_versioning"
    ),
    q!(
        CL_DEVICE_ILS_WITH_VERSION_KHR,
        NAMES,
        "cl_khr_extended_versioning"
    ),
    q!(
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION_KHR,
        NAMES,
        "cl_khr_extended_versioning"
    ),
    q!(
        CL_DEVICE_UUID_KHR,
        Rule::Bytes(CL_UUID_SIZE_KHR),
        "cl_khr_device_uuid"
    ),
    q!(
        CL_DRIVER_UUID_KHR,
        Rule::Bytes(CL_UUID_SIZE_KHR),
        "cl_khr_device_uuid"
    ),
    q!(CL_DEVICE_LUID_VALID_KHR, BOOL, "cl_khr_device_uuid"),
    q!(
        CL_DEVICE_LUID_KHR,
        Rule::Bytes(CL_LUID_SIZE_KHR),
        "cl_khr_device_uuid"
    ),
    q!(CL_DEVICE_NODE_MASK_KHR, UINT, "cl_khr_device_uuid"),
    q!(
        CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR,
        Rule::StrPtrs,
        "cl_khr_spirv_queries"
    ),
    q!(
        CL_DEVICE_SPIRV_EXTENSIONS_KHR,
        Rule::StrPtrs,
        "cl_khr_spirv_queries"
    ),
    q!(
        CL_DEVICE_SPIRV_CAPABILITIES_KHR,
        Rule::Array(size_of::<cl_uint>()),
        "cl_khr_spirv_queries"
    ),
    q!(
        CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
        BITFIELD,
        "cl_khr_command_buffer"
    ),
    q!(
        CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR,
        BITFIELD,
        "cl_khr_command_buffer"
    ),
    q!(
        CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
        BITFIELD,
        "cl_khr_command_buffer"
    ),
    q!(
        CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR,
        BITFIELD,
        "cl_khr_command_buffer_mutable_dispatch"
    ),
    q!(
        CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR,
        UINT,
        "cl_khr_command_buffer_multi_device"
    ),
    q!(
        CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR,
        Rule::Array(size_of::<cl_device_id>()),
        "cl_khr_command_buffer_multi_device"
    ),
    q!(
        CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT,
        BITFIELD,
        "cl_ext_float_atomics"
    ),
    q!(
        CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT,
        BITFIELD,
        "cl_ext_float_atomics"
    ),
    q!(
        CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT,
        BITFIELD,
        "cl_ext_float_atomics"
    ),
    q!(
        CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR,
        BITFIELD,
        "cl_khr_integer_dot_product"
    ),
    q!(
        CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT_KHR,
        Rule::Bytes(size_of::<
            cl_device_integer_dot_product_acceleration_properties_khr,
        >()),
        "cl_khr_integer_dot_product"
    ),
    q!(
        CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED_KHR,
        Rule::Bytes(size_of::<
            cl_device_integer_dot_product_acceleration_properties_khr,
        >()),
        "cl_khr_integer_dot_product"
    ),
    q!(
        CL_DEVICE_KERNEL_CLOCK_CAPABILITIES_KHR,
        BITFIELD,
        "cl_khr_kernel_clock"
    ),
    q!(
        CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR,
        UINT,
        "cl_khr_subgroup_named_barrier"
    ),
    q!(
        CL_DEVICE_SUB_GROUP_SIZES_INTEL,
        Rule::Array(size_of::<usize>()),
        "cl_intel_required_subgroup_size"
    ),
    q!(
        CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL,
        BITFIELD,
        "cl_intel_unified_shared_memory"
    ),
    q!(
        CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL,
        BITFIELD,
        "cl_intel_unified_shared_memory"
    ),
    q!(
        CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
        BITFIELD,
        "cl_intel_unified_shared_memory"
    ),
    q!(
        CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
        BITFIELD,
        "cl_intel_unified_shared_memory"
    ),
    q!(
        CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL,
        BITFIELD,
        "cl_intel_unified_shared_memory"
    ),
    q!(
        CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR,
        Rule::Array(size_of::<cl_bitfield>()),
        "cl_khr_unified_svm"
    ),
    q!(
        CL_DEVICE_SEMAPHORE_TYPES_KHR,
        Rule::Array(size_of::<cl_uint>()),
        "cl_khr_semaphore"
    ),
    q!(
        CL_DEVICE_TERMINATE_CAPABILITY_KHR,
        BITFIELD,
        "cl_khr_terminate_context"
    ),
];

/// Extensions whose specifications add no platform or device query (their queries, if any,
/// are of kernels, samplers, programs or queues): a reported extension must be here or own
/// a row above, so a newly reported one cannot go unaudited.
const NO_DEVICE_QUERIES: &[&str] = &[
    // A context property only.
    "cl_khr_initialize_memory",
    "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_suggested_local_work_size",
    "cl_khr_spirv_no_integer_wrap_decoration",
    "cl_khr_spirv_linkonce_odr",
    "cl_khr_spirv_extended_debug_info",
    "cl_khr_create_command_queue",
    "cl_khr_priority_hints",
    "cl_khr_throttle_hints",
    "cl_khr_extended_bit_ops",
    "cl_khr_expect_assume",
    "cl_khr_work_group_uniform_arithmetic",
    "cl_khr_extended_async_copies",
    "cl_khr_async_work_group_copy_fence",
    // CL_DEVICE_DOUBLE_FP_CONFIG is core (above) since OpenCL 1.2.
    "cl_khr_fp64",
    "cl_khr_subgroups",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
    "cl_intel_subgroups",
    "cl_intel_subgroups_char",
    "cl_intel_subgroups_short",
    "cl_intel_subgroups_long",
    "cl_intel_spirv_subgroups",
    "cl_intel_subgroup_local_block_io",
    "cl_intel_bfloat16_conversions",
    "cl_intel_devicelib_assert",
    "cl_khr_depth_images",
    "cl_khr_3d_image_writes",
    "cl_khr_srgb_image_writes",
    "cl_khr_mipmap_image",
    "cl_khr_mipmap_image_writes",
];

/// The answer to one query: its bytes, or the error of the size or the value call.
fn ask(
    query: &dyn Fn(usize, *mut c_void, *mut usize) -> cl_int,
    name: &str,
) -> Result<Vec<u8>, String> {
    let mut size = usize::MAX;
    let code = query(0, null_mut(), &mut size);
    if code != CL_SUCCESS {
        return Err(format!("{name}: size query: {} ({code})", error_text(code)));
    }
    // Room for one more byte shows whether the driver writes past the size it gave.
    let mut value = vec![0xA5u8; size + 1];
    let mut written = usize::MAX;
    let code = query(size, value.as_mut_ptr().cast(), &mut written);
    if code != CL_SUCCESS {
        return Err(format!(
            "{name}: value query: {} ({code})",
            error_text(code)
        ));
    }
    if written != size {
        return Err(format!(
            "{name}: the value query says {written} bytes, the size query {size}"
        ));
    }
    if value[size] != 0xA5 {
        return Err(format!("{name}: wrote past the {size} bytes it asked for"));
    }
    // API spec 4.1/4.2: a buffer smaller than the answer is CL_INVALID_VALUE.
    if size > 0 {
        let code = query(size - 1, value.as_mut_ptr().cast(), null_mut());
        if code != CL_INVALID_VALUE {
            return Err(format!(
                "{name}: {} bytes of room for {size} gave {} ({code}), not CL_INVALID_VALUE",
                size - 1,
                error_text(code)
            ));
        }
    }
    value.truncate(size);
    Ok(value)
}

/// Whether `value` fits `rule` (`dims`: the device's work-item dimensions).
fn fits(rule: Rule, value: &[u8], dims: usize) -> Result<(), String> {
    let n = value.len();
    match rule {
        Rule::Bytes(want) if n == want => Ok(()),
        Rule::Bytes(want) => Err(format!("{n} bytes, its type has {want}")),
        Rule::Str => match value.iter().position(|&b| b == 0) {
            Some(at) if at + 1 == n => Ok(()),
            Some(at) => Err(format!("a NUL at {at} of a {n}-byte string")),
            None => Err(format!("{n} bytes without a terminating NUL")),
        },
        Rule::Array(each) if n.is_multiple_of(each) => Ok(()),
        Rule::Array(each) => Err(format!("{n} bytes, not whole {each}-byte elements")),
        Rule::PerDimension if n == dims * size_of::<usize>() => Ok(()),
        Rule::PerDimension => Err(format!("{n} bytes for {dims} dimensions")),
        Rule::NameVersions => {
            let each = size_of::<cl_name_version>();
            if !n.is_multiple_of(each) {
                return Err(format!("{n} bytes, not whole cl_name_version"));
            }
            for (i, nv) in value.chunks_exact(each).enumerate() {
                let name = &nv[size_of::<cl_version>()..];
                if !name.contains(&0) {
                    return Err(format!("element {i}'s name has no NUL"));
                }
            }
            Ok(())
        }
        Rule::StrPtrs => {
            let each = size_of::<*const i8>();
            if !n.is_multiple_of(each) {
                return Err(format!("{n} bytes, not whole pointers"));
            }
            for (i, p) in value.chunks_exact(each).enumerate() {
                let p = usize::from_ne_bytes(p.try_into().unwrap()) as *const std::ffi::c_char;
                if p.is_null() {
                    return Err(format!("string {i} is a null pointer"));
                }
                // SAFETY: the query's type promises NUL-terminated strings that live as long
                // as the device.
                let s = unsafe { CStr::from_ptr(p) };
                if s.to_bytes().is_empty() {
                    return Err(format!("string {i} is empty"));
                }
            }
            Ok(())
        }
    }
}

/// The names of a `cl_name_version[]` answer.
fn names(value: &[u8]) -> Vec<(String, cl_version)> {
    value
        .chunks_exact(size_of::<cl_name_version>())
        .map(|nv| {
            let version = cl_version::from_ne_bytes(nv[..4].try_into().unwrap());
            let name = CStr::from_bytes_until_nul(&nv[4..]).unwrap();
            (name.to_string_lossy().into_owned(), version)
        })
        .collect()
}

fn string(value: &[u8]) -> String {
    CStr::from_bytes_until_nul(value)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn uint(value: &[u8]) -> cl_uint {
    cl_uint::from_ne_bytes(value[..4].try_into().unwrap())
}

/// `major.minor` of a "<prefix> major.minor <vendor text>" version string.
fn major_minor(s: &str, prefix: &str) -> (u32, u32) {
    let number = s
        .strip_prefix(prefix)
        .and_then(|r| r.split(' ').next())
        .unwrap_or_else(|| panic!("{s:?} does not start with {prefix:?}"));
    let (major, minor) = number.split_once('.').expect("major.minor");
    (major.parse().unwrap(), minor.parse().unwrap())
}

fn version_parts(v: cl_version) -> (u32, u32) {
    (v >> 22, (v >> 12) & 0x3ff)
}

/// Asks every query of `table` that applies (`extensions` reported), collecting problems;
/// returns the answers by query value.
fn walk(
    table: &[Query],
    extensions: &[String],
    dims: usize,
    query: &dyn Fn(cl_uint, usize, *mut c_void, *mut usize) -> cl_int,
    problems: &mut Vec<String>,
) -> std::collections::HashMap<cl_uint, Vec<u8>> {
    let mut answers = std::collections::HashMap::new();
    for &(name, param, rule, requires) in table {
        if requires.is_some_and(|e| !extensions.iter().any(|x| x == e)) {
            continue;
        }
        match ask(&|size, value, ret| query(param, size, value, ret), name) {
            Ok(value) => match fits(rule, &value, dims) {
                Ok(()) => {
                    answers.insert(param, value);
                }
                Err(e) => problems.push(format!("{name}: {e}")),
            },
            Err(e) => problems.push(e),
        }
    }
    answers
}

fn platform_query(
    platform: cl_platform_id,
) -> impl Fn(cl_uint, usize, *mut c_void, *mut usize) -> cl_int {
    // SAFETY: a valid platform; the walk passes buffers of the size it names.
    move |param, size, value, ret| unsafe { clGetPlatformInfo(platform, param, size, value, ret) }
}

fn device_query(
    device: cl_device_id,
) -> impl Fn(cl_uint, usize, *mut c_void, *mut usize) -> cl_int {
    // SAFETY: a valid device; the walk passes buffers of the size it names.
    move |param, size, value, ret| unsafe { clGetDeviceInfo(device, param, size, value, ret) }
}

/// Every reported extension owns a row of the tables or is known to have no such query (for
/// this driver only: another ICD's own extensions are not this test's business).
fn audited(extensions: &[String], problems: &mut Vec<String>) {
    if target().other_icd {
        return;
    }
    for e in extensions {
        let has_rows = PLATFORM_QUERIES
            .iter()
            .chain(DEVICE_QUERIES)
            .any(|q| q.3 == Some(e.as_str()));
        let none = NO_DEVICE_QUERIES.contains(&e.as_str()) || e == "cl_khr_icd";
        if !has_rows && !none {
            problems.push(format!(
                "{e} is reported, but this test does not know its queries: add them"
            ));
        }
    }
}

/// cl_khr_extended_versioning's conformance rule: the numeric answers agree with the strings
/// they extend (its "Conformance Tests" section; API spec 4.2 for each pair).
fn versions_agree(
    answers: &std::collections::HashMap<cl_uint, Vec<u8>>,
    problems: &mut Vec<String>,
) {
    let get = |q| answers.get(&q).map(Vec::as_slice);
    if let (Some(text), Some(numeric)) = (
        get(CL_DEVICE_OPENCL_C_VERSION),
        get(CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR),
    ) {
        let text = string(text);
        let numeric = uint(numeric);
        if version_parts(numeric) != major_minor(&text, "OpenCL C ") {
            problems.push(format!(
                "CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR {numeric:#x} is not {text:?}'s version"
            ));
        }
        if let Some(all) = get(CL_DEVICE_OPENCL_C_ALL_VERSIONS) {
            if !names(all)
                .iter()
                .any(|(n, v)| n == "OpenCL C" && *v == numeric)
            {
                problems.push(format!(
                    "CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR {numeric:#x} is not in CL_DEVICE_OPENCL_C_ALL_VERSIONS"
                ));
            }
        }
    }
    if let (Some(text), Some(numeric)) = (get(CL_DEVICE_VERSION), get(CL_DEVICE_NUMERIC_VERSION)) {
        let text = string(text);
        if version_parts(uint(numeric)) != major_minor(&text, "OpenCL ") {
            problems.push(format!(
                "CL_DEVICE_NUMERIC_VERSION is not {text:?}'s version"
            ));
        }
    }
    if let (Some(text), Some(list)) = (
        get(CL_DEVICE_EXTENSIONS),
        get(CL_DEVICE_EXTENSIONS_WITH_VERSION),
    ) {
        let mut a: Vec<String> = string(text).split_whitespace().map(String::from).collect();
        let mut b: Vec<String> = names(list).into_iter().map(|(n, _)| n).collect();
        a.sort();
        b.sort();
        if a != b {
            problems.push(format!(
                "CL_DEVICE_EXTENSIONS {a:?} and CL_DEVICE_EXTENSIONS_WITH_VERSION {b:?} differ"
            ));
        }
    }
    if let (Some(text), Some(list)) = (get(CL_DEVICE_IL_VERSION), get(CL_DEVICE_ILS_WITH_VERSION)) {
        let a: Vec<String> = string(text).split_whitespace().map(String::from).collect();
        let b: Vec<String> = names(list)
            .iter()
            .map(|(n, v)| format!("{n}_{}.{}", v >> 22, (v >> 12) & 0x3ff))
            .collect();
        if a != b {
            problems.push(format!(
                "CL_DEVICE_IL_VERSION {a:?} and CL_DEVICE_ILS_WITH_VERSION {b:?} differ"
            ));
        }
    }
}

/// The root devices of the platform and, where one can be partitioned, its first sub-device
/// of one compute unit (which answers the partition queries differently).
fn devices_to_walk() -> (Vec<cl_device_id>, Vec<cl_device_id>) {
    let roots: Vec<cl_device_id> = check(
        cl(platform().get_devices(CL_DEVICE_TYPE_ALL)),
        "clGetDeviceIDs",
    )
    .into_iter()
    .collect();
    let mut subs = Vec::new();
    for &d in &roots {
        let max = cl3::device::get_device_data(d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES)
            .map(|v| uint(&v))
            .unwrap_or(0);
        if max < 2 {
            continue;
        }
        let props: [cl_device_partition_property; 3] = [CL_DEVICE_PARTITION_EQUALLY, 1, 0];
        let mut n = 0;
        // SAFETY: a zero-terminated property list; first a count, then that many handles.
        unsafe {
            if clCreateSubDevices(d, props.as_ptr(), 0, null_mut(), &mut n) != CL_SUCCESS {
                continue;
            }
            let mut out = vec![null_mut(); n as usize];
            if clCreateSubDevices(d, props.as_ptr(), n, out.as_mut_ptr(), null_mut()) == CL_SUCCESS
            {
                subs.push(out[0]);
                for &other in &out[1..] {
                    clReleaseDevice(other);
                }
            }
        }
    }
    (roots, subs)
}

#[test]
fn every_platform_and_device_query_answers_with_its_type_s_size() {
    let platform = platform().id();
    let mut problems = Vec::new();
    let pquery = platform_query(platform);
    let platform_extensions: Vec<String> = match ask(
        &|s, v, r| pquery(CL_PLATFORM_EXTENSIONS, s, v, r),
        "CL_PLATFORM_EXTENSIONS",
    ) {
        Ok(v) => string(&v).split_whitespace().map(String::from).collect(),
        Err(e) => panic!("{e}"),
    };
    audited(&platform_extensions, &mut problems);
    walk(
        PLATFORM_QUERIES,
        &platform_extensions,
        0,
        &pquery,
        &mut problems,
    );
    let (roots, subs) = devices_to_walk();
    for (i, &device) in roots.iter().chain(&subs).enumerate() {
        let what = if i < roots.len() {
            format!("device {i}")
        } else {
            "a sub-device".to_owned()
        };
        let dquery = device_query(device);
        let extensions: Vec<String> = match ask(
            &|s, v, r| dquery(CL_DEVICE_EXTENSIONS, s, v, r),
            "CL_DEVICE_EXTENSIONS",
        ) {
            Ok(v) => string(&v).split_whitespace().map(String::from).collect(),
            Err(e) => panic!("{what}: {e}"),
        };
        let dims = cl3::device::get_device_data(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS)
            .map(|v| uint(&v) as usize)
            .expect("CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS");
        let mut found = Vec::new();
        audited(&extensions, &mut found);
        let answers = walk(DEVICE_QUERIES, &extensions, dims, &dquery, &mut found);
        versions_agree(&answers, &mut found);
        problems.extend(found.into_iter().map(|p| format!("{what}: {p}")));
    }
    for &sub in &subs {
        // SAFETY: a sub-device this test created.
        unsafe { clReleaseDevice(sub) };
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The lines of clinfo's output that report a failed query (clinfo prints the error code in
/// angle brackets, or its name).
fn error_lines(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter(|l| {
            l.contains("CL_INVALID")
                || l.contains("Invalid")
                || l.contains(": error ")
                || (l.contains('<') && l.contains("Info:"))
        })
        .collect()
}

#[test]
fn clinfo_prints_no_error_line() {
    let icd = &target().icd;
    for args in [&[][..], &["--raw"][..], &["--all-props"][..]] {
        let out = match Command::new("clinfo")
            .args(args)
            .env("OCL_ICD_VENDORS", icd)
            .output()
        {
            Ok(out) => out,
            Err(e) => {
                eprintln!("clinfo not run ({e}): skipped");
                return;
            }
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "clinfo {args:?}: {}\n{stderr}",
            out.status
        );
        // "Number of platforms  1" or, raw, "#PLATFORMS  1".
        let platforms = stdout
            .lines()
            .next()
            .and_then(|l| l.split_whitespace().last());
        assert_eq!(
            platforms,
            Some("1"),
            "clinfo {args:?} does not see exactly this driver:\n{stdout}"
        );
        let errors = error_lines(&stdout);
        assert!(
            errors.is_empty(),
            "clinfo {args:?} against {}:\n{}",
            icd.display(),
            errors.join("\n")
        );
    }
}
