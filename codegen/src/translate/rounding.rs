//! Conversions with an explicit `FPRoundingMode` decoration (env spec 6.2–6.3: the `_rte`,
//! `_rtz`, `_rtp`, `_rtn` forms of `convert_*`), exact whatever the thread's default rounding
//! mode is: Cranelift has no per-instruction rounding, so the result is built from an exactly
//! representable truncation plus a one-ulp step decided with integer or exact f64 arithmetic.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use ferrocl_frontend::spirv::{Decoration, FPRoundingMode, Word};

use super::function::Translator;

impl Translator<'_, '_, '_> {
    /// The `FPRoundingMode` decoration of result `id`, if any.
    pub(crate) fn rounding_of(&self, id: Word) -> Option<FPRoundingMode> {
        self.m
            .decorations(id)
            .filter(|d| d.kind == Decoration::FPRoundingMode)
            .find_map(|d| d.fp_rounding_mode())
    }

    pub(crate) fn is_saturated(&self, id: Word) -> bool {
        self.m.has_decoration(id, Decoration::SaturatedConversion)
    }

    /// Rounds float `x` to an integral value in `mode` before a float → integer conversion
    /// (which truncates).
    pub(crate) fn round_integral(&mut self, x: Value, mode: Option<FPRoundingMode>) -> Value {
        match mode {
            Some(FPRoundingMode::RTE) => self.b.ins().nearest(x),
            Some(FPRoundingMode::RTP) => self.b.ins().ceil(x),
            Some(FPRoundingMode::RTN) => self.b.ins().floor(x),
            _ => x,
        }
    }

    fn float_bits_type(t: types::Type) -> types::Type {
        if t == types::F32 {
            types::I32
        } else {
            types::I64
        }
    }

    /// `x` with its bit pattern incremented: the next float away from zero.
    fn step_away_from_zero(&mut self, x: Value) -> Value {
        let t = self.ty_of(x);
        let bits = self
            .b
            .ins()
            .bitcast(Self::float_bits_type(t), MemFlagsData::new(), x);
        let next = self.b.ins().iadd_imm_s(bits, 1);
        self.b.ins().bitcast(t, MemFlagsData::new(), next)
    }

    /// Integer `x` → float type `to`, rounded in `mode` (software, exact for every width).
    pub(crate) fn int_to_float_rounded(
        &mut self,
        x: Value,
        signed: bool,
        to: types::Type,
        mode: FPRoundingMode,
    ) -> Value {
        let x64 = self.resize_int(x, types::I64, signed);
        let neg = if signed {
            self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x64, 0)
        } else {
            self.b.ins().iconst(types::I8, 0)
        };
        // Magnitude as u64 (|i64::MIN| = 2^63 fits).
        let magnitude = if signed { self.b.ins().iabs(x64) } else { x64 };
        let mantissa_bits = if to == types::F32 { 24 } else { 53 };
        // Low bits that do not fit the mantissa: 64 - clz - mantissa_bits, at least 0.
        let lz = self.b.ins().clz(magnitude);
        let width = self.b.ins().iconst(types::I64, 64 - mantissa_bits);
        let shift = self.b.ins().isub(width, lz);
        let zero = self.b.ins().iconst(types::I64, 0);
        let shift = self.b.ins().smax(shift, zero);
        let kept = self.b.ins().ushr(magnitude, shift);
        let kept = self.b.ins().ishl(kept, shift);
        let rem = self.b.ins().isub(magnitude, kept);
        // `kept` has at most `mantissa_bits` significant bits: this conversion is exact.
        let toward_zero = self.b.ins().fcvt_from_uint(to, kept);
        let inexact = self.b.ins().icmp_imm_s(IntCC::NotEqual, rem, 0);
        let away = match mode {
            FPRoundingMode::RTZ => self.b.ins().iconst(types::I8, 0),
            FPRoundingMode::RTP => {
                let pos = self.b.ins().bxor_imm_s(neg, 1);
                self.b.ins().band(inexact, pos)
            }
            FPRoundingMode::RTN => self.b.ins().band(inexact, neg),
            FPRoundingMode::RTE => {
                let one = self.b.ins().iconst(types::I64, 1);
                let unit = self.b.ins().ishl(one, shift);
                let half = self.b.ins().ushr_imm_s(unit, 1);
                let above = self.b.ins().icmp(IntCC::UnsignedGreaterThan, rem, half);
                let tie = self.b.ins().icmp(IntCC::Equal, rem, half);
                let lsb = self.b.ins().ushr(kept, shift);
                let lsb = self.b.ins().band_imm_s(lsb, 1);
                let odd = self.b.ins().icmp_imm_s(IntCC::NotEqual, lsb, 0);
                let tie_up = self.b.ins().band(tie, odd);
                let up = self.b.ins().bor(above, tie_up);
                self.b.ins().band(up, inexact)
            }
        };
        let stepped = self.step_away_from_zero(toward_zero);
        let r = self.b.ins().select(away, stepped, toward_zero);
        let negated = self.b.ins().fneg(r);
        self.b.ins().select(neg, negated, r)
    }

    /// `double` → `float` rounded in `mode`: the hardware result is one of the two floats
    /// around `x`; exact f64 comparisons pick the one `mode` asks for.
    pub(crate) fn demote_rounded(&mut self, x: Value, mode: FPRoundingMode) -> Value {
        let r0 = self.b.ins().fdemote(types::F32, x);
        let back = self.b.ins().fpromote(types::F64, r0);
        let below = self.b.ins().fcmp(FloatCC::LessThan, back, x);
        // lo ≤ x ≤ hi, neighbours (equal when r0 is exact).
        let up = self.step_up(r0);
        let down = self.step_down(r0);
        let exact = self.b.ins().fcmp(FloatCC::Equal, back, x);
        let lo_if_not_below = self.b.ins().select(exact, r0, down);
        let lo = self.b.ins().select(below, r0, lo_if_not_below);
        let hi_if_not_below = r0;
        let hi = self.b.ins().select(below, up, hi_if_not_below);
        let zero = self.b.ins().f64const(0.0);
        let r = match mode {
            FPRoundingMode::RTP => hi,
            FPRoundingMode::RTN => lo,
            FPRoundingMode::RTZ => {
                let pos = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, x, zero);
                self.b.ins().select(pos, lo, hi)
            }
            // Doubles exist only while the thread rounds to nearest (FERROCL_ROUNDING=rtz turns
            // fp64 off), so the hardware result is already the nearest-even one.
            FPRoundingMode::RTE => r0,
        };
        // NaN and infinities convert exactly.
        let ax = self.b.ins().fabs(x);
        let inf64 = self.b.ins().f64const(f64::INFINITY);
        let finite = self.b.ins().fcmp(FloatCC::LessThan, ax, inf64);
        self.b.ins().select(finite, r, r0)
    }

    /// The next float above `r` (+0 and -0 go to the smallest positive denormal).
    fn step_up(&mut self, r: Value) -> Value {
        self.step(r, true)
    }

    /// The next float below `r` (±0 go to the smallest negative denormal).
    fn step_down(&mut self, r: Value) -> Value {
        self.step(r, false)
    }

    fn step(&mut self, r: Value, up: bool) -> Value {
        let bits = self.b.ins().bitcast(types::I32, MemFlagsData::new(), r);
        let zero = self.b.ins().f32const(0.0);
        let is_zero = self.b.ins().fcmp(FloatCC::Equal, r, zero);
        let positive = self.b.ins().fcmp(FloatCC::GreaterThan, r, zero);
        let plus = self.b.ins().iadd_imm_s(bits, 1);
        let minus = self.b.ins().iadd_imm_s(bits, -1);
        // Up: positive → bits+1, negative → bits-1 (toward zero). Down: the reverse.
        let moved = if up {
            self.b.ins().select(positive, plus, minus)
        } else {
            self.b.ins().select(positive, minus, plus)
        };
        // From a zero: the smallest denormal with the direction's sign.
        let tiny = self.b.ins().iconst(
            types::I32,
            if up {
                0x0000_0001
            } else {
                0x8000_0001u32 as i32 as i64
            },
        );
        let out = self.b.ins().select(is_zero, tiny, moved);
        self.b.ins().bitcast(types::F32, MemFlagsData::new(), out)
    }
}
