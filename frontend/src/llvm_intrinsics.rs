//! LLVM intrinsics that the LLVM/SPIR-V translator leaves behind as imported functions: with
//! `--spirv-allow-unknown-intrinsics` (as DPC++ runs it) an intrinsic the translator has no
//! rule for becomes a function declared with `LinkageAttributes "llvm.usub.sat.i32" Import`
//! and no body, which no program exports. Those that are OpenCL.std built-ins or short
//! sequences of core instructions get a body here, before the module is parsed, so the rest of
//! the frontend and codegen see an ordinary function (codegen inlines every call).
//!
//! Which ones: what llvm-spirv-15 leaves (checked against it; it translates `umin`/`umax`/
//! `smin`/`smax`, `abs`, `bitreverse`, `ctpop`, `ctlz`, `cttz` and the float intrinsics
//! itself):
//! - `llvm.{u,s}{add,sub}.sat.*` → OpenCL.std `u_add_sat`, `s_add_sat`, `u_sub_sat`,
//!   `s_sub_sat` (scalars and vectors of 8 to 64 bits);
//! - `llvm.fshl.*`/`llvm.fshr.*` → a funnel shift, and at a call whose two value operands are
//!   one id, OpenCL.std `rotate` in place of the call;
//! - `llvm.bswap.*` → shifts and masks;
//! - `llvm.fptosi.sat.*`/`llvm.fptoui.sat.*` → `OpConvertFToS`/`OpConvertFToU` decorated
//!   `SaturatedConversion` (both map NaN to 0);
//! - `llvm.lround.*`/`llvm.llround.*`, `llvm.lrint.*`/`llvm.llrint.*` → OpenCL.std `round` or
//!   `rint`, then `OpConvertFToS`;
//! - `llvm.canonicalize.*` → a multiplication by 1.0 (LLVM's own definition).
//!
//! Others (`*.with.overflow`, `vector.reduce.*`, `*shl.sat`, `*mul.fix*`) stay imports: the
//! build log names them as LLVM intrinsics Ferrocl does not provide (link.rs).
//!
//! The function moves to the end of the module (SPIR-V wants declarations before
//! definitions); the constants it needs go after the last module-scope declaration. Every
//! instruction keeps the word offset it had in the module as given, for diagnostics: new
//! instructions take the offset of the declaration they replace.

use std::collections::HashMap;

use spirv::{Decoration, LinkageType, Op, OpenclStd100Op as Cl};

use crate::locations::{literal_string, HEADER_WORDS};
use crate::words::instructions;

/// What an intrinsic becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Intrinsic {
    /// One OpenCL.std instruction on the two integer parameters.
    Saturating(Cl),
    /// `fshl` (left) or `fshr`.
    FunnelShift {
        left: bool,
    },
    ByteSwap,
    /// A float-to-integer conversion, saturating (`fpto*i.sat`).
    SaturatedConversion {
        signed: bool,
    },
    /// OpenCL.std `round` or `rint`, then a signed conversion.
    RoundToInteger(Cl),
    Canonicalize,
}

/// The intrinsic an imported name stands for, by its name up to the type suffix.
fn intrinsic(name: &str) -> Option<Intrinsic> {
    use Intrinsic::*;
    const TABLE: [(&str, Intrinsic); 14] = [
        ("uadd.sat.", Saturating(Cl::u_add_sat)),
        ("sadd.sat.", Saturating(Cl::s_add_sat)),
        ("usub.sat.", Saturating(Cl::u_sub_sat)),
        ("ssub.sat.", Saturating(Cl::s_sub_sat)),
        ("fshl.", FunnelShift { left: true }),
        ("fshr.", FunnelShift { left: false }),
        ("bswap.", ByteSwap),
        ("fptosi.sat.", SaturatedConversion { signed: true }),
        ("fptoui.sat.", SaturatedConversion { signed: false }),
        ("lround.", RoundToInteger(Cl::round)),
        ("llround.", RoundToInteger(Cl::round)),
        ("lrint.", RoundToInteger(Cl::rint)),
        ("llrint.", RoundToInteger(Cl::rint)),
        ("canonicalize.", Canonicalize),
    ];
    let rest = name.strip_prefix("llvm.")?;
    TABLE
        .iter()
        .find(|(prefix, _)| rest.starts_with(prefix))
        .map(|&(_, i)| i)
}

/// Whether `name` is an LLVM intrinsic's (for the build log of an import nothing resolves).
pub(crate) fn is_llvm_intrinsic(name: &str) -> bool {
    name.starts_with("llvm.")
}

