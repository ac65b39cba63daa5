//! Kernel metadata read from the module: what the runtime needs to accept arguments and answer
//! `clGetKernelInfo` / `clGetKernelArgInfo`, without knowing SPIR-V.

/// How a kernel argument is passed, as the runtime sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A pointer to `__global` or `__constant` memory: the application passes a `cl_mem` (or NULL).
    Buffer { address: AddressQualifier },
    /// A `__local` pointer: the application passes only a size; the runtime allocates it per
    /// work-group in the local-memory arena.
    Local,
    /// A value copied from the application: scalars, vectors, structs. `size` is what
    /// `clSetKernelArg` must be called with; `align` is its alignment in the argument block.
    Value { size: usize, align: usize },
    /// A `sampler_t`.
    Sampler,
    /// An image object of the declared type: None for an image type OpenCL C has not (a cube
    /// map, a 3D array), which no image object fits.
    Image {
        access: AccessQualifier,
        image_type: Option<ImageType>,
    },
    /// A pipe (`__read_only pipe T` or `__write_only pipe T`): the application passes a pipe
    /// object; the kernel gets the address of its memory (codegen's `Pipe`).
    Pipe { access: AccessQualifier },
    /// A `queue_t`: the application passes a device queue (`cl_command_queue`); the kernel
    /// gets its handle's address, the value `get_default_queue` would give (8 bytes).
    Queue,
    /// The first argument of a block's kernel ([`KernelInfo::block_invoke`]): the address of
    /// the block literal the runtime copied at `enqueue_kernel` (8 bytes). Never an
    /// application's argument.
    BlockLiteral,
}

/// The OpenCL C image types: what an image argument declares, and so which image objects
/// `clSetKernelArg` may give it (an image of that `cl_mem_object_type`, a depth type taking
/// exactly the `CL_DEPTH` images).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageType {
    Image1d,
    Image1dArray,
    Image1dBuffer,
    Image2d,
    Image2dArray,
    Image2dDepth,
    Image2dArrayDepth,
    Image3d,
}

