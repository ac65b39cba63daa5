//! The CTS math_brute_force error measure: |test - reference| in ulps of the reference, with its
//! rules for powers of two, subnormals, overflow to infinity and NaN.

/// A floating-point format, by the C `<float.h>` constants the CTS uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// `FLT_MANT_DIG` / `DBL_MANT_DIG`: significand bits including the implicit one.
    pub mant_dig: i32,
    /// `FLT_MIN_EXP` / `DBL_MIN_EXP`: FLT_MIN = 2^(min_exp - 1).
    pub min_exp: i32,
    /// `FLT_MAX_EXP` / `DBL_MAX_EXP`: the first power of two that overflows.
    pub max_exp: i32,
    /// OpenCL C name of the type.
    pub name: &'static str,
}

pub const F32: Format = Format {
    mant_dig: 24,
    min_exp: -125,
    max_exp: 128,
    name: "float",
};
pub const F64: Format = Format {
    mant_dig: 53,
    min_exp: -1021,
    max_exp: 1024,
    name: "double",
};
pub const F16: Format = Format {
    mant_dig: 11,
    min_exp: -13,
    max_exp: 16,
    name: "half",
};

impl Format {
    /// Bytes of one value in device memory.
    pub fn bytes(self) -> usize {
        match self.mant_dig {
            11 => 2,
            24 => 4,
            _ => 8,
        }
    }

    /// `x` rounded to nearest even in this format (overflow to infinity), as a double.
    pub fn round(self, x: f64) -> f64 {
        match self.mant_dig {
            24 => f64::from(x as f32),
            11 => f16_to_f64(f64_to_f16(x)),
            _ => x,
        }
    }

    /// The largest finite number.
    pub fn max_finite(self) -> f64 {
        ldexp(2.0 - ldexp(1.0, 1 - self.mant_dig), self.max_exp - 1)
    }

    /// The smallest positive normal number.
    pub fn min_normal(self) -> f64 {
        ldexp(1.0, self.min_exp - 1)
    }
}

/// x · 2^k without intermediate overflow or underflow for any k the formats need.
pub fn ldexp(mut x: f64, mut k: i32) -> f64 {
    while k > 1000 {
        x *= f64::from_bits(((1023 + 1000) as u64) << 52);
        k -= 1000;
    }
    while k < -1000 {
        x *= f64::from_bits(((1023 - 1000) as u64) << 52);
        k += 1000;
    }
    x * f64::from_bits(((1023 + k) as u64) << 52)
}

/// Exponent of a finite nonzero f64 (subnormals included).
fn ilogb(x: f64) -> i32 {
    let e = ((x.to_bits() >> 52) & 0x7ff) as i32;
    if e == 0 {
        ilogb(x * ldexp(1.0, 64)) - 64
    } else {
        e - 1023
    }
}

/// The reference stores the tail times 2^LO_SHIFT when |hi| < 2^-800 (reference.c), so that it
/// does not underflow below the double subnormals. This is that scale's exponent for a given hi.
pub fn lo_shift(hi: f64) -> i32 {
    if hi != 0.0 && hi.abs() < ldexp(1.0, -800) {
        256
    } else {
        0
    }
}

/// The tail as a plain number (underflows for tiny references: for display and rounding only;
/// [`ulp_error`] applies the scale itself so the tail is never lost).
pub fn unscale_lo(hi: f64, lo: f64) -> f64 {
    ldexp(lo, -lo_shift(hi))
}