/// A scalar or vector of integers or floats, as declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    float: bool,
    width: u32,
    /// Component count; 1 for a scalar.
    count: u32,
    /// The component type's id.
    elem: u32,
}

/// An imported function with a body to give.
struct Import {
    intrinsic: Intrinsic,
    /// Word offset of its `OpFunction`, and of the word after its `OpFunctionEnd`.
    at: usize,
    end: usize,
    /// Offset of its `LinkageAttributes` decoration.
    decoration_at: usize,
    result_type: u32,
    /// The parameters' types.
    params: Vec<u32>,
}

/// The module with a body for every import of an intrinsic listed above, and the original
/// word offset of each of its instructions; None when it imports none (or is malformed, which
/// the scan reports on the words as given).
pub(crate) fn resolve(words: &[u32]) -> Option<(Vec<u32>, Vec<usize>)> {
    let insts = instructions(words);
    if insts.last().map_or(HEADER_WORDS, |i| i.at + i.words.len()) != words.len() {
        return None;
    }
    // Imports of intrinsics by target id: (intrinsic, decoration offset).
    let mut imports: HashMap<u32, (Intrinsic, usize)> = HashMap::new();
    for i in &insts {
        let w = i.words;
        if i.op == Op::Decorate as u32
            && w.len() >= 5
            && w[2] == Decoration::LinkageAttributes as u32
            && w.last() == Some(&(LinkageType::Import as u32))
        {
            if let Some(intrinsic) = intrinsic(&literal_string(&w[3..])) {
                imports.insert(w[1], (intrinsic, i.at));
            }
        }
    }
    if imports.is_empty() {
        return None;
    }
    let mut shapes: HashMap<u32, Shape> = HashMap::new();
    let mut scalars: HashMap<u32, (bool, u32)> = HashMap::new();
    let mut opencl_std = None;
    let mut found: Vec<Import> = Vec::new();
    let mut k = 0;
    while k < insts.len() {
        let (i, w) = (&insts[k], insts[k].words);
        match Op::from_u32(i.op) {
            Some(Op::TypeInt) if w.len() == 4 => {
                scalars.insert(w[1], (false, w[2]));
            }
            Some(Op::TypeFloat) if w.len() == 3 => {
                scalars.insert(w[1], (true, w[2]));
            }
            Some(Op::TypeVector) if w.len() == 4 => {
                if let Some(&(float, width)) = scalars.get(&w[2]) {
                    let shape = Shape {
                        float,
                        width,
                        count: w[3],
                        elem: w[2],
                    };
                    shapes.insert(w[1], shape);
                }
            }
            Some(Op::ExtInstImport) if literal_string(&w[2..]) == "OpenCL.std" => {
                opencl_std = Some(w[1]);
            }
            Some(Op::Function) if w.len() == 5 => {
                // A declaration: parameters, then its end, with no block between.
                let mut j = k + 1;
                let mut params = Vec::new();
                while j < insts.len() && insts[j].op == Op::FunctionParameter as u32 {
                    params.push(*insts[j].words.get(1).unwrap_or(&0));
                    j += 1;
                }
                let declaration = j < insts.len() && insts[j].op == Op::FunctionEnd as u32;
                if let (true, Some(&(intrinsic, decoration_at))) = (declaration, imports.get(&w[2]))
                {
                    found.push(Import {
                        intrinsic,
                        at: i.at,
                        end: insts[j].at + insts[j].words.len(),
                        decoration_at,
                        result_type: w[1],
                        params,
                    });
                }
                k = j;
            }
            _ => {}
        }
        k += 1;
    }
    for (&id, &(float, width)) in &scalars {
        shapes.entry(id).or_insert(Shape {
            float,
            width,
            count: 1,
            elem: id,
        });
    }
    // Only imports whose types are what the intrinsic's name says get a body.
    found.retain(|f| signature_fits(f, &shapes));
    if found.is_empty() {
        return None;
    }
    Some(Rewriter::new(words, opencl_std, shapes).run(&insts, &found))
}

