//! Where each instruction sits in the binary: one pass over the words before rspirv (word counts
//! inside the buffer, module-scope debug-info instructions set aside), then a pairing of rspirv's
//! sectioned `dr::Module` with those offsets, so every diagnostic can give a word offset and,
//! where the module has `OpLine`, a source file and line.

use std::collections::{HashMap, HashSet};

use rspirv::dr;
use rspirv::grammar::reflect;
use spirv::{Op, Word};

use crate::diagnostics::FrontendError;

/// The words of a module's header: magic, version, generator, id bound, schema.
pub const HEADER_WORDS: usize = 5;

/// The result of the pre-pass over the words.
pub(crate) struct Scan {
    /// The words rspirv loads: the header and every instruction except the module-scope
    /// `OpExtInst`s of debug/non-semantic sets (rspirv refuses instructions outside blocks)
    /// and the alias hints of `SPV_INTEL_memory_access_aliasing` (hints.rs).
    pub words: Vec<u32>,
    /// Original word offset and opcode of each instruction kept in `words`, in order.
    pub kept: Vec<(usize, u16)>,
    /// Result ids of the module-scope debug instructions set aside: in-function debug
    /// instructions refer to them, so they count as defined.
    pub debug_ids: HashSet<Word>,
}

/// Checks that every instruction's word count is non-zero and stays inside the buffer, and sets
/// aside module-scope debug-info `OpExtInst`s (OpenCL.DebugInfo.100, NonSemantic.*), which carry
/// no semantics (env 3.8: such modules must be accepted), and takes out the alias hints of
/// `SPV_INTEL_memory_access_aliasing` (declarations, decorations, memory operands: hints.rs).
///
/// `origins`, when the words were rewritten (llvm_intrinsics.rs), holds each instruction's word
/// offset in the module as given, which diagnostics report.
pub(crate) fn scan(words: &[u32], origins: Option<&[usize]>) -> Result<Scan, FrontendError> {
    let mut out = Scan {
        words: Vec::with_capacity(words.len()),
        kept: Vec::new(),
        debug_ids: HashSet::new(),
    };
    out.words.extend_from_slice(&words[..HEADER_WORDS]);
    let mut debug_sets: HashSet<Word> = HashSet::new();
    let mut in_function = false;
    let mut at = HEADER_WORDS;
    let mut index = 0;
    while at < words.len() {
        let given = origins.and_then(|o| o.get(index)).copied().unwrap_or(at);
        index += 1;
        let count = (words[at] >> 16) as usize;
        let opcode = (words[at] & 0xffff) as u16;
        if count == 0 {
            return Err(header_problem(
                format!("SPIR-V 2.3: instruction (opcode {opcode}) has word count 0"),
                given,
            ));
        }
        if at + count > words.len() {
            return Err(header_problem(
                format!(
                    "SPIR-V 2.3: instruction (opcode {opcode}) has word count {count}, past the end of the module ({} words)",
                    words.len()
                ),
                given,
            ));
        }
        let inst = &words[at..at + count];
        let op = Op::from_u32(u32::from(opcode));
        if let Some(start) = op.and_then(string_operand) {
            // rspirv's string decoding does not stop at the instruction's end.
            let terminated = inst
                .get(start..)
                .is_some_and(|w| w.iter().any(|w| w.to_le_bytes().contains(&0)));
            if !terminated {
                return Err(header_problem(
                    format!(
                        "SPIR-V 2.2.1: the literal string of Op{:?} is not NUL-terminated inside the instruction",
                        op.unwrap_or(Op::Nop)
                    ),
                    given,
                ));
            }
        }
        match op {
            Some(Op::ExtInstImport) if count >= 3 => {
                let name = literal_string(&inst[2..]);
                if name.starts_with("NonSemantic.") || name == "OpenCL.DebugInfo.100" {
                    debug_sets.insert(inst[1]);
                }
            }
            Some(Op::Function) => in_function = true,
            Some(Op::FunctionEnd) => in_function = false,
            Some(Op::ExtInst) if !in_function && count >= 5 && debug_sets.contains(&inst[3]) => {
                out.debug_ids.insert(inst[2]);
                at += count;
                continue;
            }
            op if (crate::hints::is_alias_declaration(op) && !in_function)
                || crate::hints::is_alias_decoration(inst) =>
            {
                at += count;
                continue;
            }
            _ => {}
        }
        if let Some(stripped) = crate::hints::without_alias_operands(inst) {
            out.words.extend(stripped);
            out.kept.push((given, opcode));
            at += count;
            continue;
        }
        out.words.extend_from_slice(inst);
        out.kept.push((given, opcode));
        at += count;
    }
    Ok(out)
}

/// Word index (within the instruction) of the first literal string of instructions that have
/// one in a fixed place.
fn string_operand(op: Op) -> Option<usize> {
    Some(match op {
        Op::Extension | Op::SourceExtension | Op::ModuleProcessed => 1,
        Op::ExtInstImport | Op::String | Op::Name => 2,
        Op::MemberName | Op::EntryPoint => 3,
        _ => return None,
    })
}

pub(crate) fn header_problem(rule: String, at: usize) -> FrontendError {
    FrontendError::Invalid(vec![crate::diagnostics::Diagnostic {
        rule,
        instruction: String::new(),
        word_offset: Some(at),
        source_name: None,
        source_line: None,
    }])
}

/// A literal string's bytes up to its NUL (or the end of the words if unterminated).
pub fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Where one instruction is: its word offset, and the `OpLine` in effect (file string id, line).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Loc {
    pub offset: usize,
    pub line: Option<(Word, u32)>,
}

