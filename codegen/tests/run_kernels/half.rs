//! Half precision: vload_half/vstore_half and half arithmetic against the host C compiler's
//! conversions (ferrocl-testref), independent of mathlib.

use super::*;

// ---------------------------------------------------------------------------------------------
// Half precision: vload_half/vstore_half (half_memory.cl) and half arithmetic (half_arith.cl),
// against the host C compiler's half conversions (ferrocl-testref), independent of mathlib.

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum HalfMode {
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

impl From<HalfMode> for ferrocl_testref::Rounding {
    fn from(mode: HalfMode) -> ferrocl_testref::Rounding {
        use ferrocl_testref::Rounding::*;
        match mode {
            HalfMode::Rte => NearestEven,
            HalfMode::Rtz => TowardZero,
            HalfMode::Rtp => TowardPositive,
            HalfMode::Rtn => TowardNegative,
        }
    }
}

/// The f32 bits vload_half must produce: the exact value; infinities; NaNs quiet (as IEEE
/// conversions return them) with the payload bits kept (`ferrocl-testref`).
fn widened_bits(h: u16) -> u32 {
    ferrocl_testref::f16_to_f32(h).to_bits()
}

/// `x` rounded once to half in `mode`, by the host's libgcc (`ferrocl-testref`), which shares
/// no code with Ferrocl. NaNs map to a quiet NaN with the sign and top payload bits.
pub(super) fn narrow_ref(x: f64, mode: HalfMode) -> u16 {
    ferrocl_testref::f64_to_f16(x, mode.into())
}

fn narrow_f32_ref(x: f32, mode: HalfMode) -> u16 {
    ferrocl_testref::f32_to_f16(x, mode.into())
}

fn narrow_f64_ref(x: f64, mode: HalfMode) -> u16 {
    ferrocl_testref::f64_to_f16(x, mode.into())
}

/// Every rounding boundary of half, both signs, specials and a sample (`ferrocl-testref`).
fn half_boundary_inputs() -> Vec<f64> {
    ferrocl_testref::half_boundary_doubles()
}

/// The exactly representable floats among `xs`, and float NaNs with payloads.
fn half_boundary_floats(xs: &[f64]) -> Vec<f32> {
    ferrocl_testref::half_boundary_floats(xs)
}

fn same_half_bits(got: u16, want: u16) -> bool {
    got == want
}

fn launch_1d(p: &Program, kernel: &str, a: &mut [u8], b: &mut [u8], items: usize) {
    let (mut args, _) = Args::new(p, kernel);
    args.ptr(p, kernel, 0, a);
    args.ptr(p, kernel, 1, b);
    launch(
        p,
        kernel,
        &args,
        1,
        [0; 3],
        [items as u64, 1, 1],
        [64, 1, 1],
    );
}

fn bytes_of<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: plain-old-data numbers viewed as their bytes, same lifetime and length in bytes.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

fn half_memory_program(recipe: Recipe, round_to_zero: bool) -> Program {
    let module = ferrocl_frontend::parse(&spirv("half_memory.cl", recipe))
        .unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        round_to_zero,
        ..default_options()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

/// vload_half, vload_halfn and vloada_halfn of every one of the 2^16 encodings, in every width.
#[test]
fn vload_half_every_encoding_every_width() {
    both(|r| {
        let p = half_memory_program(r, false);
        let mut halves: Vec<u16> = (0..=u16::MAX).collect();
        let mut out = vec![0u32; 1 << 16];
        launch_1d(
            &p,
            "load_half",
            bytes_of(&mut halves),
            bytes_of(&mut out),
            1 << 16,
        );
        for h in 0..=u16::MAX {
            assert_eq!(
                out[h as usize],
                widened_bits(h),
                "{r:?} vload_half {h:#06x}"
            );
        }
        for n in [2usize, 3, 4, 8, 16] {
            let items = (1 << 16) / n;
            out.fill(0);
            let k = format!("load_half{n}");
            launch_1d(&p, &k, bytes_of(&mut halves), bytes_of(&mut out), items);
            for j in 0..items * n {
                assert_eq!(out[j], widened_bits(halves[j]), "{r:?} {k} element {j}");
            }
            // vloada_half3 reads 4-half-aligned groups (the fourth is skipped).
            let stride = if n == 3 { 4 } else { n };
            let items = (1 << 16) / stride;
            out.fill(0);
            let k = format!("loada_half{n}");
            launch_1d(&p, &k, bytes_of(&mut halves), bytes_of(&mut out), items);
            for i in 0..items {
                for c in 0..n {
                    let h = halves[i * stride + c];
                    assert_eq!(
                        out[i * n + c],
                        widened_bits(h),
                        "{r:?} {k} item {i} lane {c}"
                    );
                }
            }
        }
    });
}

/// vstore_half in every rounding mode from floats and doubles at every half boundary (and a
/// sample); the vector forms on a slice of the same inputs, with vstorea_half3's 4-half
/// stride leaving the fourth half untouched.
#[test]
fn vstore_half_every_mode_from_float_and_double() {
    let doubles = half_boundary_inputs();
    let floats = half_boundary_floats(&doubles);
    for round_to_zero in [false, true] {
        both(|r| {
            let p = half_memory_program(r, round_to_zero);
            let default = if round_to_zero {
                HalfMode::Rtz
            } else {
                HalfMode::Rte
            };
            let modes = [
                ("def", default),
                ("rte", HalfMode::Rte),
                ("rtz", HalfMode::Rtz),
                ("rtp", HalfMode::Rtp),
                ("rtn", HalfMode::Rtn),
            ];
            for (name, mode) in modes {
                // The scalar forms on every input; the default mode under both device settings,
                // the explicit ones once.
                if round_to_zero && name != "def" {
                    continue;
                }
                let mut xs = floats.clone();
                let mut q = vec![0u16; xs.len()];
                let k = format!("store_float_{name}");
                let items = xs.len();
                launch_1d(&p, &k, bytes_of(&mut xs), bytes_of(&mut q), items);
                for (x, &got) in xs.iter().zip(&q) {
                    let want = narrow_f32_ref(*x, mode);
                    assert!(
                        same_half_bits(got, want),
                        "{r:?} {k}({x:e} = {:#010x}): {got:#06x}, expected {want:#06x}",
                        x.to_bits()
                    );
                }
                let mut ds = doubles.clone();
                let mut q = vec![0u16; ds.len()];
                let k = format!("store_double_{name}");
                let items = ds.len();
                launch_1d(&p, &k, bytes_of(&mut ds), bytes_of(&mut q), items);
                for (x, &got) in ds.iter().zip(&q) {
                    let want = narrow_f64_ref(*x, mode);
                    assert!(
                        same_half_bits(got, want),
                        "{r:?} {k}({x:e} = {:#018x}): {got:#06x}, expected {want:#06x}",
                        x.to_bits()
                    );
                }
                // Vector forms: every 37th input, so each lane position sees every kind.
                let fs: Vec<f32> = floats.iter().step_by(37).copied().collect();
                let ds: Vec<f64> = doubles.iter().step_by(37).copied().collect();
                for n in [2usize, 3, 4, 8, 16] {
                    for aligned in [false, true] {
                        let stride = if aligned && n == 3 { 4 } else { n };
                        let prefix = if aligned { "storea" } else { "store" };
                        let items = fs.len() / n;
                        let mut xs = fs.clone();
                        let mut q = vec![0xdeadu16; items * stride];
                        let k = format!("{prefix}_float{n}_{name}");
                        launch_1d(&p, &k, bytes_of(&mut xs), bytes_of(&mut q), items);
                        for i in 0..items {
                            for c in 0..stride {
                                let want = if c < n {
                                    narrow_f32_ref(xs[i * n + c], mode)
                                } else {
                                    0xdead
                                };
                                assert_eq!(q[i * stride + c], want, "{r:?} {k} item {i} lane {c}");
                            }
                        }
                        let items = ds.len() / n;
                        let mut xs = ds.clone();
                        let mut q = vec![0xdeadu16; items * stride];
                        let k = format!("{prefix}_double{n}_{name}");
                        launch_1d(&p, &k, bytes_of(&mut xs), bytes_of(&mut q), items);
                        for i in 0..items {
                            for c in 0..stride {
                                let want = if c < n {
                                    narrow_f64_ref(xs[i * n + c], mode)
                                } else {
                                    0xdead
                                };
                                assert_eq!(q[i * stride + c], want, "{r:?} {k} item {i} lane {c}");
                            }
                        }
                    }
                }
            }
        });
    }
}

fn half_arith_program(recipe: Recipe) -> &'static Program {
    cached("half_arith.cl", recipe)
}

pub(super) fn is_half_nan(h: u16) -> bool {
    ferrocl_testref::f16_is_nan(h)
}

/// Equal encodings, or both NaN (arithmetic may return any NaN).
fn same_half(got: u16, want: u16) -> bool {
    got == want || (is_half_nan(got) && is_half_nan(want))
}

/// Half value as f64, NaN and infinities included (`ferrocl-testref`).
pub(super) fn half_f64(h: u16) -> f64 {
    ferrocl_testref::f16_to_f64(h)
}

/// Pseudo-random halves (every encoding equally likely).
fn random_halves(n: usize, seed: u64) -> Vec<u16> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u16
        })
        .collect()
}

