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
    let half = |h: u16| ml::half::f16_to_f32(h);
    let round = |x: f32| ml::half::f32_to_f16(x);
    for recipe in RECIPES {
        let p = program(recipe);
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
