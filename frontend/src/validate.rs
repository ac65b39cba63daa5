//! Validation against the OpenCL SPIR-V environment (env spec 3.1.1 chapters 2–4): the module
//! must be something this device can run, and safe for codegen to walk. Module-level rules
//! live here (capabilities and their versions, extensions, memory model, entry points, types,
//! built-ins, kernel signatures); function bodies are checked by `validate_structure`, then
//! `validate_types` and `validate_dominance`, which run only when the type declarations and
//! the structure are sound (their reasoning depends on it).

use rspirv::dr::Operand;
use spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionModel, MemoryModel, Op, StorageClass,
};

use crate::diagnostics::{Diagnostic, FrontendError};
use crate::module::{Module, Type};

/// Capabilities the frontend and codegen implement: what a module may declare when no device
/// narrows it ([`DeviceSupport::IMPLEMENTED`]). A device allows those of the features its
/// settings turn on; the runtime's feature table (`runtime/src/features.rs`) sorts these into
/// features, and its tests hold the two lists together.
pub const SUPPORTED_CAPABILITIES: &[Capability] = &[
    Capability::Addresses,
    Capability::Linkage,
    Capability::Kernel,
    Capability::Vector16,
    Capability::Int8,
    Capability::Int16,
    Capability::Int64,
    Capability::Float64,
    // Halves in memory (vload_half/vstore_half); always available in OpenCL.
    Capability::Float16Buffer,
    // Half values and arithmetic (cl_khr_fp16); the runtime turns it off with FERROCL_FP16.
    Capability::Float16,
    Capability::Int64Atomics,
    // Generic pointers (OpenCL C's generic address space; llvm-spirv also uses them for
    // wait_group_events in OpenCL C 1.2): flat addresses, classified by address when asked.
    Capability::GenericPointer,
    // Work-group and sub-group collectives (the runtime refuses sub-group scope and the
    // capabilities below when FERROCL_SUBGROUPS=off).
    Capability::Groups,
    // SPIR-V 1.6 Uniform/UniformId decorations: promises that a value is the same across a
    // scope, which code generation may ignore.
    Capability::UniformDecoration,
    // cl_ext_float_atomics: float add/min/max (compare-and-swap loops in codegen).
    Capability::AtomicFloat32AddEXT,
    Capability::AtomicFloat64AddEXT,
    Capability::AtomicFloat32MinMaxEXT,
    Capability::AtomicFloat64MinMaxEXT,
    // cl_khr_subgroups execution modes (SubgroupSize, SubgroupsPerWorkgroup).
    Capability::SubgroupDispatch,
    // cl_khr_subgroup_non_uniform_vote, _ballot, _non_uniform_arithmetic, _shuffle,
    // _shuffle_relative, _clustered_reduce, _rotate.
    Capability::GroupNonUniform,
    Capability::GroupNonUniformVote,
    Capability::GroupNonUniformBallot,
    Capability::GroupNonUniformArithmetic,
    Capability::GroupNonUniformShuffle,
    Capability::GroupNonUniformShuffleRelative,
    Capability::GroupNonUniformClustered,
    Capability::GroupNonUniformRotateKHR,
    // SPV_KHR_bit_instructions: OpBitFieldInsert/SExtract/UExtract and OpBitReverse.
    Capability::BitInstructions,
    // SPV_KHR_expect_assume: OpExpectKHR and OpAssumeTrueKHR (hints).
    Capability::ExpectAssumeKHR,
    // SPV_KHR_integer_dot_product (core in SPIR-V 1.6) with 8-bit inputs: cl_khr_integer_dot_product.
    Capability::DotProduct,
    Capability::DotProductInput4x8Bit,
    Capability::DotProductInput4x8BitPacked,
    // SPV_KHR_shader_clock: OpReadClockKHR at device and work-group scope (cl_khr_kernel_clock).
    Capability::ShaderClockKHR,
    // SPV_KHR_uniform_group_instructions (cl_khr_work_group_uniform_arithmetic): the mul,
    // bitwise and logical reductions and scans, at work-group (and sub-group) scope.
    Capability::GroupUniformArithmeticKHR,
    // Images and samplers (FERROCL_IMAGES): reads, writes, sampling and queries, 1D and buffer
    // images, read-write images and literal samplers (codegen translate/image.rs).
    Capability::ImageBasic,
    Capability::ImageReadWrite,
    Capability::LiteralSampler,
    Capability::Sampled1D,
    Capability::Image1D,
    Capability::SampledBuffer,
    Capability::ImageBuffer,
    // SPV_INTEL_subgroups (cl_intel_subgroups, cl_intel_spirv_subgroups): the Intel shuffles
    // and the buffer and image block reads and writes (codegen subgroup.rs, block_io.rs).
    Capability::SubgroupShuffleINTEL,
    Capability::SubgroupBufferBlockIOINTEL,
    Capability::SubgroupImageBlockIOINTEL,
    // SPV_INTEL_bfloat16_conversion (cl_intel_bfloat16_conversions): OpConvertFToBF16INTEL
    // and OpConvertBF16ToFINTEL, rewritten into core instructions before parsing (bfloat16.rs).
    Capability::BFloat16ConversionINTEL,
    // cl_khr_subgroup_named_barrier: OpNamedBarrierInitialize and OpMemoryNamedBarrier
    // (codegen gates.rs).
    Capability::NamedBarrier,
    // Lod operands on OpImageWrite (cl_khr_mipmap_image_writes).
    Capability::ImageMipmap,
    // SPV_INTEL_memory_access_aliasing (DPC++): alias scopes on loads, stores and calls are
    // hints; the parser sets their declarations aside and codegen skips the memory operands.
    Capability::MemoryAccessAliasingINTEL,
    // SPV_INTEL_fp_fast_math_mode (DPC++): the AllowContract/AllowReassoc bits of
    // FPFastMathMode are permissions, not requests; codegen keeps every operation exact.
    Capability::FPFastMathModeINTEL,
    // Pipes (__opencl_c_pipes): pipe arguments, reads and writes with and without
    // reservations, work-group and sub-group reservations, packet queries (codegen pipe.rs).
    Capability::Pipes,
    // DeviceEnqueue (__opencl_c_device_enqueue): enqueue_kernel, markers, device events,
    // default queues and block queries (codegen device_enqueue.rs, the runtime's host).
    Capability::DeviceEnqueue,
];