/// Whether the declared result and parameter types are those of the intrinsic.
fn signature_fits(f: &Import, shapes: &HashMap<u32, Shape>) -> bool {
    let Some(ret) = shapes.get(&f.result_type) else {
        return false;
    };
    let params: Vec<Option<&Shape>> = f.params.iter().map(|p| shapes.get(p)).collect();
    let same = |n: usize| params.len() == n && params.iter().all(|p| *p == Some(ret));
    let int = !ret.float && matches!(ret.width, 8 | 16 | 32 | 64);
    let from_float = || matches!(params.as_slice(), [Some(p)] if p.float && p.count == ret.count);
    match f.intrinsic {
        Intrinsic::Saturating(_) => int && same(2),
        Intrinsic::FunnelShift { .. } => int && same(3),
        Intrinsic::ByteSwap => int && ret.width >= 16 && same(1),
        Intrinsic::SaturatedConversion { .. } | Intrinsic::RoundToInteger(_) => int && from_float(),
        Intrinsic::Canonicalize => ret.float && same(1),
    }
}

/// Builds the rewritten module.
struct Rewriter<'w> {
    words: &'w [u32],
    bound: u32,
    opencl_std: u32,
    /// Whether the OpenCL.std import must be added.
    add_opencl_std: bool,
    shapes: HashMap<u32, Shape>,
    /// New constants (after the module-scope declarations), by (type, value).
    constants: Vec<u32>,
    constant_ids: HashMap<(u32, u64), u32>,
    /// New decorations (where the linkage decorations were).
    decorations: Vec<u32>,
}

/// Appends one instruction.
fn emit(out: &mut Vec<u32>, op: Op, operands: &[u32]) {
    out.push(((operands.len() as u32 + 1) << 16) | op as u32);
    out.extend_from_slice(operands);
}

impl<'w> Rewriter<'w> {
    fn new(words: &'w [u32], opencl_std: Option<u32>, shapes: HashMap<u32, Shape>) -> Self {
        let mut bound = words[3];
        let add_opencl_std = opencl_std.is_none();
        let opencl_std = opencl_std.unwrap_or_else(|| {
            bound += 1;
            bound - 1
        });
        Rewriter {
            words,
            bound,
            opencl_std,
            add_opencl_std,
            shapes,
            constants: Vec::new(),
            constant_ids: HashMap::new(),
            decorations: Vec::new(),
        }
    }

