//! Forms that older SPIR-V generators wrote and that the OpenCL environment rules no longer
//! allow, taken as what they meant before the module is parsed: each one accepted leaves a
//! warning for the build log. Only forms real generators produced are here; everything else
//! still meets the validator.
//!
//! Built-in variables in `UniformConstant`: the Khronos LLVM/SPIR-V translator of the
//! SPIR-V 1.0 era (generator 14) declared `GlobalInvocationId` and its kin as
//! `UniformConstant` variables (with a `Constant` decoration), where env 2.9 asks for `Input`;
//! `spirv-val --target-env opencl2.1` accepts both, and such modules ship in test data of
//! widely used bindings. The edit keeps every instruction's length, so word offsets in later
//! diagnostics stay those of the module as given.

use std::collections::{HashMap, HashSet};

use spirv::{BuiltIn, Op, StorageClass, Word};

use crate::words::{has_result_type, instructions};

/// A warning for the build log (one line, without the trailing newline).
pub type Warning = String;

/// Access chains: their result points into their base (the second id operand).
const ACCESS_CHAINS: [Op; 4] = [
    Op::AccessChain,
    Op::InBoundsAccessChain,
    Op::PtrAccessChain,
    Op::InBoundsPtrAccessChain,
];

/// Type declarations, whose id operands name other types.
const TYPE_DECLARATIONS: [Op; 6] = [
    Op::TypeFunction,
    Op::TypeStruct,
    Op::TypeArray,
    Op::TypeRuntimeArray,
    Op::TypePointer,
    Op::TypeForwardPointer,
];

/// Rewrites built-in variables declared in `UniformConstant` to `Input`, with the pointer
/// types they and the access chains into them use, when those pointer types serve nothing
/// else (otherwise the module is left as it is and the validator reports the variable).
pub(crate) fn builtins_as_input(mut words: Vec<u32>) -> (Vec<u32>, Vec<Warning>) {
    let insts = instructions(&words);
    let mut builtins: HashMap<Word, BuiltIn> = HashMap::new();
    let mut names: HashMap<Word, String> = HashMap::new();
    // Pointer type id → (offset of its OpTypePointer, storage class).
    let mut pointers: HashMap<Word, (usize, u32)> = HashMap::new();
    for inst in &insts {
        let w = inst.words;
        match Op::from_u32(inst.op) {
            Some(Op::Decorate) if w.len() >= 4 && w[2] == spirv::Decoration::BuiltIn as u32 => {
                if let Some(b) = BuiltIn::from_u32(w[3]) {
                    builtins.insert(w[1], b);
                }
            }
            Some(Op::Name) if w.len() >= 3 => {
                names.insert(w[1], crate::locations::literal_string(&w[2..]));
            }
            Some(Op::TypePointer) if w.len() == 4 => {
                pointers.insert(w[1], (inst.at, w[2]));
            }
            _ => {}
        }
    }
    let uniform_constant = StorageClass::UniformConstant as u32;
    // Built-in variables in UniformConstant: (offset of the OpVariable, id, built-in).
    let mut legacy = Vec::new();
    // Ids derived from them (the variables and access chains into them) and their types.
    let mut derived: HashSet<Word> = HashSet::new();
    let mut types: HashSet<Word> = HashSet::new();
    for inst in &insts {
        let w = inst.words;
        let op = Op::from_u32(inst.op);
        if op == Some(Op::Variable) && w.len() >= 4 && w[3] == uniform_constant {
            if let Some(&b) = builtins.get(&w[2]) {
                legacy.push((inst.at, w[2], b));
                derived.insert(w[2]);
                types.insert(w[1]);
            }
        } else if op.is_some_and(|op| ACCESS_CHAINS.contains(&op))
            && w.len() >= 4
            && derived.contains(&w[3])
        {
            derived.insert(w[2]);
            types.insert(w[1]);
        }
    }
    if legacy.is_empty() {
        return (words, Vec::new());
    }
    // The pointer types must be UniformConstant ones that nothing but the derived ids uses.
    let shared = types.iter().any(|t| {
        pointers.get(t).is_none_or(|&(_, s)| s != uniform_constant)
            || insts.iter().any(|inst| {
                let w = inst.words;
                let Some(op) = Op::from_u32(inst.op) else {
                    return false;
                };
                if TYPE_DECLARATIONS.contains(&op) {
                    return w.len() > 2 && w[2..].contains(t);
                }
                // A value of that pointer type not derived from a built-in.
                w.len() >= 3 && has_result_type(inst.op) && w[1] == *t && !derived.contains(&w[2])
            })
    });
    if shared {
        return (words, Vec::new());
    }
    let input = StorageClass::Input as u32;
    for t in &types {
        let (at, _) = pointers[t];
        words[at + 2] = input;
    }
    let warnings = legacy
        .iter()
        .map(|&(at, id, builtin)| {
            words[at + 3] = input;
            let name = names
                .get(&id)
                .map(|n| format!(" (source name '{n}')"))
                .unwrap_or_default();
            format!(
                "warning: env 2.9: built-in variable {builtin:?} is in the UniformConstant \
                 storage class, as older SPIR-V generators wrote it; taken as Input \
                 [OpVariable %{id} at word {at}]{name}"
            )
        })
        .collect();
    (words, warnings)
}