/// Extensions that make a capability of CAPABILITY_MIN_VERSION available before that version.
pub const CAPABILITY_EXTENSIONS: &[(Capability, &str)] = &[
    (Capability::DotProduct, "SPV_KHR_integer_dot_product"),
    (
        Capability::DotProductInput4x8Bit,
        "SPV_KHR_integer_dot_product",
    ),
    (
        Capability::DotProductInput4x8BitPacked,
        "SPV_KHR_integer_dot_product",
    ),
];

/// Capabilities a module may declare only from a given SPIR-V version on (env 3.2–3.7). Those
/// not listed are allowed from SPIR-V 1.0.
pub const CAPABILITY_MIN_VERSION: &[(Capability, (u8, u8))] = &[
    (Capability::SubgroupDispatch, (1, 1)),
    (Capability::NamedBarrier, (1, 1)),
    (Capability::PipeStorage, (1, 1)),
    (Capability::GroupNonUniform, (1, 3)),
    (Capability::GroupNonUniformShuffle, (1, 3)),
    (Capability::GroupNonUniformShuffleRelative, (1, 3)),
    (Capability::DotProduct, (1, 6)),
    (Capability::UniformDecoration, (1, 6)),
    (Capability::DotProductInput4x8Bit, (1, 6)),
    (Capability::DotProductInput4x8BitPacked, (1, 6)),
];

/// Extended instruction sets a module may import.
pub const SUPPORTED_EXT_INST_SETS: &[&str] = &[
    "OpenCL.std",
    "OpenCL.DebugInfo.100",
    "NonSemantic.Shader.DebugInfo.100",
];

/// SPIR-V extensions the frontend implements (the runtime's feature table sorts them into
/// features, like the capabilities).
pub const SUPPORTED_EXTENSIONS: &[&str] = &[
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_shader_atomic_float_min_max",
    "SPV_KHR_bit_instructions",
    "SPV_KHR_expect_assume",
    "SPV_KHR_integer_dot_product",
    "SPV_KHR_linkonce_odr",
    "SPV_KHR_no_integer_wrap_decoration",
    "SPV_KHR_non_semantic_info",
    "SPV_KHR_shader_clock",
    "SPV_KHR_subgroup_rotate",
    "SPV_KHR_uniform_group_instructions",
    "SPV_INTEL_subgroups",
    "SPV_INTEL_bfloat16_conversion",
    // Hints DPC++ writes (see the capabilities above).
    "SPV_INTEL_memory_access_aliasing",
    "SPV_INTEL_fp_fast_math_mode",
];

/// Most `OpNamedBarrierInitialize` instructions a module may hold: each makes one named
/// barrier of a work-group (constructing it again makes the same one), so this bounds the
/// named barriers of any kernel (`CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR`).
pub const MAX_NAMED_BARRIERS: u32 = 64;

/// Most problems listed in one build log.
const MAX_DIAGNOSTICS: usize = 100;

