//! The device's features, one entry each under a typed [`FeatureId`]: what switches it, the CL
//! extensions and OpenCL C feature macros it brings, the SPIR-V extensions and capabilities a
//! module may declare with it, what else in a module needs it, the `clGetDeviceInfo` queries
//! whose answers it changes, and what clang is told of it. Every answer derives from this table
//! in the manner of clvk's device description — the extension lists,
//! `CL_DEVICE_OPENCL_C_FEATURES`, the `cl_khr_spirv_queries` answers, the frontend's capability
//! gate, the refusals of `clBuildProgram`, what clang may assume (`-cl-ext`, undefined macros),
//! the queries zero while a feature is off — and the rest of the driver asks it by id
//! ([`FeatureSet::has`]), never by an extension's name, so that adding a feature is adding an
//! entry and its implementation. `features::tests` and the loader test
//! `config::the_feature_registry_agrees_with_the_answers` hold the table and the answers
//! together.

use ferrocl_frontend::spirv::Capability;
use ferrocl_opencl_c::Prelude;
use opencl_sys::*;

use crate::config::{make_version, NameVersion, CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT};
use crate::settings::{Profile, Settings};
use crate::svm::SvmLevel;

/// A feature of the table, in its order: `FEATURES[id as usize].id == id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureId {
    Core,
    QueueHints,
    CommandBuffers,
    FloatAtomics,
    IntegerDotProduct,
    KernelClock,
    ExtendedBitOps,
    ExpectAssume,
    WorkGroupUniformArithmetic,
    ExtendedAsyncCopies,
    AsyncCopyFence,
    Bfloat16Conversions,
    DevicelibAssert,
    Fp64,
    Fp16,
    EmbeddedInt64,
    SubGroups,
    SubGroupNamedBarriers,
    IntelSubGroups,
    ImageHostApi,
    ImageKernels,
    ImageMipmaps,
    SharedVirtualMemory,
    Pipes,
    DeviceEnqueue,
}

/// What turns a feature on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Every configuration has it.
    Always,
    /// `FERROCL_FP64` (and `FERROCL_ROUNDING=rtz` turns it off: doubles must round to nearest).
    Fp64,
    /// `FERROCL_FP16`.
    Fp16,
    /// `FERROCL_SUBGROUPS`.
    SubGroups,
    /// `FERROCL_PROFILE=embedded`.
    EmbeddedProfile,
    /// `FERROCL_SVM` other than off.
    Svm,
    /// `FERROCL_IMAGES=on`.
    Images,
    /// `FERROCL_PIPES=on`.
    Pipes,
    /// `FERROCL_DEVICE_ENQUEUE=on`.
    DeviceEnqueue,
    /// Not implemented yet: always off; the text says what is missing (for build logs).
    NotImplemented(&'static str),
}

impl Switch {
    pub fn is_on(self, settings: &Settings) -> bool {
        match self {
            Switch::Always => true,
            Switch::Fp64 => settings.fp64,
            Switch::Fp16 => settings.fp16,
            Switch::SubGroups => settings.sub_groups,
            Switch::EmbeddedProfile => settings.profile == Profile::Embedded,
            Switch::Svm => settings.svm != SvmLevel::Off,
            Switch::Images => settings.images,
            Switch::Pipes => settings.pipes,
            Switch::DeviceEnqueue => settings.device_enqueue,
            Switch::NotImplemented(_) => false,
        }
    }

    /// The setting that turned the feature off, for build logs.
    pub fn off_by(self) -> &'static str {
        match self {
            Switch::Always => "nothing",
            Switch::Fp64 => "FERROCL_FP64=off or FERROCL_ROUNDING=rtz",
            Switch::Fp16 => "FERROCL_FP16=off",
            Switch::SubGroups => "FERROCL_SUBGROUPS=off",
            Switch::EmbeddedProfile => "FERROCL_PROFILE=full",
            Switch::Svm => "FERROCL_SVM=off",
            Switch::Images => "FERROCL_IMAGES=off",
            Switch::Pipes => "FERROCL_PIPES=off",
            Switch::DeviceEnqueue => "FERROCL_DEVICE_ENQUEUE=off",
            Switch::NotImplemented(missing) => missing,
        }
    }
}

/// A CL extension a feature brings.
#[derive(Clone, Copy, Debug)]
pub struct Extension {
    pub name: &'static str,
    pub version: cl_version,
    /// Whether it is an OpenCL C language extension clang must be told of (`-cl-ext`); the
    /// others are API-only.
    pub opencl_c: bool,
}

const fn ext(name: &'static str, major: u32) -> Extension {
    Extension {
        name,
        version: make_version(major, 0, 0),
        opencl_c: true,
    }
}

const fn api_ext(name: &'static str) -> Extension {
    Extension {
        name,
        version: make_version(1, 0, 0),
        opencl_c: false,
    }
}

/// What a module may hold only while a feature is on, besides the capabilities it declares:
/// the frontend finds them (`Module::first_half_value`, `Module::first_all_devices_scope`) and
/// the program cache keeps whether a module has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleUse {
    /// Values of half type (halves in memory, `Float16Buffer`, need nothing).
    HalfValues,
    /// Atomics or barriers of the all-devices (`CrossDevice`) memory scope.
    AllDevicesScope,
}

