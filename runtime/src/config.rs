//! The device's capability facts: ONE table that every `clGetDeviceInfo` / `clGetPlatformInfo`
//! answer, the build-option checks and the executor read, so what is reported is what runs.

use opencl_sys::*;

use crate::features::{FeatureId, FeatureSet};
use crate::settings::{Profile, Rounding, Settings};

/// `CL_MAKE_VERSION(major, minor, patch)`.
pub const fn make_version(major: u32, minor: u32, patch: u32) -> cl_version {
    (major << 22) | (minor << 12) | patch
}

/// `cl_ext_float_atomics` queries and bits (not in opencl-sys 0.6; values from cl_ext.h).
pub const CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4231;
pub const CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4232;
pub const CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4233;
pub const CL_DEVICE_GLOBAL_FP_ATOMIC_LOAD_STORE_EXT: cl_bitfield = 1 << 0;
pub const CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT: cl_bitfield = 1 << 1;
pub const CL_DEVICE_GLOBAL_FP_ATOMIC_MIN_MAX_EXT: cl_bitfield = 1 << 2;
pub const CL_DEVICE_LOCAL_FP_ATOMIC_LOAD_STORE_EXT: cl_bitfield = 1 << 16;
pub const CL_DEVICE_LOCAL_FP_ATOMIC_ADD_EXT: cl_bitfield = 1 << 17;
pub const CL_DEVICE_LOCAL_FP_ATOMIC_MIN_MAX_EXT: cl_bitfield = 1 << 18;

/// `cl_khr_terminate_context`'s capability bit (not in opencl-sys 0.6; value from cl_ext.h).
pub const CL_DEVICE_TERMINATE_CAPABILITY_CONTEXT_KHR: cl_bitfield = 1 << 0;
/// The values OpenCL 1.2's headers gave the extension's device query and context property
/// (cl_ext.h's `*_KHR_1x`), which applications built against them still pass and clinfo
/// queries beside the current ones: answered as the same.
pub const CL_DEVICE_TERMINATE_CAPABILITY_KHR_1X: cl_device_info = 0x200F;
pub const CL_CONTEXT_TERMINATE_KHR_1X: cl_uint = 0x2010;

/// Every float atomic this device has, for one float type: load/store/exchange, add, min/max,
/// on global and local memory.
const ALL_FP_ATOMICS: cl_bitfield = CL_DEVICE_GLOBAL_FP_ATOMIC_LOAD_STORE_EXT
    | CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT
    | CL_DEVICE_GLOBAL_FP_ATOMIC_MIN_MAX_EXT
    | CL_DEVICE_LOCAL_FP_ATOMIC_LOAD_STORE_EXT
    | CL_DEVICE_LOCAL_FP_ATOMIC_ADD_EXT
    | CL_DEVICE_LOCAL_FP_ATOMIC_MIN_MAX_EXT;

/// One named, versioned capability (extension, IL, OpenCL C version or feature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameVersion {
    pub name: String,
    pub version: cl_version,
}

impl NameVersion {
    pub(crate) fn new(name: &str, version: cl_version) -> Self {
        NameVersion {
            name: name.to_owned(),
            version,
        }
    }
}

pub const PLATFORM_NAME: &str = "Ferrocl";
pub const PLATFORM_VENDOR: &str = "Ferrocl project";
pub const ICD_SUFFIX: &str = "FCL";
pub const DRIVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The extensions OpenCL 3.1 makes core and every 3.1 device must report (API spec 3.1
/// §4.2.1, Required OpenCL Extensions: "The following Khronos extension names must be returned
/// by all devices that support OpenCL 3.1 or newer").
pub const OPENCL_3_1_EXTENSIONS: [&str; 9] = [
    "cl_khr_device_uuid",
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "cl_khr_spirv_queries",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_rotate",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_suggested_local_work_size",
];

/// Whether a device with these extensions, ILs and sub-groups meets what OpenCL 3.1 adds to
/// 3.0 (API spec 3.1 §3.4.2 and the appendix's "Summary of Changes from OpenCL 3.0 to 3.1"):
/// the promoted extensions above, SPIR-V 1.0 to 1.4 (§4.2, `CL_DEVICE_IL_VERSION`), sub-groups
/// (§4.2, `CL_DEVICE_MAX_NUM_SUB_GROUPS` at least 1). OpenCL C 3.1 and the API's behaviour are
/// the driver's in every configuration; `FERROCL_SUBGROUPS=off` takes the sub-group
/// extensions away, and the device is then an OpenCL 3.0 one.
fn meets_opencl_3_1(
    extensions: &[NameVersion],
    il_versions: &[NameVersion],
    max_num_sub_groups: u32,
) -> bool {
    let has_il = |minor| {
        il_versions
            .iter()
            .any(|v| v.name == "SPIR-V" && v.version == make_version(1, minor, 0))
    };
    max_num_sub_groups > 0
        && (0..=4).all(has_il)
        && OPENCL_3_1_EXTENSIONS
            .iter()
            .all(|name| extensions.iter().any(|e| e.name == *name))
}

/// The OpenCL C 3.0 features that OpenCL C 2.0 has in its core (OpenCL C 3.0 §6.2.1, the
/// features marked as required in OpenCL C 2.0), `__opencl_c_read_write_images` only for a
/// device with images (image support is optional in 2.0 too).
const OPENCL_C_2_0_FEATURES: [&str; 10] = [
    "__opencl_c_int64",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_generic_address_space",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_pipes",
    "__opencl_c_device_enqueue",
];

/// Whether a device with these OpenCL C features may list OpenCL C 2.0 in
/// `CL_DEVICE_OPENCL_C_ALL_VERSIONS`: it compiles 2.0 programs, which may use every 2.0
/// feature without asking (programs hard-coding `-cl-std=CL2.0`, as the CTS `pipe_info` test
/// does, build).
fn meets_opencl_c_2_0(features: &[NameVersion]) -> bool {
    let has = |name: &str| features.iter().any(|f| f.name == name);
    OPENCL_C_2_0_FEATURES.iter().all(|f| has(f))
        && (!has("__opencl_c_images") || has("__opencl_c_read_write_images"))
}

/// A 128-bit FNV-1a digest of `parts`, shaped as an RFC 9562 version 8 (custom) UUID.
fn uuid_of(parts: &[&str]) -> [u8; 16] {
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for part in parts {
        for &b in part.as_bytes().iter().chain([0u8].iter()) {
            h ^= u128::from(b);
            h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
        }
    }
    let mut u = h.to_be_bytes();
    u[6] = (u[6] & 0x0f) | 0x80;
    u[8] = (u[8] & 0x3f) | 0x80;
    u
}

/// `CL_DRIVER_UUID_KHR`: the same for every run of one driver version on one target.
pub fn driver_uuid() -> [u8; 16] {
    uuid_of(&["ferrocl driver", DRIVER_VERSION, std::env::consts::ARCH])
}

/// The extensions these settings give, with the version of each spec, in the order of the
/// feature registry.
pub fn extensions(settings: &Settings) -> Vec<NameVersion> {
    FeatureSet::of(settings).extensions()
}

/// `CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR`: the frontend's table, as C strings that
/// live as long as the process (the query returns pointers to them).
pub fn spirv_extended_instruction_sets() -> &'static [std::ffi::CString] {
    static SETS: std::sync::OnceLock<Vec<std::ffi::CString>> = std::sync::OnceLock::new();
    SETS.get_or_init(|| c_strings(ferrocl_frontend::SUPPORTED_EXT_INST_SETS))
}

