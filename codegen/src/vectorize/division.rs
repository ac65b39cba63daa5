//! Division and remainder of varying integers by a shared divisor (`i / width`, `i % width`
//! on `uint`, `int`, `size_t` or `long`, as kernels compute coordinates from a linear index) as
//! vector arithmetic in wide code, instead of one scalar division per lane. Signed operands
//! take it where they are not negative, where the two divisions agree.
//!
//! x86 has no vector integer division: per lane it is a `div`, 16 of them per 16-lane vector
//! (dpnp's merge sort divides twice per work-item: 46 `div` of each width in its kernel).
//! Here, per half of 64-bit lanes: a becomes a double exactly (a < 2^50: the bits of 2^52
//! or'ed in and 2^52 subtracted), q0 = a·(1/d) rounded to the nearest integer by adding 2^52,
//! and r = a − q0·d. 1/d and the product round once each, so a·(1/d) is within
//! (a/d)·2^-51.9 < 1/4 of a/d ≥ ⌊a/d⌋ = q: q0 is q or q + 1, and in the second case r is
//! negative as a signed number (|r| ≤ d < 2^50) — one correction makes them ⌊a/d⌋ and
//! a mod d. Lanes with a ≥ 2^50, or a divisor that large, take the scalar divisions (one
//! branch skips them when no lane needs them). The translator has already made a zero
//! divisor one.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::{self, types, Endianness, InstBuilder, MemFlagsData, Opcode, Type};

use super::analysis::{iconst_value, Form};
use super::rewrite::Vectoriser;

/// Dividends and divisors below this take the vector form.
const EXACT_LIMIT: i64 = 1 << 50;
/// 2^52: its bits or'ed into a smaller integer make the double 2^52 + that integer.
const TWO_52: f64 = 4_503_599_627_370_496.0;

