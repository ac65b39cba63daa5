//! The device's features, one entry each: what switches it, the CL extensions and OpenCL C
//! feature macros it brings, the SPIR-V capabilities a module may declare with it, the
//! `clGetDeviceInfo` queries whose answers it changes, and the macros clang-15 predefines for
//! every SPIR target that belong to it. Every answer derives from this table — the extension
//! lists, `CL_DEVICE_OPENCL_C_FEATURES`, `CL_DEVICE_SPIRV_CAPABILITIES_KHR`, the capability gate
//! of `clBuildProgram`, what clang may assume (`-cl-ext`, undefined macros) — in the manner of
//! clvk's extension table, so that adding a feature is adding an entry and its implementation.
//! `features::tests` and the loader test `config::the_feature_registry_agrees_with_the_answers`
//! hold the table and the answers together.

use ferrocl_frontend::spirv::Capability;
use opencl_sys::*;

use crate::config::make_version;
use crate::settings::{Profile, Settings};
use crate::svm::SvmLevel;

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

/// One feature of the device.
#[derive(Debug)]
pub struct Feature {
    pub name: &'static str,
    pub switch: Switch,
    pub extensions: &'static [Extension],
    /// `__opencl_c_*` feature macros (CL_DEVICE_OPENCL_C_FEATURES), with their versions.
    pub opencl_c_features: &'static [(&'static str, cl_version)],
    /// SPIR-V capabilities a module may declare only with this feature on.
    pub spirv_capabilities: &'static [Capability],
    /// `clGetDeviceInfo` queries answered with zero (or nothing) while the feature is off.
    pub device_info: &'static [cl_device_info],
    /// Macros clang-15 predefines for every SPIR target that mean this feature: undefined
    /// while it is off.
    pub clang_defines: &'static [&'static str],
}

const V3: cl_version = make_version(3, 0, 0);
const V2: cl_version = make_version(2, 0, 0);
const V1: cl_version = make_version(1, 0, 0);

