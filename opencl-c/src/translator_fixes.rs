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
//! `OpPhi` naming one parent more than once: LLVM's phi has an entry per CFG edge, so a
//! `switch` whose several cases go straight to one block (instcombine and simplifycfg make
//! them of cases that only pick a value already computed, as darktable's blendop.cl does)
//! lists the switch's block once per case, always with the same value, as LLVM requires.
//! llvm-spirv-15 copies the entries, while SPIR-V wants exactly one per parent block (3.49.17,
//! OpPhi). The repeats of an earlier (value, parent) pair are dropped; a parent named with two
//! different values means nothing and is left for the validator to refuse.
//!
//! `OpLoopMerge` out of place: with an unroll hint (`__attribute__((opencl_unroll_hint(n)))`,
//! the CTS's `pragma_unroll` kernels) llvm-spirv-15 writes `OpLoopMerge %b %b` for a loop whose
//! body is its latch, while SPIR-V wants the merge block and the continue target different, and
//! for `do`/`while` loops puts it before other instructions of its block, while it must come
//! right before the block's branch (2.16.2, structured control flow). A kernel module needs no
//! structured control flow, so such an instruction, a hint, is dropped; the loop stays as its
//! branches make it.
//!
//! Imports under a stand-in name: built-ins that llvm-spirv-15 would mistranslate by their
//! real name go through it under another (the `cl_khr_extended_async_copies` copies, see
//! `opencl_c.rs`); their `OpName` and `LinkageAttributes` get the real name back, so that the
//! module imports what any other compiler's module would.

use std::collections::{HashMap, HashSet};

use spirv::{Decoration, Op};

use ferrocl_frontend::words::{has_result_type, instructions, literal_string, HEADER_WORDS};

/// `words` with the four repairs applied, in one pass: every scalar-condition `OpSelect` on
/// vectors gets a splatted condition (its bool vector type added after `OpTypeBool` when
/// missing), every `OpSwitch` on a bool becomes an `OpBranchConditional`, every `OpPhi`
/// loses its repeated (value, parent) pairs, and every `OpLoopMerge` merging into its own
/// continue target or not right before a branch goes. A module with none of them comes back
/// unchanged.
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
    let bool_id = bool_type.map(|(id, _)| id);
    let after_bool = bool_type.map(|(_, at)| at);
    let is_bool = |id: u32| bool_id.is_some_and(|b| types.get(&id) == Some(&b));
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
    // The `OpLoopMerge` at `index` that spirv-val would refuse.
    let is_bad_merge = |index: usize| {
        let w = insts[index].words;
        let next = insts.get(index + 1).and_then(|i| Op::from_u32(i.op));
        w[0] & 0xffff == Op::LoopMerge as u32
            && w.len() >= 4
            && (w[1] == w[2] || !matches!(next, Some(Op::Branch | Op::BranchConditional)))
    };
    if !insts.iter().enumerate().any(|(index, i)| {
        splat_width(i.words).is_some()
            || is_bool_switch(i.words)
            || phi_without_repeats(i.words).is_some()
            || is_bad_merge(index)
    }) {
        return words.to_vec();
    }
    let mut bound = words[3];
    let mut new_types = Vec::new();
    let mut out = Vec::with_capacity(words.len() + 16);
    out.extend_from_slice(&words[..HEADER_WORDS]);
    // Where the bool vector types go: right after OpTypeBool, before any use.
    let mut types_at = out.len();
    let mut end = HEADER_WORDS;
    for (index, inst) in insts.iter().enumerate() {
        let w = inst.words;
        if let (Some(width), Some(bool_id)) = (splat_width(w), bool_id) {
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
        } else if let Some(phi) = phi_without_repeats(w) {
            out.extend(phi);
        } else if is_bad_merge(index) {
            // Dropped: a hint a kernel module does not need.
        } else {
            out.extend_from_slice(w);
        }
        end = inst.at + w.len();
        if Some(end) == after_bool {
            types_at = out.len();
        }
    }
    out.extend_from_slice(&words[end..]);
    out[3] = bound;
    out.splice(types_at..types_at, new_types);
    out
}

