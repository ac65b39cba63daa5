//! A SPIR-V module as its word stream, for the passes that edit a module without loading it:
//! specialisation (specialize.rs), the legacy forms taken as what they meant (legacy.rs), the
//! repairs of llvm-spirv-15's output (the OpenCL C driver's
//! translator_fixes.rs, in ferrocl-opencl-c), and the `OpModuleProcessed` records
//! the driver adds to carry what SPIR-V has no place for (an unsigned `vec_type_hint`, a
//! program binary's type).

use spirv::Op;

pub use crate::locations::{literal_string, HEADER_WORDS};

/// One instruction in the word stream.
pub struct Inst<'a> {
    pub at: usize,
    pub op: u32,
    pub words: &'a [u32],
}

/// The instructions after the header, up to the first malformed one (the frontend's scanner
/// reports that precisely when the module is built; nothing after it can be trusted here).
pub fn instructions(words: &[u32]) -> Vec<Inst<'_>> {
    let mut out = Vec::new();
    let mut at = HEADER_WORDS;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            break;
        }
        out.push(Inst {
            at,
            op: words[at] & 0xffff,
            words: &words[at..at + count],
        });
        at += count;
    }
    out
}

/// Whether instructions of opcode `op` have a result type as their first operand (from the
/// SPIR-V grammar, tabulated once).
pub fn has_result_type(op: u32) -> bool {
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

/// The sections before `OpModuleProcessed`'s place (SPIR-V 2.4: capabilities, extensions,
/// imports, memory model, entry points, execution modes, then the debug strings, sources and
/// names); a new record goes after the last of them.
const BEFORE_RECORD: &[Op] = &[
    Op::Capability,
    Op::Extension,
    Op::ExtInstImport,
    Op::MemoryModel,
    Op::EntryPoint,
    Op::ExecutionMode,
    Op::ExecutionModeId,
    Op::String,
    Op::SourceExtension,
    Op::Source,
    Op::SourceContinued,
    Op::Name,
    Op::MemberName,
    Op::ModuleProcessed,
];

/// The strings of the module's `OpModuleProcessed` instructions.
pub fn module_processed(words: &[u32]) -> Vec<String> {
    instructions(words)
        .iter()
        .filter(|i| i.op == Op::ModuleProcessed as u32)
        .map(|i| literal_string(&i.words[1..]))
        .collect()
}

/// SPIR-V 1.1, the first version with `OpModuleProcessed`, as a header version word.
const VERSION_1_1: u32 = 0x0001_0100;

/// `words` with one more `OpModuleProcessed text`, after the debug names. A SPIR-V 1.0 module
/// becomes 1.1, the version that has the instruction (spirv-val refuses it in 1.0), which
/// changes nothing else: 1.1 only adds to 1.0.
pub fn with_module_processed(words: &[u32], text: &str) -> Vec<u32> {
    let at = instructions(words)
        .iter()
        .find(|i| !BEFORE_RECORD.iter().any(|&op| op as u32 == i.op))
        .map_or(words.len(), |i| i.at);
    let mut literal = text.as_bytes().to_vec();
    literal.push(0);
    literal.resize(literal.len().next_multiple_of(4), 0);
    let mut out = words[..at].to_vec();
    out.push((((1 + literal.len() / 4) as u32) << 16) | Op::ModuleProcessed as u32);
    out.extend(
        literal
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    out.extend_from_slice(&words[at..]);
    if out.len() > 1 && out[1] < VERSION_1_1 {
        out[1] = VERSION_1_1;
    }
    out
}

/// `words` without the `OpModuleProcessed` instructions whose string starts with `prefix`.
/// Words after a malformed instruction are kept as they are, for the frontend to report.
pub fn without_module_processed(words: &[u32], prefix: &str) -> Vec<u32> {
    let insts = instructions(words);
    let end = insts.last().map_or(HEADER_WORDS, |i| i.at + i.words.len());
    let mut out = words[..HEADER_WORDS.min(words.len())].to_vec();
    for i in &insts {
        let record =
            i.op == Op::ModuleProcessed as u32 && literal_string(&i.words[1..]).starts_with(prefix);
        if !record {
            out.extend_from_slice(i.words);
        }
    }
    out.extend_from_slice(&words[end.min(words.len())..]);
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

    /// Header, OpCapability Addresses, OpName %1 "x", OpDecorate %1 Alignment 4, OpNop.
    fn module() -> Vec<u32> {
        vec![
            0x0723_0203,
            0x0001_0000,
            0,
            10,
            0,
            (2 << 16) | Op::Capability as u32,
            4,
            (3 << 16) | Op::Name as u32,
            1,
            u32::from_le_bytes(*b"x\0\0\0"),
            (4 << 16) | Op::Decorate as u32,
            1,
            44,
            4,
            1 << 16,
        ]
    }

    #[test]
    fn records_go_after_the_names_and_come_out_again() {
        let m = module();
        let with = with_module_processed(&with_module_processed(&m, "a: 1"), "b: 22");
        let ops: Vec<u32> = instructions(&with).iter().map(|i| i.op).collect();
        let processed = Op::ModuleProcessed as u32;
        assert_eq!(
            ops,
            [
                Op::Capability as u32,
                Op::Name as u32,
                processed,
                processed,
                Op::Decorate as u32,
                Op::Nop as u32
            ]
        );
        assert_eq!(module_processed(&with), ["a: 1", "b: 22"]);
        assert_eq!(
            module_processed(&without_module_processed(&with, "a:")),
            ["b: 22"]
        );
        // The records need SPIR-V 1.1: the 1.0 module became 1.1, and stays so without them.
        assert_eq!(with[1], 0x0001_0100);
        let mut as_1_1 = m.clone();
        as_1_1[1] = 0x0001_0100;
        assert_eq!(
            without_module_processed(&without_module_processed(&with, "a:"), "b:"),
            as_1_1
        );
        // Newer modules keep their version.
        let mut m14 = m;
        m14[1] = 0x0001_0400;
        assert_eq!(with_module_processed(&m14, "c")[1], 0x0001_0400);
    }
}