/// What a device lets modules declare (env 3 and 3.8): the capabilities and SPIR-V extensions
/// of the features its settings turn on, which the runtime derives from its feature table, and
/// for each capability the frontend implements that the device turns off, the rule (build-log
/// text) a module declaring it breaks.
#[derive(Clone, Copy, Debug)]
pub struct DeviceSupport<'a> {
    pub capabilities: &'a [Capability],
    pub extensions: &'a [&'a str],
    pub turned_off: &'a [(Capability, String)],
}

impl DeviceSupport<'static> {
    /// Everything the frontend implements: for tools and tests that build for no device.
    pub const IMPLEMENTED: Self = DeviceSupport {
        capabilities: SUPPORTED_CAPABILITIES,
        extensions: SUPPORTED_EXTENSIONS,
        turned_off: &[],
    };
}

pub(crate) fn validate(m: &Module, device: &DeviceSupport) -> Result<(), FrontendError> {
    let mut problems = Vec::new();

    for inst in &m.raw.capabilities {
        if let Some(Operand::Capability(cap)) = inst.operands.first() {
            if let Some((_, rule)) = device.turned_off.iter().find(|(c, _)| c == cap) {
                problems.push(Diagnostic {
                    rule: rule.clone(),
                    instruction: format!("OpCapability {cap:?}"),
                    word_offset: None,
                    source_name: None,
                    source_line: None,
                });
            } else if !device.capabilities.contains(cap) {
                problems.push(m.diag(
                    format!("env 3: capability {cap:?} is not supported by this device"),
                    inst,
                    None,
                ));
            } else if let Some(&(_, min)) = CAPABILITY_MIN_VERSION.iter().find(|(c, _)| c == cap) {
                let by_extension = CAPABILITY_EXTENSIONS.iter().any(|(c, ext)| {
                    c == cap
                        && m.raw.extensions.iter().any(|e| {
                            matches!(e.operands.first(), Some(Operand::LiteralString(n)) if n == ext)
                        })
                });
                if m.version < min && !by_extension {
                    problems.push(m.diag(
                        format!(
                            "env 3: capability {cap:?} requires SPIR-V {}.{}; this module is SPIR-V {}.{}",
                            min.0, min.1, m.version.0, m.version.1
                        ),
                        inst,
                        None,
                    ));
                }
            }
        }
    }
    if !m
        .raw
        .capabilities
        .iter()
        .any(|i| i.operands.first() == Some(&Operand::Capability(Capability::Kernel)))
    {
        problems.push(Diagnostic {
            rule: "env 3: an OpenCL module must declare the Kernel capability".into(),
            instruction: String::new(),
            word_offset: None,
            source_name: None,
            source_line: None,
        });
    }
    for inst in &m.raw.extensions {
        if let Some(Operand::LiteralString(name)) = inst.operands.first() {
            if !device.extensions.contains(&name.as_str())
                && !name.starts_with("SPV_KHR_non_semantic")
            {
                problems.push(m.diag(
                    format!("env 3.8: SPIR-V extension {name} is not supported by this device"),
                    inst,
                    None,
                ));
            }
        }
    }
    let named_barriers: Vec<_> = m
        .raw
        .functions
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.instructions)
        .filter(|i| i.class.opcode == Op::NamedBarrierInitialize)
        .collect();
    if let Some(inst) = named_barriers.get(MAX_NAMED_BARRIERS as usize) {
        problems.push(m.diag(
            format!(
                "cl_khr_subgroup_named_barrier: the module initialises {} named barriers; this device has at most {MAX_NAMED_BARRIERS} (CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR)",
                named_barriers.len()
            ),
            inst,
            None,
        ));
    }
    for inst in &m.raw.ext_inst_imports {
        if let Some(Operand::LiteralString(name)) = inst.operands.first() {
            if !SUPPORTED_EXT_INST_SETS.contains(&name.as_str())
                && !name.starts_with("NonSemantic.")
            {
                problems.push(m.diag(
                    format!("env 2.2: extended instruction set \"{name}\" is not supported"),
                    inst,
                    None,
                ));
            }
        }
    }
    match &m.raw.memory_model {
        None => problems.push(Diagnostic {
            rule: "SPIR-V 2.4: the module has no OpMemoryModel".into(),
            instruction: String::new(),
            word_offset: None,
            source_name: None,
            source_line: None,
        }),
        Some(inst) => {
            match inst.operands.first() {
                Some(Operand::AddressingModel(AddressingModel::Physical64)) => {}
                Some(Operand::AddressingModel(AddressingModel::Physical32)) => problems.push(m.diag(
                    "env 4: Physical32 addressing is not supported by this 64-bit device (CL_DEVICE_ADDRESS_BITS is 64); compile for spir64",
                    inst, None)),
                other => problems.push(m.diag(
                    format!("env 4: addressing model {other:?} is not allowed for OpenCL; Physical64 is required"),
                    inst, None)),
            }
            if inst.operands.get(1) != Some(&Operand::MemoryModel(MemoryModel::OpenCL)) {
                problems.push(m.diag(
                    format!(
                        "env 4: memory model must be OpenCL, found {:?}",
                        inst.operands.get(1)
                    ),
                    inst,
                    None,
                ));
            }
        }
    }
    let mut kernel_names = std::collections::HashSet::new();
    for inst in &m.raw.entry_points {
        let model = inst.operands.first();
        let func = match inst.operands.get(1) {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        };
        if model != Some(&Operand::ExecutionModel(ExecutionModel::Kernel)) {
            let found = match model {
                Some(Operand::ExecutionModel(e)) => format!("{e:?}"),
                other => format!("{other:?}"),
            };
            problems.push(m.diag(
                format!("env 4: entry point execution model must be Kernel, found {found}"),
                inst,
                func,
            ));
        }
        if func.and_then(|f| m.function_raw(f)).is_none() {
            problems.push(m.diag(
                format!(
                    "SPIR-V 2.4: entry point names %{} which is not a function of this module",
                    func.unwrap_or(0)
                ),
                inst,
                None,
            ));
        }
        if let Some(Operand::LiteralString(name)) = inst.operands.get(2) {
            // clCreateKernel finds kernels by name: two with one name would be ambiguous.
            if !kernel_names.insert(name.as_str()) {
                problems.push(m.diag(
                    format!("SPIR-V 2.4: two entry points are named \"{name}\""),
                    inst,
                    func,
                ));
            }
        }
        for op in inst.operands.iter().skip(3) {
            let Operand::IdRef(id) = op else { continue };
            if m.global_raw(*id)
                .is_none_or(|g| g.class.opcode != Op::Variable)
            {
                problems.push(m.diag(
                    format!(
                        "SPIR-V 2.4: entry point interface %{id} is not a module-scope OpVariable"
                    ),
                    inst,
                    func,
                ));
            }
        }
    }
    let entry_functions: std::collections::HashSet<u32> = m
        .raw
        .entry_points
        .iter()
        .filter_map(|e| match e.operands.get(1) {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        })
        .collect();
    for inst in &m.raw.execution_modes {
        if let Some(Operand::IdRef(target)) = inst.operands.first() {
            if !entry_functions.contains(target) {
                problems.push(m.diag(
                    format!(
                        "SPIR-V 2.4: OpExecutionMode names %{target}, which is not an entry point"
                    ),
                    inst,
                    None,
                ));
            }
        }
    }
    let mut declared = std::collections::HashSet::new();
    let mut forward = ForwardPointers::default();
    let mut nesting = std::collections::HashMap::new();
    for inst in &m.raw.types_global_values {
        problems.extend(check_type(m, inst));
        problems.extend(forward.check(m, inst, &declared));
        problems.extend(check_declared_before_use(m, inst, &declared, &forward));
        problems.extend(check_nesting(m, inst, &mut nesting));
        problems.extend(check_builtin(m, inst));
        declared.extend(inst.result_id);
    }
    problems.extend(forward.undefined(m));
    // The type graph is acyclic and shallow from here on: layout queries may recurse.
    let types_ok = problems.is_empty();
    problems.extend(check_kernels(m));
    let structural = crate::validate_structure::check_functions(m);
    // Operand types are only meaningful once every id is known and defined once.
    if types_ok && structural.is_empty() {
        problems.extend(crate::validate_types::check_types(m));
        crate::validate_dominance::check_dominance(m, &mut problems);
    }
    problems.extend(structural);

    if problems.is_empty() {
        return Ok(());
    }
    // A corrupt module can break a rule per instruction: keep the log readable and bounded.
    if problems.len() > MAX_DIAGNOSTICS {
        let more = problems.len() - MAX_DIAGNOSTICS;
        problems.truncate(MAX_DIAGNOSTICS);
        problems.push(Diagnostic {
            rule: format!("{more} more problems not shown"),
            instruction: String::new(),
            word_offset: None,
            source_name: None,
            source_line: None,
        });
    }
    Err(FrontendError::Invalid(problems))
}

