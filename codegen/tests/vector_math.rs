//! Float math emitted as vector code by the work-item vectoriser (vectorize/math.rs): every
//! function gives bit for bit mathlib's (CORE-MATH's, correctly rounded) result on specials,
//! the edges of each fast domain, arguments near the hard cases of each reduction (multiples
//! of π/2, powers of two and ten, 1), every exponent, and random floats — through real kernels,
//! vectorised, on every lane and inside a branch only some lanes take.

mod common;

use common::*;
use ferrocl_codegen::{BuildOptions, Vectorization, MATH_FALLBACK_MARKER};
use ferrocl_mathlib as ml;

const FUNCTIONS: [(&str, extern "C" fn(f32) -> f32); 13] = [
    ("exp", ml::unary::exp::f32),
    ("exp2", ml::unary::exp2::f32),
    ("exp10", ml::unary::exp10::f32),
    ("log", ml::unary::log::f32),
    ("log2", ml::unary::log2::f32),
    ("log10", ml::unary::log10::f32),
    ("sin", ml::unary::sin::f32),
    ("cos", ml::unary::cos::f32),
    ("tan", ml::unary::tan::f32),
    ("expm1", ml::unary::expm1::f32),
    ("log1p", ml::unary::log1p::f32),
    ("tanh", ml::unary::tanh::f32),
    ("atan", ml::unary::atan::f32),
];

/// The inputs: specials, the neighbourhoods of the values where a reduction or a domain edge
/// lies, every exponent with edge and random mantissas, and random floats.
fn inputs() -> Vec<f32> {
    let mut v: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MAX,
        f32::MIN,
    ];
    let around = |c: f32, v: &mut Vec<f32>| {
        for d in -64i32..=64 {
            v.push(f32::from_bits(c.to_bits().wrapping_add_signed(d)));
        }
    };
    let mut centres: Vec<f32> = vec![
        1.0, 104.0, -104.0, 152.0, -152.0, 46.0, -46.0, 88.72, 89.0, -87.34, -103.9, 128.0, -126.0,
        -149.0, 38.53, -37.93, -45.0, 262_144.0, -262_144.0,
    ];
    for k in -60..=60 {
        centres.push(2f32.powi(k));
        centres.push((f64::from(k) * std::f64::consts::FRAC_PI_2) as f32);
    }
    for k in 0..=38 {
        centres.push(10f32.powi(k));
        centres.push(10f32.powi(-k));
    }
    for k in 1..2000 {
        // Near multiples of π/2 at every scale up to the sin/cos domain edge.
        centres.push((f64::from(k * k) * std::f64::consts::FRAC_PI_2) as f32);
    }
    for c in centres {
        around(c, &mut v);
        around(-c, &mut v);
    }
    let mut rng = Rng(0x0a7b_17e5);
    for bits in (0u32..=0xff).map(|e| e << 23) {
        for _ in 0..64 {
            let m = rng.next() as u32 & 0x807f_ffff;
            v.push(f32::from_bits(bits | m));
        }
        v.push(f32::from_bits(bits | 0x007f_ffff));
        v.push(f32::from_bits(bits | 0x8000_0000));
    }
    for _ in 0..(1 << 17) {
        v.push(f32::from_bits(rng.next() as u32));
        // Where kernels mostly live.
        v.push((rng.next() % 2_000_001) as f32 / 10_000.0 - 100.0);
    }
    // Whole vectors of 16 lanes (the widest vector loop), plus a ragged tail.
    v.truncate(v.len() / 16 * 16);
    v.push(0.5);
    v
}

fn build(recipe: Recipe, denorms_are_zero: bool) -> ferrocl_codegen::Program {
    build_with(recipe, denorms_are_zero, false)
}

