//! `SPV_INTEL_bfloat16_conversion` (cl_intel_bfloat16_conversions): `OpConvertFToBF16INTEL`
//! and `OpConvertBF16ToFINTEL` become the core integer instructions that compute them, before
//! the module is parsed, as llvm_intrinsics.rs does for the LLVM intrinsics it gives bodies:
//! the rest of the frontend, codegen and its vectorisers see only core instructions.
//!
//! A bfloat16 is the upper half of an f32's encoding (sign, 8 exponent bits, 7 fraction bits),
//! carried in a 16-bit integer. Per component:
//! - f32 → bfloat16 rounds to nearest, ties to even, on the encoding: `(b + 0x7fff + ((b >> 16)
//!   & 1)) >> 16` for `b` the f32's bits. That is numeric rounding for every finite input
//!   (subnormals included: they share the f32 exponent range, so no flushing happens or is
//!   needed), and carries into the exponent exactly where the value rounds up to the next
//!   binade, to infinity above the largest finite bfloat16. A NaN keeps its sign and upper
//!   payload bits and becomes quiet (`(b >> 16) | 0x40`), so it never rounds into infinity.
//! - bfloat16 → f32 is exact: the 16 bits shifted into the upper half.
//!
//! Only instructions of the forms the extension allows are rewritten (an f32 or vector of 2, 3,
//! 4, 8 or 16 f32 ↔ 16-bit integers of as many components, in a module that declares the
//! `Bfloat16ConversionINTEL` capability); any other stays for the validator to report
//! (validate_types/arith.rs). New types (32-bit integers and booleans of the conversions' widths,
//! where the module lacks them) and constants go after the last module-scope declaration;
//! every new instruction takes the word offset of the one it replaces, for diagnostics.

use std::collections::HashMap;

use spirv::{Capability, Op};

use crate::locations::HEADER_WORDS;
use crate::words::{has_result_type, instructions};

/// Component counts the extension allows (scalars are 1).
const COUNTS: [u32; 6] = [1, 2, 3, 4, 8, 16];

/// What the module declares that the rewrite needs: scalar and vector types by shape.
#[derive(Default)]
struct Types {
    /// (is float, width) of scalar types; `OpTypeBool` is (false, 1).
    scalars: HashMap<u32, (bool, u32)>,
    /// Vector type id → (element id, count).
    vectors: HashMap<u32, (u32, u32)>,
}

impl Types {
    /// (is float, width, count) of a scalar or vector type.
    fn shape(&self, ty: u32) -> Option<(bool, u32, u32)> {
        if let Some(&(float, width)) = self.scalars.get(&ty) {
            return Some((float, width, 1));
        }
        let &(elem, count) = self.vectors.get(&ty)?;
        let &(float, width) = self.scalars.get(&elem)?;
        Some((float, width, count))
    }
}

/// Whether `words` holds an instruction of `SPV_INTEL_bfloat16_conversion`.
fn is_conversion(op: u32) -> bool {
    op == Op::ConvertFToBF16INTEL as u32 || op == Op::ConvertBF16ToFINTEL as u32
}