/// Built-in variables Ferrocl provides, with the type env 2.9 requires for each (Physical64:
/// `size_t` is a 64-bit integer).
enum BuiltinShape {
    SizeT3,
    SizeT,
    Int32,
    /// `uint4` (the sub-group mask built-ins, env 5.2.16).
    Uint4,
}

fn builtin_shape(b: BuiltIn) -> Option<BuiltinShape> {
    use BuiltinShape::*;
    Some(match b {
        BuiltIn::GlobalSize
        | BuiltIn::GlobalInvocationId
        | BuiltIn::WorkgroupSize
        | BuiltIn::EnqueuedWorkgroupSize
        | BuiltIn::LocalInvocationId
        | BuiltIn::NumWorkgroups
        | BuiltIn::WorkgroupId
        | BuiltIn::GlobalOffset => SizeT3,
        BuiltIn::GlobalLinearId | BuiltIn::LocalInvocationIndex => SizeT,
        BuiltIn::WorkDim
        | BuiltIn::SubgroupSize
        | BuiltIn::SubgroupMaxSize
        | BuiltIn::NumSubgroups
        | BuiltIn::NumEnqueuedSubgroups
        | BuiltIn::SubgroupId
        | BuiltIn::SubgroupLocalInvocationId => Int32,
        BuiltIn::SubgroupEqMask
        | BuiltIn::SubgroupGeMask
        | BuiltIn::SubgroupGtMask
        | BuiltIn::SubgroupLeMask
        | BuiltIn::SubgroupLtMask => Uint4,
        _ => return None,
    })
}

