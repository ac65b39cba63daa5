//! Bytes → [`Module`]: header checks (magic, length, version, bound) before rspirv sees the
//! words, the word scan of `locations` (word counts, string terminators, debug-info set aside)
//! so rspirv's own panics are unreachable in practice, `catch_unwind` as the backstop, then the
//! type/name/decoration tables, validation and kernel metadata.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rspirv::binary::ParseState;
use rspirv::dr::{self, Operand};
use spirv::{Op, Word};

use crate::diagnostics::FrontendError;
use crate::locations::{header_problem, locate, scan, Scan, HEADER_WORDS};
use crate::metadata::extract_kernels;
use crate::module::{Module, Type};
use crate::specialize::{self, SpecConstantInfo};
use crate::validate::{validate, DeviceSupport};
use crate::SUPPORTED_SPIRV_VERSIONS;

const MAGIC: u32 = 0x0723_0203;

/// Cheap check used by `clCreateProgramWithIL`: are these bytes a SPIR-V module at all?
/// Returns the words in host byte order.
pub fn is_spirv(bytes: &[u8]) -> Result<Vec<u32>, FrontendError> {
    if bytes.is_empty() {
        return Err(FrontendError::NotSpirv("zero length".into()));
    }
    if !bytes.len().is_multiple_of(4) {
        return Err(FrontendError::NotSpirv(format!(
            "length {} is not a multiple of 4 bytes",
            bytes.len()
        )));
    }
    if bytes.len() < HEADER_WORDS * 4 {
        return Err(FrontendError::NotSpirv(format!(
            "{} bytes is shorter than the 20-byte header",
            bytes.len()
        )));
    }
    let first = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let swap = if first == MAGIC {
        false
    } else if first.swap_bytes() == MAGIC {
        true
    } else {
        return Err(FrontendError::NotSpirv(format!(
            "magic number {first:#010x} is not 0x07230203"
        )));
    };
    Ok(bytes
        .chunks_exact(4)
        .map(|c| {
            let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if swap {
                w.swap_bytes()
            } else {
                w
            }
        })
        .collect())
}

/// Parses and validates a module (specialization constants take their default values).
pub fn parse(bytes: &[u8]) -> Result<Module, FrontendError> {
    parse_specialized(bytes, &HashMap::new())
}

/// The specialization constants a module declares, for `clSetProgramSpecializationConstant`.
pub fn spec_constants(bytes: &[u8]) -> Result<Vec<SpecConstantInfo>, FrontendError> {
    let words = is_spirv(bytes)?;
    check_header(&words)?;
    Ok(specialize::spec_constants(&words))
}

/// Parses and validates a module after freezing its specialization constants: `values` maps a
/// `SpecId` to the little-endian bytes the application set; the others keep their defaults.
pub fn parse_specialized(
    bytes: &[u8],
    values: &HashMap<u32, Vec<u8>>,
) -> Result<Module, FrontendError> {
    parse_for_device(bytes, values, &DeviceSupport::IMPLEMENTED)
}

/// [`parse_specialized`] for a device that allows what `device` says (its feature table).
pub fn parse_for_device(
    bytes: &[u8],
    values: &HashMap<u32, Vec<u8>>,
    device: &DeviceSupport,
) -> Result<Module, FrontendError> {
    let words = is_spirv(bytes)?;
    let version = check_header(&words)?;
    let words = specialize::freeze(words, values)?;
    let words = execution_modes_by_value(words);
    let (words, warnings) = crate::legacy::builtins_as_input(words);
    let (words, origins) = match crate::llvm_intrinsics::resolve(&words) {
        Some((words, origins)) => (words, Some(origins)),
        None => (words, None),
    };
    let (words, origins) = match crate::bfloat16::lower(&words, origins.as_deref()) {
        Some((words, origins)) => (words, Some(origins)),
        None => (words, origins),
    };
    let scan = scan(&words, origins.as_deref())?;
    let raw = catch_unwind(AssertUnwindSafe(|| dr::load_words(&scan.words)))
        .map_err(|_| FrontendError::invalid("SPIR-V binary is malformed (parser rejected it)", ""))?
        .map_err(|e| malformed(&e, &scan))?;
    let mut module = build_tables(raw, version, scan)?;
    module.warnings = warnings;
    validate(&module, device)?;
    module.spin_loops = crate::spin_loops::find_spin_loops(&module);
    (module.kernels, module.block_kernels) = extract_kernels(&module)?;
    Ok(module)
}