/// The module with every well-formed bfloat16 conversion rewritten, and each instruction's word
/// offset in the module as given (through `origins`, when an earlier pass rewrote the words);
/// None when there is nothing to rewrite (or the words are malformed, which the scan reports).
pub(crate) fn lower(words: &[u32], origins: Option<&[usize]>) -> Option<(Vec<u32>, Vec<usize>)> {
    let insts = instructions(words);
    if insts.last().map_or(HEADER_WORDS, |i| i.at + i.words.len()) != words.len() {
        return None;
    }
    if !insts.iter().any(|i| is_conversion(i.op)) {
        return None;
    }
    let declared = insts.iter().any(|i| {
        i.op == Op::Capability as u32
            && i.words.get(1) == Some(&(Capability::BFloat16ConversionINTEL as u32))
    });
    if !declared {
        return None;
    }
    let mut types = Types::default();
    let mut value_types: HashMap<u32, u32> = HashMap::new();
    for i in &insts {
        let w = i.words;
        match Op::from_u32(i.op) {
            Some(Op::TypeInt) if w.len() == 4 && w[3] == 0 => {
                types.scalars.insert(w[1], (false, w[2]));
            }
            Some(Op::TypeFloat) if w.len() == 3 => {
                types.scalars.insert(w[1], (true, w[2]));
            }
            Some(Op::TypeBool) if w.len() == 2 => {
                types.scalars.insert(w[1], (false, 1));
            }
            Some(Op::TypeVector) if w.len() == 4 => {
                types.vectors.insert(w[1], (w[2], w[3]));
            }
            _ => {}
        }
        if has_result_type(i.op) && w.len() >= 3 {
            value_types.insert(w[2], w[1]);
        }
    }
    // The conversions to rewrite: (instruction index, to bfloat16, component count).
    let mut found: Vec<(usize, bool, u32)> = Vec::new();
    for (k, i) in insts.iter().enumerate() {
        if !is_conversion(i.op) || i.words.len() != 4 {
            continue;
        }
        let to_bf16 = i.op == Op::ConvertFToBF16INTEL as u32;
        let result = types.shape(i.words[1]);
        let operand = value_types.get(&i.words[3]).and_then(|&t| types.shape(t));
        let (Some(result), Some(operand)) = (result, operand) else {
            continue;
        };
        let (from, to) = if to_bf16 {
            ((true, 32), (false, 16))
        } else {
            ((false, 16), (true, 32))
        };
        let fits = (operand.0, operand.1) == from
            && (result.0, result.1) == to
            && operand.2 == result.2
            && COUNTS.contains(&result.2);
        if fits {
            found.push((k, to_bf16, result.2));
        }
    }
    if found.is_empty() {
        return None;
    }
    let mut rewriter = Rewriter::new(words[3], &types);
    let mut replacements: HashMap<usize, Vec<u32>> = HashMap::new();
    for &(k, to_bf16, count) in &found {
        let w = insts[k].words;
        let (rt, id, x) = (w[1], w[2], w[3]);
        let mut out = Vec::new();
        if to_bf16 {
            rewriter.float_to_bfloat16(&mut out, count, rt, id, x);
        } else {
            rewriter.bfloat16_to_float(&mut out, count, rt, id, x);
        }
        replacements.insert(k, out);
    }
    let first_function = insts
        .iter()
        .position(|i| i.op == Op::Function as u32)
        .unwrap_or(insts.len());
    let declarations = std::mem::take(&mut rewriter.declarations);
    let mut out = words[..HEADER_WORDS].to_vec();
    let mut new_origins = Vec::with_capacity(insts.len() + found.len() * 11);
    let origin = |k: usize| origins.and_then(|o| o.get(k)).copied();
    for (k, i) in insts.iter().enumerate() {
        let at = origin(k).unwrap_or(i.at);
        if k == first_function {
            push_all(&mut out, &mut new_origins, &declarations, at);
        }
        match replacements.get(&k) {
            Some(sequence) => push_all(&mut out, &mut new_origins, sequence, at),
            None => {
                out.extend_from_slice(i.words);
                new_origins.push(at);
            }
        }
    }
    if first_function == insts.len() {
        push_all(&mut out, &mut new_origins, &declarations, words.len());
    }
    out[3] = rewriter.bound;
    Some((out, new_origins))
}

/// Appends the instructions of `sequence` to `out`, each with origin `at`.
fn push_all(out: &mut Vec<u32>, origins: &mut Vec<usize>, sequence: &[u32], at: usize) {
    let mut k = 0;
    while k < sequence.len() {
        let count = (sequence[k] >> 16) as usize;
        out.extend_from_slice(&sequence[k..k + count]);
        origins.push(at);
        k += count;
    }
}

/// Appends one instruction.
fn emit(out: &mut Vec<u32>, op: Op, operands: &[u32]) {
    out.push(((operands.len() as u32 + 1) << 16) | op as u32);
    out.extend_from_slice(operands);
}

/// Makes the new instructions, allocating ids above the module's bound.
struct Rewriter {
    bound: u32,
    /// 32-bit unsigned integer and boolean scalar type ids (declared or new).
    uint: Option<u32>,
    boolean: Option<u32>,
    /// Vector type ids by (element id, count), declared or new.
    vectors: HashMap<(u32, u32), u32>,
    /// Constants by (type id, value).
    constants: HashMap<(u32, u32), u32>,
    /// New types and constants, in declaration order.
    declarations: Vec<u32>,
}