/// `CL_DEVICE_SPIRV_EXTENSIONS_KHR` of a device with `features`, as C strings that live as long
/// as the process (the query returns pointers to them): one list per feature set asked about,
/// and a process has a handful.
pub fn spirv_extensions(features: FeatureSet) -> &'static [std::ffi::CString] {
    type Lists = std::sync::Mutex<Vec<(FeatureSet, &'static [std::ffi::CString])>>;
    static LISTS: std::sync::OnceLock<Lists> = std::sync::OnceLock::new();
    let mut lists = LISTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some((_, list)) = lists.iter().find(|(set, _)| *set == features) {
        return list;
    }
    let names: Vec<&str> = features.reported_spirv_extensions().collect();
    let list: &'static [std::ffi::CString] = Vec::leak(c_strings(&names));
    lists.push((features, list));
    list
}

fn c_strings(names: &[&str]) -> Vec<std::ffi::CString> {
    names
        .iter()
        .filter_map(|n| std::ffi::CString::new(*n).ok())
        .collect()
}

/// The image limits of a device with images: the full-profile minimums where nothing larger
/// is useful, and what the allocation limit allows for buffer images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageLimits {
    /// `CL_DEVICE_IMAGE2D_MAX_WIDTH`, `_HEIGHT` (also the 1D and array widths).
    pub image2d_max: [usize; 2],
    /// `CL_DEVICE_IMAGE3D_MAX_WIDTH`, `_HEIGHT`, `_DEPTH`.
    pub image3d_max: [usize; 3],
    /// `CL_DEVICE_IMAGE_MAX_BUFFER_SIZE`, in pixels.
    pub max_buffer_size: usize,
    /// `CL_DEVICE_IMAGE_MAX_ARRAY_SIZE`.
    pub max_array_size: usize,
    /// `CL_DEVICE_MAX_READ_IMAGE_ARGS`, `_WRITE_`, `_READ_WRITE_`.
    pub max_image_args: [u32; 3],
    /// `CL_DEVICE_MAX_SAMPLERS`.
    pub max_samplers: u32,
    /// `CL_DEVICE_IMAGE_PITCH_ALIGNMENT` (pixels): rows of an image over a buffer may start at
    /// any pixel, since texels are loaded without alignment assumptions.
    pub pitch_alignment: usize,
    /// `CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT` (pixels), for the same reason.
    pub base_address_alignment: usize,
}

impl ImageLimits {
    fn new(max_mem_alloc_size: u64) -> Self {
        // The largest element is 16 bytes (RGBA float).
        let buffer_pixels = (max_mem_alloc_size / 16).clamp(65536, u32::MAX as u64) as usize;
        ImageLimits {
            image2d_max: [16384, 16384],
            image3d_max: [2048, 2048, 2048],
            max_buffer_size: buffer_pixels,
            max_array_size: 2048,
            max_image_args: [128, 64, 64],
            max_samplers: 16,
            pitch_alignment: 1,
            base_address_alignment: 1,
        }
    }

    /// What every one of two devices supports.
    pub fn min(a: Self, b: Self) -> Self {
        let m = |x: usize, y: usize| x.min(y);
        ImageLimits {
            image2d_max: [
                m(a.image2d_max[0], b.image2d_max[0]),
                m(a.image2d_max[1], b.image2d_max[1]),
            ],
            image3d_max: [
                m(a.image3d_max[0], b.image3d_max[0]),
                m(a.image3d_max[1], b.image3d_max[1]),
                m(a.image3d_max[2], b.image3d_max[2]),
            ],
            max_buffer_size: m(a.max_buffer_size, b.max_buffer_size),
            max_array_size: m(a.max_array_size, b.max_array_size),
            max_image_args: [0, 1, 2].map(|i| a.max_image_args[i].min(b.max_image_args[i])),
            max_samplers: a.max_samplers.min(b.max_samplers),
            pitch_alignment: a.pitch_alignment.max(b.pitch_alignment),
            base_address_alignment: a.base_address_alignment.max(b.base_address_alignment),
        }
    }
}

/// The pipe limits (`CL_DEVICE_PIPE_*`, `CL_DEVICE_MAX_PIPE_ARGS`) of a device with pipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeLimits {
    /// `CL_DEVICE_MAX_PIPE_ARGS`: the spec's minimum. Nothing in the driver counts pipe
    /// arguments (each is an 8-byte address in the argument block), so a kernel with more
    /// still runs; 16 is what a kernel may rely on.
    pub max_pipe_args: u32,
    /// `CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS`: reservations a work-item may hold open on one
    /// pipe at once. A pipe's ring takes any number its capacity allows, each found by a
    /// binary search among the open ones (codegen pipe.rs); what bounds the answer is the
    /// Khronos CTS `pipe_max_active_reservations`, which makes one work-item reserve this many
    /// at each end: 65536 (the CTS's own choice for devices that answer more than their memory)
    /// take 0.1 s in an unoptimised build.
    pub max_active_reservations: u32,
    /// `CL_DEVICE_PIPE_MAX_PACKET_SIZE`: the spec's minimum, 1024 bytes (clCreatePipe refuses
    /// larger packets with CL_INVALID_PIPE_SIZE).
    pub max_packet_size: u32,
}

impl PipeLimits {
    pub const DEVICE: PipeLimits = PipeLimits {
        max_pipe_args: 16,
        max_active_reservations: 65536,
        max_packet_size: 1024,
    };
}

