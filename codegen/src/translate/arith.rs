//! Arithmetic, bitwise, comparison, logical and relational opcodes, component-wise over
//! scalarised vectors. Integer division never traps: OpenCL leaves x/0 and INT_MIN/-1
//! unspecified, Cranelift would raise SIGFPE.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self, types, InstBuilder, Value};
use ferrocl_frontend::spirv::Op;
use ferrocl_frontend::Inst;

use super::function::{err, Translator};
use super::values::Val;
use crate::entry_points::{precision_of, EntryPoint};
use crate::error::BuildError;

impl Translator<'_, '_, '_> {
    /// `x & y`, with the zero-extension idiom for a 64-bit mask of the low 32 bits (llvm-spirv
    /// writes `(ulong)(uint)x` that way): x64 would load the mask from memory, a 32-bit move
    /// clears the high half for free.
    fn band(&mut self, x: Value, y: Value) -> Value {
        let low_half = |t: &Self, v: Value| t.int_constant(v) == Some(0xffff_ffff);
        if self.ty_of(x) == types::I64 {
            for (v, mask) in [(x, y), (y, x)] {
                if low_half(self, mask) {
                    let low = self.b.ins().ireduce(types::I32, v);
                    return self.b.ins().uextend(types::I64, low);
                }
            }
        }
        self.b.ins().band(x, y)
    }

    /// The value of `v` if it is an `iconst`.
    pub(crate) fn int_constant(&self, v: Value) -> Option<i64> {
        let inst = self.b.func.dfg.value_def(v).inst()?;
        match self.b.func.dfg.insts[inst] {
            ir::InstructionData::UnaryImm {
                opcode: ir::Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        }
    }

    pub(crate) fn ty_of(&self, v: Value) -> types::Type {
        self.b.func.dfg.value_type(v)
    }

    /// Flush-to-zero for single precision (`-cl-denorms-are-zero` or `FERROCL_FTZ=on`):
    /// a denormal `f32` becomes a zero of the same sign; other values and types pass. Applied
    /// per operation to inputs and results, so doubles keep their denormals (env spec 6.7.3
    /// allows either sign for the flushed zero; keeping it is the natural choice).
    pub(crate) fn ftz(&mut self, v: Value) -> Value {
        if !self.options.denorms_are_zero || self.ty_of(v) != types::F32 {
            return v;
        }
        let abs = self.b.ins().fabs(v);
        let min_normal = self.b.ins().f32const(f32::MIN_POSITIVE);
        let tiny = self.b.ins().fcmp(FloatCC::LessThan, abs, min_normal);
        let zero = self.b.ins().f32const(0.0);
        let signed_zero = self.b.ins().fcopysign(zero, v);
        self.b.ins().select(tiny, signed_zero, v)
    }

    pub(crate) fn ftz_val(&mut self, v: &Val) -> Result<Val, BuildError> {
        v.map(&mut |x| Ok(self.ftz(x)))
    }

    /// The bits of `v`'s type if `v` is an `iconst` (however the immediate extends them).
    fn constant_bits(&self, v: Value) -> Option<u64> {
        let all = u64::MAX >> (64 - self.ty_of(v).bits());
        self.int_constant(v).map(|k| k as u64 & all)
    }

    /// Divisor safe for `udiv`/`urem`: 0 becomes 1 (a nonzero constant is already safe, and
    /// stays a constant the division can be specialised for).
    fn safe_unsigned_divisor(&mut self, d: Value) -> Value {
        if self.constant_bits(d).is_some_and(|k| k != 0) {
            return d;
        }
        let t = self.ty_of(d);
        let one = self.b.ins().iconst(t, 1);
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, d, 0);
        self.b.ins().select(is_zero, one, d)
    }

    /// Divisor safe for `sdiv`/`srem`: 0 becomes 1, and -1 becomes 1 when the dividend is MIN.
    fn safe_signed_divisor(&mut self, n: Value, d: Value) -> Value {
        let all = u64::MAX >> (64 - self.ty_of(d).bits());
        if self.constant_bits(d).is_some_and(|k| k != 0 && k != all) {
            return d;
        }
        let t = self.ty_of(d);
        let d = self.safe_unsigned_divisor(d);
        let min = match t.bits() {
            8 => i64::from(i8::MIN),
            16 => i64::from(i16::MIN),
            32 => i64::from(i32::MIN),
            _ => i64::MIN,
        };
        let n_min = self.b.ins().icmp_imm_s(IntCC::Equal, n, min);
        let d_neg1 = self.b.ins().icmp_imm_s(IntCC::Equal, d, -1);
        let both = self.b.ins().band(n_min, d_neg1);
        let one = self.b.ins().iconst(t, 1);
        self.b.ins().select(both, one, d)
    }

    pub(crate) fn fmod_call(&mut self, a: Value, b: Value) -> Result<Value, BuildError> {
        let t = self.ty_of(a);
        let precision = precision_of(t)
            .ok_or_else(|| BuildError::new(format!("error: floating remainder on {t}\n")))?;
        Ok(self.call_entry(EntryPoint::Fmod(precision), &[a, b])?[0])
    }

    /// One component of OpBitFieldInsert / OpBitFieldSExtract / OpBitFieldUExtract. Shifts by
    /// the full width are avoided: Cranelift takes shift amounts modulo the width.
    fn bit_field(
        &mut self,
        op: Op,
        base: Value,
        insert: Option<Value>,
        offset: Value,
        count: Value,
    ) -> Result<Value, BuildError> {
        let t = self.ty_of(base);
        let width = i64::from(t.bits());
        let offset = self.resize_int(offset, t, false);
        let count = self.resize_int(count, t, false);
        let zero = self.b.ins().iconst(t, 0);
        let ones = self.b.ins().iconst(t, -1);
        let no_bits = self.b.ins().icmp_imm_s(IntCC::Equal, count, 0);
        let w = self.b.ins().iconst(t, width);
        let spare = self.b.ins().isub(w, count);
        // count low ones (garbage when count is 0; selected away below).
        let low = self.b.ins().ushr(ones, spare);
        Ok(match op {
            Op::BitFieldInsert => {
                let mask = self.b.ins().ishl(low, offset);
                let mask = self.b.ins().select(no_bits, zero, mask);
                let shifted = self
                    .b
                    .ins()
                    .ishl(insert.expect("BitFieldInsert has an Insert"), offset);
                let kept = self.b.ins().band_not(base, mask);
                let placed = self.b.ins().band(shifted, mask);
                self.b.ins().bor(kept, placed)
            }
            Op::BitFieldUExtract => {
                let down = self.b.ins().ushr(base, offset);
                let field = self.b.ins().band(down, low);
                self.b.ins().select(no_bits, zero, field)
            }
            _ => {
                let above = self.b.ins().isub(spare, offset);
                let up = self.b.ins().ishl(base, above);
                let field = self.b.ins().sshr(up, spare);
                self.b.ins().select(no_bits, zero, field)
            }
        })
    }

    /// OpSDot, OpUDot, OpSUDot and their AccSat forms (SPV_KHR_integer_dot_product, SPIR-V
    /// 1.6): components extended by the operands' signedness (SU: first signed, second
    /// unsigned), multiplied and summed exactly; the plain forms keep the low bits of the
    /// result width, the AccSat forms add the accumulator and saturate to the result type
    /// (signed unless both operands are unsigned). With PackedVectorFormat4x8Bit the operands
    /// are 32-bit scalars holding four 8-bit components, lowest byte first.
    pub(crate) fn integer_dot(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        let (signed_a, signed_b) = match op {
            Op::SDot | Op::SDotAccSat => (true, true),
            Op::UDot | Op::UDotAccSat => (false, false),
            _ => (true, false),
        };
        let dot = inst.integer_dot()?;
        let packed = dot.packed;
        let rt = self.result_type(inst)?;
        let result_ty = match self.shape_of_type(rt)? {
            super::values::Shape::S(t) if t.is_int() => t,
            _ => {
                return err(format!(
                    "error: Op{op:?} result must be an integer scalar\n"
                ))
            }
        };
        let components = |t: &mut Self, v: Val| -> Result<Vec<Value>, BuildError> {
            if !packed {
                return Ok(v.flat());
            }
            let word = v.scalar()?;
            if t.ty_of(word) != types::I32 {
                return err(format!(
                    "error: Op{op:?} with PackedVectorFormat4x8Bit needs 32-bit operands\n"
                ));
            }
            Ok(t.unpack_4x8(word))
        };
        let a = self.value(dot.a)?;
        let b = self.value(dot.b)?;
        let xs = components(self, a)?;
        let ys = components(self, b)?;
        if xs.len() != ys.len() || xs.is_empty() {
            return err(format!(
                "error: Op{op:?} operands differ in component count\n"
            ));
        }
        let acc = match dot.accumulator {
            Some(id) => Some(self.scalar(id)?),
            None => None,
        };
        let r = self.dot_values(op, &xs, &ys, (signed_a, signed_b), acc, result_ty)?;
        self.define(inst, Val::S(r))
    }

    /// The exact dot product of `xs` and `ys` (signedness of each side), truncated to
    /// `result_ty`, or with `acc` added and saturated to it (signed unless both sides are
    /// unsigned).
    pub(crate) fn dot_values(
        &mut self,
        op: Op,
        xs: &[Value],
        ys: &[Value],
        (signed_a, signed_b): (bool, bool),
        acc: Option<Value>,
        result_ty: types::Type,
    ) -> Result<Value, BuildError> {
        let in_bits = self.ty_of(xs[0]).bits();
        // Exact in this width: |products| < 2^(2w), at most 16 of them, plus a 64-bit
        // accumulator.
        let wide = if 2 * in_bits + 4 < 62 && result_ty.bits() < 64 {
            types::I64
        } else {
            types::I128
        };
        if in_bits > 32 {
            return err(format!(
                "error: Op{op:?} on {in_bits}-bit components is not supported (DotProductInputAll is not a device capability)\n"
            ));
        }
        let mut sum = self.wide_const(wide, 0);
        for (&x, &y) in xs.iter().zip(ys) {
            let wx = self.resize_int(x, wide, signed_a);
            let wy = self.resize_int(y, wide, signed_b);
            let p = self.b.ins().imul(wx, wy);
            sum = self.b.ins().iadd(sum, p);
        }
        Ok(if let Some(acc) = acc {
            let result_signed = signed_a || signed_b;
            let wacc = self.resize_int(acc, wide, result_signed);
            let total = self.b.ins().iadd(sum, wacc);
            // Unsigned: the sum of products and the accumulator are non-negative and below
            // 2^64 + 2^70, so a signed comparison in the wide type is exact for both kinds.
            let clamped = self.saturate(total, result_ty.bits(), result_signed, true);
            self.resize_int(clamped, result_ty, result_signed)
        } else {
            self.resize_int(sum, result_ty, false)
        })
    }

    /// The four bytes of a 32-bit word, lowest first (PackedVectorFormat4x8Bit).
    pub(crate) fn unpack_4x8(&mut self, word: Value) -> Vec<Value> {
        (0..4)
            .map(|k| {
                let shifted = self.b.ins().ushr_imm_s(word, 8 * k);
                self.b.ins().ireduce(types::I8, shifted)
            })
            .collect()
    }

    /// cl_khr_integer_dot_product's packed functions, which llvm-spirv-15 leaves as calls to
    /// imported functions (`dot_4x8packed_ss_int`, `dot_acc_sat_4x8packed_us_int`, … by their
    /// mangled names) instead of OpSDot & co. with PackedVectorFormat4x8Bit: computed as those
    /// instructions would be. None for any other name.
    pub(crate) fn packed_dot_call(
        &mut self,
        mangled: &str,
        args: &[Val],
    ) -> Result<Option<Val>, BuildError> {
        let Some(name) = ferrocl_frontend::itanium_name(mangled) else {
            return Ok(None);
        };
        let (accumulate, rest) = if let Some(r) = name.strip_prefix("dot_acc_sat_4x8packed_") {
            (true, r)
        } else if let Some(r) = name.strip_prefix("dot_4x8packed_") {
            (false, r)
        } else {
            return Ok(None);
        };
        let (signed_a, signed_b, result_ty) = match rest.get(..2) {
            Some("uu") if rest.starts_with("uu_uint") => (false, false, types::I32),
            Some("ss") if rest.starts_with("ss_int") => (true, true, types::I32),
            Some("us") if rest.starts_with("us_int") => (false, true, types::I32),
            Some("su") if rest.starts_with("su_int") => (true, false, types::I32),
            _ => return Ok(None),
        };
        let expected = if accumulate { 3 } else { 2 };
        if args.len() != expected {
            return err(format!(
                "error: {mangled} takes {expected} arguments, found {}\n",
                args.len()
            ));
        }
        let (a, b) = (args[0].scalar()?, args[1].scalar()?);
        if self.ty_of(a) != types::I32 || self.ty_of(b) != types::I32 {
            return err(format!("error: {mangled} takes 32-bit words\n"));
        }
        let xs = self.unpack_4x8(a);
        let ys = self.unpack_4x8(b);
        let acc = if accumulate {
            Some(args[2].scalar()?)
        } else {
            None
        };
        let op = if accumulate { Op::SDotAccSat } else { Op::SDot };
        let r = self.dot_values(op, &xs, &ys, (signed_a, signed_b), acc, result_ty)?;
        Ok(Some(Val::S(r)))
    }

    pub(crate) fn arith(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        use Op::*;
        let op = inst.opcode();
        let a = self.value(inst.unary()?.value)?;
        let v = match op {
            SNegate => a.map(&mut |x| Ok(self.b.ins().ineg(x)))?,
            FNegate => a.map(&mut |x| Ok(self.b.ins().fneg(x)))?,
            Not => a.map(&mut |x| Ok(self.b.ins().bnot(x)))?,
            BitCount => {
                let rt = self.result_type(inst)?;
                let rs = self.shape_of_type(rt)?;
                let mut tys = Vec::new();
                rs.leaf_types(&mut tys);
                let rt = tys[0];
                a.map(&mut |x| {
                    let c = self.b.ins().popcnt(x);
                    Ok(self.resize_int(c, rt, false))
                })?
            }
            BitReverse => a.map(&mut |x| Ok(self.b.ins().bitrev(x)))?,
            BitFieldInsert | BitFieldSExtract | BitFieldUExtract => {
                // Offset and Count are integer scalars of any width (SPV_KHR_bit_instructions);
                // the results are undefined when Offset + Count exceeds the width.
                let field = inst.bit_field()?;
                let offset = self.scalar(field.offset)?;
                let count = self.scalar(field.count)?;
                let insert = match field.insert {
                    Some(id) => Some(self.value(id)?),
                    None => None,
                };
                let apply = |t: &mut Self, base: Value, ins: Option<Value>| {
                    t.bit_field(op, base, ins, offset, count)
                };
                match insert {
                    Some(ins) => a.zip(&ins, &mut |x, y| apply(self, x, Some(y)))?,
                    None => a.map(&mut |x| apply(self, x, None))?,
                }
            }
            Dot => {
                let b = self.value(inst.binary()?.b)?;
                let (a, b) = (self.ftz_val(&a)?, self.ftz_val(&b)?);
                let (xs, ys) = (a.flat(), b.flat());
                let mut acc = self.b.ins().fmul(xs[0], ys[0]);
                for (x, y) in xs.iter().zip(&ys).skip(1) {
                    let p = self.b.ins().fmul(*x, *y);
                    acc = self.b.ins().fadd(acc, p);
                }
                Val::S(self.ftz(acc))
            }
            IAddCarry | ISubBorrow | UMulExtended | SMulExtended => {
                let b = self.value(inst.binary()?.b)?;
                let (xs, ys) = (a.flat(), b.flat());
                let mut lo = Vec::new();
                let mut hi = Vec::new();
                for (&x, &y) in xs.iter().zip(&ys) {
                    let t = self.ty_of(x);
                    let (l, h) = match op {
                        IAddCarry => {
                            let s = self.b.ins().iadd(x, y);
                            let c = self.b.ins().icmp(IntCC::UnsignedLessThan, s, x);
                            (s, self.resize_int(c, t, false))
                        }
                        ISubBorrow => {
                            let s = self.b.ins().isub(x, y);
                            let c = self.b.ins().icmp(IntCC::UnsignedLessThan, x, y);
                            (s, self.resize_int(c, t, false))
                        }
                        UMulExtended => (self.b.ins().imul(x, y), self.b.ins().umulhi(x, y)),
                        _ => (self.b.ins().imul(x, y), self.b.ins().smulhi(x, y)),
                    };
                    lo.push(Val::S(l));
                    hi.push(Val::S(h));
                }
                let pack = |v: Vec<Val>| {
                    if v.len() == 1 {
                        v.into_iter().next().expect("one")
                    } else {
                        Val::C(v)
                    }
                };
                Val::C(vec![pack(lo), pack(hi)])
            }
            VectorTimesScalar => {
                let s = self.value(inst.binary()?.b)?;
                a.zip(&s, &mut |x, y| {
                    let (x, y) = (self.ftz(x), self.ftz(y));
                    let r = self.b.ins().fmul(x, y);
                    Ok(self.ftz(r))
                })?
            }
            _ => {
                let b = self.value(inst.binary()?.b)?;
                a.zip(&b, &mut |x, y| self.binary(op, x, y))?
            }
        };
        let v = if matches!(
            op,
            FAdd | FSub | FMul | FDiv | FRem | FMod | VectorTimesScalar | Dot
        ) {
            self.round_half_result(self.result_type(inst)?, v)?
        } else {
            v
        };
        self.define(inst, v)?;
        Ok(())
    }

    fn binary(&mut self, op: Op, x: Value, y: Value) -> Result<Value, BuildError> {
        use Op::*;
        if matches!(op, FAdd | FSub | FMul | FDiv | FRem | FMod) {
            let (x, y) = (self.ftz(x), self.ftz(y));
            let r = self.float_binary(op, x, y)?;
            return Ok(self.ftz(r));
        }
        if matches!(op, UDiv | UMod | SDiv | SRem | SMod) {
            self.check_divisor(op, y)?;
        }
        Ok(match op {
            IAdd => self.b.ins().iadd(x, y),
            ISub => self.b.ins().isub(x, y),
            IMul => self.b.ins().imul(x, y),
            UDiv => {
                let d = self.safe_unsigned_divisor(y);
                self.b.ins().udiv(x, d)
            }
            UMod => {
                let d = self.safe_unsigned_divisor(y);
                self.b.ins().urem(x, d)
            }
            SDiv => {
                let d = self.safe_signed_divisor(x, y);
                self.b.ins().sdiv(x, d)
            }
            SRem => {
                let d = self.safe_signed_divisor(x, y);
                self.b.ins().srem(x, d)
            }
            SMod => {
                // Result takes the sign of the divisor.
                let d = self.safe_signed_divisor(x, y);
                let r = self.b.ins().srem(x, d);
                let rd = self.b.ins().bxor(r, d);
                let signs_differ = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, rd, 0);
                let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                let fix = self.b.ins().band(signs_differ, nonzero);
                let adjusted = self.b.ins().iadd(r, d);
                self.b.ins().select(fix, adjusted, r)
            }
            ShiftRightLogical | ShiftRightArithmetic | ShiftLeftLogical => {
                let y = self.resize_int(y, self.ty_of(x), false);
                match op {
                    ShiftRightLogical => self.b.ins().ushr(x, y),
                    ShiftRightArithmetic => self.b.ins().sshr(x, y),
                    _ => self.b.ins().ishl(x, y),
                }
            }
            BitwiseOr => self.b.ins().bor(x, y),
            BitwiseXor => self.b.ins().bxor(x, y),
            BitwiseAnd => self.band(x, y),
            other => {
                return err(format!(
                    "internal: Op{other:?} is not a binary arithmetic op\n"
                ))
            }
        })
    }

    fn float_binary(&mut self, op: Op, x: Value, y: Value) -> Result<Value, BuildError> {
        use Op::*;
        Ok(match op {
            FAdd => self.b.ins().fadd(x, y),
            FSub => self.b.ins().fsub(x, y),
            FMul => self.b.ins().fmul(x, y),
            FDiv => self.b.ins().fdiv(x, y),
            FRem => self.fmod_call(x, y)?,
            FMod => {
                // Result takes the sign of the divisor.
                let r = self.fmod_call(x, y)?;
                let t = self.ty_of(r);
                let zero = super::values::zero_of(&mut self.b, t);
                let r_neg = self.b.ins().fcmp(FloatCC::LessThan, r, zero);
                let y_neg = self.b.ins().fcmp(FloatCC::LessThan, y, zero);
                let r_nz = self.b.ins().fcmp(FloatCC::NotEqual, r, zero);
                let differ = self.b.ins().bxor(r_neg, y_neg);
                let fix = self.b.ins().band(differ, r_nz);
                let adjusted = self.b.ins().fadd(r, y);
                self.b.ins().select(fix, adjusted, r)
            }
            other => return err(format!("internal: Op{other:?} is not a float binary op\n")),
        })
    }

    /// Zero- or sign-extends / truncates an integer to `to`.
    pub(crate) fn resize_int(&mut self, v: Value, to: types::Type, signed: bool) -> Value {
        let from = self.ty_of(v);
        if from == to {
            v
        } else if from.bits() > to.bits() {
            self.b.ins().ireduce(to, v)
        } else if signed {
            self.b.ins().sextend(to, v)
        } else {
            self.b.ins().uextend(to, v)
        }
    }

    pub(crate) fn compare(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        use Op::*;
        let op = inst.opcode();
        let a_id = inst.unary()?.value;
        let a = self.value(a_id)?;
        let v = match op {
            LogicalNot => a.map(&mut |x| Ok(self.b.ins().bxor_imm_s(x, 1)))?,
            Any | All => {
                let leaves = a.flat();
                let mut acc = leaves[0];
                for &l in &leaves[1..] {
                    acc = if op == Any {
                        self.b.ins().bor(acc, l)
                    } else {
                        self.b.ins().band(acc, l)
                    };
                }
                Val::S(acc)
            }
            IsNan => a.map(&mut |x| Ok(self.b.ins().fcmp(FloatCC::Unordered, x, x)))?,
            IsInf | IsFinite | IsNormal => {
                let operand_ty = self.m.type_of(a_id).unwrap_or(0);
                let half = self.is_half(operand_ty);
                a.map(&mut |x| {
                    let t = self.ty_of(x);
                    let abs = self.b.ins().fabs(x);
                    let (inf, min_normal) = if half {
                        // Half subnormals are normal floats: the threshold is half's 2^-14.
                        (
                            self.b.ins().f32const(f32::INFINITY),
                            self.b.ins().f32const(2f32.powi(-14)),
                        )
                    } else if t == types::F32 {
                        (
                            self.b.ins().f32const(f32::INFINITY),
                            self.b.ins().f32const(f32::MIN_POSITIVE),
                        )
                    } else {
                        (
                            self.b.ins().f64const(f64::INFINITY),
                            self.b.ins().f64const(f64::MIN_POSITIVE),
                        )
                    };
                    Ok(match op {
                        IsInf => self.b.ins().fcmp(FloatCC::Equal, abs, inf),
                        IsFinite => self.b.ins().fcmp(FloatCC::LessThan, abs, inf),
                        _ => {
                            let ge =
                                self.b
                                    .ins()
                                    .fcmp(FloatCC::GreaterThanOrEqual, abs, min_normal);
                            let lt = self.b.ins().fcmp(FloatCC::LessThan, abs, inf);
                            self.b.ins().band(ge, lt)
                        }
                    })
                })?
            }
            SignBitSet => a.map(&mut |x| {
                let t = self.ty_of(x);
                let it = if t == types::F32 {
                    types::I32
                } else {
                    types::I64
                };
                let bits = self
                    .b
                    .ins()
                    .bitcast(it, cranelift_codegen::ir::MemFlagsData::new(), x);
                Ok(self.b.ins().icmp_imm_s(IntCC::SignedLessThan, bits, 0))
            })?,
            Select => {
                let select = inst.select()?;
                let t = self.value(select.accept)?;
                let f = self.value(select.reject)?;
                // A constant condition picks its operand here: DPC++ wraps every id query in
                // `select true, id, 0`, and the vectoriser then sees the id itself, linear in
                // the local id, instead of a select of it.
                let constant = self.m.global(select.condition).map(|c| c.opcode());
                match (&a, &t) {
                    _ if constant == Some(Op::ConstantTrue) => t,
                    _ if constant == Some(Op::ConstantFalse) => f,
                    // A scalar condition selects whole composites.
                    (Val::S(c), Val::C(_)) => {
                        let c = *c;
                        t.zip(&f, &mut |x, y| Ok(self.b.ins().select(c, x, y)))?
                    }
                    _ => a.zip3(&t, &f, &mut |c, x, y| Ok(self.b.ins().select(c, x, y)))?,
                }
            }
            PtrDiff => {
                let b = self.value(inst.binary()?.b)?;
                let pointee_size = self
                    .m
                    .type_of(a_id)
                    .and_then(|t| match self.m.ty(t) {
                        Some(ferrocl_frontend::Type::Pointer { pointee, .. }) => {
                            self.m.size_of(*pointee)
                        }
                        _ => None,
                    })
                    .unwrap_or(1)
                    .max(1);
                let (x, y) = (a.scalar()?, b.scalar()?);
                let d = self.b.ins().isub(x, y);
                let q = self.b.ins().sdiv_imm_s(d, pointee_size as i64);
                let rt = self.result_type(inst)?;
                let rt = super::values::scalar_ir_type(self.m, rt)?;
                Val::S(self.resize_int(q, rt, true))
            }
            _ => {
                let b = self.value(inst.binary()?.b)?;
                a.zip(&b, &mut |x, y| self.compare_pair(op, x, y))?
            }
        };
        self.define(inst, v)?;
        Ok(())
    }

    fn compare_pair(&mut self, op: Op, x: Value, y: Value) -> Result<Value, BuildError> {
        use Op::*;
        let (x, y) = (self.ftz(x), self.ftz(y));
        let icmp = |t: &mut Self, cc| t.b.ins().icmp(cc, x, y);
        let fcmp = |t: &mut Self, cc| t.b.ins().fcmp(cc, x, y);
        Ok(match op {
            IEqual | LogicalEqual | PtrEqual => icmp(self, IntCC::Equal),
            INotEqual | LogicalNotEqual | PtrNotEqual => icmp(self, IntCC::NotEqual),
            UGreaterThan => icmp(self, IntCC::UnsignedGreaterThan),
            SGreaterThan => icmp(self, IntCC::SignedGreaterThan),
            UGreaterThanEqual => icmp(self, IntCC::UnsignedGreaterThanOrEqual),
            SGreaterThanEqual => icmp(self, IntCC::SignedGreaterThanOrEqual),
            ULessThan => icmp(self, IntCC::UnsignedLessThan),
            SLessThan => icmp(self, IntCC::SignedLessThan),
            ULessThanEqual => icmp(self, IntCC::UnsignedLessThanOrEqual),
            SLessThanEqual => icmp(self, IntCC::SignedLessThanOrEqual),
            LogicalOr => self.b.ins().bor(x, y),
            LogicalAnd => self.b.ins().band(x, y),
            FOrdEqual => fcmp(self, FloatCC::Equal),
            FUnordEqual => fcmp(self, FloatCC::UnorderedOrEqual),
            FOrdNotEqual | LessOrGreater => fcmp(self, FloatCC::OrderedNotEqual),
            FUnordNotEqual => fcmp(self, FloatCC::NotEqual),
            FOrdLessThan => fcmp(self, FloatCC::LessThan),
            FUnordLessThan => fcmp(self, FloatCC::UnorderedOrLessThan),
            FOrdGreaterThan => fcmp(self, FloatCC::GreaterThan),
            FUnordGreaterThan => fcmp(self, FloatCC::UnorderedOrGreaterThan),
            FOrdLessThanEqual => fcmp(self, FloatCC::LessThanOrEqual),
            FUnordLessThanEqual => fcmp(self, FloatCC::UnorderedOrLessThanOrEqual),
            FOrdGreaterThanEqual => fcmp(self, FloatCC::GreaterThanOrEqual),
            FUnordGreaterThanEqual => fcmp(self, FloatCC::UnorderedOrGreaterThanOrEqual),
            Ordered => fcmp(self, FloatCC::Ordered),
            Unordered => fcmp(self, FloatCC::Unordered),
            other => return err(format!("internal: Op{other:?} is not a comparison\n")),
        })
    }
}
