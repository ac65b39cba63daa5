//! Reduced-accuracy float math at vector speed, where OpenCL allows it: `native_*` and `half_*`
//! functions, and every call under `-cl-fast-relaxed-math` (OpenCL C 3.0 §7.4, the relaxed
//! column of the ULP table). The default stays correctly rounded (math.rs).
//!
//! Everything is evaluated in float arithmetic, as many lanes as the vector holds floats, with
//! no rounding test. `exp`, `exp2`, `exp10`: a Cody–Waite reduction (fma), a Taylor polynomial
//! of degree 7 (truncation below 2^-27), the exponent put back with integer arithmetic. `log`,
//! `log2`, `log10`: the exponent and significand from the bits, Cephes' `logf` polynomial.
//! `sin`, `cos`: π/2 as three floats by fmas (the first step exact), Cephes' `sinf`/`cosf`
//! polynomials. Over every float the largest errors are 0.8–2.03 ulp (log10 the largest; the
//! table in cts/results/vector-math-exhaustive.md), against relaxed bounds of 3 + ⌊2|x|⌋ ulp
//! (exp family), 3 ulp or 2^-21 absolute in [0.5, 2] (log family), an absolute 2^-11 in
//! [−π, π] (sin, cos), and 8192 ulp for `half_*`. Lanes outside a function's fast domain (log
//! of zero, negatives, subnormals, infinities and NaNs; sin and cos beyond 2^16) call the
//! correctly rounded scalar function. `codegen/tests/relaxed_math.rs` checks the bounds (on
//! every float with its ignored test).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self, types, Endianness, InstBuilder, MemFlagsData, Value};

use super::analysis::Form;
use super::math::VectorMath;
use super::rewrite::Vectoriser;

/// 1.5 × 2^23: added to a float below 2^22 in magnitude, leaves its nearest integer in the
/// low bits of the sum.
const SHIFTER_F32: f32 = 12_582_912.0;

/// Cephes `logf`: log(1 + f) = f − f²/2 + f³·P(f) for f in [√½ − 1, √2 − 1]; highest degree
/// first.
const LOGF_POLY: [f32; 9] = [
    7.037_683_6e-2,
    -1.151_461_e-1,
    1.167_699_9e-1,
    -1.242_014_1e-1,
    1.424_932_3e-1,
    -1.666_805_8e-1,
    2.000_071_4e-1,
    -2.499_999_4e-1,
    3.333_333e-1,
];

/// Which exponential.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Base {
    E,
    Two,
    Ten,
}