/// The on-device queue limits of a device with device-side enqueue (OpenCL API 3.0 §4.2 and
/// §5.1; enforced by device_queue.rs and device_enqueue.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceQueueLimits {
    /// `CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES`: queues, and a replaceable default
    /// (clSetDefaultDeviceCommandQueue).
    pub capabilities: cl_device_device_enqueue_capabilities,
    /// `CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES`: out-of-order (required) and profiling.
    pub properties: cl_command_queue_properties,
    /// `CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE`: a queue's `CL_QUEUE_SIZE` when none is
    /// given. The pending commands of a queue may take this many bytes (each command's record,
    /// block literal, `__local` sizes and wait list: device_enqueue.rs), about 40,000
    /// enqueues of a small block: one child per work-item of a 16,384-item launch, as the
    /// CTS's command-buffer `device_enqueue` test asks of the default queue, fits. The bytes
    /// are a count, not an allocation.
    pub preferred_size: cl_uint,
    /// `CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE`: the largest `CL_QUEUE_SIZE` accepted.
    pub max_size: cl_uint,
    /// `CL_DEVICE_MAX_ON_DEVICE_QUEUES`: device queues of one device in one context besides
    /// the default one (the Khronos CTS device_queue creates this many next to the default).
    pub max_queues: cl_uint,
    /// `CL_DEVICE_MAX_ON_DEVICE_EVENTS`: events a launch and its children may hold unreleased
    /// at once (the spec's minimum).
    pub max_events: cl_uint,
}

impl DeviceQueueLimits {
    pub const DEVICE: DeviceQueueLimits = DeviceQueueLimits {
        capabilities: CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT,
        properties: (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE)
            as cl_command_queue_properties,
        preferred_size: 4 << 20,
        max_size: 8 << 20,
        max_queues: 4,
        max_events: 1024,
    };
}

/// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
const MAX_WORK_GROUP_SIZE: usize = 4096;

/// `CL_DEVICE_ATOMIC_*_CAPABILITIES`: every memory order, and the scopes in `scopes` (all
/// devices only with SVM, whose memory the host shares while kernels run).
fn atomic_capabilities(
    scopes: &[ferrocl_frontend::spirv::Scope],
    features: FeatureSet,
) -> cl_device_atomic_capabilities {
    use ferrocl_frontend::spirv::Scope;
    let mut caps = CL_DEVICE_ATOMIC_ORDER_RELAXED
        | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
        | CL_DEVICE_ATOMIC_ORDER_SEQ_CST;
    for scope in scopes {
        caps |= match scope {
            Scope::Invocation => CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM,
            Scope::Workgroup => CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP,
            Scope::Device => CL_DEVICE_ATOMIC_SCOPE_DEVICE,
            Scope::CrossDevice if features.has(FeatureId::SharedVirtualMemory) => {
                CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES
            }
            _ => 0,
        };
    }
    caps as cl_device_atomic_capabilities
}

/// Every device fact reported through the API.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// The `FERROCL_*` settings this device was configured with.
    pub settings: Settings,
    /// The features these settings turn on: what the device supports is asked here, by id.
    pub features: FeatureSet,
    /// `CL_PLATFORM_PROFILE` / `CL_DEVICE_PROFILE`.
    pub profile: &'static str,
    pub name: String,
    pub vendor: String,
    pub vendor_id: cl_uint,
    pub compute_units: cl_uint,
    pub max_work_item_dimensions: cl_uint,
    pub max_work_item_sizes: [usize; 3],
    pub max_work_group_size: usize,
    pub preferred_work_group_size_multiple: usize,
    pub max_clock_frequency: cl_uint,
    pub address_bits: cl_uint,
    pub global_mem_size: cl_ulong,
    pub max_mem_alloc_size: cl_ulong,
    pub mem_base_addr_align_bits: cl_uint,
    pub global_mem_cacheline_size: cl_uint,
    pub global_mem_cache_size: cl_ulong,
    pub local_mem_size: cl_ulong,
    pub max_constant_buffer_size: cl_ulong,
    pub max_constant_args: cl_uint,
    pub max_parameter_size: usize,
    pub single_fp_config: cl_device_fp_config,
    pub double_fp_config: cl_device_fp_config,
    pub half_fp_config: cl_device_fp_config,
    pub profiling_timer_resolution: usize,
    pub printf_buffer_size: usize,
    pub atomic_memory_capabilities: cl_device_atomic_capabilities,
    /// `CL_DEVICE_SVM_CAPABILITIES` (`FERROCL_SVM`).
    pub svm_capabilities: cl_device_svm_capabilities,
    pub atomic_fence_capabilities: cl_device_atomic_capabilities,
    pub non_uniform_work_group_support: bool,
    pub work_group_collective_functions: bool,
    /// `CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT`.
    pub generic_address_space: bool,
    /// `CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE` (the frontend refuses larger variables).
    pub max_global_variable_size: usize,
    /// `CL_DEVICE_MAX_NUM_SUB_GROUPS`: sub-groups in the largest work-group (0 without
    /// sub-groups).
    pub max_num_sub_groups: u32,
    /// `CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS`: a work-item spinning on an atomic
    /// for another sub-group of its work-group lets it run (codegen yields on the back edges of
    /// such loops). `cl_khr_subgroups` requires it; false without sub-groups.
    pub sub_group_independent_forward_progress: bool,
    /// `CL_DEVICE_SUB_GROUP_SIZES_INTEL` (cl_intel_required_subgroup_size): the sizes a kernel
    /// may require (codegen's `SUB_GROUP_SIZES`), none with sub-groups off.
    pub sub_group_sizes: Vec<usize>,
    /// `CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR`, 0 with sub-groups off.
    pub max_named_barriers: u32,
    /// `CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR`.
    pub integer_dot_product_capabilities: cl_bitfield,
    /// `CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT_KHR` and `_4x8BIT_PACKED_KHR`
    /// (the six cl_bool of cl_device_integer_dot_product_acceleration_properties_khr): none,
    /// the dot products are the same scalar multiply-adds an application would write.
    pub integer_dot_product_acceleration: [cl_bool; 6],
    /// `CL_DEVICE_KERNEL_CLOCK_CAPABILITIES_KHR`.
    pub kernel_clock_capabilities: cl_bitfield,
    /// `CL_DEVICE_IMAGE_SUPPORT` and the image limits; None without images (FERROCL_IMAGES).
    pub images: Option<ImageLimits>,
    /// `CL_DEVICE_PIPE_SUPPORT` and the pipe limits; None without pipes (FERROCL_PIPES).
    pub pipes: Option<PipeLimits>,
    /// The on-device queue limits; None without device-side enqueue (FERROCL_DEVICE_ENQUEUE).
    pub device_queues: Option<DeviceQueueLimits>,
    /// `CL_DEVICE_OPENCL_C_VERSION`: "OpenCL C<space>major.minor<space>vendor information"
    /// (the highest version a 3.0 or 3.1 device reports here is 1.2, API spec 3.1 §4.2; the
    /// rest is in ALL_VERSIONS).
    pub opencl_c_version: &'static str,
    /// `CL_DEVICE_OPENCL_C_ALL_VERSIONS`: 1.0, 1.1, 1.2 and 3.0, 2.0 where the device has every
    /// OpenCL C 2.0 feature (`meets_opencl_c_2_0`), and 3.1 on an OpenCL 3.1
    /// device (API spec 3.1 §4.2: "Support for at least OpenCL C 3.1, OpenCL C 3.0, OpenCL C
    /// 1.2, OpenCL C 1.1, and OpenCL C 1.0 is required for an OpenCL 3.1 device").
    pub opencl_c_all_versions: Vec<NameVersion>,
    pub opencl_c_features: Vec<NameVersion>,
    pub il_versions: Vec<NameVersion>,
    pub extensions: Vec<NameVersion>,
    /// `CL_DEVICE_{SINGLE,DOUBLE,HALF}_FP_ATOMIC_CAPABILITIES_EXT`.
    pub fp_atomic_capabilities: [cl_bitfield; 3],
    /// `CL_DEVICE_PREFERRED_VECTOR_WIDTH_*` and `CL_DEVICE_NATIVE_VECTOR_WIDTH_*` (char, short,
    /// int, long, float, double, half): what one 128-bit vector register of the generated code
    /// holds (Cranelift's widest on x86-64); 0 for a type the device lacks. Scalar code is
    /// vectorised four work-items at a time, but explicit 128-bit vectors give it four
    /// independent chains per work-item, which latency-bound code needs (clpeak on this machine:
    /// `int4` 22 GIOPS against 7 for `int`, `float4` 9.8 GFLOPS against 6.8; wider gains
    /// nothing), so the preferred widths are the native ones.
    pub vector_widths: [cl_uint; 7],
    pub queue_properties: cl_command_queue_properties,
    /// `CL_DEVICE_VERSION`: "OpenCL 3.1 Ferrocl" when the device meets OpenCL 3.1
    /// ([`OPENCL_3_1_EXTENSIONS`] and sub-groups), "OpenCL 3.0 Ferrocl" otherwise.
    pub device_version: &'static str,
    /// `CL_DEVICE_NUMERIC_VERSION`: the same version, `CL_MAKE_VERSION(3, 1, 0)` or (3, 0, 0).
    pub numeric_version: cl_version,
    pub latest_conformance_version_passed: &'static str,
}