/// env 2.9: a variable decorated BuiltIn is in Input storage and has the table's type.
fn check_builtin(m: &Module, inst: &rspirv::dr::Instruction) -> Option<Diagnostic> {
    if inst.class.opcode != Op::Variable {
        return None;
    }
    let id = inst.result_id?;
    let builtin = m
        .decorations_raw(id)
        .iter()
        .find_map(|(d, ops)| match (d, ops.first()) {
            (Decoration::BuiltIn, Some(Operand::BuiltIn(b))) => Some(*b),
            _ => None,
        });
    let Some(builtin) = builtin else {
        // In OpenCL, Input storage holds only the built-ins.
        let input = matches!(
            inst.result_type.and_then(|t| m.ty(t)),
            Some(Type::Pointer {
                storage: StorageClass::Input,
                ..
            })
        );
        return input.then(|| {
            m.diag(
                "env 2.9: a variable in the Input storage class must be a built-in (decorated BuiltIn)",
                inst,
                None,
            )
        });
    };
    let Some(shape) = builtin_shape(builtin) else {
        return Some(m.diag(
            format!("env 2.9: built-in variable {builtin:?} is not supported by this device"),
            inst,
            None,
        ));
    };
    let Some(Type::Pointer { storage, pointee }) = inst.result_type.and_then(|t| m.ty(t)) else {
        return Some(m.diag(
            format!("env 2.9: built-in variable {builtin:?} does not have a pointer type"),
            inst,
            None,
        ));
    };
    if *storage != StorageClass::Input {
        return Some(m.diag(
            format!("env 2.9: built-in variable {builtin:?} must be in the Input storage class, found {storage:?}"),
            inst,
            None,
        ));
    }
    let int_width = |t: u32| match m.ty(t) {
        Some(Type::Int { width }) => Some(*width),
        _ => None,
    };
    let (ok, want) = match shape {
        BuiltinShape::SizeT3 => (
            matches!(m.ty(*pointee), Some(Type::Vector { elem, count: 3 }) if int_width(*elem) == Some(64)),
            "a vector of 3 64-bit integers (size_t, Physical64)",
        ),
        BuiltinShape::SizeT => (
            int_width(*pointee) == Some(64),
            "a 64-bit integer (size_t, Physical64)",
        ),
        BuiltinShape::Int32 => (int_width(*pointee) == Some(32), "a 32-bit integer"),
        BuiltinShape::Uint4 => (
            matches!(m.ty(*pointee), Some(Type::Vector { elem, count: 4 }) if int_width(*elem) == Some(32)),
            "a vector of 4 32-bit integers (uint4)",
        ),
    };
    if ok {
        None
    } else {
        Some(m.diag(
            format!("env 2.9: built-in variable {builtin:?} must be {want}"),
            inst,
            None,
        ))
    }
}