/// a·b + c for finite halves, exactly: every half is an integer number of 2^-24, so the sum is
/// an integer number of 2^-48 (at most 2^81 in magnitude); rounded to half by search and an
/// integer midpoint comparison. Non-finite cases follow f64's fused multiply-add.
fn fma_ref(a: u16, b: u16, c: u16) -> u16 {
    let (x, y, z) = (half_f64(a), half_f64(b), half_f64(c));
    if !(x.is_finite() && y.is_finite() && z.is_finite()) {
        let r = x.mul_add(y, z);
        return narrow_ref(r, HalfMode::Rte);
    }
    let units = |v: f64| (v * 2f64.powi(24)) as i128; // exact
    let n = units(x) * units(y) + (units(z) << 24);
    if n == 0 {
        // The sign of an exact zero sum is IEEE's: f64 gets it right.
        return if x.mul_add(y, z).is_sign_negative() {
            0x8000
        } else {
            0
        };
    }
    let sign: u16 = if n < 0 { 0x8000 } else { 0 };
    let a = n.abs();
    let scaled = |h: u16| -> i128 {
        if h == 0x7c00 {
            65536i128 << 48
        } else {
            units(half_f64(h)) << 24
        }
    };
    let (mut lo, mut hi) = (0u16, 0x7c00u16);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if scaled(mid) <= a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if scaled(0x7bff) <= a {
        lo = 0x7bff;
    }
    if scaled(lo) == a {
        return sign | lo;
    }
    let hi = lo + 1;
    let twice = 2 * a;
    let mid2 = scaled(lo) + scaled(hi);
    let up = twice > mid2 || (twice == mid2 && lo & 1 == 1);
    sign | if up { hi } else { lo }
}

