//! Double-precision rootn(x, n) = x^(1/n), correctly rounded (to nearest, ties to even) for
//! every positive finite double and every int n; `shapes.rs` handles the sign of x and the
//! special values (n = 0, NaN, ±0, ±inf, x < 0 with even n) and calls [`of_positive`].
//!
//! n = 1, -1, 2, -2 and 3 are one correctly rounded operation each (a, 1/a, sqrt, CORE-MATH's
//! rsqrt and cbrt). Every other n (|n| >= 3) goes through three phases (Ziv's strategy):
//!
//! 1. **Fast** ([`fast_phase`]): log(a) as a double-double (CORE-MATH pow's `log_1`), times
//!    1/n as a double-double, exp of that (`exp_1`): a double-double eh + el with
//!    |(eh + el)/root - 1| < 2^-63.32 (derivation at [`ERR`]). If both ends of that interval
//!    round to the same double, that double is RN(root). This fails for about 0.1 % of the
//!    inputs (the interval is 2^-62 of the value wide, a midpoint between doubles is every
//!    2^-52 or 2^-53 of it): measured 0.137 % of 3.8 million random inputs (x over all
//!    exponents, |n| from 3 to 2^31; the `rootn_bench` example).
//! 2. **Midpoint power** ([`middle_phase`]): the root is then within 2^-63 of its value of a
//!    midpoint m between two doubles, and RN(root) is the double below m or the one above,
//!    depending on the sign of m^N - a (n > 0) or of m^N·a - 1 (n < 0), N = |n|. m^N is
//!    computed as a double-double with a separate exponent by binary powering, with a bound
//!    on its error of N·2^-102 relative; when the difference exceeds that bound, its sign is
//!    certain. This fails only if the root lies within about 2^-100 of its value of m.
//! 3. **Exact** ([`exact`]): the sign of that difference with big integers, which always
//!    decides because the difference is never zero: m has a 54-bit odd significand M, so for
//!    N >= 2, m^N has more than 53 significant bits and is no double, and m^-N is not dyadic;
//!    the root of a double is therefore never a midpoint.
//!
//! Ties cannot occur (the root is never a midpoint), so the two rounding results are the
//! only candidates, and the result is exact whenever the root is a double (the fast phase's
//! interval then contains no midpoint). |n| >= 3 puts the root in [2^-358, 2^358]: no
//! overflow, underflow or subnormal result can occur outside the shortcuts (only 1/a can
//! overflow, for n = -1).
//!
//! Speed: phase 1 is CORE-MATH pow's first phase with a double-double product by 1/n in place
//! of the product by y; it runs in a copy compiled with FMA when the CPU has it (one check of
//! a cached CPUID bit per call), since without the FMA instruction each `mul_add` is a libm
//! call. Phases 2 and 3 are out of line.

mod exact;
mod pow_phase1;
mod pow_tables;
#[cfg(test)]
mod tests;

use pow_phase1::{a_mul, d_mul, exp_1, fast_two_sum, log_1};