/// With `marker`, the scalar fallback returns `MATH_FALLBACK_MARKER` (counting its lanes).
fn build_with(recipe: Recipe, denorms_are_zero: bool, marker: bool) -> ferrocl_codegen::Program {
    let spirv = spirv_from_c("vector_math.cl", recipe, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize: true,
        math_fallback_marker: marker,
        denorms_are_zero,
        dump_dir: std::env::var_os("FERROCL_TEST_DUMP").map(std::path::PathBuf::from),
        ..default_options()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
}

/// Flush-to-zero of a float (`-cl-denorms-are-zero`): a subnormal becomes a zero of its sign.
fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

#[test]
fn vector_math_is_bit_for_bit_mathlib() {
    check_inputs(false);
}

/// With `-cl-denorms-are-zero` the arguments and results are flushed around the function.
#[test]
fn vector_math_flushes_like_the_scalar_call() {
    check_inputs(true);
}

fn check_inputs(denorms_are_zero: bool) {
    let x = inputs();
    let p = build(Recipe::Optimized, denorms_are_zero);
    for (name, function) in FUNCTIONS {
        let reference = |x: f32| {
            if denorms_are_zero {
                flush(function(flush(x)))
            } else {
                function(x)
            }
        };
        for (kernel, every_lane) in [
            (format!("{name}_all"), true),
            (format!("{name}_some"), false),
        ] {
            let k = p
                .kernel(&kernel)
                .unwrap_or_else(|| panic!("no kernel {kernel}"));
            assert!(
                matches!(k.vectorization, Vectorization::Vectorized { .. }),
                "{kernel}: {:?}",
                k.vectorization
            );
            // With FERROCL_TEST_BACKEND=wide, the 8- or 16-lane code of the wide backend.
            assert_eq!(
                k.backend(),
                test_backend(),
                "{kernel}: {:?}",
                k.wide_refusal()
            );
            let mut xs = bytes_of(&x);
            let mut ys = vec![0u8; 4 * x.len()];
            launch(
                &p,
                &kernel,
                &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
                x.len() as u64,
                64,
            );
            let mut wrong = Vec::new();
            for (i, &xi) in x.iter().enumerate() {
                let want = if every_lane || i & 2 != 0 {
                    reference(xi)
                } else if denorms_are_zero {
                    flush(flush(xi) * 3.0)
                } else {
                    xi * 3.0
                };
                let got = read_f32(&ys, i);
                if !same(got, want) {
                    wrong.push(format!(
                        "{xi:e} ({:#010x}): {got:e} want {want:e}",
                        xi.to_bits()
                    ));
                }
            }
            assert!(
                wrong.is_empty(),
                "{kernel}: {} of {} differ, first: {:?}",
                wrong.len(),
                x.len(),
                &wrong[..wrong.len().min(8)]
            );
        }
    }
}

/// `pow`, `powr` and `atan2` on pairs of the inputs with exponents that matter (integers, halves,
/// ±0, large and tiny, specials, random), both operands varying and with a shared exponent.
#[test]
fn vector_pow_is_bit_for_bit_mathlib() {
    let xs = inputs();
    let mut rng = Rng(0x9e37_79b9);
    let exponents: Vec<f32> = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        3.0,
        -2.0,
        0.5,
        -0.5,
        0.75,
        1.0 / 3.0,
        10.0,
        24.0,
        100.0,
        -149.0,
        1e-7,
        1e7,
        3e38,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]
    .into_iter()
    .collect();
    let ys: Vec<f32> = (0..xs.len())
        .map(|i| match i % 4 {
            0 => exponents[(rng.next() as usize) % exponents.len()],
            1 => f32::from_bits(rng.next() as u32),
            2 => (rng.next() % 2001) as f32 / 10.0 - 100.0,
            _ => ((rng.next() % 129) as f32 - 64.0) / 2.0,
        })
        .collect();
    let p = build(Recipe::Optimized, false);
    for (name, function) in [
        (
            "pow",
            ml::binary::pow::f32 as extern "C" fn(f32, f32) -> f32,
        ),
        ("powr", ml::binary::powr::f32),
        ("atan2", ml::binary::atan2::f32),
    ] {
        for shared in [None, Some(0.75f32), Some(-3.0), Some(2.5)] {
            let kernel = format!(
                "{name}_{}",
                if shared.is_some() { "uniform" } else { "all" }
            );
            let k = p
                .kernel(&kernel)
                .unwrap_or_else(|| panic!("no kernel {kernel}"));
            assert!(
                matches!(k.vectorization, Vectorization::Vectorized { .. }),
                "{kernel}: {:?}",
                k.vectorization
            );
            let mut xb = bytes_of(&xs);
            let mut yb = bytes_of(&ys);
            let mut zb = vec![0u8; 4 * xs.len()];
            let mut args = match shared {
                None => vec![Arg::Buf(&mut xb), Arg::Buf(&mut yb), Arg::Buf(&mut zb)],
                Some(y) => vec![
                    Arg::Buf(&mut xb),
                    Arg::Val(bytes_of(&[y])),
                    Arg::Buf(&mut zb),
                ],
            };
            launch(&p, &kernel, &mut args, xs.len() as u64, 64);
            drop(args);
            let mut wrong = Vec::new();
            for (i, &x) in xs.iter().enumerate() {
                let y = shared.unwrap_or(ys[i]);
                let (got, want) = (read_f32(&zb, i), function(x, y));
                if !same(got, want) {
                    wrong.push(format!("{name}({x:e}, {y:e}) = {got:e}, want {want:e}"));
                }
            }
            assert!(
                wrong.is_empty(),
                "{kernel} {shared:?}: {} of {} differ, first: {:?}",
                wrong.len(),
                xs.len(),
                &wrong[..wrong.len().min(8)]
            );
        }
    }
}