/// Half + − × ÷ and comparisons, every half against pseudo-random partners and special
/// values, against f64 (exact for + − ×, one rounding for ÷, then one rounding to half).
#[test]
fn half_arithmetic_is_correctly_rounded() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).cycle().take(4 << 16).collect();
        let mut b = random_halves(a.len(), 0x1234_5678_9abc_def1);
        // Special partners for the first encodings: zeros, infinities, NaN, 1, max.
        for (i, s) in [
            0x0000u16, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x3c00, 0x7bff, 0x0001,
        ]
        .iter()
        .enumerate()
        {
            for j in 0..2048 {
                b[i * 2048 + j] = *s;
            }
        }
        let n = a.len();
        let mut outs = vec![vec![0u16; n]; 4];
        let mut cmp = vec![0i32; n];
        let k = "half_binary";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut b);
        for (i, o) in outs.iter_mut().enumerate() {
            args.ptr(p, k, 2 + i, o);
        }
        args.ptr(p, k, 6, &mut cmp);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            let (x, y) = (half_f64(a[i]), half_f64(b[i]));
            let want = [x + y, x - y, x * y, x / y].map(|v| narrow_ref(v, HalfMode::Rte));
            for (op, (o, w)) in ["+", "-", "*", "/"].iter().zip(outs.iter().zip(want)) {
                assert!(
                    same_half(o[i], w),
                    "{r:?} {:#06x} {op} {:#06x} = {:#06x}, expected {w:#06x}",
                    a[i],
                    b[i],
                    o[i]
                );
            }
            let c = i32::from(x < y)
                | i32::from(x == y) << 1
                | i32::from(x > y) << 2
                | i32::from(x.is_nan() || y.is_nan()) << 3;
            assert_eq!(cmp[i], c, "{r:?} compare {:#06x} {:#06x}", a[i], b[i]);
        }
    });
}

