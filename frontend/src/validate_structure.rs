//! Structural checks that keep codegen safe: ids defined once, known and below the bound,
//! blocks terminated, OpPhi first in its block, branch targets are labels of the same function,
//! phi parents are blocks of the function, no recursion in the static call graph.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Operand};
use spirv::Op;

use crate::diagnostics::Diagnostic;
use crate::module::Module;

fn is_terminator(op: Op) -> bool {
    matches!(
        op,
        Op::Branch
            | Op::BranchConditional
            | Op::Switch
            | Op::Return
            | Op::ReturnValue
            | Op::Unreachable
            | Op::Kill
    )
}

pub(crate) fn check_functions(m: &Module) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    let mut push = |rule: String, inst: &Instruction, id: Option<u32>| {
        problems.push(m.diag(rule, inst, id));
    };
    let function_ids: HashSet<u32> = m
        .raw
        .functions
        .iter()
        .filter_map(|f| f.def.as_ref()?.result_id)
        .collect();
    let mut defined: HashSet<u32> = m.globals.keys().copied().collect();
    defined.extend(m.ext_imports.keys());
    // Functions, parameters and labels may not reuse a module-scope id or each other's.
    let mut seen_functions = HashSet::new();
    for f in &m.raw.functions {
        let Some(def) = &f.def else { continue };
        let Some(id) = def.result_id else { continue };
        if !seen_functions.insert(id) || defined.contains(&id) {
            push(
                format!("SPIR-V 2.2: id %{id} is defined more than once"),
                def,
                None,
            );
        }
    }
    defined.extend(&function_ids);
    defined.extend(&m.debug_ids);
    // OpString ids (OpLine file names, debug info).
    defined.extend(m.raw.debug_string_source.iter().filter_map(|i| i.result_id));
    let mut calls: HashMap<u32, Vec<u32>> = HashMap::new();

    for f in &m.raw.functions {
        let Some(def) = &f.def else { continue };
        let fid = def.result_id.unwrap_or(0);
        let labels: HashSet<u32> = f
            .blocks
            .iter()
            .filter_map(|b| b.label.as_ref()?.result_id)
            .collect();
        let mut local: HashSet<u32> = HashSet::new();
        let headers = f
            .parameters
            .iter()
            .chain(f.blocks.iter().filter_map(|b| b.label.as_ref()));
        for inst in headers {
            if let Some(id) = inst.result_id {
                if !local.insert(id) || defined.contains(&id) {
                    push(
                        format!("SPIR-V 2.2: id %{id} is defined more than once"),
                        inst,
                        None,
                    );
                }
            }
        }
        for b in &f.blocks {
            for inst in &b.instructions {
                if let Some(id) = inst.result_id {
                    if !local.insert(id) || defined.contains(&id) {
                        push(
                            format!("SPIR-V 2.2: id %{id} is defined more than once"),
                            inst,
                            Some(id),
                        );
                    }
                }
            }
        }
        if f.blocks.is_empty() && !m.has_decoration(fid, spirv::Decoration::LinkageAttributes) {
            push(
                format!("SPIR-V 2.4: function %{fid} has no body and is not an import"),
                def,
                Some(fid),
            );
        }
        for b in &f.blocks {
            match b.instructions.last() {
                Some(last) if is_terminator(last.class.opcode) => {}
                _ => {
                    let label = b.label.as_ref().unwrap_or(def);
                    push(
                        "SPIR-V 2.2.5: block does not end with a termination instruction".into(),
                        label,
                        label.result_id,
                    );
                }
            }
            let mut past_phis = false;
            for (i, inst) in b.instructions.iter().enumerate() {
                match inst.class.opcode {
                    Op::Phi if past_phis => push(
                        "SPIR-V 2.4: OpPhi must come before every other instruction of its block"
                            .into(),
                        inst,
                        None,
                    ),
                    Op::Phi | Op::Line | Op::NoLine => {}
                    // llvm-spirv puts DebugScope (OpenCL.DebugInfo.100) before phis.
                    Op::ExtInst
                        if matches!(inst.operands.first(), Some(Operand::IdRef(set))
                            if m.ext_import(*set) != Some("OpenCL.std")) => {}
                    _ => past_phis = true,
                }
                if is_terminator(inst.class.opcode) && i + 1 != b.instructions.len() {
                    push(
                        "SPIR-V 2.2.5: termination instruction in the middle of a block".into(),
                        inst,
                        None,
                    );
                }
                let op = inst.class.opcode;
                let label_operands: Vec<u32> = match op {
                    Op::Branch => ids(inst, 0..1),
                    Op::BranchConditional => ids(inst, 1..3),
                    Op::Switch => inst
                        .operands
                        .iter()
                        .skip(1)
                        .filter_map(|o| {
                            if let Operand::IdRef(i) = o {
                                Some(*i)
                            } else {
                                None
                            }
                        })
                        .collect(),
                    Op::Phi => inst
                        .operands
                        .iter()
                        .skip(1)
                        .step_by(2)
                        .filter_map(|o| {
                            if let Operand::IdRef(i) = o {
                                Some(*i)
                            } else {
                                None
                            }
                        })
                        .collect(),
                    Op::LoopMerge => ids(inst, 0..2),
                    Op::SelectionMerge => ids(inst, 0..1),
                    _ => Vec::new(),
                };
                for target in label_operands {
                    if !labels.contains(&target) {
                        push(
                            format!("SPIR-V 2.16: %{target} is not a block label of this function"),
                            inst,
                            None,
                        );
                    }
                }
                if op == Op::FunctionCall {
                    if let Some(Operand::IdRef(callee)) = inst.operands.first() {
                        if !function_ids.contains(callee) {
                            push(
                                format!(
                                    "SPIR-V: OpFunctionCall target %{callee} is not a function"
                                ),
                                inst,
                                None,
                            );
                        } else {
                            calls.entry(fid).or_default().push(*callee);
                        }
                    }
                }
                let literal = opencl_std_literal_operand(m, inst);
                for (oi, operand) in inst.operands.iter().enumerate() {
                    if Some(oi) == literal {
                        continue;
                    }
                    if let Operand::IdRef(id)
                    | Operand::IdScope(id)
                    | Operand::IdMemorySemantics(id) = operand
                    {
                        if !defined.contains(id) && !local.contains(id) {
                            push(format!("SPIR-V 2.2: id %{id} is used but not defined in this function or at module scope"), inst, None);
                        }
                    }
                }
                if let Some(ty) = inst.result_type {
                    if m.ty(ty).is_none() {
                        push(
                            format!("SPIR-V 2.2: result type %{ty} is not a type"),
                            inst,
                            None,
                        );
                    }
                }
            }
        }
    }
    // SPIR-V 2.4: an instruction that needs capabilities needs one of them declared (the
    // device's capability check has already run on the declared ones).
    let declared: HashSet<spirv::Capability> = m
        .raw
        .capabilities
        .iter()
        .filter_map(|i| match i.operands.first() {
            Some(Operand::Capability(c)) => Some(*c),
            _ => None,
        })
        .collect();
    for inst in m.raw.all_inst_iter() {
        let needs = inst.class.capabilities;
        if !needs.is_empty() && !needs.iter().any(|c| declared.contains(c)) {
            problems.push(m.diag(
                format!(
                    "SPIR-V 2.4: Op{:?} requires one of the capabilities {needs:?}, which the module does not declare",
                    inst.class.opcode
                ),
                inst,
                None,
            ));
        }
    }
    // SPIR-V 2.3: every id is below the header's bound.
    let bound = m.raw.header.as_ref().map_or(u32::MAX, |h| h.bound);
    for inst in m.raw.all_inst_iter() {
        if let Some(id) = inst.result_id.filter(|&id| id >= bound) {
            problems.push(m.diag(
                format!("SPIR-V 2.3: id %{id} is not below the module's id bound {bound}"),
                inst,
                None,
            ));
        }
    }
    // env 4.1: no recursion — look for a cycle in the static call graph.
    let mut state: HashMap<u32, u8> = HashMap::new();
    fn visit(f: u32, calls: &HashMap<u32, Vec<u32>>, state: &mut HashMap<u32, u8>) -> Option<u32> {
        match state.get(&f) {
            Some(1) => return Some(f),
            Some(2) => return None,
            _ => {}
        }
        state.insert(f, 1);
        for &c in calls.get(&f).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(cycle) = visit(c, calls, state) {
                return Some(cycle);
            }
        }
        state.insert(f, 2);
        None
    }
    for f in &m.raw.functions {
        let Some(def) = &f.def else { continue };
        let fid = def.result_id.unwrap_or(0);
        if let Some(at) = visit(fid, &calls, &mut state) {
            let def = m
                .function_raw(at)
                .and_then(|f| f.def.as_ref())
                .unwrap_or(def);
            problems.push(m.diag(
                format!("env 4: recursion is not allowed; function %{at} is part of a call cycle"),
                def,
                None,
            ));
            break;
        }
    }
    problems
}