/// Every feature, in the order the queries list them.
pub const FEATURES: &[Feature] = &[
    Feature {
        name: "core",
        switch: Switch::Always,
        extensions: &[
            api_ext("cl_khr_icd"),
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
            api_ext("cl_khr_spirv_queries"),
            // The *_WITH_VERSION queries and CL_*_NUMERIC_VERSION.
            api_ext("cl_khr_extended_versioning"),
            // CL_DEVICE_UUID_KHR / CL_DRIVER_UUID_KHR (config.rs `device_uuid`).
            api_ext("cl_khr_device_uuid"),
            // clCreateCommandQueueWithPropertiesKHR.
            api_ext("cl_khr_create_command_queue"),
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
        spirv_capabilities: &[],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // CL_QUEUE_PRIORITY_KHR and CL_QUEUE_THROTTLE_KHR in clCreateCommandQueueWithProperties:
        // a priority orders the jobs of queues contending for the device's workers, a low
        // throttle holds a queue's launches to half of them (queue.rs, executor.rs).
        name: "queue hints",
        switch: Switch::Always,
        extensions: &[
            api_ext("cl_khr_priority_hints"),
            api_ext("cl_khr_throttle_hints"),
        ],
        opencl_c_features: &[],
        spirv_capabilities: &[],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // Commands recorded once and enqueued as one queue command; kernel commands whose
        // arguments, exec info and sizes change between enqueues; overlapping executions
        // (command_buffer.rs). The CTS checks for exactly these extension versions.
        name: "command buffers",
        switch: Switch::Always,
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
        ],
        opencl_c_features: &[],
        spirv_capabilities: &[],
        // The required queue properties are 0 in every configuration.
        device_info: &[
            CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
            CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR,
            CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR,
        ],
        clang_defines: &[],
    },
    Feature {
        // Float add/min/max as compare-and-swap loops; double needs fp64 (below).
        name: "float atomics",
        switch: Switch::Always,
        extensions: &[ext("cl_ext_float_atomics", 1)],
        opencl_c_features: &[],
        spirv_capabilities: &[
            Capability::AtomicFloat32AddEXT,
            Capability::AtomicFloat32MinMaxEXT,
        ],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // 8-bit vector and packed inputs.
        name: "integer dot product",
        switch: Switch::Always,
        extensions: &[ext("cl_khr_integer_dot_product", 2)],
        opencl_c_features: &[
            ("__opencl_c_integer_dot_product_input_4x8bit", V2),
            ("__opencl_c_integer_dot_product_input_4x8bit_packed", V2),
        ],
        spirv_capabilities: &[
            Capability::DotProduct,
            Capability::DotProductInput4x8Bit,
            Capability::DotProductInput4x8BitPacked,
        ],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // Device and work-group scope (SPV_KHR_shader_clock).
        name: "kernel clock",
        switch: Switch::Always,
        extensions: &[ext("cl_khr_kernel_clock", 1)],
        opencl_c_features: &[
            ("__opencl_c_kernel_clock_scope_device", V1),
            ("__opencl_c_kernel_clock_scope_work_group", V1),
        ],
        spirv_capabilities: &[Capability::ShaderClockKHR],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // SPV_KHR_bit_instructions.
        name: "extended bit operations",
        switch: Switch::Always,
        extensions: &[ext("cl_khr_extended_bit_ops", 1)],
        opencl_c_features: &[],
        spirv_capabilities: &[Capability::BitInstructions],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // SPV_KHR_expect_assume (hints).
        name: "expect and assume",
        switch: Switch::Always,
        extensions: &[ext("cl_khr_expect_assume", 1)],
        opencl_c_features: &[],
        spirv_capabilities: &[Capability::ExpectAssumeKHR],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // SPV_KHR_uniform_group_instructions; the OpenCL C built-ins are declared by the
        // frontend for clang-15, which predates them.
        name: "work-group uniform arithmetic",
        switch: Switch::Always,
        extensions: &[ext("cl_khr_work_group_uniform_arithmetic", 1)],
        opencl_c_features: &[],
        spirv_capabilities: &[Capability::GroupUniformArithmeticKHR],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // async_work_group_copy_2D2D and _3D3D: imported calls codegen turns into line copies
        // (translate/group.rs); the frontend declares them for clang-15, which predates them.
        name: "extended async copies",
        switch: Switch::Always,
        extensions: &[ext("cl_khr_extended_async_copies", 1)],
        opencl_c_features: &[],
        spirv_capabilities: &[],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        name: "fp64",
        switch: Switch::Fp64,
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
        ],
        clang_defines: &[],
    },
    Feature {
        // Half values and arithmetic; halves in memory (Float16Buffer) are always there.
        name: "fp16",
        switch: Switch::Fp16,
        extensions: &[ext("cl_khr_fp16", 1)],
        opencl_c_features: &[],
        spirv_capabilities: &[Capability::Float16],
        device_info: &[
            CL_DEVICE_HALF_FP_CONFIG,
            CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
            CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
        ],
        clang_defines: &[],
    },
    Feature {
        // 64-bit integers are optional in the embedded profile; this device has them.
        name: "embedded-profile int64",
        switch: Switch::EmbeddedProfile,
        extensions: &[ext("cles_khr_int64", 1)],
        opencl_c_features: &[],
        spirv_capabilities: &[],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        // Sub-groups of 4 work-items with independent forward progress; codegen implements
        // every instruction the extensions bring (codegen/src/translate/subgroup.rs).
        name: "sub-groups",
        switch: Switch::SubGroups,
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
        spirv_capabilities: &[
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
        clang_defines: &[],
    },
    Feature {
        // Barriers of some sub-groups of a work-group (SPIR-V OpNamedBarrierInitialize and
        // OpMemoryNamedBarrier; OpenCL C has no built-ins for them): gates that count the
        // whole sub-groups waiting on each barrier (codegen gates.rs).
        name: "sub-group named barriers",
        switch: Switch::SubGroups,
        extensions: &[ext("cl_khr_subgroup_named_barrier", 1)],
        opencl_c_features: &[],
        spirv_capabilities: &[Capability::NamedBarrier],
        device_info: &[CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR],
        clang_defines: &[],
    },
    Feature {
        // The Intel sub-group extensions on the same sub-groups of 4: the shuffles (exchanges,
        // codegen subgroup.rs), the block reads and writes of buffers and of 2D images
        // (block_io.rs; image types themselves need FERROCL_IMAGES), a required sub-group size
        // of 4 (other sizes fail the build) and the queries they bring. The built-ins are
        // declared by the frontend for clang-15, whose built-in table lacks them.
        name: "Intel sub-groups",
        switch: Switch::SubGroups,
        extensions: &[
            ext("cl_intel_subgroups", 1),
            ext("cl_intel_required_subgroup_size", 1),
            api_ext("cl_intel_spirv_subgroups"),
        ],
        opencl_c_features: &[],
        spirv_capabilities: &[
            Capability::SubgroupShuffleINTEL,
            Capability::SubgroupBufferBlockIOINTEL,
            Capability::SubgroupImageBlockIOINTEL,
        ],
        device_info: &[CL_DEVICE_SUB_GROUP_SIZES_INTEL],
        clang_defines: &[],
    },
    Feature {
        // Image and sampler objects and every image command of the host API; kernels cannot
        // use images yet (the entry below), so nothing else claims them.
        name: "image host API",
        switch: Switch::Images,
        extensions: &[api_ext("cl_khr_image2d_from_buffer")],
        opencl_c_features: &[],
        spirv_capabilities: &[],
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
        clang_defines: &[],
    },
    Feature {
        // Image reads, writes, samplers and queries in kernels (codegen translate/image.rs).
        name: "image kernels",
        switch: Switch::Images,
        // Without them, clGetSupportedImageFormats lists no depth formats and no 3D formats a
        // kernel may write (`image.rs`), as the API spec's consistency rules require.
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
        device_info: &[],
        // clang-15 defines it for every spir64 target.
        clang_defines: &["__IMAGE_SUPPORT__"],
    },
    Feature {
        // Images with mip levels: creation, every image command on a level, the sampler's mip
        // filter and lod range (runtime image.rs, sampler.rs), and in kernels `Lod` and `Grad`
        // operands on reads and writes and the level queries (codegen translate/image.rs).
        name: "image mipmaps",
        switch: Switch::Images,
        extensions: &[
            ext("cl_khr_mipmap_image", 1),
            ext("cl_khr_mipmap_image_writes", 1),
        ],
        opencl_c_features: &[],
        spirv_capabilities: &[Capability::ImageMipmap],
        device_info: &[],
        clang_defines: &[],
    },
    Feature {
        name: "shared virtual memory",
        switch: Switch::Svm,
        // Version 1.1.0: any pointer value is a valid USM kernel argument.
        extensions: &[Extension {
            name: "cl_intel_unified_shared_memory",
            version: make_version(1, 1, 0),
            opencl_c: false,
        }],
        // All-devices scope is the scope of SVM atomics shared with the host.
        opencl_c_features: &[("__opencl_c_atomic_scope_all_devices", V3)],
        spirv_capabilities: &[],
        device_info: &[
            CL_DEVICE_SVM_CAPABILITIES,
            CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL,
            CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL,
            CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
            CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
        ],
        clang_defines: &[],
    },
];

