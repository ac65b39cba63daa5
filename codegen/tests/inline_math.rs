//! The math codegen emits inline instead of calling ferrocl-mathlib (inline_math.rs): float
//! `rsqrt` must be correctly rounded (exhaustively: every significand in [1, 4) decides it),
//! and `logb`, `ilogb`, `frexp`, `modf`, `fract`, `maxmag`, `minmag`, `nextafter`, `ldexp`,
//! `nan` and the half rounding and encoding must give bit for bit what mathlib's entry points
//! give, on special values, every exponent with the rounding-relevant mantissa patterns, and
//! random inputs — through real kernels, scalar and float4, at -O0 and optimised.

mod common;

use common::*;
use ferrocl_mathlib as ml;

fn program(recipe: Recipe) -> ferrocl_codegen::Program {
    build_spirv(&spirv_from_c("inline_math.cl", recipe, common::CL1_2))
}

/// Float patterns: the specials, then for both signs and every exponent field the mantissas
/// around each rounding position that matters here (the last bit of a half, whose position
/// moves with the exponent below 2^-14): 0, 1, just below, at and above the tie, all ones,
/// each over random high bits; then random patterns.
fn float_inputs() -> Vec<u32> {
    let mut v: Vec<u32> = vec![
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x3f00_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0001,
        0x7f80_0001,
        0x7fa0_0000,
        0x477f_e000,
        0x477f_f000,
        0x477f_efff,
        0x4780_0000,
        0x3880_0000,
        0x387f_ffff,
        0x3300_0000,
        0x3300_0001,
        0x32ff_ffff,
    ];
    let mut rng = Rng(0x5eed_1e55);
    for sign in [0u32, 0x8000_0000] {
        for exp in 0u32..=255 {
            // The half's last mantissa bit sits at bit `shift` of this exponent's mantissa.
            let shift = (126 - exp as i32).clamp(13, 24) as u32;
            let unit = 1u32 << shift.min(23);
            let tie = unit >> 1;
            let patterns = [
                0,
                1,
                tie.wrapping_sub(1),
                tie,
                tie + 1,
                unit.wrapping_sub(1),
            ];
            for p in patterns {
                for _ in 0..96 {
                    let high = (rng.next() as u32) & 0x7f_ffff & !unit.wrapping_sub(1);
                    let high = if shift >= 23 { 0 } else { high };
                    v.push(sign | exp << 23 | ((high | p) & 0x7f_ffff));
                }
            }
        }
    }
    for _ in 0..(1 << 18) {
        v.push(rng.next() as u32);
    }
    // Even length: kernels pair input i with input i ^ 1.
    if v.len() % 2 == 1 {
        v.push(0x4000_0000);
    }
    v
}

fn run_u32(p: &ferrocl_codegen::Program, kernel: &str, input: &[u32], per_item: usize) -> Vec<u32> {
    run_items(p, kernel, input, input.len(), per_item)
}