    fn id(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    /// A constant of type `ty` (scalar, or vector splat) with every component `value`.
    fn constant(&mut self, ty: u32, value: u64) -> u32 {
        if let Some(&id) = self.constant_ids.get(&(ty, value)) {
            return id;
        }
        let shape = self.shapes[&ty];
        let id = if shape.count > 1 {
            let c = self.constant(shape.elem, value);
            let id = self.id();
            let mut operands = vec![ty, id];
            operands.extend(std::iter::repeat_n(c, shape.count as usize));
            emit(&mut self.constants, Op::ConstantComposite, &operands);
            id
        } else {
            let id = self.id();
            if shape.width == 64 {
                let operands = [ty, id, value as u32, (value >> 32) as u32];
                emit(&mut self.constants, Op::Constant, &operands);
            } else {
                emit(&mut self.constants, Op::Constant, &[ty, id, value as u32]);
            }
            id
        };
        self.constant_ids.insert((ty, value), id);
        id
    }

    /// Appends `%id = op t operands` to `out`; returns the id.
    fn value(&mut self, out: &mut Vec<u32>, t: u32, op: Op, operands: &[u32]) -> u32 {
        let id = self.id();
        let mut all = vec![t, id];
        all.extend_from_slice(operands);
        emit(out, op, &all);
        id
    }

    /// `f`'s body instructions (after its label), ending with the returned value's id.
    fn body(&mut self, f: &Import, params: &[u32], out: &mut Vec<u32>) -> u32 {
        let t = f.result_type;
        let shape = self.shapes[&t];
        match f.intrinsic {
            Intrinsic::Saturating(cl) => {
                let operands = [self.opencl_std, cl as u32, params[0], params[1]];
                self.value(out, t, Op::ExtInst, &operands)
            }
            Intrinsic::FunnelShift { left } => {
                // s = c mod w; fshl = a << s | (b >> 1) >> (w - 1 - s), fshr = (a << 1) <<
                // (w - 1 - s) | b >> s: no shift by w or more, which SPIR-V leaves undefined.
                let (a, b, c) = (params[0], params[1], params[2]);
                let mask = self.constant(t, u64::from(shape.width - 1));
                let one = self.constant(t, 1);
                let s = self.value(out, t, Op::BitwiseAnd, &[c, mask]);
                let rest = self.value(out, t, Op::ISub, &[mask, s]);
                let (high, low) = if left {
                    let high = self.value(out, t, Op::ShiftLeftLogical, &[a, s]);
                    let b1 = self.value(out, t, Op::ShiftRightLogical, &[b, one]);
                    (high, self.value(out, t, Op::ShiftRightLogical, &[b1, rest]))
                } else {
                    let a1 = self.value(out, t, Op::ShiftLeftLogical, &[a, one]);
                    let high = self.value(out, t, Op::ShiftLeftLogical, &[a1, rest]);
                    (high, self.value(out, t, Op::ShiftRightLogical, &[b, s]))
                };
                self.value(out, t, Op::BitwiseOr, &[high, low])
            }
            Intrinsic::ByteSwap => {
                let bytes = shape.width / 8;
                let byte = self.constant(t, 0xff);
                let mut result = None;
                for k in 0..bytes {
                    // Byte k moves to byte bytes - 1 - k.
                    let mut part = params[0];
                    if k > 0 {
                        let by = self.constant(t, u64::from(8 * k));
                        part = self.value(out, t, Op::ShiftRightLogical, &[part, by]);
                    }
                    if k + 1 < bytes {
                        part = self.value(out, t, Op::BitwiseAnd, &[part, byte]);
                    }
                    let to = bytes - 1 - k;
                    if to > 0 {
                        let by = self.constant(t, u64::from(8 * to));
                        part = self.value(out, t, Op::ShiftLeftLogical, &[part, by]);
                    }
                    result = Some(match result {
                        None => part,
                        Some(r) => self.value(out, t, Op::BitwiseOr, &[r, part]),
                    });
                }
                result.unwrap_or(params[0])
            }
            Intrinsic::SaturatedConversion { signed } => {
                let op = if signed {
                    Op::ConvertFToS
                } else {
                    Op::ConvertFToU
                };
                let id = self.value(out, t, op, &[params[0]]);
                let saturated = Decoration::SaturatedConversion as u32;
                emit(&mut self.decorations, Op::Decorate, &[id, saturated]);
                id
            }
            Intrinsic::RoundToInteger(cl) => {
                let operands = [self.opencl_std, cl as u32, params[0]];
                let rounded = self.value(out, f.params[0], Op::ExtInst, &operands);
                self.value(out, t, Op::ConvertFToS, &[rounded])
            }
            Intrinsic::Canonicalize => {
                let one = match shape.width {
                    16 => 0x3c00,
                    32 => u64::from(1f32.to_bits()),
                    _ => 1f64.to_bits(),
                };
                let one = self.constant(t, one);
                self.value(out, t, Op::FMul, &[params[0], one])
            }
        }
    }

    fn run(mut self, insts: &[crate::words::Inst<'_>], found: &[Import]) -> (Vec<u32>, Vec<usize>) {
        let funnel: HashMap<u32, bool> = found
            .iter()
            .filter_map(|f| match f.intrinsic {
                Intrinsic::FunnelShift { left } => Some((self.words[f.at + 2], left)),
                _ => None,
            })
            .collect();
        // The definitions, each with its parameters' ids as declared.
        let mut definitions: Vec<(usize, Vec<u32>)> = Vec::new();
        for f in found {
            let mut out = self.words[f.at..f.end - 1].to_vec();
            let params: Vec<u32> = instructions_in(&out)
                .filter(|w| w[0] & 0xffff == Op::FunctionParameter as u32 && w.len() >= 3)
                .map(|w| w[2])
                .collect();
            let label = self.id();
            emit(&mut out, Op::Label, &[label]);
            let result = self.body(f, &params, &mut out);
            emit(&mut out, Op::ReturnValue, &[result]);
            emit(&mut out, Op::FunctionEnd, &[]);
            definitions.push((f.at, out));
        }
        let declared = |at: usize| found.iter().any(|f| f.at <= at && at < f.end);
        let defined: std::collections::HashSet<u32> =
            found.iter().map(|f| self.words[f.at + 2]).collect();
        let first_function = insts
            .iter()
            .find(|i| i.op == Op::Function as u32)
            .map_or(self.words.len(), |i| i.at);
        let mut out = self.words[..HEADER_WORDS].to_vec();
        let mut origins = Vec::new();
        let push_all = |out: &mut Vec<u32>, origins: &mut Vec<usize>, words: &[u32], at: usize| {
            for w in instructions_in(words) {
                out.extend_from_slice(w);
                origins.push(at);
            }
        };
        let decorations = std::mem::take(&mut self.decorations);
        let constants = std::mem::take(&mut self.constants);
        for i in insts {
            let w = i.words;
            if i.op == Op::MemoryModel as u32 && self.add_opencl_std {
                let mut import = Vec::new();
                let mut operands = vec![self.opencl_std];
                operands.extend(string_words("OpenCL.std"));
                emit(&mut import, Op::ExtInstImport, &operands);
                push_all(&mut out, &mut origins, &import, i.at);
            }
            if i.at == first_function {
                push_all(&mut out, &mut origins, &constants, i.at);
            }
            // Every linkage decoration of a function given a body goes (a module may repeat
            // one); the new decorations take the place of the first import's.
            if i.at == found[0].decoration_at {
                push_all(&mut out, &mut origins, &decorations, i.at);
            }
            let linkage = i.op == Op::Decorate as u32
                && w.len() >= 3
                && w[2] == Decoration::LinkageAttributes as u32;
            if linkage && defined.contains(&w[1]) {
                continue;
            }
            if declared(i.at) {
                continue;
            }
            // A funnel shift of one value by itself is a rotation.
            if i.op == Op::FunctionCall as u32 && w.len() == 7 && w[4] == w[5] {
                if let Some(&left) = funnel.get(&w[3]) {
                    let (t, r, a, c) = (w[1], w[2], w[4], w[6]);
                    let mut rotation = Vec::new();
                    let by = if left {
                        c
                    } else {
                        let n = self.id();
                        emit(&mut rotation, Op::SNegate, &[t, n, c]);
                        n
                    };
                    let operands = [t, r, self.opencl_std, Cl::rotate as u32, a, by];
                    emit(&mut rotation, Op::ExtInst, &operands);
                    push_all(&mut out, &mut origins, &rotation, i.at);
                    continue;
                }
            }
            out.extend_from_slice(w);
            origins.push(i.at);
        }
        for (at, definition) in definitions {
            push_all(&mut out, &mut origins, &definition, at);
        }
        out[3] = self.bound;
        (out, origins)
    }
}

/// The instructions of a well-formed word sequence without a header.
fn instructions_in(words: &[u32]) -> impl Iterator<Item = &[u32]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let count = (*words.get(at)? >> 16) as usize;
        let w = words.get(at..at + count.max(1))?;
        at += count.max(1);
        Some(w)
    })
}