impl Rewriter {
    fn new(bound: u32, types: &Types) -> Self {
        let find = |want: (bool, u32)| {
            types
                .scalars
                .iter()
                .filter(|(_, &shape)| shape == want)
                .map(|(&id, _)| id)
                .min()
        };
        let mut vectors = HashMap::new();
        for (&id, &key) in &types.vectors {
            vectors.entry(key).or_insert(id);
        }
        Rewriter {
            bound,
            uint: find((false, 32)),
            boolean: find((false, 1)),
            vectors,
            constants: HashMap::new(),
            declarations: Vec::new(),
        }
    }

    fn id(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    /// The 32-bit integer (or, with `boolean`, boolean) type of `count` components.
    fn ty(&mut self, boolean: bool, count: u32) -> u32 {
        let scalar = match if boolean { self.boolean } else { self.uint } {
            Some(id) => id,
            None => {
                let id = self.id();
                if boolean {
                    emit(&mut self.declarations, Op::TypeBool, &[id]);
                    self.boolean = Some(id);
                } else {
                    emit(&mut self.declarations, Op::TypeInt, &[id, 32, 0]);
                    self.uint = Some(id);
                }
                id
            }
        };
        if count == 1 {
            return scalar;
        }
        if let Some(&id) = self.vectors.get(&(scalar, count)) {
            return id;
        }
        let id = self.id();
        emit(&mut self.declarations, Op::TypeVector, &[id, scalar, count]);
        self.vectors.insert((scalar, count), id);
        id
    }

    /// A 32-bit integer constant of `count` components, each `value`.
    fn constant(&mut self, count: u32, value: u32) -> u32 {
        let ty = self.ty(false, count);
        if let Some(&id) = self.constants.get(&(ty, value)) {
            return id;
        }
        let id = if count == 1 {
            let id = self.id();
            emit(&mut self.declarations, Op::Constant, &[ty, id, value]);
            id
        } else {
            let c = self.constant(1, value);
            let id = self.id();
            let mut operands = vec![ty, id];
            operands.extend(std::iter::repeat_n(c, count as usize));
            emit(&mut self.declarations, Op::ConstantComposite, &operands);
            id
        };
        self.constants.insert((ty, value), id);
        id
    }

    /// Appends `%new = op t operands`; returns the new id.
    fn value(&mut self, out: &mut Vec<u32>, t: u32, op: Op, operands: &[u32]) -> u32 {
        let id = self.id();
        let mut all = vec![t, id];
        all.extend_from_slice(operands);
        emit(out, op, &all);
        id
    }

    /// `%id = OpConvertFToBF16INTEL %rt %x` of `count` components.
    fn float_to_bfloat16(&mut self, out: &mut Vec<u32>, count: u32, rt: u32, id: u32, x: u32) {
        let u = self.ty(false, count);
        let b = self.ty(true, count);
        let c16 = self.constant(count, 16);
        let c1 = self.constant(count, 1);
        let bias = self.constant(count, 0x7fff);
        let magnitude = self.constant(count, 0x7fff_ffff);
        let infinity = self.constant(count, 0x7f80_0000);
        let quiet = self.constant(count, 0x40);
        let bits = self.value(out, u, Op::Bitcast, &[x]);
        let high = self.value(out, u, Op::ShiftRightLogical, &[bits, c16]);
        let odd = self.value(out, u, Op::BitwiseAnd, &[high, c1]);
        let tie = self.value(out, u, Op::IAdd, &[odd, bias]);
        let sum = self.value(out, u, Op::IAdd, &[bits, tie]);
        let rounded = self.value(out, u, Op::ShiftRightLogical, &[sum, c16]);
        let abs = self.value(out, u, Op::BitwiseAnd, &[bits, magnitude]);
        let nan = self.value(out, b, Op::UGreaterThan, &[abs, infinity]);
        let quieted = self.value(out, u, Op::BitwiseOr, &[high, quiet]);
        let chosen = self.value(out, u, Op::Select, &[nan, quieted, rounded]);
        emit(out, Op::UConvert, &[rt, id, chosen]);
    }

    /// `%id = OpConvertBF16ToFINTEL %rt %x` of `count` components.
    fn bfloat16_to_float(&mut self, out: &mut Vec<u32>, count: u32, rt: u32, id: u32, x: u32) {
        let u = self.ty(false, count);
        let c16 = self.constant(count, 16);
        let wide = self.value(out, u, Op::UConvert, &[x]);
        let bits = self.value(out, u, Op::ShiftLeftLogical, &[wide, c16]);
        emit(out, Op::Bitcast, &[rt, id, bits]);
    }
}

#[cfg(test)]
mod tests {
    use rspirv::binary::Assemble;
    use rspirv::dr::Builder;
    use spirv::{Capability, FunctionControl, Op};

