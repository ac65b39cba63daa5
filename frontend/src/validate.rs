//! Validation against the OpenCL SPIR-V environment (env spec 3.1.1 chapters 2–4): the module
//! must be something this device can run, and safe for codegen to walk.

use rspirv::dr::Operand;
use spirv::{AddressingModel, Capability, ExecutionModel, MemoryModel, Op};

use crate::diagnostics::{Diagnostic, FrontendError};
use crate::module::Module;

/// Capabilities a module may declare on this device. The device's `cl_khr_spirv_queries`
/// answers and feature checks derive from this one table.
pub const SUPPORTED_CAPABILITIES: &[Capability] = &[
    Capability::Addresses,
    Capability::Linkage,
    Capability::Kernel,
    Capability::Vector16,
    Capability::Int8,
    Capability::Int16,
    Capability::Int64,
    Capability::Float64,
];

/// Capabilities a module may declare only from a given SPIR-V version on (env 3.2–3.7). Those
/// not listed are allowed from SPIR-V 1.0.
pub const CAPABILITY_MIN_VERSION: &[(Capability, (u8, u8))] = &[
    (Capability::SubgroupDispatch, (1, 1)),
    (Capability::PipeStorage, (1, 1)),
    (Capability::GroupNonUniform, (1, 3)),
    (Capability::GroupNonUniformShuffle, (1, 3)),
    (Capability::GroupNonUniformShuffleRelative, (1, 3)),
    (Capability::DotProduct, (1, 6)),
    (Capability::DotProductInput4x8Bit, (1, 6)),
    (Capability::DotProductInput4x8BitPacked, (1, 6)),
];

/// Extended instruction sets a module may import.
pub const SUPPORTED_EXT_INST_SETS: &[&str] = &[
    "OpenCL.std",
    "OpenCL.DebugInfo.100",
    "NonSemantic.Shader.DebugInfo.100",
];

/// SPIR-V extensions a module may declare (decoration-only extensions codegen can ignore).
pub const SUPPORTED_EXTENSIONS: &[&str] = &[
    "SPV_KHR_no_integer_wrap_decoration",
    "SPV_KHR_non_semantic_info",
];

/// Most problems listed in one build log.
const MAX_DIAGNOSTICS: usize = 100;

pub(crate) fn validate(m: &Module) -> Result<(), FrontendError> {
    let mut problems = Vec::new();

    for inst in &m.raw.capabilities {
        if let Some(Operand::Capability(cap)) = inst.operands.first() {
            if !SUPPORTED_CAPABILITIES.contains(cap) {
                problems.push(m.diag(
                    format!("env 3: capability {cap:?} is not supported by this device"),
                    inst,
                    None,
                ));
            } else if let Some(&(_, min)) = CAPABILITY_MIN_VERSION.iter().find(|(c, _)| c == cap) {
                if m.version < min {
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
            if !SUPPORTED_EXTENSIONS.contains(&name.as_str())
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
    for inst in &m.raw.entry_points {
        let model = inst.operands.first();
        let func = match inst.operands.get(1) {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        };
        if model != Some(&Operand::ExecutionModel(ExecutionModel::Kernel)) {
            problems.push(m.diag(
                format!("env 4: entry point execution model must be Kernel, found {model:?}"),
                inst,
                func,
            ));
        }
        if func.and_then(|f| m.function(f)).is_none() {
            problems.push(m.diag(
                format!(
                    "SPIR-V 2.4: entry point names %{} which is not a function of this module",
                    func.unwrap_or(0)
                ),
                inst,
                None,
            ));
        }
    }
    for inst in &m.raw.types_global_values {
        problems.extend(check_type(m, inst));
    }
    let structural = crate::validate_structure::check_functions(m);
    // Operand types are only meaningful once every id is known and defined once.
    if structural.is_empty() {
        problems.extend(crate::validate_types::check_types(m));
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
        _ => return None,
    };
    Some(m.diag(rule, inst, None))
}