#[test]
fn half_fma_is_correctly_rounded() {
    both(|r| {
        let p = half_arith_program(r);
        let n = 1 << 18;
        let mut a = random_halves(n, 0x0dd_ba11);
        let mut b = random_halves(n, 0xca75_0001);
        let mut c = random_halves(n, 0xfeed_f00d);
        // Products near halfway cases of c: a·b with small exponents next to c ≈ 1.
        for i in 0..n / 4 {
            a[i] = 0x3c00 | (a[i] & 0x83ff);
            b[i] = 0x1000 | (b[i] & 0x83ff);
            c[i] = 0x3c00 | (c[i] & 0x03ff);
        }
        let mut out = vec![0u16; n];
        let k = "half_fma";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut b);
        args.ptr(p, k, 2, &mut c);
        args.ptr(p, k, 3, &mut out);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            let want = fma_ref(a[i], b[i], c[i]);
            assert!(
                same_half(out[i], want),
                "{r:?} fma({:#06x}, {:#06x}, {:#06x}) = {:#06x}, expected {want:#06x}",
                a[i],
                b[i],
                c[i],
                out[i]
            );
        }
    });
}

/// sqrt (correctly rounded), negation, widening to float and double, every encoding.
#[test]
fn half_unary_every_encoding() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut root = vec![0u16; n];
        let mut neg = vec![0u16; n];
        let mut wide = vec![0u32; n];
        let mut wider = vec![0f64; n];
        let k = "half_unary";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut root);
        args.ptr(p, k, 2, &mut neg);
        args.ptr(p, k, 3, &mut wide);
        args.ptr(p, k, 4, &mut wider);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for h in 0..=u16::MAX {
            let i = h as usize;
            let x = half_f64(h);
            let want = narrow_ref(x.sqrt(), HalfMode::Rte);
            assert!(
                same_half(root[i], want),
                "{r:?} sqrt({h:#06x}) = {:#06x}, expected {want:#06x}",
                root[i]
            );
            if is_half_nan(h) {
                assert!(
                    is_half_nan(neg[i]) && f32::from_bits(wide[i]).is_nan() && wider[i].is_nan()
                );
                continue;
            }
            assert_eq!(neg[i], h ^ 0x8000, "{r:?} -{h:#06x}");
            assert_eq!(wide[i], widened_bits(h), "{r:?} (float){h:#06x}");
            assert_eq!(wider[i].to_bits(), x.to_bits(), "{r:?} (double){h:#06x}");
        }
    });
}

