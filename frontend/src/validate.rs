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
    Capability::Int64Atomics,
    // llvm-spirv uses generic pointers internally (e.g. for wait_group_events) even for
    // OpenCL C 1.2; they are flat addresses here. The OpenCL C generic address space feature
    // (to_global/to_local, OpGenericCastToPtrExplicit) is not advertised.
    Capability::GenericPointer,
    // Work-group collectives (scope Workgroup); sub-group scope is refused by codegen.
    Capability::Groups,
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

fn diag(rule: String, instruction: String, m: &Module, id: Option<u32>) -> Diagnostic {
    Diagnostic {
        rule,
        instruction,
        word_offset: None,
        source_name: id.and_then(|id| m.name(id)).map(str::to_owned),
    }
}

pub(crate) fn validate(m: &Module) -> Result<(), FrontendError> {
    let mut problems = Vec::new();

    for inst in &m.raw.capabilities {
        if let Some(Operand::Capability(cap)) = inst.operands.first() {
            if !SUPPORTED_CAPABILITIES.contains(cap) {
                problems.push(diag(
                    format!("env 3: capability {cap:?} is not supported by this device"),
                    format!("OpCapability {cap:?}"),
                    m,
                    None,
                ));
            }
        }
    }
    if !m
        .raw
        .capabilities
        .iter()
        .any(|i| i.operands.first() == Some(&Operand::Capability(Capability::Kernel)))
    {
        problems.push(diag(
            "env 3: an OpenCL module must declare the Kernel capability".into(),
            String::new(),
            m,
            None,
        ));
    }
    for inst in &m.raw.extensions {
        if let Some(Operand::LiteralString(name)) = inst.operands.first() {
            if !SUPPORTED_EXTENSIONS.contains(&name.as_str())
                && !name.starts_with("SPV_KHR_non_semantic")
            {
                problems.push(diag(
                    format!("env 3.8: SPIR-V extension {name} is not supported by this device"),
                    format!("OpExtension \"{name}\""),
                    m,
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
                problems.push(diag(
                    format!("env 3: extended instruction set \"{name}\" is not supported"),
                    format!("OpExtInstImport %{}", inst.result_id.unwrap_or(0)),
                    m,
                    None,
                ));
            }
        }
    }
    match &m.raw.memory_model {
        None => problems.push(diag(
            "SPIR-V 2.4: the module has no OpMemoryModel".into(),
            String::new(),
            m,
            None,
        )),
        Some(inst) => {
            match inst.operands.first() {
                Some(Operand::AddressingModel(AddressingModel::Physical64)) => {}
                Some(Operand::AddressingModel(AddressingModel::Physical32)) => problems.push(diag(
                    "env 4.1: Physical32 addressing is not supported by this 64-bit device (CL_DEVICE_ADDRESS_BITS is 64); compile for spir64".into(),
                    "OpMemoryModel".into(), m, None)),
                other => problems.push(diag(
                    format!("env 4.1: addressing model {other:?} is not allowed for OpenCL; Physical64 is required"),
                    "OpMemoryModel".into(), m, None)),
            }
            if inst.operands.get(1) != Some(&Operand::MemoryModel(MemoryModel::OpenCL)) {
                problems.push(diag(
                    format!(
                        "env 4.1: memory model must be OpenCL, found {:?}",
                        inst.operands.get(1)
                    ),
                    "OpMemoryModel".into(),
                    m,
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
            problems.push(diag(
                format!("env 4.1: entry point execution model must be Kernel, found {model:?}"),
                "OpEntryPoint".into(),
                m,
                func,
            ));
        }
        if func.and_then(|f| m.function(f)).is_none() {
            problems.push(diag(
                format!(
                    "SPIR-V 2.4: entry point names %{} which is not a function of this module",
                    func.unwrap_or(0)
                ),
                "OpEntryPoint".into(),
                m,
                None,
            ));
        }
    }
    for inst in &m.raw.types_global_values {
        problems.extend(check_type(m, inst));
    }
    problems.extend(crate::validate_structure::check_functions(m));

    if problems.is_empty() {
        Ok(())
    } else {
        Err(FrontendError::Invalid(problems))
    }
}

/// env 2.1 type rules for the types codegen has to represent.
fn check_type(m: &Module, inst: &rspirv::dr::Instruction) -> Option<Diagnostic> {
    let id = inst.result_id.unwrap_or(0);
    let lit = |i: usize| match inst.operands.get(i) {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    };
    let (rule, what) = match inst.class.opcode {
        Op::TypeInt if lit(1) != Some(0) => (
            "env 2.1: OpTypeInt signedness must be 0 in OpenCL".to_owned(),
            "OpTypeInt",
        ),
        Op::TypeInt if !matches!(lit(0), Some(8 | 16 | 32 | 64)) => (
            format!("env 2.1: integer width {:?} is not 8, 16, 32 or 64", lit(0)),
            "OpTypeInt",
        ),
        Op::TypeFloat if !matches!(lit(0), Some(16 | 32 | 64)) || inst.operands.len() > 1 => (
            format!(
                "env 2.1: floating-point width {:?} (or an FP encoding operand) is not supported",
                lit(0)
            ),
            "OpTypeFloat",
        ),
        Op::TypeVector if !matches!(lit(1), Some(2 | 3 | 4 | 8 | 16)) => (
            format!(
                "env 2.1: vector component count {:?} is not 2, 3, 4, 8 or 16",
                lit(1)
            ),
            "OpTypeVector",
        ),
        _ => return None,
    };
    Some(diag(rule, format!("{what} %{id}"), m, inst.result_id))
}
