//! Hints of `SPV_INTEL_memory_access_aliasing`, which Intel's DPC++ writes into every
//! `dpnp.tensor` elementwise kernel: module-scope alias domain, scope and scope-list
//! declarations (`OpAliasDomainDeclINTEL`, `OpAliasScopeDeclINTEL`,
//! `OpAliasScopeListDeclINTEL`), `AliasScopeINTEL`/`NoAliasINTEL` decorations naming those lists
//! on accesses and calls, and `AliasScopeINTELMask`/`NoAliasINTELMask` memory operands. They say
//! which accesses do not overlap, which a compiler may use but never needs: codegen keeps every
//! access in program order anyway. The word scan (`locations::scan`) takes them out before
//! rspirv sees the module, so neither the validator nor codegen nor the linker (whose output is
//! parsed again) meets an id with no value; the capability and extension stay, accepted.

use spirv::{Decoration, Op};

/// Memory-operand mask bits with the number of parameter words each adds, in the order their
/// parameters follow the mask (SPIR-V 3.26 Memory Operands).
const MASK_PARAMETERS: [(u32, usize); 5] = [
    (0x2, 1),      // Aligned: a literal
    (0x8, 1),      // MakePointerAvailable: a scope id
    (0x10, 1),     // MakePointerVisible: a scope id
    (0x1_0000, 1), // AliasScopeINTELMask: a scope-list id
    (0x2_0000, 1), // NoAliasINTELMask: a scope-list id
];

/// The bits the scan removes.
const ALIAS_BITS: u32 = 0x1_0000 | 0x2_0000;

/// Every bit a memory-operand mask may hold (those with no parameter: Volatile, Nontemporal,
/// NonPrivatePointer).
const KNOWN_BITS: u32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20 | ALIAS_BITS;

/// Whether the module-scope instruction of opcode `op` is an alias declaration.
pub(crate) fn is_alias_declaration(op: Option<Op>) -> bool {
    matches!(
        op,
        Some(Op::AliasDomainDeclINTEL | Op::AliasScopeDeclINTEL | Op::AliasScopeListDeclINTEL)
    )
}

/// Whether `inst` (its words) decorates something with an alias scope list.
pub(crate) fn is_alias_decoration(inst: &[u32]) -> bool {
    let op = inst[0] & 0xffff;
    (op == Op::Decorate as u32 || op == Op::DecorateId as u32)
        && inst.len() >= 3
        && (inst[2] == Decoration::AliasScopeINTEL as u32
            || inst[2] == Decoration::NoAliasINTEL as u32)
}

/// `inst` (its words) without its alias memory operands, when it is a load, store or copy that
/// has some; None otherwise (also when a mask holds a bit this table does not know: the parser
/// then reports the instruction as it is).
pub(crate) fn without_alias_operands(inst: &[u32]) -> Option<Vec<u32>> {
    // Word index of the first mask: after the result type and id of a load, the two pointers
    // of a store or copy, and the size of a sized copy. Copies may have a second mask (the
    // source's, SPIR-V 1.4).
    let (first, masks) = match Op::from_u32(inst[0] & 0xffff)? {
        Op::Load => (4, 1),
        Op::Store => (3, 1),
        Op::CopyMemory => (3, 2),
        Op::CopyMemorySized => (4, 2),
        _ => return None,
    };
    let mut out = inst.get(..first)?.to_vec();
    let mut at = first;
    let mut changed = false;
    for _ in 0..masks {
        let Some(&mask) = inst.get(at) else { break };
        if mask & !KNOWN_BITS != 0 {
            return None;
        }
        out.push(mask & !ALIAS_BITS);
        at += 1;
        for (bit, words) in MASK_PARAMETERS {
            if mask & bit == 0 {
                continue;
            }
            let parameters = inst.get(at..at + words)?;
            if bit & ALIAS_BITS == 0 {
                out.extend_from_slice(parameters);
            }
            at += words;
        }
        changed |= mask & ALIAS_BITS != 0;
    }
    if !changed || at != inst.len() {
        return None;
    }
    out[0] = ((out.len() as u32) << 16) | (inst[0] & 0xffff);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(op: Op, len: usize) -> u32 {
        ((len as u32) << 16) | op as u32
    }

    #[test]
    fn alias_operands_come_out_and_the_rest_stays() {
        // OpLoad %t %r %p Aligned|AliasScopeINTELMask 4 %list
        let load = [word(Op::Load, 7), 1, 2, 3, 0x1_0002, 4, 9];
        assert_eq!(
            without_alias_operands(&load),
            Some(vec![word(Op::Load, 6), 1, 2, 3, 0x2, 4])
        );
        // OpStore %p %v NoAliasINTELMask %list
        let store = [word(Op::Store, 5), 3, 4, 0x2_0000, 9];
        assert_eq!(
            without_alias_operands(&store),
            Some(vec![word(Op::Store, 4), 3, 4, 0])
        );
        // OpCopyMemory with both masks: Volatile|AliasScope %a, then NoAlias|Aligned 8 %b.
        let copy = [word(Op::CopyMemory, 8), 3, 4, 0x1_0001, 9, 0x2_0002, 8, 10];
        assert_eq!(
            without_alias_operands(&copy),
            Some(vec![word(Op::CopyMemory, 6), 3, 4, 0x1, 0x2, 8])
        );
        // Nothing to take out, an unknown bit, or operands that do not match the mask: as is.
        assert_eq!(
            without_alias_operands(&[word(Op::Load, 5), 1, 2, 3, 0x2]),
            None
        );
        assert_eq!(
            without_alias_operands(&[word(Op::Load, 6), 1, 2, 3, 0x4_0000, 9]),
            None
        );
        assert_eq!(
            without_alias_operands(&[word(Op::Load, 5), 1, 2, 3, 0x1_0000]),
            None
        );
        assert_eq!(
            without_alias_operands(&[word(Op::IAdd, 5), 1, 2, 3, 0x1_0000]),
            None
        );
    }

    #[test]
    fn alias_decorations_are_recognised() {
        let scope = [
            word(Op::Decorate, 4),
            5,
            Decoration::AliasScopeINTEL as u32,
            9,
        ];
        let no_alias = [
            word(Op::DecorateId, 4),
            5,
            Decoration::NoAliasINTEL as u32,
            9,
        ];
        let aligned = [word(Op::Decorate, 4), 5, Decoration::Alignment as u32, 4];
        assert!(is_alias_decoration(&scope));
        assert!(is_alias_decoration(&no_alias));
        assert!(!is_alias_decoration(&aligned));
    }
}
