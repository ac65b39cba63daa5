//! rootn's tests: the exact decision on exact powers (both of its methods), constructed hard
//! cases whose root lies extremely close to a midpoint, random inputs checked against the
//! exact decision, and the special values and signs of the entry point.

use super::exact::{self, Big, Midpoint};
use super::{deciding_phase, middle_phase, pow2, Phase};
use crate::shapes::f64::rootn;

/// xorshift64*: reproducible pseudo-random bits.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The exact decision with the method production uses for this n.
fn exact_above(a: f64, n: i32, lo: f64) -> bool {
    exact::root_above_midpoint(a, n, lo)
}

/// Both exact methods, which must agree (the logarithms at any n, the powers for small n).
fn exact_above_checked(a: f64, n: i32, lo: f64) -> bool {
    let mid = Midpoint::new(a, n, lo);
    let by_logs = exact::by_logarithms(&mid);
    if n.unsigned_abs() <= 200 {
        assert_eq!(
            exact::by_powers(&mid),
            by_logs,
            "the two exact methods disagree: a = {a:e}, n = {n}, lo = {lo:e}"
        );
    }
    by_logs
}

/// Asserts that y is RN(a^(1/n)): the root is above the midpoint below y and below the
/// midpoint above y.
fn assert_correctly_rounded(a: f64, n: i32, y: f64, check: fn(f64, i32, f64) -> bool) {
    assert!(
        check(a, n, y.next_down()),
        "rootn({a:e}, {n}) = {y:e} is too large"
    );
    assert!(!check(a, n, y), "rootn({a:e}, {n}) = {y:e} is too small");
}

/// (a) x = y^n exactly: the root is the double y, so it is above the midpoint below y and
/// below the one above it, by both exact methods, and rootn returns y (-y for -x and odd n).
#[test]
fn exact_decision_on_exact_powers() {
    // y = Y·2^k; x = Y^N·2^(kN) is a double when Y^N < 2^53 (and, for n < 0, only Y = 1).
    let mut cases: Vec<(u64, i64, i32)> = Vec::new();
    for (big_y, k) in [
        (3, 0),
        (5, 0),
        (3, -1),
        (7, -3),
        (7, 0),
        (1025, -10),
        (1023, -10),
    ] {
        for n in 3..=40 {
            if u128::from(big_y)
                .checked_pow(n as u32)
                .is_some_and(|p| p < 1 << 53)
            {
                cases.push((big_y, k, n));
            }
        }
    }
    for (k, n) in [
        (-7, 153),
        (3, -300),
        (1, -1074),
        (-1, -1023),
        (5, 200),
        (-5, -200),
        (2, 7),
    ] {
        cases.push((1, k, n));
    }
    assert!(cases.len() > 60, "{} cases", cases.len());
    for (big_y, k, n) in cases {
        let y = big_y as f64 * pow2(k);
        let big_n = n.unsigned_abs();
        let e = if n > 0 {
            k * i64::from(big_n)
        } else {
            -k * i64::from(big_n)
        };
        let x = big_y.pow(big_n) as f64 * pow2(e);
        assert_correctly_rounded(x, n, y, exact_above_checked);
        assert_eq!(rootn(x, n), y, "rootn({x:e}, {n})");
        if n % 2 != 0 {
            assert_eq!(rootn(-x, n), -y, "rootn({:e}, {n})", -x);
        } else {
            assert!(rootn(-x, n).is_nan(), "rootn({:e}, {n})", -x);
        }
    }
}