/// One feature of the device.
#[derive(Debug)]
pub struct Feature {
    pub id: FeatureId,
    pub name: &'static str,
    pub switch: Switch,
    pub extensions: &'static [Extension],
    /// `__opencl_c_*` feature macros (CL_DEVICE_OPENCL_C_FEATURES), with their versions.
    pub opencl_c_features: &'static [(&'static str, cl_version)],
    /// SPIR-V extensions a module may declare (`CL_DEVICE_SPIRV_EXTENSIONS_KHR`). Accepted in
    /// every configuration: an extension only names instructions, and the capabilities that
    /// allow them are what the switch gates.
    pub spirv_extensions: &'static [&'static str],
    /// SPIR-V capabilities a module may declare only with this feature on.
    pub spirv_capabilities: &'static [Capability],
    /// What else in a module needs this feature on.
    pub module_uses: &'static [ModuleUse],
    /// `clGetDeviceInfo` queries answered with zero (or nothing) while the feature is off.
    pub device_info: &'static [cl_device_info],
    /// Feature macros clang must be told of (`-cl-ext`) that no query reports: those of
    /// `cl_ext_float_atomics`, which the extension answers with capability bits instead.
    pub clang_features: &'static [&'static str],
    /// Macros clang-15 predefines for every SPIR target that mean this feature: undefined
    /// while it is off.
    pub clang_defines: &'static [&'static str],
    /// What the OpenCL C recipe adds to clang-15 for this feature (macros and built-ins it
    /// lacks), while it is on.
    pub clang_preludes: &'static [Prelude],
    /// `__opencl_c_*` features of other entries this one needs (OpenCL C 3.0 §6.2.1): it is
    /// off, whatever its switch says, while one of them is.
    pub requires: &'static [&'static str],
}

const V3: cl_version = make_version(3, 0, 0);
const V2: cl_version = make_version(2, 0, 0);
const V1: cl_version = make_version(1, 0, 0);

/// A feature of `id` with nothing yet: the entries below fill in what they bring.
const fn feature(id: FeatureId, name: &'static str, switch: Switch) -> Feature {
    Feature {
        id,
        name,
        switch,
        extensions: &[],
        opencl_c_features: &[],
        spirv_extensions: &[],
        spirv_capabilities: &[],
        module_uses: &[],
        device_info: &[],
        clang_features: &[],
        clang_defines: &[],
        clang_preludes: &[],
        requires: &[],
    }
}