/// Rewrites `OpExecutionModeId` (SPIR-V 1.2, which rspirv 0.13 cannot load) with a mode that
/// has a literal form into that `OpExecutionMode` (`SubgroupsPerWorkgroupId` →
/// `SubgroupsPerWorkgroup`, `LocalSizeId` → `LocalSize`, `LocalSizeHintId` → `LocalSizeHint`),
/// reading the operands' `OpConstant` values (specialization constants are frozen by now).
/// Same length, so word offsets in diagnostics stay those of the module as given. Anything
/// else is left for the parser to reject.
fn execution_modes_by_value(mut words: Vec<u32>) -> Vec<u32> {
    const OP_CONSTANT: u32 = 43;
    const OP_EXECUTION_MODE: u32 = 16;
    const OP_EXECUTION_MODE_ID: u32 = 331;
    let mut constants = HashMap::new();
    let mut modes = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xffff;
        if count == 0 || at + count > words.len() {
            break;
        }
        match opcode {
            OP_CONSTANT if count == 4 => {
                constants.insert(words[at + 2], words[at + 3]);
            }
            OP_EXECUTION_MODE_ID if count >= 3 => modes.push((at, count)),
            _ => {}
        }
        at += count;
    }
    for (at, count) in modes {
        let literal_mode = match words[at + 2] {
            37 => 36, // SubgroupsPerWorkgroupId
            38 => 17, // LocalSizeId
            39 => 18, // LocalSizeHintId
            _ => continue,
        };
        let values: Option<Vec<u32>> = words[at + 3..at + count]
            .iter()
            .map(|id| constants.get(id).copied())
            .collect();
        let Some(values) = values else { continue };
        words[at] = (count as u32) << 16 | OP_EXECUTION_MODE;
        words[at + 2] = literal_mode;
        words[at + 3..at + count].copy_from_slice(&values);
    }
    words
}

/// rspirv's parse error, with the instruction's word offset in the module as given (rspirv
/// counts instructions from 1 in the words it saw, which `scan.kept` maps back).
fn malformed(e: &ParseState, scan: &Scan) -> FrontendError {
    let (what, index) = match *e {
        ParseState::WordCountZero(_, i) => ("zero word count".to_owned(), Some(i)),
        ParseState::OpcodeUnknown(_, i, op) => (format!("unknown opcode {op}"), Some(i)),
        ParseState::OperandExpected(_, i) => ("expected more operands".to_owned(), Some(i)),
        ParseState::OperandExceeded(_, i) => ("extra operands".to_owned(), Some(i)),
        ParseState::TypeUnsupported(_, i) => {
            ("the operand type cannot be decoded".to_owned(), Some(i))
        }
        ParseState::SpecConstantOpIntegerIncorrect(_, i) => {
            ("incorrect OpSpecConstantOp opcode".to_owned(), Some(i))
        }
        ref other => (other.to_string(), None),
    };
    match index
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| scan.kept.get(i))
    {
        Some(&(at, _)) => header_problem(format!("SPIR-V 2.3: malformed instruction: {what}"), at),
        None => FrontendError::invalid(format!("SPIR-V binary is malformed: {what}"), ""),
    }
}