/// The features these settings turn on.
pub fn enabled(settings: &Settings) -> impl Iterator<Item = &'static Feature> + '_ {
    FEATURES.iter().filter(|f| f.switch.is_on(settings))
}

/// The features these settings leave off.
pub fn disabled(settings: &Settings) -> impl Iterator<Item = &'static Feature> + '_ {
    FEATURES.iter().filter(|f| !f.switch.is_on(settings))
}

/// The feature whose capability `cap` is, if any.
pub fn owning_capability(cap: Capability) -> Option<&'static Feature> {
    FEATURES
        .iter()
        .find(|f| f.spirv_capabilities.contains(&cap))
}

/// The feature `name` (a `FEATURES` entry's name).
pub fn named(name: &str) -> Option<&'static Feature> {
    FEATURES.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_appears_once() {
        let mut names: Vec<&str> = FEATURES
            .iter()
            .flat_map(|f| {
                f.extensions
                    .iter()
                    .map(|e| e.name)
                    .chain(f.opencl_c_features.iter().map(|(n, _)| *n))
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

    /// What an enabled feature lets a module declare, the frontend and codegen translate.
    #[test]
    fn enabled_capabilities_are_implemented() {
        for f in FEATURES
            .iter()
            .filter(|f| !matches!(f.switch, Switch::NotImplemented(_)))
        {
            for cap in f.spirv_capabilities {
                assert!(
                    ferrocl_frontend::SUPPORTED_CAPABILITIES.contains(cap),
                    "{}: {cap:?} is not implemented",
                    f.name
                );
            }
        }
    }
}
