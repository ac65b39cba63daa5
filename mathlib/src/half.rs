//! Half precision: IEEE binary16 ⇄ binary32 conversion, exact narrowing from f32, f64 and
//! integers in every rounding mode, and the `_f16` entry points. The `_f16` math functions take
//! and return `u16` bits; each is the correctly rounded f32 function rounded once more to half,
//! which errs by at most 0.5 ulp + 2^-14 ulp of half — inside every half bound of the table
//! (≥ 1 ulp) — and keeps the special values (zeros, infinities, NaN and exact results survive
//! both roundings). The entry points JIT code calls (`ferrocl_*_to_f16_<mode>`,
//! `ferrocl_f16_bits`, `ferrocl_nextafter_f16`; it widens halves inline) pass 16-bit encodings in
//! the low bits of a `u32`, so no caller-side extension of a 16-bit value is assumed, and halves
//! as the f32 holding their value (how codegen keeps them in registers).

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

/// An IEEE rounding direction for narrowing to half (the `FPRoundingMode` decorations and the
/// `vstore_half` suffixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    NearestEven,
    TowardZero,
    Up,
    Down,
}

/// The half nearest to ±`mant`·2^`exp` in direction `mode`, computed on the exact integer
/// significand, so no intermediate format rounds first. `mant` is non-zero.
fn round_exact(negative: bool, mant: u64, exp: i32, mode: Rounding) -> u16 {
    let sign: u16 = if negative { 0x8000 } else { 0 };
    // Unbiased exponent of the value, and the exponent of one half ulp there (the subnormal
    // quantum 2^-24 at and below 2^-14).
    let e = 63 - mant.leading_zeros() as i32 + exp;
    let quantum = e.max(-14) - 10;
    let shift = i64::from(quantum) - i64::from(exp);
    // The value is n + rem/2^shift quanta; `half_way` is the remainder of a tie.
    let (n, above_half, at_half, inexact) = if shift <= 0 {
        // A multiple of the quantum: exact (n < 2^11, the shift is small).
        (mant << (-shift) as u32, false, false, false)
    } else if shift > 64 {
        (0, false, false, true)
    } else {
        let n = if shift == 64 { 0 } else { mant >> shift };
        let rem = if shift == 64 {
            mant
        } else {
            mant & ((1u64 << shift) - 1)
        };
        let half_way = 1u64 << (shift - 1);
        (n, rem > half_way, rem == half_way, rem != 0)
    };
    let up = match mode {
        Rounding::NearestEven => above_half || (at_half && n & 1 == 1),
        Rounding::TowardZero => false,
        Rounding::Up => inexact && !negative,
        Rounding::Down => inexact && negative,
    };
    let n = n + u64::from(up);
    // Subnormals (quantum 2^-24) encode as n itself; normals as (biased exponent - 1) << 10
    // plus an n in [2^10, 2^11]. A carry out of the significand steps the exponent, up to the
    // infinity pattern.
    let bits = ((i64::from(quantum) + 24) << 10) + n as i64;
    if bits >= 0x7c00 {
        // Overflow: infinity, or the largest finite half when rounding toward zero from it.
        let to_infinity = match mode {
            Rounding::NearestEven => true,
            Rounding::TowardZero => false,
            Rounding::Up => !negative,
            Rounding::Down => negative,
        };
        return sign | if to_infinity { 0x7c00 } else { 0x7bff };
    }
    sign | bits as u16
}

/// f32 → half in `mode`, exact. NaNs come out quiet with the top payload bits.
pub fn f32_to_f16_rounded(x: f32, mode: Rounding) -> u16 {
    let b = x.to_bits();
    let negative = b >> 31 != 0;
    let sign: u16 = if negative { 0x8000 } else { 0 };
    let biased = (b >> 23) & 0xff;
    let frac = b & 0x7f_ffff;
    match (biased, frac) {
        (0xff, 0) => sign | 0x7c00,
        (0xff, _) => sign | 0x7e00 | (frac >> 13) as u16,
        (0, 0) => sign,
        (0, _) => round_exact(negative, u64::from(frac), -149, mode),
        _ => round_exact(
            negative,
            u64::from(frac | 1 << 23),
            biased as i32 - 150,
            mode,
        ),
    }
}