/// Every feature, in the order the queries list them.
pub const FEATURES: &[Feature] = &[
    Feature {
        extensions: &[
            api_ext("cl_khr_icd"),
            // CL_PLATFORM_UNLOADABLE_KHR answers false: the device's worker threads run the
            // library's code for the life of the process (icd platform.rs).
            api_ext("cl_khr_icd_unloadable"),
            api_ext("cl_khr_il_program"),
            ext("cl_khr_byte_addressable_store", 1),
            ext("cl_khr_global_int32_base_atomics", 1),
            ext("cl_khr_global_int32_extended_atomics", 1),
            ext("cl_khr_local_int32_base_atomics", 1),
            ext("cl_khr_local_int32_extended_atomics", 1),
            ext("cl_khr_int64_base_atomics", 1),
            ext("cl_khr_int64_extended_atomics", 1),
            api_ext("cl_khr_suggested_local_work_size"),
            api_ext("cl_khr_spirv_no_integer_wrap_decoration"),
            api_ext("cl_khr_spirv_linkonce_odr"),
            // Modules importing OpenCL.DebugInfo.100 (env spec 5.2.21): the frontend sets its
            // instructions aside as locations for build logs (frontend locations.rs).
            api_ext("cl_khr_spirv_extended_debug_info"),
            api_ext("cl_khr_spirv_queries"),
            // The *_WITH_VERSION queries and CL_*_NUMERIC_VERSION.
            api_ext("cl_khr_extended_versioning"),
            // CL_DEVICE_UUID_KHR / CL_DRIVER_UUID_KHR (config.rs `device_uuid`).
            api_ext("cl_khr_device_uuid"),
            // clCreateCommandQueueWithPropertiesKHR.
            api_ext("cl_khr_create_command_queue"),
            // Binary semaphores ordering commands across queues (semaphore.rs).
            api_ext("cl_khr_semaphore"),
            // CL_CONTEXT_MEMORY_INITIALIZE_KHR: local memory zeroed per work-group, private
            // variables per work-item (context.rs MemoryInitialize).
            api_ext("cl_khr_initialize_memory"),
            // clTerminateContextKHR (termination.rs).
            api_ext("cl_khr_terminate_context"),
        ],
        opencl_c_features: &[
            ("__opencl_c_int64", V3),
            ("__opencl_c_atomic_order_acq_rel", V3),
            ("__opencl_c_atomic_order_seq_cst", V3),
            ("__opencl_c_atomic_scope_device", V3),
            // Generic pointers are flat addresses; to_global/to_local/to_private and
            // get_fence classify them by address (codegen/src/translate/generic.rs).
            ("__opencl_c_generic_address_space", V3),
            // Program-scope __global variables: JIT data of the program, shared by its
            // kernels and kept across launches; initializers may hold addresses.
            ("__opencl_c_program_scope_global_variables", V3),
            ("__opencl_c_work_group_collective_functions", V3),
        ],
        spirv_extensions: &[
            "SPV_KHR_linkonce_odr",
            "SPV_KHR_no_integer_wrap_decoration",
            "SPV_KHR_non_semantic_info",
            // Hints DPC++ writes (see the capabilities below).
            "SPV_INTEL_memory_access_aliasing",
            "SPV_INTEL_fp_fast_math_mode",
        ],
        spirv_capabilities: &[
            Capability::Addresses,
            Capability::Linkage,
            Capability::Kernel,
            Capability::Vector16,
            Capability::Int8,
            Capability::Int16,
            Capability::Int64,
            // Halves in memory (vload_half/vstore_half); always available in OpenCL.
            Capability::Float16Buffer,
            Capability::Int64Atomics,
            // Generic pointers (OpenCL C's generic address space; llvm-spirv also uses them
            // for wait_group_events in OpenCL C 1.2): flat addresses, classified by address.
            Capability::GenericPointer,
            // Work-group collectives (and sub-group ones, which the sub-group scope gates).
            Capability::Groups,
            // SPIR-V 1.6 Uniform/UniformId decorations: promises code generation may ignore.
            Capability::UniformDecoration,
            // SPV_INTEL_memory_access_aliasing (DPC++): alias scopes on loads, stores and calls
            // are hints; the parser sets their declarations aside.
            Capability::MemoryAccessAliasingINTEL,
            // SPV_INTEL_fp_fast_math_mode (DPC++): AllowContract/AllowReassoc are permissions,
            // not requests; codegen keeps every operation exact.
            Capability::FPFastMathModeINTEL,
        ],
        ..feature(FeatureId::Core, "core", Switch::Always)
    },
    Feature {
        // CL_QUEUE_PRIORITY_KHR and CL_QUEUE_THROTTLE_KHR in clCreateCommandQueueWithProperties:
        // a priority orders the jobs of queues contending for the device's workers, a low
        // throttle holds a queue's launches to half of them (queue.rs, executor.rs).
        extensions: &[
            api_ext("cl_khr_priority_hints"),
            api_ext("cl_khr_throttle_hints"),
        ],
        ..feature(FeatureId::QueueHints, "queue hints", Switch::Always)
    },
    Feature {
        // Commands recorded once and enqueued as one queue command; kernel commands whose
        // arguments, exec info and sizes change between enqueues; overlapping executions
        // (command_buffer.rs). The CTS checks for exactly these extension versions.
        extensions: &[
            Extension {
                name: "cl_khr_command_buffer",
                version: make_version(0, 9, 8),
                opencl_c: false,
            },
            Extension {
                name: "cl_khr_command_buffer_mutable_dispatch",
                version: make_version(0, 9, 5),
                opencl_c: false,
            },
            // Several queues per command-buffer, of any devices of the platform (sub-devices
            // of the one CPU), and remapped copies (clRemapCommandBufferKHR).
            Extension {
                name: "cl_khr_command_buffer_multi_device",
                version: make_version(0, 9, 2),
                opencl_c: false,
            },
        ],
        // The required queue properties are 0 in every configuration.
        device_info: &[
            CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
            CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR,
            CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR,
            CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR,
            CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR,
        ],
        ..feature(FeatureId::CommandBuffers, "command buffers", Switch::Always)
    },
    Feature {
        // Float add/min/max as compare-and-swap loops; double needs fp64 (below).
        extensions: &[ext("cl_ext_float_atomics", 1)],
        spirv_extensions: &[
            "SPV_EXT_shader_atomic_float_add",
            "SPV_EXT_shader_atomic_float_min_max",
        ],
        spirv_capabilities: &[
            Capability::AtomicFloat32AddEXT,
            Capability::AtomicFloat32MinMaxEXT,
        ],
        // CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT: add and min/max, global and local.
        clang_features: &[
            "__opencl_c_ext_fp32_global_atomic_add",
            "__opencl_c_ext_fp32_local_atomic_add",
            "__opencl_c_ext_fp32_global_atomic_min_max",
            "__opencl_c_ext_fp32_local_atomic_min_max",
        ],
        ..feature(FeatureId::FloatAtomics, "float atomics", Switch::Always)
    },
    Feature {
        // 8-bit vector and packed inputs (SPV_KHR_integer_dot_product, core in SPIR-V 1.6).
        extensions: &[ext("cl_khr_integer_dot_product", 2)],
        opencl_c_features: &[
            ("__opencl_c_integer_dot_product_input_4x8bit", V2),
            ("__opencl_c_integer_dot_product_input_4x8bit_packed", V2),
        ],
        spirv_extensions: &["SPV_KHR_integer_dot_product"],
        spirv_capabilities: &[
            Capability::DotProduct,
            Capability::DotProductInput4x8Bit,
            Capability::DotProductInput4x8BitPacked,
        ],
        ..feature(
            FeatureId::IntegerDotProduct,
            "integer dot product",
            Switch::Always,
        )
    },
    Feature {
        // OpReadClockKHR at device and work-group scope.
        extensions: &[ext("cl_khr_kernel_clock", 1)],
        opencl_c_features: &[
            ("__opencl_c_kernel_clock_scope_device", V1),
            ("__opencl_c_kernel_clock_scope_work_group", V1),
        ],
        spirv_extensions: &["SPV_KHR_shader_clock"],
        spirv_capabilities: &[Capability::ShaderClockKHR],
        clang_preludes: &[Prelude::KernelClock],
        ..feature(FeatureId::KernelClock, "kernel clock", Switch::Always)
    },
    Feature {
        // OpBitFieldInsert/SExtract/UExtract and OpBitReverse.
        extensions: &[ext("cl_khr_extended_bit_ops", 1)],
        spirv_extensions: &["SPV_KHR_bit_instructions"],
        spirv_capabilities: &[Capability::BitInstructions],
        ..feature(
            FeatureId::ExtendedBitOps,
            "extended bit operations",
            Switch::Always,
        )
    },
    Feature {
        // OpExpectKHR and OpAssumeTrueKHR (hints).
        extensions: &[ext("cl_khr_expect_assume", 1)],
        spirv_extensions: &["SPV_KHR_expect_assume"],
        spirv_capabilities: &[Capability::ExpectAssumeKHR],
        // clang-15 has __builtin_expect and __builtin_assume, not the macro.
        clang_preludes: &[Prelude::Macro("cl_khr_expect_assume")],
        ..feature(FeatureId::ExpectAssume, "expect and assume", Switch::Always)
    },
    Feature {
        // The mul, bitwise and logical reductions and scans, at work-group (and sub-group)
        // scope; the OpenCL C built-ins are declared by the frontend for clang-15, which
        // predates them.
        extensions: &[ext("cl_khr_work_group_uniform_arithmetic", 1)],
        spirv_extensions: &["SPV_KHR_uniform_group_instructions"],
        spirv_capabilities: &[Capability::GroupUniformArithmeticKHR],
        clang_preludes: &[Prelude::WorkGroupUniformArithmetic],
        ..feature(
            FeatureId::WorkGroupUniformArithmetic,
            "work-group uniform arithmetic",
            Switch::Always,
        )
    },
    Feature {
        // async_work_group_copy_2D2D and _3D3D: imported calls codegen turns into line copies
        // (translate/group.rs); the frontend declares them for clang-15, which predates them.
        extensions: &[ext("cl_khr_extended_async_copies", 1)],
        clang_preludes: &[Prelude::ExtendedAsyncCopies],
        ..feature(
            FeatureId::ExtendedAsyncCopies,
            "extended async copies",
            Switch::Always,
        )
    },
    Feature {
        // async_work_group_copy_fence: an imported call codegen turns into a fence (async
        // copies are complete in program order, translate/group.rs); the frontend declares it
        // for clang-15, which predates it.
        extensions: &[ext("cl_khr_async_work_group_copy_fence", 1)],
        clang_preludes: &[Prelude::AsyncCopyFence],
        ..feature(
            FeatureId::AsyncCopyFence,
            "async work-group copy fence",
            Switch::Always,
        )
    },
    Feature {
        // float ↔ bfloat16 (as ushort) conversions, rounding to nearest even: the frontend
        // rewrites OpConvertFToBF16INTEL and OpConvertBF16ToFINTEL into integer instructions
        // (frontend bfloat16.rs); the built-ins are declared for clang-15, which lacks them.
        extensions: &[ext("cl_intel_bfloat16_conversions", 1)],
        spirv_extensions: &["SPV_INTEL_bfloat16_conversion"],
        spirv_capabilities: &[Capability::BFloat16ConversionINTEL],
        clang_preludes: &[Prelude::Bfloat16Conversions],
        ..feature(
            FeatureId::Bfloat16Conversions,
            "bfloat16 conversions",
            Switch::Always,
        )
    },
    Feature {
        // SYCL's device-code assert in DPC++'s native mode: a module imports
        // `__devicelib_assert_fail` unresolved (frontend link.rs `provided_by_device`, its
        // signature checked), and codegen calls the driver's function, which prints the
        // failure to stderr and aborts the process (codegen devicelib_assert.rs). Nothing in
        // OpenCL C names it, so clang is not told.
        extensions: &[api_ext("cl_intel_devicelib_assert")],
        ..feature(
            FeatureId::DevicelibAssert,
            "device-code assert",
            Switch::Always,
        )
    },
    Feature {
        extensions: &[ext("cl_khr_fp64", 1)],
        opencl_c_features: &[("__opencl_c_fp64", V3)],
        spirv_capabilities: &[
            Capability::Float64,
            Capability::AtomicFloat64AddEXT,
            Capability::AtomicFloat64MinMaxEXT,
        ],
        device_info: &[
            CL_DEVICE_DOUBLE_FP_CONFIG,
            CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
            CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
            CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT,
        ],
        // CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT: add and min/max, global and local.
        clang_features: &[
            "__opencl_c_ext_fp64_global_atomic_add",
            "__opencl_c_ext_fp64_local_atomic_add",
            "__opencl_c_ext_fp64_global_atomic_min_max",
            "__opencl_c_ext_fp64_local_atomic_min_max",
        ],
        ..feature(FeatureId::Fp64, "fp64", Switch::Fp64)
    },
    Feature {
        // Half values and arithmetic; halves in memory (Float16Buffer) are always there.
        extensions: &[ext("cl_khr_fp16", 1)],
        spirv_capabilities: &[Capability::Float16],
        module_uses: &[ModuleUse::HalfValues],
        device_info: &[
            CL_DEVICE_HALF_FP_CONFIG,
            CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
            CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
        ],
        ..feature(FeatureId::Fp16, "fp16", Switch::Fp16)
    },
    Feature {
        // 64-bit integers are optional in the embedded profile; this device has them.
        extensions: &[ext("cles_khr_int64", 1)],
        ..feature(
            FeatureId::EmbeddedInt64,
            "embedded-profile int64",
            Switch::EmbeddedProfile,
        )
    },
    Feature {
        // Sub-groups of 4 work-items with independent forward progress; codegen implements
        // every instruction the extensions bring (codegen/src/translate/subgroup.rs).
        extensions: &[
            ext("cl_khr_subgroups", 1),
            ext("cl_khr_subgroup_extended_types", 1),
            ext("cl_khr_subgroup_non_uniform_vote", 1),
            ext("cl_khr_subgroup_ballot", 1),
            ext("cl_khr_subgroup_non_uniform_arithmetic", 1),
            ext("cl_khr_subgroup_shuffle", 1),
            ext("cl_khr_subgroup_shuffle_relative", 1),
            ext("cl_khr_subgroup_clustered_reduce", 1),
            ext("cl_khr_subgroup_rotate", 1),
        ],
        opencl_c_features: &[("__opencl_c_subgroups", V3)],
        spirv_extensions: &["SPV_KHR_subgroup_rotate"],
        spirv_capabilities: &[
            // Execution modes SubgroupSize and SubgroupsPerWorkgroup.
            Capability::SubgroupDispatch,
            Capability::GroupNonUniform,
            Capability::GroupNonUniformVote,
            Capability::GroupNonUniformBallot,
            Capability::GroupNonUniformArithmetic,
            Capability::GroupNonUniformShuffle,
            Capability::GroupNonUniformShuffleRelative,
            Capability::GroupNonUniformClustered,
            Capability::GroupNonUniformRotateKHR,
        ],
        device_info: &[
            CL_DEVICE_MAX_NUM_SUB_GROUPS,
            CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
        ],
        ..feature(FeatureId::SubGroups, "sub-groups", Switch::SubGroups)
    },
    Feature {
        // Barriers of some sub-groups of a work-group (SPIR-V OpNamedBarrierInitialize and
        // OpMemoryNamedBarrier; OpenCL C has no built-ins for them): gates that count the
        // whole sub-groups waiting on each barrier (codegen gates.rs).
        extensions: &[ext("cl_khr_subgroup_named_barrier", 1)],
        spirv_capabilities: &[Capability::NamedBarrier],
        device_info: &[CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR],
        // Nothing in OpenCL C, but the Khronos CTS expects the macro where it is reported.
        clang_preludes: &[Prelude::Macro("cl_khr_subgroup_named_barrier")],
        ..feature(
            FeatureId::SubGroupNamedBarriers,
            "sub-group named barriers",
            Switch::SubGroups,
        )
    },
    Feature {
        // The Intel sub-group extensions on the same sub-groups of 4: the shuffles (exchanges,
        // codegen subgroup.rs) of 8- to 64-bit integers and floats, the block reads and writes
        // of buffers, of local memory and of 2D images (block_io.rs; image types themselves
        // need FERROCL_IMAGES) with 8-, 16-, 32- and 64-bit data, a required sub-group size of
        // 4 (other sizes fail the build) and the queries they bring. The built-ins are declared
        // by the OpenCL C driver for clang-15, whose built-in table lacks them. Versions as
        // Intel's CPU runtime reports them.
        extensions: &[
            ext("cl_intel_subgroups", 1),
            ext("cl_intel_subgroups_char", 1),
            ext("cl_intel_subgroups_short", 1),
            ext("cl_intel_subgroups_long", 1),
            ext("cl_intel_required_subgroup_size", 1),
            api_ext("cl_intel_spirv_subgroups"),
            ext("cl_intel_subgroup_local_block_io", 1),
        ],
        spirv_extensions: &["SPV_INTEL_subgroups"],
        spirv_capabilities: &[
            Capability::SubgroupShuffleINTEL,
            Capability::SubgroupBufferBlockIOINTEL,
            Capability::SubgroupImageBlockIOINTEL,
        ],
        device_info: &[CL_DEVICE_SUB_GROUP_SIZES_INTEL],
        clang_preludes: &[Prelude::IntelSubGroups],
        ..feature(
            FeatureId::IntelSubGroups,
            "Intel sub-groups",
            Switch::SubGroups,
        )
    },
    Feature {
        // Image and sampler objects and every image command of the host API.
        extensions: &[api_ext("cl_khr_image2d_from_buffer")],
        device_info: &[
            CL_DEVICE_IMAGE_SUPPORT,
            CL_DEVICE_MAX_READ_IMAGE_ARGS,
            CL_DEVICE_MAX_WRITE_IMAGE_ARGS,
            CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS,
            CL_DEVICE_MAX_SAMPLERS,
            CL_DEVICE_IMAGE2D_MAX_WIDTH,
            CL_DEVICE_IMAGE2D_MAX_HEIGHT,
            CL_DEVICE_IMAGE3D_MAX_WIDTH,
            CL_DEVICE_IMAGE3D_MAX_HEIGHT,
            CL_DEVICE_IMAGE3D_MAX_DEPTH,
            CL_DEVICE_IMAGE_MAX_BUFFER_SIZE,
            CL_DEVICE_IMAGE_MAX_ARRAY_SIZE,
            CL_DEVICE_IMAGE_PITCH_ALIGNMENT,
            CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT,
        ],
        ..feature(FeatureId::ImageHostApi, "image host API", Switch::Images)
    },
    Feature {
        // Image reads, writes, samplers and queries in kernels (codegen translate/image.rs).
        // Without them, clGetSupportedImageFormats lists no depth formats and no 3D or sRGB
        // formats a kernel may write (`image.rs`), as the API spec's consistency rules require.
        extensions: &[
            ext("cl_khr_depth_images", 1),
            ext("cl_khr_3d_image_writes", 1),
            ext("cl_khr_srgb_image_writes", 1),
        ],
        opencl_c_features: &[
            ("__opencl_c_images", V3),
            ("__opencl_c_3d_image_writes", V3),
            ("__opencl_c_read_write_images", V3),
        ],
        spirv_capabilities: &[
            Capability::ImageBasic,
            Capability::ImageReadWrite,
            Capability::LiteralSampler,
            Capability::Sampled1D,
            Capability::Image1D,
            Capability::SampledBuffer,
            Capability::ImageBuffer,
        ],
        // clang-15 defines it for every spir64 target.
        clang_defines: &["__IMAGE_SUPPORT__"],
        clang_preludes: &[Prelude::ImageConstants],
        ..feature(FeatureId::ImageKernels, "image kernels", Switch::Images)
    },
    Feature {
        // Images with mip levels: creation, every image command on a level, the sampler's mip
        // filter and lod range (runtime image.rs, sampler.rs), and in kernels `Lod` and `Grad`
        // operands on reads and writes and the level queries (codegen translate/image.rs).
        extensions: &[
            ext("cl_khr_mipmap_image", 1),
            ext("cl_khr_mipmap_image_writes", 1),
        ],
        spirv_capabilities: &[Capability::ImageMipmap],
        ..feature(FeatureId::ImageMipmaps, "image mipmaps", Switch::Images)
    },
    Feature {
        // Version 1.1.0: any pointer value is a valid USM kernel argument. cl_khr_unified_svm
        // at the version the Khronos headers declare (beta): SVM types (svm.rs), its entry
        // points (icd unified_svm.rs) and its changes to the SVM commands.
        extensions: &[
            Extension {
                name: "cl_intel_unified_shared_memory",
                version: make_version(1, 1, 0),
                opencl_c: false,
            },
            Extension {
                name: "cl_khr_unified_svm",
                version: make_version(0, 9, 0),
                opencl_c: false,
            },
        ],
        // All-devices scope is the scope of SVM atomics shared with the host.
        opencl_c_features: &[("__opencl_c_atomic_scope_all_devices", V3)],
        module_uses: &[ModuleUse::AllDevicesScope],
        device_info: &[
            CL_DEVICE_SVM_CAPABILITIES,
            CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL,
            CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL,
            CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
            CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
            CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR,
        ],
        ..feature(
            FeatureId::SharedVirtualMemory,
            "shared virtual memory",
            Switch::Svm,
        )
    },
    Feature {
        // Pipe objects (clCreatePipe: a memory object over codegen's `Pipe`, memory.rs) and,
        // in kernels, pipe arguments with their reads, writes, reservations and packet counts
        // (codegen pipe.rs and translate/). Pipes are an OpenCL C 3.0 feature without an
        // extension; `PipeStorage` (program-scope pipes of OpenCL C++) is not supported.
        opencl_c_features: &[("__opencl_c_pipes", V3)],
        spirv_capabilities: &[Capability::Pipes],
        device_info: &[
            CL_DEVICE_PIPE_SUPPORT,
            CL_DEVICE_MAX_PIPE_ARGS,
            CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS,
            CL_DEVICE_PIPE_MAX_PACKET_SIZE,
        ],
        ..feature(FeatureId::Pipes, "pipes", Switch::Pipes)
    },
    Feature {
        // Device-side enqueue: on-device queues (clCreateCommandQueueWithProperties with
        // CL_QUEUE_ON_DEVICE, clSetDefaultDeviceCommandQueue, queue_t arguments: device_queue.rs)
        // and, in kernels, enqueue_kernel, enqueue_marker, the clk_event_t functions and the
        // block queries, run by the launch's device-enqueue host (device_enqueue.rs). A feature
        // without an extension; OpenCL C 3.0 makes it depend on the two features below.
        opencl_c_features: &[("__opencl_c_device_enqueue", V3)],
        spirv_capabilities: &[Capability::DeviceEnqueue],
        device_info: &[
            CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES,
            CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES,
            CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE,
            CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE,
            CL_DEVICE_MAX_ON_DEVICE_QUEUES,
            CL_DEVICE_MAX_ON_DEVICE_EVENTS,
        ],
        requires: &[
            "__opencl_c_generic_address_space",
            "__opencl_c_program_scope_global_variables",
        ],
        ..feature(
            FeatureId::DeviceEnqueue,
            "device-side enqueue",
            Switch::DeviceEnqueue,
        )
    },
];

