//! The double functions of the vector math (math.rs): `exp`, `exp2`, `log`, `log2`, `sin`,
//! `cos`, `pow` and `powr` on double, evaluated as double-doubles (hi + lo) with the driver
//! tables of math_tables.rs, each lane decided by Ziv's test on hi + lo and the rest calling
//! mathlib in a lane loop.

use cranelift_codegen::cursor::FuncCursor;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self, types, Endianness, InstBuilder, MemFlagsData, Value};

use super::analysis::Form;
use super::math::{VectorMath, LOG2_E_LO, SHIFTER};
use super::rewrite::Vectoriser;

/// Relative error bound of the double-double results of the double functions, as their
/// rounding test assumes it (their error is below 2^-68: see each).
const DOUBLE_TEST_EPSILON: f64 = 1.0 / (1u128 << 66) as f64;
/// 36 significant bits of ln(2)/128 (k·this is exact for |k| < 2^17), and the rest.
const LN2_128_HI: f64 = 0.005_415_212_348_111_709;
const LN2_128_LO: f64 = 1.286_402_311_163_834_6e-14;
/// ln(2) − the double nearest it.
const LN2_LO53: f64 = 2.319_046_813_846_299_6e-17;
/// 42 significant bits of ln(2) (e·this is exact for |e| < 2^11), and the rest.
const LN2_HI42: f64 = 0.693_147_180_559_890_3;
const LN2_LO42: f64 = 5.497_923_018_708_371e-14;