/// f64 → half in `mode`, rounded once from the double (no detour through f32).
pub fn f64_to_f16_rounded(x: f64, mode: Rounding) -> u16 {
    let b = x.to_bits();
    let negative = b >> 63 != 0;
    let sign: u16 = if negative { 0x8000 } else { 0 };
    let biased = ((b >> 52) & 0x7ff) as i32;
    let frac = b & ((1u64 << 52) - 1);
    match (biased, frac) {
        (0x7ff, 0) => sign | 0x7c00,
        (0x7ff, _) => sign | 0x7e00 | (frac >> 42) as u16,
        (0, 0) => sign,
        (0, _) => round_exact(negative, frac, -1074, mode),
        _ => round_exact(negative, frac | 1 << 52, biased - 1075, mode),
    }
}

/// Integer → half in `mode` (the magnitude is exact in the u64 significand).
pub fn i64_to_f16_rounded(x: i64, mode: Rounding) -> u16 {
    if x == 0 {
        return 0;
    }
    round_exact(x < 0, x.unsigned_abs(), 0, mode)
}

pub fn u64_to_f16_rounded(x: u64, mode: Rounding) -> u16 {
    if x == 0 {
        return 0;
    }
    round_exact(false, x, 0, mode)
}

macro_rules! conversion_entry_points {
    ($($suffix:ident => $mode:expr),* $(,)?) => {
        /// Narrowing entry points for JIT code, one per rounding mode:
        /// `ferrocl_{f32,f64,i64,u64}_to_f16_<mode>(x) -> bits` (bits in the low 16 of a u32,
        /// so no caller-side extension of a 16-bit value is assumed).
        pub mod narrow {
            use super::Rounding;
            $(
                pub mod $suffix {
                    use super::Rounding;
                    const MODE: Rounding = $mode;
                    pub extern "C" fn from_f32(x: f32) -> u32 {
                        u32::from(super::super::f32_to_f16_rounded(x, MODE))
                    }
                    pub extern "C" fn from_f64(x: f64) -> u32 {
                        u32::from(super::super::f64_to_f16_rounded(x, MODE))
                    }
                    pub extern "C" fn from_i64(x: i64) -> u32 {
                        u32::from(super::super::i64_to_f16_rounded(x, MODE))
                    }
                    pub extern "C" fn from_u64(x: u64) -> u32 {
                        u32::from(super::super::u64_to_f16_rounded(x, MODE))
                    }
                }
            )*
        }
        fn conversion_symbols(out: &mut Vec<(String, *const u8)>) {
            $(
                out.push((format!("ferrocl_f32_to_f16_{}", stringify!($suffix)), narrow::$suffix::from_f32 as *const u8));
                out.push((format!("ferrocl_f64_to_f16_{}", stringify!($suffix)), narrow::$suffix::from_f64 as *const u8));
                out.push((format!("ferrocl_i64_to_f16_{}", stringify!($suffix)), narrow::$suffix::from_i64 as *const u8));
                out.push((format!("ferrocl_u64_to_f16_{}", stringify!($suffix)), narrow::$suffix::from_u64 as *const u8));
            )*
        }
    };
}

conversion_entry_points!(
    rte => Rounding::NearestEven,
    rtz => Rounding::TowardZero,
    rtp => Rounding::Up,
    rtn => Rounding::Down,
);

/// `ferrocl_f16_bits(x) -> bits`: the encoding of an f32 that holds a half value (how JIT code
/// keeps halves), bit for bit: a signalling NaN stays signalling, as a data move must keep it.
pub extern "C" fn bits_entry(x: f32) -> u32 {
    let b = x.to_bits();
    if x.is_nan() {
        let payload = (b >> 13) & 0x3ff;
        // A payload only below the half's bits cannot come from a half; keep it a NaN.
        let payload = if payload == 0 { 0x200 } else { payload };
        return ((b >> 16) & 0x8000) | 0x7c00 | payload;
    }
    u32::from(f32_to_f16(x))
}

