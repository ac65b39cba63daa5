//! Half precision (binary16). Cranelift has no f16 arithmetic and no f16 ↔ f32 conversion, so a
//! `half` value lives in a Cranelift `f32` that holds an exactly representable half: comparisons,
//! selects, data movement and conversions to integers then need nothing special. Memory holds
//! the 16-bit encoding, widened at loads and narrowed (exactly) at stores; every arithmetic
//! result with a half type is rounded back to half (`f32` has more than 2·11+2 bits, so rounding
//! the correctly rounded f32 result of + − × ÷ √ again gives the correctly rounded half).
//! Narrowing from f32 to nearest even (the default, so every half arithmetic result) is the
//! rounding pair of half_rounding.rs (hardware conversions in wide code, exact integer code for
//! Cranelift), the encoding of a half for memory is inline (inline_math.rs); narrowing from f64 and integers,
//! and in the other rounding modes, calls `ferrocl-mathlib`'s exact entry points, one per
//! rounding mode, which round the exact significand once. Also here: the OpenCL.std
//! `vload_half*`/`vstore_half*` family (Float16Buffer, always available).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use ferrocl_frontend::spirv::{FPRoundingMode, OpenclStd100Op as Cl, Word};
use ferrocl_frontend::Inst;
use ferrocl_frontend::Type;

use super::function::{err, Translator};
use super::values::Val;
use crate::checked::CheckKind;
use crate::entry_points::{EntryPoint, HalfSource};
use crate::error::BuildError;

