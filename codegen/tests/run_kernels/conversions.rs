//! Conversions with explicit rounding modes and saturation, against host references.

use super::*;

#[derive(Clone, Copy, Debug)]
enum Mode {
    Rte,
    Rtz,
    Rtp,
    Rtn,
}
const MODES: [Mode; 4] = [Mode::Rte, Mode::Rtz, Mode::Rtp, Mode::Rtn];

/// Picks between the floats `lo` ≤ x ≤ `hi` around an exact value; `cmp_lo`/`cmp_hi` say how
/// far each is (exactly, as i128 or f64 differences), `x_negative` the sign of x.
fn pick(
    mode: Mode,
    lo: f32,
    hi: f32,
    exact: bool,
    lo_closer: std::cmp::Ordering,
    x_negative: bool,
) -> f32 {
    if exact {
        return lo;
    }
    match mode {
        Mode::Rtp => hi,
        Mode::Rtn => lo,
        Mode::Rtz => {
            if x_negative {
                hi
            } else {
                lo
            }
        }
        Mode::Rte => match lo_closer {
            std::cmp::Ordering::Less => lo,
            std::cmp::Ordering::Greater => hi,
            std::cmp::Ordering::Equal => {
                if lo.to_bits() & 1 == 0 {
                    lo
                } else {
                    hi
                }
            }
        },
    }
}

/// Reference integer → f32 conversion in `mode`, computed exactly with i128.
fn int_to_f32(x: i128, mode: Mode) -> f32 {
    let r = x as f32; // nearest-even
    let ri = r as i128;
    let (lo, hi) = if ri == x {
        (r, r)
    } else if ri < x {
        (r, r.next_up())
    } else {
        (r.next_down(), r)
    };
    let d_lo = x - lo as i128;
    let d_hi = hi as i128 - x;
    pick(mode, lo, hi, ri == x, d_lo.cmp(&d_hi), x < 0)
}

