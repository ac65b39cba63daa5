//! Rounding to half, the one operation every `half` arithmetic result needs. Translation
//! writes "the half nearest to f32 `x`, as the f32 holding it" as the pair
//! `fpromote.f32 (fdemote.f16 x)`: what it means, in CLIF's own words. The wide backend
//! gives the pair to LLVM as `fptrunc`/`fpext`, one hardware conversion each way (F16C's
//! VCVTPS2PH/VCVTPH2PS, 8 or 16 lanes at once), and the work-item vectoriser widens it like
//! any conversion. Cranelift lowers no f16 conversion on x86-64, so [`lower_pairs`] turns each
//! pair into the exact integer sequence of [`round_to_half_rte_bits`] before Cranelift, the
//! explicit-vector packer or a round-toward-zero build sees the function (the hardware
//! conversion rounds in the thread's mode, which such a build sets toward zero).
//!
//! An f16 value anywhere but inside a pair is an internal error: translation makes none.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, Function, InstBuilder, InstructionData, MemFlagsData, Opcode, Value,
};

/// Whether `func` holds a rounding pair (an f16 conversion at all).
pub(crate) fn has_pairs(func: &Function) -> bool {
    any_inst(func, is_demote_to_half)
}

/// Whether an instruction of `func` satisfies `test`.
fn any_inst(func: &Function, test: fn(&Function, cranelift_codegen::ir::Inst) -> bool) -> bool {
    func.layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .any(|inst| test(func, inst))
}

fn is_demote_to_half(func: &Function, inst: cranelift_codegen::ir::Inst) -> bool {
    func.dfg.insts[inst].opcode() == Opcode::Fdemote
        && func.dfg.value_type(func.dfg.first_result(inst)).lane_type() == types::F16
}

/// Whether `inst` is one half of a rounding pair on vectors (the vectoriser's, which only
/// the wide backend compiles).
pub(crate) fn is_vector_pair_half(func: &Function, inst: cranelift_codegen::ir::Inst) -> bool {
    let data = &func.dfg.insts[inst];
    let (Some(&arg), Some(&result)) = (
        data.arguments(&func.dfg.value_lists).first(),
        func.dfg.inst_results(inst).first(),
    ) else {
        return false;
    };
    let (from, to) = (func.dfg.value_type(arg), func.dfg.value_type(result));
    matches!(data.opcode(), Opcode::Fdemote | Opcode::Fpromote)
        && from.is_vector()
        && matches!(
            (from.lane_type(), to.lane_type()),
            (types::F32, types::F16) | (types::F16, types::F32)
        )
}

/// `func` for the CLIF verifier, which cannot check (it panics on) the vectoriser's pairs on
/// vectors: each pair's promotion becomes `fabs` of the demotion's operand, so the data flow
/// and every other instruction are checked as they are.
pub(crate) fn verifiable(func: &Function) -> std::borrow::Cow<'_, Function> {
    if !any_inst(func, is_vector_pair_half) {
        return std::borrow::Cow::Borrowed(func);
    }
    let mut copy = func.clone();
    let mut pos = FuncCursor::new(&mut copy);
    while pos.next_block().is_some() {
        while let Some(inst) = pos.next_inst() {
            if pos.func.dfg.insts[inst].opcode() != Opcode::Fpromote
                || !is_vector_pair_half(pos.func, inst)
            {
                continue;
            }
            let h = pos
                .func
                .dfg
                .resolve_aliases(pos.func.dfg.inst_args(inst)[0]);
            let Some(demote) = pos.func.dfg.value_def(h).inst() else {
                continue;
            };
            let x = pos.func.dfg.inst_args(demote)[0];
            pos.func.replace(inst).fabs(x);
        }
    }
    let mut pos = FuncCursor::new(&mut copy);
    while pos.next_block().is_some() {
        while let Some(inst) = pos.next_inst() {
            if is_vector_pair_half(pos.func, inst) {
                pos.remove_inst_and_step_back();
            }
        }
    }
    std::borrow::Cow::Owned(copy)
}

/// Replaces every scalar rounding pair of `func` by [`round_to_half_rte_bits`]' sequence. A pair
/// on vectors (the vectoriser's, for the wide backend) or an f16 value used otherwise is an
/// error: the caller compiles the scalar fallback instead.
pub(crate) fn lower_pairs(func: &mut Function) -> Result<(), String> {
    if !has_pairs(func) {
        return Ok(());
    }
    let mut pos = FuncCursor::new(func);
    while pos.next_block().is_some() {
        while let Some(inst) = pos.next_inst() {
            let InstructionData::Unary {
                opcode: Opcode::Fpromote,
                arg,
            } = pos.func.dfg.insts[inst]
            else {
                continue;
            };
            let arg = pos.func.dfg.resolve_aliases(arg);
            let Some(demote) = pos.func.dfg.value_def(arg).inst() else {
                continue;
            };
            if !is_demote_to_half(pos.func, demote) {
                continue;
            }
            let result_ty = pos.func.dfg.value_type(pos.func.dfg.first_result(inst));
            if result_ty != types::F32 {
                return Err(format!(
                    "internal: a rounding to half on {result_ty} reached Cranelift"
                ));
            }
            let x = pos.func.dfg.inst_args(demote)[0];
            let bits = round_to_half_rte_bits(&mut pos, x);
            // The pair's result keeps its value number: explicit vectors' lane lists name it.
            pos.func
                .replace(inst)
                .bitcast(types::F32, MemFlagsData::new(), bits);
        }
    }
    // The demotions are unused now; any f16 value still used is not a pair's.
    let mut used = std::collections::HashSet::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            used.extend(
                func.dfg
                    .inst_values(inst)
                    .map(|v| func.dfg.resolve_aliases(v)),
            );
        }
    }
    let mut pos = FuncCursor::new(func);
    while pos.next_block().is_some() {
        while let Some(inst) = pos.next_inst() {
            if !is_demote_to_half(pos.func, inst) {
                continue;
            }
            if used.contains(&pos.func.dfg.first_result(inst)) {
                return Err("internal: an f16 value outside a rounding to half".into());
            }
            pos.remove_inst_and_step_back();
        }
    }
    Ok(())
}

