//! The reduced-accuracy vector forms of `native_*`, `half_*` and `-cl-fast-relaxed-math`
//! (vectorize/math_relaxed.rs) measured against the exact values (f64 references) in ulps of
//! the result, as the CTS measures them: each within OpenCL C 3.0 §7.4's relaxed bound (and
//! `half_*` within 8192 ulp), on the chosen inputs of vector_math.rs; all 2^32 floats with
//! the ignored test.

mod common;

use common::*;
use ferrocl_codegen::{BuildOptions, Vectorization};

/// A function's exact values (f64 is exact enough at float scale).
type Exact = fn(f64) -> f64;

/// The functions with a relaxed form, and their exact values.
const FUNCTIONS: [(&str, Exact); 8] = [
    ("exp", f64::exp),
    ("exp2", f64::exp2),
    ("exp10", |x| 10f64.powf(x)),
    ("log", f64::ln),
    ("log2", f64::log2),
    ("log10", f64::log10),
    ("sin", f64::sin),
    ("cos", f64::cos),
];

/// Error of float `got` against exact `want`, in ulps of the float nearest `want` (the
/// smallest subnormal's below), or infinite when they disagree on a special value.
fn ulps(got: f32, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let rounded = want as f32;
    if rounded.is_infinite() || got.is_infinite() {
        return if got == rounded { 0.0 } else { f64::INFINITY };
    }
    let exponent = if rounded == 0.0 {
        -126
    } else {
        (rounded.abs().to_bits() >> 23) as i32 - 127
    };
    let ulp = 2f64.powi(exponent.max(-126) - 23);
    (f64::from(got) - want).abs() / ulp
}

/// Whether the result is within the relaxed bound of `name` at `x` (and the largest error
/// the check allows, in ulps, for the report).
fn within(name: &str, x: f32, got: f32, want: f64, half: bool) -> bool {
    let e = ulps(got, want);
    if e <= 0.5 || half {
        return e <= 8192.0;
    }
    let abs = (f64::from(got) - want).abs();
    match name {
        "exp" | "exp2" | "exp10" => e <= 3.0 + (2.0 * f64::from(x).abs()).floor(),
        "log" | "log2" | "log10" => e <= 3.0 || ((0.5..=2.0).contains(&x) && abs <= 2f64.powi(-21)),
        // Relaxed: 2^-11 absolute in [−π, π]; beyond, the full profile's 4 ulp.
        _ => e <= 4.0 || (f64::from(x).abs() <= std::f64::consts::PI && abs <= 2f64.powi(-11)),
    }
}

fn build(source: &str, fast_relaxed_math: bool) -> ferrocl_codegen::Program {
    let spirv = spirv_from_c(source, Recipe::Optimized, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize: true,
        fast_relaxed_math,
        ..default_options()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

/// The three ways to ask for the relaxed forms: (program, kernel of `name`, whether the bound
/// is half_*'s 8192 ulp).
fn variants() -> Vec<(ferrocl_codegen::Program, &'static str, bool)> {
    vec![
        (build("vector_math.cl", true), "", false),
        (build("relaxed_math.cl", false), "native_", false),
        (build("relaxed_math.cl", false), "half_", true),
    ]
}

/// Runs `kernel` of `p` on `x`; the results.
fn run(p: &ferrocl_codegen::Program, kernel: &str, x: &[f32]) -> Vec<f32> {
    let k = p
        .kernel(kernel)
        .unwrap_or_else(|| panic!("no kernel {kernel}"));
    assert!(
        matches!(k.vectorization, Vectorization::Vectorized { .. }),
        "{kernel}: {:?}",
        k.vectorization
    );
    let mut xs = bytes_of(x);
    let mut ys = vec![0u8; 4 * x.len()];
    launch(
        p,
        kernel,
        &mut [Arg::Buf(&mut xs), Arg::Buf(&mut ys)],
        x.len() as u64,
        64,
    );
    (0..x.len()).map(|i| read_f32(&ys, i)).collect()
}

/// Specials, the domain edges and reduction points of the relaxed forms, every exponent, and
/// random floats.
fn inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::MAX,
        f32::MIN,
    ];
    let mut centres: Vec<f32> = vec![
        88.72, 89.0, -87.34, -103.97, 104.0, 128.0, 129.0, -126.0, -149.0, -150.0, 38.53, -37.93,
        -44.85, 0.5, 2.0, 262_144.0,
    ];
    for k in -40..=40 {
        centres.push(2f32.powi(k));
        centres.push((f64::from(k) * std::f64::consts::FRAC_PI_2) as f32);
        centres.push((f64::from(k) * std::f64::consts::LN_2) as f32);
    }
    for c in centres {
        for d in -32i32..=32 {
            v.push(f32::from_bits(c.to_bits().wrapping_add_signed(d)));
            v.push(-f32::from_bits(c.to_bits().wrapping_add_signed(d)));
        }
    }
    let mut rng = Rng(0x5eed_0f7e);
    for e in 0u32..=0xff {
        for _ in 0..32 {
            v.push(f32::from_bits(e << 23 | (rng.next() as u32 & 0x807f_ffff)));
        }
    }
    for _ in 0..(1 << 16) {
        v.push(f32::from_bits(rng.next() as u32));
        v.push((rng.next() % 2_000_001) as f32 / 10_000.0 - 100.0);
    }
    v.truncate(v.len() / 16 * 16);
    v
}