impl FeatureId {
    /// Its entry of the table.
    pub fn feature(self) -> &'static Feature {
        &FEATURES[self as usize]
    }
}

/// The features a device has: what its settings turn on. Every question about what the device
/// supports is asked here, by [`FeatureId`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureSet(u64);

impl FeatureSet {
    /// The features `settings` turn on, less those whose required features are off.
    pub fn of(settings: &Settings) -> Self {
        FeatureSet(
            FEATURES
                .iter()
                .filter(|f| f.switch.is_on(settings))
                .fold(0, |bits, f| bits | 1 << f.id as u32),
        )
        .settled()
    }

    /// The set with feature `id` off, and with it what requires it.
    #[cfg(test)]
    pub(crate) fn without(self, id: FeatureId) -> Self {
        FeatureSet(self.0 & !(1 << id as u32)).settled()
    }

    /// The set less its features whose [`Feature::requires`] are not all met, until nothing
    /// changes (a feature dropped may be another's requirement).
    fn settled(mut self) -> Self {
        loop {
            let provided: Vec<&str> = self
                .enabled()
                .flat_map(|f| f.opencl_c_features.iter().map(|(n, _)| *n))
                .collect();
            let unmet = self
                .enabled()
                .find(|f| f.requires.iter().any(|r| !provided.contains(r)));
            match unmet {
                Some(f) => self.0 &= !(1 << f.id as u32),
                None => return self,
            }
        }
    }