/// The bound on |(eh + el)/root - 1| that phase 1's rounding test uses.
///
/// Derivation, for a = |x| and |n| >= 3 (n = 3 never gets here, but -3 does):
///
/// * `log_1`: |lh + ll - ln a| <= elog·|ln a|, elog = 2^-73.527 when a is outside
///   (1/√2, √2), 2^-67.0544 inside; |ll| <= 2^-23.89·|lh| (Lemma 4 of the CORE-MATH pow paper).
/// * 1/n = ih + il + ε with ih = RN(1/n), il = RN((1 - n·ih)/n) (1 - n·ih is exact: the
///   remainder of a correctly rounded division), |ε| <= 2^-106·|1/n|.
/// * `d_mul(lh, ll, ih, il)`: ignoring ll·il (<= 2^-76.89·|P|, P = lh·ih) and rounding
///   ll·ih + s and lh·il + t once each (<= 2^-53 of terms <= 2^-23.88·|P|): error
///   <= 3·2^-76.89·|P| + 2^-106·|P| < 2^-75.2·|(lh + ll)/n|; the fast_two_sum after it is exact
///   and makes |rl| <= 2^-53·|rh|, as `exp_1` requires (|rl/rh| < 2^-23.8899).
/// * So |rh + rl - ln(a)/n| <= (elog + 2^-75.2·(1 + elog))·|ln a|/|n|: with |ln a| <= 744.45
///   (a >= 2^-1074) and |n| >= 3 at most (2^-73.527 + 2^-75.2)·248.15 < 2^-65.17 outside
///   (1/√2, √2), and (2^-67.0544 + 2^-75.2)·0.3466/3 < 2^-70.1 inside. |rh| <= 249 is within
///   `exp_1`'s domain.
/// * `exp_1`: |(eh + el)/exp(rh + rl) - 1| < 2^-63.78597 (Lemma 7), |el| <= 2^-49.29·eh.
/// * Together: |(eh + el)/root - 1| <= (1 + 2^-63.786)·exp(2^-65.17) - 1 < 2^-63.32.
///
/// The rounding test is CORE-MATH's: res_min = eh + RN(el - ERR·eh), res_max =
/// eh + RN(el + ERR·eh). With ERR = 2^-63, ERR·eh exceeds the error 2^-63.31·eh by more than
/// the rounding of el ± ERR·eh (<= 2^-102·eh), so eh + RN(el + ERR·eh) >= root and
/// res_max >= RN(root) by monotonicity of rounding; likewise res_min <= RN(root). When they
/// are equal, they are RN(root).
const ERR: f64 = f64::from_bits(0x3c00_0000_0000_0000); // 2^-63

/// rootn of a positive finite double a, for n != 0 (the sign of x is the caller's).
#[inline]
pub(crate) fn of_positive(a: f64, n: i32) -> f64 {
    match n {
        1 => a,
        -1 => 1.0 / a,
        2 => a.sqrt(),
        -2 => crate::core_math_dispatch::rsqrt(a),
        3 => crate::core_math_dispatch::cbrt(a),
        _ => general(a, n),
    }
}

/// Which phase decides rootn(a, n) (diagnostics: the benchmark example counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// One correctly rounded operation (n = 1, -1, 2, -2, 3), or a = 1.
    Shortcut,
    /// The fast phase's rounding test.
    Fast,
    /// The midpoint power in double-double.
    Middle,
    /// The big-integer decision.
    Exact,
}

/// The phase that decides rootn(a, n) for a positive finite double a and n != 0.
pub fn deciding_phase(a: f64, n: i32) -> Phase {
    if matches!(n, 1 | -1 | 2 | -2 | 3) || a == 1.0 {
        return Phase::Shortcut;
    }
    let (eh, el) = fast_phase(a, n);
    if rounding_test(eh, el).is_some() {
        return Phase::Fast;
    }
    let (lo, _) = candidates(eh, el);
    match middle_phase(a, n, lo) {
        Some(_) => Phase::Middle,
        None => Phase::Exact,
    }
}

/// |n| >= 3 (and n != 3): the three phases.
#[inline]
fn general(a: f64, n: i32) -> f64 {
    if a == 1.0 {
        return 1.0;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: general_fma needs only the FMA feature, which this CPU has.
        return unsafe { general_fma(a, n) };
    }
    general_body::<false>(a, n)
}

/// [`general_body`] compiled with FMA instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn general_fma(a: f64, n: i32) -> f64 {
    general_body::<true>(a, n)
}

/// Phase 1 inline, phases 2 and 3 out of line; `FMA`: this copy is [`general_fma`]'s.
#[inline(always)]
fn general_body<const FMA: bool>(a: f64, n: i32) -> f64 {
    let (eh, el) = fast_phase(a, n);
    match rounding_test(eh, el) {
        Some(r) => r,
        #[cfg(target_arch = "x86_64")]
        // SAFETY: FMA is true only inlined into general_fma, which runs only on CPUs with FMA.
        None if FMA => unsafe { undecided_fma(a, n, eh, el) },
        None => undecided(a, n, eh, el),
    }
}

/// [`undecided`] compiled with FMA instructions (the midpoint phase is mostly FMAs).
#[cfg(target_arch = "x86_64")]
#[cold]
#[inline(never)]
#[target_feature(enable = "fma")]
fn undecided_fma(a: f64, n: i32, eh: f64, el: f64) -> f64 {
    undecided_body(a, n, eh, el)
}

