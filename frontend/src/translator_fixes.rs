//! Repairs to what llvm-spirv-15 writes, applied to every module the OpenCL C recipe produces,
//! so that the driver and `ferrocl-clc` hand on modules `spirv-val` accepts (the Khronos CTS
//! validates each module its offline compiler writes).
//!
//! `OpSelect` with a scalar condition and vector operands: LLVM's `select i1 %c, <4 x float>
//! %a, <4 x float> %b` (instcombine and simplifycfg make it of a `?:` or an `if` on vectors)
//! comes out as such, which SPIR-V allows only from 1.4 on, while the module says 1.0. The
//! condition is splatted with `OpCompositeConstruct` into a bool vector of the operands' width
//! (the type is added when the module lacks it), which means the same in every version.
//!
//! `OpSwitch` on a bool: LLVM's `switch i1` (instcombine makes it of a `switch` on `x & 1`,
//! as in the CTS math kernels for 3-wide vectors) comes out as an `OpSwitch` whose selector is
//! a bool, while SPIR-V wants an integer. It becomes the `OpBranchConditional` it means: to the
//! case of literal 1 when true, of literal 0 when false, the default where a case is missing.

use std::collections::HashMap;

use spirv::Op;

use crate::locations::HEADER_WORDS;
use crate::words::instructions;

/// Whether instructions of opcode `op` have a result type as their first operand (from the
/// SPIR-V grammar, tabulated once).
pub(crate) fn has_result_type(op: u32) -> bool {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Vec<bool>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = vec![false; 1 << 16];
        for inst in rspirv::grammar::INSTRUCTION_TABLE.iter() {
            let typed = inst
                .operands
                .first()
                .is_some_and(|o| o.kind == rspirv::grammar::OperandKind::IdResultType);
            t[inst.opcode as usize] = typed;
        }
        t
    });
    table.get(op as usize).copied().unwrap_or(false)
}

/// `words` with every scalar-condition `OpSelect` on vectors given a splatted vector condition.
pub(crate) fn splat_select_conditions(words: &[u32]) -> Vec<u32> {
    let insts = instructions(words);
    let mut bool_type: Option<(u32, usize)> = None;
    let mut vectors: HashMap<(u32, u32), u32> = HashMap::new();
    let mut vector_sizes: HashMap<u32, u32> = HashMap::new();
    let mut types: HashMap<u32, u32> = HashMap::new();
    let mut selects = Vec::new();
    for inst in &insts {
        let w = inst.words;
        match Op::from_u32(inst.op) {
            Some(Op::TypeBool) if w.len() == 2 => bool_type = Some((w[1], inst.at + w.len())),
            Some(Op::TypeVector) if w.len() == 4 => {
                vectors.insert((w[2], w[3]), w[1]);
                vector_sizes.insert(w[1], w[3]);
            }
            Some(Op::Select) if w.len() == 6 => selects.push(inst.at),
            _ => {}
        }
        if w.len() >= 3 && has_result_type(inst.op) {
            types.insert(w[2], w[1]);
        }
    }
    let Some((bool_id, after_bool)) = bool_type else {
        return words.to_vec();
    };
    // The selects to repair, with their width.
    let repairs: Vec<(usize, u32)> = selects
        .into_iter()
        .filter_map(|at| {
            let width = *vector_sizes.get(&words[at + 1])?;
            (types.get(&words[at + 3]) == Some(&bool_id)).then_some((at, width))
        })
        .collect();
    if repairs.is_empty() {
        return words.to_vec();
    }
    let mut bound = words[3];
    let mut new_types = Vec::new();
    let mut splats: HashMap<usize, Vec<u32>> = HashMap::new();
    for &(at, width) in &repairs {
        let ty = match vectors.get(&(bool_id, width)) {
            Some(&ty) => ty,
            None => {
                let ty = bound;
                bound += 1;
                new_types.extend([(4 << 16) | Op::TypeVector as u32, ty, bool_id, width]);
                vectors.insert((bool_id, width), ty);
                ty
            }
        };
        let id = bound;
        bound += 1;
        let mut splat = vec![((3 + width) << 16) | Op::CompositeConstruct as u32, ty, id];
        splat.extend(std::iter::repeat_n(words[at + 3], width as usize));
        splats.insert(at, splat);
    }
    let mut out = Vec::with_capacity(words.len() + new_types.len() + 8 * repairs.len());
    out.extend_from_slice(&words[..HEADER_WORDS]);
    out[3] = bound;
    let mut at = HEADER_WORDS;
    for inst in &insts {
        if inst.at == after_bool {
            out.extend_from_slice(&new_types);
        }
        if let Some(splat) = splats.get(&inst.at) {
            out.extend_from_slice(splat);
            out.extend_from_slice(inst.words);
            let cond = out.len() - inst.words.len() + 3;
            out[cond] = splat[2];
        } else {
            out.extend_from_slice(inst.words);
        }
        at = inst.at + inst.words.len();
    }
    if at == after_bool {
        out.extend_from_slice(&new_types);
    }
    out.extend_from_slice(&words[at..]);
    out
}

/// `words` with every `OpSwitch` on a bool selector turned into an `OpBranchConditional`.
pub(crate) fn branch_on_bool_switches(words: &[u32]) -> Vec<u32> {
    let insts = instructions(words);
    let Some(bool_id) = insts
        .iter()
        .find(|i| i.op == Op::TypeBool as u32 && i.words.len() == 2)
        .map(|i| i.words[1])
    else {
        return words.to_vec();
    };
    let bool_values: std::collections::HashSet<u32> = insts
        .iter()
        .filter(|i| i.words.len() >= 3 && has_result_type(i.op) && i.words[1] == bool_id)
        .map(|i| i.words[2])
        .collect();
    let is_bool_switch = |w: &[u32]| {
        w[0] & 0xffff == Op::Switch as u32
            && w.len() >= 3
            && (w.len() - 3).is_multiple_of(2)
            && bool_values.contains(&w[1])
    };
    if !insts.iter().any(|i| is_bool_switch(i.words)) {
        return words.to_vec();
    }
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..HEADER_WORDS]);
    let mut end = HEADER_WORDS;
    for inst in &insts {
        let w = inst.words;
        if is_bool_switch(w) {
            let target = |value: u32| {
                w[3..]
                    .chunks_exact(2)
                    .find(|case| case[0] == value)
                    .map_or(w[2], |case| case[1])
            };
            out.extend([
                (4 << 16) | Op::BranchConditional as u32,
                w[1],
                target(1),
                target(0),
            ]);
        } else {
            out.extend_from_slice(w);
        }
        end = inst.at + w.len();
    }
    out.extend_from_slice(&words[end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar_knows_result_types() {
        assert!(has_result_type(Op::Select as u32));
        assert!(has_result_type(Op::FAdd as u32));
        assert!(!has_result_type(Op::Store as u32));
        assert!(!has_result_type(Op::TypeVector as u32));
        assert!(!has_result_type(0xffff));
    }
}
