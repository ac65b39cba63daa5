//! Cheap OpenCL.std math emitted inline instead of called in `ferrocl-mathlib`: `rsqrt` on
//! float, `ilogb`, `logb`, `frexp`, `modf`, `fract`, `nan`, `maxmag`, `minmag`, `nextafter` and
//! float `ldexp`. A call costs more than any of these functions — every live float register is
//! caller-saved across it — and a vector argument would make one call per component; inline,
//! a vector is a few integer and float instructions per component and nothing spills.
//!
//! Each sequence returns bit for bit what mathlib's entry point returns (NaNs: a NaN), which
//! `tests/inline_math.rs` checks through real kernels. The one change of method is float
//! `rsqrt`: mathlib's is CORE-MATH's; here it is 1/√x computed in double and rounded once to
//! float, which is correctly rounded for every float as well (see [`Translator::rsqrt_f32`]).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

use super::function::Translator;

/// The bit layout of the float format of a Cranelift float type.
#[derive(Clone, Copy)]
struct Format {
    float: types::Type,
    int: types::Type,
    /// Explicit significand bits.
    mantissa: u32,
    bias: i64,
}

impl Format {
    fn of(t: types::Type) -> Self {
        if t == types::F64 {
            Format {
                float: t,
                int: types::I64,
                mantissa: 52,
                bias: 1023,
            }
        } else {
            Format {
                float: types::F32,
                int: types::I32,
                mantissa: 23,
                bias: 127,
            }
        }
    }

    fn bits(self) -> i64 {
        i64::from(self.int.bits())
    }

    fn sign_mask(self) -> i64 {
        1i64 << (self.bits() - 1)
    }

    fn abs_mask(self) -> i64 {
        !self.sign_mask() & self.all_ones()
    }

    fn all_ones(self) -> i64 {
        if self.bits() == 64 {
            -1
        } else {
            (1i64 << self.bits()) - 1
        }
    }

    /// The bit pattern of +infinity: everything above it is a NaN.
    fn infinity(self) -> i64 {
        ((1i64 << (self.bits() - 1 - i64::from(self.mantissa))) - 1) << self.mantissa
    }

    /// The smallest normal's pattern: everything below it is zero or subnormal.
    fn min_normal(self) -> i64 {
        1i64 << self.mantissa
    }

    /// The exponent of the highest set bit of a subnormal's pattern is `this - clz(pattern)`
    /// (1 → the smallest subnormal 2^(1 - bias - mantissa)).
    fn subnormal_exponent_base(self) -> i64 {
        self.bits() - 1 + 1 - self.bias - i64::from(self.mantissa)
    }
}

/// `degrees`' and `radians`' constants, each as a double-double hi + lo (hi the double nearest
/// C, lo the double nearest C − hi). 180/π = 0xe52ee0d31e0fbdc30a97537f40d257d7·2^-122
/// (truncated), π/180 = 0x8efa351294e9c8ae0ec5f66e9485c4d9·2^-133, computed exactly from π to
/// 500 bits (Machin's formula in integer arithmetic, checked against mpmath at 300 bits);
/// `tests/inline_math.rs` multiplies by these 128-bit significands exactly to check the
/// results. The float forms use hi alone.
struct AngleConstant {
    hi: f64,
    lo: f64,
    /// X_h, the one significand (as an integer in [2^52, 2^53)) whose product with C the
    /// double-double evaluation rounds wrongly.
    hard_significand: f64,
    /// The double nearest 1/X_h.
    hard_reciprocal: f64,
    /// C·X_h correctly rounded.
    hard_result: f64,
}

/// 180/π; X_h = 0x1db0fb301078be.
const DEGREES_F64: AngleConstant = AngleConstant {
    hi: f64::from_bits(0x404c_a5dc_1a63_c1f8),
    lo: f64::from_bits(0xbce1_e7ab_4564_05f9),
    hard_significand: 0x1d_b0fb_3010_78be_u64 as f64,
    hard_reciprocal: f64::from_bits(0x3ca1_3e7c_a5f5_f52f),
    hard_result: f64::from_bits(0x439a_94c0_9279_849f),
};