/// Physical RAM from /proc/meminfo (the device is the host: its global memory is the RAM).
fn physical_ram() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let rest = l.strip_prefix("MemTotal:")?;
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                Some(kb * 1024)
            })
        })
        .unwrap_or(1 << 30)
}

/// The CPU's last-level data cache, as the kernel reports it in sysfs.
struct Cache {
    size: cl_ulong,
    line_size: cl_uint,
}

/// Largest data or unified cache of CPU 0; 1 MiB with 64-byte lines when sysfs cannot be read.
fn last_level_cache() -> Cache {
    let read = |path: std::path::PathBuf| {
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_owned())
    };
    let mut best = Cache {
        size: 1 << 20,
        line_size: 64,
    };
    let mut found = 0;
    for index in 0..8 {
        let dir =
            std::path::PathBuf::from(format!("/sys/devices/system/cpu/cpu0/cache/index{index}"));
        let Some(kind) = read(dir.join("type")) else {
            continue;
        };
        if kind == "Instruction" {
            continue;
        }
        let size = read(dir.join("size")).and_then(|s| {
            let (digits, unit) =
                s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
            let n: cl_ulong = digits.parse().ok()?;
            Some(match unit {
                "K" => n << 10,
                "M" => n << 20,
                _ => n,
            })
        });
        let line = read(dir.join("coherency_line_size")).and_then(|s| s.parse().ok());
        if let (Some(size), Some(line)) = (size, line) {
            if size > found {
                found = size;
                best = Cache {
                    size,
                    line_size: line,
                };
            }
        }
    }
    best
}

fn cpu_model_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "model name").then(|| v.trim().to_owned())
            })
        })
        .unwrap_or_else(|| "CPU".to_owned())
}

/// CL_DEVICE_MAX_CLOCK_FREQUENCY in MHz: the processor's maximum frequency from cpufreq when
/// the kernel exposes it, else the nominal one in the model name ("… @ 3.60GHz"), else the
/// current frequency /proc/cpuinfo shows (a virtual machine's fixed clock).
fn cpu_mhz() -> cl_uint {
    let cpufreq_khz =
        std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    max_clock_mhz(cpufreq_khz, &cpuinfo).unwrap_or(1000)
}

fn max_clock_mhz(cpufreq_khz: Option<u64>, cpuinfo: &str) -> Option<cl_uint> {
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        })
    };
    let nominal = || {
        let name = field("model name")?;
        let ghz = name.rsplit_once('@')?.1.trim().strip_suffix("GHz")?;
        Some((ghz.trim().parse::<f64>().ok()? * 1000.0).round() as cl_uint)
    };
    let current = || Some(field("cpu MHz")?.parse::<f64>().ok()?.round() as cl_uint);
    cpufreq_khz
        .filter(|&k| k > 0)
        .map(|k| (k / 1000) as cl_uint)
        .or_else(nominal)
        .or_else(current)
}

impl DeviceConfig {
    /// `CL_DEVICE_UUID_KHR`: stable for one driver version and processor model, different for
    /// either's change.
    pub fn device_uuid(&self) -> [u8; 16] {
        uuid_of(&["ferrocl device", DRIVER_VERSION, &self.name, &self.vendor])
    }

    /// Whether the device has feature `id`.
    pub fn has(&self, id: FeatureId) -> bool {
        self.features.has(id)
    }

