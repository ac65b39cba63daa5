//! References for tests that must not come from the code under test: half-precision rounding
//! by the host C compiler's `_Float16` (libgcc's conversions, rounded in the mode `fesetround`
//! sets; looked up in libgcc_s.so.1, since the Rust runtime's compiler-builtins has functions of
//! the same names that always round to nearest). Ferrocl's own half code (mathlib, codegen) is
//! checked against these, never against a copy of itself. The inputs that probe every rounding
//! boundary of half are here too, so that every half test sees the same ones. [`image`] holds
//! the image texel and sampling references.

pub mod image;

/// A rounding direction of IEEE 754.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// To nearest, ties to even.
    NearestEven,
    TowardZero,
    TowardPositive,
    TowardNegative,
}

impl Rounding {
    fn code(self) -> i32 {
        match self {
            Rounding::NearestEven => 0,
            Rounding::TowardZero => 1,
            Rounding::TowardPositive => 2,
            Rounding::TowardNegative => 3,
        }
    }
}

extern "C" {
    fn ferrocl_ref_available() -> i32;
    fn ferrocl_ref_f64_to_f16(x: f64, mode: i32) -> u16;
    fn ferrocl_ref_f32_to_f16(x: f32, mode: i32) -> u16;
    fn ferrocl_ref_f16_to_f64(bits: u16) -> f64;
    fn ferrocl_ref_f16_to_f32(bits: u16) -> f32;
}

/// Whether the host's libgcc has the half conversions (GCC 12 or later); without them every
/// reference function aborts the process.
pub fn available() -> bool {
    // SAFETY: looks symbols up, no other effect.
    unsafe { ferrocl_ref_available() != 0 }
}

/// `x` rounded once to half precision in direction `mode` (bits). A NaN stays a NaN with its
/// sign, quieted, with the top ten bits of its payload.
pub fn f64_to_f16(x: f64, mode: Rounding) -> u16 {
    // SAFETY: a pure C function of its arguments (it restores the rounding mode it sets).
    unsafe { ferrocl_ref_f64_to_f16(x, mode.code()) }
}

/// `x` rounded once to half precision in direction `mode` (bits).
pub fn f32_to_f16(x: f32, mode: Rounding) -> u16 {
    // SAFETY: as above.
    unsafe { ferrocl_ref_f32_to_f16(x, mode.code()) }
}

/// The value of half `bits` (exact in f64).
pub fn f16_to_f64(bits: u16) -> f64 {
    // SAFETY: a pure C function of its argument.
    unsafe { ferrocl_ref_f16_to_f64(bits) }
}

/// The value of half `bits` as a float (exact; a NaN quieted, with its sign and payload, as
/// IEEE conversions return it: what `vload_half` gives).
pub fn f16_to_f32(bits: u16) -> f32 {
    // SAFETY: a pure C function of its argument.
    unsafe { ferrocl_ref_f16_to_f32(bits) }
}

/// Whether half `bits` is a NaN.
pub fn f16_is_nan(bits: u16) -> bool {
    f16_to_f64(bits).is_nan()
}

/// The half encoding of `x`, which must be a half value (exactly representable, a NaN
/// excepted): the inverse of [`f16_to_f64`].
pub fn f16_bits(x: f64) -> u16 {
    let h = f64_to_f16(x, Rounding::NearestEven);
    assert!(x.is_nan() || f16_to_f64(h) == x, "{x} is not a half value");
    h
}

/// `x` rounded once to the nearest half (ties to even), as a double.
pub fn round_to_half(x: f64) -> f64 {
    f16_to_f64(f64_to_f16(x, Rounding::NearestEven))
}