impl Vectoriser<'_> {
    /// Emits relaxed function `f` of `operands` for call `inst`.
    pub(super) fn relaxed_math(&mut self, inst: ir::Inst, f: VectorMath, operands: &[Value]) {
        let x = operands[0];
        let (y, domain) = match f {
            VectorMath::RelaxedExp => (self.relaxed_exp(x, Base::E), None),
            VectorMath::RelaxedExp2 => (self.relaxed_exp(x, Base::Two), None),
            VectorMath::RelaxedExp10 => (self.relaxed_exp(x, Base::Ten), None),
            VectorMath::RelaxedLog | VectorMath::RelaxedLog2 | VectorMath::RelaxedLog10 => {
                let (y, domain) = self.relaxed_log(x, f);
                (y, Some(domain))
            }
            VectorMath::RelaxedSin | VectorMath::RelaxedCos => {
                let (y, domain) = self.relaxed_trig(x, f == VectorMath::RelaxedCos);
                (y, Some(domain))
            }
            other => unreachable!("{other:?} has no relaxed form"),
        };
        let v = match domain {
            None => y,
            Some(domain) => self.called_outside(inst, operands, y, domain),
        };
        let result = self.func.dfg.inst_results(inst)[0];
        self.define(result, Form::Vector(v));
    }

    fn splat_f32(&mut self, v: f32) -> Value {
        let vt = self.wide(types::F32);
        let mut c = self.cursor();
        let s = c.ins().f32const(v);
        c.ins().splat(vt, s)
    }

    fn splat_i32(&mut self, v: i32) -> Value {
        let it = self.mask_ty();
        let mut c = self.cursor();
        let s = c.ins().iconst(types::I32, i64::from(v));
        c.ins().splat(it, s)
    }

    /// Σ coeffs[i]·xⁱ (highest degree first) by Horner's rule with fmas, in float.
    fn horner_f32(&mut self, x: Value, coeffs: &[f32]) -> Value {
        let (&first, rest) = coeffs.split_first().expect("a polynomial");
        let mut acc = self.splat_f32(first);
        for &c in rest {
            let c = self.splat_f32(c);
            acc = self.cursor().ins().fma(acc, x, c);
        }
        acc
    }

    /// e^x, 2^x or 10^x in float: x clamped to where the result is between zero and
    /// infinity, k = nearest(x·log2 b) (by the shifter), r = x·ln b − k·ln 2 as x − k·(ln 2 /
    /// ln b) in two fma steps (exact for base 2), e^(r·ln b) by Taylor to degree 7 (|r·ln b|
    /// ≤ ln 2 / 2: remainder 2^-27.5), times 2^k in two halves so that subnormal results round
    /// once. NaN stays NaN.
    fn relaxed_exp(&mut self, x: Value, base: Base) -> Value {
        use std::f64::consts::{LN_10, LN_2, LOG2_10, LOG2_E};
        let (low, high, log2_b, ln_b) = match base {
            Base::E => (-104.0, 89.0, LOG2_E, 1.0),
            Base::Two => (-152.0, 129.0, 1.0, LN_2),
            Base::Ten => (-46.0, 39.0, LOG2_10, LN_10),
        };
        let (lo, hi) = (self.splat_f32(low), self.splat_f32(high));
        let vt = self.wide(types::F32);
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let x = super::math::clamp(&mut self.cursor(), vt, x, lo, hi);
        let shifter = self.splat_f32(SHIFTER_F32);
        let c_log2 = self.splat_f32(log2_b as f32);
        let s = self.cursor().ins().fma(x, c_log2, shifter);
        let k = self.cursor().ins().fsub(s, shifter);
        let r = if base == Base::Two {
            self.cursor().ins().fsub(x, k)
        } else {
            // ln 2 / ln b as a float with 8 significant bits (k times it is exact) plus the rest.
            let step = LN_2 / ln_b;
            let step_hi = f32::from_bits((step as f32).to_bits() & 0xffff_0000);
            let step_lo = (step - f64::from(step_hi)) as f32;
            let minus_k = self.cursor().ins().fneg(k);
            let (p1, p2) = (self.splat_f32(step_hi), self.splat_f32(step_lo));
            let r = self.cursor().ins().fma(minus_k, p1, x);
            self.cursor().ins().fma(minus_k, p2, r)
        };
        // e^(r·ln b) = Σ (ln b)ⁿ rⁿ / n!, highest degree first.
        let mut coeffs = [0f32; 8];
        let mut term = 1f64;
        for (n, c) in coeffs.iter_mut().rev().enumerate() {
            *c = term as f32;
            term *= ln_b / (n + 1) as f64;
        }
        let p = self.horner_f32(r, &coeffs);
        // 2^k = 2^(k − k/2)·2^(k/2), each a normal float for |k| ≤ 254.
        let it = self.mask_ty();
        let shifter_bits = self.splat_i32(SHIFTER_F32.to_bits() as i32);
        let bias = self.splat_i32(127);
        let mut c = self.cursor();
        let sb = c.ins().bitcast(it, little, s);
        let ki = c.ins().isub(sb, shifter_bits);
        let k1 = c.ins().sshr_imm_u(ki, 1);
        let k2 = c.ins().isub(ki, k1);
        let mut y = p;
        for part in [k1, k2] {
            let e = c.ins().iadd(part, bias);
            let e = c.ins().ishl_imm_u(e, 23);
            let scale = c.ins().bitcast(vt, little, e);
            y = c.ins().fmul(y, scale);
        }
        y
    }

    /// sin or cos (`cos`) of the floats with |x| ≤ 2^16 (the domain): k = nearest(x·2/π), r =
    /// x − k·π/2 with π/2 as three floats by fmas — the first step is exact (x − k·p1 is a
    /// multiple of 2^-23 below 1), the next two round relative to r, whose error stays near
    /// 2^-24 since k·p3 < 2^-33 — then Cephes' `sinf`/`cosf` polynomials on |r| ≤ π/4, chosen
    /// and signed by k mod 4. sin(±0) = ±0.
    fn relaxed_trig(&mut self, x: Value, cos: bool) -> (Value, Value) {
        use std::f64::consts::{FRAC_2_PI, FRAC_PI_2};
        // π/2 as three floats, the last from π/2's double-double value: the double alone is
        // off by 6e-17, 3 % of p3, which k·p3 would carry into r (24 ulp of sin near 1425π).
        const FRAC_PI_2_LO: f64 = 6.123_233_995_736_766e-17;
        let p1 = FRAC_PI_2 as f32;
        let p2 = (FRAC_PI_2 - f64::from(p1)) as f32;
        let p3 = ((FRAC_PI_2 - f64::from(p1) - f64::from(p2)) + FRAC_PI_2_LO) as f32;
        let vt = self.wide(types::F32);
        let it = self.mask_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let domain = {
            let bound = self.splat_f32(65_536.0);
            let mut c = self.cursor();
            let a = c.ins().fabs(x);
            c.ins().fcmp(FloatCC::LessThanOrEqual, a, bound)
        };
        let (shifter, two_over_pi) = (
            self.splat_f32(SHIFTER_F32),
            self.splat_f32(FRAC_2_PI as f32),
        );
        let (c1, c2, c3) = (self.splat_f32(p1), self.splat_f32(p2), self.splat_f32(p3));
        let shifter_bits = self.splat_i32(SHIFTER_F32.to_bits() as i32);
        let (r, q) = {
            let mut c = self.cursor();
            let s = c.ins().fma(x, two_over_pi, shifter);
            let k = c.ins().fsub(s, shifter);
            let minus_k = c.ins().fneg(k);
            let r = c.ins().fma(minus_k, c1, x);
            let r = c.ins().fma(minus_k, c2, r);
            let r = c.ins().fma(minus_k, c3, r);
            let sb = c.ins().bitcast(it, little, s);
            (r, c.ins().isub(sb, shifter_bits))
        };
        let z = self.cursor().ins().fmul(r, r);
        // sin(r) = r + r·z·S(z); cos(r) = 1 − z/2 + z²·C(z).
        let sp = self.horner_f32(z, &[-1.951_529_6e-4, 8.332_161e-3, -1.666_665_5e-1]);
        let cp = self.horner_f32(z, &[2.443_315_7e-5, -1.388_731_6e-3, 4.166_664_6e-2]);
        let (one, minus_half) = (self.splat_f32(1.0), self.splat_f32(-0.5));
        let (one_i, two_i) = (self.splat_i32(1), self.splat_i32(2));
        let mut c = self.cursor();
        let rz = c.ins().fmul(r, z);
        let sin_r = c.ins().fma(rz, sp, r);
        let z2 = c.ins().fmul(z, z);
        let half_z = c.ins().fma(z, minus_half, one);
        let cos_r = c.ins().fma(z2, cp, half_z);
        // cos(x) = sin(x + π/2): one more quadrant.
        let q = if cos { c.ins().iadd(q, one_i) } else { q };
        let odd_bit = c.ins().band(q, one_i);
        let odd = c.ins().icmp(IntCC::Equal, odd_bit, one_i);
        let odd = c.ins().bitcast(vt, little, odd);
        let v = c.ins().bitselect(odd, cos_r, sin_r);
        // Negative in the second half turn: q & 2 moved to the sign bit.
        let half_turn = c.ins().band(q, two_i);
        let sign = c.ins().ishl_imm_u(half_turn, 30);
        let vb = c.ins().bitcast(it, little, v);
        let signed = c.ins().bxor(vb, sign);
        (c.ins().bitcast(vt, little, signed), domain)
    }

    /// log, log2 or log10 of the normal positive floats (the mask of them is the domain): x =
    /// m·2^e with m in [√½, √2) by integer arithmetic on the bits, log(m) = log(1 + f) by
    /// Cephes' `logf` polynomial (f = m − 1 is exact), and e·log_b 2 added with the split
    /// constants.
    fn relaxed_log(&mut self, x: Value, f: VectorMath) -> (Value, Value) {
        use std::f64::consts::{LOG10_2, LOG10_E, LOG2_E};
        let it = self.mask_ty();
        let vt = self.wide(types::F32);
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let (min_normal, infinity) = (self.splat_i32(0x0080_0000), self.splat_i32(0x7f80_0000));
        let sqrt_half = self.splat_i32(0x3f35_04f3);
        let (domain, e, m) = {
            let mut c = self.cursor();
            let xi = c.ins().bitcast(it, little, x);
            let normal = c
                .ins()
                .icmp(IntCC::SignedGreaterThanOrEqual, xi, min_normal);
            let finite = c.ins().icmp(IntCC::SignedLessThan, xi, infinity);
            let domain = c.ins().band(normal, finite);
            let t = c.ins().isub(xi, sqrt_half);
            let e = c.ins().sshr_imm_u(t, 23);
            let shift = c.ins().ishl_imm_u(e, 23);
            let mi = c.ins().isub(xi, shift);
            let m = c.ins().bitcast(vt, little, mi);
            (domain, e, m)
        };
        let one = self.splat_f32(1.0);
        let minus_half = self.splat_f32(-0.5);
        let fm = self.cursor().ins().fsub(m, one);
        let z = self.cursor().ins().fmul(fm, fm);
        let p = self.horner_f32(fm, &LOGF_POLY);
        let ef = self.cursor().ins().fcvt_from_sint(vt, e);
        let fz = self.cursor().ins().fmul(fm, z);
        let y = self.cursor().ins().fmul(fz, p);
        let r = match f {
            VectorMath::RelaxedLog => {
                // Cephes: e·ln 2 as 0.693359375 (exact times e) − 2.12194440e-4.
                let (q1, q2) = (self.splat_f32(-2.121_944_4e-4), self.splat_f32(0.693_359_4));
                let mut c = self.cursor();
                let y = c.ins().fma(ef, q1, y);
                let y = c.ins().fma(z, minus_half, y);
                let s = c.ins().fadd(fm, y);
                c.ins().fma(ef, q2, s)
            }
            VectorMath::RelaxedLog2 => {
                let log2e = self.splat_f32(LOG2_E as f32);
                let mut c = self.cursor();
                let y = c.ins().fma(z, minus_half, y);
                let l = c.ins().fadd(fm, y);
                c.ins().fma(l, log2e, ef)
            }
            _ => {
                let log10e = self.splat_f32(LOG10_E as f32);
                let hi = f32::from_bits((LOG10_2 as f32).to_bits() & 0xffff_0000);
                let lo = (LOG10_2 - f64::from(hi)) as f32;
                let (hi, lo) = (self.splat_f32(hi), self.splat_f32(lo));
                let mut c = self.cursor();
                let y = c.ins().fma(z, minus_half, y);
                let l = c.ins().fadd(fm, y);
                let tail = c.ins().fmul(ef, lo);
                let t = c.ins().fma(l, log10e, tail);
                c.ins().fma(ef, hi, t)
            }
        };
        (r, domain)
    }
}
