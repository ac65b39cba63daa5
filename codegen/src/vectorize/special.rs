//! The vector forms of compares, selects, boolean logic on masks, conversions, bit casts, shifts
//! and rotations by a shared amount, float ↔ double and rounding to half; everything else once
//! per lane.

use cranelift_codegen::cursor::FuncCursor;
use cranelift_codegen::ir::condcodes::{CondCode, FloatCC, IntCC};
use cranelift_codegen::ir::{
    self, types, ConstantData, Endianness, InstBuilder, InstructionData, MemFlagsData, Opcode,
    Value,
};

use super::analysis::*;
use super::rewrite::Vectoriser;
use super::Refusal;

/// The largest lane offset (`stride × lane`) an affine compare handles, and its clamp: lane
/// offsets and the clamped bounds are then non-negative 32-bit lanes.
const AFFINE_COMPARE_LIMIT: i64 = i32::MAX as i64;

impl Vectoriser<'_> {
    /// A 64-bit unsigned compare of an index linear in the local id (`base + lane × stride`,
    /// stride > 0) with a shared bound — the bounds check `if (get_global_id(0) < n)` on
    /// `size_t` — as one compare of 32-bit lane offsets against bounds computed once, instead
    /// of a 64-bit compare per lane. Exact for every base, the lanes that wrap past 2^64
    /// included. None for other compares.
    fn affine_compare(&mut self, cond: IntCC, x: Value, y: Value) -> Option<Value> {
        // Wide code compares 64-bit lanes directly (`pair_compare`): with 8 or 16 lanes that is
        // two adds of the lane steps and two vector compares, where these bounds took a chain
        // of about twenty scalar instructions per compare, which in a loop's bounds check
        // left fewer of its loads in flight (dpnp's sum kernel).
        if self.pairs(types::I64) {
            return None;
        }
        let (cond, affine, bound) = match (self.form(x), self.form(y)) {
            (Form::Affine { .. }, Form::Uniform(b)) => (cond, x, b),
            (Form::Uniform(b), Form::Affine { .. }) => (cond.swap_args(), y, b),
            _ => return None,
        };
        let Form::Affine { base, stride } = self.form(affine) else {
            return None;
        };
        let last = stride.checked_mul(self.n as i64 - 1)?;
        if stride <= 0 || last >= AFFINE_COMPARE_LIMIT {
            return None;
        }
        let m = match cond {
            IntCC::UnsignedLessThan => self.lanes_below(base, stride, bound),
            IntCC::UnsignedGreaterThanOrEqual => {
                let below = self.lanes_below(base, stride, bound);
                self.cursor().ins().bnot(below)
            }
            IntCC::UnsignedLessThanOrEqual => self.lanes_at_most(base, stride, bound),
            IntCC::UnsignedGreaterThan => {
                let at_most = self.lanes_at_most(base, stride, bound);
                self.cursor().ins().bnot(at_most)
            }
            _ => return None,
        };
        Some(m)
    }

    /// Lanes where `base + lane × stride ≤ bound` (unsigned, 64 bits): below `bound + 1`, or
    /// every lane when `bound` is the largest value.
    fn lanes_at_most(&mut self, base: Value, stride: i64, bound: Value) -> Value {
        let next = self.cursor().ins().iadd_imm_s(bound, 1);
        let below = self.lanes_below(base, stride, next);
        let largest = self.cursor().ins().icmp_imm_s(IntCC::Equal, bound, -1);
        let all = self.cursor().ins().bmask(types::I32, largest);
        let mt = self.mask_ty();
        let all = self.cursor().ins().splat(mt, all);
        self.cursor().ins().bor(below, all)
    }

    /// Lanes where `a = base + c` (wrapping, `c = lane × stride`, 0 ≤ c < 2^31) is below
    /// `bound` (unsigned, 64 bits). With r = 2^64 − base, a lane with c < r does not wrap:
    /// a < bound exactly when bound > base and c < bound − base. A lane with c ≥ r wraps to
    /// c − r: below bound when c < r + bound. Each bound is clamped to 2^31 − 1, beyond every c,
    /// and compared with the lane offsets in 32-bit lanes.
    fn lanes_below(&mut self, base: Value, stride: i64, bound: Value) -> Value {
        let limit = self.cursor().ins().iconst(types::I64, AFFINE_COMPARE_LIMIT);
        let zero = self.cursor().ins().iconst(types::I64, 0);
        // r = 2^64 − base (as a 64-bit value), clamped; a base of 0 never wraps.
        let true_r = self.cursor().ins().isub(zero, base);
        let r = self.cursor().ins().umin(true_r, limit);
        let base_zero = self.cursor().ins().icmp_imm_s(IntCC::Equal, base, 0);
        let r = self.cursor().ins().select(base_zero, limit, r);
        // Bound for the lanes that do not wrap.
        let above = self
            .cursor()
            .ins()
            .icmp(IntCC::UnsignedGreaterThan, bound, base);
        let room = self.cursor().ins().isub(bound, base);
        let room = self.cursor().ins().umin(room, limit);
        let unwrapped = self.cursor().ins().select(above, room, zero);
        // Bound for the lanes that wrap: r + bound, saturating (lanes only wrap when r is
        // below the limit, so the unclamped r is the true one there).
        let sum = self.cursor().ins().iadd(true_r, bound);
        let carried = self
            .cursor()
            .ins()
            .icmp(IntCC::UnsignedLessThan, sum, true_r);
        let sum = self.cursor().ins().umin(sum, limit);
        let wrapped = self.cursor().ins().select(carried, limit, sum);
        let mt = self.mask_ty();
        let mut offsets = Vec::with_capacity(4 * self.n);
        for k in 0..self.n as i64 {
            offsets.extend_from_slice(&((stride * k) as i32).to_le_bytes());
        }
        let c = self.func.dfg.constants.insert(ConstantData::from(offsets));
        let c = self.cursor().ins().vconst(mt, c);
        let splat32 = |s: &mut Self, v: Value| {
            let v = s.cursor().ins().ireduce(types::I32, v);
            s.cursor().ins().splat(mt, v)
        };
        let (r, unwrapped, wrapped) = (
            splat32(self, r),
            splat32(self, unwrapped),
            splat32(self, wrapped),
        );
        let stays = self.cursor().ins().icmp(IntCC::UnsignedLessThan, c, r);
        let below_unwrapped = self
            .cursor()
            .ins()
            .icmp(IntCC::UnsignedLessThan, c, unwrapped);
        let below_wrapped = self
            .cursor()
            .ins()
            .icmp(IntCC::UnsignedLessThan, c, wrapped);
        self.cursor()
            .ins()
            .bitselect(stays, below_unwrapped, below_wrapped)
    }

    /// Compares, selects, conversions and bit casts between 32-bit lanes; everything else per
    /// lane.
    pub(super) fn special(&mut self, inst: ir::Inst) -> Result<(), Refusal> {
        let data = self.func.dfg.insts[inst];
        let result = self.func.dfg.inst_results(inst)[0];
        let t = self.ty(result);
        let args = self.resolved_args(inst);
        let arg_ty = args.first().map(|&a| self.ty(a));
        if let InstructionData::IntCompare { cond, .. } = data {
            if arg_ty == Some(types::I64) {
                if let Some(m) = self.affine_compare(cond, args[0], args[1]) {
                    self.define(result, Form::Mask(m));
                    return Ok(());
                }
            }
        }
        match data {
            InstructionData::IntCompare { cond, .. }
                if arg_ty.is_some_and(|t| t == types::I64 && self.pairs(t)) =>
            {
                let m = self.pair_compare(args[0], args[1], |c, a, b| c.ins().icmp(cond, a, b));
                self.define(result, Form::Mask(m));
            }
            InstructionData::IntCompare { cond, .. } if arg_ty == Some(types::I32) => {
                let (a, b) = (self.vector(args[0]), self.vector(args[1]));
                let m = self.cursor().ins().icmp(cond, a, b);
                self.define(result, Form::Mask(m));
            }
            InstructionData::FloatCompare { cond, .. }
                if arg_ty == Some(types::F32) && vector_float_condition(cond) =>
            {
                let (a, b) = (self.vector(args[0]), self.vector(args[1]));
                let m = self.cursor().ins().fcmp(cond, a, b);
                self.define(result, Form::Mask(m));
            }
            InstructionData::FloatCompare { cond, .. }
                if arg_ty == Some(types::F64) && vector_float_condition(cond) =>
            {
                let m = self.double_compare(cond, args[0], args[1]);
                self.define(result, Form::Mask(m));
            }
            InstructionData::Ternary {
                opcode: Opcode::Select,
                ..
            } if self.pairs(t) => {
                let v = self.pair_select(args[0], args[1], args[2]);
                self.define(result, Form::Pair(v));
            }
            InstructionData::Ternary {
                opcode: Opcode::Select,
                ..
            } if vectorisable_type(t) => {
                let vt = self.wide(t);
                let (x, y) = (self.vector(args[1]), self.vector(args[2]));
                let v = if let Form::Uniform(c) = self.form(args[0]) {
                    self.cursor().ins().select(c, x, y)
                } else {
                    let m = self.mask_of(args[0]);
                    let m = self.mask_as(m, vt);
                    self.cursor().ins().bitselect(m, x, y)
                };
                self.define(result, Form::Vector(v));
            }
            // Boolean logic on masks (compares' results are 0/1 i8; a mask holds them as 0/-1).
            InstructionData::Binary { opcode, .. }
                if t == types::I8
                    && matches!(opcode, Opcode::Band | Opcode::Bor | Opcode::Bxor)
                    && args.iter().all(|&a| matches!(self.form(a), Form::Mask(_))) =>
            {
                let (a, b) = (self.mask_of(args[0]), self.mask_of(args[1]));
                let m = match opcode {
                    Opcode::Band => self.cursor().ins().band(a, b),
                    Opcode::Bor => self.cursor().ins().bor(a, b),
                    _ => self.cursor().ins().bxor(a, b),
                };
                self.define(result, Form::Mask(m));
            }
            // Logical not of a mask: `bxor b, 1`.
            InstructionData::Binary {
                opcode: Opcode::Bxor,
                ..
            } if t == types::I8
                && matches!(self.form(args[0]), Form::Mask(_))
                && iconst_value(self.func, args[1]) == Some(1) =>
            {
                let m = self.mask_of(args[0]);
                let n = self.cursor().ins().bnot(m);
                self.define(result, Form::Mask(n));
            }
            // A boolean widened to an int: 0/1 (uextend) or 0/-1 (sextend) lanes.
            InstructionData::Unary {
                opcode: op @ (Opcode::Uextend | Opcode::Sextend),
                ..
            } if t == types::I32 && matches!(self.form(args[0]), Form::Mask(_)) => {
                let m = self.mask_of(args[0]);
                let v = if op == Opcode::Uextend {
                    let one = self.cursor().ins().iconst(types::I32, 1);
                    let mt = self.mask_ty();
                    let ones = self.cursor().ins().splat(mt, one);
                    self.cursor().ins().band(m, ones)
                } else {
                    m
                };
                self.define(result, Form::Vector(v));
            }
            // 32-bit lanes widened to pairs of 64-bit ones, and back (truncating: the low
            // halves, which the unsigned saturating narrowing keeps once the high ones are 0).
            InstructionData::Unary {
                opcode: op @ (Opcode::Uextend | Opcode::Sextend),
                ..
            } if t == types::I64 && self.pairs(t) && arg_ty == Some(types::I32) => {
                let a = self.vector(args[0]);
                let mut c = self.cursor();
                let p = if op == Opcode::Uextend {
                    [c.ins().uwiden_low(a), c.ins().uwiden_high(a)]
                } else {
                    [c.ins().swiden_low(a), c.ins().swiden_high(a)]
                };
                self.define(result, Form::Pair(p));
            }
            InstructionData::Unary {
                opcode: Opcode::Ireduce,
                ..
            } if t == types::I32
                && arg_ty == Some(types::I64)
                && matches!(self.form(args[0]), Form::Pair(_)) =>
            {
                let p = self.pair(args[0]);
                let pt = self.pair_ty_of(types::I64);
                let low = self.cursor().ins().iconst(types::I64, 0xffff_ffff);
                let low = self.cursor().ins().splat(pt, low);
                let mut c = self.cursor();
                let p = p.map(|h| c.ins().band(h, low));
                let v = c.ins().uunarrow(p[0], p[1]);
                self.define(result, Form::Vector(v));
            }
            // 64-bit shifts by a shared amount, on each half.
            InstructionData::Binary {
                opcode: op @ (Opcode::Ishl | Opcode::Ushr | Opcode::Sshr),
                ..
            } if t == types::I64 && self.pairs(t) && self.is_uniform(args[1]) => {
                let p = self.pair(args[0]);
                let Form::Uniform(amount) = self.form(args[1]) else {
                    unreachable!("checked above")
                };
                let mut c = self.cursor();
                let v = p.map(|h| match op {
                    Opcode::Ishl => c.ins().ishl(h, amount),
                    Opcode::Ushr => c.ins().ushr(h, amount),
                    _ => c.ins().sshr(h, amount),
                });
                self.define(result, Form::Pair(v));
            }
            InstructionData::Unary {
                opcode:
                    op @ (Opcode::FcvtFromSint
                    | Opcode::FcvtFromUint
                    | Opcode::FcvtToSintSat
                    | Opcode::FcvtToUintSat),
                ..
            } if vectorisable_type(t) && arg_ty.is_some_and(vectorisable_type) => {
                let vt = self.wide(t);
                let a = self.vector(args[0]);
                let v = match op {
                    Opcode::FcvtFromSint => self.cursor().ins().fcvt_from_sint(vt, a),
                    Opcode::FcvtFromUint => self.cursor().ins().fcvt_from_uint(vt, a),
                    Opcode::FcvtToSintSat => self.cursor().ins().fcvt_to_sint_sat(vt, a),
                    _ => self.cursor().ins().fcvt_to_uint_sat(vt, a),
                };
                self.define(result, Form::Vector(v));
            }
            InstructionData::LoadNoOffset {
                opcode: Opcode::Bitcast,
                ..
            } if vectorisable_type(t) && arg_ty.is_some_and(vectorisable_type) => {
                let vt = self.wide(t);
                let a = self.vector(args[0]);
                let little = MemFlagsData::new().with_endianness(Endianness::Little);
                let v = self.cursor().ins().bitcast(vt, little, a);
                self.define(result, Form::Vector(v));
            }
            // Shifts by a shared amount.
            InstructionData::Binary {
                opcode: op @ (Opcode::Ishl | Opcode::Ushr | Opcode::Sshr),
                ..
            } if t == types::I32 && self.is_uniform(args[1]) => {
                let a = self.vector(args[0]);
                let Form::Uniform(amount) = self.form(args[1]) else {
                    unreachable!("checked above")
                };
                let v = match op {
                    Opcode::Ishl => self.cursor().ins().ishl(a, amount),
                    Opcode::Ushr => self.cursor().ins().ushr(a, amount),
                    _ => self.cursor().ins().sshr(a, amount),
                };
                self.define(result, Form::Vector(v));
            }
            // Rounding to half (half_rounding.rs), only in wide builds: the pair on vectors,
            // which LLVM lowers to one conversion each way.
            InstructionData::Unary {
                opcode: op @ (Opcode::Fdemote | Opcode::Fpromote),
                ..
            } if matches!(
                (t, arg_ty),
                (types::F16, Some(types::F32)) | (types::F32, Some(types::F16))
            ) =>
            {
                let vt = self.wide(t);
                let a = self.vector(args[0]);
                let v = if op == Opcode::Fdemote {
                    self.cursor().ins().fdemote(vt, a)
                } else {
                    self.cursor().ins().fpromote(vt, a)
                };
                self.define(result, Form::Vector(v));
            }
            // float ↔ double: math.rs's conversions of whole vectors.
            InstructionData::Unary {
                opcode: Opcode::Fpromote,
                ..
            } if t == types::F64 && arg_ty == Some(types::F32) => {
                let v = self.vector(args[0]);
                let p = self.promote_vector(v);
                self.define(result, Form::Pair(p));
            }
            InstructionData::Unary {
                opcode: Opcode::Fdemote,
                ..
            } if t == types::F32 && arg_ty == Some(types::F64) => {
                let p = self.pair(args[0]);
                let v = self.demote_pair(p);
                self.define(result, Form::Vector(v));
            }
            // Rotations by a shared amount: two shifts (amounts are taken modulo 32, so a
            // rotation by 0 is x | x).
            InstructionData::Binary {
                opcode: op @ (Opcode::Rotl | Opcode::Rotr),
                ..
            } if t == types::I32 && self.is_uniform(args[1]) => {
                let a = self.vector(args[0]);
                let Form::Uniform(amount) = self.form(args[1]) else {
                    unreachable!("checked above")
                };
                let amount = if self.ty(amount) == types::I32 {
                    amount
                } else {
                    self.cursor().ins().ireduce(types::I32, amount)
                };
                let other = match self.constant_bits(amount) {
                    Some(c) => self
                        .cursor()
                        .ins()
                        .iconst(types::I32, i64::from(32 - (c & 31))),
                    None => {
                        let thirty_two = self.cursor().ins().iconst(types::I32, 32);
                        self.cursor().ins().isub(thirty_two, amount)
                    }
                };
                let (left, right) = if op == Opcode::Rotl {
                    (amount, other)
                } else {
                    (other, amount)
                };
                let hi = self.cursor().ins().ishl(a, left);
                let lo = self.cursor().ins().ushr(a, right);
                let v = self.cursor().ins().bor(hi, lo);
                self.define(result, Form::Vector(v));
            }
            _ => self.per_lane(inst),
        }
        Ok(())
    }

    /// A compare of doubles (as `Pair`s) as a mask of 32-bit lanes: the two halves' 64-bit
    /// masks narrowed with saturation, which keeps -1 and 0. Cranelift lowers no i64x2 → i32x4
    /// narrowing on x86-64, so at two doubles a half each double lane's mask is read as two
    /// equal 32-bit words and narrowed to 16 bits (`packssdw`); a lane's two 16-bit halves read
    /// back as one 32-bit word are its mask. (Wider vectors go to the wide backend, which
    /// narrows i64 lanes itself; CLIF has no i32x16 → i16x32 narrowing.)
    fn double_compare(&mut self, cond: FloatCC, a: ir::Value, b: ir::Value) -> ir::Value {
        self.pair_compare(a, b, |c, a, b| c.ins().fcmp(cond, a, b))
    }

    /// A compare of `Pair`s (`compare` on each half) as a mask of 32-bit lanes.
    fn pair_compare(
        &mut self,
        a: ir::Value,
        b: ir::Value,
        compare: impl Fn(&mut FuncCursor, ir::Value, ir::Value) -> ir::Value,
    ) -> ir::Value {
        let (a, b) = (self.pair(a), self.pair(b));
        let mt = self.mask_ty();
        let two_lane_halves = self.n / 2 == 2;
        let mut c = self.cursor();
        let halves = [0, 1].map(|h| compare(&mut c, a[h], b[h]));
        if !two_lane_halves {
            return c.ins().snarrow(halves[0], halves[1]);
        }
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let words = halves.map(|m| c.ins().bitcast(mt, little, m));
        let narrow = c.ins().snarrow(words[0], words[1]);
        c.ins().bitcast(mt, little, narrow)
    }

    /// `select` of `Pair`s: each half by its half of the mask, widened to 64-bit lanes.
    fn pair_select(&mut self, cond: ir::Value, x: ir::Value, y: ir::Value) -> [ir::Value; 2] {
        let pt = self.pair_ty_of(self.ty(x));
        let (x, y) = (self.pair(x), self.pair(y));
        if let Form::Uniform(c) = self.form(cond) {
            let mut cur = self.cursor();
            return [0, 1].map(|h| cur.ins().select(c, x[h], y[h]));
        }
        let m = self.mask_of(cond);
        let m = self.mask_halves(m, pt);
        let mut c = self.cursor();
        [0, 1].map(|h| c.ins().bitselect(m[h], x[h], y[h]))
    }
}