impl Vectoriser<'_> {
    /// Emits `inst` (`udiv`, `urem`, `sdiv` or `srem` of 32- or 64-bit integers) as vector
    /// arithmetic if its dividend varies and its divisor is shared, in wide code; false
    /// (nothing emitted) otherwise.
    pub(super) fn divide_by_shared(&mut self, inst: ir::Inst) -> bool {
        let op = self.func.dfg.insts[inst].opcode();
        let signed = matches!(op, Opcode::Sdiv | Opcode::Srem);
        if !self.lane_intrinsics || !(signed || matches!(op, Opcode::Udiv | Opcode::Urem)) {
            return false;
        }
        let args = self.func.dfg.inst_args(inst).to_vec();
        let [x, d] = args[..] else {
            return false;
        };
        let result = self.func.dfg.inst_results(inst)[0];
        let t = self.ty(result);
        if self.is_uniform(x) || !(t == types::I32 || t == types::I64) {
            return false;
        }
        let divisor = match self.form(d) {
            Form::Uniform(u) => u,
            // The translator's guard of a signed division, select(x == MIN && d == -1, 1, d):
            // varying through x, but d itself wherever x ≥ 0 — the only lanes the vector form
            // takes.
            _ if signed => match self.guarded_signed_divisor(x, d).map(|u| self.form(u)) {
                Some(Form::Uniform(u)) => u,
                _ => return false,
            },
            _ => return false,
        };
        // A constant divisor of 32-bit lanes (neither 0 nor, signed, −1): the vector division
        // itself, which the wide backend's LLVM turns into a multiplication by the divisor's
        // reciprocal and shifts, without doubles. (It has no such form for 64-bit lanes.)
        if t == types::I32 {
            if let Some(k) = iconst_value(self.func, divisor) {
                let k = k as u32;
                if k != 0 && !(signed && k == u32::MAX) {
                    let (a, b) = (self.vector(x), self.vector(divisor));
                    let v = self.divide_by_constant(op, a, b);
                    self.define(result, Form::Vector(v));
                    return true;
                }
            }
        }
        let half_ty = self.pair_ty_of(types::I64);
        // The dividend as two halves of 64-bit lanes. Signed operands are widened with their signs: a negative one is then 2^63 or more
        // as an unsigned number, and takes the scalar path like any other large one. Below
        // 2^50 both divisions agree.
        let halves = if t == types::I64 {
            if !self.pairs(types::I64) {
                return false;
            }
            self.pair(x)
        } else {
            let v = self.vector(x);
            let mut c = self.cursor();
            if signed {
                [c.ins().swiden_low(v), c.ins().swiden_high(v)]
            } else {
                [c.ins().uwiden_low(v), c.ins().uwiden_high(v)]
            }
        };
        let d64 = match (t == types::I64, signed) {
            (true, _) => divisor,
            (false, true) => self.cursor().ins().sextend(types::I64, divisor),
            (false, false) => self.cursor().ins().uextend(types::I64, divisor),
        };
        // Every lane and the divisor below 2^50, else the scalar divisions.
        let in_range = {
            let mut c = self.cursor();
            let both = c.ins().bor(halves[0], halves[1]);
            let big = c
                .ins()
                .ushr_imm_u(both, EXACT_LIMIT.trailing_zeros() as i64);
            let zero = c.ins().iconst(types::I64, 0);
            let zeros = c.ins().splat(half_ty, zero);
            let large = c.ins().icmp(IntCC::NotEqual, big, zeros);
            let any_large = c.ins().vany_true(large);
            let limit = c.ins().iconst(types::I64, EXACT_LIMIT);
            let large_divisor = c.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, d64, limit);
            let out = c.ins().bor(any_large, large_divisor);
            c.ins().icmp_imm_s(IntCC::Equal, out, 0)
        };
        let result_tys: Vec<Type> = if t == types::I64 {
            vec![half_ty; 2]
        } else {
            vec![self.wide(types::I32)]
        };
        let quotient = matches!(op, Opcode::Udiv | Opcode::Sdiv);
        let out = self.diamond_values(
            in_range,
            &result_tys,
            &mut |s: &mut Self| {
                let [[q_lo, r_lo], [q_hi, r_hi]] = s.divide_halves(halves, d64);
                let (lo, hi) = if quotient { (q_lo, q_hi) } else { (r_lo, r_hi) };
                if t == types::I64 {
                    vec![lo, hi]
                } else {
                    vec![s.cursor().ins().uunarrow(lo, hi)]
                }
            },
            &mut |s: &mut Self| {
                let ctrl = s.func.dfg.ctrl_typevar(inst);
                let arg_lanes = s.args_as(inst, Self::lanes);
                let lanes: Vec<Value> = s
                    .clone_per_lane(inst, ctrl, &arg_lanes)
                    .into_iter()
                    .next()
                    .expect("one result");
                if t == types::I64 {
                    s.pair_from_lanes(&lanes).to_vec()
                } else {
                    let vt = s.wide(types::I32);
                    vec![s.vector_of_lanes(vt, &lanes)]
                }
            },
        );
        let form = if t == types::I64 {
            Form::Pair([out[0], out[1]])
        } else {
            Form::Vector(out[0])
        };
        self.define(result, form);
        true
    }

    /// The shared divisor `u` behind `d` = select(x == MIN && u == −1, 1, u), the translator's
    /// guard of signed division `x / d` (translate/arith.rs `safe_signed_divisor`), with `u`
    /// shared; None for any other divisor.
    fn guarded_signed_divisor(&self, x: Value, d: Value) -> Option<Value> {
        let dfg = &self.func.dfg;
        let def = |v: Value| dfg.value_def(dfg.resolve_aliases(v)).inst();
        let select = def(d)?;
        if dfg.insts[select].opcode() != Opcode::Select {
            return None;
        }
        let [cond, one, u] = dfg.inst_args(select)[..] else {
            return None;
        };
        let t = dfg.value_type(u);
        if iconst_value(self.func, one) != Some(1) || !self.is_uniform(u) {
            return None;
        }
        let both = def(cond)?;
        if dfg.insts[both].opcode() != Opcode::Band {
            return None;
        }
        let min = match t.bits() {
            32 => i64::from(i32::MIN),
            64 => i64::MIN,
            _ => return None,
        };
        let mask = u64::MAX >> (64 - t.bits());
        // icmp eq of `operand` and the constant `k`, either way round.
        let compares = |c: Value, operand: Value, k: i64| -> bool {
            let Some(i) = def(c) else { return false };
            let ir::InstructionData::IntCompare {
                opcode: Opcode::Icmp,
                cond: IntCC::Equal,
                args,
            } = dfg.insts[i]
            else {
                return false;
            };
            let [p, q] = args.map(|a| dfg.resolve_aliases(a));
            let is_k = |v: Value| {
                iconst_value(self.func, v).is_some_and(|b| b as u64 & mask == k as u64 & mask)
            };
            let operand = dfg.resolve_aliases(operand);
            (p == operand && is_k(q)) || (q == operand && is_k(p))
        };
        let [c1, c2] = dfg.inst_args(both)[..] else {
            return None;
        };
        let guards = |a: Value, b: Value| compares(a, x, min) && compares(b, u, -1);
        (guards(c1, c2) || guards(c2, c1)).then_some(u)
    }

    /// [⌊a/d⌋, a mod d] for each half `a` of 64-bit lanes and a shared divisor `d`, all
    /// below 2^50 (see the module's comment); 1/d and the constants once for both halves.
    fn divide_halves(&mut self, halves: [Value; 2], d: Value) -> [[Value; 2]; 2] {
        let it = self.func.dfg.value_type(halves[0]);
        let ft = types::F64.by(it.lane_count()).expect("double lanes");
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let mut c = self.cursor();
        let two_52 = c.ins().f64const(TWO_52);
        let two_52 = c.ins().splat(ft, two_52);
        let two_52_bits = c.ins().iconst(types::I64, TWO_52.to_bits() as i64);
        let two_52_bits = c.ins().splat(it, two_52_bits);
        // 1/d in scalar code (d exact as a double; its reciprocal rounded once).
        let d_float = c.ins().fcvt_from_uint(types::F64, d);
        let one = c.ins().f64const(1.0);
        let inverse = c.ins().fdiv(one, d_float);
        let inverse = c.ins().splat(ft, inverse);
        let ds = c.ins().splat(it, d);
        let zero = c.ins().iconst(types::I64, 0);
        let zeros = c.ins().splat(it, zero);
        halves.map(|a| {
            // a as a double: 2^52 + a, minus 2^52 (exact for a < 2^52).
            let biased = c.ins().bor(a, two_52_bits);
            let biased = c.ins().bitcast(ft, little, biased);
            let af = c.ins().fsub(biased, two_52);
            // q0 = nearest(a·(1/d)): adding 2^52 leaves it in the low bits.
            let qf = c.ins().fmul(af, inverse);
            let shifted = c.ins().fadd(qf, two_52);
            let shifted = c.ins().bitcast(it, little, shifted);
            let q0 = c.ins().isub(shifted, two_52_bits);
            let product = c.ins().imul(q0, ds);
            let r0 = c.ins().isub(a, product);
            // q0 one too large: r0 < 0 (all-ones lanes: −1 to q0, d back to r0).
            let over = c.ins().icmp(IntCC::SignedLessThan, r0, zeros);
            let q = c.ins().iadd(q0, over);
            let back = c.ins().band(ds, over);
            let r = c.ins().iadd(r0, back);
            [q, r]
        })
    }
}
