//! Half precision: IEEE binary16 ⇄ binary32 conversion and the `_f16` entry points. Values cross
//! the C ABI as their `u16` bits (Cranelift's f16 call support is not something to rely on);
//! each function is the correctly rounded f32 function rounded once more to half, which errs by
//! at most 0.5 ulp + 2^-14 ulp of half — inside every half bound of the table (≥ 1 ulp) — and
//! keeps the special values (zeros, infinities, NaN and exact results survive both roundings).

/// Exact widening.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let e = u32::from((h >> 10) & 0x1f);
    let m = u32::from(h & 0x3ff);
    if e == 0x1f {
        return f32::from_bits(sign | 0x7f80_0000 | (m << 13));
    }
    if e == 0 {
        // Subnormal (or zero): m · 2^-24, exact in f32.
        let v = m as f32 * (1.0 / 16_777_216.0);
        return if sign != 0 { -v } else { v };
    }
    f32::from_bits(sign | ((e + 112) << 23) | (m << 13))
}

/// Narrowing with round to nearest even; NaNs stay (quiet) NaNs with the top payload bits.
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let a = b & 0x7fff_ffff;
    if a > 0x7f80_0000 {
        return sign | 0x7e00 | ((a >> 13) & 0x3ff) as u16;
    }
    if a >= 0x4780_0000 {
        // >= 65536 (and infinity): beyond the rounding range of the largest half, 65504.
        return sign | 0x7c00;
    }
    if a >= 0x3880_0000 {
        // Normal half: rebias the exponent (127 → 15), round 23 → 10 mantissa bits to nearest
        // even; a carry out of the mantissa correctly bumps the exponent, up to infinity.
        let m = a - (112 << 23);
        let r = m + 0x0fff + ((m >> 13) & 1);
        return sign | (r >> 13) as u16;
    }
    // Half subnormal or zero: units of 2^-24; the scaling is exact, the rounding ties-to-even.
    let v = f32::from_bits(a) * 16_777_216.0;
    sign | v.round_ties_even() as u16
}

macro_rules! half_unary {
    ($($name:ident),* $(,)?) => {
        /// `ferrocl_<name>_f16(bits) -> bits` for the unary functions.
        pub mod unary {
            $(
                pub extern "C" fn $name(x: u16) -> u16 {
                    super::f32_to_f16(crate::unary::$name::f32(super::f16_to_f32(x)))
                }
            )*
        }
        fn unary_symbols(out: &mut Vec<(String, *const u8)>) {
            $(out.push((format!("ferrocl_{}_f16", stringify!($name)), unary::$name as *const u8));)*
        }

        /// Every half input of every unary function, against the correctly rounded f64 function.
        #[cfg(test)]
        #[test]
        fn every_half_input_of_every_unary_function() {
            $(
                let worst = tests::max_error(unary::$name, crate::unary::$name::f64);
                assert!(worst <= 0.5 + 1.0 / 8192.0, "{}: {worst} ulp", stringify!($name));
            )*
        }
    };
}

macro_rules! half_binary {
    ($($name:ident),* $(,)?) => {
        /// `ferrocl_<name>_f16(bits, bits) -> bits` for the binary functions.
        pub mod binary {
            $(
                pub extern "C" fn $name(x: u16, y: u16) -> u16 {
                    super::f32_to_f16(crate::binary::$name::f32(super::f16_to_f32(x), super::f16_to_f32(y)))
                }
            )*
        }
        fn binary_symbols(out: &mut Vec<(String, *const u8)>) {
            $(out.push((format!("ferrocl_{}_f16", stringify!($name)), binary::$name as *const u8));)*
        }
    };
}

half_unary!(
    acos, acosh, acospi, asin, asinh, asinpi, atan, atanh, atanpi, cbrt, cos, cosh, cospi, erfc,
    erf, exp, exp2, exp10, expm1, lgamma, log, log2, log10, log1p, logb, rsqrt, sin, sinh, sinpi,
    tan, tanh, tanpi, tgamma,
);
half_binary!(atan2, atan2pi, fdim, hypot, maxmag, minmag, pow, powr, remainder);

/// Symbols of the half entry points, for [`crate::symbols`]. nextafter is not among them: it
/// steps in the half format, not through f32.
pub(crate) fn symbols(out: &mut Vec<(String, *const u8)>) {
    unary_symbols(out);
    binary_symbols(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Largest error in half ulps of `f` over all 65536 inputs against `reference` (f64, exact to
    /// well below a half ulp): NaN must give NaN, and overflow must be to the infinity.
    pub(super) fn max_error(
        f: extern "C" fn(u16) -> u16,
        reference: extern "C" fn(f64) -> f64,
    ) -> f64 {
        let mut worst = 0.0f64;
        for h in 0..=u16::MAX {
            let x = f64::from(f16_to_f32(h));
            let r = reference(x);
            let got = f64::from(f16_to_f32(f(h)));
            if r.is_nan() || got.is_nan() {
                assert!(r.is_nan() && got.is_nan(), "{h:#06x}: {got} vs {r}");
                continue;
            }
            if r.abs() >= 65520.0 || r.is_infinite() {
                assert_eq!(got, f64::INFINITY.copysign(r), "{h:#06x}");
                continue;
            }
            if r == 0.0 {
                assert_eq!(got.to_bits(), r.to_bits(), "{h:#06x}: zero sign");
                continue;
            }
            // ulp of half at r: 2^(exponent - 10), never below the subnormal step 2^-24.
            let e = (((r.to_bits() >> 52) & 0x7ff) as f64 - 1023.0).max(-14.0);
            let ulp = (e - 10.0).exp2();
            worst = worst.max((got - r).abs() / ulp);
        }
        worst
    }

    #[test]
    fn conversions_round_trip_every_half() {
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            if f.is_nan() {
                assert!(f16_to_f32(f32_to_f16(f)).is_nan());
            } else {
                assert_eq!(f32_to_f16(f), h, "{h:#06x}");
            }
        }
    }

    #[test]
    fn narrowing_rounds_to_nearest_even() {
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65519.0), 0x7bff);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3c00); // tie → even
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3c02); // tie → even (up)
        assert_eq!(f32_to_f16(2f32.powi(-25)), 0); // tie → even (zero)
        assert_eq!(f32_to_f16(1.5 * 2f32.powi(-25)), 1);
        assert_eq!(f32_to_f16(-0.0), 0x8000);
        assert_eq!(f32_to_f16(2f32.powi(-14) * (1.0 - 2f32.powi(-12))), 0x0400);
    }

    #[test]
    fn functions_in_half() {
        assert_eq!(unary::sinpi(0xc000), 0x8000); // sinpi(-2) = -0
        assert_eq!(unary::exp(0x0000), 0x3c00);
        assert_eq!(unary::exp(0x4c00), 0x7c00); // exp(16) overflows half
        assert_eq!(binary::pow(0x4000, 0x4900), 0x6400); // 2^10 = 1024
        assert_eq!(binary::powr(0x3c00, 0x7c00) & 0x7c00, 0x7c00); // powr(1, inf) = NaN
        assert_ne!(binary::powr(0x3c00, 0x7c00) & 0x3ff, 0);
    }
}