fn check_header(words: &[u32]) -> Result<(u8, u8), FrontendError> {
    let version = words[1];
    let major = ((version >> 16) & 0xff) as u8;
    let minor = ((version >> 8) & 0xff) as u8;
    if version & 0xff00_00ff != 0 || !SUPPORTED_SPIRV_VERSIONS.contains(&(major, minor)) {
        return Err(header_problem(
            format!("env 2.1: SPIR-V version word {version:#010x} ({major}.{minor}) is not supported; accepted: 1.0 to 1.6"),
            1,
        ));
    }
    let bound = words[3];
    if bound == 0 || bound > 0x0400_0000 {
        return Err(header_problem(
            format!("SPIR-V 2.3: id bound {bound} is out of range (1 to 2^26)"),
            3,
        ));
    }
    Ok((major, minor))
}

fn build_tables(raw: dr::Module, version: (u8, u8), scan: Scan) -> Result<Module, FrontendError> {
    let locations = locate(&raw, &scan.kept);
    let mut m = Module {
        locations,
        strings: HashMap::new(),
        debug_ids: scan.debug_ids,
        function_index: HashMap::new(),
        raw,
        version,
        kernels: Vec::new(),
        block_kernels: HashMap::new(),
        types: HashMap::new(),
        names: HashMap::new(),
        decorations: HashMap::new(),
        globals: HashMap::new(),
        result_types: HashMap::new(),
        ext_imports: HashMap::new(),
        spin_loops: HashMap::new(),
        warnings: Vec::new(),
    };
    for inst in &m.raw.ext_inst_imports {
        if let (Some(id), Some(Operand::LiteralString(name))) =
            (inst.result_id, inst.operands.first())
        {
            m.ext_imports.insert(id, name.clone());
        }
    }
    for inst in &m.raw.debug_string_source {
        if let (Op::String, Some(id), Some(Operand::LiteralString(text))) =
            (inst.class.opcode, inst.result_id, inst.operands.first())
        {
            m.strings.insert(id, text.clone());
        }
    }
    for inst in &m.raw.debug_names {
        if inst.class.opcode == Op::Name {
            if let (Some(Operand::IdRef(id)), Some(Operand::LiteralString(name))) =
                (inst.operands.first(), inst.operands.get(1))
            {
                m.names.insert(*id, name.clone());
            }
        }
    }
    collect_decorations(&mut m);
    for (index, inst) in m.raw.types_global_values.iter().enumerate() {
        let Some(id) = inst.result_id else { continue };
        if m.globals.insert(id, index).is_some() {
            return Err(FrontendError::Invalid(vec![m.diag(
                format!("SPIR-V 2.2: id %{id} is defined more than once"),
                inst,
                None,
            )]));
        }
        if let Some(ty) = inst.result_type {
            m.result_types.insert(id, ty);
        }
    }
    let type_defs: Vec<(Word, Type)> = m
        .raw
        .types_global_values
        .iter()
        .filter_map(|inst| Some((inst.result_id?, decode_type(&m, inst)?)))
        .collect();
    m.types.extend(type_defs);
    for (index, f) in m.raw.functions.iter().enumerate() {
        if let Some(id) = f.def.as_ref().and_then(|d| d.result_id) {
            // The first definition wins; a duplicate is reported by the structural checks.
            m.function_index.entry(id).or_insert(index);
        }
        let insts = f
            .def
            .iter()
            .chain(&f.parameters)
            .chain(f.blocks.iter().flat_map(|b| &b.instructions));
        for inst in insts {
            if let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) {
                m.result_types.insert(id, ty);
            }
        }
    }
    Ok(m)
}

fn collect_decorations(m: &mut Module) {
    let mut groups: HashMap<Word, Vec<(spirv::Decoration, Vec<Operand>)>> = HashMap::new();
    for inst in &m.raw.annotations {
        if inst.class.opcode == Op::Decorate {
            if let (Some(Operand::IdRef(target)), Some(Operand::Decoration(d))) =
                (inst.operands.first(), inst.operands.get(1))
            {
                let entry = (*d, inst.operands[2..].to_vec());
                m.decorations
                    .entry(*target)
                    .or_default()
                    .push(entry.clone());
                groups.entry(*target).or_default().push(entry);
            }
        }
    }
    for inst in &m.raw.annotations {
        if inst.class.opcode == Op::GroupDecorate {
            if let Some(Operand::IdRef(group)) = inst.operands.first() {
                let decs = groups.get(group).cloned().unwrap_or_default();
                for op in &inst.operands[1..] {
                    if let Operand::IdRef(target) = op {
                        m.decorations
                            .entry(*target)
                            .or_default()
                            .extend(decs.iter().cloned());
                    }
                }
            }
        }
    }
}