/// Every rounding boundary of half: each half, each midpoint between neighbours (ties, the
/// denormal boundary, the overflow threshold 65520) and the doubles and floats one step either
/// side, both signs; then zeros, infinities, NaNs (quiet and signalling, with payloads), values
/// far outside the half range, and a pseudo-random sample of doubles.
pub fn half_boundary_doubles() -> Vec<f64> {
    let mut xs = Vec::new();
    for h in 0..0x7c00u16 {
        let v = f16_to_f64(h);
        let next = if h == 0x7bff {
            65536.0
        } else {
            f16_to_f64(h + 1)
        };
        for c in [v, (v + next) / 2.0] {
            xs.push(c);
            xs.push(f64::from_bits(c.to_bits() + 1));
            if c > 0.0 {
                xs.push(f64::from_bits(c.to_bits() - 1));
            }
            let f = c as f32;
            if f64::from(f) == c {
                xs.push(f64::from(f32::from_bits(f.to_bits() + 1)));
                if f > 0.0 {
                    xs.push(f64::from(f32::from_bits(f.to_bits() - 1)));
                }
            }
        }
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..50_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let e = ((state >> 3) % 64) as i32 - 44;
        xs.push(f64::from_bits(0x3ff0_0000_0000_0000 | (state >> 12)) * 2f64.powi(e));
    }
    xs.extend([
        0.0,
        f64::INFINITY,
        1e300,
        f64::MAX,
        f64::from(f32::MAX),
        5e-324,
        f64::from(f32::from_bits(1)),
        65504.0,
        65519.999,
        65520.0,
        65536.0,
        1e5,
    ]);
    let positive = xs.len();
    for i in 0..positive {
        xs.push(-xs[i]);
    }
    xs.extend([
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0400_0000_0001), // signalling, payload in the top bits
        f64::from_bits(0xfff8_0c00_0000_0000),
        f64::from(f32::from_bits(0x7fa0_2000)), // from a signalling f32 NaN
    ]);
    xs
}

/// Floats for the f32 kernels: the inputs exactly representable in f32, plus f32 NaNs whose
/// payloads matter to the narrowing.
pub fn half_boundary_floats(xs: &[f64]) -> Vec<f32> {
    let mut fs: Vec<f32> = xs
        .iter()
        .filter(|&&x| !x.is_nan() && f64::from(x as f32) == x)
        .map(|&x| x as f32)
        .collect();
    fs.extend([
        f32::from_bits(0x7fc0_0000),
        f32::from_bits(0xffc0_2000),
        f32::from_bits(0x7f80_6000), // signalling
        f32::from_bits(0x7fbf_e000),
    ]);
    fs
}

#[cfg(test)]
mod tests {
    use super::*;
    use Rounding::*;

    /// Values worked out by hand from the binary16 format.
    #[test]
    fn known_roundings() {
        assert!(available(), "libgcc_s.so.1 of GCC 12 or later is needed");
        let tie_even = 1.0 + 1.0 / 2048.0; // halfway between 0x3c00 and 0x3c01
        assert_eq!(f64_to_f16(tie_even, NearestEven), 0x3c00);
        assert_eq!(f64_to_f16(tie_even, TowardPositive), 0x3c01);
        assert_eq!(f64_to_f16(1.0 + 3.0 / 2048.0, NearestEven), 0x3c02);
        assert_eq!(f64_to_f16(-1.0 - 1.0 / 4096.0, TowardNegative), 0xbc01);
        assert_eq!(f64_to_f16(-1.0 - 1.0 / 4096.0, TowardZero), 0xbc00);
        assert_eq!(f64_to_f16(65520.0, NearestEven), 0x7c00);
        assert_eq!(f64_to_f16(65520.0, TowardZero), 0x7bff);
        assert_eq!(f32_to_f16(1e-8, TowardPositive), 0x0001);
        assert_eq!(f32_to_f16(1e-8, NearestEven), 0x0000);
        assert_eq!(f32_to_f16(f32::from_bits(0x7fa0_0001), NearestEven), 0x7f00);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(f16_to_f64(0x7bff), 65504.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert!(f16_to_f64(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0xfc00), f32::NEG_INFINITY);
        // A signalling NaN: quieted, sign and payload kept.
        assert_eq!(f16_to_f32(0xfd01).to_bits(), 0xffe0_2000);
        assert!(f16_is_nan(0x7c01) && !f16_is_nan(0x7c00));
        assert_eq!(f16_bits(-0.5), 0xb800);
        assert_eq!(f16_bits(-0.0), 0x8000);
        assert_eq!(round_to_half(1.0 + 1.0 / 4096.0), 1.0);
    }
}