/// Half → int in each rounding mode and the saturating forms, every encoding.
#[test]
fn half_to_integer_every_encoding() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut ints = vec![vec![0i32; n]; 4];
        let mut sat = vec![0i16; n];
        let mut usat = vec![0u8; n];
        let k = "half_to_int";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        for (i, o) in ints.iter_mut().enumerate() {
            args.ptr(p, k, 1 + i, o);
        }
        args.ptr(p, k, 5, &mut sat);
        args.ptr(p, k, 6, &mut usat);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for h in 0..=u16::MAX {
            let i = h as usize;
            let x = half_f64(h);
            if x.is_nan() {
                // Only the saturating forms define NaN: 0.
                assert_eq!((sat[i], usat[i]), (0, 0), "{r:?} NaN {h:#06x}");
                continue;
            }
            assert_eq!(
                sat[i],
                x.trunc().clamp(-32768.0, 32767.0) as i16,
                "{r:?} short_sat {h:#06x}"
            );
            assert_eq!(
                usat[i],
                x.trunc().clamp(0.0, 255.0) as u8,
                "{r:?} uchar_sat {h:#06x}"
            );
            if x.is_infinite() {
                continue;
            }
            let want = [x.round_ties_even(), x.trunc(), x.ceil(), x.floor()];
            for (m, (o, w)) in ["rte", "rtz", "rtp", "rtn"]
                .iter()
                .zip(ints.iter().zip(want))
            {
                assert_eq!(o[i], w as i32, "{r:?} convert_int_{m}({h:#06x})");
            }
        }
    });
}

/// float, double, int, long and ulong → half: the default conversion and each `_rtX` form,
/// at every half boundary (integers: every value around the half range and beyond).
#[test]
fn conversions_to_half_every_mode() {
    let doubles = half_boundary_inputs();
    let floats = half_boundary_floats(&doubles);
    let modes = [
        HalfMode::Rte,
        HalfMode::Rte,
        HalfMode::Rtz,
        HalfMode::Rtp,
        HalfMode::Rtn,
    ];
    fn run<T: Copy>(p: &Program, k: &str, xs: &mut [T]) -> Vec<Vec<u16>> {
        let n = xs.len();
        let mut outs = vec![vec![0u16; n]; 5];
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, xs);
        for (i, o) in outs.iter_mut().enumerate() {
            args.ptr(p, k, 1 + i, o);
        }
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        outs
    }
    both(|r| {
        let p = half_arith_program(r);
        let mut xs = floats.clone();
        let outs = run(p, "half_from_float", &mut xs);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in xs.iter().zip(o) {
                let want = narrow_f32_ref(*x, mode);
                assert!(
                    same_half(*got, want),
                    "{r:?} float {x:e} {mode:?}: {got:#06x} vs {want:#06x}"
                );
            }
        }
        let mut ds = doubles.clone();
        let outs = run(p, "half_from_double", &mut ds);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in ds.iter().zip(o) {
                let want = narrow_f64_ref(*x, mode);
                assert!(
                    same_half(*got, want),
                    "{r:?} double {x:e} {mode:?}: {got:#06x} vs {want:#06x}"
                );
            }
        }
        let mut ints: Vec<i32> = (-70_000..70_000).chain([i32::MIN, i32::MAX]).collect();
        let outs = run(p, "half_from_int", &mut ints);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in ints.iter().zip(o) {
                assert_eq!(
                    *got,
                    narrow_ref(f64::from(*x), mode),
                    "{r:?} int {x} {mode:?}"
                );
            }
        }
        let mut longs: Vec<i64> = (-70_000i64..70_000)
            .chain([i64::MIN, i64::MAX, 1 << 53, -(1 << 60)])
            .collect();
        let outs = run(p, "half_from_long", &mut longs);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in longs.iter().zip(o) {
                // Beyond 2^53 the f64 rounding keeps the value past the overflow threshold.
                assert_eq!(*got, narrow_ref(*x as f64, mode), "{r:?} long {x} {mode:?}");
            }
        }
        let mut ulongs: Vec<u64> = (0u64..140_000).chain([u64::MAX, 1 << 63]).collect();
        let outs = run(p, "half_from_ulong", &mut ulongs);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in ulongs.iter().zip(o) {
                assert_eq!(
                    *got,
                    narrow_ref(*x as f64, mode),
                    "{r:?} ulong {x} {mode:?}"
                );
            }
        }
    });
}

