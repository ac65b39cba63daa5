//! Conversion opcodes. Float→integer conversions saturate and map NaN to 0 (what OpenCL's
//! `_sat` forms require, and a defined result for the plain forms, whose out-of-range results
//! are unspecified) — Cranelift's plain `fcvt_to_*int` would trap. `FPRoundingMode` and
//! `SaturatedConversion` decorations are honoured (rounding.rs).

use cranelift_codegen::ir::{
    types, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value,
};
use ferrocl_frontend::spirv::Op;
use ferrocl_frontend::Inst;
use ferrocl_frontend::Type;

use super::function::{err, Translator};
use super::values::Val;
use crate::error::BuildError;

impl Translator<'_, '_, '_> {
    pub(crate) fn convert(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        use Op::*;
        let op = inst.opcode();
        let rt = self.result_type(inst)?;
        let src_id = inst.unary()?.value;
        let a = self.value(src_id)?;
        if op == Bitcast {
            let src_ty = self
                .m
                .type_of(src_id)
                .ok_or_else(|| BuildError::new("error: bitcast source has no type\n"))?;
            let v = self.bitcast(&a, src_ty, rt)?;
            self.define(inst, v)?;
            return Ok(());
        }
        let src_ty = self.m.type_of(src_id).unwrap_or(0);
        let (to_half, from_half) = (self.is_half(rt), self.is_half(src_ty));
        let shape = self.shape_of_type(rt)?;
        let mut tys = Vec::new();
        shape.leaf_types(&mut tys);
        let to = tys[0];
        let id = inst.result_id().unwrap_or(0);
        let mode = self.rounding_of(id);
        let saturated = self.is_saturated(id);
        let v = a.map(&mut |x| {
            Ok(match op {
                ConvertFToU | ConvertFToS => {
                    let x = self.round_integral(x, mode);
                    self.float_to_int(x, to, op == ConvertFToS)
                }
                ConvertSToF | ConvertUToF if to_half => {
                    let mode = mode.unwrap_or_else(|| self.default_half_rounding());
                    self.int_to_half(x, op == ConvertSToF, mode)?
                }
                ConvertSToF | ConvertUToF if mode.is_some() => {
                    let mode = mode.expect("checked by the guard");
                    self.int_to_float_rounded(x, op == ConvertSToF, to, mode)
                }
                ConvertSToF | ConvertUToF => {
                    let signed = op == ConvertSToF;
                    let x = if self.ty_of(x).bits() < 32 {
                        self.resize_int(x, types::I32, signed)
                    } else {
                        x
                    };
                    if signed {
                        self.b.ins().fcvt_from_sint(to, x)
                    } else {
                        self.b.ins().fcvt_from_uint(to, x)
                    }
                }
                UConvert if saturated => self.saturate_int(x, to, false, false),
                SConvert if saturated => self.saturate_int(x, to, true, true),
                UConvert | ConvertPtrToU | ConvertUToPtr => self.resize_int(x, to, false),
                SConvert => self.resize_int(x, to, true),
                // Half → f32 is the value itself; half → f64 widens exactly.
                FConvert if from_half && to == types::F32 => self.quiet_nan(x),
                FConvert if from_half => {
                    let x = self.quiet_nan(x);
                    self.b.ins().fpromote(to, x)
                }
                FConvert if to_half => {
                    let x = self.ftz(x);
                    let mode = mode.unwrap_or_else(|| self.default_half_rounding());
                    self.round_to_half(x, mode)?
                }
                FConvert => {
                    let x = self.ftz(x);
                    let from = self.ty_of(x);
                    if from == to {
                        x
                    } else if from.bits() < to.bits() {
                        self.b.ins().fpromote(to, x)
                    } else {
                        let r = match mode {
                            Some(mode) => self.demote_rounded(x, mode),
                            None => self.b.ins().fdemote(to, x),
                        };
                        self.ftz(r)
                    }
                }
                // Generic pointers are flat addresses; GenericCastToPtr is undefined when the
                // storage class is wrong, so it needs no check (the explicit cast, which must
                // answer NULL then, is in generic.rs).
                PtrCastToGeneric | GenericCastToPtr => x,
                SatConvertSToU => self.saturate_int(x, to, true, false),
                SatConvertUToS => self.saturate_int(x, to, false, true),
                other => return err(format!("error: Op{other:?} is not supported yet\n")),
            })
        })?;
        self.define(inst, v)?;
        Ok(())
    }

    fn float_to_int(&mut self, x: Value, to: types::Type, signed: bool) -> Value {
        let wide = if to.bits() < 32 { types::I32 } else { to };
        let r = if signed {
            self.b.ins().fcvt_to_sint_sat(wide, x)
        } else {
            self.b.ins().fcvt_to_uint_sat(wide, x)
        };
        if wide != to {
            // Saturate to the narrow range too, so `_sat` semantics hold for char/short.
            let narrowed = self.saturate_int(r, to, signed, signed);
            return narrowed;
        }
        r
    }

    /// Converts integer `x` (signed if `from_signed`) to `to`, clamping to `to`'s range.
    pub(crate) fn saturate_int(
        &mut self,
        x: Value,
        to: types::Type,
        from_signed: bool,
        to_signed: bool,
    ) -> Value {
        let from = self.ty_of(x);
        let bits = to.bits();
        let (lo, hi): (i128, i128) = if to_signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        let fb = from.bits();
        let (flo, fhi): (i128, i128) = if from_signed {
            (-(1i128 << (fb - 1)), (1i128 << (fb - 1)) - 1)
        } else {
            (0, (1i128 << fb) - 1)
        };
        let mut v = x;
        use cranelift_codegen::ir::condcodes::IntCC;
        if hi < fhi {
            let cc = if from_signed {
                IntCC::SignedGreaterThan
            } else {
                IntCC::UnsignedGreaterThan
            };
            let over = self.b.ins().icmp_imm_s(cc, v, hi as i64);
            let hiv = self.b.ins().iconst(from, hi as i64);
            v = self.b.ins().select(over, hiv, v);
        }
        if lo > flo {
            let cc = if from_signed {
                IntCC::SignedLessThan
            } else {
                IntCC::UnsignedLessThan
            };
            let under = self.b.ins().icmp_imm_s(cc, v, lo as i64);
            let lov = self.b.ins().iconst(from, lo as i64);
            v = self.b.ins().select(under, lov, v);
        }
        self.resize_int(v, to, from_signed)
    }

    /// Reinterprets the bits of `v` (type `from`) as type `to`.
    fn bitcast(&mut self, v: &Val, from: u32, to: u32) -> Result<Val, BuildError> {
        let to_shape = self.shape_of_type(to)?;
        let mut to_tys = Vec::new();
        to_shape.leaf_types(&mut to_tys);
        let leaves = v.flat();
        let from_tys: Vec<types::Type> = leaves.iter().map(|&l| self.ty_of(l)).collect();
        // Halves are f32 leaves holding 16-bit data: they go through memory's encoding.
        if !self.is_half(from)
            && !self.is_half(to)
            && from_tys.len() == to_tys.len()
            && from_tys
                .iter()
                .zip(&to_tys)
                .all(|(a, b)| a.bits() == b.bits())
        {
            let out: Vec<Value> = leaves
                .iter()
                .zip(&to_tys)
                .map(|(&l, &t)| {
                    if self.ty_of(l) == t {
                        l
                    } else {
                        self.b.ins().bitcast(t, MemFlagsData::new(), l)
                    }
                })
                .collect();
            return to_shape.assemble(&mut out.into_iter());
        }
        // Different component counts (e.g. uchar4 ↔ uint): go through a stack slot.
        let size = self.m.size_of(from).unwrap_or(0);
        if size != self.m.size_of(to).unwrap_or(u64::MAX)
            && !matches!(self.m.ty(to), Some(Type::Vector { count: 3, .. }))
        {
            return err(format!(
                "error: OpBitcast between types of different sizes ({size} bytes to %{to})\n"
            ));
        }
        let slot =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 128, 4));
        let addr = self.b.ins().stack_addr(types::I64, slot, 0);
        self.store_val(from, addr, v)?;
        self.load_val(to, addr)
    }
}