/// `pown` with exponents of every size and both parities, on every input (either sign),
/// varying and shared.
#[test]
fn vector_pown_is_bit_for_bit_mathlib() {
    let xs = inputs();
    let mut rng = Rng(0x51ed_2701);
    let ns: Vec<i32> = (0..xs.len())
        .map(|i| match i % 3 {
            0 => (rng.next() % 41) as i32 - 20,
            1 => (rng.next() % 401) as i32 - 200,
            _ => rng.next() as i32,
        })
        .collect();
    let p = build(Recipe::Optimized, false);
    for shared in [
        None,
        Some(0),
        Some(1),
        Some(2),
        Some(3),
        Some(-3),
        Some(24),
        Some(-125),
    ] {
        let kernel = if shared.is_some() {
            "pown_uniform"
        } else {
            "pown_all"
        };
        let k = p
            .kernel(kernel)
            .unwrap_or_else(|| panic!("no kernel {kernel}"));
        assert!(
            matches!(k.vectorization, Vectorization::Vectorized { .. }),
            "{kernel}: {:?}",
            k.vectorization
        );
        let mut xb = bytes_of(&xs);
        let mut nb = bytes_of(&ns);
        let mut zb = vec![0u8; 4 * xs.len()];
        let mut args = match shared {
            None => vec![Arg::Buf(&mut xb), Arg::Buf(&mut nb), Arg::Buf(&mut zb)],
            Some(n) => vec![
                Arg::Buf(&mut xb),
                Arg::Val(bytes_of(&[n])),
                Arg::Buf(&mut zb),
            ],
        };
        launch(&p, kernel, &mut args, xs.len() as u64, 64);
        drop(args);
        let mut wrong = Vec::new();
        for (i, &x) in xs.iter().enumerate() {
            let n = shared.unwrap_or(ns[i]);
            let (got, want) = (read_f32(&zb, i), ml::shapes::f32::pown(x, n));
            if !same(got, want) {
                wrong.push(format!("pown({x:e}, {n}) = {got:e}, want {want:e}"));
            }
        }
        assert!(
            wrong.is_empty(),
            "{kernel} {shared:?}: {} of {} differ, first: {:?}",
            wrong.len(),
            xs.len(),
            &wrong[..wrong.len().min(8)]
        );
    }
}