/// Signed error of `test` against the reference `hi + lo` (an unevaluated double-double), in
/// ulps of the reference in format `fmt`, following the CTS's `Ulp_Error`:
/// - a NaN reference accepts any NaN (error 0); a NaN where a number was expected is infinitely
///   wrong, and so is any result other than the same infinity for an infinite reference;
/// - an infinite test result for a finite reference counts as 2^max_exp (the next power of two
///   beyond the maximum), so overflowing early is allowed within the bound (spec 6.6);
/// - the ulp is that of the reference's binade, clamped to the subnormal ulp; when the reference
///   is exactly a power of two (or just below one) the ulp of the binade below is used, so
///   results on both sides are measured in the finer unit, as the CTS does.
pub fn ulp_error(test: f64, hi: f64, lo: f64, fmt: Format) -> f64 {
    if hi.is_nan() {
        return if test.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if test.is_nan() {
        return f64::INFINITY;
    }
    if hi.is_infinite() {
        return if test == hi { 0.0 } else { f64::INFINITY };
    }
    let shift = lo_shift(hi);
    // Exactly a power of two, or just below one in magnitude (tail of the opposite sign).
    let pow2 = hi == 0.0
        || (hi.to_bits() & ((1u64 << 52) - 1) == 0
            && (lo == 0.0 || lo.is_sign_negative() != hi.is_sign_negative()));
    let e = if hi == 0.0 {
        i32::MIN
    } else if pow2 {
        ilogb(hi) - 1
    } else {
        ilogb(hi)
    };
    let ulp_exp = fmt.mant_dig - 1 - e.max(fmt.min_exp - 1);
    if test.is_infinite() {
        // 2^max_exp, scaled: never representable as the test value itself for double.
        let t = ldexp(1.0f64.copysign(test), fmt.max_exp + ulp_exp);
        return (t - ldexp(hi, ulp_exp)) - ldexp(lo, ulp_exp - shift);
    }
    ldexp(test - hi, ulp_exp) - ldexp(lo, ulp_exp - shift)
}

/// The value of half encoding `h`.
/// A signalling NaN (quiet bit clear, payload 1): special inputs carry it to the device in
/// every format (`f64_to_f32`, `f64_to_f16`), since IEEE functions must treat it as the C99
/// cases say for any NaN (`hypot(inf, NaN)`, `pow(1, NaN)`); references see a quiet NaN.
pub const SIGNALLING_NAN: f64 = f64::from_bits(0x7ff0_0000_0000_0001);

/// Whether `x` is a signalling NaN.
pub fn is_signalling(x: f64) -> bool {
    x.is_nan() && x.to_bits() & (1 << 51) == 0
}

/// `x` as a float, keeping a signalling NaN signalling (`as` quiets it).
pub fn f64_to_f32(x: f64) -> f32 {
    if is_signalling(x) {
        let sign = if x.is_sign_negative() { 0x8000_0000 } else { 0 };
        return f32::from_bits(sign | 0x7f80_0001);
    }
    x as f32
}

pub fn f16_to_f64(h: u16) -> f64 {
    // A signalling half NaN stays signalling (inputs keep it to the device).
    if h & 0x7e00 == 0x7c00 && h & 0x1ff != 0 {
        return if h & 0x8000 != 0 {
            -SIGNALLING_NAN
        } else {
            SIGNALLING_NAN
        };
    }
    ferrocl_testref::f16_to_f64(h)
}

/// nextafter in the half format for half values `x`, `y`.
pub fn next_half(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        return ldexp(1.0, -24).copysign(y - x);
    }
    let h = f64_to_f16(x);
    // Encodings order magnitudes: away from zero is +1.
    let away = (y > x) == (x > 0.0);
    f16_to_f64(if away { h + 1 } else { h - 1 })
}