/// π/180; X_h = 0x196bdf4aa9cd3b.
const RADIANS_F64: AngleConstant = AngleConstant {
    hi: f64::from_bits(0x3f91_df46_a252_9d39),
    lo: f64::from_bits(0x3c15_c1d8_becd_d291),
    hard_significand: 0x19_6bdf_4aa9_cd3b_u64 as f64,
    hard_reciprocal: f64::from_bits(0x3ca4_23f9_d09e_0b5b),
    hard_result: f64::from_bits(0x42dc_655c_f14d_66cb),
};

/// Below this |x| the double forms scale x by [`SCALE_UP`] (x·C_lo stays normal down to the
/// smallest subnormal x).
const TINY_ANGLE: f64 = f64::from_bits((1023 - 900) << 52);
/// 2^200.
const SCALE_UP: f64 = f64::from_bits((1023 + 200) << 52);
/// Half the subnormal spacing 2^-1074, scaled by [`SCALE_UP`]: 2^-875.
const SUBNORMAL_HALF_STEP_SCALED: f64 = f64::from_bits((1023 - 875) << 52);

impl Translator<'_, '_, '_> {
    fn float_bits(&mut self, x: Value, f: Format) -> Value {
        self.b.ins().bitcast(f.int, MemFlagsData::new(), x)
    }

    fn bits_float(&mut self, bits: Value, f: Format) -> Value {
        self.b.ins().bitcast(f.float, MemFlagsData::new(), bits)
    }

    /// `degrees` (`degrees` true) or `radians`: x·C, correctly rounded.
    ///
    /// Float (and half, whose values are floats here and are rounded to half afterwards):
    /// x·hi in double rounded once to float. hi is within 2^-53 of C (relative) and the
    /// product rounds once more, so the double is within 2^-52 of x·C, and the float rounding
    /// could only go wrong where x·C lies that close to a float midpoint. Scaling x by a power
    /// of two scales the double product exactly, so the 2^24 significands decide every normal
    /// result; `tests/inline_math.rs` checks them, every float below 2^-120 (subnormal and
    /// underflowing results) and every half against the exact product, and the closest a
    /// product comes to a midpoint is 2^-27 ulp. No branch: a kernel that streams angles runs
    /// as fast as with one float multiply; a chain of 64 calls in registers runs 6
    /// (Cranelift) to 14 (wide code) times slower, the cost of the conversions. Flush-to-zero
    /// is the caller's, on the float argument and result.
    ///
    /// Double: see [`Self::angle_scale_f64`].
    pub(crate) fn angle_scale(&mut self, x: Value, degrees: bool) -> Value {
        let c = if degrees { &DEGREES_F64 } else { &RADIANS_F64 };
        if self.b.func.dfg.value_type(x) == types::F64 {
            return self.angle_scale_f64(x, c);
        }
        let b = &mut self.b;
        let k = b.ins().f64const(c.hi);
        let d = b.ins().fpromote(types::F64, x);
        let p = b.ins().fmul(d, k);
        b.ins().fdemote(types::F32, p)
    }

    /// Double `degrees`/`radians`, correctly rounded, without a branch (the work-item
    /// vectoriser keeps it in vector registers, compares and selects included).
    ///
    /// - hi = fma(x, C_hi, x·C_lo) (C_hi + C_lo within 2^-108 of C) is within 2^-53.9 ulp of
    ///   x·C, so it is x·C correctly rounded unless x·C lies that close to a midpoint. That
    ///   depends on x's significand alone (scaling by 2^k scales everything exactly), and
    ///   `cts/proofs/angle_f64.py` finds every significand whose product lies within 2^-40
    ///   ulp of a midpoint (continued-fraction search over all 2^52) and evaluates this whole
    ///   sequence on each exactly: one significand per constant is wrong, and is caught by
    ///   `hard` below.
    /// - The hard significand X_h: q = x·RN(1/X_h) is exactly 2^k for x = X_h·2^k (checked by
    ///   the proof), and x − q·X_h (one fma, exact) is 0 for it and for no other finite
    ///   nonzero x, since no other significand is X_h times a power of two. Its result is
    ///   then q·W, W the correctly rounded C·X_h. ±0 (residual 0), ±inf and NaN (residual
    ///   NaN) take q·W too, which is their result: fma(inf, C_hi, inf·C_lo) would be a NaN
    ///   where C_lo < 0.
    /// - |x| < 2^-900 is scaled by 2^200 first, so x·C_lo stays normal; the result scales
    ///   back exactly unless it is subnormal. Then that last rounding is a second one, and it
    ///   can only err where hi lands exactly on a midpoint of the subnormal grid (a tie):
    ///   the exact product lies on one side of hi, and the residual fma(x, -C_hi, hi) − x·C_lo
    ///   tells which (its sign is right unless x·C is within 2^-52 ulp of a double, which the
    ///   proof also checks), so the tie is rounded that way instead.
    ///
    /// About 25 operations instead of one multiply (the previous form, which erred by up to
    /// 0.81 ulp): measured on a busy AVX-512 VM, a kernel streaming `y[i] = degrees(x[i])`
    /// over 4 Mi doubles takes 1.5–1.8 ns per element in wide code against 0.4–0.9 for the
    /// multiply, 3.6–4.6 against 0.4–1.1 on Cranelift (two f64x2 halves per vector); a chain
    /// of 64 `radians(degrees(v))` per work-item about 35 times longer. Branching around the
    /// tiny-x part would not help: the vectoriser runs both sides of a varying branch.
    fn angle_scale_f64(&mut self, x: Value, c: &AngleConstant) -> Value {
        let b = &mut self.b;
        let f = |b: &mut FunctionBuilder<'_>, v: f64| b.ins().f64const(v);
        let ax = b.ins().fabs(x);
        let tiny = f(b, TINY_ANGLE);
        let small = b.ins().fcmp(FloatCC::LessThan, ax, tiny);
        let (up, down, one) = (f(b, SCALE_UP), f(b, 1.0 / SCALE_UP), f(b, 1.0));
        let s = b.ins().select(small, up, one);
        let inv = b.ins().select(small, down, one);
        let xs = b.ins().fmul(x, s);
        let lo = f(b, c.lo);
        let u = b.ins().fmul(xs, lo);
        let hi_c = f(b, c.hi);
        let hi = b.ins().fma(xs, hi_c, u);
        // The hard significand (and ±0, ±inf and NaN, whose residual is 0 or NaN).
        let r = f(b, c.hard_reciprocal);
        let q = b.ins().fmul(xs, r);
        let neg_hard = f(b, -c.hard_significand);
        let residual = b.ins().fma(q, neg_hard, xs);
        let residual = b.ins().fabs(residual);
        let zero = f(b, 0.0);
        let not_hard = b.ins().fcmp(FloatCC::GreaterThan, residual, zero);
        let w = f(b, c.hard_result);
        let exact = b.ins().fmul(q, w);
        let hi = b.ins().select(not_hard, hi, exact);
        let r0 = b.ins().fmul(hi, inv);
        // A tie in the rounding to a subnormal result, rounded toward the exact product.
        let back = b.ins().fmul(r0, s);
        let diff = b.ins().fsub(hi, back);
        let adiff = b.ins().fabs(diff);
        let half_step = f(b, SUBNORMAL_HALF_STEP_SCALED);
        let tie = b.ins().fcmp(FloatCC::Equal, adiff, half_step);
        let neg_hi_c = f(b, -c.hi);
        let below = b.ins().fma(xs, neg_hi_c, hi);
        let below = b.ins().fsub(below, u);
        let exact_above = b.ins().fcmp(FloatCC::LessThan, below, zero);
        let neg_half_step = f(b, -SUBNORMAL_HALF_STEP_SCALED);
        let step = b.ins().select(exact_above, half_step, neg_half_step);
        let toward = b.ins().fadd(hi, step);
        let toward = b.ins().fmul(toward, inv);
        b.ins().select(tie, toward, r0)
    }

    /// Float rsqrt: 1/√x in double, rounded once to float. Correctly rounded: every positive
    /// float is 4^k·m with m in [1, 4) (subnormals too), and the double computation scales
    /// exactly with 4^k, so the 2^24 significands in [1, 4) decide it; the exhaustive test
    /// `rsqrt_through_double_is_correctly_rounded` compares all of them with CORE-MATH's
    /// correctly rounded `rsqrtf`. (1/√x has no float midpoints; the double result is within
    /// 2^-52 of it, and no float's 1/√ comes that close to a midpoint.) The specials fall out
    /// of IEEE arithmetic: ±0 → ±inf, +inf → +0, negatives and NaN → NaN.
    pub(crate) fn rsqrt_f32(&mut self, x: Value) -> Value {
        let d = self.b.ins().fpromote(types::F64, x);
        let s = self.b.ins().sqrt(d);
        let one = self.b.ins().f64const(1.0);
        let r = self.b.ins().fdiv(one, s);
        self.b.ins().fdemote(types::F32, r)
    }

    /// The unbiased exponent of a finite nonzero `x` (subnormals by their leading bit), as an
    /// integer of the format's width, and |x|'s bit pattern.
    fn exponent(&mut self, x: Value, f: Format) -> (Value, Value) {
        let bits = self.float_bits(x, f);
        let abs = self.b.ins().band_imm_s(bits, f.abs_mask());
        let biased = self.b.ins().ushr_imm_s(abs, i64::from(f.mantissa));
        let normal = self.b.ins().iadd_imm_s(biased, -f.bias);
        let leading = self.b.ins().clz(abs);
        let base = self.b.ins().iconst(f.int, f.subnormal_exponent_base());
        let subnormal = self.b.ins().isub(base, leading);
        let is_subnormal = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, abs, f.min_normal());
        let e = self.b.ins().select(is_subnormal, subnormal, normal);
        (e, abs)
    }

    /// ilogb: the exponent as an int; FP_ILOGB0 = INT_MIN for ±0, FP_ILOGBNAN = INT_MAX for NaN
    /// and INT_MAX for ±inf (clang's opencl-c-base.h values, as mathlib).
    pub(crate) fn ilogb_inline(&mut self, x: Value) -> Value {
        let f = Format::of(self.ty_of(x));
        let (e, abs) = self.exponent(x, f);
        let e = if f.int == types::I32 {
            e
        } else {
            self.b.ins().ireduce(types::I32, e)
        };
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, abs, 0);
        let special = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, abs, f.infinity());
        let min = self.b.ins().iconst(types::I32, i64::from(i32::MIN));
        let max = self.b.ins().iconst(types::I32, i64::from(i32::MAX));
        let r = self.b.ins().select(is_zero, min, e);
        self.b.ins().select(special, max, r)
    }

    /// logb: the exponent as a float (exact); -inf for ±0, +inf for ±inf, NaN for NaN (6.7).
    pub(crate) fn logb_inline(&mut self, x: Value) -> Value {
        let f = Format::of(self.ty_of(x));
        let (e, abs) = self.exponent(x, f);
        let r = self.b.ins().fcvt_from_sint(f.float, e);
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, abs, 0);
        let minus_inf = self.float_const(x, f64::NEG_INFINITY);
        let r = self.b.ins().select(is_zero, minus_inf, r);
        let is_inf = self.b.ins().icmp_imm_s(IntCC::Equal, abs, f.infinity());
        let plus_inf = self.float_const(x, f64::INFINITY);
        let r = self.b.ins().select(is_inf, plus_inf, r);
        let is_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        self.b.ins().select(is_nan, x, r)
    }

    /// frexp: (m, e) with x = m·2^e and 0.5 ≤ |m| < 1; ±0, ±inf and NaN give (x, 0). `e` is
    /// an i32 (OpenCL's frexp writes an int for float and double alike). Subnormals are scaled
    /// into the normal range first (exactly), then the exponent field is replaced.
    pub(crate) fn frexp_inline(&mut self, x: Value) -> (Value, Value) {
        let f = Format::of(self.ty_of(x));
        let bits = self.float_bits(x, f);
        let abs = self.b.ins().band_imm_s(bits, f.abs_mask());
        let is_subnormal = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, abs, f.min_normal());
        let (scale, adjust) = if f.int == types::I32 {
            (2f64.powi(24), 24)
        } else {
            (2f64.powi(54), 54)
        };
        let k = self.float_const(x, scale);
        let scaled = self.b.ins().fmul(x, k);
        let y = self.b.ins().select(is_subnormal, scaled, x);
        let y_bits = self.float_bits(y, f);
        let exponent_field = f.infinity();
        let biased = self.b.ins().band_imm_s(y_bits, exponent_field);
        let biased = self.b.ins().ushr_imm_s(biased, i64::from(f.mantissa));
        let kept = self.b.ins().band_imm_s(y_bits, !exponent_field);
        let m_bits = self.b.ins().bor_imm_s(kept, (f.bias - 1) << f.mantissa);
        let m = self.bits_float(m_bits, f);
        let no_adjust = self.b.ins().iconst(f.int, 0);
        let adjust = self.b.ins().iconst(f.int, adjust);
        let adjust = self.b.ins().select(is_subnormal, adjust, no_adjust);
        let e = self.b.ins().iadd_imm_s(biased, 1 - f.bias);
        let e = self.b.ins().isub(e, adjust);
        let e = if f.int == types::I32 {
            e
        } else {
            self.b.ins().ireduce(types::I32, e)
        };
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, abs, 0);
        let not_finite =
            self.b
                .ins()
                .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, abs, f.infinity());
        let unchanged = self.b.ins().bor(is_zero, not_finite);
        let m = self.b.ins().select(unchanged, x, m);
        let zero = self.b.ins().iconst(types::I32, 0);
        let e = self.b.ins().select(unchanged, zero, e);
        (m, e)
    }

    /// modf (OpenCL 6.7.2): (x - trunc(x) with x's sign, trunc(x)); ±inf give (±0, ±inf).
    pub(crate) fn modf_inline(&mut self, x: Value) -> (Value, Value) {
        let i = self.b.ins().trunc(x);
        let d = self.b.ins().fsub(x, i);
        let ax = self.b.ins().fabs(x);
        let inf = self.float_const(x, f64::INFINITY);
        let is_inf = self.b.ins().fcmp(FloatCC::Equal, ax, inf);
        let zero = self.float_const(x, 0.0);
        let f = self.b.ins().select(is_inf, zero, d);
        (self.b.ins().fcopysign(f, x), i)
    }

    /// fract: (min(x - floor(x), the largest float below 1), floor(x)); ±0 keep their sign,
    /// ±inf give ±0, NaN gives NaN (6.7). x - floor(x) is exact; only the clamp below 1 (for
    /// tiny negative x, where it rounds to 1) changes a value.
    pub(crate) fn fract_inline(&mut self, x: Value) -> (Value, Value) {
        let i = self.b.ins().floor(x);
        let d = self.b.ins().fsub(x, i);
        let below_one = if self.ty_of(x) == types::F32 {
            self.b.ins().f32const(1.0 - f32::EPSILON / 2.0)
        } else {
            self.b.ins().f64const(1.0 - f64::EPSILON / 2.0)
        };
        let over = self.b.ins().fcmp(FloatCC::GreaterThan, d, below_one);
        let r = self.b.ins().select(over, below_one, d);
        let ax = self.b.ins().fabs(x);
        let zero = self.float_const(x, 0.0);
        let signed_zero = self.b.ins().fcopysign(zero, x);
        let inf = self.float_const(x, f64::INFINITY);
        let is_inf = self.b.ins().fcmp(FloatCC::Equal, ax, inf);
        let is_zero = self.b.ins().fcmp(FloatCC::Equal, x, zero);
        let whole = self.b.ins().bor(is_inf, is_zero);
        let r = self.b.ins().select(whole, signed_zero, r);
        let is_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        (self.b.ins().select(is_nan, x, r), i)
    }

    /// nan(code): a quiet NaN of type `float` whose payload is the low bits of `code` (an
    /// integer as wide as `float`).
    pub(crate) fn nan_inline(&mut self, code: Value, float: types::Type) -> Value {
        let f = Format::of(float);
        let quiet = 1i64 << (f.mantissa - 1);
        let payload = self.b.ins().band_imm_s(code, quiet - 1);
        let bits = self.b.ins().bor_imm_s(payload, f.infinity() | quiet);
        self.bits_float(bits, f)
    }

    /// maxmag (`larger`) or minmag: the argument of larger (smaller) magnitude; when the
    /// magnitudes are equal, fmax (fmin) decides, with +0 over -0 (-0 under +0) so the result
    /// is deterministic, and a NaN loses to a number.
    pub(crate) fn magnitude_select(&mut self, x: Value, y: Value, larger: bool) -> Value {
        let ax = self.b.ins().fabs(x);
        let ay = self.b.ins().fabs(y);
        let (wins, loses) = if larger {
            (FloatCC::GreaterThan, FloatCC::LessThan)
        } else {
            (FloatCC::LessThan, FloatCC::GreaterThan)
        };
        let x_wins = self.b.ins().fcmp(wins, ax, ay);
        let y_wins = self.b.ins().fcmp(loses, ax, ay);
        let f = Format::of(self.ty_of(x));
        let y_bits = self.float_bits(y, f);
        let y_negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, y_bits, 0);
        // Equal magnitudes: maxmag keeps x when y is the negative one, minmag when y is the
        // positive one.
        let keep_x = if larger {
            y_negative
        } else {
            self.b.ins().bxor_imm_s(y_negative, 1)
        };
        let x_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let y_nan = self.b.ins().fcmp(FloatCC::Unordered, y, y);
        let keep_x = self.b.ins().bor(keep_x, y_nan);
        let tie = self.b.ins().select(keep_x, x, y);
        let tie = self.b.ins().select(x_nan, y, tie);
        let r = self.b.ins().select(y_wins, y, tie);
        self.b.ins().select(x_wins, x, r)
    }

    /// nextafter(x, y) as C99: NaN if either is NaN, y if x == y, the smallest subnormal with
    /// y's sign from either zero, else one step of x's pattern toward y (the pattern of a
    /// float is monotonic in its magnitude; stepping past the largest finite gives infinity).
    pub(crate) fn nextafter_inline(&mut self, x: Value, y: Value) -> Value {
        let f = Format::of(self.ty_of(x));
        let x_bits = self.float_bits(x, f);
        let y_bits = self.float_bits(y, f);
        let zero = self.float_const(x, 0.0);
        let toward_larger = self.b.ins().fcmp(FloatCC::GreaterThan, y, x);
        let x_positive = self.b.ins().fcmp(FloatCC::GreaterThan, x, zero);
        let away_from_zero = self.b.ins().icmp(IntCC::Equal, toward_larger, x_positive);
        let up = self.b.ins().iconst(f.int, 1);
        let down = self.b.ins().iconst(f.int, -1);
        let step = self.b.ins().select(away_from_zero, up, down);
        let next = self.b.ins().iadd(x_bits, step);
        let y_sign = self.b.ins().band_imm_s(y_bits, f.sign_mask());
        let smallest = self.b.ins().bor_imm_s(y_sign, 1);
        let x_zero = self.b.ins().fcmp(FloatCC::Equal, x, zero);
        let r = self.b.ins().select(x_zero, smallest, next);
        let r = self.bits_float(r, f);
        let equal = self.b.ins().fcmp(FloatCC::Equal, x, y);
        let r = self.b.ins().select(equal, y, r);
        let unordered = self.b.ins().fcmp(FloatCC::Unordered, x, y);
        let nan = self.b.ins().fadd(x, y);
        self.b.ins().select(unordered, nan, r)
    }

    /// Float ldexp(x, n): x·2^n with one rounding. In double, x·2^n is exact for |n| ≤ 400
    /// (2^-549 ≤ |x·2^n| ≤ 2^528), so the narrowing to float is the only rounding, subnormal
    /// and overflowing results included; beyond ±400 every nonzero float over- or underflows
    /// anyway, so n is clamped there. `n` is an i32.
    pub(crate) fn ldexp_f32(&mut self, x: Value, n: Value) -> Value {
        let hi = self.b.ins().iconst(types::I32, 400);
        let lo = self.b.ins().iconst(types::I32, -400);
        let n = self.b.ins().smin(n, hi);
        let n = self.b.ins().smax(n, lo);
        let n = self.b.ins().sextend(types::I64, n);
        let biased = self.b.ins().iadd_imm_s(n, 1023);
        let bits = self.b.ins().ishl_imm_s(biased, 52);
        let scale = self.b.ins().bitcast(types::F64, MemFlagsData::new(), bits);
        let d = self.b.ins().fpromote(types::F64, x);
        let p = self.b.ins().fmul(d, scale);
        self.b.ins().fdemote(types::F32, p)
    }

    /// The half nearest (ties to even) to f32 `x`, as the f32 holding it: the rounding pair
    /// `fpromote (fdemote.f16 x)`, which the wide backend lowers to hardware conversions and
    /// `half_rounding::lower_pairs` to exact integer code for Cranelift.
    pub(crate) fn round_to_half_rte(&mut self, x: Value) -> Value {
        let h = self.b.ins().fdemote(types::F16, x);
        self.b.ins().fpromote(types::F32, h)
    }

    /// The encoding (i16) of half value `x` (an f32 holding a half), bit for bit as mathlib's
    /// `ferrocl_f16_bits`: NaN payloads move unchanged (signalling NaNs stay signalling; a
    /// payload below the half's bits, which no half has, becomes 0x200 to stay a NaN).
    pub(crate) fn half_encoding_inline(&mut self, x: Value) -> Value {
        let f = Format::of(types::F32);
        let bits = self.float_bits(x, f);
        let abs = self.b.ins().band_imm_s(bits, 0x7fff_ffff);
        let sign = self.b.ins().ushr_imm_s(bits, 16);
        let sign = self.b.ins().band_imm_s(sign, 0x8000);
        // Normal halves (and rounding, for values that are not halves).
        let m = self.b.ins().iadd_imm_s(abs, -(112 << 23));
        let last = self.b.ins().ushr_imm_s(m, 13);
        let last = self.b.ins().band_imm_s(last, 1);
        let r = self.b.ins().iadd_imm_s(m, 0xfff);
        let r = self.b.ins().iadd(r, last);
        let normal = self.b.ins().ushr_imm_s(r, 13);
        // Subnormal halves and zeros: |x| in units of 2^-24.
        let ax = self.b.ins().fabs(x);
        let up = self.b.ins().f32const(2f32.powi(24));
        let units = self.b.ins().fmul(ax, up);
        let units = self.b.ins().nearest(units);
        let small = self.b.ins().fcvt_to_uint_sat(types::I32, units);
        let is_small = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, abs, 0x3880_0000);
        let r = self.b.ins().select(is_small, small, normal);
        let overflow = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, abs, 0x4780_0000);
        let inf = self.b.ins().iconst(types::I32, 0x7c00);
        let r = self.b.ins().select(overflow, inf, r);
        let payload = self.b.ins().ushr_imm_s(abs, 13);
        let payload = self.b.ins().band_imm_s(payload, 0x3ff);
        let empty = self.b.ins().icmp_imm_s(IntCC::Equal, payload, 0);
        let quiet = self.b.ins().iconst(types::I32, 0x200);
        let payload = self.b.ins().select(empty, quiet, payload);
        let nan = self.b.ins().bor_imm_s(payload, 0x7c00);
        let is_nan = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThan, abs, 0x7f80_0000);
        let r = self.b.ins().select(is_nan, nan, r);
        let r = self.b.ins().bor(r, sign);
        self.b.ins().ireduce(types::I16, r)
    }
}