/// Runs `kernel` on `items` work-items over `input` (u32 words), with `per_item` output words
/// each.
fn run_items(
    p: &ferrocl_codegen::Program,
    kernel: &str,
    input: &[u32],
    items: usize,
    per_item: usize,
) -> Vec<u32> {
    let mut inb = bytes_of(input);
    let mut outb = vec![0u8; items * per_item * 4];
    launch(
        p,
        kernel,
        &mut [Arg::Buf(&mut inb), Arg::Buf(&mut outb)],
        items as u64,
        64,
    );
    outb.chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

fn same_f32(got: u32, want: f32) -> bool {
    got == want.to_bits() || (f32::from_bits(got).is_nan() && want.is_nan())
}

fn read_u64(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

fn same_f64(got: u64, want: f64) -> bool {
    got == want.to_bits() || (f64::from_bits(got).is_nan() && want.is_nan())
}

fn is_half_nan(h: u16) -> bool {
    ferrocl_testref::f16_is_nan(h)
}

fn same_half(got: u16, want: u16) -> bool {
    got == want || (is_half_nan(got) && is_half_nan(want))
}

/// Every positive float is 4^k·m with m in [1, 4), and 1/√ in double scales exactly with 4^k,
/// so all 2^24 significands in [1, 4) decide whether the inline rsqrt is correctly rounded.
#[test]
fn rsqrt_through_double_is_correctly_rounded() {
    let p = program(Recipe::Optimized);
    let mut input: Vec<u32> = (0x3f80_0000u32..0x4080_0000).collect();
    // Subnormals, specials and negatives as they are, not scaled.
    input.extend([
        0,
        0x8000_0000,
        1,
        0x7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xbf80_0000,
    ]);
    input.extend((1..4096u32).map(|i| i * 2047));
    let out = run_u32(&p, "rsqrt_f", &input, 1);
    for (&x, &got) in input.iter().zip(&out) {
        let want = ml::unary::rsqrt::f32(f32::from_bits(x));
        assert!(
            same_f32(got, want),
            "rsqrt({:e}) = {:e}, correctly rounded {want:e}",
            f32::from_bits(x),
            f32::from_bits(got)
        );
    }
}

#[test]
fn inline_float_functions_match_mathlib() {
    for recipe in RECIPES {
        let p = program(recipe);
        let input = float_inputs();
        let out = run_u32(&p, "float_f", &input, 12);
        let items4 = input.len() / 4;
        let out4 = run_items(&p, "float4_f", &input, items4, 52);
        for (i, &bits) in input.iter().enumerate() {
            let x = f32::from_bits(bits);
            let y = f32::from_bits(input[i ^ 1]);
            let n = (input[i ^ 1] as i32) >> 22;
            let mut e = 0i32;
            let mut ip = 0f32;
            let mut fl = 0f32;
            // SAFETY: the out-pointers are valid locals.
            let (m, f, fr) = unsafe {
                (
                    ml::shapes::f32::frexp(x, &mut e),
                    ml::shapes::f32::modf(x, &mut ip),
                    ml::shapes::f32::fract(x, &mut fl),
                )
            };
            let want: [(u32, f32); 12] = [
                (0, ml::ocl::logbf(x)),
                (1, f32::from_bits(ml::shapes::f32::ilogb(x) as u32)),
                (2, m),
                (3, f32::from_bits(e as u32)),
                (4, f),
                (5, ip),
                (6, fr),
                (7, fl),
                (8, ml::ocl::maxmagf(x, y)),
                (9, ml::ocl::minmagf(x, y)),
                (10, ml::binary::nextafter::f32(x, y)),
                (11, ml::shapes::f32::ldexp(x, n)),
            ];
            // Integer results compare as bits (they are never NaN patterns' concern here).
            let int_result = |k: u32| k == 1 || k == 3;
            for (k, w) in want {
                let got = out[12 * i + k as usize];
                let ok = if int_result(k) {
                    got == w.to_bits()
                } else {
                    same_f32(got, w)
                };
                assert!(
                    ok,
                    "{recipe:?} result {k} of x = {x:e} ({bits:#010x}), y = {y:e}, n = {n}: got {got:#010x} ({:e}), want {:#010x} ({w:e})",
                    f32::from_bits(got),
                    w.to_bits()
                );
                if i < items4 * 4 {
                    let got4 = out4[52 * (i / 4) + 4 * k as usize + i % 4];
                    let ok4 = if int_result(k) {
                        got4 == w.to_bits()
                    } else {
                        same_f32(got4, w)
                    };
                    assert!(ok4, "{recipe:?} float4 result {k} of x = {x:e}: got {got4:#010x}, want {:#010x}", w.to_bits());
                }
            }
            if i < items4 * 4 {
                let nan = out4[52 * (i / 4) + 48 + i % 4];
                assert_eq!(
                    nan,
                    ml::shapes::f32::nan(bits).to_bits(),
                    "{recipe:?} nan({bits:#x})"
                );
            }
        }
    }
}

#[test]
fn inline_double_functions_match_mathlib() {
    for recipe in RECIPES {
        let p = program(recipe);
        let mut rng = Rng(0xd0_0b1e);
        // Each float pattern widened to a double (every exponent region of the float set), the
        // double specials and subnormals, and random doubles.
        let mut input: Vec<u64> = float_inputs()
            .iter()
            .map(|&b| f64::from(f32::from_bits(b)).to_bits())
            .collect();
        input.extend([
            1,
            0x8000_0000_0000_0001,
            0x000f_ffff_ffff_ffff,
            0x0010_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
            0x7ff0_0000_0000_0001,
            0x7ff8_0000_0000_0000,
        ]);
        for _ in 0..(1 << 17) {
            input.push(rng.next());
            input.push(rng.next() >> 12); // subnormal and small
        }
        if input.len() % 2 == 1 {
            input.push(0x4000_0000_0000_0000);
        }
        let words: Vec<u32> = input
            .iter()
            .flat_map(|&d| [d as u32, (d >> 32) as u32])
            .collect();
        let out = run_items(&p, "double_f", &words, input.len(), 24);
        let out: Vec<u64> = out
            .chunks_exact(2)
            .map(|w| u64::from(w[0]) | u64::from(w[1]) << 32)
            .collect();
        for (i, &bits) in input.iter().enumerate() {
            let x = f64::from_bits(bits);
            let y = f64::from_bits(input[i ^ 1]);
            let mut e = 0i32;
            let mut ip = 0f64;
            let mut fl = 0f64;
            // SAFETY: the out-pointers are valid locals.
            let (m, f, fr) = unsafe {
                (
                    ml::shapes::f64::frexp(x, &mut e),
                    ml::shapes::f64::modf(x, &mut ip),
                    ml::shapes::f64::fract(x, &mut fl),
                )
            };
            let as_int = |v: i32| f64::from_bits(u64::from(v as u32));
            let want: [f64; 12] = [
                ml::ocl::logb(x),
                as_int(ml::shapes::f64::ilogb(x)),
                m,
                as_int(e),
                f,
                ip,
                fr,
                fl,
                ml::ocl::maxmag(x, y),
                ml::ocl::minmag(x, y),
                ml::binary::nextafter::f64(x, y),
                ml::shapes::f64::nan(bits),
            ];
            for (k, w) in want.into_iter().enumerate() {
                let got = out[12 * i + k];
                let ok = if k == 1 || k == 3 || k == 11 {
                    got == w.to_bits()
                } else {
                    same_f64(got, w)
                };
                assert!(
                    ok,
                    "{recipe:?} result {k} of x = {x:e} ({bits:#018x}), y = {y:e}: got {got:#018x}, want {:#018x} ({w:e})",
                    w.to_bits()
                );
            }
        }
    }
}

#[test]
fn inline_half_rounding_and_encoding_match_mathlib() {
    check_half(default_options());
}

/// The wide backend's rounding to half is LLVM's conversions (F16C or AVX512-FP16), on the
/// vectoriser's vectors: the same bits as mathlib's, and no fallback to Cranelift.
#[test]
fn half_rounding_by_the_wide_backend_matches_mathlib() {
    assert!(
        ferrocl_opencl_c::wide_backend_available(),
        "libLLVM-15 and the LLVM server must be available here"
    );
    check_half(ferrocl_codegen::BuildOptions {
        backend: ferrocl_codegen::Backend::Wide,
        ..ferrocl_codegen::BuildOptions::default()
    });
}

fn check_half(options: ferrocl_codegen::BuildOptions) {
    let half = |h: u16| ml::half::f16_to_f32(h);
    let round = |x: f32| ml::half::f32_to_f16(x);
    for recipe in RECIPES {
        let spirv = spirv_from_c("inline_math.cl", recipe, common::CL1_2);
        let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
        let p = compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"));
        let k = p.kernel("half_f").expect("half_f");
        assert_eq!(k.backend(), options.backend, "{:?}", k.wide_refusal());
        assert!(
            matches!(
                k.vectorization,
                ferrocl_codegen::Vectorization::Vectorized { .. }
            ),
            "{recipe:?}: {:?}",
            k.vectorization
        );
        let mut input = float_inputs();
        // Every half against its neighbours and against every 257th half.
        for a in 0..=u16::MAX {
            for b in [a.wrapping_add(1), a ^ 0x8000, a.wrapping_mul(257)] {
                input.push(u32::from(b) << 16 | u32::from(a));
            }
        }
        let out = run_u32(&p, "half_f", &input, 6);
        let out: Vec<u16> = out
            .iter()
            .flat_map(|&w| [w as u16, (w >> 16) as u16])
            .collect();
        for (i, &bits) in input.iter().enumerate() {
            let (a, b) = (bits as u16, (bits >> 16) as u16);
            let (x, y) = (half(a), half(b));
            let mut e = 0i32;
            let mut ip = 0f32;
            let mut fl = 0f32;
            // SAFETY: the out-pointers are valid locals.
            let (m, f, fr) = unsafe {
                (
                    ml::shapes::f32::frexp(x, &mut e),
                    ml::shapes::f32::modf(x, &mut ip),
                    ml::shapes::f32::fract(y, &mut fl),
                )
            };
            // fract < 1: the largest half below 1 when the f32 result rounds to 1.
            let fract_half = {
                let r = round(fr);
                if half(r) > 1.0 - 1.0 / 2048.0 {
                    0x3bff
                } else {
                    r
                }
            };
            let want: [u16; 12] = [
                round(x + y),
                round(x * y),
                round(x / y),
                round(f32::from_bits(bits)),
                round(ml::unary::rsqrt::f32(x)),
                round(ml::ocl::logbf(x)),
                ml::shapes::f32::ilogb(x) as u16,
                round(m),
                e as u16,
                round(f),
                round(ip),
                fract_half,
            ];
            for (k, w) in want.into_iter().enumerate() {
                let got = out[12 * i + k];
                let ok = if k == 6 || k == 8 {
                    got == w
                } else {
                    same_half(got, w)
                };
                assert!(
                    ok,
                    "{recipe:?} result {k} of a = {a:#06x} ({x:e}), b = {b:#06x} ({y:e}), float {:e}: got {got:#06x}, want {w:#06x}",
                    f32::from_bits(bits)
                );
            }
        }
    }
}

/// A constant of `degrees` / `radians` as its 128-bit significand truncated: the exact value
/// lies in (m, m + 1)·2^e. Computed from π to 500 bits by Machin's formula in Python integer
/// arithmetic and checked against mpmath at 300 bits.
struct ExactConstant {
    m: u128,
    e: i32,
}

/// 180/π.
const DEGREES: ExactConstant = ExactConstant {
    m: 0xe52e_e0d3_1e0f_bdc3_0a97_537f_40d2_57d7,
    e: -122,
};

/// π/180.
const RADIANS: ExactConstant = ExactConstant {
    m: 0x8efa_3512_94e9_c8ae_0ec5_f66e_9485_c4d9,
    e: -133,
};

/// A binary format: significand bits, the exponent of the smallest normal, the largest exponent.
#[derive(Clone, Copy)]
struct Fmt {
    p: u32,
    emin: i32,
    emax: i32,
}

const F16: Fmt = Fmt {
    p: 11,
    emin: -14,
    emax: 15,
};
const F32: Fmt = Fmt {
    p: 24,
    emin: -126,
    emax: 127,
};
const F64: Fmt = Fmt {
    p: 53,
    emin: -1022,
    emax: 1023,
};

/// A 256-bit unsigned integer as (high, low) halves.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct U256(u128, u128);

impl U256 {
    fn bit_len(self) -> u32 {
        if self.0 != 0 {
            256 - self.0.leading_zeros()
        } else {
            128 - self.1.leading_zeros()
        }
    }
    fn shr(self, s: u32) -> U256 {
        match s {
            0 => self,
            1..=127 => U256(self.0 >> s, self.1 >> s | self.0 << (128 - s)),
            128..=255 => U256(0, self.0 >> (s - 128)),
            _ => U256(0, 0),
        }
    }
    /// The low `s` bits.
    fn low(self, s: u32) -> U256 {
        match s {
            0 => U256(0, 0),
            1..=127 => U256(0, self.1 & ((1u128 << s) - 1)),
            128 => U256(0, self.1),
            129..=255 => U256(self.0 & ((1u128 << (s - 128)) - 1), self.1),
            _ => self,
        }
    }
    fn pow2(s: u32) -> U256 {
        if s < 128 {
            U256(0, 1u128 << s)
        } else {
            U256(1u128 << (s - 128), 0)
        }
    }
    fn add_small(self, v: u64) -> U256 {
        let (lo, carry) = self.1.overflowing_add(u128::from(v));
        U256(self.0 + u128::from(carry), lo)
    }
}

/// m·c.m exactly (m < 2^64).
fn mul_wide(m: u64, c: u128) -> U256 {
    let (ch, cl) = (c >> 64, c & u128::from(u64::MAX));
    let a = u128::from(m) * cl;
    let b = u128::from(m) * ch;
    let (lo, carry) = a.overflowing_add(b << 64);
    U256((b >> 64) + u128::from(carry), lo)
}

/// `sign·m·2^e·C` correctly rounded (to nearest, ties to even) in `f`, as a double (exact: every
/// f16, f32 and f64 value is one; infinity on overflow). The product with C's truncated
/// significand is exact and the true product exceeds it by less than m units, so the rounding
/// is decided exactly unless that interval holds a midpoint, which panics (it never does:
/// C is irrational and 128 bits leave over 70 to spare). Also returns the distance of the exact
/// value from the nearest midpoint, in units of the result's last place (for the report).
fn exact_scaled(neg: bool, m: u64, e: i32, c: &ExactConstant, f: Fmt) -> (f64, f64) {
    let sign = if neg { -1.0 } else { 1.0 };
    if m == 0 {
        return (sign * 0.0, 0.5);
    }
    let prod = mul_wide(m, c.m);
    let len = prod.bit_len();
    let lead = len as i32 - 1 + e + c.e; // the exponent of the leading bit
    let keep = if lead >= f.emin {
        f.p as i32
    } else {
        f.p as i32 - (f.emin - lead)
    };
    if keep < 0 {
        return (sign * 0.0, 0.5);
    }
    let s = (len as i32 - keep) as u32;
    assert!(s >= 1, "the product has more bits than the format");
    let q = prod.shr(s);
    let rem = prod.low(s);
    let half = U256::pow2(s - 1);
    let q = q.1 as u64;
    let (q, distance) = if rem >= half {
        (q + 1, rem)
    } else {
        assert!(
            rem.add_small(m) <= half,
            "undecided rounding of {m}·2^{e}·C"
        );
        (q, rem.add_small(m))
    };
    // Distance from the midpoint: |rem - half| / 2^s, to double precision (for the report).
    let d = {
        let (a, b) = if distance >= half {
            (distance, half)
        } else {
            (half, distance)
        };
        let diff = U256(a.0 - b.0 - u128::from(a.1 < b.1), a.1.wrapping_sub(b.1));
        let top = diff.bit_len().saturating_sub(64);
        (diff.shr(top).1 as f64) * 2f64.powi(top as i32 - s as i32)
    };
    let scale = s as i32 + e + c.e;
    let mut v = q as f64;
    // Scale in two steps so that no step underflows before the last (which is exact).
    let first = scale.max(-1000);
    v *= 2f64.powi(first);
    v *= 2f64.powi(scale - first);
    let v = if v >= 2f64.powi(f.emax + 1) {
        f64::INFINITY
    } else {
        v
    };
    (sign * v, d)
}

/// Splits a float into sign, integer significand and exponent: |x| = m·2^e. None for inf/NaN.
fn split(bits: u64, mantissa: u32, bias: i32) -> Option<(bool, u64, i32)> {
    let exp_bits = 64 - mantissa - 1;
    let neg = bits >> 63 & 1 == 1;
    let field = (bits >> mantissa & ((1 << exp_bits) - 1)) as i32;
    let frac = bits & ((1 << mantissa) - 1);
    if field == (1 << exp_bits) - 1 {
        return None;
    }
    Some(if field == 0 {
        (neg, frac, 1 - bias - mantissa as i32)
    } else {
        (neg, frac | 1 << mantissa, field - bias - mantissa as i32)
    })
}

fn exact_f32(x: f32, c: &ExactConstant) -> (f32, f64) {
    let b = u64::from(x.to_bits()) << 32;
    // As the top half of a 64-bit word: sign at bit 63, 8 exponent bits, 23 + 32 mantissa bits.
    match split(b, 55, 127) {
        None => (x * 57.0, 0.5), // inf stays inf, NaN stays NaN
        Some((neg, m, e)) => {
            let (v, d) = exact_scaled(neg, m >> 32, e + 32, c, F32);
            (v as f32, d)
        }
    }
}

fn exact_f64(x: f64, c: &ExactConstant) -> (f64, f64) {
    match split(x.to_bits(), 52, 1023) {
        None => (x * 57.0, 0.5),
        Some((neg, m, e)) => exact_scaled(neg, m, e, c, F64),
    }
}

fn exact_f16(h: u16, c: &ExactConstant) -> u16 {
    let b = u64::from(h) << 48;
    match split(b, 58, 15) {
        None => h,
        Some((neg, m, e)) => {
            ferrocl_testref::f16_bits(exact_scaled(neg, m >> 48, e + 48, c, F16).0)
        }
    }
}

/// `degrees` and `radians` of float `inputs` through the scalar and float4 kernels, each
/// result compared bit for bit with the exact product correctly rounded. Returns the smallest
/// distance of an exact product from a float midpoint, in ulps.
fn check_angle_f32(p: &ferrocl_codegen::Program, inputs: &[u32]) -> f64 {
    let mut closest = 0.5f64;
    let out = run_u32(p, "angle_f", inputs, 2);
    let items4 = inputs.len() / 4;
    let out4 = run_items(p, "angle_f4", inputs, items4, 8);
    for (i, &bits) in inputs.iter().enumerate() {
        let x = f32::from_bits(bits);
        for (k, c) in [(0, &DEGREES), (1, &RADIANS)] {
            let (want, d) = exact_f32(x, c);
            closest = closest.min(d);
            let name = ["degrees", "radians"][k];
            let got = out[2 * i + k];
            assert!(
                same_f32(got, want),
                "{name}({x:e} = {bits:#010x}) = {:e}, correctly rounded {want:e}",
                f32::from_bits(got)
            );
            if i < items4 * 4 {
                let got4 = out4[8 * (i / 4) + 4 * k + i % 4];
                assert!(
                    same_f32(got4, want),
                    "float4 {name}({x:e} = {bits:#010x}) = {:e}, correctly rounded {want:e}",
                    f32::from_bits(got4)
                );
            }
        }
    }
    closest
}

/// Float degrees and radians are correctly rounded: the double product scales exactly with
/// x's exponent, so every significand (all of [1, 2)) decides the normal results; every
/// float whose degrees or radians is subnormal or underflows (|x| < 2^-120) is checked as it
/// is, and the overflow boundary, specials and random floats of every exponent besides.
#[test]
fn degrees_radians_f32_correctly_rounded() {
    let p = program(Recipe::Optimized);
    let mut closest = 0.5f64;
    // [1, 2) in chunks (to bound the buffers), then every float below 2^-120.
    let ranges = [(0x3f80_0000u32, 0x4000_0000u32), (0, 0x0380_0000)];
    for (lo, hi) in ranges {
        let mut start = lo;
        while start < hi {
            let end = (start + (1 << 22)).min(hi);
            let input: Vec<u32> = (start..end).collect();
            closest = closest.min(check_angle_f32(&p, &input));
            start = end;
        }
    }
    closest = closest.min(check_angle_f32(&p, &float_inputs()));
    // Around degrees' overflow threshold (FLT_MAX / 57.29... ≈ 5.94e36), negatives included.
    let t = (f32::MAX / 57.295_78).to_bits();
    let near: Vec<u32> = (t - 4096..t + 4096)
        .flat_map(|b| [b, b | 0x8000_0000])
        .collect();
    closest = closest.min(check_angle_f32(&p, &near));
    // For the record: how close the hardest case comes (the double product is within 2^-28
    // ulp of a normal float result).
    println!("closest exact float degrees/radians to a midpoint: {closest:e} ulp");
}

#[test]
fn degrees_radians_f32_vector_and_o0() {
    for recipe in RECIPES {
        let p = program(recipe);
        check_angle_f32(&p, &float_inputs());
        // Promoted to double and back, the kernels still run several work-items per vector.
        if matches!(recipe, Recipe::Optimized) {
            for kernel in ["angle_f", "angle_f4"] {
                assert_eq!(
                    p.kernel(kernel).expect("kernel").vectorization,
                    ferrocl_codegen::Vectorization::Vectorized {
                        lanes: vector_lanes()
                    },
                    "{kernel}"
                );
            }
        }
    }
}

/// Half: every input, against the exact product rounded once to half.
#[test]
fn degrees_radians_half_correctly_rounded() {
    for recipe in RECIPES {
        let p = program(recipe);
        let input: Vec<u16> = (0..=u16::MAX).collect();
        let mut inb = bytes_of(&input);
        let mut outb = vec![0u8; input.len() * 4];
        launch(
            &p,
            "angle_h",
            &mut [Arg::Buf(&mut inb), Arg::Buf(&mut outb)],
            input.len() as u64,
            64,
        );
        for (i, &h) in input.iter().enumerate() {
            for (k, c) in [(0, &DEGREES), (1, &RADIANS)] {
                let got = u16::from_ne_bytes([outb[4 * i + 2 * k], outb[4 * i + 2 * k + 1]]);
                let want = exact_f16(h, c);
                assert!(
                    same_half(got, want),
                    "{recipe:?} {} of half {h:#06x}: got {got:#06x}, want {want:#06x}",
                    ["degrees", "radians"][k]
                );
            }
        }
    }
}

/// The significands (integers in [2^52, 2^53)) whose products with 180/π (first) and π/180
/// come closest to a double midpoint — the one of each that the double-double evaluation
/// rounds wrongly first — and closest to a double (where the tie rule of subnormal results
/// reads the residual's sign), from `cts/proofs/angle_f64.py`.
const ANGLE_HARD_SIGNIFICANDS: [[u64; 6]; 2] = [
    [
        0x1d_b0fb_3010_78be, // 2^-56.0 ulp from a midpoint: X_h
        0x1b_19be_b28a_54d9, // 2^-54.2
        0x18_8282_3504_30f4, // 2^-53.0
        0x12_22a7_6eaa_fb43, // 2^-51.1 ulp from a double
        0x14_b9e3_ec31_1f28, // 2^-50.9
        0x17_5120_69b7_430d, // 2^-50.7
    ],
    [
        0x19_6bdf_4aa9_cd3b, // 2^-55.6 ulp from a midpoint: X_h
        0x1b_bda1_da49_3c04, // 2^-54.2
        0x17_1a1c_bb0a_5e72, // 2^-53.4
        0x1d_f7e7_88b8_b565, // 2^-51.4 ulp from a double
        0x10_3c51_ed5c_077f, // 2^-50.9
        0x12_8e14_7cfb_7648, // 2^-50.7
    ],
];

/// Double degrees and radians against the exact product, bit for bit (correctly rounded):
/// specials, every exponent (subnormal results included) with random and structured
/// significands, the hardest significands of the proof at every exponent, random doubles and
/// the overflow boundary; through the scalar kernel (`ulong` loads), the double kernel and the
/// double4 kernel (the vectoriser's pair form, its compares and selects included).
#[test]
fn degrees_radians_f64_correctly_rounded() {
    let mut rng = Rng(0xa4_91e5);
    let mut input: Vec<u64> = vec![
        0,
        1 << 63,
        1,
        (1 << 63) | 1,
        0x000f_ffff_ffff_ffff,
        0x0010_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0x7fef_ffff_ffff_ffff,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0x7ff0_0000_0000_0001,
    ];
    for exp in 0u64..2047 {
        for j in 0..200u64 {
            let frac = match j {
                0 => 0,
                1 => (1 << 52) - 1,
                2..=60 => (1 << (j - 2)) | rng.next() & ((1 << (j - 2)) - 1),
                _ => rng.next() & ((1 << 52) - 1),
            };
            input.push(exp << 52 | frac);
        }
    }
    // The proof's hardest significands and their neighbours at every exponent, and as
    // subnormals where they fit.
    for hard in ANGLE_HARD_SIGNIFICANDS.iter().flatten() {
        for significand in hard - 2..=hard + 2 {
            for exp in 1u64..2047 {
                input.push(exp << 52 | (significand & ((1 << 52) - 1)));
            }
            for shift in 1..53 {
                if significand.trailing_zeros() >= shift {
                    input.push(significand >> shift);
                }
            }
        }
    }
    // Every subnormal below 2^-1060 with few bits, and dense runs through the subnormals.
    input.extend(1..(1u64 << 16));
    for _ in 0..64 {
        let base = rng.next() & ((1 << 53) - 1);
        input.extend(base..base + 4096);
    }
    // Around 2^-900 (the scaled path's edge) and the largest subnormal results of radians.
    for edge in [(1023u64 - 900) << 52, 0x0060_0000_0000_0000] {
        input.extend(edge - 4096..edge + 4096);
    }
    for _ in 0..(1 << 21) {
        input.push(rng.next());
    }
    let t = (f64::MAX / 57.295_779_513_082_32).to_bits();
    input.extend(t - 4096..t + 4096);
    let negatives: Vec<u64> = input.iter().map(|b| b ^ (1 << 63)).collect();
    input.extend(negatives);
    input.truncate(input.len() / 4 * 4);
    let want: Vec<[f64; 2]> = input
        .iter()
        .map(|&bits| {
            let x = f64::from_bits(bits);
            [exact_f64(x, &DEGREES).0, exact_f64(x, &RADIANS).0]
        })
        .collect();
    let check = |what: &str, got: &[[u64; 2]]| {
        for (i, &bits) in input.iter().enumerate() {
            for k in 0..2 {
                assert!(
                    same_f64(got[i][k], want[i][k]),
                    "{what} {}({:e} = {bits:#018x}) = {:e}, correctly rounded {:e}",
                    ["degrees", "radians"][k],
                    f64::from_bits(bits),
                    f64::from_bits(got[i][k]),
                    want[i][k],
                );
            }
        }
    };
    for recipe in RECIPES {
        let p = program(recipe);
        // Its compares and selects of doubles keep the double kernel vectorised.
        let v = &p.kernel("angle_dv").expect("angle_dv").vectorization;
        assert!(
            matches!(v, ferrocl_codegen::Vectorization::Vectorized { .. }),
            "{recipe:?} angle_dv: {v:?}"
        );
        let mut inb = bytes_of(&input);
        let mut outb = vec![0u8; input.len() * 16];
        launch(
            &p,
            "angle_d",
            &mut [Arg::Buf(&mut inb), Arg::Buf(&mut outb)],
            input.len() as u64,
            64,
        );
        let got: Vec<[u64; 2]> = (0..input.len())
            .map(|i| [0, 1].map(|k| read_u64(&outb, 2 * i + k)))
            .collect();
        check(&format!("{recipe:?} angle_d"), &got);
        for (kernel, items) in [("angle_dv", input.len()), ("angle_d4", input.len() / 4)] {
            let mut deg = vec![0u8; input.len() * 8];
            let mut rad = vec![0u8; input.len() * 8];
            launch(
                &p,
                kernel,
                &mut [Arg::Buf(&mut inb), Arg::Buf(&mut deg), Arg::Buf(&mut rad)],
                items as u64,
                64,
            );
            let got: Vec<[u64; 2]> = (0..input.len())
                .map(|i| [read_u64(&deg, i), read_u64(&rad, i)])
                .collect();
            check(&format!("{recipe:?} {kernel}"), &got);
        }
    }
    println!(
        "double degrees/radians: {} inputs each, three kernels, both recipes",
        input.len()
    );
}