/// The half nearest `x` (ties to even; a NaN to a quiet NaN, a signalling NaN to a signalling
/// one): the host C compiler's conversion (`ferrocl-testref`, shares no code with the driver).
pub fn f64_to_f16(x: f64) -> u16 {
    if is_signalling(x) {
        let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
        return sign | 0x7c01;
    }
    if x.is_nan() {
        let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
        return sign | 0x7e00;
    }
    ferrocl_testref::f64_to_f16(x, ferrocl_testref::Rounding::NearestEven)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_finite_values() {
        assert_eq!(F32.max_finite(), f64::from(f32::MAX));
        assert_eq!(F64.max_finite(), f64::MAX);
        assert_eq!(F16.max_finite(), 65504.0);
    }

    fn e32(test: f32, reference: f64) -> f64 {
        ulp_error(f64::from(test), reference, 0.0, F32)
    }

    #[test]
    fn half_rounding_is_exact_at_ties_and_limits() {
        assert_eq!(f64_to_f16(1.0 + ldexp(1.0, -11)), 0x3c00);
        assert_eq!(f64_to_f16(1.0 + 3.0 * ldexp(1.0, -11)), 0x3c02);
        assert_eq!(f64_to_f16(1.0 + ldexp(1.0, -11) + ldexp(1.0, -40)), 0x3c01);
        assert_eq!(f64_to_f16(65519.99), 0x7bff);
        assert_eq!(f64_to_f16(65520.0), 0x7c00);
        assert_eq!(f64_to_f16(ldexp(1.0, -25)), 0x0000);
        assert_eq!(f64_to_f16(ldexp(1.5, -25)), 0x0001);
        assert_eq!(f64_to_f16(ldexp(1023.5, -24)), 0x0400);
        for h in (0..0x7c00u16).chain(0x8000..0xfc00) {
            assert_eq!(f64_to_f16(f16_to_f64(h)), h);
        }
    }

    #[test]
    fn exact_and_one_ulp() {
        assert_eq!(e32(1.5, 1.5), 0.0);
        assert_eq!(e32(1.5 + f32::EPSILON, 1.5), 1.0);
        assert_eq!(e32(-1.5 - f32::EPSILON, -1.5), -1.0);
        assert_eq!(e32(3.0, 3.0 + f64::from(f32::EPSILON)), -0.5);
    }

    #[test]
    fn powers_of_two_use_the_finer_ulp() {
        // Above 1.0 the float spacing is 2^-23, but the CTS measures in the ulp below: 2^-24.
        assert_eq!(e32(1.0 + f32::EPSILON, 1.0), 2.0);
        assert_eq!(e32(1.0 - f32::EPSILON / 2.0, 1.0), -1.0);
        // Just below a power of two (negative tail): still the finer ulp.
        let below = ulp_error(1.0, 1.0, -ldexp(1.0, -30), F32);
        assert!((below - ldexp(1.0, -6)).abs() < 1e-12, "{below}");
        // Just above (positive tail): the ulp of [1, 2).
        let above = ulp_error(1.0, 1.0, ldexp(1.0, -30), F32);
        assert!((above + ldexp(1.0, -7)).abs() < 1e-12, "{above}");
    }

    #[test]
    fn subnormals_and_zero() {
        let d = f64::from(f32::from_bits(1));
        assert_eq!(e32(f32::from_bits(4), 3.0 * d), 1.0);
        assert_eq!(e32(f32::from_bits(1), 0.0), 1.0);
        assert_eq!(e32(0.0, 0.5 * d), -0.5);
        assert_eq!(e32(f32::MIN_POSITIVE, f64::from(f32::MIN_POSITIVE)), 0.0);
        let dd = f64::from_bits(1);
        assert_eq!(ulp_error(2.0 * dd, dd, 0.0, F64), 1.0);
        assert_eq!(ulp_error(dd, 0.0, 0.0, F64), 1.0);
    }

    #[test]
    fn overflow_counts_as_the_next_power_of_two() {
        assert_eq!(e32(f32::INFINITY, f64::from(f32::MAX)), 1.0);
        let half_ulp_over = f64::from(f32::MAX) + ldexp(1.0, 103);
        assert_eq!(e32(f32::INFINITY, half_ulp_over), 0.5);
        assert_eq!(e32(f32::NEG_INFINITY, -f64::from(f32::MAX)), -1.0);
        assert_eq!(ulp_error(f64::INFINITY, f64::MAX, 0.0, F64), 1.0);
        // Far from the limit, infinity is a large error, not a pass.
        assert!(e32(f32::INFINITY, 1e30) > 1e10);
    }

    #[test]
    fn nan_and_infinity() {
        assert_eq!(e32(f32::NAN, f64::NAN), 0.0);
        assert_eq!(e32(1.0, f64::NAN), f64::INFINITY);
        assert_eq!(e32(f32::NAN, 1.0), f64::INFINITY);
        assert_eq!(e32(f32::INFINITY, f64::INFINITY), 0.0);
        assert_eq!(e32(f32::MAX, f64::INFINITY), f64::INFINITY);
        assert_eq!(e32(f32::NEG_INFINITY, f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn negative_references_near_powers_of_two() {
        // -0.25 - 2^-55: above 0.25 in magnitude, so the ulp of [0.25, 0.5) is used.
        let err = ulp_error(-0.25 - ldexp(1.0, -54), -0.25, -ldexp(1.0, -55), F64);
        assert_eq!(err, -0.5);
        let err = ulp_error(-0.25 + ldexp(1.0, -55), -0.25, ldexp(1.0, -56), F64);
        assert_eq!(err, 0.5);
    }

    #[test]
    fn tails_of_tiny_references_are_scaled() {
        // Reference 2^-1022 + 2^-1075 (half an ulp above 2^-1022); the tail 2^-1075 is not a
        // double, so it is stored as 2^(256-1075).
        let hi = f64::MIN_POSITIVE;
        let err = ulp_error(hi + f64::from_bits(1), hi, ldexp(1.0, 256 - 1075), F64);
        assert_eq!(err, 0.5);
        // 2^-1017 + 2^-1070: hi·lo underflows, the sign test must not depend on it.
        let hi = ldexp(1.0, -1017);
        let err = ulp_error(hi + ldexp(1.0, -1069), hi, ldexp(1.0, 256 - 1070), F64);
        assert_eq!(err, 0.5);
    }

    #[test]
    fn the_tail_of_the_reference_counts() {
        let tail = ldexp(1.0, -30);
        let err = ulp_error(1.5, 1.5, tail, F32);
        assert_eq!(err, -ldexp(1.0, -7));
        // Double: reference 1 + 2^-53 + 2^-60 (a hair above the midpoint), result 1 + 2^-52.
        let err = ulp_error(
            1.0 + f64::EPSILON,
            1.0,
            f64::EPSILON / 2.0 + ldexp(1.0, -60),
            F64,
        );
        assert!((err - (0.5 - ldexp(1.0, -8))).abs() < 1e-12, "{err}");
    }
}