    /// The device as `settings` configure it, with `threads` workers.
    pub fn detect(settings: &Settings, threads: usize) -> Self {
        let features = FeatureSet::of(settings);
        let flush = settings.flush_denormals;
        // Float `/` and `sqrt` are the IEEE instructions (divss, sqrtss) in every mode, rounded
        // in the thread's direction; flush-to-zero only touches subnormal inputs and results,
        // which CL_FP_DENORM already reports. The OpenCL C compiler keeps them exact under
        // -cl-fp32-correctly-rounded-divide-sqrt (opencl-c/src/opencl_c.rs).
        let single_fp_config = match settings.rounding {
            Rounding::NearestEven => {
                CL_FP_INF_NAN
                    | CL_FP_ROUND_TO_NEAREST
                    | CL_FP_ROUND_TO_ZERO
                    | CL_FP_ROUND_TO_INF
                    | CL_FP_FMA
            }
            Rounding::TowardZero => CL_FP_INF_NAN | CL_FP_ROUND_TO_ZERO | CL_FP_FMA,
        } | CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
            | if flush { 0 } else { CL_FP_DENORM };
        let opencl_c_features = features.opencl_c_features();
        let ram = physical_ram();
        // The spec minimum is max(1/4 of global memory, 128 MiB); a host allocation cannot
        // exceed isize::MAX.
        let max_mem_alloc_size = (ram / 4).max(128 << 20).min(isize::MAX as u64);
        let il_versions = ferrocl_frontend::SUPPORTED_SPIRV_VERSIONS
            .iter()
            .map(|&(ma, mi)| NameVersion::new("SPIR-V", make_version(ma as u32, mi as u32, 0)))
            .collect::<Vec<_>>();
        let extensions = features.extensions();
        let max_num_sub_groups = if features.has(FeatureId::SubGroups) {
            MAX_WORK_GROUP_SIZE.div_ceil(ferrocl_codegen::SUB_GROUP_SIZE as usize) as u32
        } else {
            0
        };
        let opencl_3_1 = meets_opencl_3_1(&extensions, &il_versions, max_num_sub_groups);
        let mut opencl_c_all_versions = [(1, 0), (1, 1), (1, 2)]
            .map(|(major, minor)| NameVersion::new("OpenCL C", make_version(major, minor, 0)))
            .to_vec();
        if meets_opencl_c_2_0(&opencl_c_features) {
            opencl_c_all_versions.push(NameVersion::new("OpenCL C", make_version(2, 0, 0)));
        }
        opencl_c_all_versions.push(NameVersion::new("OpenCL C", make_version(3, 0, 0)));
        if opencl_3_1 {
            opencl_c_all_versions.push(NameVersion::new("OpenCL C", make_version(3, 1, 0)));
        }
        let cache = last_level_cache();
        DeviceConfig {
            settings: settings.clone(),
            features,
            profile: match settings.profile {
                Profile::Full => "FULL_PROFILE",
                Profile::Embedded => "EMBEDDED_PROFILE",
            },
            name: cpu_model_name(),
            vendor: PLATFORM_VENDOR.to_owned(),
            vendor_id: 0, // no registered PCI or Khronos vendor id
            compute_units: threads as cl_uint,
            max_work_item_dimensions: 3,
            max_work_item_sizes: [4096, 4096, 4096],
            max_work_group_size: MAX_WORK_GROUP_SIZE,
            preferred_work_group_size_multiple: 8,
            max_clock_frequency: cpu_mhz(),
            address_bits: 64,
            global_mem_size: ram,
            max_mem_alloc_size,
            mem_base_addr_align_bits: 1024,
            global_mem_cacheline_size: cache.line_size,
            global_mem_cache_size: cache.size,
            local_mem_size: ferrocl_frontend::MAX_LOCAL_VARIABLE_BYTES,
            max_constant_buffer_size: 64 * 1024 * 1024,
            max_constant_args: 8,
            max_parameter_size: 1024,
            single_fp_config: single_fp_config as cl_device_fp_config,
            double_fp_config: if !features.has(FeatureId::Fp64) {
                0
            } else {
                (CL_FP_DENORM
                    | CL_FP_INF_NAN
                    | CL_FP_ROUND_TO_NEAREST
                    | CL_FP_ROUND_TO_ZERO
                    | CL_FP_ROUND_TO_INF
                    | CL_FP_FMA) as cl_device_fp_config
            },
            // Halves are computed in f32 (or f64 for fma) and rounded once more in the device's
            // default direction, which keeps half denormals whatever FERROCL_FTZ says.
            half_fp_config: if !features.has(FeatureId::Fp16) {
                0
            } else {
                (CL_FP_DENORM
                    | CL_FP_INF_NAN
                    | CL_FP_FMA
                    | match settings.rounding {
                        Rounding::NearestEven => CL_FP_ROUND_TO_NEAREST,
                        Rounding::TowardZero => CL_FP_ROUND_TO_ZERO,
                    }) as cl_device_fp_config
            },
            profiling_timer_resolution: 1,
            printf_buffer_size: 1024 * 1024,
            // Global atomics are Cranelift's sequentially consistent instructions, local ones
            // run on the one thread executing the work-group: every order holds. The scopes are
            // the ones the frontend accepts in modules (all-devices scope with SVM: host threads
            // use the same instructions on the same memory).
            atomic_memory_capabilities: atomic_capabilities(
                ferrocl_frontend::ATOMIC_SCOPES,
                features,
            ),
            atomic_fence_capabilities: atomic_capabilities(
                ferrocl_frontend::FENCE_SCOPES,
                features,
            ),
            svm_capabilities: settings.svm.capabilities(),
            non_uniform_work_group_support: true,
            work_group_collective_functions: true,
            generic_address_space: true,
            max_global_variable_size: ferrocl_frontend::MAX_PROGRAM_SCOPE_VARIABLE_BYTES as usize,
            max_num_sub_groups,
            sub_group_independent_forward_progress: features.has(FeatureId::SubGroups),
            max_named_barriers: if features.has(FeatureId::SubGroupNamedBarriers) {
                ferrocl_frontend::MAX_NAMED_BARRIERS
            } else {
                0
            },
            sub_group_sizes: if features.has(FeatureId::IntelSubGroups) {
                ferrocl_codegen::SUB_GROUP_SIZES
                    .map(|n| n as usize)
                    .to_vec()
            } else {
                Vec::new()
            },
            integer_dot_product_capabilities: CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_KHR
                | CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED_KHR,
            integer_dot_product_acceleration: [CL_FALSE; 6],
            kernel_clock_capabilities: CL_DEVICE_KERNEL_CLOCK_SCOPE_DEVICE_KHR
                | CL_DEVICE_KERNEL_CLOCK_SCOPE_WORK_GROUP_KHR,
            images: features
                .has(FeatureId::ImageHostApi)
                .then(|| ImageLimits::new(max_mem_alloc_size)),
            pipes: features.has(FeatureId::Pipes).then_some(PipeLimits::DEVICE),
            device_queues: features
                .has(FeatureId::DeviceEnqueue)
                .then_some(DeviceQueueLimits::DEVICE),
            opencl_c_version: "OpenCL C 1.2 Ferrocl",
            opencl_c_all_versions,
            opencl_c_features,
            fp_atomic_capabilities: [
                ALL_FP_ATOMICS,
                if features.has(FeatureId::Fp64) {
                    ALL_FP_ATOMICS
                } else {
                    0
                },
                0,
            ],
            il_versions,
            extensions,
            vector_widths: vector_widths(settings, features),
            queue_properties: (CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
                as cl_command_queue_properties,
            device_version: if opencl_3_1 {
                "OpenCL 3.1 Ferrocl"
            } else {
                "OpenCL 3.0 Ferrocl"
            },
            numeric_version: make_version(3, u32::from(opencl_3_1), 0),
            latest_conformance_version_passed: "v0000-01-01-00",
        }
    }

    /// The device's OpenCL version as (major, minor).
    pub fn version(&self) -> (u32, u32) {
        (
            self.numeric_version >> 22,
            (self.numeric_version >> 12) & 0x3ff,
        )
    }

    /// `CL_PLATFORM_VERSION`: the platform has this one device (sub-devices are parts of it),
    /// so it supports the version the device does (API spec 3.1 §4.1).
    pub fn platform_version(&self) -> &'static str {
        self.device_version
    }