impl Vectoriser<'_> {
    /// Emits double call `inst` of `f` as vector code (its tables at `tables`); false
    /// (nothing emitted) when its arguments are all shared.
    pub(super) fn vector_math_f64(
        &mut self,
        inst: ir::Inst,
        f: VectorMath,
        tables: [Option<ir::GlobalValue>; 2],
    ) -> bool {
        let args = self.func.dfg.inst_args(inst).to_vec();
        if args.iter().all(|&a| self.is_uniform(a))
            || args.iter().any(|&a| self.ty(a) != types::F64)
        {
            return false;
        }
        let operands: Vec<[Value; 2]> = args.iter().map(|&a| self.pair(a)).collect();
        let x = operands[0];
        let bases: Vec<Value> = tables
            .iter()
            .flatten()
            .map(|&t| self.cursor().ins().symbol_value(types::I64, t))
            .collect();
        let base = bases[0];
        // The rounding test's bound relative to |hi|: ε, or for pow ε·(1 + |y·log x|).
        let mut error_scale = None;
        let (hi, lo, scale, domain) = match f {
            VectorMath::ExpF64 => self.exp_f64(x, None, base, false),
            VectorMath::Exp2F64 => self.exp_f64(x, None, base, true),
            VectorMath::PowF64 => {
                let (hi, lo, scale, domain, t) = self.pow_f64(x, operands[1], bases[0], bases[1]);
                error_scale = Some(t);
                (hi, lo, scale, domain)
            }
            VectorMath::SinF64 => self.sin_cos_f64(x, base, false),
            VectorMath::CosF64 => self.sin_cos_f64(x, base, true),
            _ => {
                let (hi, lo, scale, domain) = self.log_f64(x, base);
                if f == VectorMath::Log2F64 {
                    // × 1/ln 2 as a double-double product.
                    let (c_hi, c_lo) = (
                        self.splat_f64(std::f64::consts::LOG2_E),
                        self.splat_f64(LOG2_E_LO),
                    );
                    let mut c = self.cursor();
                    let mut h2 = hi;
                    let mut l2 = lo;
                    for h in 0..2 {
                        let (p, pe) = two_product(&mut c, hi[h], c_hi);
                        let t = c.ins().fma(lo[h], c_hi, pe);
                        l2[h] = c.ins().fma(hi[h], c_lo, t);
                        h2[h] = p;
                    }
                    (h2, l2, scale, domain)
                } else {
                    (hi, lo, scale, domain)
                }
            }
        };
        // Ziv: hi + (lo ∓ ε|hi|) must round to the same double.
        let epsilon = self.splat_f64(DOUBLE_TEST_EPSILON);
        let it = self.pair_int_ty();
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let (y, retry) = {
            let mut y = [hi[0]; 2];
            let mut retry = [hi[0]; 2];
            let mut c = self.cursor();
            for h in 0..2 {
                let magnitude = c.ins().fabs(hi[h]);
                let e = c.ins().fmul(magnitude, epsilon);
                let e = match error_scale {
                    Some(t) => c.ins().fmul(e, t[h]),
                    None => e,
                };
                let below = c.ins().fsub(lo[h], e);
                let above = c.ins().fadd(lo[h], e);
                let below = c.ins().fadd(hi[h], below);
                let above = c.ins().fadd(hi[h], above);
                let (bb, ab) = (
                    c.ins().bitcast(it, little, below),
                    c.ins().bitcast(it, little, above),
                );
                let agree = c.ins().icmp(IntCC::Equal, bb, ab);
                let ok = c.ins().band(agree, domain[h]);
                retry[h] = c.ins().bnot(ok);
                y[h] = match scale {
                    Some(s) => c.ins().fmul(below, s[h]),
                    None => below,
                };
            }
            (y, retry)
        };
        let retry = match self.active {
            Some(active) => {
                // The active mask has 32-bit lanes: widen each half to 64.
                let (lo, hi) = {
                    let mut c = self.cursor();
                    (c.ins().swiden_low(active), c.ins().swiden_high(active))
                };
                let mut c = self.cursor();
                [c.ins().band(retry[0], lo), c.ins().band(retry[1], hi)]
            }
            None => retry,
        };
        let any = {
            let mut c = self.cursor();
            let a = c.ins().vany_true(retry[0]);
            let b = c.ins().vany_true(retry[1]);
            c.ins().bor(a, b)
        };
        let result = self.func.dfg.inst_results(inst)[0];
        let (lo_out, hi_out) = {
            let join = self.func.dfg.make_block();
            let slow = self.func.dfg.make_block();
            self.func.layout.append_block(slow);
            self.func.layout.append_block(join);
            let r0 = self.func.dfg.append_block_param(join, pt);
            let r1 = self.func.dfg.append_block_param(join, pt);
            self.cursor().ins().brif(
                any,
                slow,
                &[],
                join,
                &[ir::BlockArg::Value(y[0]), ir::BlockArg::Value(y[1])],
            );
            self.current = slow;
            let operands: Vec<&[Value]> = operands.iter().map(|o| &o[..]).collect();
            let fixed = self.fallback_lanes(inst, &operands, &y, &retry);
            self.cursor().ins().jump(
                join,
                &[ir::BlockArg::Value(fixed[0]), ir::BlockArg::Value(fixed[1])],
            );
            self.current = join;
            (r0, r1)
        };
        self.define(result, Form::Pair([lo_out, hi_out]));
        true
    }

    /// Per lane of the halves of `index` (i64 lanes, scaled to bytes), the double at
    /// `base + index + offset`, as a pair.
    fn table_lookup(&mut self, base: Value, index: [Value; 2], offset: i32) -> [Value; 2] {
        let pt = self.pair_ty();
        let half = self.n / 2;
        if self.lane_intrinsics {
            let it = self.func.dfg.value_type(index[0]);
            let start = self.cursor().ins().iadd_imm_s(base, i64::from(offset));
            let start = self.cursor().ins().splat(it, start);
            return index.map(|i| {
                let addresses = self.cursor().ins().iadd(start, i);
                self.table_gather(addresses, types::F64)
            });
        }
        let flags = MemFlagsData::trusted().with_readonly();
        let mut out = [index[0]; 2];
        for (h, slot) in out.iter_mut().enumerate() {
            let lanes: Vec<Value> = (0..half as u8)
                .map(|k| {
                    let mut c = self.cursor();
                    let i = c.ins().extractlane(index[h], k);
                    let a = c.ins().iadd(base, i);
                    c.ins().load(types::F64, flags, a, offset)
                })
                .collect();
            *slot = self.vector_of_lanes(pt, &lanes);
        }
        out
    }

    /// e^x for −708 ≤ x ≤ 709 (normal results) as hi + lo before the scale 2^k: with
    /// kN = nearest(x·128/ln 2) = 128k + j, r = x − kN·ln(2)/128 (the first product exact:
    /// 36 bits of ln(2)/128 times |kN| < 2^17; r_lo the rest), e^x = 2^k · 2^(j/128) · e^r,
    /// 2^(j/128) a double-double from the table and e^r = 1 + r + q with q = r²/2 + … + r⁶/720
    /// in double (|r| ≤ 2^-8.5: q ≤ 2^-18, rounded to 2^-71, the rest 2^-72). The leading
    /// product T·r is split exactly by an fma. Error below 2^-68 relative.
    #[allow(clippy::type_complexity)]
    fn exp_f64(
        &mut self,
        x: [Value; 2],
        x_lo: Option<[Value; 2]>,
        table: Value,
        base2: bool,
    ) -> ([Value; 2], [Value; 2], Option<[Value; 2]>, [Value; 2]) {
        let c = |s: &mut Self, v: f64| s.splat_f64(v);
        let per_unit = if base2 {
            128.0
        } else {
            128.0 / std::f64::consts::LN_2
        };
        let (shifter, inv) = (c(self, SHIFTER), c(self, per_unit));
        let (l_hi, l_lo) = (c(self, LN2_128_HI), c(self, LN2_128_LO));
        let (ln2, ln2_lo) = (c(self, std::f64::consts::LN_2), c(self, LN2_LO53));
        let minus_step = c(self, -1.0 / 128.0);
        let (low, high) = if base2 {
            (c(self, -1022.0), c(self, 1023.0))
        } else {
            (c(self, -708.0), c(self, 709.0))
        };
        let one = c(self, 1.0);
        let q_terms = [
            c(self, 0.5),
            c(self, 1.0 / 6.0),
            c(self, 1.0 / 24.0),
            c(self, 1.0 / 120.0),
            c(self, 1.0 / 720.0),
        ];
        let it = self.pair_int_ty();
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let mut index = [x[0]; 2];
        let mut parts = Vec::new();
        {
            let mut cur = self.cursor();
            let splat = |c: &mut FuncCursor, v: i64| {
                let s = c.ins().iconst(types::I64, v);
                c.ins().splat(it, s)
            };
            for (h, slot) in index.iter_mut().enumerate() {
                let xh = x[h];
                let s = cur.ins().fma(xh, inv, shifter);
                let kn = cur.ins().fsub(s, shifter);
                let (r_first, r_tail) = if base2 {
                    // t = x − kN/128 is exact; r = t·ln 2 as a double-double.
                    let t = cur.ins().fma(kn, minus_step, xh);
                    let (r, e) = two_product(&mut cur, t, ln2);
                    let e = cur.ins().fma(t, ln2_lo, e);
                    (r, e)
                } else {
                    let minus_kn = cur.ins().fneg(kn);
                    let r_first = cur.ins().fma(minus_kn, l_hi, xh);
                    (r_first, cur.ins().fmul(minus_kn, l_lo))
                };
                // The low part of a double-double argument (pow's y·log x).
                let r_tail = match x_lo {
                    Some(l) => cur.ins().fadd(r_tail, l[h]),
                    None => r_tail,
                };
                // Renormalised (fast two-sum): r·r_lo must stay below 2^-70, and the raw
                // tail of exp's reduction (up to 2^-36) would not.
                let r_hi = cur.ins().fadd(r_first, r_tail);
                let r_d = cur.ins().fsub(r_first, r_hi);
                let r_lo = cur.ins().fadd(r_d, r_tail);
                let sb = cur.ins().bitcast(it, little, s);
                let mask = splat(&mut cur, 127);
                let j = cur.ins().band(sb, mask);
                *slot = cur.ins().ishl_imm_u(j, 4);
                // 2^k: bits(s) − j holds 128k above the shifter's bits, which shift out.
                let k_bits = cur.ins().isub(sb, j);
                let k_bits = cur.ins().ishl_imm_u(k_bits, 45);
                let one_bits = cur.ins().bitcast(it, little, one);
                let scale = cur.ins().iadd(one_bits, k_bits);
                let scale = cur.ins().bitcast(pt, little, scale);
                let ge = cur.ins().fcmp(FloatCC::GreaterThanOrEqual, xh, low);
                let le = cur.ins().fcmp(FloatCC::LessThanOrEqual, xh, high);
                let domain = cur.ins().band(ge, le);
                parts.push((r_hi, r_lo, scale, domain));
            }
        }
        let t_hi = self.table_lookup(table, index, 0);
        let t_lo = self.table_lookup(table, index, 8);
        let mut hi = [x[0]; 2];
        let mut lo = [x[0]; 2];
        let mut scale = [x[0]; 2];
        let mut domain = [x[0]; 2];
        {
            let mut cur = self.cursor();
            for h in 0..2 {
                let (r_hi, r_lo, s, d) = parts[h];
                let (th, tl) = (t_hi[h], t_lo[h]);
                let mut q = q_terms[4];
                for &t in q_terms[..4].iter().rev() {
                    q = cur.ins().fma(q, r_hi, t);
                }
                let r2 = cur.ins().fmul(r_hi, r_hi);
                let q = cur.ins().fmul(q, r2);
                // T·(1 + r_hi + (r_lo + q)) + T_lo·(1 + r_hi)
                let (p, pe) = two_product(&mut cur, th, r_hi);
                let sum = cur.ins().fadd(th, p);
                let diff = cur.ins().fsub(th, sum);
                let e1 = cur.ins().fadd(diff, p);
                let rest = cur.ins().fadd(r_lo, q);
                let t_rest = cur.ins().fmul(th, rest);
                let one_r = cur.ins().fadd(one, r_hi);
                let l = cur.ins().fma(tl, one_r, t_rest);
                let l = cur.ins().fadd(l, pe);
                let l = cur.ins().fadd(l, e1);
                hi[h] = sum;
                lo[h] = l;
                scale[h] = s;
                domain[h] = d;
            }
        }
        (hi, lo, Some(scale), domain)
    }

    /// log(x) for positive normal doubles: x = 2^e·m with m in [√½, √2) (integer steps on the
    /// bits, as float log1p does), j = m's low exponent bit and top 7 fraction bits, c ≈ 1/m
    /// from the table
    /// (1 next to m = 1), r = c·m − 1 as a double-double (c·m split by an fma, minus 1 exact),
    /// |r| ≤ 2^-7; log(x) = e·ln 2 + (−log c) + log(1 + r) with −log c a double-double from
    /// the table, log(1 + r) = r − r²/2 (r² split exactly) + r³·P(r) to r¹¹ (the rest below
    /// 2^-70 of r) + r_lo·(1 − r); the large terms added by two-sums. Error below 2^-68
    /// relative (where e = 0 and c ≠ 1, |log x| ≥ 2^-7).
    #[allow(clippy::type_complexity)]
    fn log_f64(
        &mut self,
        x: [Value; 2],
        table: Value,
    ) -> ([Value; 2], [Value; 2], Option<[Value; 2]>, [Value; 2]) {
        let c = |s: &mut Self, v: f64| s.splat_f64(v);
        let (one, shifter, half) = (c(self, 1.0), c(self, SHIFTER), c(self, 0.5));
        let (ln2_hi, ln2_lo) = (c(self, LN2_HI42), c(self, LN2_LO42));
        let (min, max) = (c(self, f64::MIN_POSITIVE), c(self, f64::MAX));
        // log(1 + r) − r + r²/2 = r³·(1/3 − r/4 + r²/5 − … − r⁸/11).
        let p_terms: Vec<Value> = (3..=11)
            .map(|k| {
                let sign = if k % 2 == 1 { 1.0 } else { -1.0 };
                c(self, sign / f64::from(k))
            })
            .collect();
        let it = self.pair_int_ty();
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let mut index = [x[0]; 2];
        let mut parts = Vec::new();
        {
            let mut cur = self.cursor();
            let splat = |c: &mut FuncCursor, v: i64| {
                let s = c.ins().iconst(types::I64, v);
                c.ins().splat(it, s)
            };
            for (h, slot) in index.iter_mut().enumerate() {
                let xh = x[h];
                let xb = cur.ins().bitcast(it, little, xh);
                let offset = splat(&mut cur, 0x3ff0_0000_0000_0000 - 0x3fe6_a09e_667f_3bcd);
                let t = cur.ins().iadd(xb, offset);
                let biased = cur.ins().ushr_imm_u(t, 52);
                let field = cur.ins().ishl_imm_u(biased, 52);
                let m = cur.ins().isub(xb, field);
                let bias = splat(&mut cur, 0x3ff0_0000_0000_0000);
                let m_bits = cur.ins().iadd(m, bias);
                let m = cur.ins().bitcast(pt, little, m_bits);
                let e_bits = splat(&mut cur, SHIFTER.to_bits() as i64 - 1023);
                let e = cur.ins().iadd(biased, e_bits);
                let e = cur.ins().bitcast(pt, little, e);
                let e = cur.ins().fsub(e, shifter);
                // The low exponent bit (m ≥ 1) and the top 7 fraction bits.
                let j = cur.ins().ushr_imm_u(m_bits, 45);
                let mask = splat(&mut cur, 255);
                let j = cur.ins().band(j, mask);
                // 24 bytes per entry: 8·(2j + j).
                let j2 = cur.ins().ishl_imm_u(j, 1);
                let j3 = cur.ins().iadd(j2, j);
                *slot = cur.ins().ishl_imm_u(j3, 3);
                let ge = cur.ins().fcmp(FloatCC::GreaterThanOrEqual, xh, min);
                let le = cur.ins().fcmp(FloatCC::LessThanOrEqual, xh, max);
                let domain = cur.ins().band(ge, le);
                parts.push((m, e, domain));
            }
        }
        let inv = self.table_lookup(table, index, 0);
        let l_hi = self.table_lookup(table, index, 8);
        let l_lo = self.table_lookup(table, index, 16);
        let mut hi = [x[0]; 2];
        let mut lo = [x[0]; 2];
        let mut domain = [x[0]; 2];
        {
            let mut cur = self.cursor();
            for h in 0..2 {
                let (m, e, d) = parts[h];
                let (p, r_lo) = two_product(&mut cur, inv[h], m);
                let r = cur.ins().fsub(p, one);
                // r − r²/2: r² exactly, then a fast two-sum (|r| ≥ r²/2).
                let (sq, sq_e) = two_product(&mut cur, r, r);
                let half_sq = cur.ins().fmul(sq, half);
                let a = cur.ins().fsub(r, half_sq);
                let a_d = cur.ins().fsub(r, a);
                let a_e = cur.ins().fsub(a_d, half_sq);
                let mut q = p_terms[p_terms.len() - 1];
                for &t in p_terms[..p_terms.len() - 1].iter().rev() {
                    q = cur.ins().fma(q, r, t);
                }
                let r3 = cur.ins().fmul(sq, r);
                let tail = cur.ins().fmul(q, r3);
                let one_minus_r = cur.ins().fsub(one, r);
                let tail = cur.ins().fma(r_lo, one_minus_r, tail);
                let half_sq_e = cur.ins().fmul(sq_e, half);
                let tail = cur.ins().fsub(tail, half_sq_e);
                // e·ln2_hi (exact) + l_hi: two-sum; then + a: two-sum.
                let big = cur.ins().fmul(e, ln2_hi);
                let (b, b_e) = two_sum(&mut cur, big, l_hi[h]);
                let (s, s_e) = two_sum(&mut cur, b, a);
                let rest = cur.ins().fma(e, ln2_lo, l_lo[h]);
                let rest = cur.ins().fadd(rest, a_e);
                let rest = cur.ins().fadd(rest, tail);
                let rest = cur.ins().fadd(rest, b_e);
                hi[h] = s;
                lo[h] = cur.ins().fadd(rest, s_e);
                domain[h] = d;
            }
        }
        (hi, lo, None, domain)
    }
}