/// Phase 1: eh + el with |(eh + el)/a^(1/n) - 1| < 2^-63.32 (see [`ERR`]), for a positive
/// finite a != 1 and |n| >= 3.
#[inline(always)]
fn fast_phase(a: f64, n: i32) -> (f64, f64) {
    let nf = f64::from(n);
    // Independent of a: overlaps with log_1.
    let ih = 1.0 / nf;
    let il = (-ih).mul_add(nf, 1.0) / nf;
    let (lh, ll) = log_1(a);
    let (qh, ql) = d_mul(lh, ll, ih, il);
    let (rh, rl) = fast_two_sum(qh, ql);
    exp_1(rh, rl)
}

/// RN(root) when both ends of the error interval round alike (see [`ERR`]).
#[inline(always)]
fn rounding_test(eh: f64, el: f64) -> Option<f64> {
    let res_min = eh + ERR.mul_add(-eh, el);
    let res_max = eh + ERR.mul_add(eh, el);
    (res_min == res_max).then_some(res_max)
}

/// The two adjacent doubles lo < hi between which RN(root) lies when the rounding test
/// failed: with y + r = eh + el exactly (y = RN(eh + el)), the root is within 2^-63.3 of its
/// value of y + r, |r| <= ulp(y)/2, so it lies between the midpoint below y and the one above
/// succ(y) if r >= 0 (between the one below pred(y) and the one above y if r < 0): RN(root)
/// is y or its neighbour on r's side.
#[inline(always)]
fn candidates(eh: f64, el: f64) -> (f64, f64) {
    let (y, r) = fast_two_sum(eh, el);
    if r >= 0.0 {
        (y, y.next_up())
    } else {
        (y.next_down(), y)
    }
}

/// Phases 2 and 3, out of line: RN(root) is lo or next_up(lo), whichever side of their
/// midpoint the root is on.
#[cold]
#[inline(never)]
fn undecided(a: f64, n: i32, eh: f64, el: f64) -> f64 {
    undecided_body(a, n, eh, el)
}

#[inline(always)]
fn undecided_body(a: f64, n: i32, eh: f64, el: f64) -> f64 {
    let (lo, hi) = candidates(eh, el);
    let above = middle_phase(a, n, lo).unwrap_or_else(|| exact::root_above_midpoint(a, n, lo));
    if above {
        hi
    } else {
        lo
    }
}

/// 2^k for -1074 <= k <= 1023.
#[inline(always)]
fn pow2(k: i64) -> f64 {
    debug_assert!((-1074..=1023).contains(&k));
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (k + 1074))
    }
}

/// (ξ, e) with x = ξ·2^e, 1 <= ξ < 2, for a positive finite double (subnormals included).
#[inline(always)]
fn split_exponent(x: f64) -> (f64, i64) {
    let (y, adjust) = if x < f64::MIN_POSITIVE {
        (x * pow2(64), 64)
    } else {
        (x, 0)
    };
    let bits = y.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023 - adjust;
    (f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52)), e)
}

/// Double-double product, renormalised: relative error <= 6·2^-106·(1 + 2^-50) < 2^-103.4
/// for inputs with |al| <= 2^-53·|ah|, |bl| <= 2^-53·|bh| (P = ah·bh: ah·bh is exact, the
/// two cross terms are rounded once each at magnitudes <= 2^-52·|P| and 3·2^-53·|P|, al·bl <=
/// 2^-106·|P| is dropped), and the result satisfies the same |lo| <= 2^-53·|hi|.
#[inline(always)]
fn dd_mul(ah: f64, al: f64, bh: f64, bl: f64) -> (f64, f64) {
    let (hi, lo) = d_mul(ah, al, bh, bl);
    fast_two_sum(hi, lo)
}

/// Double-double square: one rounding of 2·ah·al + s (<= 3·2^-53·|P|), al² dropped:
/// relative error < 4·2^-106·(1 + 2^-50) < 2^-103.4.
#[inline(always)]
fn dd_square(ah: f64, al: f64) -> (f64, f64) {
    let (hi, s) = a_mul(ah, ah);
    fast_two_sum(hi, (ah + ah).mul_add(al, s))
}