fn f64_to_f32(x: f64, mode: Mode) -> f32 {
    // Rust's `as` rounds to nearest even, overflow to infinity included.
    if !x.is_finite() || matches!(mode, Mode::Rte) {
        return x as f32;
    }
    let r = x as f32;
    let back = f64::from(r);
    let (lo, hi) = if back == x {
        (r, r)
    } else if back < x {
        (r, r.next_up())
    } else {
        (r.next_down(), r)
    };
    let (d_lo, d_hi) = (x - f64::from(lo), f64::from(hi) - x);
    let nearest = d_lo.partial_cmp(&d_hi).unwrap_or(std::cmp::Ordering::Equal);
    pick(mode, lo, hi, back == x, nearest, x < 0.0)
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn conversions_with_explicit_rounding_modes() {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // Edge cases first: ties, powers of two ± 1, extremes; then random bit patterns with
    // random leading-zero counts.
    let mut longs: Vec<i64> = vec![
        0,
        1,
        -1,
        (1 << 24) + 1,
        (1 << 24) + 3,
        -(1 << 24) - 1,
        (1 << 25) + 2,
        i64::MAX,
        i64::MIN,
        i64::MIN + 1,
        (1 << 53) + 1,
        -(1 << 40) - 12345,
        i32::MAX as i64,
        i32::MIN as i64,
        u32::MAX as i64,
    ];
    while longs.len() < 4000 {
        let v = next();
        longs.push((v >> (next() % 64)) as i64 * if next() & 1 == 0 { 1 } else { -1 });
    }
    let n = longs.len();
    let mut ints: Vec<i32> = longs.iter().map(|&l| l as i32).collect();
    let mut uints: Vec<u32> = longs.iter().map(|&l| l as u32).collect();
    let mut ls = longs.clone();
    let mut uls: Vec<u64> = longs.iter().map(|&l| (l as u64).wrapping_mul(3)).collect();
    uls[0] = u64::MAX;
    let mut doubles: Vec<f64> = longs
        .iter()
        .map(|&l| {
            f64::from_bits(((l as u64) & 0x8000_0000_ffff_ffff) | ((0x380 + next() % 0x100) << 52))
        })
        .collect();
    doubles[..8].copy_from_slice(&[
        f64::NAN,
        f64::INFINITY,
        -f64::INFINITY,
        3.4028235677973366e38,
        3.4028236e38 * 1.0000001,
        1e-46,
        -1e-46,
        1.0 + 2f64.powi(-24),
    ]);
    let mut floats: Vec<f32> = doubles
        .iter()
        .map(|&d| (d * 1e-30 * (next() % 1000) as f64) as f32)
        .collect();
    floats[..10].copy_from_slice(&[
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        f32::NAN,
        3e9,
        -3e9,
        2147483520.0,
    ]);
    both(|r| {
        let p = conversion_program(r);
        let mut out = vec![0f32; n * 16];
        let (mut args, _) = Args::new(p, "int_to_float");
        args.ptr(p, "int_to_float", 0, &mut ints);
        args.ptr(p, "int_to_float", 1, &mut uints);
        args.ptr(p, "int_to_float", 2, &mut ls);
        args.ptr(p, "int_to_float", 3, &mut uls);
        args.ptr(p, "int_to_float", 4, &mut out);
        launch(
            p,
            "int_to_float",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [16, 1, 1],
        );
        for g in 0..n {
            let sources = [
                i128::from(ints[g]),
                i128::from(uints[g]),
                i128::from(ls[g]),
                i128::from(uls[g]),
            ];
            for (s, &x) in sources.iter().enumerate() {
                for (m, &mode) in MODES.iter().enumerate() {
                    let got = out[g * 16 + s * 4 + m];
                    let want = int_to_f32(x, mode);
                    assert!(
                        same(got, want),
                        "{r:?} source {s} value {x} {mode:?}: got {got:e}, want {want:e}"
                    );
                }
            }
        }
        let mut out = vec![0f32; n * 4];
        let (mut args, _) = Args::new(p, "double_to_float");
        args.ptr(p, "double_to_float", 0, &mut doubles);
        args.ptr(p, "double_to_float", 1, &mut out);
        launch(
            p,
            "double_to_float",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [16, 1, 1],
        );
        for g in 0..n {
            for (m, &mode) in MODES.iter().enumerate() {
                let (got, want) = (out[g * 4 + m], f64_to_f32(doubles[g], mode));
                assert!(
                    same(got, want),
                    "{r:?} double {:e} {mode:?}: got {got:e}, want {want:e}",
                    doubles[g]
                );
            }
        }
        let mut out = vec![0i32; n * 4];
        let mut sat = vec![0i32; n];
        let mut narrow = vec![0i8; n];
        let (mut args, _) = Args::new(p, "float_to_int");
        args.ptr(p, "float_to_int", 0, &mut floats);
        args.ptr(p, "float_to_int", 1, &mut out);
        args.ptr(p, "float_to_int", 2, &mut sat);
        args.ptr(p, "float_to_int", 3, &mut narrow);
        args.ptr(p, "float_to_int", 4, &mut ints);
        launch(
            p,
            "float_to_int",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [16, 1, 1],
        );
        for g in 0..n {
            let f = floats[g];
            // Rust `as` saturates and maps NaN to 0, like convert_int_sat; the plain forms are
            // only defined in range, so compare them only there.
            assert_eq!(sat[g], f as i32, "{r:?} sat {f:e}");
            assert_eq!(
                i32::from(narrow[g]),
                ints[g].clamp(-128, 127),
                "{r:?} char_sat {}",
                ints[g]
            );
            if f.is_finite() && f.abs() < 2.0e9 {
                let want = [
                    f.round_ties_even() as i32,
                    f.trunc() as i32,
                    f.ceil() as i32,
                    f.floor() as i32,
                ];
                assert_eq!(&out[g * 4..g * 4 + 4], &want, "{r:?} {f:e}");
            }
        }
    });
}