    pub fn has(self, id: FeatureId) -> bool {
        self.0 & 1 << id as u32 != 0
    }

    /// The features on, in table order.
    pub fn enabled(self) -> impl Iterator<Item = &'static Feature> {
        FEATURES.iter().filter(move |f| self.has(f.id))
    }

    /// The features off, in table order.
    pub fn disabled(self) -> impl Iterator<Item = &'static Feature> {
        FEATURES.iter().filter(move |f| !self.has(f.id))
    }

    /// `CL_DEVICE_EXTENSIONS(_WITH_VERSION)`, in table order.
    pub fn extensions(self) -> Vec<NameVersion> {
        self.enabled()
            .flat_map(|f| f.extensions)
            .map(|e| NameVersion::new(e.name, e.version))
            .collect()
    }

    /// `CL_DEVICE_SPIRV_EXTENSIONS_KHR`: the SPIR-V extensions of the features on, in the order
    /// of the frontend's list. The environment spec ties each to an OpenCL extension or feature
    /// (`SPV_KHR_subgroup_rotate` to `cl_khr_subgroup_rotate`, …), so one whose feature is off is
    /// not reported, though a module declaring it is still read (its capabilities are gated).
    pub fn reported_spirv_extensions(self) -> impl Iterator<Item = &'static str> {
        ferrocl_frontend::SUPPORTED_EXTENSIONS
            .iter()
            .copied()
            .filter(move |e| self.enabled().any(|f| f.spirv_extensions.contains(e)))
    }

    /// `CL_DEVICE_OPENCL_C_FEATURES`, in table order.
    pub fn opencl_c_features(self) -> Vec<NameVersion> {
        self.enabled()
            .flat_map(|f| f.opencl_c_features)
            .map(|&(name, version)| NameVersion::new(name, version))
            .collect()
    }

    /// What clang may assume (`-cl-ext`): exactly the OpenCL C extensions and feature macros
    /// of the features on, so sources cannot use what the device does not provide.
    pub fn clang_extensions(self) -> Vec<&'static str> {
        let extensions = self
            .enabled()
            .flat_map(|f| f.extensions)
            .filter(|e| e.opencl_c)
            .map(|e| e.name);
        let features = self
            .enabled()
            .flat_map(|f| f.opencl_c_features)
            .map(|(name, _)| *name);
        let unreported = self
            .enabled()
            .flat_map(|f| f.clang_features.iter().copied());
        extensions.chain(features).chain(unreported).collect()
    }

    /// What the OpenCL C recipe adds to clang-15 for the features on.
    pub fn clang_preludes(self) -> Vec<Prelude> {
        self.enabled()
            .flat_map(|f| f.clang_preludes.iter().copied())
            .collect()
    }

    /// The SPIR-V extensions of the features on: what llvm-spirv may use for OpenCL C.
    pub fn enabled_spirv_extensions(self) -> Vec<&'static str> {
        self.enabled()
            .flat_map(|f| f.spirv_extensions.iter().copied())
            .collect()
    }

    /// Macros clang-15 predefines for every SPIR target that this device must not have: those
    /// of the features off (`__IMAGE_SUPPORT__` without images).
    pub fn clang_undefines(self) -> Vec<&'static str> {
        self.disabled()
            .flat_map(|f| f.clang_defines.iter().copied())
            .collect()
    }

    /// Whether a module may declare SPIR-V capability `cap` here.
    pub fn allows(self, cap: Capability) -> bool {
        owning_capability(cap).is_some_and(|f| self.has(f.id))
    }

    /// `CL_DEVICE_SPIRV_CAPABILITIES_KHR`: every capability a module may declare here, in the
    /// order of the frontend's list (that of the answers before this table).
    pub fn spirv_capabilities(self) -> Vec<Capability> {
        ferrocl_frontend::SUPPORTED_CAPABILITIES
            .iter()
            .copied()
            .filter(|&c| self.allows(c))
            .collect()
    }

    /// Capabilities of the features off, each with the build-log rule a module declaring it
    /// breaks (the frontend's gate reports it).
    pub fn turned_off_capabilities(self) -> Vec<(Capability, String)> {
        self.disabled()
            .flat_map(|f| {
                f.spirv_capabilities.iter().map(move |&c| {
                    (
                        c,
                        format!(
                            "env 3: capability {c:?} is turned off on this device ({})",
                            f.switch.off_by()
                        ),
                    )
                })
            })
            .collect()
    }

    /// Parses and validates `spirv` (specialised with `spec_values`) for a device with these
    /// features: the frontend's gate allows the capabilities and SPIR-V extensions they bring,
    /// and says which setting turned off a capability the frontend implements.
    pub fn parse(
        self,
        spirv: &[u8],
        spec_values: &std::collections::HashMap<u32, Vec<u8>>,
    ) -> Result<ferrocl_frontend::Module, ferrocl_frontend::FrontendError> {
        let capabilities = self.spirv_capabilities();
        let extensions: Vec<&str> = spirv_extensions().collect();
        let turned_off = self.turned_off_capabilities();
        let device = ferrocl_frontend::DeviceSupport {
            capabilities: &capabilities,
            extensions: &extensions,
            turned_off: &turned_off,
        };
        ferrocl_frontend::parse_for_device(spirv, spec_values, &device)
    }

    /// What a module may not hold here besides capabilities, in table order.
    pub fn refused_uses(self) -> impl Iterator<Item = ModuleUse> {
        self.disabled().flat_map(|f| f.module_uses.iter().copied())
    }

    /// Whether a module that declares `capabilities` (SPIR-V numbers) and holds the uses `has`
    /// says it does can run here: the check of machine code cached for a module, whose fresh
    /// build the frontend's gate and [`FeatureSet::refused_uses`] check.
    pub fn refuses(self, capabilities: &[u32], has: impl Fn(ModuleUse) -> bool) -> bool {
        capabilities
            .iter()
            .any(|&c| Capability::from_u32(c).is_none_or(|c| !self.allows(c)))
            || self.refused_uses().any(has)
    }

    /// Whether `clGetDeviceInfo(query)` is answered with zeros here: a feature off lists it.
    pub fn zeroes(self, query: cl_device_info) -> bool {
        self.disabled().any(|f| f.device_info.contains(&query))
    }
}

