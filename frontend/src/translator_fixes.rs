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
//!
//! Imports under a stand-in name: built-ins that llvm-spirv-15 would mistranslate by their
//! real name go through it under another (the `cl_khr_extended_async_copies` copies, see
//! `opencl_c.rs`); their `OpName` and `LinkageAttributes` get the real name back, so that the
//! module imports what any other compiler's module would.

use std::collections::HashMap;

use spirv::{Decoration, Op};

use crate::locations::{literal_string, HEADER_WORDS};
use crate::words::{has_result_type, instructions};

/// `words` with both repairs applied, in one pass: every scalar-condition `OpSelect` on vectors
/// gets a splatted condition (its bool vector type added after `OpTypeBool` when missing), and
/// every `OpSwitch` on a bool becomes an `OpBranchConditional`. A module with neither comes
/// back unchanged.
pub(crate) fn repair_llvm_spirv_15(words: &[u32]) -> Vec<u32> {
    let insts = instructions(words);
    let mut bool_type: Option<(u32, usize)> = None;
    let mut vectors: HashMap<(u32, u32), u32> = HashMap::new();
    let mut vector_sizes: HashMap<u32, u32> = HashMap::new();
    let mut types: HashMap<u32, u32> = HashMap::new();
    for inst in &insts {
        let w = inst.words;
        match Op::from_u32(inst.op) {
            Some(Op::TypeBool) if w.len() == 2 => bool_type = Some((w[1], inst.at + w.len())),
            Some(Op::TypeVector) if w.len() == 4 => {
                vectors.insert((w[2], w[3]), w[1]);
                vector_sizes.insert(w[1], w[3]);
            }
            _ => {}
        }
        if w.len() >= 3 && has_result_type(inst.op) {
            types.insert(w[2], w[1]);
        }
    }
    let Some((bool_id, after_bool)) = bool_type else {
        return words.to_vec();
    };
    let is_bool = |id: u32| types.get(&id) == Some(&bool_id);
    // The width of a select to splat, if it is one.
    let splat_width = |w: &[u32]| {
        (w[0] & 0xffff == Op::Select as u32 && w.len() == 6 && is_bool(w[3]))
            .then(|| vector_sizes.get(&w[1]).copied())
            .flatten()
    };
    let is_bool_switch = |w: &[u32]| {
        w[0] & 0xffff == Op::Switch as u32
            && w.len() >= 3
            && (w.len() - 3).is_multiple_of(2)
            && is_bool(w[1])
    };
    if !insts
        .iter()
        .any(|i| splat_width(i.words).is_some() || is_bool_switch(i.words))
    {
        return words.to_vec();
    }
    let mut bound = words[3];
    let mut new_types = Vec::new();
    let mut out = Vec::with_capacity(words.len() + 16);
    out.extend_from_slice(&words[..HEADER_WORDS]);
    // Where the bool vector types go: right after OpTypeBool, before any use.
    let mut types_at = out.len();
    let mut end = HEADER_WORDS;
    for inst in &insts {
        let w = inst.words;
        if let Some(width) = splat_width(w) {
            let ty = *vectors.entry((bool_id, width)).or_insert_with(|| {
                new_types.extend([(4 << 16) | Op::TypeVector as u32, bound, bool_id, width]);
                bound += 1;
                bound - 1
            });
            let splat = bound;
            bound += 1;
            out.extend([
                ((3 + width) << 16) | Op::CompositeConstruct as u32,
                ty,
                splat,
            ]);
            out.extend(std::iter::repeat_n(w[3], width as usize));
            out.extend([w[0], w[1], w[2], splat, w[4], w[5]]);
        } else if is_bool_switch(w) {
            // To the case of literal 1 when true, of 0 when false, the default where missing.
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
        if end == after_bool {
            types_at = out.len();
        }
    }
    out.extend_from_slice(&words[end..]);
    out[3] = bound;
    out.splice(types_at..types_at, new_types);
    out
}

/// `words` with every `OpName` and `LinkageAttributes` string equal to a `from` of `renames`
/// replaced by its `to` (the instruction resized to the new string). A module naming none of
/// them comes back unchanged.
pub(crate) fn rename_imports(words: &[u32], renames: &[(String, String)]) -> Vec<u32> {
    let insts = instructions(words);
    // The string operand's word index in the instruction, when it has one of interest.
    let string_at = |w: &[u32]| -> Option<usize> {
        match Op::from_u32(w[0] & 0xffff) {
            Some(Op::Name) if w.len() >= 3 => Some(2),
            Some(Op::Decorate) if w.len() >= 4 && w[2] == Decoration::LinkageAttributes as u32 => {
                Some(3)
            }
            _ => None,
        }
    };
    let renamed = |w: &[u32]| -> Option<&str> {
        let at = string_at(w)?;
        let name = literal_string(&w[at..]);
        renames
            .iter()
            .find(|(from, _)| *from == name)
            .map(|(_, to)| to.as_str())
    };
    if !insts.iter().any(|i| renamed(i.words).is_some()) {
        return words.to_vec();
    }
    let end = insts.last().map_or(HEADER_WORDS, |i| i.at + i.words.len());
    let mut out = words[..HEADER_WORDS].to_vec();
    for inst in &insts {
        let w = inst.words;
        let Some(to) = renamed(w) else {
            out.extend_from_slice(w);
            continue;
        };
        let at = string_at(w).unwrap_or(w.len());
        let old_len = literal_string(&w[at..]).len() / 4 + 1;
        let mut literal = to.as_bytes().to_vec();
        literal.push(0);
        literal.resize(literal.len().next_multiple_of(4), 0);
        let mut new: Vec<u32> = w[..at].to_vec();
        new.extend(
            literal
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        new.extend_from_slice(&w[(at + old_len).min(w.len())..]);
        new[0] = ((new.len() as u32) << 16) | (w[0] & 0xffff);
        out.extend(new);
    }
    out.extend_from_slice(&words[end..]);
    out
}