    /// Whether `clSetKernelArg` takes a size of zero for a `__local` argument: on an OpenCL 3.1
    /// platform (API spec 3.1 §5.9.2, "For OpenCL 3.1 and newer, arg_size may be zero"), not
    /// before (CL_INVALID_ARG_SIZE).
    pub fn allows_empty_local_args(&self) -> bool {
        self.version() >= (3, 1)
    }

    /// Whether `CL_DEVICE_OPENCL_C_ALL_VERSIONS` lists OpenCL C `major.minor`: `-cl-std=`
    /// names only those (API spec 3.1 §5.8.6.5).
    pub fn supports_opencl_c(&self, major: u32, minor: u32) -> bool {
        self.opencl_c_all_versions
            .iter()
            .any(|v| v.version == make_version(major, minor, 0))
    }

    /// `CL_DEVICE_IL_VERSION`: "SPIR-V_1.0 SPIR-V_1.1 …".
    pub fn il_version_string(&self) -> String {
        self.il_versions
            .iter()
            .map(|v| {
                format!(
                    "{}_{}.{}",
                    v.name,
                    v.version >> 22,
                    (v.version >> 12) & 0x3ff
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR`: cl_khr_extended_versioning requires its major
    /// and minor to be those of `CL_DEVICE_OPENCL_C_VERSION` (API spec 4.2, the clGetDeviceInfo
    /// table), so it is read from that string rather than kept beside it, where the two could
    /// drift apart. The extension's answer when there is no version information is 0.0.0.
    pub fn opencl_c_numeric_version(&self) -> cl_version {
        let number = self
            .opencl_c_version
            .strip_prefix("OpenCL C ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.split_once('.'))
            .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
        number.map_or(0, |(major, minor)| make_version(major, minor, 0))
    }

    pub fn extension_string(&self) -> String {
        self.extensions
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What clang may assume (`-cl-ext`): exactly the device's OpenCL C extensions and
    /// optional features, so sources cannot use what the device does not provide.
    pub fn opencl_c_extensions(&self) -> Vec<&'static str> {
        self.features.clang_extensions()
    }

    /// OpenCL C → SPIR-V with the OpenCL C driver's recipe for this device: clang sees exactly
    /// its extensions and features. The one call of the recipe for `clBuildProgram`, the offline
    /// compiler, the integration tests and the benchmark.
    pub fn compile_opencl_c(&self, source: &str, options: &str) -> Result<Vec<u8>, String> {
        ferrocl_opencl_c::OpenClC {
            source,
            options,
            extensions: &self.opencl_c_extensions(),
            undefine: &self.clang_undefines(),
            preludes: &self.clang_preludes(),
            spirv_extensions: &self.llvm_spirv_extensions(),
            debug_info: false,
            llvm_server: self.settings.llvm_server,
        }
        .compile()
    }

    /// Macros clang-15 predefines for every SPIR target that this device must not have: those
    /// of the features its settings leave off (`__IMAGE_SUPPORT__` without images).
    pub fn clang_undefines(&self) -> Vec<&'static str> {
        self.features.clang_undefines()
    }

    /// What the OpenCL C recipe adds to clang-15 for this device's features, and the device's
    /// OpenCL version for `__OPENCL_VERSION__`.
    pub fn clang_preludes(&self) -> Vec<ferrocl_opencl_c::Prelude> {
        let (major, minor) = self.version();
        let mut preludes = self.features.clang_preludes();
        preludes.push(ferrocl_opencl_c::Prelude::OpenClVersion(
            major * 100 + minor * 10,
        ));
        preludes
    }

    /// The SPIR-V extensions llvm-spirv may use for this device: those of its features.
    pub fn llvm_spirv_extensions(&self) -> Vec<&'static str> {
        self.features.enabled_spirv_extensions()
    }

    /// Whether a module may declare SPIR-V capability `cap` on this device: the capabilities
    /// of the features these settings turn on.
    pub fn allows_capability(&self, cap: ferrocl_frontend::spirv::Capability) -> bool {
        self.features.allows(cap)
    }

    /// `CL_DEVICE_SPIRV_CAPABILITIES_KHR`: every capability a module may declare here.
    pub fn spirv_capabilities(&self) -> Vec<cl_uint> {
        self.features
            .spirv_capabilities()
            .into_iter()
            .map(|c| c as cl_uint)
            .collect()
    }

    /// Whether OpenCL C sources can be compiled: decided at runtime by finding clang.
    pub fn compiler_available(&self) -> bool {
        ferrocl_opencl_c::opencl_c_compiler_available()
    }
}

/// Preferred and native vector widths (char short int long float double half): a vector
/// register of the code kernels end up running — the CPU's full width with the wide backend
/// (tiered or from the start: 512 bits with AVX-512, 256 with AVX2), 128 bits with Cranelift
/// alone. Applications size their own vectors from these (a password cracker's `Vec:16`), and
/// the packer turns such vectors into whole registers.
fn vector_widths(settings: &Settings, features: FeatureSet) -> [cl_uint; 7] {
    let bits = match settings.backend {
        crate::settings::BackendSetting::Cranelift => 128,
        _ => ferrocl_codegen::Target::host().vector_bits,
    };
    let lanes = |lane_bits: u32| bits / lane_bits;
    [
        lanes(8),
        lanes(16),
        lanes(32),
        lanes(64),
        lanes(32),
        if features.has(FeatureId::Fp64) {
            lanes(64)
        } else {
            0
        },
        if features.has(FeatureId::Fp16) {
            lanes(16)
        } else {
            0
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_frequency_prefers_the_maximum() {
        let intel = "model name\t: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz\ncpu MHz\t\t: 800.012\n";
        assert_eq!(max_clock_mhz(Some(4_600_000), intel), Some(4600));
        assert_eq!(max_clock_mhz(None, intel), Some(3200));
        let vm = "model name\t: AMD EPYC\ncpu MHz\t\t: 2596.148\n";
        assert_eq!(max_clock_mhz(None, vm), Some(2596));
        assert_eq!(max_clock_mhz(Some(0), vm), Some(2596));
        assert_eq!(max_clock_mhz(None, ""), None);
    }

    #[test]
    fn il_versions_come_from_the_frontend() {
        let c = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 2);
        assert_eq!(
            c.il_versions.len(),
            ferrocl_frontend::SUPPORTED_SPIRV_VERSIONS.len()
        );
        assert!(c.il_version_string().starts_with("SPIR-V_1.0 SPIR-V_1.1"));
        assert!(c.il_version_string().ends_with("SPIR-V_1.6"));
        assert_eq!(make_version(3, 0, 0), 0xC00000);
        assert!(c.max_mem_alloc_size <= c.global_mem_size.max(128 << 20));
        assert!(c.global_mem_cache_size >= 4096 && c.global_mem_cacheline_size.is_power_of_two());
    }

    #[test]
    fn opencl_c_numeric_version_is_the_version_string_s() {
        let mut c = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 2);
        assert_eq!(c.opencl_c_numeric_version(), make_version(1, 2, 0));
        assert!(c
            .opencl_c_all_versions
            .iter()
            .any(|v| v.version == c.opencl_c_numeric_version()));
        c.opencl_c_version = "OpenCL C 3.1 Ferrocl";
        assert_eq!(c.opencl_c_numeric_version(), make_version(3, 1, 0));
        c.opencl_c_version = "";
        assert_eq!(c.opencl_c_numeric_version(), 0);
    }

    #[test]
    fn clang_sees_exactly_the_device_language_features() {
        let full = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 2);
        let mut got = full.opencl_c_extensions();
        got.sort_unstable();
        assert_eq!(
            got,
            [
                "__opencl_c_3d_image_writes",
                "__opencl_c_atomic_order_acq_rel",
                "__opencl_c_atomic_order_seq_cst",
                "__opencl_c_atomic_scope_all_devices",
                "__opencl_c_atomic_scope_device",
                "__opencl_c_device_enqueue",
                "__opencl_c_ext_fp32_global_atomic_add",
                "__opencl_c_ext_fp32_global_atomic_min_max",
                "__opencl_c_ext_fp32_local_atomic_add",
                "__opencl_c_ext_fp32_local_atomic_min_max",
                "__opencl_c_ext_fp64_global_atomic_add",
                "__opencl_c_ext_fp64_global_atomic_min_max",
                "__opencl_c_ext_fp64_local_atomic_add",
                "__opencl_c_ext_fp64_local_atomic_min_max",
                "__opencl_c_fp64",
                "__opencl_c_generic_address_space",
                "__opencl_c_images",
                "__opencl_c_int64",
                "__opencl_c_integer_dot_product_input_4x8bit",
                "__opencl_c_integer_dot_product_input_4x8bit_packed",
                "__opencl_c_kernel_clock_scope_device",
                "__opencl_c_kernel_clock_scope_work_group",
                "__opencl_c_pipes",
                "__opencl_c_program_scope_global_variables",
                "__opencl_c_read_write_images",
                "__opencl_c_subgroups",
                "__opencl_c_work_group_collective_functions",
                "cl_ext_float_atomics",
                "cl_intel_bfloat16_conversions",
                "cl_intel_required_subgroup_size",
                "cl_intel_subgroup_local_block_io",
                "cl_intel_subgroups",
                "cl_intel_subgroups_char",
                "cl_intel_subgroups_long",
                "cl_intel_subgroups_short",
                "cl_khr_3d_image_writes",
                "cl_khr_async_work_group_copy_fence",
                "cl_khr_byte_addressable_store",
                "cl_khr_depth_images",
                "cl_khr_expect_assume",
                "cl_khr_extended_async_copies",
                "cl_khr_extended_bit_ops",
                "cl_khr_fp16",
                "cl_khr_fp64",
                "cl_khr_global_int32_base_atomics",
                "cl_khr_global_int32_extended_atomics",
                "cl_khr_int64_base_atomics",
                "cl_khr_int64_extended_atomics",
                "cl_khr_integer_dot_product",
                "cl_khr_kernel_clock",
                "cl_khr_local_int32_base_atomics",
                "cl_khr_local_int32_extended_atomics",
                "cl_khr_mipmap_image",
                "cl_khr_mipmap_image_writes",
                "cl_khr_srgb_image_writes",
                "cl_khr_subgroup_ballot",
                "cl_khr_subgroup_clustered_reduce",
                "cl_khr_subgroup_extended_types",
                "cl_khr_subgroup_named_barrier",
                "cl_khr_subgroup_non_uniform_arithmetic",
                "cl_khr_subgroup_non_uniform_vote",
                "cl_khr_subgroup_rotate",
                "cl_khr_subgroup_shuffle",
                "cl_khr_subgroup_shuffle_relative",
                "cl_khr_subgroups",
                "cl_khr_work_group_uniform_arithmetic",
            ]
        );
        let no_fp64 = DeviceConfig::detect(
            &Settings::parse(|k| (k == "FERROCL_FP64").then(|| "off".to_owned()), |_| {}),
            2,
        );
        assert!(!no_fp64
            .opencl_c_extensions()
            .iter()
            .any(|e| e.contains("fp64")));
        assert_eq!(no_fp64.double_fp_config, 0);
        assert_eq!(no_fp64.vector_widths[5], 0);
        let bits = ferrocl_codegen::Target::host().vector_bits;
        assert_eq!(
            full.vector_widths,
            [
                bits / 8,
                bits / 16,
                bits / 32,
                bits / 64,
                bits / 32,
                bits / 64,
                bits / 16
            ]
        );
        let cranelift = DeviceConfig::detect(
            &Settings::parse(
                |k| (k == "FERROCL_BACKEND").then(|| "cranelift".to_owned()),
                |_| {},
            ),
            2,
        );
        assert_eq!(cranelift.vector_widths, [16, 8, 4, 2, 4, 2, 8]);
        assert!(!no_fp64.allows_capability(ferrocl_frontend::spirv::Capability::Float64));
        assert!(
            !no_fp64.allows_capability(ferrocl_frontend::spirv::Capability::AtomicFloat64AddEXT)
        );
        assert_eq!(no_fp64.fp_atomic_capabilities[1], 0);
        assert_eq!(full.fp_atomic_capabilities[0], ALL_FP_ATOMICS);
        assert!(full.allows_capability(ferrocl_frontend::spirv::Capability::Float64));
        let no_fp16 = DeviceConfig::detect(
            &Settings::parse(|k| (k == "FERROCL_FP16").then(|| "off".to_owned()), |_| {}),
            2,
        );
        assert!(!no_fp16
            .opencl_c_extensions()
            .iter()
            .any(|e| e.contains("fp16")));
        assert_eq!(no_fp16.half_fp_config, 0);
        assert_eq!(no_fp16.vector_widths[6], 0);
        assert!(!no_fp16.allows_capability(ferrocl_frontend::spirv::Capability::Float16));
        // Halves in memory stay available.
        assert!(no_fp16.allows_capability(ferrocl_frontend::spirv::Capability::Float16Buffer));
        assert!(full.allows_capability(ferrocl_frontend::spirv::Capability::Float16));
        assert_ne!(
            full.half_fp_config & CL_FP_ROUND_TO_NEAREST as cl_device_fp_config,
            0
        );
    }

    #[test]
    fn sub_groups_off_removes_every_trace_of_them() {
        use ferrocl_frontend::spirv::Capability;
        let on = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 2);
        assert_eq!(on.max_num_sub_groups, 1024);
        assert!(on.sub_group_independent_forward_progress);
        assert!(on.allows_capability(Capability::GroupNonUniformBallot));
        let off = DeviceConfig::detect(
            &Settings::parse(
                |k| (k == "FERROCL_SUBGROUPS").then(|| "off".to_owned()),
                |_| {},
            ),
            2,
        );
        assert!(!off
            .opencl_c_extensions()
            .iter()
            .any(|e| e.contains("subgroup")));
        assert!(!off.extensions.iter().any(|e| e.name.contains("subgroup")));
        assert_eq!(off.max_num_sub_groups, 0);
        assert!(!off.sub_group_independent_forward_progress);
        for cap in FeatureId::SubGroups.feature().spirv_capabilities {
            assert!(!off.allows_capability(*cap), "{cap:?}");
        }
        // Work-group collectives stay.
        assert!(off.allows_capability(Capability::Groups));
    }

    #[test]
    fn pipes_off_removes_the_pipe_limits_and_the_capability() {
        use ferrocl_frontend::spirv::Capability;
        let on = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 2);
        assert_eq!(on.pipes, Some(PipeLimits::DEVICE));
        assert!(on.allows_capability(Capability::Pipes));
        assert!(on
            .opencl_c_features
            .iter()
            .any(|f| f.name == "__opencl_c_pipes" && f.version == make_version(3, 0, 0)));
        // The API spec's minimums, which the Khronos CTS checks.
        let limits = PipeLimits::DEVICE;
        assert!(limits.max_pipe_args >= 16 && limits.max_packet_size >= 1024);
        assert!(limits.max_active_reservations >= 1);
        let off = DeviceConfig::detect(
            &Settings::parse(|k| (k == "FERROCL_PIPES").then(|| "off".to_owned()), |_| {}),
            2,
        );
        assert_eq!(off.pipes, None);
        assert!(!off.allows_capability(Capability::Pipes));
        assert!(!off.opencl_c_extensions().contains(&"__opencl_c_pipes"));
        assert!(!off
            .opencl_c_features
            .iter()
            .any(|f| f.name.contains("pipe")));
    }

    #[test]
    fn device_enqueue_limits_meet_the_spec_and_go_with_the_switch() {
        use ferrocl_frontend::spirv::Capability;
        let on = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 2);
        let limits = on
            .device_queues
            .expect("device-side enqueue is on by default");
        // The minimums of the API spec the Khronos CTS device_info checks.
        assert!(limits.preferred_size >= 16 << 10 && limits.max_size >= 256 << 10);
        assert!(limits.preferred_size <= limits.max_size);
        assert!(limits.max_queues >= 1 && limits.max_events >= 1024);
        let required = (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE)
            as cl_command_queue_properties;
        assert_eq!(limits.properties & required, required);
        assert!(on.allows_capability(Capability::DeviceEnqueue));
        assert!(on
            .opencl_c_features
            .iter()
            .any(|f| f.name == "__opencl_c_device_enqueue"));
        let off = DeviceConfig::detect(
            &Settings::parse(
                |k| (k == "FERROCL_DEVICE_ENQUEUE").then(|| "off".to_owned()),
                |_| {},
            ),
            2,
        );
        assert_eq!(off.device_queues, None);
        assert!(!off.allows_capability(Capability::DeviceEnqueue));
        assert!(!off
            .opencl_c_extensions()
            .contains(&"__opencl_c_device_enqueue"));
    }

    #[test]
    fn ftz_and_rtz_change_the_single_precision_config() {
        let ftz = DeviceConfig::detect(
            &Settings::parse(|k| (k == "FERROCL_FTZ").then(|| "on".to_owned()), |_| {}),
            2,
        );
        assert_eq!(
            ftz.single_fp_config & CL_FP_DENORM as cl_device_fp_config,
            0
        );
        assert_ne!(
            ftz.double_fp_config & CL_FP_DENORM as cl_device_fp_config,
            0
        );
        let rtz = DeviceConfig::detect(
            &Settings::parse(
                |k| (k == "FERROCL_ROUNDING").then(|| "rtz".to_owned()),
                |_| {},
            ),
            2,
        );
        assert_eq!(rtz.profile, "EMBEDDED_PROFILE");
        assert_eq!(
            rtz.single_fp_config & CL_FP_ROUND_TO_NEAREST as cl_device_fp_config,
            0
        );
        assert_ne!(
            rtz.single_fp_config & CL_FP_ROUND_TO_ZERO as cl_device_fp_config,
            0
        );
        assert!(rtz.extensions.iter().any(|e| e.name == "cles_khr_int64"));
        assert_eq!(rtz.double_fp_config, 0);
        // Correctly rounded divide and sqrt in every mode; never claimed for double or half
        // (the flag is defined for single precision only).
        let cr = CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT as cl_device_fp_config;
        let default = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 2);
        for c in [&default, &ftz, &rtz] {
            assert_ne!(c.single_fp_config & cr, 0);
            assert_eq!(c.double_fp_config & cr, 0);
            assert_eq!(c.half_fp_config & cr, 0);
        }
    }
}