/// The SPIR-V extensions a module may declare, in every configuration (see
/// [`Feature::spirv_extensions`]), in the order of the frontend's list; the device reports those
/// of its features ([`FeatureSet::reported_spirv_extensions`]).
pub fn spirv_extensions() -> impl Iterator<Item = &'static str> {
    ferrocl_frontend::SUPPORTED_EXTENSIONS
        .iter()
        .copied()
        .filter(|e| FEATURES.iter().any(|f| f.spirv_extensions.contains(e)))
}

/// The features these settings turn on.
pub fn enabled(settings: &Settings) -> impl Iterator<Item = &'static Feature> {
    FeatureSet::of(settings).enabled()
}

/// The features these settings leave off.
pub fn disabled(settings: &Settings) -> impl Iterator<Item = &'static Feature> {
    FeatureSet::of(settings).disabled()
}

/// The feature whose capability `cap` is, if any.
pub fn owning_capability(cap: Capability) -> Option<&'static Feature> {
    FEATURES
        .iter()
        .find(|f| f.spirv_capabilities.contains(&cap))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_table_indices() {
        for (i, f) in FEATURES.iter().enumerate() {
            assert_eq!(f.id as usize, i, "{}", f.name);
        }
        assert!(FEATURES.len() <= 64, "FeatureSet is a 64-bit set");
    }

    #[test]
    fn every_name_appears_once() {
        let mut names: Vec<&str> = FEATURES
            .iter()
            .flat_map(|f| {
                f.extensions
                    .iter()
                    .map(|e| e.name)
                    .chain(f.opencl_c_features.iter().map(|(n, _)| *n))
                    .chain(f.spirv_extensions.iter().copied())
                    .chain(f.clang_features.iter().copied())
                    .chain(std::iter::once(f.name))
            })
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a name is listed twice");
        let mut caps: Vec<u32> = FEATURES
            .iter()
            .flat_map(|f| f.spirv_capabilities.iter().map(|c| *c as u32))
            .collect();
        let count = caps.len();
        caps.sort_unstable();
        caps.dedup();
        assert_eq!(caps.len(), count, "a capability belongs to two features");
    }

    /// The capabilities and SPIR-V extensions of the table are those the frontend and codegen
    /// implement: what an enabled feature lets a module declare is translated, and nothing
    /// implemented is out of the device's reach.
    #[test]
    fn the_table_covers_what_the_frontend_implements() {
        let mut table: Vec<u32> = FEATURES
            .iter()
            .filter(|f| !matches!(f.switch, Switch::NotImplemented(_)))
            .flat_map(|f| f.spirv_capabilities.iter().map(|c| *c as u32))
            .collect();
        let mut implemented: Vec<u32> = ferrocl_frontend::SUPPORTED_CAPABILITIES
            .iter()
            .map(|c| *c as u32)
            .collect();
        table.sort_unstable();
        implemented.sort_unstable();
        assert_eq!(table, implemented);
        let mut table: Vec<&str> = FEATURES
            .iter()
            .flat_map(|f| f.spirv_extensions.iter().copied())
            .collect();
        let mut implemented = ferrocl_frontend::SUPPORTED_EXTENSIONS.to_vec();
        table.sort_unstable();
        implemented.sort_unstable();
        assert_eq!(table, implemented);
    }

    #[test]
    fn a_feature_set_has_what_the_settings_turn_on() {
        let all = FeatureSet::of(&Settings::parse(|_| None, |_| {}));
        let off = FeatureSet::of(&Settings::parse(
            |k| {
                matches!(
                    k,
                    "FERROCL_SUBGROUPS" | "FERROCL_FP16" | "FERROCL_IMAGES" | "FERROCL_PIPES"
                )
                .then(|| "off".to_owned())
            },
            |_| {},
        ));
        for f in FEATURES {
            let on = f.switch.is_on(&Settings::parse(|_| None, |_| {}));
            assert_eq!(all.has(f.id), on, "{}", f.name);
        }
        for id in [
            FeatureId::SubGroups,
            FeatureId::IntelSubGroups,
            FeatureId::Fp16,
            FeatureId::ImageKernels,
            FeatureId::Pipes,
        ] {
            assert!(all.has(id) && !off.has(id), "{id:?}");
        }
        assert!(all.allows(Capability::Pipes) && !off.allows(Capability::Pipes));
        assert!(
            !all.allows(Capability::PipeStorage),
            "program-scope pipes are not supported"
        );
        assert!(off.zeroes(CL_DEVICE_PIPE_MAX_PACKET_SIZE) && !all.zeroes(CL_DEVICE_PIPE_SUPPORT));
        assert!(off
            .clang_extensions()
            .iter()
            .all(|e| *e != "__opencl_c_pipes"));
        assert!(all.clang_extensions().contains(&"__opencl_c_pipes"));
        assert!(off
            .turned_off_capabilities()
            .iter()
            .any(|(c, rule)| *c == Capability::Pipes && rule.contains("FERROCL_PIPES=off")));
        assert!(off.has(FeatureId::Fp64) && off.has(FeatureId::Core));
        assert!(!off.allows(Capability::Float16) && off.allows(Capability::Float16Buffer));
        assert!(off.zeroes(CL_DEVICE_HALF_FP_CONFIG) && !all.zeroes(CL_DEVICE_HALF_FP_CONFIG));
        assert_eq!(
            off.refused_uses().collect::<Vec<_>>(),
            [ModuleUse::HalfValues]
        );
        assert!(off.refuses(&[Capability::Float16 as u32], |_| false));
        assert!(off.refuses(&[Capability::Kernel as u32], |u| u == ModuleUse::HalfValues));
        assert!(!off.refuses(&[Capability::Kernel as u32], |u| u
            == ModuleUse::AllDevicesScope));
        assert!(off.refuses(&[u32::MAX], |_| false), "an unknown capability");
    }

    #[test]
    fn device_enqueue_needs_its_switch_and_the_features_it_requires() {
        let all = FeatureSet::of(&Settings::parse(|_| None, |_| {}));
        assert!(all.has(FeatureId::DeviceEnqueue));
        assert!(all.allows(Capability::DeviceEnqueue));
        assert!(all
            .clang_extensions()
            .contains(&"__opencl_c_device_enqueue"));
        assert!(!all.zeroes(CL_DEVICE_MAX_ON_DEVICE_QUEUES));
        let off = FeatureSet::of(&Settings::parse(
            |k| (k == "FERROCL_DEVICE_ENQUEUE").then(|| "off".to_owned()),
            |_| {},
        ));
        assert!(!off.has(FeatureId::DeviceEnqueue) && off.has(FeatureId::Pipes));
        assert!(!off.allows(Capability::DeviceEnqueue));
        for q in [
            CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES,
            CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES,
            CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE,
            CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE,
            CL_DEVICE_MAX_ON_DEVICE_QUEUES,
            CL_DEVICE_MAX_ON_DEVICE_EVENTS,
        ] {
            assert!(off.zeroes(q), "{q:#x}");
        }
        assert!(off
            .turned_off_capabilities()
            .iter()
            .any(|(c, rule)| *c == Capability::DeviceEnqueue
                && rule.contains("FERROCL_DEVICE_ENQUEUE=off")));
        // The generic address space and program-scope variables (core here) are required.
        let feature = FeatureId::DeviceEnqueue.feature();
        assert_eq!(
            feature.requires,
            [
                "__opencl_c_generic_address_space",
                "__opencl_c_program_scope_global_variables"
            ]
        );
        let without_core = all.without(FeatureId::Core);
        assert!(!without_core.has(FeatureId::DeviceEnqueue));
        assert!(without_core.has(FeatureId::Pipes));
        assert!(all.without(FeatureId::Pipes).has(FeatureId::DeviceEnqueue));
    }
}