/// (a) The exact decision on small cases worked out by hand: m = 1 + 2^-53 (the midpoint of
/// 1 and next_up(1)) against x = 1 ± ulp, where m^N = 1 + N·2^-53 + ...
#[test]
fn exact_decision_near_one() {
    let one_up = 1.0f64.next_up(); // 1 + 2^-52
                                   // N·2^-53 + C(N,2)·2^-106 vs 2^-52: m^N < 1 + 2^-52 iff N < 2 (N >= 3 here): for every N
                                   // >= 3, m^N > 1 + 2^-52, so the root of 1 + 2^-52 is below m.
    for n in [3, 4, 5, 64, 65, 1000, i32::MAX] {
        assert!(!exact_above_checked(one_up, n, 1.0), "n = {n}");
        // And the root of 1 + 2^-52 is above 1 - 2^-54, the midpoint below 1.
        assert!(
            exact_above_checked(one_up, n, 1.0f64.next_down()),
            "n = {n}"
        );
        // n < 0: (1 + 2^-52)^(-1/N) < 1 < m.
        assert!(!exact_above_checked(one_up, -n, 1.0), "n = {}", -n);
        assert!(
            exact_above_checked(one_up, -n, 1.0f64.next_down().next_down()),
            "-{n}"
        );
    }
    // 2^(1/N) lies strictly between doubles.
    for n in [4, 5, 7, -5, 100] {
        assert_correctly_rounded(2.0, n, rootn(2.0, n), exact_above_checked);
    }
}

/// The double nearest m^n for a midpoint m = M·2^p (M odd, 54 bits), exactly with big
/// integers; None when it is not a normal double.
fn nearest_power_of_midpoint(big_m: u64, p: i64, n: i32) -> Option<f64> {
    let big_n = n.unsigned_abs();
    let power = Big::from_u64(big_m).pow(big_n);
    let x = if n > 0 {
        // m^N = M^N·2^(pN).
        let approx_exp = power.bits() as i64 + p * i64::from(big_n);
        if !(-1020..1020).contains(&approx_exp) {
            return None;
        }
        power.to_f64_scaled(p * i64::from(big_n))
    } else {
        // m^-N = 2^(-pN)/M^N: 55 quotient bits of 2^(b+54)/M^N (b = its bit length) by
        // restoring division, rounded to 53 with the remainder as sticky bit.
        let b = power.bits();
        let approx_exp = -(b as i64) - p * i64::from(big_n);
        if !(-1020..1020).contains(&approx_exp) {
            return None;
        }
        let mut rem = Big::from_u64(1).shl(b - 1);
        let mut quot = 0u64;
        for _ in 0..55 {
            rem = rem.shl(1);
            quot <<= 1;
            if rem.cmp(&power) != std::cmp::Ordering::Less {
                rem = rem.sub(&power);
                quot |= 1;
            }
        }
        let sticky = !rem.is_zero();
        let (mut sig, dropped) = (quot >> 2, quot & 3);
        if dropped > 2 || (dropped == 2 && (sticky || sig & 1 == 1)) {
            sig += 1;
        }
        // quot = floor(2^(b+54)/M^N): x = quot·2^(-(b+54) - pN), sig = quot/4.
        sig as f64 * pow2(-(b as i64) - 52 - p * i64::from(big_n))
    };
    x.is_normal().then_some(x)
}

/// A double near m^n (within an ulp or so) from the double-double power, for n too large for
/// exact powers; None when it is not a normal double.
fn near_power_of_midpoint(lo: f64, n: i32) -> Option<f64> {
    let (mh, em) = super::split_exponent(lo);
    let (h, l, e) = super::midpoint_power(mh, n.unsigned_abs());
    let scale = e + i64::from(n.unsigned_abs()) * em;
    if !(-1000..1000).contains(&scale) {
        return None;
    }
    let x = if n > 0 {
        (h + l) * pow2(scale)
    } else {
        (1.0 / (h + l)) * pow2(-scale)
    };
    x.is_normal().then_some(x)
}