/// half4/half8 arithmetic with a half kernel argument: a*s + b (rounded after each operation,
/// as written) and a widening shuffle divided by s.
#[test]
fn half_vectors_and_a_half_argument() {
    both(|r| {
        let p = half_arith_program(r);
        let items = 4096;
        let mut a = random_halves(4 * items, 77);
        let mut b = random_halves(4 * items, 78);
        let s: u16 = 0x3e00; // 1.5
        let mut out = vec![0u16; 4 * items];
        let mut wide = vec![0u16; 8 * items];
        let k = "half_vectors";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut b);
        args.set(p, k, 2, &s.to_ne_bytes());
        args.ptr(p, k, 3, &mut out);
        args.ptr(p, k, 4, &mut wide);
        launch(p, k, &args, 1, [0; 3], [items as u64, 1, 1], [64, 1, 1]);
        let sv = half_f64(s);
        let rte = |v: f64| narrow_ref(v, HalfMode::Rte);
        for i in 0..items {
            for c in 0..4 {
                let j = 4 * i + c;
                let prod = rte(half_f64(a[j]) * sv);
                let want = rte(half_f64(prod) + half_f64(b[j]));
                assert!(
                    same_half(out[j], want),
                    "{r:?} item {i} lane {c}: {:#06x} vs {want:#06x}",
                    out[j]
                );
            }
            for c in 0..8 {
                let src = if c < 4 {
                    a[4 * i + c]
                } else {
                    b[4 * i + 7 - c]
                };
                let want = rte(half_f64(src) / sv);
                let got = wide[8 * i + c];
                assert!(
                    same_half(got, want),
                    "{r:?} wide item {i} lane {c}: {got:#06x} vs {want:#06x}"
                );
            }
        }
    });
}

/// exp, log, sin and pow on every half, within the spec's half ULP bounds (2, 2, 2, 4 ulp)
/// of the f64 functions.
#[test]
fn half_math_within_the_half_ulp_bounds() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut outs = vec![vec![0u16; n]; 4];
        let k = "half_math";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        for (i, o) in outs.iter_mut().enumerate() {
            args.ptr(p, k, 1 + i, o);
        }
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        type Case = (&'static str, fn(f64) -> f64, f64);
        let funcs: [Case; 4] = [
            ("exp", f64::exp, 2.0),
            ("log", f64::ln, 2.0),
            ("sin", f64::sin, 2.0),
            ("pow", |x| x.powf(1.5), 4.0),
        ];
        for ((name, f, bound), o) in funcs.iter().zip(&outs) {
            let mut worst = 0f64;
            for h in 0..=u16::MAX {
                let want = f(half_f64(h));
                let got = o[h as usize];
                if want.is_nan() {
                    assert!(
                        is_half_nan(got),
                        "{r:?} {name}({h:#06x}) = {got:#06x}, expected NaN"
                    );
                    continue;
                }
                if want.is_infinite() || want.abs() >= 65520.0 {
                    assert_eq!(
                        half_f64(got),
                        want.signum() * f64::INFINITY,
                        "{r:?} {name}({h:#06x})"
                    );
                    continue;
                }
                let e = (want.abs().log2().floor() as i32).max(-14);
                let ulp = 2f64.powi(e - 10);
                let err = (half_f64(got) - want).abs() / ulp;
                assert!(
                    err <= *bound,
                    "{r:?} {name}({h:#06x}) = {got:#06x}: {err} ulp"
                );
                worst = worst.max(err);
            }
            assert!(
                worst <= 0.5 + 1.0 / 1024.0,
                "{r:?} {name}: worst {worst} ulp"
            );
        }
    });
}