#[test]
fn relaxed_forms_stay_within_the_relaxed_bounds() {
    let x = inputs();
    for (p, prefix, half) in variants() {
        for (name, exact) in FUNCTIONS {
            let kernel = format!("{prefix}{name}_all");
            let y = run(&p, &kernel, &x);
            let mut worst = (0.0f64, 0.0f32);
            let mut wrong = Vec::new();
            for (&xi, &yi) in x.iter().zip(&y) {
                let want = exact(f64::from(xi));
                let e = ulps(yi, want);
                if e.is_finite() && e > worst.0 && !(name.starts_with("log") && want.abs() < 1e-3) {
                    worst = (e, xi);
                }
                if !within(name, xi, yi, want, half) {
                    wrong.push(format!(
                        "{xi:e} ({:#010x}): {yi:e} want {want:e}",
                        xi.to_bits()
                    ));
                }
            }
            assert!(
                wrong.is_empty(),
                "{kernel}: {} of {} outside the bound, first: {:?}",
                wrong.len(),
                x.len(),
                &wrong[..wrong.len().min(8)]
            );
            // The forms are far inside the bounds; a regression that stays within them still
            // shows here.
            assert!(worst.0 < 2.5, "{kernel}: {} ulp at {:e}", worst.0, worst.1);
        }
    }
}

/// Every float through each relaxed form (about a minute per function and variant here):
/// `cargo test -p ferrocl-codegen --release --test relaxed_math -- --ignored --nocapture`,
/// `RELAXED_MATH_FUNCTIONS=exp,log` for some functions, `RELAXED_MATH_VARIANTS=relaxed` for
/// some variants.
#[test]
#[ignore]
fn every_float_is_within_the_relaxed_bounds() {
    const CHUNK: usize = 1 << 24;
    let only = std::env::var("RELAXED_MATH_FUNCTIONS").ok();
    // The variants share the forms; `RELAXED_MATH_VARIANTS=relaxed` (or native, half) runs some.
    let variants_wanted = std::env::var("RELAXED_MATH_VARIANTS").ok();
    for (p, prefix, half) in variants() {
        let variant = match prefix {
            "" => "relaxed",
            "native_" => "native",
            _ => "half",
        };
        if variants_wanted
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|v| v == variant))
        {
            continue;
        }
        for (name, exact) in FUNCTIONS {
            if only
                .as_deref()
                .is_some_and(|o| !o.split(',').any(|f| f == name))
            {
                continue;
            }
            let kernel = format!("{prefix}{name}_all");
            let start = std::time::Instant::now();
            let (mut wrong, mut first, mut worst) = (0u64, None, (0.0f64, 0u32));
            let mut x = vec![0f32; CHUNK];
            for chunk in 0..(1usize << 32) / CHUNK {
                let base = (chunk * CHUNK) as u32;
                for (i, xi) in x.iter_mut().enumerate() {
                    *xi = f32::from_bits(base + i as u32);
                }
                let y = run(&p, &kernel, &x);
                for (&xi, &yi) in x.iter().zip(&y) {
                    let want = exact(f64::from(xi));
                    if !within(name, xi, yi, want, half) {
                        wrong += 1;
                        first.get_or_insert(xi.to_bits());
                    }
                    let e = ulps(yi, want);
                    let near_zero_log = name.starts_with("log") && want.abs() < 1e-3;
                    if e.is_finite() && e > worst.0 && !near_zero_log {
                        worst = (e, xi.to_bits());
                    }
                }
            }
            println!(
                "{kernel}: {wrong} outside the bound (first {first:#x?}), largest error {:.3} ulp at {:#010x}, {:.0} s",
                worst.0,
                worst.1,
                start.elapsed().as_secs_f64()
            );
            assert_eq!(wrong, 0, "{kernel}");
        }
    }
}