/// `ferrocl_nextafter_f16(x, y)`: the half next to half `x` toward `y`, both held as f32 (how
/// JIT code keeps halves).
pub extern "C" fn nextafter_entry(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    if x == y {
        return y;
    }
    let h = f32_to_f16(x);
    let next = if x == 0.0 {
        // From either zero: the smallest subnormal with y's sign.
        if y > 0.0 {
            0x0001
        } else {
            0x8001
        }
    } else if (y > x) == (x > 0.0) {
        h + 1 // away from zero
    } else {
        h - 1
    };
    f16_to_f32(next)
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
    conversion_symbols(out);
    out.push(("ferrocl_nextafter_f16".into(), nextafter_entry as *const u8));
    out.push(("ferrocl_f16_bits".into(), bits_entry as *const u8));
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

    /// Reference narrowing, independent of this file: the host C compiler's `_Float16`
    /// conversion (libgcc, rounded in the mode fesetround sets; `ferrocl-testref`).
    pub(crate) fn reference_narrow(x: f64, mode: Rounding) -> u16 {
        ferrocl_testref::f64_to_f16(x, testref_mode(mode))
    }

    fn testref_mode(mode: Rounding) -> ferrocl_testref::Rounding {
        use ferrocl_testref::Rounding as R;
        match mode {
            Rounding::NearestEven => R::NearestEven,
            Rounding::TowardZero => R::TowardZero,
            Rounding::Up => R::TowardPositive,
            Rounding::Down => R::TowardNegative,
        }
    }

    const MODES: [Rounding; 4] = [
        Rounding::NearestEven,
        Rounding::TowardZero,
        Rounding::Up,
        Rounding::Down,
    ];

    fn same_half(got: u16, want: u16) -> bool {
        let nan = |h: u16| h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
        if nan(want) {
            nan(got) && got & 0x200 != 0
        } else {
            got == want
        }
    }

    /// Around every half: the half itself, the midpoints to its neighbours and the floats and
    /// doubles one step either side of each (ties, denormal boundaries, the overflow
    /// threshold), in both signs, every mode.
    #[test]
    fn narrowing_matches_the_reference_at_every_boundary() {
        // The boundary inputs (both signs) come from ferrocl-testref, not from this file.
        for x in ferrocl_testref::half_boundary_doubles() {
            for mode in MODES {
                let want = reference_narrow(x, mode);
                let got = f64_to_f16_rounded(x, mode);
                assert!(
                    same_half(got, want),
                    "f64 {x:e} {mode:?}: {got:#06x} vs {want:#06x}"
                );
                let f = x as f32;
                if f64::from(f) == x || x.is_nan() {
                    let got = f32_to_f16_rounded(f, mode);
                    let want = ferrocl_testref::f32_to_f16(f, testref_mode(mode));
                    assert!(
                        same_half(got, want),
                        "f32 {f:e} {mode:?}: {got:#06x} vs {want:#06x}"
                    );
                }
            }
        }
    }

    /// A spread of f32 bit patterns (every 4099th) and of f64s over the half range and far
    /// outside it, plus the special values.
    #[test]
    fn narrowing_matches_the_reference_on_a_sample() {
        let mut bits = 0u32;
        while let Some(next) = bits.checked_add(4099) {
            let f = f32::from_bits(bits);
            for mode in MODES {
                let want = reference_narrow(f64::from(f), mode);
                let got = f32_to_f16_rounded(f, mode);
                assert!(
                    same_half(got, want),
                    "f32 {bits:#010x} {mode:?}: {got:#06x} vs {want:#06x}"
                );
            }
            bits = next;
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..400_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Exponents 2^-40..2^20 mostly, any pattern sometimes.
            let x = if state & 7 == 0 {
                f64::from_bits(state)
            } else {
                let e = ((state >> 3) % 61) as i32 - 40;
                let m = f64::from_bits(0x3ff0_0000_0000_0000 | (state >> 12));
                m * 2f64.powi(e)
            };
            let x = if state & 8 != 0 { -x } else { x };
            for mode in MODES {
                let want = reference_narrow(x, mode);
                let got = f64_to_f16_rounded(x, mode);
                assert!(
                    same_half(got, want),
                    "f64 {x:e} {mode:?}: {got:#06x} vs {want:#06x}"
                );
            }
        }
        for mode in MODES {
            assert_eq!(f32_to_f16_rounded(f32::INFINITY, mode), 0x7c00);
            assert_eq!(f64_to_f16_rounded(f64::NEG_INFINITY, mode), 0xfc00);
            assert_eq!(f64_to_f16_rounded(-0.0, mode), 0x8000);
            assert_eq!(f32_to_f16_rounded(0.0, mode), 0x0000);
            // Quiet NaN with the top payload bits, also from a signalling NaN.
            assert_eq!(
                f32_to_f16_rounded(f32::from_bits(0x7f80_2000), mode),
                0x7e01
            );
            assert_eq!(
                f64_to_f16_rounded(f64::from_bits(0xfff8_0400_0000_0000), mode),
                0xfe01
            );
        }
        // A double just above a half tie that f32 would round onto the tie (the half crate's
        // double rounding): 1 + 2^-11 + 2^-40 must round up.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f64_to_f16_rounded(x, Rounding::NearestEven), 0x3c01);
        assert_eq!(f32_to_f16(x as f32), 0x3c00);
        // Overflow per mode.
        assert_eq!(f64_to_f16_rounded(65520.0, Rounding::NearestEven), 0x7c00);
        assert_eq!(f64_to_f16_rounded(1e300, Rounding::TowardZero), 0x7bff);
        assert_eq!(f64_to_f16_rounded(-1e300, Rounding::Up), 0xfbff);
        assert_eq!(f64_to_f16_rounded(-1e300, Rounding::Down), 0xfc00);
        // The smallest double rounds up to the smallest subnormal half only toward +inf.
        assert_eq!(f64_to_f16_rounded(5e-324, Rounding::Up), 0x0001);
        assert_eq!(f64_to_f16_rounded(5e-324, Rounding::NearestEven), 0x0000);
    }

    #[test]
    fn bits_of_every_half_round_trip_exactly() {
        for h in 0..=u16::MAX {
            assert_eq!(bits_entry(f16_to_f32(h)), u32::from(h), "{h:#06x}");
        }
    }

    #[test]
    fn nextafter_steps_in_half() {
        assert_eq!(nextafter_entry(1.0, 2.0), 1.0 + 1.0 / 1024.0);
        assert_eq!(nextafter_entry(1.0, 0.0), 1.0 - 1.0 / 2048.0);
        assert_eq!(nextafter_entry(0.0, -1.0), -(2f32.powi(-24)));
        assert_eq!(nextafter_entry(-0.0, 1.0), 2f32.powi(-24));
        assert_eq!(nextafter_entry(65504.0, f32::INFINITY), f32::INFINITY);
        assert_eq!(nextafter_entry(-2f32.powi(-24), 1.0), -0.0);
        assert!(nextafter_entry(f32::NAN, 1.0).is_nan());
    }

    #[test]
    fn integers_narrow_exactly() {
        for mode in MODES {
            for x in (-70_000i64..70_000).chain([i64::MIN, i64::MAX, 1 << 53, (1 << 53) + 1]) {
                let want = reference_narrow(x as f64, mode);
                // Exact in f64 for these, so the reference holds.
                if x.unsigned_abs() <= 1 << 53 {
                    assert_eq!(i64_to_f16_rounded(x, mode), want, "{x} {mode:?}");
                }
            }
            assert_eq!(
                u64_to_f16_rounded(u64::MAX, mode),
                reference_narrow(1.8e19, mode)
            );
            assert_eq!(
                i64_to_f16_rounded(i64::MIN, mode),
                reference_narrow(-9.2e18, mode)
            );
        }
        assert_eq!(i64_to_f16_rounded(2049, Rounding::NearestEven), 0x6800); // tie → even
        assert_eq!(i64_to_f16_rounded(2051, Rounding::NearestEven), 0x6802);
        assert_eq!(u64_to_f16_rounded(65519, Rounding::NearestEven), 0x7bff);
        assert_eq!(u64_to_f16_rounded(65520, Rounding::NearestEven), 0x7c00);
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