/// env 2.8: kernels return void; their parameters have the types a host can pass.
fn check_kernels(m: &Module) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    let invokes = crate::metadata::block_invokes(m);
    for ep in &m.raw.entry_points {
        let Some(Operand::IdRef(fid)) = ep.operands.get(1) else {
            continue;
        };
        let Some(f) = m.function_raw(*fid) else {
            continue;
        };
        // A block's kernel takes the block literal's Generic pointer first (OpenCL C 6.15.15;
        // the runtime passes it, never an application).
        let block = crate::metadata::is_block_kernel(m, *fid, &invokes);
        let Some(def) = &f.def else { continue };
        if let Some(ret) = def.result_type {
            if !matches!(m.ty(ret), Some(Type::Void)) {
                problems.push(m.diag(
                    "env 2.8.1: a kernel's result type must be OpTypeVoid",
                    def,
                    None,
                ));
            }
        }
        for (index, p) in f.parameters.iter().enumerate() {
            let Some(ty) = p.result_type else { continue };
            let why = match m.ty(ty) {
                Some(Type::Pointer { .. }) if block && index == 0 => None,
                Some(Type::Pointer { storage, .. }) => match storage {
                    StorageClass::CrossWorkgroup
                    | StorageClass::Workgroup
                    | StorageClass::UniformConstant => None,
                    // llvm-spirv passes structs by value as a ByVal Function pointer.
                    StorageClass::Function
                        if m.decorations_raw(p.result_id.unwrap_or(0)).iter().any(
                            |(d, ops)| {
                                *d == Decoration::FuncParamAttr
                                    && ops.first()
                                        == Some(&Operand::FunctionParameterAttribute(
                                            spirv::FunctionParameterAttribute::ByVal,
                                        ))
                            },
                        ) =>
                    {
                        None
                    }
                    other => Some(format!("a pointer to {other:?} storage")),
                },
                Some(
                    Type::Int { .. }
                    | Type::Float { .. }
                    | Type::Struct { .. }
                    | Type::Vector { .. }
                    | Type::Sampler
                    | Type::Queue
                    | Type::Image { .. },
                ) => None,
                // A pipe is read_only or write_only (OpenCL C 3.0 §6.15.16).
                Some(Type::Pipe {
                    access: spirv::AccessQualifier::ReadWrite,
                }) => Some("a read_write pipe".to_owned()),
                Some(Type::Pipe { .. }) => None,
                Some(Type::Bool) => Some("bool".to_owned()),
                Some(other) => Some(format!("{other:?}")),
                None => Some(format!("%{ty}, which is not a type")),
            };
            if let Some(why) = why {
                problems.push(m.diag(
                    format!("env 2.8.2: a kernel argument cannot have type {why}"),
                    p,
                    None,
                ));
            }
        }
    }
    problems
}

/// Deepest type nesting accepted (OpenCL C types are a handful of levels deep); layout
/// computations recurse over it.
const MAX_TYPE_NESTING: u32 = 64;