/// The bit pattern of the half nearest (ties to even) to f32 `x`, as the f32 holding it —
/// exact in every thread rounding mode. Normal halves: the f32 pattern rounded at the half's
/// last mantissa bit (a carry steps the exponent, up to infinity at 65520); subnormal halves:
/// |x|·2^24 rounded to an integer by `nearest` (the scalings are exact); NaNs come out quiet
/// with the top 10 payload bits, as mathlib's `f32_to_f16_rounded` + widening give (and as
/// the hardware conversions do).
fn round_to_half_rte_bits(pos: &mut FuncCursor, x: Value) -> Value {
    let bits = pos.ins().bitcast(types::I32, MemFlagsData::new(), x);
    let abs = pos.ins().band_imm_s(bits, 0x7fff_ffff);
    let sign = pos.ins().band_imm_s(bits, i64::from(i32::MIN));
    let last = pos.ins().ushr_imm_s(abs, 13);
    let last = pos.ins().band_imm_s(last, 1);
    let r = pos.ins().iadd_imm_s(abs, 0xfff);
    let r = pos.ins().iadd(r, last);
    let r = pos.ins().band_imm_s(r, !0x1fff);
    let overflow = pos
        .ins()
        .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, r, 0x4780_0000);
    let inf = pos.ins().iconst(types::I32, 0x7f80_0000);
    let r = pos.ins().select(overflow, inf, r);
    let ax = pos.ins().fabs(x);
    let up = pos.ins().f32const(2f32.powi(24));
    let units = pos.ins().fmul(ax, up);
    let units = pos.ins().nearest(units);
    let down = pos.ins().f32const(2f32.powi(-24));
    let small = pos.ins().fmul(units, down);
    let small = pos.ins().bitcast(types::I32, MemFlagsData::new(), small);
    let is_small = pos
        .ins()
        .icmp_imm_s(IntCC::UnsignedLessThan, abs, 0x3880_0000);
    let r = pos.ins().select(is_small, small, r);
    let nan = pos.ins().band_imm_s(abs, !0x1fff);
    let nan = pos.ins().bor_imm_s(nan, 0x0040_0000);
    let is_nan = pos
        .ins()
        .icmp_imm_s(IntCC::UnsignedGreaterThan, abs, 0x7f80_0000);
    let r = pos.ins().select(is_nan, nan, r);
    pos.ins().bor(r, sign)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::llvm_ir::tests::build_unverified;

    /// `f(x) = round(x) + round(round(x))` with rounding pairs.
    fn paired() -> Function {
        build_unverified(&[types::F32], &[types::F32], |b, p| {
            let h = b.ins().fdemote(types::F16, p[0]);
            let once = b.ins().fpromote(types::F32, h);
            let h = b.ins().fdemote(types::F16, once);
            let twice = b.ins().fpromote(types::F32, h);
            vec![b.ins().fadd(once, twice)]
        })
    }

    fn verify(func: &Function) {
        let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
        cranelift_codegen::verify_function(func, &flags)
            .unwrap_or_else(|e| panic!("{e}\n{}", func.display()));
    }

    #[test]
    fn pairs_become_integer_code_and_no_f16_is_left() {
        let mut func = paired();
        assert!(has_pairs(&func));
        lower_pairs(&mut func).unwrap();
        assert!(!has_pairs(&func));
        let text = func.display().to_string();
        assert!(!text.contains("f16"), "{text}");
        assert_eq!(text.matches("nearest").count(), 2, "{text}");
        verify(&func);
    }

    #[test]
    fn an_f16_value_used_outside_a_pair_is_refused() {
        let mut func = paired();
        // The demotion's bits used too: an f16 use that is not a promotion.
        let mut pos = FuncCursor::new(&mut func);
        pos.next_block();
        let demote = pos.next_inst().unwrap();
        let h = pos.func.dfg.first_result(demote);
        pos.goto_last_inst(pos.current_block().unwrap());
        let bits = pos.ins().bitcast(types::I16, MemFlagsData::new(), h);
        pos.ins().uextend(types::I32, bits);
        assert!(lower_pairs(&mut func).is_err());
    }

    #[test]
    fn vector_pairs_are_left_to_the_caller() {
        let mut func = build_unverified(&[types::F32X4], &[types::F32X4], |b, p| {
            let h = b.ins().fdemote(types::F16X4, p[0]);
            vec![b.ins().fpromote(types::F32X4, h)]
        });
        assert!(lower_pairs(&mut func).is_err());
        // The verifier sees the pair as the operand's `fabs`.
        let checked = verifiable(&func);
        let text = checked.display().to_string();
        assert!(!text.contains("f16") && text.contains("fabs"), "{text}");
        verify(checked.as_ref());
    }
}