impl ImageType {
    /// The type of an `OpTypeImage` of `dim`, `arrayed` and `depth`, if OpenCL C has one.
    fn of(dim: spirv::Dim, arrayed: bool, depth: bool) -> Option<ImageType> {
        use spirv::Dim;
        Some(match (dim, arrayed, depth) {
            (Dim::Dim1D, false, false) => ImageType::Image1d,
            (Dim::Dim1D, true, false) => ImageType::Image1dArray,
            (Dim::DimBuffer, false, false) => ImageType::Image1dBuffer,
            (Dim::Dim2D, false, false) => ImageType::Image2d,
            (Dim::Dim2D, true, false) => ImageType::Image2dArray,
            (Dim::Dim2D, false, true) => ImageType::Image2dDepth,
            (Dim::Dim2D, true, true) => ImageType::Image2dArrayDepth,
            (Dim::Dim3D, false, false) => ImageType::Image3d,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressQualifier {
    Global,
    Constant,
    Local,
    Private,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessQualifier {
    ReadOnly,
    WriteOnly,
    ReadWrite,
    None,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeQualifiers {
    pub is_const: bool,
    pub is_restrict: bool,
    pub is_volatile: bool,
    pub is_pipe: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArg {
    /// Source name from `OpName` on the parameter, if the module has one.
    pub name: Option<String>,
    pub kind: ArgKind,
    pub address: AddressQualifier,
    pub access: AccessQualifier,
    /// Source type name (e.g. `float4*`) from llvm-spirv's `kernel_arg_type.` strings.
    pub type_name: Option<String>,
    pub qualifiers: TypeQualifiers,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    /// Id of the `OpFunction` the entry point names.
    pub function: u32,
    pub args: Vec<KernelArg>,
    /// `reqd_work_group_size` (execution mode `LocalSize`).
    pub reqd_work_group_size: Option<[u32; 3]>,
    /// `work_group_size_hint` (execution mode `LocalSizeHint`).
    pub work_group_size_hint: Option<[u32; 3]>,
    /// `vec_type_hint` as the OpenCL C type name (execution mode `VecTypeHint`).
    pub vec_type_hint: Option<String>,
    /// Execution mode `ContractionOff`: no `a*b+c` contraction into fma.
    pub contraction_off: bool,
    /// Execution mode `SubgroupSize`: the sub-group size the kernel requires.
    pub required_sub_group_size: Option<u32>,
    /// Execution mode `SubgroupsPerWorkgroup` (`CL_KERNEL_COMPILE_NUM_SUB_GROUPS`).
    pub sub_groups_per_work_group: Option<u32>,
    /// Whether the kernel (or anything it calls) has a point where a work-item stops for others
    /// ([`stops_work_items`]): a work-group barrier or collective, a sub-group operation, or a
    /// spin loop. Such kernels keep per-work-item frames to resume from.
    pub uses_barrier: bool,
    /// Whether the kernel (or anything it calls) has a spin loop: a loop whose exit depends on
    /// an atomic executed in it, where a work-item waits for another (spin_loops.rs). Its back
    /// edges are yield points (`uses_barrier` is set too).
    pub has_spin_loops: bool,
    /// Whether the kernel (or anything it calls) waits on a named barrier
    /// (`OpMemoryNamedBarrier`; `uses_barrier` is set too).
    pub has_named_barriers: bool,
    /// The kernel runs a block enqueued by `enqueue_kernel` (an `OpEnqueueKernel`'s Invoke, or
    /// the entry point llvm-spirv writes around it): its first argument is
    /// [`ArgKind::BlockLiteral`], the others `__local` pointers. Applications never see it
    /// (program kernel lists, `clCreateKernel`).
    pub block_invoke: bool,
    /// Whether the kernel (or anything it calls) has a device-side enqueue instruction: its
    /// launches need the runtime's device-enqueue host (codegen's `GroupInfo::device_enqueue`).
    pub uses_device_enqueue: bool,
}

impl KernelInfo {
    /// The `CL_KERNEL_ATTRIBUTES` string: the attributes as written in OpenCL C, space-separated.
    pub fn attributes(&self) -> String {
        let mut parts = Vec::new();
        if let Some([x, y, z]) = self.reqd_work_group_size {
            parts.push(format!("reqd_work_group_size({x},{y},{z})"));
        }
        if let Some([x, y, z]) = self.work_group_size_hint {
            parts.push(format!("work_group_size_hint({x},{y},{z})"));
        }
        if let Some(t) = &self.vec_type_hint {
            parts.push(format!("vec_type_hint({t})"));
        }
        parts.join(" ")
    }
}

use std::collections::{HashMap, HashSet};

use rspirv::dr::{self, Operand};
use spirv::{Decoration, ExecutionMode, FunctionParameterAttribute, Op, StorageClass};

use crate::diagnostics::{Diagnostic, FrontendError};
use crate::module::{Module, Type};

/// Prefix of the `OpModuleProcessed` strings that carry a kernel's unsigned `vec_type_hint`
/// type (`ferrocl vec_type_hint <kernel> <type>`), written by the OpenCL C driver: SPIR-V's
/// `VecTypeHint` has no signedness, so `uint4` would come back as `int4` in
/// CL_KERNEL_ATTRIBUTES (CTS api kernel_attributes).
pub const VEC_TYPE_HINT_RECORD: &str = "ferrocl vec_type_hint ";

/// Reads every `OpEntryPoint Kernel` into a [`KernelInfo`], and gives every block that
/// device-side enqueue instructions name a kernel (`Module::block_kernels`, the second
/// result).
pub(crate) fn extract_kernels(
    m: &Module,
) -> Result<(Vec<KernelInfo>, HashMap<u32, usize>), FrontendError> {
    let invokes = block_invokes(m);
    let mut kernels = Vec::new();
    for ep in &m.raw.entry_points {
        let (Some(Operand::IdRef(function)), Some(Operand::LiteralString(name))) =
            (ep.operands.get(1), ep.operands.get(2))
        else {
            return Err(FrontendError::Invalid(vec![m.diag(
                "SPIR-V: malformed OpEntryPoint",
                ep,
                None,
            )]));
        };
        let block = is_block_kernel(m, *function, &invokes);
        kernels.push(kernel_info(m, *function, name, block, ep)?);
    }
    let mut blocks = HashMap::new();
    for &invoke in &invokes {
        let found = kernels.iter().position(|k| {
            k.block_invoke && (k.function == invoke || forwards_to(m, k.function) == Some(invoke))
        });
        let index = match found {
            Some(index) => index,
            None => {
                // A block with no entry point of its own (SPIR-V from another producer than
                // llvm-spirv): a hidden kernel runs it. The validator made sure the Invoke is
                // a function.
                let def = m
                    .function_raw(invoke)
                    .and_then(|f| f.def.as_ref())
                    .ok_or_else(|| {
                        FrontendError::Invalid(vec![Diagnostic {
                            rule: "SPIR-V Device-Side Enqueue: an Invoke must be an OpFunction"
                                .into(),
                            instruction: format!("%{invoke}"),
                            word_offset: None,
                            source_name: None,
                            source_line: None,
                        }])
                    })?;
                let name = format!("__ferrocl_block_{invoke}");
                kernels.push(kernel_info(m, invoke, &name, true, def)?);
                kernels.len() - 1
            }
        };
        blocks.insert(invoke, index);
    }
    Ok((kernels, blocks))
}

/// Whether the entry point's `function` runs a block: it is one of `invokes`, or llvm-spirv's
/// wrapper around one.
pub(crate) fn is_block_kernel(m: &Module, function: u32, invokes: &[u32]) -> bool {
    invokes.contains(&function) || forwards_to(m, function).is_some_and(|f| invokes.contains(&f))
}

/// The functions device-side enqueue instructions run or ask about (their Invoke operand).
pub(crate) fn block_invokes(m: &Module) -> Vec<u32> {
    let mut invokes = Vec::new();
    for inst in m
        .raw
        .functions
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.instructions)
    {
        let index = match inst.class.opcode {
            Op::EnqueueKernel => 6,
            Op::GetKernelWorkGroupSize | Op::GetKernelPreferredWorkGroupSizeMultiple => 0,
            Op::GetKernelNDrangeSubGroupCount | Op::GetKernelNDrangeMaxSubGroupSize => 1,
            _ => continue,
        };
        if let Some(Operand::IdRef(f)) = inst.operands.get(index) {
            if !invokes.contains(f) {
                invokes.push(*f);
            }
        }
    }
    invokes
}

/// The function `function`'s body only calls, with its own parameters in order: llvm-spirv's
/// entry-point wrapper around a kernel (and around a block's kernel).
fn forwards_to(m: &Module, function: u32) -> Option<u32> {
    let f = m.function_raw(function)?;
    let [block] = f.blocks.as_slice() else {
        return None;
    };
    let [call, ret] = block.instructions.as_slice() else {
        return None;
    };
    if call.class.opcode != Op::FunctionCall || ret.class.opcode != Op::Return {
        return None;
    }
    let Some(Operand::IdRef(callee)) = call.operands.first() else {
        return None;
    };
    let params: Vec<u32> = f.parameters.iter().filter_map(|p| p.result_id).collect();
    let args: Vec<u32> = call.operands[1..]
        .iter()
        .filter_map(|o| {
            if let Operand::IdRef(id) = o {
                Some(*id)
            } else {
                None
            }
        })
        .collect();
    (args == params).then_some(*callee)
}

/// One kernel's metadata: the entry point `function` named `name`, or a block's kernel;
/// `at` is where errors point.
fn kernel_info(
    m: &Module,
    function: u32,
    name: &str,
    block_invoke: bool,
    at: &dr::Instruction,
) -> Result<KernelInfo, FrontendError> {
    let f = m.function_raw(function).ok_or_else(|| {
        FrontendError::Invalid(vec![m.diag(
            format!("entry point \"{name}\" names %{function}, not a function"),
            at,
            None,
        )])
    })?;
    let type_names = arg_strings(m, "kernel_arg_type", name);
    let type_quals = arg_strings(m, "kernel_arg_type_qual", name);
    let mut args = Vec::new();
    for (index, param) in f.parameters.iter().enumerate() {
        let pid = param.result_id.unwrap_or(0);
        let ty = param.result_type.unwrap_or(0);
        let described = if block_invoke && index == 0 {
            block_literal_arg(m, ty)
        } else {
            describe_arg(m, pid, ty)
        };
        let arg = described.map_err(|why| {
            FrontendError::Invalid(vec![m.diag(
                format!("env 2.8.2: kernel \"{name}\" argument {index}: {why}"),
                param,
                None,
            )])
        })?;
        let mut qualifiers = arg.qualifiers;
        if let Some(q) = type_quals.as_ref().and_then(|q| q.get(index)) {
            for word in q.split_whitespace() {
                match word {
                    "const" => qualifiers.is_const = true,
                    "restrict" => qualifiers.is_restrict = true,
                    "volatile" => qualifiers.is_volatile = true,
                    "pipe" => qualifiers.is_pipe = true,
                    _ => {}
                }
            }
        }
        args.push(KernelArg {
            name: m.name(pid).map(str::to_owned),
            type_name: type_names.as_ref().and_then(|t| t.get(index).cloned()),
            qualifiers,
            ..arg
        });
    }
    let mut info = KernelInfo {
        name: name.to_owned(),
        function,
        args,
        reqd_work_group_size: None,
        work_group_size_hint: None,
        vec_type_hint: None,
        contraction_off: false,
        required_sub_group_size: None,
        sub_groups_per_work_group: None,
        uses_barrier: reaches(m, function, |id| stops_work_items(m, id)),
        has_spin_loops: reaches(m, function, |id| !m.spin_loop_back_edges(id).is_empty()),
        has_named_barriers: reaches(m, function, |id| {
            m.function_raw(id).is_some_and(|f| {
                f.blocks
                    .iter()
                    .flat_map(|b| &b.instructions)
                    .any(|i| i.class.opcode == Op::MemoryNamedBarrier)
            })
        }),
        block_invoke,
        uses_device_enqueue: reaches(m, function, |id| {
            m.function_raw(id).is_some_and(|f| {
                f.blocks
                    .iter()
                    .flat_map(|b| &b.instructions)
                    .any(|i| is_device_enqueue_instruction(i.class.opcode))
            })
        }),
    };
    for mode in &m.raw.execution_modes {
        if mode.operands.first() != Some(&Operand::IdRef(function)) {
            continue;
        }
        let lits: Vec<u32> = mode.operands[2..]
            .iter()
            .filter_map(|o| {
                if let Operand::LiteralBit32(v) = o {
                    Some(*v)
                } else {
                    None
                }
            })
            .collect();
        match mode.operands.get(1) {
            Some(Operand::ExecutionMode(ExecutionMode::LocalSize)) if lits.len() == 3 => {
                info.reqd_work_group_size = Some([lits[0], lits[1], lits[2]]);
            }
            Some(Operand::ExecutionMode(ExecutionMode::LocalSizeHint)) if lits.len() == 3 => {
                info.work_group_size_hint = Some([lits[0], lits[1], lits[2]]);
            }
            Some(Operand::ExecutionMode(ExecutionMode::VecTypeHint)) if !lits.is_empty() => {
                info.vec_type_hint = Some(vec_type_hint_name(lits[0]));
            }
            Some(Operand::ExecutionMode(ExecutionMode::ContractionOff)) => {
                info.contraction_off = true
            }
            Some(Operand::ExecutionMode(ExecutionMode::SubgroupSize)) if lits.len() == 1 => {
                info.required_sub_group_size = Some(lits[0]);
            }
            Some(Operand::ExecutionMode(ExecutionMode::SubgroupsPerWorkgroup))
                if lits.len() == 1 =>
            {
                info.sub_groups_per_work_group = Some(lits[0]);
            }
            _ => {}
        }
    }
    // The signedness SPIR-V's VecTypeHint cannot carry, recorded by the OpenCL C driver.
    if info.vec_type_hint.is_some() {
        let record = format!("{}{} ", VEC_TYPE_HINT_RECORD, info.name);
        for inst in &m.raw.debug_module_processed {
            if let Some(Operand::LiteralString(text)) = inst.operands.first() {
                if let Some(ty) = text.strip_prefix(&record) {
                    info.vec_type_hint = Some(ty.to_owned());
                }
            }
        }
    }
    Ok(info)
}

fn describe_arg(m: &Module, pid: u32, ty: u32) -> Result<KernelArg, String> {
    let plain = |kind, address| KernelArg {
        name: None,
        kind,
        address,
        access: AccessQualifier::None,
        type_name: None,
        qualifiers: TypeQualifiers {
            is_const: false,
            is_restrict: param_attr(m, pid, FunctionParameterAttribute::NoAlias),
            is_volatile: m.has_decoration(pid, Decoration::Volatile),
            is_pipe: false,
        },
    };
    match m
        .ty(ty)
        .ok_or_else(|| format!("type %{ty} is not a type"))?
    {
        Type::Pointer { storage, pointee } => match storage {
            StorageClass::CrossWorkgroup => Ok(plain(
                ArgKind::Buffer {
                    address: AddressQualifier::Global,
                },
                AddressQualifier::Global,
            )),
            StorageClass::UniformConstant => {
                let mut a = plain(
                    ArgKind::Buffer {
                        address: AddressQualifier::Constant,
                    },
                    AddressQualifier::Constant,
                );
                a.qualifiers.is_const = true;
                Ok(a)
            }
            StorageClass::Workgroup => Ok(plain(ArgKind::Local, AddressQualifier::Local)),
            StorageClass::Function if param_attr(m, pid, FunctionParameterAttribute::ByVal) => {
                let size = m
                    .size_of(*pointee)
                    .ok_or("by-value aggregate has no size")?;
                let align = m
                    .align_of(*pointee)
                    .ok_or("by-value aggregate has no alignment")?;
                Ok(plain(
                    ArgKind::Value {
                        size: size as usize,
                        align: align as usize,
                    },
                    AddressQualifier::Private,
                ))
            }
            other => Err(format!(
                "a pointer to {other:?} storage cannot be a kernel argument"
            )),
        },
        Type::Sampler => Ok(plain(ArgKind::Sampler, AddressQualifier::Private)),
        Type::Image {
            dim,
            arrayed,
            depth,
            access,
        } => {
            let access = match access {
                Some(spirv::AccessQualifier::ReadOnly) | None => AccessQualifier::ReadOnly,
                Some(spirv::AccessQualifier::WriteOnly) => AccessQualifier::WriteOnly,
                Some(spirv::AccessQualifier::ReadWrite) => AccessQualifier::ReadWrite,
            };
            let image_type = ImageType::of(*dim, *arrayed, *depth);
            let mut a = plain(
                ArgKind::Image { access, image_type },
                AddressQualifier::Global,
            );
            a.access = access;
            Ok(a)
        }
        Type::Pipe { access } => {
            let access = match access {
                spirv::AccessQualifier::ReadOnly => AccessQualifier::ReadOnly,
                spirv::AccessQualifier::WriteOnly => AccessQualifier::WriteOnly,
                spirv::AccessQualifier::ReadWrite => {
                    return Err("a pipe is read_only or write_only, not read_write".into())
                }
            };
            let mut a = plain(ArgKind::Pipe { access }, AddressQualifier::Global);
            a.access = access;
            a.qualifiers.is_pipe = true;
            Ok(a)
        }
        Type::Queue => Ok(plain(ArgKind::Queue, AddressQualifier::Private)),
        Type::Bool => Err("bool is not allowed as a kernel argument type".into()),
        Type::Int { .. }
        | Type::Float { .. }
        | Type::Vector { .. }
        | Type::Struct { .. }
        | Type::Array { .. } => {
            let size = m.size_of(ty).ok_or("argument type has no size")?;
            let align = m.align_of(ty).ok_or("argument type has no alignment")?;
            Ok(plain(
                ArgKind::Value {
                    size: size as usize,
                    align: align as usize,
                },
                AddressQualifier::Private,
            ))
        }
        other => Err(format!(
            "{other:?} is not supported as a kernel argument type"
        )),
    }
}

/// A block kernel's first argument: the literal's address, a `Generic` pointer (OpenCL C
/// 6.15.15: the block's invoke function takes `void *`, in the generic address space).
fn block_literal_arg(m: &Module, ty: u32) -> Result<KernelArg, String> {
    match m.ty(ty) {
        Some(Type::Pointer { .. }) => Ok(KernelArg {
            name: None,
            kind: ArgKind::BlockLiteral,
            address: AddressQualifier::Private,
            access: AccessQualifier::None,
            type_name: None,
            qualifiers: TypeQualifiers {
                is_const: false,
                is_restrict: false,
                is_volatile: false,
                is_pipe: false,
            },
        }),
        _ => Err("a block's first parameter is the pointer to its literal".into()),
    }
}

/// The device-side enqueue instructions (SPIR-V 3.52.24) but the pure ndrange builder.
pub fn is_device_enqueue_instruction(op: Op) -> bool {
    matches!(
        op,
        Op::EnqueueMarker
            | Op::EnqueueKernel
            | Op::GetKernelNDrangeSubGroupCount
            | Op::GetKernelNDrangeMaxSubGroupSize
            | Op::GetKernelWorkGroupSize
            | Op::GetKernelPreferredWorkGroupSizeMultiple
            | Op::RetainEvent
            | Op::ReleaseEvent
            | Op::CreateUserEvent
            | Op::IsValidEvent
            | Op::SetUserEventStatus
            | Op::CaptureEventProfilingInfo
            | Op::GetDefaultQueue
    )
}

fn param_attr(m: &Module, id: u32, attr: FunctionParameterAttribute) -> bool {
    m.decorations_raw(id).iter().any(|(d, ops)| {
        *d == Decoration::FuncParamAttr
            && ops.first() == Some(&Operand::FunctionParameterAttribute(attr))
    })
}

/// llvm-spirv (with `--preserve-ocl-kernel-arg-type-metadata-through-string`) records the
/// `kernel_arg_type` and `kernel_arg_type_qual` metadata as OpStrings
/// `<what>.<kernel>.<arg0>,<arg1>,…,` — one entry per argument, possibly empty.
fn arg_strings(m: &Module, what: &str, kernel: &str) -> Option<Vec<String>> {
    let prefix = format!("{what}.{kernel}.");
    m.raw.debug_string_source.iter().find_map(|inst| {
        if inst.class.opcode != Op::String {
            return None;
        }
        let Some(Operand::LiteralString(s)) = inst.operands.first() else {
            return None;
        };
        let rest = s.strip_prefix(&prefix)?;
        let mut entries: Vec<String> = rest.split(',').map(str::to_owned).collect();
        // The list ends with a comma: drop the empty entry after it.
        if entries.last().is_some_and(String::is_empty) {
            entries.pop();
        }
        Some(entries)
    })
}

/// `VecTypeHint` packs the component type in the low 16 bits and the count in the high 16.
fn vec_type_hint_name(encoded: u32) -> String {
    let base = match encoded & 0xffff {
        0 => "char",
        1 => "short",
        2 => "int",
        3 => "long",
        4 => "half",
        5 => "float",
        6 => "double",
        _ => "int",
    };
    match encoded >> 16 {
        0 | 1 => base.to_owned(),
        n => format!("{base}{n}"),
    }
}

/// `OpControlBarrier`, `OpMemoryNamedBarrier` and the `OpGroup*` collectives (work-group or
/// sub-group scope), with those of SPV_KHR_uniform_group_instructions and the group pipe
/// reservations and commits.
pub fn is_barrier_or_collective(op: Op) -> bool {
    // cl_khr_subgroup_named_barrier: a barrier of some sub-groups of the work-group.
    matches!(op, Op::ControlBarrier | Op::MemoryNamedBarrier)
        || crate::instruction::is_group_collective(op)
        || crate::instruction::is_group_pipe(op)
}

/// Opcodes after which every work-item of the group must have arrived before any continues:
/// `OpControlBarrier`, the work-group and sub-group collectives (every work-item contributes
/// before any result exists) and the non-uniform instructions that read other work-items'
/// values. Codegen cuts kernels at these points.
pub fn synchronises_work_group(op: Op) -> bool {
    is_barrier_or_collective(op)
        || matches!(
            op,
            // Non-uniform instructions that exchange values within a sub-group: codegen makes
            // them barrier points too (the ballot bit queries need nobody else).
            |Op::GroupNonUniformElect| Op::GroupNonUniformAll
                | Op::GroupNonUniformAny
                | Op::GroupNonUniformAllEqual
                | Op::GroupNonUniformBroadcast
                | Op::GroupNonUniformBroadcastFirst
                | Op::GroupNonUniformBallot
                | Op::GroupNonUniformShuffle
                | Op::GroupNonUniformShuffleXor
                | Op::GroupNonUniformShuffleUp
                | Op::GroupNonUniformShuffleDown
                | Op::GroupNonUniformIAdd
                | Op::GroupNonUniformFAdd
                | Op::GroupNonUniformIMul
                | Op::GroupNonUniformFMul
                | Op::GroupNonUniformSMin
                | Op::GroupNonUniformUMin
                | Op::GroupNonUniformFMin
                | Op::GroupNonUniformSMax
                | Op::GroupNonUniformUMax
                | Op::GroupNonUniformFMax
                | Op::GroupNonUniformBitwiseAnd
                | Op::GroupNonUniformBitwiseOr
                | Op::GroupNonUniformBitwiseXor
                | Op::GroupNonUniformLogicalAnd
                | Op::GroupNonUniformLogicalOr
                | Op::GroupNonUniformLogicalXor
                | Op::GroupNonUniformRotateKHR
                // SPV_INTEL_subgroups: shuffles read other work-items' values like the
                // non-uniform ones (the block reads and writes need nobody else).
                | Op::SubgroupShuffleINTEL
                | Op::SubgroupShuffleDownINTEL
                | Op::SubgroupShuffleUpINTEL
                | Op::SubgroupShuffleXorINTEL
        )
}

/// Whether the body of `function` itself (its callees aside) has a point where a work-item
/// stops for others: an instruction that synchronises the work-group, or the back edge of a
/// spin loop (a yield point). Codegen cuts kernels at these points.
pub fn stops_work_items(m: &Module, function: u32) -> bool {
    if !m.spin_loop_back_edges(function).is_empty() {
        return true;
    }
    m.function_raw(function).is_some_and(|f| {
        f.blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .any(|i| synchronises_work_group(i.class.opcode))
    })
}

/// Whether `wanted` holds for `function` or anything it calls (functions without a body are
/// not looked into).
pub fn reaches(m: &Module, function: u32, wanted: impl Fn(u32) -> bool) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![function];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        if wanted(id) {
            return true;
        }
        let Some(f) = m.function_raw(id) else {
            continue;
        };
        for inst in f.blocks.iter().flat_map(|b| &b.instructions) {
            if inst.class.opcode == Op::FunctionCall {
                if let Some(Operand::IdRef(callee)) = inst.operands.first() {
                    stack.push(*callee);
                }
            }
        }
    }
    false
}