impl Translator<'_, '_, '_> {
    /// `ty` is half or a vector of half.
    pub(crate) fn is_half(&self, ty: Word) -> bool {
        match self.m.ty(ty) {
            Some(Type::Float { width: 16 }) => true,
            Some(Type::Vector { elem, .. }) => {
                matches!(self.m.ty(*elem), Some(Type::Float { width: 16 }))
            }
            _ => false,
        }
    }

    /// The device's default rounding, which half arithmetic, un-decorated conversions to half
    /// and `vstore_half` without a suffix use.
    pub(crate) fn default_half_rounding(&self) -> FPRoundingMode {
        if self.options.round_to_zero {
            FPRoundingMode::RTZ
        } else {
            FPRoundingMode::RTE
        }
    }

    /// The f32 value of half encoding `bits` (an i16), exact and inline: normal halves rebias
    /// the exponent (15 → 127), infinities and NaNs keep their payload bit for bit, subnormals
    /// (m · 2^-24) are an exact integer conversion and power-of-two scaling, whatever the
    /// thread's rounding mode.
    pub(crate) fn half_from_bits(&mut self, bits: Value) -> Result<Value, BuildError> {
        let b = &mut self.b;
        let h = b.ins().uextend(types::I32, bits);
        let sign = b.ins().band_imm_s(h, 0x8000);
        let sign = b.ins().ishl_imm_s(sign, 16);
        let magnitude = b.ins().band_imm_s(h, 0x7fff);
        let shifted = b.ins().ishl_imm_s(magnitude, 13);
        let normal = b.ins().iadd_imm_s(shifted, 112 << 23);
        let special = b.ins().bor_imm_s(shifted, 0x7f80_0000);
        let mantissa = b.ins().band_imm_s(h, 0x3ff);
        let m = b.ins().fcvt_from_uint(types::F32, mantissa);
        let scale = b.ins().f32const(2f32.powi(-24));
        let subnormal = b.ins().fmul(m, scale);
        let subnormal = b.ins().bitcast(types::I32, MemFlagsData::new(), subnormal);
        let exponent = b.ins().band_imm_s(h, 0x7c00);
        let is_special = b.ins().icmp_imm_s(IntCC::Equal, exponent, 0x7c00);
        let is_subnormal = b.ins().icmp_imm_s(IntCC::Equal, exponent, 0);
        let wide = b.ins().select(is_special, special, normal);
        let wide = b.ins().select(is_subnormal, subnormal, wide);
        let wide = b.ins().bor(wide, sign);
        Ok(b.ins().bitcast(types::F32, MemFlagsData::new(), wide))
    }

    /// The half encoding (i16) of float `x` (f32 or f64), rounded once in `mode`.
    pub(crate) fn half_bits(
        &mut self,
        x: Value,
        mode: FPRoundingMode,
    ) -> Result<Value, BuildError> {
        let t = self.ty_of(x);
        if t == types::F32 && mode == FPRoundingMode::RTE {
            let h = self.round_to_half_rte(x);
            return Ok(self.half_encoding_inline(h));
        }
        let from = match t {
            types::F32 => HalfSource::F32,
            types::F64 => HalfSource::F64,
            _ => return err(format!("error: conversion of {t} to half\n")),
        };
        let bits = self.call_entry(EntryPoint::ToHalf(from, mode), &[x])?[0];
        Ok(self.b.ins().ireduce(types::I16, bits))
    }

    /// Float `x` rounded to half in `mode`, as the f32 that represents the half.
    pub(crate) fn round_to_half(
        &mut self,
        x: Value,
        mode: FPRoundingMode,
    ) -> Result<Value, BuildError> {
        if self.ty_of(x) == types::F32 && mode == FPRoundingMode::RTE {
            return Ok(self.round_to_half_rte(x));
        }
        let bits = self.half_bits(x, mode)?;
        self.half_from_bits(bits)
    }

    /// Integer `x` → half in `mode` (one rounding of the exact value).
    pub(crate) fn int_to_half(
        &mut self,
        x: Value,
        signed: bool,
        mode: FPRoundingMode,
    ) -> Result<Value, BuildError> {
        let x64 = self.resize_int(x, types::I64, signed);
        let from = if signed {
            HalfSource::I64
        } else {
            HalfSource::U64
        };
        let bits = self.call_entry(EntryPoint::ToHalf(from, mode), &[x64])?[0];
        let bits = self.b.ins().ireduce(types::I16, bits);
        self.half_from_bits(bits)
    }

    /// Loads one half from `addr + offset` as its f32 value.
    pub(crate) fn load_half(&mut self, addr: Value, offset: i32) -> Result<Value, BuildError> {
        let bits = self
            .b
            .ins()
            .load(types::I16, MemFlagsData::new(), addr, offset);
        self.half_from_bits(bits)
    }

    /// The encoding (i16) of half value `x` (an f32 holding a half), bit for bit: NaN payloads
    /// and signalling NaNs pass unchanged, as a data move must keep them.
    pub(crate) fn half_encoding(&mut self, x: Value) -> Result<Value, BuildError> {
        Ok(self.half_encoding_inline(x))
    }

    /// A widening conversion's result: IEEE conversions return a signalling NaN quieted (the
    /// payload stays).
    pub(crate) fn quiet_nan(&mut self, x: Value) -> Value {
        let bits = self.b.ins().bitcast(types::I32, MemFlagsData::new(), x);
        let quieted = self.b.ins().bor_imm_s(bits, 0x0040_0000);
        let quieted = self
            .b
            .ins()
            .bitcast(types::F32, MemFlagsData::new(), quieted);
        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        self.b.ins().select(nan, quieted, x)
    }

    /// Stores half value `x` (an f32 holding a half) at `addr + offset`, bit for bit.
    pub(crate) fn store_half(
        &mut self,
        x: Value,
        addr: Value,
        offset: i32,
    ) -> Result<(), BuildError> {
        let bits = self.half_encoding(x)?;
        self.b.ins().store(MemFlagsData::new(), bits, addr, offset);
        Ok(())
    }

    /// Rounds the result of an arithmetic instruction to half when its type is half-based.
    pub(crate) fn round_half_result(&mut self, ty: Word, v: Val) -> Result<Val, BuildError> {
        if !self.is_half(ty) {
            return Ok(v);
        }
        let mode = self.default_half_rounding();
        v.map(&mut |x| self.round_to_half(x, mode))
    }

    /// `fma` on halves: the product of two halves is exact in f64 and the sum rounds once to
    /// f64 before the rounding to half. That second rounding cannot move a result across a half
    /// midpoint: an inexact f64 sum means the addends are ≥ 2^31 apart, and the larger one is
    /// either a half (never a midpoint, and far from one) or a 22-bit product, which sits on a
    /// midpoint exactly or ≥ 2^-21 of its magnitude away while the f64 error is ≤ 2^-53 of it.
    pub(crate) fn half_fma(&mut self, a: Value, b: Value, c: Value) -> Result<Value, BuildError> {
        let [a, b, c] = [a, b, c].map(|v| self.b.ins().fpromote(types::F64, v));
        let p = self.b.ins().fmul(a, b);
        let s = self.b.ins().fadd(p, c);
        let mode = self.default_half_rounding();
        self.round_to_half(s, mode)
    }

    /// The `vload_half`, `vload_halfn`, `vloada_halfn`, `vstore_half[_r]`, `vstore_halfn[_r]`
    /// and `vstorea_halfn[_r]` instructions: halves in memory, float (or double, for stores)
    /// values.
    pub(crate) fn half_vector_memory(&mut self, inst: Inst<'_>, op: Cl) -> Result<(), BuildError> {
        // Literal operands (n, the rounding mode) arrive as ids or literals depending on how
        // the parser read them; both name the number.
        let args = inst.ext_args();
        let address = |t: &mut Self, offset: Value, base: Value, stride: i64| -> Value {
            let off = t.sext_i64(offset);
            let scaled = t.b.ins().imul_imm_s(off, 2 * stride);
            t.b.ins().iadd(base, scaled)
        };
        match op {
            Cl::vload_half | Cl::vload_halfn | Cl::vloada_halfn => {
                let rt = self.result_type(inst)?;
                let n = match self.m.ty(rt) {
                    Some(Type::Vector { count, .. }) => *count,
                    Some(Type::Float { width: 32 }) => 1,
                    _ => {
                        return err(format!(
                            "error: OpenCL.std {op:?} must return float or floatn\n"
                        ))
                    }
                };
                let load = args.vector_load()?;
                if op != Cl::vload_half && load.n != Some(n) {
                    return err(format!(
                        "error: OpenCL.std {op:?}: n does not match the result's {n} components\n"
                    ));
                }
                if op == Cl::vload_half && n != 1 {
                    return err("error: OpenCL.std vload_half must return a scalar float\n");
                }
                let stride = if op == Cl::vloada_halfn && n == 3 {
                    4
                } else {
                    n
                };
                let (offset, ptr) = (load.offset, load.pointer);
                let offset = self.scalar(offset)?;
                let base = self.scalar(ptr)?;
                let addr = address(self, offset, base, i64::from(stride));
                self.check_access(ptr, addr, 2 * u64::from(n), CheckKind::Read)?;
                let mut lanes = (0..n as i32)
                    .map(|i| {
                        let x = self.load_half(addr, 2 * i)?;
                        Ok::<_, BuildError>(Val::S(self.quiet_nan(x)))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let v = if n == 1 {
                    lanes.pop().expect("one lane")
                } else {
                    Val::C(lanes)
                };
                self.define(inst, v)
            }
            _ => {
                let rounded = matches!(
                    op,
                    Cl::vstore_half_r | Cl::vstore_halfn_r | Cl::vstorea_halfn_r
                );
                let store = args.vector_store()?;
                let mode = if rounded {
                    match store.mode.and_then(FPRoundingMode::from_u32) {
                        Some(m) => m,
                        None => {
                            return err(format!(
                                "error: OpenCL.std {op:?} has no valid rounding mode operand\n"
                            ))
                        }
                    }
                } else {
                    self.default_half_rounding()
                };
                let data = self.value(store.data)?;
                let lanes = data.flat();
                let n = lanes.len() as i64;
                let scalar = matches!(op, Cl::vstore_half | Cl::vstore_half_r);
                if scalar != matches!(data, Val::S(_)) {
                    return err(format!(
                        "error: OpenCL.std {op:?}: data has the wrong number of components\n"
                    ));
                }
                let vector_aligned = matches!(op, Cl::vstorea_halfn | Cl::vstorea_halfn_r);
                let stride = if vector_aligned && n == 3 { 4 } else { n };
                let (offset, ptr) = (store.offset, store.pointer);
                let offset = self.scalar(offset)?;
                let base = self.scalar(ptr)?;
                let addr = address(self, offset, base, stride);
                self.check_access(ptr, addr, 2 * n as u64, CheckKind::Write)?;
                for (i, x) in lanes.into_iter().enumerate() {
                    let bits = self.half_bits(x, mode)?;
                    self.b
                        .ins()
                        .store(MemFlagsData::new(), bits, addr, 2 * i as i32);
                }
                Ok(())
            }
        }
    }
}