fn ids(inst: &Instruction, range: std::ops::Range<usize>) -> Vec<u32> {
    range
        .filter_map(|i| {
            if let Some(Operand::IdRef(id)) = inst.operands.get(i) {
                Some(*id)
            } else {
                None
            }
        })
        .collect()
}

/// The operand index of an OpenCL.std instruction's trailing literal (vloadn's and the
/// vload_halfn family's component count n, the vstore_half*_r rounding mode), which the parser
/// reads as an id because it does not know the instruction's grammar.
pub fn opencl_std_literal_operand(m: &Module, inst: &Instruction) -> Option<usize> {
    use spirv::OpenclStd100Op as Cl;
    if inst.class.opcode != Op::ExtInst {
        return None;
    }
    let Some(Operand::IdRef(set)) = inst.operands.first() else {
        return None;
    };
    if m.ext_import(*set) != Some("OpenCL.std") {
        return None;
    }
    let Some(Operand::LiteralExtInstInteger(n)) = inst.operands.get(1) else {
        return None;
    };
    match Cl::from_u32(*n)? {
        Cl::vloadn | Cl::vload_halfn | Cl::vloada_halfn => Some(4),
        Cl::vstore_half_r | Cl::vstore_halfn_r | Cl::vstorea_halfn_r => Some(5),
        _ => None,
    }
}