/// Instruction → location. Keys are the addresses of the instructions inside the vectors of
/// the `dr::Module` (heap storage that stays put: the frontend never mutates the module after
/// parsing). `OpMemoryModel` lives inline in `dr::Module`, which moves, so it is kept apart.
#[derive(Clone, Default)]
pub(crate) struct Locations {
    pub by_address: HashMap<usize, Loc>,
    pub memory_model: Option<Loc>,
}

impl Locations {
    pub fn get(&self, inst: &dr::Instruction) -> Option<&Loc> {
        if inst.class.opcode == Op::MemoryModel {
            return self.memory_model.as_ref();
        }
        self.by_address.get(&key(inst))
    }
}

fn key(inst: &dr::Instruction) -> usize {
    inst as *const dr::Instruction as usize
}

/// Which `dr::Module` list rspirv's loader puts an instruction in (mirrors its routing).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Capabilities,
    Extensions,
    Imports,
    MemoryModel,
    EntryPoints,
    ExecutionModes,
    DebugStrings,
    Names,
    Processed,
    Annotations,
    Globals,
    Functions,
}

/// Pairs each instruction of `raw` with its offset in the original words. A section whose
/// instruction sequence does not match the scan (should not happen) gets no offsets rather than
/// wrong ones.
pub(crate) fn locate(raw: &dr::Module, kept: &[(usize, u16)]) -> Locations {
    use Section::*;
    let mut streams: HashMap<u8, Vec<(usize, u16)>> = HashMap::new();
    let (mut in_function, mut in_block) = (false, false);
    for &(offset, opcode) in kept {
        let Some(op) = Op::from_u32(u32::from(opcode)) else {
            continue;
        };
        let section = match op {
            Op::Capability => Capabilities,
            Op::Extension => Extensions,
            Op::ExtInstImport => Imports,
            Op::MemoryModel => MemoryModel,
            Op::EntryPoint => EntryPoints,
            Op::ExecutionMode => ExecutionModes,
            Op::String | Op::SourceExtension | Op::Source | Op::SourceContinued => DebugStrings,
            Op::Name | Op::MemberName => Names,
            Op::ModuleProcessed => Processed,
            op if reflect::is_location_debug(op) => {
                if in_block {
                    Functions
                } else {
                    Globals
                }
            }
            op if op.is_annotation() => Annotations,
            op if op.is_type() || op.is_constant() => Globals,
            Op::Variable | Op::Undef if !in_function => Globals,
            Op::Function => {
                in_function = true;
                Functions
            }
            Op::FunctionEnd => {
                in_function = false;
                Functions
            }
            Op::Label => {
                in_block = true;
                Functions
            }
            op if reflect::is_block_terminator(op) => {
                in_block = false;
                Functions
            }
            _ => Functions,
        };
        streams
            .entry(section as u8)
            .or_default()
            .push((offset, opcode));
    }
    let mut locs = HashMap::new();
    let mut pair = |section: Section, insts: Vec<&dr::Instruction>, lines: bool| {
        let stream = streams.remove(&(section as u8)).unwrap_or_default();
        // rspirv keeps only the last OpMemoryModel.
        let stream = if section == MemoryModel {
            stream.last().copied().into_iter().collect()
        } else {
            stream
        };
        if stream.len() != insts.len()
            || stream
                .iter()
                .zip(&insts)
                .any(|((_, op), inst)| *op as u32 != inst.class.opcode as u32)
        {
            return;
        }
        let mut line = None;
        for ((offset, _), inst) in stream.into_iter().zip(insts) {
            let op = inst.class.opcode;
            if lines {
                match op {
                    Op::Line => {
                        if let (
                            Some(dr::Operand::IdRef(file)),
                            Some(dr::Operand::LiteralBit32(l)),
                        ) = (inst.operands.first(), inst.operands.get(1))
                        {
                            line = Some((*file, *l));
                        }
                    }
                    Op::NoLine | Op::Function | Op::FunctionEnd => line = None,
                    _ => {}
                }
            }
            locs.insert(key(inst), Loc { offset, line });
            // An OpLine's scope ends with its block.
            if reflect::is_block_terminator(op) {
                line = None;
            }
        }
    };
    pair(Capabilities, raw.capabilities.iter().collect(), false);
    pair(Extensions, raw.extensions.iter().collect(), false);
    pair(Imports, raw.ext_inst_imports.iter().collect(), false);
    pair(MemoryModel, raw.memory_model.iter().collect(), false);
    pair(EntryPoints, raw.entry_points.iter().collect(), false);
    pair(ExecutionModes, raw.execution_modes.iter().collect(), false);
    pair(
        DebugStrings,
        raw.debug_string_source.iter().collect(),
        false,
    );
    pair(Names, raw.debug_names.iter().collect(), false);
    pair(
        Processed,
        raw.debug_module_processed.iter().collect(),
        false,
    );
    pair(Annotations, raw.annotations.iter().collect(), false);
    pair(Globals, raw.types_global_values.iter().collect(), false);
    let function_insts: Vec<&dr::Instruction> = raw
        .functions
        .iter()
        .flat_map(|f| {
            f.def
                .iter()
                .chain(&f.parameters)
                .chain(
                    f.blocks
                        .iter()
                        .flat_map(|b| b.label.iter().chain(&b.instructions)),
                )
                .chain(&f.end)
        })
        .collect();
    pair(Functions, function_insts, true);
    let memory_model = raw.memory_model.as_ref().and_then(|i| locs.remove(&key(i)));
    Locations {
        by_address: locs,
        memory_model,
    }
}