fn id_operand(inst: &dr::Instruction, i: usize) -> Option<Word> {
    match inst.operands.get(i)? {
        Operand::IdRef(id) => Some(*id),
        _ => None,
    }
}

fn literal_operand(inst: &dr::Instruction, i: usize) -> Option<u32> {
    match inst.operands.get(i)? {
        Operand::LiteralBit32(v) => Some(*v),
        _ => None,
    }
}

fn decode_type(m: &Module, inst: &dr::Instruction) -> Option<Type> {
    Some(match inst.class.opcode {
        Op::TypeVoid => Type::Void,
        Op::TypeBool => Type::Bool,
        Op::TypeInt => Type::Int {
            width: literal_operand(inst, 0)?,
        },
        Op::TypeFloat => Type::Float {
            width: literal_operand(inst, 0)?,
        },
        Op::TypeVector => Type::Vector {
            elem: id_operand(inst, 0)?,
            count: literal_operand(inst, 1)?,
        },
        Op::TypeArray => {
            let len_id = id_operand(inst, 1)?;
            let len_inst = m.global_raw(len_id)?;
            let len = match len_inst.operands.first()? {
                Operand::LiteralBit32(v) => u64::from(*v),
                Operand::LiteralBit64(v) => *v,
                _ => return None,
            };
            Type::Array {
                elem: id_operand(inst, 0)?,
                len,
            }
        }
        Op::TypeRuntimeArray => Type::RuntimeArray {
            elem: id_operand(inst, 0)?,
        },
        Op::TypeStruct => Type::Struct {
            members: inst
                .operands
                .iter()
                .filter_map(|o| {
                    if let Operand::IdRef(i) = o {
                        Some(*i)
                    } else {
                        None
                    }
                })
                .collect(),
            packed: inst
                .result_id
                .is_some_and(|id| m.has_decoration(id, spirv::Decoration::CPacked)),
        },
        Op::TypePointer => {
            let Operand::StorageClass(storage) = inst.operands.first()? else {
                return None;
            };
            Type::Pointer {
                storage: *storage,
                pointee: id_operand(inst, 1)?,
            }
        }
        Op::TypeFunction => Type::Function {
            ret: id_operand(inst, 0)?,
            params: inst.operands[1..]
                .iter()
                .filter_map(|o| {
                    if let Operand::IdRef(i) = o {
                        Some(*i)
                    } else {
                        None
                    }
                })
                .collect(),
        },
        Op::TypeEvent => Type::Event,
        Op::TypeNamedBarrier => Type::NamedBarrier,
        Op::TypeDeviceEvent => Type::DeviceEvent,
        Op::TypeReserveId => Type::ReserveId,
        Op::TypeQueue => Type::Queue,
        Op::TypePipe => match inst.operands.first()? {
            Operand::AccessQualifier(access) => Type::Pipe { access: *access },
            _ => return None,
        },
        Op::TypeSampler => Type::Sampler,
        Op::TypeSampledImage => Type::SampledImage {
            image: id_operand(inst, 0)?,
        },
        Op::TypeImage => {
            let Operand::Dim(dim) = inst.operands.get(1)? else {
                return None;
            };
            let depth = literal_operand(inst, 2)? == 1;
            let arrayed = literal_operand(inst, 3)? != 0;
            let access = match inst.operands.get(7) {
                Some(Operand::AccessQualifier(a)) => Some(*a),
                _ => None,
            };
            Type::Image {
                dim: *dim,
                arrayed,
                depth,
                access,
            }
        }
        Op::TypeOpaque => match inst.operands.first()? {
            Operand::LiteralString(s) => Type::Opaque(s.clone()),
            _ => return None,
        },
        _ => return None,
    })
}