/// The `OpPhi` `w` with each (value, parent) pair kept once, in its first place, when it
/// repeats one; None for any other instruction.
fn phi_without_repeats(w: &[u32]) -> Option<Vec<u32>> {
    if w[0] & 0xffff != Op::Phi as u32 || w.len() < 3 || !(w.len() - 3).is_multiple_of(2) {
        return None;
    }
    let mut seen = HashSet::new();
    let kept: Vec<&[u32]> = w[3..]
        .chunks_exact(2)
        .filter(|pair| seen.insert((pair[0], pair[1])))
        .collect();
    if 3 + 2 * kept.len() == w.len() {
        return None;
    }
    let mut phi = vec![
        (((3 + 2 * kept.len()) as u32) << 16) | Op::Phi as u32,
        w[1],
        w[2],
    ];
    phi.extend(kept.concat());
    Some(phi)
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

#[cfg(test)]
mod tests {
    use rspirv::binary::Assemble;
    use rspirv::dr::{Builder, Operand};
    use spirv::{AddressingModel, Capability, ExecutionModel, FunctionControl, MemoryModel};
    use spirv::{Op, StorageClass};

    use super::repair_llvm_spirv_15;
    use ferrocl_frontend::words::instructions;

    /// `kernel void k(global uint *out, uint sel)` as llvm-spirv-15 writes a switch whose cases
    /// 0, 1 and 2 branch straight to the merge block: its phi names the switch's block once per
    /// case, with the values `repeated` gives (the default comes through a block of its own).
    fn switch_module(repeated: [u32; 3]) -> (Vec<u32>, u32) {
        let mut b = Builder::new();
        b.set_version(1, 0);
        b.capability(Capability::Addresses);
        b.capability(Capability::Kernel);
        b.capability(Capability::Int64);
        b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
        let void = b.type_void();
        let uint = b.type_int(32, 0);
        let ptr = b.type_pointer(None, StorageClass::CrossWorkgroup, uint);
        let fn_ty = b.type_function(void, vec![ptr, uint]);
        let seven = b.constant_bit32(uint, 7);
        let nine = b.constant_bit32(uint, 9);
        let k = b
            .begin_function(void, None, FunctionControl::NONE, fn_ty)
            .unwrap();
        let out = b.function_parameter(ptr).unwrap();
        let sel = b.function_parameter(uint).unwrap();
        let (entry, default, merge) = (b.id(), b.id(), b.id());
        b.begin_block(Some(entry)).unwrap();
        let cases = (0..3).map(|n| (Operand::LiteralBit32(n), merge));
        b.switch(sel, default, cases).unwrap();
        b.begin_block(Some(default)).unwrap();
        b.branch(merge).unwrap();
        b.begin_block(Some(merge)).unwrap();
        let value = |v: u32| [sel, seven, nine][v as usize];
        let mut incoming = vec![(seven, default)];
        incoming.extend(repeated.iter().map(|&v| (value(v), entry)));
        let phi = b.phi(uint, None, incoming).unwrap();
        b.store(out, phi, None, []).unwrap();
        b.ret().unwrap();
        b.end_function().unwrap();
        b.entry_point(ExecutionModel::Kernel, k, "k", []);
        (b.module().assemble(), entry)
    }

    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// The frontend's log for `words`, which it must refuse.
    fn refusal(words: &[u32]) -> String {
        match ferrocl_frontend::parse(&bytes(words)) {
            Ok(_) => panic!("the module was accepted"),
            Err(e) => e.log(),
        }
    }

    fn phi_operands(words: &[u32]) -> Vec<u32> {
        let insts = instructions(words);
        let phi = insts.iter().find(|i| i.op == Op::Phi as u32).unwrap();
        phi.words[3..].to_vec()
    }

    #[test]
    fn a_phi_keeps_one_entry_for_a_parent_named_with_one_value_repeatedly() {
        let (words, entry) = switch_module([0, 0, 0]);
        let log = refusal(&words);
        assert!(log.contains("OpPhi names parent"), "{log}");
        let repaired = repair_llvm_spirv_15(&words);
        let kept = phi_operands(&repaired);
        assert_eq!(kept.len(), 4, "{kept:?}");
        assert_eq!(kept[3], entry);
        assert_eq!(repaired.len(), words.len() - 4);
        if let Err(e) = ferrocl_frontend::parse(&bytes(&repaired)) {
            panic!("{}", e.log());
        }
        // Nothing left to repair: the same words again.
        assert_eq!(repair_llvm_spirv_15(&repaired), repaired);
    }

    #[test]
    fn a_phi_naming_a_parent_with_two_values_stays_refused() {
        // The first and third entries for the switch's block agree and merge; the second
        // differs, which no repair can decide.
        let (words, _) = switch_module([0, 1, 0]);
        let repaired = repair_llvm_spirv_15(&words);
        assert_eq!(phi_operands(&repaired).len(), 6);
        let log = refusal(&repaired);
        assert!(log.contains("OpPhi names parent"), "{log}");
    }
}