impl Vectoriser<'_> {
    /// sin(x) or cos(x) for |x| ≤ 2^20: kN = nearest(x·128/π) = 256q + j, r = x − kN·π/128
    /// with π/128 in three parts (27 and 25 bits: their products with |kN| < 2^26 are exact;
    /// the first difference is exact, the second a two-sum, the third product rounded at
    /// 2^-88; π/128's own error times kN is 2^-90), renormalised to a double-double;
    /// sin(r) = r + r³·S(r²) to r⁷ and cos(r) = 1 − r²/2 (r² split exactly) + r⁴·C(r²) to r¹⁰
    /// (|r| ≤ π/256: remainders below 2^-75); then sin(a ± r) with sin and cos of a = jπ/128
    /// from the table, the two leading products split by fmas and joined by a two-sum.
    /// Absolute error below 2^-86 (the reduction's; the other errors are relative); where the
    /// result is below 2^-18 that is not enough relative to it, so those lanes call mathlib —
    /// unless kN = 0, where r = x exactly and every error is relative.
    #[allow(clippy::type_complexity)]
    fn sin_cos_f64(
        &mut self,
        x: [Value; 2],
        table: Value,
        cos: bool,
    ) -> ([Value; 2], [Value; 2], Option<[Value; 2]>, [Value; 2]) {
        let c = |s: &mut Self, v: f64| s.splat_f64(v);
        let (shifter, inv) = (c(self, SHIFTER), c(self, 128.0 / std::f64::consts::PI));
        let (p1, p2, p3) = (c(self, -PI_128_1), c(self, -PI_128_2), c(self, -PI_128_3));
        let (one, half, limit) = (c(self, 1.0), c(self, 0.5), c(self, 1_048_576.0));
        let (small, zero) = (c(self, 1.0 / (1u64 << 18) as f64), c(self, 0.0));
        let s_terms = [
            c(self, -1.0 / 6.0),
            c(self, 1.0 / 120.0),
            c(self, -1.0 / 5040.0),
        ];
        let c_terms = [
            c(self, 1.0 / 24.0),
            c(self, -1.0 / 720.0),
            c(self, 1.0 / 40320.0),
            c(self, -1.0 / 3_628_800.0),
        ];
        let it = self.pair_int_ty();
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let mut index = [x[0]; 2];
        let mut parts = Vec::new();
        {
            let mut cur = self.cursor();
            let splat = |c: &mut FuncCursor, v: i64| {
                let s = c.ins().iconst(types::I64, v);
                c.ins().splat(it, s)
            };
            for (h, slot) in index.iter_mut().enumerate() {
                let xh = x[h];
                let s = cur.ins().fma(xh, inv, shifter);
                let kn = cur.ins().fsub(s, shifter);
                let r1 = cur.ins().fma(kn, p1, xh);
                let m2 = cur.ins().fmul(kn, p2);
                let (r2, e2) = two_sum(&mut cur, r1, m2);
                let m3 = cur.ins().fmul(kn, p3);
                let tail = cur.ins().fadd(e2, m3);
                let r_hi = cur.ins().fadd(r2, tail);
                let d = cur.ins().fsub(r2, r_hi);
                let r_lo = cur.ins().fadd(d, tail);
                let sb = cur.ins().bitcast(it, little, s);
                let mask = splat(&mut cur, 255);
                let j = cur.ins().band(sb, mask);
                *slot = cur.ins().ishl_imm_u(j, 5);
                let ax = cur.ins().fabs(xh);
                let in_range = cur.ins().fcmp(FloatCC::LessThanOrEqual, ax, limit);
                let k_zero = cur.ins().fcmp(FloatCC::Equal, kn, zero);
                parts.push((r_hi, r_lo, in_range, k_zero));
            }
        }
        let sin_hi = self.table_lookup(table, index, 0);
        let sin_lo = self.table_lookup(table, index, 8);
        let cos_hi = self.table_lookup(table, index, 16);
        let cos_lo = self.table_lookup(table, index, 24);
        let mut hi = [x[0]; 2];
        let mut lo = [x[0]; 2];
        let mut domain = [x[0]; 2];
        let mut cur = self.cursor();
        for h in 0..2 {
            let (r_hi, r_lo, in_range, k_zero) = parts[h];
            let (z, z_e) = two_product(&mut cur, r_hi, r_hi);
            // sin(r) = r_hi + (r_lo + r_hi·z·S(z)).
            let mut sp = s_terms[2];
            for &t in s_terms[..2].iter().rev() {
                sp = cur.ins().fma(sp, z, t);
            }
            let rz = cur.ins().fmul(r_hi, z);
            let sr_lo = cur.ins().fma(rz, sp, r_lo);
            let sr_hi = r_hi;
            // cos(r) = (1 − z/2) + (−(z error)/2 − r_hi·r_lo + z²·C(z)).
            let hz = cur.ins().fmul(z, half);
            let cr_hi = cur.ins().fsub(one, hz);
            let cd = cur.ins().fsub(one, cr_hi);
            let c_e = cur.ins().fsub(cd, hz);
            let mut cp = c_terms[3];
            for &t in c_terms[..3].iter().rev() {
                cp = cur.ins().fma(cp, z, t);
            }
            let z2 = cur.ins().fmul(z, z);
            let cr_lo = cur.ins().fmul(z2, cp);
            let hze = cur.ins().fmul(z_e, half);
            let cr_lo = cur.ins().fsub(cr_lo, hze);
            let cross = cur.ins().fmul(r_hi, r_lo);
            let cr_lo = cur.ins().fsub(cr_lo, cross);
            let cr_lo = cur.ins().fadd(cr_lo, c_e);
            // sin(a + r) = sin a·cos r + cos a·sin r; cos(a + r) = cos a·cos r − sin a·sin r.
            let (a_hi, a_lo, b_hi, b_lo) = if cos {
                let nsh = cur.ins().fneg(sin_hi[h]);
                let nsl = cur.ins().fneg(sin_lo[h]);
                (cos_hi[h], cos_lo[h], nsh, nsl)
            } else {
                (sin_hi[h], sin_lo[h], cos_hi[h], cos_lo[h])
            };
            let q1 = cur.ins().fmul(a_hi, cr_hi);
            let nq1 = cur.ins().fneg(q1);
            let q1e = cur.ins().fma(a_hi, cr_hi, nq1);
            let q2 = cur.ins().fmul(b_hi, sr_hi);
            let nq2 = cur.ins().fneg(q2);
            let q2e = cur.ins().fma(b_hi, sr_hi, nq2);
            let (sum, sum_e) = two_sum(&mut cur, q1, q2);
            let l = cur.ins().fadd(q1e, q2e);
            let l = cur.ins().fma(a_hi, cr_lo, l);
            let l = cur.ins().fma(a_lo, cr_hi, l);
            let l = cur.ins().fma(b_hi, sr_lo, l);
            let l = cur.ins().fma(b_lo, sr_hi, l);
            let l = cur.ins().fadd(l, sum_e);
            // sin(±0) = ±0, which the sums above make +0.
            let (sum, l) = if cos {
                (sum, l)
            } else {
                let x_zero = cur.ins().fcmp(FloatCC::Equal, x[h], zero);
                let x_zero = cur.ins().bitcast(pt, little, x_zero);
                // (lo = x too: hi + (lo ∓ 0) keeps −0 only if lo is −0.)
                (
                    cur.ins().bitselect(x_zero, x[h], sum),
                    cur.ins().bitselect(x_zero, x[h], l),
                )
            };
            hi[h] = sum;
            lo[h] = l;
            let magnitude = cur.ins().fabs(sum);
            let large = cur
                .ins()
                .fcmp(FloatCC::GreaterThanOrEqual, magnitude, small);
            let accurate = cur.ins().bor(large, k_zero);
            domain[h] = cur.ins().band(in_range, accurate);
        }
        (hi, lo, None, domain)
    }
}