/// `sincos` is sin and cos, each vectorised, the cosine stored through the pointer: on a
/// private variable and on a float4 through a global pointer.
#[test]
fn vector_sincos_is_sin_and_cos() {
    let x = inputs();
    let x = &x[..x.len() / 4 * 4];
    let p = build(Recipe::Optimized, false);
    for (kernel, global) in [("sincos_all", x.len()), ("sincos4", x.len() / 4)] {
        let k = p
            .kernel(kernel)
            .unwrap_or_else(|| panic!("no kernel {kernel}"));
        assert!(
            matches!(k.vectorization, Vectorization::Vectorized { .. }),
            "{kernel}: {:?}",
            k.vectorization
        );
        let mut xs = bytes_of(x);
        let (mut sb, mut cb) = (vec![0u8; 4 * x.len()], vec![0u8; 4 * x.len()]);
        launch(
            &p,
            kernel,
            &mut [Arg::Buf(&mut xs), Arg::Buf(&mut sb), Arg::Buf(&mut cb)],
            global as u64,
            64,
        );
        let mut wrong = Vec::new();
        for (i, &xi) in x.iter().enumerate() {
            let (s, c) = (read_f32(&sb, i), read_f32(&cb, i));
            let (ws, wc) = (ml::unary::sin::f32(xi), ml::unary::cos::f32(xi));
            if !same(s, ws) || !same(c, wc) {
                wrong.push(format!(
                    "sincos({xi:e}) = {s:e}, {c:e}; want {ws:e}, {wc:e}"
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "{kernel}: {} differ: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(8)]
        );
    }
}

/// Double inputs: specials, the edges of the fast domains, neighbourhoods of 1, of powers of
/// two and of multiples of ln 2 / 128, every exponent with random significands, and random
/// doubles in the ranges kernels use.
fn double_inputs() -> Vec<f64> {
    let mut v: Vec<f64> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::MAX,
        f64::MIN,
        -708.0,
        709.0,
        -708.4,
        709.7,
        -745.2,
        710.0,
    ];
    let around = |c: f64, v: &mut Vec<f64>| {
        for d in -40i64..=40 {
            v.push(f64::from_bits(c.to_bits().wrapping_add_signed(d)));
        }
    };
    let mut centres = vec![1.0, -708.0, 709.0, f64::MIN_POSITIVE];
    for k in -1100..=1100 {
        centres.push(2f64.powi(k));
        centres.push(f64::from(k) * std::f64::consts::LN_2 / 128.0);
        centres.push(f64::from(k) * std::f64::consts::PI / 128.0);
        centres.push(f64::from(k * k) * std::f64::consts::FRAC_PI_2);
    }
    for c in centres {
        around(c, &mut v);
        around(-c, &mut v);
    }
    let mut rng = Rng(0xd0b1_e5ed);
    for e in 0u64..=0x7ff {
        for _ in 0..16 {
            let m = rng.next() & 0x800f_ffff_ffff_ffff;
            v.push(f64::from_bits(e << 52 | m));
        }
    }
    for _ in 0..(1 << 17) {
        v.push(f64::from_bits(rng.next()));
        v.push((rng.next() % 2_000_001) as f64 / 1_000.0 - 1_000.0);
        v.push(1.0 + ((rng.next() % 2_000_001) as f64 - 1e6) * 1e-9);
        v.push((rng.next() % 2_000_001) as f64 / 1_000.0 - 1_000.0 + 0.5);
        v.push(((rng.next() % 2_100_001) as f64 - 1_050_000.0) / 1_000.0);
        // Up to the double sin/cos domain's edge, 2^20.
        v.push(((rng.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2_200_000.0);
    }
    v.truncate(v.len() / 16 * 16);
    v
}

#[test]
fn double_vector_math_is_bit_for_bit_mathlib() {
    let x = double_inputs();
    let p = build(Recipe::Optimized, false);
    for (name, function) in [
        ("exp", ml::unary::exp::f64 as extern "C" fn(f64) -> f64),
        ("log", ml::unary::log::f64),
        ("exp2", ml::unary::exp2::f64),
        ("log2", ml::unary::log2::f64),
        ("sin", ml::unary::sin::f64),
        ("cos", ml::unary::cos::f64),
    ] {
        for (kernel, every_lane) in [
            (format!("{name}_double"), true),
            (format!("{name}_double_some"), false),
        ] {
            let k = p
                .kernel(&kernel)
                .unwrap_or_else(|| panic!("no kernel {kernel}"));
            assert!(
                matches!(k.vectorization, Vectorization::Vectorized { .. }),
                "{kernel}: {:?}",
                k.vectorization
            );
            assert_eq!(
                k.backend(),
                test_backend(),
                "{kernel}: {:?}",
                k.wide_refusal()
            );
            let mut xs = bytes_of(&x);
            let mut ys = vec![0u8; 8 * x.len()];
            launch(
                &p,
                &kernel,
                &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
                x.len() as u64,
                64,
            );
            let mut wrong = Vec::new();
            for (i, &xi) in x.iter().enumerate() {
                let want = if every_lane || i & 2 != 0 {
                    function(xi)
                } else {
                    xi * 3.0
                };
                let got = read_f64(&ys, i);
                if got.to_bits() != want.to_bits() && !(got.is_nan() && want.is_nan()) {
                    wrong.push(format!(
                        "{xi:e} ({:#018x}): {got:e} want {want:e}",
                        xi.to_bits()
                    ));
                }
            }
            assert!(
                wrong.is_empty(),
                "{kernel}: {} of {} differ, first: {:?}",
                wrong.len(),
                x.len(),
                &wrong[..wrong.len().min(8)]
            );
        }
    }
}

/// The scalar fallback is rare inside each function's fast domain: counted with the marker
/// build on 2^20 arguments spread over the range kernels use (printed; `--nocapture`).
#[test]
fn fallback_is_rare_in_the_fast_domain() {
    let p = build_with(Recipe::Optimized, false, true);
    let mut rng = Rng(0xfa11_bac4);
    let ranges: [(&str, f64, f64); 13] = [
        ("exp", -100.0, 88.0),
        ("exp2", -140.0, 127.0),
        ("exp10", -40.0, 38.0),
        ("log", 1e-30, 1e30),
        ("log2", 1e-30, 1e30),
        ("log10", 1e-30, 1e30),
        ("sin", -1e4, 1e4),
        ("cos", -1e4, 1e4),
        ("tan", -1e4, 1e4),
        ("expm1", -100.0, 88.0),
        ("log1p", -0.999, 1e6),
        ("tanh", -20.0, 20.0),
        ("atan", -1e6, 1e6),
    ];
    for (name, low, high) in ranges {
        let x: Vec<f32> = (0..1 << 20)
            .map(|_| {
                let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                // Log-uniform for the wide positive ranges, uniform otherwise.
                if low > 0.0 {
                    (low.ln() + u * (high.ln() - low.ln())).exp() as f32
                } else {
                    (low + u * (high - low)) as f32
                }
            })
            .collect();
        let mut xs = bytes_of(&x);
        let mut ys = vec![0u8; 4 * x.len()];
        let kernel = format!("{name}_all");
        launch(
            &p,
            &kernel,
            &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
            x.len() as u64,
            64,
        );
        let fallbacks = (0..x.len())
            .filter(|&i| read_f32(&ys, i).to_bits() == MATH_FALLBACK_MARKER)
            .count();
        let fraction = fallbacks as f64 / x.len() as f64;
        println!("{name} on [{low:e}, {high:e}]: scalar fallback on {fallbacks} of 2^20 ({fraction:.1e})");
        assert!(fraction < 1e-3, "{name}: {fallbacks} fallbacks of 2^20");
    }
    for (name, low, high) in [
        ("exp", -700.0f64, 700.0f64),
        ("log", 1e-300, 1e300),
        ("exp2", -1000.0, 1000.0),
        ("log2", 1e-300, 1e300),
        ("sin", -1e4, 1e4),
        ("cos", -1e4, 1e4),
    ] {
        let x: Vec<f64> = (0..1 << 20)
            .map(|_| {
                let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                if low > 0.0 {
                    (low.ln() + u * (high.ln() - low.ln())).exp()
                } else {
                    low + u * (high - low)
                }
            })
            .collect();
        let mut xs = bytes_of(&x);
        let mut ys = vec![0u8; 8 * x.len()];
        let kernel = format!("{name}_double");
        launch(
            &p,
            &kernel,
            &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
            x.len() as u64,
            64,
        );
        let fallbacks = (0..x.len())
            .filter(|&i| read_f64(&ys, i).to_bits() == ferrocl_codegen::MATH_FALLBACK_MARKER_F64)
            .count();
        let fraction = fallbacks as f64 / x.len() as f64;
        println!("double {name} on [{low:e}, {high:e}]: scalar fallback on {fallbacks} of 2^20 ({fraction:.1e})");
        assert!(
            fraction < 1e-2,
            "double {name}: {fallbacks} fallbacks of 2^20"
        );
    }
    // Double pow: bases in [1e-3, 1e3], exponents in [-20, 20].
    let unit = |rng: &mut Rng| (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let x: Vec<f64> = (0..1 << 20)
        .map(|_| (unit(&mut rng) * 6.0 - 3.0) * std::f64::consts::LN_10)
        .map(f64::exp)
        .collect();
    let y: Vec<f64> = (0..1 << 20).map(|_| unit(&mut rng) * 40.0 - 20.0).collect();
    let (mut xb, mut yb) = (bytes_of(&x), bytes_of(&y));
    let mut zb = vec![0u8; 8 * x.len()];
    launch(
        &p,
        "pow_double",
        &mut [Arg::Buf(&mut xb), Arg::Buf(&mut yb), Arg::Buf(&mut zb)],
        x.len() as u64,
        64,
    );
    let fallbacks = (0..x.len())
        .filter(|&i| read_f64(&zb, i).to_bits() == ferrocl_codegen::MATH_FALLBACK_MARKER_F64)
        .count();
    let fraction = fallbacks as f64 / x.len() as f64;
    println!("double pow on [1e-3, 1e3] × [-20, 20]: scalar fallback on {fallbacks} of 2^20 ({fraction:.1e})");
    assert!(fraction < 1e-2, "double pow: {fallbacks} fallbacks of 2^20");
}

/// A kernel of explicit float4 arithmetic around math calls runs its work-items in vectors
/// with the math as vector code (the packer would keep one call per component), bit for bit.
#[test]
fn explicit_vectors_with_math_take_the_vector_math() {
    let x = inputs();
    let x = &x[..x.len() / 4 * 4];
    let p = build(Recipe::Optimized, false);
    let k = p.kernel("packed_float4").expect("kernel");
    assert!(
        matches!(k.vectorization, Vectorization::Vectorized { .. }),
        "{:?}",
        k.vectorization
    );
    let mut xs = bytes_of(x);
    let mut ys = vec![0u8; 4 * x.len()];
    launch(
        &p,
        "packed_float4",
        &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
        x.len() as u64 / 4,
        64,
    );
    for (i, &v) in x.iter().enumerate() {
        let a = v * 1.5 + 0.25;
        let want = ml::unary::exp::f32(a) * a + ml::unary::sin::f32(v) * (v - 2.0);
        let got = read_f32(&ys, i);
        assert!(same(got, want), "{v:e}: {got:e} want {want:e}");
    }
}

/// Double `pow` and `powr` on pairs of the double inputs with exponents that matter.
#[test]
fn double_vector_pow_is_bit_for_bit_mathlib() {
    let xs = double_inputs();
    let mut rng = Rng(0x90e5_d0b1);
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        3.0,
        0.5,
        -0.5,
        0.75,
        1.0 / 3.0,
        10.0,
        100.0,
        -1074.0,
        1e-9,
        1e9,
        1e300,
        f64::INFINITY,
        f64::NAN,
    ];
    let ys: Vec<f64> = (0..xs.len())
        .map(|i| match i % 4 {
            0 => specials[(rng.next() as usize) % specials.len()],
            1 => f64::from_bits(rng.next()),
            2 => (rng.next() % 20_001) as f64 / 100.0 - 100.0,
            _ => ((rng.next() % 129) as f64 - 64.0) / 2.0,
        })
        .collect();
    let p = build(Recipe::Optimized, false);
    for (kernel, function) in [
        (
            "pow_double",
            ml::binary::pow::f64 as extern "C" fn(f64, f64) -> f64,
        ),
        ("powr_double", ml::binary::powr::f64),
    ] {
        let k = p
            .kernel(kernel)
            .unwrap_or_else(|| panic!("no kernel {kernel}"));
        assert!(
            matches!(k.vectorization, Vectorization::Vectorized { .. }),
            "{kernel}: {:?}",
            k.vectorization
        );
        let mut xb = bytes_of(&xs);
        let mut yb = bytes_of(&ys);
        let mut zb = vec![0u8; 8 * xs.len()];
        launch(
            &p,
            kernel,
            &mut [Arg::Buf(&mut xb), Arg::Buf(&mut yb), Arg::Buf(&mut zb)],
            xs.len() as u64,
            64,
        );
        let mut wrong = Vec::new();
        for (i, &x) in xs.iter().enumerate() {
            let (got, want) = (read_f64(&zb, i), function(x, ys[i]));
            if got.to_bits() != want.to_bits() && !(got.is_nan() && want.is_nan()) {
                wrong.push(format!(
                    "{kernel}({x:e}, {:e}) = {got:e}, want {want:e}",
                    ys[i]
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "{kernel}: {} of {} differ, first: {:?}",
            wrong.len(),
            xs.len(),
            &wrong[..wrong.len().min(8)]
        );
    }
}

/// The wide backend at 8 lanes (an AVX2 machine's width, built here for 256-bit vectors): the
/// same code at another width, bit for bit mathlib on part of the input sets. Needs the wide
/// backend (libLLVM-15) and AVX2; without them it says so and checks nothing else.
#[test]
fn eight_lane_wide_code_is_bit_for_bit_mathlib() {
    let spirv = spirv_from_c("vector_math.cl", Recipe::Optimized, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    if ferrocl_codegen::Target::host().vector_bits < 256 {
        println!("skipped: the host has no AVX2");
        return;
    }
    let options = BuildOptions {
        vectorize: true,
        backend: ferrocl_codegen::Backend::Wide,
        target: ferrocl_codegen::Target { vector_bits: 256 },
        ..default_options()
    };
    let p = compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"));
    let probe = p.kernel("exp_all").expect("kernel");
    if probe.backend() != ferrocl_codegen::Backend::Wide {
        println!(
            "skipped: the wide backend refused ({:?})",
            probe.wide_refusal()
        );
        return;
    }
    assert_eq!(probe.vectorization, Vectorization::Vectorized { lanes: 8 });
    let x: Vec<f32> = inputs().into_iter().step_by(4).collect();
    for (name, function) in FUNCTIONS {
        let kernel = format!("{name}_all");
        let mut xs = bytes_of(&x);
        let mut ys = vec![0u8; 4 * x.len()];
        launch(
            &p,
            &kernel,
            &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
            x.len() as u64,
            64,
        );
        for (i, &xi) in x.iter().enumerate() {
            let (got, want) = (read_f32(&ys, i), function(xi));
            assert!(same(got, want), "{kernel}({xi:e}) = {got:e}, want {want:e}");
        }
    }
    let d: Vec<f64> = double_inputs().into_iter().step_by(4).collect();
    for (name, function) in [
        ("exp", ml::unary::exp::f64 as extern "C" fn(f64) -> f64),
        ("log", ml::unary::log::f64),
        ("sin", ml::unary::sin::f64),
        ("cos", ml::unary::cos::f64),
    ] {
        let kernel = format!("{name}_double");
        let mut xs = bytes_of(&d);
        let mut ys = vec![0u8; 8 * d.len()];
        launch(
            &p,
            &kernel,
            &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
            d.len() as u64,
            64,
        );
        for (i, &xi) in d.iter().enumerate() {
            let (got, want) = (read_f64(&ys, i), function(xi));
            assert!(
                got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                "{kernel}({xi:e}) = {got:e}, want {want:e}"
            );
        }
    }
}

/// Every float through each function's vector code, against CORE-MATH: the proof that the
/// vector path is correctly rounded everywhere (minutes per function; run by hand:
/// `cargo test --release -p ferrocl-codegen --test vector_math -- --ignored --nocapture`,
/// `FERROCL_TEST_BACKEND=wide` for the wide backend's lanes, `VECTOR_MATH_FUNCTIONS=exp,sin`
/// for some of them).
#[test]
#[ignore]
fn every_float_is_correctly_rounded() {
    const CHUNK: usize = 1 << 24;
    let p = build(Recipe::Optimized, false);
    let marked = build_with(Recipe::Optimized, false, true);
    let only = std::env::var("VECTOR_MATH_FUNCTIONS").ok();
    for (name, function) in FUNCTIONS {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|f| f == name))
        {
            continue;
        }
        let start = std::time::Instant::now();
        let kernel = format!("{name}_all");
        let mut wrong = 0u64;
        let mut first = None;
        let mut fallbacks = 0u64;
        let mut xs = vec![0u8; 4 * CHUNK];
        let mut ys = vec![0u8; 4 * CHUNK];
        let mut zs = vec![0u8; 4 * CHUNK];
        for chunk in 0..(1usize << 32) / CHUNK {
            let base = (chunk * CHUNK) as u32;
            for (i, w) in xs.chunks_exact_mut(4).enumerate() {
                w.copy_from_slice(&(base + i as u32).to_ne_bytes());
            }
            launch(
                &p,
                &kernel,
                &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
                CHUNK as u64,
                64,
            );
            launch(
                &marked,
                &kernel,
                &mut [Arg::Buf(&mut xs), Arg::Buf(&mut zs)],
                CHUNK as u64,
                64,
            );
            fallbacks += zs
                .chunks_exact(4)
                .filter(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]) == MATH_FALLBACK_MARKER)
                .count() as u64;
            let halves: Vec<(u64, Option<u32>)> = std::thread::scope(|s| {
                let ys = &ys;
                let workers: Vec<_> = (0..2)
                    .map(|t| {
                        s.spawn(move || {
                            let (mut n, mut first) = (0u64, None);
                            for i in (t * CHUNK / 2)..((t + 1) * CHUNK / 2) {
                                let x = f32::from_bits(base + i as u32);
                                if !same(read_f32(ys, i), function(x)) {
                                    n += 1;
                                    first.get_or_insert(x.to_bits());
                                }
                            }
                            (n, first)
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().expect("worker"))
                    .collect()
            });
            for (n, f) in halves {
                wrong += n;
                if first.is_none() {
                    first = f;
                }
            }
        }
        println!(
            "{name}: 2^32 floats, {wrong} differ from CORE-MATH (first {first:#x?}); \
             scalar fallback on {fallbacks} ({:.2e} of all floats), {:.0} s",
            fallbacks as f64 / 2f64.powi(32),
            start.elapsed().as_secs_f64()
        );
        assert_eq!(wrong, 0, "{name}: first {first:#x?}");
    }
}