/// fract, sincos and modf write their second result through a half pointer; nextafter steps
/// in the half format. Every encoding.
#[test]
fn half_out_parameters_and_nextafter() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut outs = vec![vec![0u16; n]; 8];
        let k = "half_shaped";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        for (i, o) in outs.iter_mut().enumerate() {
            args.ptr(p, k, 1 + i, o);
        }
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        let rte = |v: f64| narrow_ref(v, HalfMode::Rte);
        for h in 0..=u16::MAX {
            let i = h as usize;
            let x = half_f64(h);
            let [fr, fl, s, c, up, down, ip, frac2] = [0, 1, 2, 3, 4, 5, 6, 7].map(|j| outs[j][i]);
            if x.is_nan() {
                assert!(
                    [fr, fl, s, c, up, down, ip, frac2]
                        .iter()
                        .all(|&v| is_half_nan(v)),
                    "{r:?} {h:#06x}"
                );
                continue;
            }
            // fract: min(x - floor(x), largest half below 1), floor(x) through the pointer.
            if x == 0.0 {
                assert_eq!(fr, h, "{r:?} fract of a zero keeps its sign");
            } else if x.is_finite() {
                let want = rte((x - x.floor()).min(1.0 - 1.0 / 2048.0));
                assert_eq!(
                    fr,
                    if want == 0x3c00 { 0x3bff } else { want },
                    "{r:?} fract({h:#06x})"
                );
            }
            assert_eq!(half_f64(fl), x.floor(), "{r:?} fract floor({h:#06x})");
            for (name, got, want) in [("sin", s, x.sin()), ("cos", c, x.cos())] {
                if want.is_nan() {
                    assert!(is_half_nan(got), "{r:?} {name}({h:#06x})");
                    continue;
                }
                let e = (want.abs().log2().floor() as i32).max(-14);
                let err = (half_f64(got) - want).abs() / 2f64.powi(e - 10);
                assert!(err <= 2.0, "{r:?} {name}({h:#06x}) = {got:#06x}: {err} ulp");
            }
            // nextafter toward ±inf: the neighbouring encoding (zeros step to ±2^-24).
            let (want_up, want_down) = match h {
                0x0000 | 0x8000 => (0x0001, 0x8001),
                0x7c00 => (0x7c00, 0x7bff),
                0xfc00 => (0xfbff, 0xfc00),
                _ if h & 0x8000 == 0 => (h + 1, h - 1),
                _ => (h - 1, h + 1),
            };
            let want_down = if want_down == 0x8000 && h == 0x0001 {
                0x0000
            } else {
                want_down
            };
            let want_up = if h == 0x8001 { 0x8000 } else { want_up };
            assert_eq!(
                (up, down),
                (want_up, want_down),
                "{r:?} nextafter({h:#06x})"
            );
            // modf(-x): integral part and fraction with -x's sign.
            let y = -x;
            assert_eq!(
                half_f64(ip).to_bits(),
                y.trunc().to_bits(),
                "{r:?} modf int(-{h:#06x})"
            );
            let want_frac = if y.is_infinite() {
                0.0f64.copysign(y)
            } else {
                (y - y.trunc()).copysign(y)
            };
            assert_eq!(
                half_f64(frac2).to_bits(),
                want_frac.to_bits(),
                "{r:?} modf frac(-{h:#06x})"
            );
        }
    });
}

/// bitselect works on the 16-bit encodings; isnormal/isfinite/isinf/isnan/signbit classify
/// halves (a half subnormal is not normal, though its f32 is).
#[test]
fn half_bit_operations_and_classification() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut b = random_halves(n, 5);
        let mut c = random_halves(n, 6);
        let mut sel = vec![0u16; n];
        let mut class = vec![0i32; n];
        let mut sign = vec![0i32; n];
        let k = "half_bits";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut b);
        args.ptr(p, k, 2, &mut c);
        args.ptr(p, k, 3, &mut sel);
        args.ptr(p, k, 4, &mut class);
        args.ptr(p, k, 5, &mut sign);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            let want = (a[i] & !c[i]) | (b[i] & c[i]);
            // Bit for bit, signalling NaNs included: halves move through f32 unchanged.
            assert_eq!(
                sel[i], want,
                "{r:?} bitselect({:#06x}, {:#06x}, {:#06x})",
                a[i], b[i], c[i]
            );
            let h = a[i];
            let e = (h >> 10) & 0x1f;
            let want = i32::from(e != 0 && e != 0x1f)
                | i32::from(e != 0x1f) << 1
                | i32::from(e == 0x1f && h & 0x3ff == 0) << 2
                | i32::from(e == 0x1f && h & 0x3ff != 0) << 3;
            assert_eq!(class[i], want, "{r:?} classify {h:#06x}");
            assert_eq!(sign[i], i32::from(h >> 15), "{r:?} signbit {h:#06x}");
        }
    });
}