/// (b) Constructed hard cases: x = the double nearest m^n for random midpoints m, so the
/// root lies within about 2^-53/|n| of its value of m. rootn must give the side of m the
/// exact decision gives; the midpoint phase, when it decides, must agree with it.
#[test]
fn hard_cases_near_midpoints() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let ns = [
        3,
        4,
        5,
        7,
        10,
        17,
        100,
        1000,
        -3,
        -4,
        -7,
        -64,
        -1000,
        123_456,
        -123_456,
        i32::MAX,
        i32::MIN + 1,
        i32::MIN,
        1 << 30,
    ];
    let (mut cases, mut middle_decided, mut fast_decided) = (0, 0, 0);
    for &n in &ns {
        let big_n = f64::from(n.unsigned_abs());
        let per_n = if n.unsigned_abs() >= 1000 { 6 } else { 25 };
        let mut made = 0;
        while made < per_n {
            // lo with log2(lo) spread over the range where lo^n stays normal.
            let t = (next(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
            let log2_lo = (t * 2.0 - 1.0) * 1000.0 / big_n;
            let lo = log2_lo.exp2();
            let lo = f64::from_bits(lo.to_bits() ^ (next(&mut state) & 0xff));
            let mid = Midpoint::new(1.0, 3, lo);
            let x = if n.unsigned_abs() <= 1000 {
                nearest_power_of_midpoint(mid.big_m, mid.p, n)
            } else {
                near_power_of_midpoint(lo, n)
            };
            let Some(x) = x else { continue };
            made += 1;
            cases += 1;
            let above = if n.unsigned_abs() <= 1000 {
                exact_above_checked(x, n, lo)
            } else {
                exact_above(x, n, lo)
            };
            let want = if above { lo.next_up() } else { lo };
            assert_eq!(
                rootn(x, n),
                want,
                "rootn({x:e}, {n}), midpoint above {lo:e}"
            );
            if n % 2 != 0 {
                assert_eq!(rootn(-x, n), -want, "rootn({:e}, {n})", -x);
            }
            match deciding_phase(x, n) {
                Phase::Fast => fast_decided += 1,
                Phase::Middle => {
                    middle_decided += 1;
                    assert_eq!(middle_phase(x, n, lo), Some(above), "midpoint phase");
                }
                Phase::Exact | Phase::Shortcut => {}
            }
        }
    }
    // Midpoints next to powers of two: m = 2^k·(1 + j·2^-53) or 2^k·(1 - j·2^-54), j odd,
    // where m^N = 2^kN·(1 ± Nj·2^-53 + C(N,2)·j²·2^-106 ± ...): when the first-order part is a
    // double, the nearest double to m^N differs from it by about C(N,2)·j²·2^-106, and the
    // root from m by about (N - 1)/2·j²·2^-106 of its value: below the midpoint phase's
    // reach (2^-100) for small N·j², so these go to the exact phase.
    let mut exact_decided = 0;
    for n in [
        3, 4, 5, 6, 7, 8, 10, 16, 17, 64, 100, 1000, -3, -4, -5, -7, -10, -64, -1000,
    ] {
        for j in [1u64, 3, 5, 7, 9, 11, 33, 101] {
            for k in [-300i64, -7, 0, 1, 5, 200] {
                if (k * i64::from(n)).abs() > 1000 {
                    continue;
                }
                for above_power in [true, false] {
                    let lo = if above_power {
                        pow2(k) * (1.0 + (j - 1) as f64 * pow2(-53))
                    } else {
                        pow2(k) * (1.0 - (j + 1) as f64 * pow2(-54))
                    };
                    let mid = Midpoint::new(1.0, 3, lo);
                    let Some(x) = nearest_power_of_midpoint(mid.big_m, mid.p, n) else {
                        continue;
                    };
                    cases += 1;
                    let above = exact_above_checked(x, n, lo);
                    let want = if above { lo.next_up() } else { lo };
                    assert_eq!(
                        rootn(x, n),
                        want,
                        "rootn({x:e}, {n}), midpoint above {lo:e}"
                    );
                    match deciding_phase(x, n) {
                        Phase::Fast => fast_decided += 1,
                        Phase::Middle => {
                            middle_decided += 1;
                            assert_eq!(middle_phase(x, n, lo), Some(above), "midpoint phase");
                        }
                        Phase::Exact => exact_decided += 1,
                        Phase::Shortcut => {}
                    }
                }
            }
        }
    }
    eprintln!(
        "hard cases: {cases}; decided by the fast phase {fast_decided}, the midpoint phase \
         {middle_decided}, the exact phase {exact_decided}"
    );
    // Each later phase must have been exercised through rootn itself.
    assert!(
        middle_decided > 20,
        "midpoint phase: {middle_decided} of {cases}"
    );
    assert!(
        exact_decided > 20,
        "exact phase: {exact_decided} of {cases}"
    );
}

/// (b) The exact phase itself on inputs the midpoint phase cannot decide: for a midpoint m
/// and N = 2^31 - 1, x = the double nearest m^N computed from a power accurate enough; the
/// log method's answer is checked against a second evaluation at a precision twice as high.
#[test]
fn exact_phase_at_higher_precision_agrees() {
    let mut state = 0x0123_4567_89ab_cdefu64;
    for n in [i32::MAX, -i32::MAX, 1 << 20, -(1 << 20), 99_999] {
        for _ in 0..8 {
            let lo = f64::from_bits(1.0f64.to_bits() + (next(&mut state) & 0x3ff));
            let Some(x) = near_power_of_midpoint(lo, n) else {
                continue;
            };
            let mid = Midpoint::new(x, n, lo);
            let low = exact::by_logarithms_at(&mid, 256);
            let high = exact::by_logarithms_at(&mid, 1024).expect("decided at 1024 bits");
            if let Some(low) = low {
                assert_eq!(low, high, "x = {x:e}, n = {n}");
            }
            assert_eq!(exact::by_logarithms(&mid), high);
        }
    }
}

/// (c) Random x (all exponents, one in eight subnormal) and n: rootn(x, n) is correctly
/// rounded by the exact decision.
#[test]
fn random_inputs_against_exact_decision() {
    let mut state = 0x5151_5151_2718_2818u64;
    let mut checked = 0;
    while checked < 3000 {
        let bits = next(&mut state) >> 1;
        // One in eight subnormal (uniform bits reach them once in 2048).
        let x = f64::from_bits(if checked % 8 == 0 { bits >> 12 } else { bits });
        if !x.is_finite() || x == 0.0 {
            continue;
        }
        let r = next(&mut state);
        let n = match r % 4 {
            0 => (r >> 8) as i32 % 20,
            1 => (r >> 8) as i32 % 1000,
            2 => (r >> 8) as i32,
            _ => [-3, 4, 5, 7, -7, 10, i32::MAX, i32::MIN][(r >> 8) as usize % 8],
        };
        if n.unsigned_abs() < 3 || n == 3 {
            continue;
        }
        let y = rootn(x, n);
        assert_correctly_rounded(x, n, y, exact_above);
        checked += 1;
    }
}

/// The shortcuts are correctly rounded operations; here against the general path's exact
/// decision for n = 3 (cbrt) and spot values of the others.
#[test]
fn shortcuts() {
    let mut state = 0xdead_beef_cafe_f00du64;
    for _ in 0..300 {
        let x = f64::from_bits(next(&mut state) >> 1);
        if !x.is_finite() || x == 0.0 {
            continue;
        }
        assert_correctly_rounded(x, 3, rootn(x, 3), exact_above);
        assert_eq!(rootn(x, 1), x);
        assert_eq!(rootn(x, -1), 1.0 / x);
        assert_eq!(rootn(x, 2), x.sqrt());
    }
    assert_eq!(rootn(4.0, -2), 0.5);
    assert_eq!(rootn(2.0, -2), std::f64::consts::FRAC_1_SQRT_2);
    assert_eq!(rootn(f64::from_bits(1), -1), f64::INFINITY);
    assert_eq!(rootn(f64::MAX, -1), 1.0 / f64::MAX);
}

/// (d) Special values and signs (OpenCL 6.7 / C99 rootn).
#[test]
fn specials_and_signs() {
    for n in [-7, -4, -3, -2, -1, 1, 2, 3, 4, 5, i32::MAX, i32::MIN] {
        assert!(rootn(f64::NAN, n).is_nan());
        let odd = n % 2 != 0;
        let (pos0, neg0) = if n < 0 {
            (
                f64::INFINITY,
                if odd {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                },
            )
        } else {
            (0.0, if odd { -0.0 } else { 0.0 })
        };
        assert_eq!(rootn(0.0, n).to_bits(), pos0.to_bits(), "rootn(+0, {n})");
        assert_eq!(rootn(-0.0, n).to_bits(), neg0.to_bits(), "rootn(-0, {n})");
        let inf = if n < 0 { 0.0 } else { f64::INFINITY };
        assert_eq!(rootn(f64::INFINITY, n).to_bits(), inf.to_bits());
        if odd {
            assert_eq!(rootn(f64::NEG_INFINITY, n).to_bits(), (-inf).to_bits());
            assert_eq!(rootn(-8.0, n), -rootn(8.0, n));
            assert!(rootn(-8.0, n) < 0.0);
        } else {
            assert!(rootn(-8.0, n).is_nan(), "rootn(-8, {n})");
            assert!(rootn(f64::NEG_INFINITY, n).is_nan());
        }
        assert_eq!(rootn(1.0, n), 1.0);
    }
    for x in [0.0, 1.0, -1.0, 8.0, f64::INFINITY, f64::NAN] {
        assert!(rootn(x, 0).is_nan(), "rootn({x}, 0)");
    }
    assert_eq!(rootn(-1.0, -3), -1.0);
    assert_eq!(rootn(-27.0, 3), -3.0);
    assert_eq!(rootn(-27.0, -3), -1.0 / 3.0);
    // Subnormal x and extreme n.
    assert_eq!(rootn(f64::from_bits(1), 1074), 0.5);
    assert_eq!(rootn(f64::from_bits(1), -1074), 2.0);
    assert_eq!(
        rootn(-f64::from_bits(1), 1075),
        rootn(f64::from_bits(1), 1075).copysign(-1.0)
    );
    let tiny = rootn(f64::from_bits(1), i32::MAX);
    assert!(tiny < 1.0 && tiny > 0.9999996, "{tiny}");
    for n in [i32::MIN, i32::MAX, -i32::MAX, 1 << 30] {
        assert_correctly_rounded(f64::MAX, n, rootn(f64::MAX, n), exact_above);
        assert_correctly_rounded(
            f64::MIN_POSITIVE,
            n,
            rootn(f64::MIN_POSITIVE, n),
            exact_above,
        );
    }
}

/// The worst cases of the previous rootn in the CTS runs (`cts/results/math-*-double.md`,
/// 1.014 and 1.044 ulp), now correctly rounded (values checked with 60-digit decimals).
#[test]
fn previous_worst_cases() {
    assert_eq!(rootn(8.624090125615188e-220, -3), 1.0505794573674542e73);
    assert_eq!(rootn(-9.572243941916687e-261, -3), -4.7097235314729274e86);
}

/// Without FMA instructions (a CPU without them gets the plain copy, whose `mul_add` is libm's
/// correctly rounded `fma`), the same results as the FMA copy this machine runs.
#[test]
fn copy_without_fma_instructions_agrees() {
    let mut state = 0x7777_1234_aaaa_5555u64;
    for _ in 0..5000 {
        let a = f64::from_bits(next(&mut state) >> 1);
        let n = next(&mut state) as i32;
        if !a.is_finite() || a == 0.0 || a == 1.0 || n.unsigned_abs() < 4 {
            continue;
        }
        assert_eq!(
            super::general_body::<false>(a, n).to_bits(),
            super::general(a, n).to_bits(),
            "rootn({a:e}, {n})"
        );
    }
}

/// Many random inputs against the exact decision; in release mode:
/// `cargo test --release -p ferrocl-mathlib many_random -- --ignored`.
#[test]
#[ignore = "a minute in debug mode; run in release"]
fn many_random_inputs_against_exact_decision() {
    let mut state = 0x2468_ace0_1357_9bdfu64;
    let mut checked = 0;
    while checked < 200_000 {
        let x = f64::from_bits(next(&mut state) >> 1);
        let r = next(&mut state);
        let n = match r % 3 {
            0 => (r >> 8) as i32 % 70,
            1 => (r >> 8) as i32,
            _ => (r >> 8) as i32 % 5000,
        };
        if !x.is_finite() || x == 0.0 || n.unsigned_abs() < 3 {
            continue;
        }
        assert_correctly_rounded(x, n, rootn(x, n), exact_above);
        checked += 1;
    }
}
