//! Test inputs: the special values every function meets first (where 6.7 prescribes exact
//! results), then random ones; and the counter-based generator that makes runs reproducible.

/// SplitMix64: small, fast, and good enough to spread inputs over all bit patterns.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Magnitudes that are special for some function: zeros, subnormal limits, the normal limits,
/// small integers and half-integers (sinpi/cospi/tanpi/pow/pown edge cases), 1 ± ulp, π-ish,
/// points near overflow of exp, huge values (trigonometric reduction), infinity.
fn magnitudes(double: bool) -> Vec<f64> {
    let mut v: Vec<f64> = vec![
        0.0,
        0.25,
        0.5,
        0.75,
        1.0,
        1.5,
        2.0,
        2.5,
        3.0,
        3.5,
        4.0,
        5.0,
        7.0,
        10.0,
        0.1,
        1e-3,
        std::f64::consts::PI,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::FRAC_PI_4,
        std::f64::consts::E,
        88.0,
        88.72,
        89.0,
        103.0,
        104.0,
        126.0,
        127.0,
        128.0,
        150.0,
        709.7,
        710.0,
        1022.0,
        1023.0,
        1024.0,
        1075.0,
        1e10,
        1e20,
        1e30,
        12_345_678.0,
        8_388_608.0,
        8_388_609.0,
        16_777_216.0,
        1e15,
        4_503_599_627_370_496.0,
        9_007_199_254_740_992.0,
        1e300,
    ];
    if double {
        v.extend([
            f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            f64::MIN_POSITIVE,
            f64::MAX,
            1.0 + f64::EPSILON,
            1.0 - f64::EPSILON / 2.0,
            f64::INFINITY,
        ]);
    } else {
        v.retain(|x| *x <= f64::from(f32::MAX));
        v.extend(
            [
                f32::from_bits(1),
                f32::from_bits(0x007f_ffff),
                f32::MIN_POSITIVE,
                f32::MAX,
                1.0 + f32::EPSILON,
                1.0 - f32::EPSILON / 2.0,
                f32::INFINITY,
            ]
            .map(f64::from),
        );
        // Round to float: the list above holds double constants.
        for x in v.iter_mut() {
            *x = f64::from(*x as f32);
        }
    }
    v
}

/// Special values for one argument: every magnitude with both signs, a quiet NaN and a
/// signalling one.
pub fn specials(double: bool) -> Vec<f64> {
    let mut v: Vec<f64> = magnitudes(double)
        .into_iter()
        .flat_map(|m| [m, -m])
        .collect();
    v.extend([f64::NAN, crate::ulp::SIGNALLING_NAN]);
    v
}

/// A shorter list for the cartesian products of ternary functions.
pub fn few_specials(double: bool) -> Vec<f64> {
    let mut v: Vec<f64> = specials(double);
    v.retain(|x| {
        x.is_nan()
            || [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 1e30, f64::INFINITY].contains(&x.abs())
            || x.abs() == f64::from(f32::from_bits(1))
    });
    v
}

/// A random value of the format: half uniform over all bit patterns (every exponent equally
/// likely, as the CTS does), half with a small exponent (|x| in [2^-8, 2^8)), where most
/// functions of two arguments give finite, non-trivial results.
pub fn random(rng: &mut Rng, double: bool) -> f64 {
    let r = rng.next_u64();
    if r & 1 == 0 {
        if double {
            f64::from_bits(rng.next_u64())
        } else {
            f64::from(f32::from_bits(rng.next_u64() as u32))
        }
    } else {
        let e = ((r >> 1) % 16) as i32 - 8;
        let m = 1.0 + (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let x = crate::ulp::ldexp(m, e) * if r & (1 << 20) != 0 { -1.0 } else { 1.0 };
        if double {
            x
        } else {
            f64::from(x as f32)
        }
    }
}

/// Special values for half: the float magnitudes that exist in half (rounded, deduplicated),
/// the half limits (smallest subnormal, largest subnormal, smallest normal, largest finite,
/// 1 ± ulp), both signs, and a NaN.
pub fn half_specials() -> Vec<f64> {
    let mut m: Vec<f64> = magnitudes(false)
        .into_iter()
        .map(|x| crate::ulp::F16.round(x))
        .chain(
            [0x0001u16, 0x03ff, 0x0400, 0x7bff, 0x3c01, 0x3bff, 0x7c00].map(crate::ulp::f16_to_f64),
        )
        .collect();
    m.sort_by(f64::total_cmp);
    m.dedup();
    let mut v: Vec<f64> = m.into_iter().flat_map(|x| [x, -x]).collect();
    v.extend([f64::NAN, crate::ulp::SIGNALLING_NAN]);
    v
}

/// A shorter half list for the products of ternary functions.
pub fn half_few_specials() -> Vec<f64> {
    let mut v = half_specials();
    v.retain(|x| {
        x.is_nan()
            || [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 65504.0, f64::INFINITY].contains(&x.abs())
            || x.abs() == crate::ulp::f16_to_f64(1)
    });
    v
}

/// A random half: half the time any bit pattern, otherwise |x| in [2^-4, 2^4).
pub fn random_half(rng: &mut Rng) -> f64 {
    let r = rng.next_u64();
    let h = if r & 1 == 0 {
        (r >> 16) as u16
    } else {
        // Biased exponent 11..=18 (2^-4 ≤ |x| < 2^4), any significand and sign.
        let e = 11 + ((r >> 1) % 8) as u16;
        ((r >> 20) as u16 & 0x83ff) | (e << 10)
    };
    crate::ulp::f16_to_f64(h)
}