/// work_group_reduce_add over halves: within the sum's rounding (the f32 sum of at most 64
/// halves is exact or nearly so, then rounded once); the inclusive max scan exactly.
#[test]
fn half_work_group_sum() {
    let language = Language {
        options: "-cl-std=CL3.0",
        extensions: &[
            "__opencl_c_work_group_collective_functions",
            "__opencl_c_int64",
            "cl_khr_fp16",
        ],
        debug_info: false,
    };
    both(|r| {
        let p = build_with("half_collectives.cl", r, language);
        let (items, local) = (1024usize, 64usize);
        // Small halves (|x| < 2^4 with few bits) keep the f32 sum exact.
        let mut a: Vec<u16> = random_halves(items, 9)
            .iter()
            .map(|h| (h & 0x83c0) | 0x3000)
            .collect();
        let mut sum = vec![0u16; items];
        let mut prefix = vec![0u16; items];
        let k = "half_group_sum";
        let (mut args, _) = Args::new(&p, k);
        args.ptr(&p, k, 0, &mut a);
        args.ptr(&p, k, 1, &mut sum);
        args.ptr(&p, k, 2, &mut prefix);
        launch(
            &p,
            k,
            &args,
            1,
            [0; 3],
            [items as u64, 1, 1],
            [local as u64, 1, 1],
        );
        for g in 0..items / local {
            let group = &a[g * local..(g + 1) * local];
            let exact: f64 = group.iter().map(|&h| half_f64(h)).sum();
            let want = narrow_ref(exact, HalfMode::Rte);
            let mut max = f64::NEG_INFINITY;
            for (j, &h) in group.iter().enumerate() {
                assert_eq!(sum[g * local + j], want, "{r:?} group {g} item {j}");
                max = max.max(half_f64(h));
                assert_eq!(
                    half_f64(prefix[g * local + j]),
                    max,
                    "{r:?} scan group {g} item {j}"
                );
            }
        }
    });
}

/// Halves moved without arithmetic keep their exact encoding (signalling NaNs included):
/// as_ushort/as_half, private arrays, local memory across a barrier, vload4/vstore4.
#[test]
fn half_moves_keep_every_encoding() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut bits = vec![0u16; n];
        let mut from_bits = vec![0u16; n];
        let mut copy4 = vec![0u16; 4 * n];
        let k = "half_moves";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut bits);
        args.ptr(p, k, 2, &mut from_bits);
        args.ptr(p, k, 3, &mut copy4);
        // The local buffer (64 halves per group) at offset 0 of the arena.
        args.set(p, k, 4, &0u64.to_ne_bytes());
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            assert_eq!(bits[i], a[i], "{r:?} as_ushort({:#06x})", a[i]);
            assert_eq!(
                from_bits[i],
                a[i] ^ 0x8000,
                "{r:?} as_half({:#06x})",
                a[i] ^ 0x8000
            );
            let tmp: Vec<u16> = (0..4).map(|k| a[(4 * i + k) % n]).collect();
            let want = [tmp[0], tmp[1], tmp[2], tmp[i % 4]];
            assert_eq!(&copy4[4 * i..4 * i + 4], &want, "{r:?} item {i}");
        }
    });
}