/// μ^N as (h, l, e) with μ^N·exp(θ) = (h + l)·2^e, |θ| <= (2N - 1)·2^-103.4, 1 - 2^-52 <= h
/// <= 2, for μ = mh + 2^-53 with 1 <= mh < 2 (the significand of a midpoint) and N >= 1.
///
/// Error: left-to-right binary powering; if the current value μ^k carries a logarithmic
/// error θ_k, squaring gives 2θ_k plus one rounding (|ln(1 + δ)| <= 2^-103.4) and
/// multiplying by the exact μ gives θ_k plus one rounding, so by induction
/// |θ_k| <= (2k - 1)·2^-103.4 (true for k = 1, kept by k -> 2k and k -> k + 1).
#[inline(always)]
fn midpoint_power(mh: f64, big_n: u32) -> (f64, f64, i64) {
    let ml = f64::from_bits(0x3ca0_0000_0000_0000); // 2^-53
    let (mut h, mut l, mut e) = (mh, ml, 0i64);
    for bit in (0..31 - big_n.leading_zeros()).rev() {
        (h, l) = dd_square(h, l);
        e *= 2;
        if h >= 2.0 {
            (h, l, e) = (h * 0.5, l * 0.5, e + 1);
        }
        if (big_n >> bit) & 1 == 1 {
            (h, l) = dd_mul(h, l, mh, ml);
            if h >= 2.0 {
                (h, l, e) = (h * 0.5, l * 0.5, e + 1);
            }
        }
    }
    (h, l, e)
}

/// Phase 2: whether the root is above the midpoint m of lo and next_up(lo), or None when
/// m^N (computed with relative error about N·2^-102) is too close to a (n > 0) or m^N·a to
/// 1 (n < 0) to tell.
#[inline(always)]
fn middle_phase(a: f64, n: i32, lo: f64) -> Option<bool> {
    let big_n = n.unsigned_abs();
    // m = μ·2^em with μ = mh + 2^-53: lo = mh·2^em, next_up(lo) - lo = 2^(em-52).
    let (mh, em) = split_exponent(lo);
    let (h, l, e) = midpoint_power(mh, big_n);
    let (xi, ex) = split_exponent(a);
    let scale = e + i64::from(big_n) * em;
    // Both multiplications bring at most 2N·2^-103.4 < N·2^-102 of logarithmic error: err.
    let err = f64::from(big_n) * f64::from_bits(0x3990_0000_0000_0000);
    // The root is above m exactly when V < t, V = the power (times a) and t its target.
    let (vh, vl, d, t) = if n > 0 {
        // a^(1/N) > m  <=>  a > m^N = (h + l)·2^scale.
        (h, l, scale - ex, xi)
    } else {
        // a^(-1/N) > m  <=>  m^N·a < 1; (h + l)·ξ with one more rounding.
        let (ph, pe) = a_mul(h, xi);
        (ph, l.mul_add(xi, pe), scale + ex, 1.0)
    };
    less_than(vh, vl, d, t, err)
}

/// Whether V = exp(-θ)·(vh + vl)·2^d is below t, with |θ| <= err (tiny), 1 - 2^-51 <= vh <= 4,
/// |vl| <= 2^-51·vh and 1 <= t < 2; None when |V - t| may be within the error.
#[inline(always)]
fn less_than(vh: f64, vl: f64, d: i64, t: f64, err: f64) -> Option<bool> {
    // Far exponents decide alone: (vh + vl)·2^d >= 7.9 > t, or <= 0.51 < t.
    if d >= 3 {
        return Some(false);
    }
    if d <= -3 {
        return Some(true);
    }
    let s = pow2(d);
    // vh·s - t is exact when t/2 <= vh·s <= 2t (Sterbenz); otherwise |vh·s - t| >= t/2
    // dwarfs vl·s. Either way diff has the sign of (vh + vl)·s - t and its value within a
    // factor 1 ± 2^-51.
    let diff = (vh * s - t) + vl * s;
    // exp(-θ)·W - t = (W - t) + W·(exp(-θ) - 1), |exp(-θ) - 1| <= 1.01·err: the sign of
    // W - t is V - t's when |W - t| > 1.02·err·t (then also W < 1.01·t); 4·err is ample.
    if diff.abs() > 4.0 * err * t {
        Some(diff < 0.0)
    } else {
        None
    }
}