/// A literal string's words (NUL-terminated, zero-padded).
fn string_words(text: &str) -> Vec<u32> {
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    bytes.resize(bytes.len().next_multiple_of(4), 0);
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use rspirv::binary::Assemble;
    use rspirv::dr::{Builder, Operand};
    use spirv::{Capability, Decoration, FunctionControl, LinkageType, Op};

    use super::*;

    #[test]
    fn names_map_to_intrinsics_by_prefix() {
        assert_eq!(
            intrinsic("llvm.usub.sat.i32"),
            Some(Intrinsic::Saturating(Cl::u_sub_sat))
        );
        assert_eq!(
            intrinsic("llvm.sadd.sat.v4i8"),
            Some(Intrinsic::Saturating(Cl::s_add_sat))
        );
        assert_eq!(
            intrinsic("llvm.fshr.i64"),
            Some(Intrinsic::FunnelShift { left: false })
        );
        assert_eq!(
            intrinsic("llvm.llround.i64.f64"),
            Some(Intrinsic::RoundToInteger(Cl::round))
        );
        assert_eq!(intrinsic("llvm.ushl.sat.i32"), None);
        assert_eq!(intrinsic("llvm.umul.with.overflow.i32"), None);
        assert_eq!(intrinsic("usub.sat.i32"), None);
        assert!(is_llvm_intrinsic("llvm.vector.reduce.add.v4i32"));
        assert!(!is_llvm_intrinsic("_Z3minii"));
    }

    /// A module importing `name` as `uint(uint, uint)` (or `float(uint, uint)` when
    /// `wrong_type`), and a function calling it with (x, x).
    fn module(name: &str, wrong_type: bool) -> Vec<u32> {
        let mut b = Builder::new();
        b.set_version(1, 0);
        b.capability(Capability::Addresses);
        b.capability(Capability::Linkage);
        b.capability(Capability::Kernel);
        b.memory_model(
            spirv::AddressingModel::Physical64,
            spirv::MemoryModel::OpenCL,
        );
        let uint = b.type_int(32, 0);
        let float = b.type_float(32, None);
        let ret = if wrong_type { float } else { uint };
        let f_t = b.type_function(ret, vec![uint, uint]);
        let g_t = b.type_function(ret, vec![uint]);
        let f = b
            .begin_function(ret, None, FunctionControl::NONE, f_t)
            .unwrap();
        b.function_parameter(uint).unwrap();
        b.function_parameter(uint).unwrap();
        b.end_function().unwrap();
        b.decorate(
            f,
            Decoration::LinkageAttributes,
            [
                Operand::LiteralString(name.into()),
                Operand::LinkageType(LinkageType::Import),
            ],
        );
        b.begin_function(ret, None, FunctionControl::NONE, g_t)
            .unwrap();
        let x = b.function_parameter(uint).unwrap();
        b.begin_block(None).unwrap();
        let r = b.function_call(ret, None, f, [x, x]).unwrap();
        b.ret_value(r).unwrap();
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
    fn an_import_gets_a_body_after_the_other_functions() {
        let words = module("llvm.uadd.sat.i32", false);
        let (out, origins) = resolve(&words).expect("rewritten");
        let ops = ops(&out);
        assert_eq!(origins.len(), ops.len());
        // OpenCL.std is imported, the linkage decoration is gone, the body comes last.
        assert!(ops.contains(&Op::ExtInstImport));
        assert!(!ops.contains(&Op::Decorate));
        let tail = &ops[ops.len() - 7..];
        assert_eq!(
            tail,
            [
                Op::Function,
                Op::FunctionParameter,
                Op::FunctionParameter,
                Op::Label,
                Op::ExtInst,
                Op::ReturnValue,
                Op::FunctionEnd
            ]
        );
        // Instructions from the module keep their offsets; the new ones take the
        // declaration's.
        let declaration = instructions(&words)
            .iter()
            .find(|i| i.op == Op::Function as u32)
            .map(|i| i.at)
            .unwrap();
        assert!(origins[origins.len() - 7..]
            .iter()
            .all(|&o| o == declaration));
        assert!(
            origins.windows(2).take(ops.len() - 8).all(|w| w[0] <= w[1]),
            "{origins:?} {ops:?}"
        );
        // The result parses and validates.
        let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_le_bytes()).collect();
        rspirv::dr::load_bytes(bytes).expect("loads");
    }

    #[test]
    fn a_funnel_shift_of_one_value_is_a_rotation_at_the_call() {
        let words = module("llvm.fshl.i32", false);
        // fshl takes three operands: this import has two, so it keeps its declaration.
        assert!(resolve(&words).is_none());
        let mut b = Builder::new();
        b.set_version(1, 0);
        b.capability(Capability::Linkage);
        b.capability(Capability::Kernel);
        b.memory_model(
            spirv::AddressingModel::Physical64,
            spirv::MemoryModel::OpenCL,
        );
        let uint = b.type_int(32, 0);
        let f_t = b.type_function(uint, vec![uint, uint, uint]);
        let g_t = b.type_function(uint, vec![uint, uint]);
        let f = b
            .begin_function(uint, None, FunctionControl::NONE, f_t)
            .unwrap();
        for _ in 0..3 {
            b.function_parameter(uint).unwrap();
        }
        b.end_function().unwrap();
        b.decorate(
            f,
            Decoration::LinkageAttributes,
            [
                Operand::LiteralString("llvm.fshr.i32".into()),
                Operand::LinkageType(LinkageType::Import),
            ],
        );
        b.begin_function(uint, None, FunctionControl::NONE, g_t)
            .unwrap();
        let x = b.function_parameter(uint).unwrap();
        let y = b.function_parameter(uint).unwrap();
        b.begin_block(None).unwrap();
        let r1 = b.function_call(uint, None, f, [x, x, y]).unwrap();
        let r2 = b.function_call(uint, None, f, [x, y, r1]).unwrap();
        b.ret_value(r2).unwrap();
        b.end_function().unwrap();
        let (out, _) = resolve(&b.module().assemble()).expect("rewritten");
        let ops = ops(&out);
        // The call on (x, x) became a negation and a rotate; the other stays a call.
        assert_eq!(ops.iter().filter(|&&o| o == Op::FunctionCall).count(), 1);
        assert!(ops.contains(&Op::SNegate));
        let rotate = instructions(&out)
            .iter()
            .any(|i| i.op == Op::ExtInst as u32 && i.words[4] == Cl::rotate as u32);
        assert!(rotate);
    }

    #[test]
    fn an_import_of_the_wrong_type_stays_an_import() {
        assert!(resolve(&module("llvm.uadd.sat.i32", true)).is_none());
        assert!(resolve(&module("llvm.ushl.sat.i32", false)).is_none());
        assert!(resolve(&module("my.function", false)).is_none());
    }
}