    use super::*;

    /// A module converting a parameter of `count` f32 to bfloat16 and back, declaring the
    /// capability when `capability`; `wide_result` makes the first conversion's result 32-bit.
    fn module(count: u32, capability: bool, wide_result: bool) -> Vec<u32> {
        let mut b = Builder::new();
        b.set_version(1, 0);
        b.capability(Capability::Addresses);
        b.capability(Capability::Kernel);
        b.capability(Capability::Int16);
        if capability {
            b.capability(Capability::BFloat16ConversionINTEL);
        }
        b.extension("SPV_INTEL_bfloat16_conversion");
        b.memory_model(
            spirv::AddressingModel::Physical64,
            spirv::MemoryModel::OpenCL,
        );
        let float = b.type_float(32, None);
        let short = b.type_int(if wide_result { 32 } else { 16 }, 0);
        let (float, short) = if count == 1 {
            (float, short)
        } else {
            (b.type_vector(float, count), b.type_vector(short, count))
        };
        let f_t = b.type_function(float, vec![float]);
        b.begin_function(float, None, FunctionControl::NONE, f_t)
            .unwrap();
        let x = b.function_parameter(float).unwrap();
        b.begin_block(None).unwrap();
        let id = b.id();
        let to = rspirv::dr::Instruction::new(
            Op::ConvertFToBF16INTEL,
            Some(short),
            Some(id),
            vec![rspirv::dr::Operand::IdRef(x)],
        );
        b.insert_into_block(rspirv::dr::InsertPoint::End, to)
            .unwrap();
        let back = b.id();
        let from = rspirv::dr::Instruction::new(
            Op::ConvertBF16ToFINTEL,
            Some(float),
            Some(back),
            vec![rspirv::dr::Operand::IdRef(id)],
        );
        b.insert_into_block(rspirv::dr::InsertPoint::End, from)
            .unwrap();
        b.ret_value(back).unwrap();
        b.end_function().unwrap();
        b.module().assemble()
    }

    fn ops(words: &[u32]) -> Vec<Op> {
        instructions(words)
            .iter()
            .filter_map(|i| Op::from_u32(i.op))
            .collect()
    }

    #[test]
    fn conversions_become_core_instructions() {
        for count in COUNTS {
            let words = module(count, true, false);
            let (out, origins) = lower(&words, None).expect("rewritten");
            let ops = ops(&out);
            assert_eq!(origins.len(), ops.len());
            assert!(!ops.contains(&Op::ConvertFToBF16INTEL), "{count}");
            assert!(!ops.contains(&Op::ConvertBF16ToFINTEL), "{count}");
            assert!(ops.contains(&Op::Select) && ops.contains(&Op::UConvert));
            assert!(
                ops.contains(&Op::TypeBool),
                "{count}: no bool type in {ops:?}"
            );
            // The result loads, and new instructions are after the original declarations.
            let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_le_bytes()).collect();
            rspirv::dr::load_bytes(bytes).expect("loads");
            assert!(out[3] > words[3]);
        }
    }

    #[test]
    fn malformed_or_undeclared_conversions_are_left_for_the_validator() {
        assert!(lower(&module(4, false, false), None).is_none());
        // 32-bit integers in place of the 16-bit ones: neither conversion has its form.
        assert!(lower(&module(2, true, true), None).is_none());
        assert!(
            lower(&module(5, true, false), None).is_none(),
            "5 components"
        );
    }

    fn log_of(words: &[u32]) -> String {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        match crate::parse(&bytes) {
            Ok(_) => String::new(),
            Err(e) => e.log(),
        }
    }

    #[test]
    fn the_validator_reports_what_was_not_rewritten() {
        assert_eq!(log_of(&module(3, true, false)), "", "a well-formed module");
        let log = log_of(&module(4, false, false));
        assert!(
            log.contains("requires one of the capabilities [BFloat16ConversionINTEL]"),
            "{log}"
        );
        let log = log_of(&module(2, true, true));
        assert!(
            log.contains("OpConvertFToBF16INTEL converts f32") && log.contains("i32x2"),
            "{log}"
        );
    }
}