impl Vectoriser<'_> {
    /// pow(x, y) (and powr) for positive normal x and finite y with y·log x in [−708, 709]:
    /// log x as a double-double ([`Self::log_f64`], relative error 2^-68), t = y·log x as a
    /// double-double (the leading product split by an fma), then e^t ([`Self::exp_f64`] with
    /// t's low part added to its reduced argument). t's error is |t|·2^-68 absolute, which e^t
    /// carries as a relative error: the rounding test's bound is ε·(1 + |t|), returned as the
    /// fifth value.
    #[allow(clippy::type_complexity)]
    fn pow_f64(
        &mut self,
        x: [Value; 2],
        y: [Value; 2],
        log_table: Value,
        exp_table: Value,
    ) -> (
        [Value; 2],
        [Value; 2],
        Option<[Value; 2]>,
        [Value; 2],
        [Value; 2],
    ) {
        let (l_hi, l_lo, _, x_domain) = self.log_f64(x, log_table);
        let (max, one) = (self.splat_f64(f64::MAX), self.splat_f64(1.0));
        let mut t_hi = x;
        let mut t_lo = x;
        let mut y_finite = x;
        let mut bound = x;
        {
            let mut c = self.cursor();
            for h in 0..2 {
                let (p, pe) = two_product(&mut c, y[h], l_hi[h]);
                t_lo[h] = c.ins().fma(y[h], l_lo[h], pe);
                t_hi[h] = p;
                let ay = c.ins().fabs(y[h]);
                y_finite[h] = c.ins().fcmp(FloatCC::LessThanOrEqual, ay, max);
                let at = c.ins().fabs(p);
                bound[h] = c.ins().fadd(at, one);
            }
        }
        let (hi, lo, scale, exp_domain) = self.exp_f64(t_hi, Some(t_lo), exp_table, false);
        let mut domain = x_domain;
        let mut c = self.cursor();
        for h in 0..2 {
            let d = c.ins().band(x_domain[h], exp_domain[h]);
            domain[h] = c.ins().band(d, y_finite[h]);
        }
        (hi, lo, scale, domain, bound)
    }
}

/// π/128 as 27 + 25 bits and the rest.
const PI_128_1: f64 = 0.024_543_692_590_668_797;
const PI_128_2: f64 = 1.550_146_209_311_487e-11;
const PI_128_3: f64 = 8.939_357_384_546_612e-20;

/// The exact product: p = fl(a·b) and the error a·b − p, by one fma.
fn two_product(c: &mut FuncCursor, a: Value, b: Value) -> (Value, Value) {
    let p = c.ins().fmul(a, b);
    let minus_p = c.ins().fneg(p);
    (p, c.ins().fma(a, b, minus_p))
}

/// Knuth's two-sum: s = fl(a + b) and the exact error a + b − s.
fn two_sum(c: &mut FuncCursor, a: Value, b: Value) -> (Value, Value) {
    let s = c.ins().fadd(a, b);
    let bv = c.ins().fsub(s, a);
    let av = c.ins().fsub(s, bv);
    let be = c.ins().fsub(b, bv);
    let ae = c.ins().fsub(a, av);
    (s, c.ins().fadd(ae, be))
}