fn check_nesting(
    m: &Module,
    inst: &rspirv::dr::Instruction,
    nesting: &mut std::collections::HashMap<u32, u32>,
) -> Option<Diagnostic> {
    if !inst.class.opcode.is_type() {
        return None;
    }
    let depth = 1 + inst
        .operands
        .iter()
        .filter_map(|o| match o {
            Operand::IdRef(id) => nesting.get(id).copied(),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    nesting.insert(inst.result_id?, depth);
    (depth == MAX_TYPE_NESTING + 1).then(|| {
        m.diag(
            format!("types nested more than {MAX_TYPE_NESTING} levels deep are not supported"),
            inst,
            None,
        )
    })
}

/// OpTypeForwardPointer (SPIR-V 2.4): a pointer type a struct may name before the pointer is
/// declared, how self-referential structs (linked lists, trees) are written. Every forward
/// pointer must be declared by an OpTypePointer of the same storage class later, and only
/// struct members may name it before then: a cycle in the type graph then always passes
/// through a pointer, whose size and alignment do not depend on its pointee, so layout
/// computations still end.
#[derive(Default)]
struct ForwardPointers {
    /// Forward-declared pointer ids not declared yet, with their storage class.
    pending: std::collections::HashMap<u32, Operand>,
    /// Every forward-declared id, declared or not (for the diagnostics' wording).
    all: std::collections::HashSet<u32>,
}

impl ForwardPointers {
    fn check(
        &mut self,
        m: &Module,
        inst: &rspirv::dr::Instruction,
        declared: &std::collections::HashSet<u32>,
    ) -> Option<Diagnostic> {
        match inst.class.opcode {
            Op::TypeForwardPointer => {
                let (Some(Operand::IdRef(id)), Some(class)) =
                    (inst.operands.first(), inst.operands.get(1))
                else {
                    return Some(m.diag(
                        "SPIR-V: OpTypeForwardPointer needs a pointer id and a storage class",
                        inst,
                        None,
                    ));
                };
                if declared.contains(id) || self.all.contains(id) {
                    return Some(m.diag(
                        format!("SPIR-V 2.4: OpTypeForwardPointer names %{id}, which is already declared or forward-declared"),
                        inst,
                        None,
                    ));
                }
                self.pending.insert(*id, class.clone());
                self.all.insert(*id);
                None
            }
            Op::TypePointer => {
                let id = inst.result_id?;
                let class = self.pending.remove(&id)?;
                (inst.operands.first() != Some(&class)).then(|| {
                    m.diag(
                        format!("SPIR-V: OpTypePointer %{id} has another storage class than its OpTypeForwardPointer"),
                        inst,
                        None,
                    )
                })
            }
            _ => None,
        }
    }

    /// Whether `id` may be named by `inst` before its declaration.
    fn allows(&self, inst: &rspirv::dr::Instruction, id: u32) -> bool {
        self.pending.contains_key(&id) && inst.class.opcode == Op::TypeStruct
    }

    /// The forward pointers never declared.
    fn undefined(&self, m: &Module) -> Vec<Diagnostic> {
        let mut ids: Vec<&u32> = self.pending.keys().collect();
        ids.sort_unstable();
        ids.into_iter()
            .filter_map(|id| {
                let inst = m.raw.types_global_values.iter().find(|i| {
                    i.class.opcode == Op::TypeForwardPointer
                        && i.operands.first() == Some(&Operand::IdRef(*id))
                })?;
                Some(m.diag(
                    format!(
                        "SPIR-V 2.4: forward pointer %{id} is never declared by an OpTypePointer"
                    ),
                    inst,
                    None,
                ))
            })
            .collect()
    }
}

/// SPIR-V 2.4: module-scope instructions refer only to ids declared before them (pointers
/// named by OpTypeForwardPointer excepted, in struct members: [`ForwardPointers`]), and a
/// type's operands are types. Cyclic types, which would make layout computations recurse
/// forever, are thereby ruled out except through pointers.
fn check_declared_before_use(
    m: &Module,
    inst: &rspirv::dr::Instruction,
    declared: &std::collections::HashSet<u32>,
    forward: &ForwardPointers,
) -> Option<Diagnostic> {
    // OpLine names an OpString, which lives in the debug section.
    if matches!(inst.class.opcode, Op::Line | Op::NoLine) {
        return None;
    }
    if inst.class.opcode == Op::TypeForwardPointer {
        return None;
    }
    for op in &inst.operands {
        if let Operand::IdRef(id) = op {
            if !declared.contains(id)
                && !m.ext_imports.contains_key(id)
                && !forward.allows(inst, *id)
            {
                return Some(m.diag(
                    format!("SPIR-V 2.4: %{id} is used before it is declared"),
                    inst,
                    None,
                ));
            }
        }
    }
    if inst.result_type.is_some_and(|t| !declared.contains(&t)) {
        return Some(m.diag(
            format!(
                "SPIR-V 2.4: result type %{} is not a type declared before this instruction",
                inst.result_type.unwrap_or(0)
            ),
            inst,
            None,
        ));
    }
    let op = inst.class.opcode;
    if op.is_type() {
        // Operands that must name types (array lengths are constants).
        let type_operands: Vec<u32> = inst
            .operands
            .iter()
            .enumerate()
            .filter(|(i, _)| !(op == Op::TypeArray && *i == 1))
            .filter_map(|(_, o)| match o {
                Operand::IdRef(id) => Some(*id),
                _ => None,
            })
            .collect();
        if let Some(bad) = type_operands.iter().find(|id| m.ty(**id).is_none()) {
            return Some(m.diag(
                format!("SPIR-V 2.4: operand %{bad} of a type declaration is not a type"),
                inst,
                None,
            ));
        }
        if op == Op::TypeVector {
            let elem = type_operands.first().and_then(|e| m.ty(*e));
            if !matches!(
                elem,
                Some(Type::Int { .. } | Type::Float { .. } | Type::Bool)
            ) {
                return Some(m.diag(
                    "SPIR-V: vector components must be integer, float or bool scalars",
                    inst,
                    None,
                ));
            }
        }
        if op == Op::TypeArray {
            let len = match inst.operands.get(1) {
                Some(Operand::IdRef(id)) => m.global_raw(*id),
                _ => None,
            };
            if len.is_none_or(|c| c.class.opcode != Op::Constant) {
                return Some(m.diag(
                    "SPIR-V: an array length must be an integer OpConstant",
                    inst,
                    None,
                ));
            }
        }
    }
    None
}

/// env 2.5.1 and 4 type rules for the types codegen has to represent.
fn check_type(m: &Module, inst: &rspirv::dr::Instruction) -> Option<Diagnostic> {
    let lit = |i: usize| match inst.operands.get(i) {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    };
    let rule = match inst.class.opcode {
        Op::TypeInt if lit(1) != Some(0) => {
            "env 4: OpTypeInt signedness must be 0 in OpenCL".to_owned()
        }
        Op::TypeInt if !matches!(lit(0), Some(8 | 16 | 32 | 64)) => format!(
            "env 2.5.1: integer width {:?} is not 8, 16, 32 or 64",
            lit(0)
        ),
        Op::TypeFloat if !matches!(lit(0), Some(16 | 32 | 64)) || inst.operands.len() > 1 => {
            format!(
                "env 2.5.1: floating-point width {:?} (or an FP encoding operand) is not supported",
                lit(0)
            )
        }
        Op::TypeVector if !matches!(lit(1), Some(2 | 3 | 4 | 8 | 16)) => format!(
            "env 2.5.1: vector component count {:?} is not 2, 3, 4, 8 or 16",
            lit(1)
        ),
        Op::TypeImage => return check_image_type(m, inst),
        _ => {
            let (cap, what) = required_capability(inst)?;
            // Half values (Float16) also make the half type available.
            if declares(m, cap)
                || (cap == Capability::Float16Buffer && declares(m, Capability::Float16))
            {
                return None;
            }
            format!("SPIR-V 2.4: {what} requires the {cap:?} capability, which the module does not declare")
        }
    };
    Some(m.diag(rule, inst, None))
}

fn declares(m: &Module, cap: Capability) -> bool {
    m.raw
        .capabilities
        .iter()
        .any(|i| i.operands.first() == Some(&Operand::Capability(cap)))
}

/// The capability a type declaration needs (SPIR-V capability dependencies of the types an
/// OpenCL module may use).
fn required_capability(inst: &rspirv::dr::Instruction) -> Option<(Capability, String)> {
    let lit = |i: usize| match inst.operands.get(i) {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    };
    Some(match (inst.class.opcode, lit(0), lit(1)) {
        (Op::TypeInt, Some(8), _) => (Capability::Int8, "an 8-bit integer type".into()),
        (Op::TypeInt, Some(16), _) => (Capability::Int16, "a 16-bit integer type".into()),
        (Op::TypeInt, Some(64), _) => (Capability::Int64, "a 64-bit integer type".into()),
        (Op::TypeFloat, Some(16), _) => (Capability::Float16Buffer, "a 16-bit float type".into()),
        (Op::TypeFloat, Some(64), _) => (Capability::Float64, "a 64-bit float type".into()),
        (Op::TypeVector, _, Some(n @ (8 | 16))) => {
            (Capability::Vector16, format!("a {n}-component vector"))
        }
        // OpTypeSampler and OpTypeSampledImage need no capability of their own (SPIR-V 3.32.6;
        // llvm-spirv declares none for a kernel whose only image-related argument is a
        // sampler); the image types they go with do.
        (Op::TypeDeviceEvent | Op::TypeQueue, _, _) => (
            Capability::DeviceEnqueue,
            format!("Op{:?}", inst.class.opcode),
        ),
        (Op::TypePipe | Op::TypeReserveId, _, _) => {
            (Capability::Pipes, format!("Op{:?}", inst.class.opcode))
        }
        (Op::TypeNamedBarrier, _, _) => (Capability::NamedBarrier, "OpTypeNamedBarrier".into()),
        _ => return None,
    })
}

/// env 4 rules for OpTypeImage (and the ImageBasic capability it needs).
fn check_image_type(m: &Module, inst: &rspirv::dr::Instruction) -> Option<Diagnostic> {
    let lit = |i: usize| match inst.operands.get(i) {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    };
    let sampled_type = match inst.operands.first() {
        Some(Operand::IdRef(t)) => m.ty(*t),
        _ => None,
    };
    let dim = match inst.operands.get(1) {
        Some(Operand::Dim(d)) => Some(*d),
        _ => None,
    };
    let rule = if !matches!(sampled_type, Some(crate::module::Type::Void)) {
        "env 4: OpTypeImage Sampled Type must be OpTypeVoid".to_owned()
    } else if lit(5) != Some(0) {
        "env 4: OpTypeImage Sampled must be 0".to_owned()
    } else if lit(4) != Some(0) {
        "env 4: OpTypeImage MS must be 0 (single-sampled)".to_owned()
    } else if lit(3) == Some(1) && !matches!(dim, Some(spirv::Dim::Dim1D | spirv::Dim::Dim2D)) {
        format!("env 4: OpTypeImage may be Arrayed only when Dim is 1D or 2D, found {dim:?}")
    } else if inst.operands.get(6) != Some(&Operand::ImageFormat(spirv::ImageFormat::Unknown)) {
        "env 4: OpTypeImage Image Format must be Unknown".to_owned()
    } else if !matches!(inst.operands.get(7), Some(Operand::AccessQualifier(_))) {
        "env 4: OpTypeImage must have an Access Qualifier".to_owned()
    } else if !declares(m, Capability::ImageBasic) {
        "SPIR-V 2.4: OpTypeImage requires the ImageBasic capability, which the module does not declare".to_owned()
    } else {
        return None;
    };
    Some(m.diag(rule, inst, None))
}
