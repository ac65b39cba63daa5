//! The first-phase logarithm and exponential of CORE-MATH's correctly rounded binary64 `pow`
//! (`src/binary64/pow/pow.c`: `log_1`, `exp_1` and their helpers `p_1`, `q_1`), ported to
//! Rust for [`super`]'s fast phase, with the error bounds proved in the reference the C code
//! follows: T. Hubrecht, C.-P. Jeannerod, P. Zimmermann, "Towards a correctly-rounded and fast
//! power function in binary64 arithmetic", ARITH 2023, full proofs in
//! <https://inria.hal.science/hal-04159652> (Lemmas 2, 4, 6 and 7 are quoted where used). The
//! port keeps the C code's operations and their order one for one (`__builtin_fma(a, b, c)`
//! is `a.mul_add(b, c)`), so the bounds carry over; only the round-to-nearest paths are kept
//! and `exp_1`'s overflow/underflow filters are dropped, since rootn's arguments stay in
//! [-249, 249] (see [`exp_1`]).
//!
//! Every function is `#[inline(always)]`: [`super`] instantiates the fast phase in a function
//! compiled with the FMA target feature, and these bodies must be inlined into it to get the
//! FMA instruction instead of a call to libm's `fma`.
//!
//! Copyright (c) 2022-2025 CERN and Inria. Authors: Tom Hubrecht and Paul Zimmermann.
//! This file is derived from the CORE-MATH project (https://core-math.gitlabpages.inria.fr/).
//!
//! Permission is hereby granted, free of charge, to any person obtaining a copy of this
//! software and associated documentation files (the "Software"), to deal in the Software
//! without restriction, including without limitation the rights to use, copy, modify, merge,
//! publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
//! to whom the Software is furnished to do so, subject to the following conditions:
//!
//! The above copyright notice and this permission notice shall be included in all copies or
//! substantial portions of the Software.
//!
//! THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
//! INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
//! PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
//! FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
//! OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
//! DEALINGS IN THE SOFTWARE.

use super::pow_tables::{INVERSE, LOG_INV, P_1, Q_1, T1, T2};

/// hi + lo = a + b exactly (round to nearest), |lo| <= ulp(hi)/2; needs |a| >= |b| (or a = 0).
#[inline(always)]
pub(super) fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let hi = a + b;
    let e = hi - a;
    (hi, b - e)
}

/// a + (bh + bl) with |a| >= |bh|: fast_two_sum(a, bh), then bl added to the low part.
#[inline(always)]
fn fast_sum(a: f64, bh: f64, bl: f64) -> (f64, f64) {
    let (hi, lo) = fast_two_sum(a, bh);
    (hi, lo + bl)
}

/// hi + lo = a·b exactly (FMA).
#[inline(always)]
pub(super) fn a_mul(a: f64, b: f64) -> (f64, f64) {
    let hi = a * b;
    (hi, a.mul_add(b, -hi))
}

/// (ah + al)·(bh + bl) - al·bl, as CORE-MATH's `d_mul`: ah·bh exactly, the two cross terms
/// with one FMA rounding each.
#[inline(always)]
pub(super) fn d_mul(ah: f64, al: f64, bh: f64, bl: f64) -> (f64, f64) {
    let (hi, s) = a_mul(ah, bh);
    let t = al.mul_add(bh, s);
    (hi, ah.mul_add(bl, t))
}

#[inline(always)]
fn c(bits: u64) -> f64 {
    f64::from_bits(bits)
}

/// `p_1`: for |z| < 0.0040283203125, |(z + ph + pl)/log(1+z) - 1| < 2^-67.441 (Lemma 2).
#[inline(always)]
fn p_1(z: f64) -> (f64, f64) {
    let (wh, wl) = a_mul(z, z);
    let t = c(P_1[5]).mul_add(z, c(P_1[4]));
    let u = c(P_1[3]).mul_add(z, c(P_1[2]));
    let v = c(P_1[1]).mul_add(z, c(P_1[0]));
    let u = t.mul_add(wh, u);
    let v = u.mul_add(wh, v);
    let u = v * wh;
    (-0.5 * wh, u.mul_add(z, -0.5 * wl))
}

/// `q_1`: for |z| < 2^-12.905, |(qh + ql)/exp(z) - 1| < 2^-64.902632 and |ql| <= 2^-51.999
/// (Lemma 6).
#[inline(always)]
fn q_1(z: f64) -> (f64, f64) {
    let q = c(Q_1[4]).mul_add(z, c(Q_1[3]));
    let q = q.mul_add(z, c(Q_1[2]));
    let h0 = q.mul_add(z, c(Q_1[1]));
    let (h1, l1) = a_mul(z, h0);
    fast_sum(c(Q_1[0]), h1, l1)
}

/// `log_1`: for 2^-1074 <= x <= DBL_MAX, h + l approximates log(x) with (Lemma 4)
///
/// |h + l - log x| <= elog·|log x|, elog = 2^-73.527 outside (1/√2, √2), 2^-67.0544 inside,
///
/// and |l| < 2^-23.89·|h| (when the C code reports cancellation, its final fast_two_sum
/// makes |l| <= ulp(h)/2, which is smaller still).
#[inline(always)]
pub(super) fn log_1(x: f64) -> (f64, f64) {
    const LOG2_H: f64 = f64::from_bits(0x3fe6_2e42_fefa_3800); // 0x1.62e42fefa38p-1
    const LOG2_L: f64 = f64::from_bits(0x3d2e_f357_93c7_6730); // 0x1.ef35793c7673p-45
    let bits = x.to_bits();
    let mut m = bits & (!0u64 >> 12);
    let mut e = ((bits >> 52) & 0x7ff) as i64;
    let t_bits;
    if e != 0 {
        t_bits = m | (0x3ff << 52);
        m += 1 << 52;
        e -= 0x3ff;
    } else {
        // Subnormal: shift the leading one to bit 52.
        let k = m.leading_zeros() - 11;
        e = -0x3fe - i64::from(k);
        m <<= k;
        t_bits = m | (0x3ff << 52);
    }
    // x = 2^e·t with 1 <= t < 2 and 2^52 <= m < 2^53; above √2, halve t and raise e.
    let halve = usize::from(m >= 0x0016_a09e_667f_3bcd);
    e += halve as i64;
    let ef = e as f64;
    let i = (m >> [44, 45][halve]) as usize;
    let t = f64::from_bits(t_bits) * [1.0, 0.5][halve];
    let r = c(INVERSE[i - 181]);
    let l1 = c(LOG_INV[i - 181][0]);
    let l2 = c(LOG_INV[i - 181][1]);
    let z = r.mul_add(t, -1.0);
    let th = ef.mul_add(LOG2_H, l1);
    let tl = ef.mul_add(LOG2_L, l2);
    let (h, l) = fast_sum(th, z, tl);
    let (ph, pl) = p_1(z);
    let (h, l) = fast_sum(h, ph, l + pl);
    if e == 0 && l.abs() > h.abs() * f64::from_bits(0x3e70_0000_0000_0000) {
        // 2^-24: cancellation near x = 1; renormalise.
        return fast_two_sum(h, l);
    }
    (h, l)
}

/// `exp_1` (with s = 1): for RHO1 <= rh <= RHO2 (about -656 and 709.78), |rl/rh| < 2^-23.8899
/// and |rl| < 2^-14.4187, eh + el approximates exp(rh + rl) with (Lemma 7)
///
/// |(eh + el)/exp(rh + rl) - 1| < 2^-63.78597, and |el/eh| <= 2^-49.2999.
///
/// The C function's filters for rh outside [RHO1, RHO2] (overflow, underflow, NaN) are left
/// out: the caller passes |rh| <= 249.
#[inline(always)]
pub(super) fn exp_1(rh: f64, rl: f64) -> (f64, f64) {
    const INVLOG2: f64 = f64::from_bits(0x40b7_1547_652b_82fe); // 0x1.71547652b82fep+12
    const LOG2H: f64 = f64::from_bits(0x3f26_2e42_fefa_39ef); // 0x1.62e42fefa39efp-13
    const LOG2L: f64 = f64::from_bits(0x3bba_bc9e_3b39_803f); // 0x1.abc9e3b39803fp-68
    let k = (rh * INVLOG2).round_ties_even();
    let zh = LOG2H.mul_add(-k, rh);
    let zl = LOG2L.mul_add(-k, rl);
    let kk = k as i64;
    let big_m = (kk >> 12) + 0x3ff;
    let i2 = ((kk >> 6) & 0x3f) as usize;
    let i1 = (kk & 0x3f) as usize;
    let (eh, el) = d_mul(c(T2[i1][0]), c(T2[i1][1]), c(T1[i2][0]), c(T1[i2][1]));
    let (qh, ql) = q_1(zh + zl);
    let (eh, el) = d_mul(eh, el, qh, ql);
    let scale = f64::from_bits((big_m as u64) << 52);
    (eh * scale, el * scale)
}

#[cfg(test)]
mod tests {
    /// The constants decoded from the C file's hexadecimal literals are the values they name.
    #[test]
    fn constants_are_what_they_approximate() {
        let two = |x: f64| x.exp2();
        for (i, &[h, l]) in super::T1.iter().enumerate() {
            let want = two(i as f64 / 64.0);
            assert!(
                (f64::from_bits(h) - want).abs() <= want * 1.2e-16,
                "T1[{i}]"
            );
            assert!(
                f64::from_bits(l).abs() <= f64::from_bits(h) * 1.2e-16,
                "T1[{i}] low"
            );
        }
        for (i, &[h, _]) in super::T2.iter().enumerate() {
            let want = two(i as f64 / 4096.0);
            assert!(
                (f64::from_bits(h) - want).abs() <= want * 1.2e-16,
                "T2[{i}]"
            );
        }
        for (i, (&r, &[h, _])) in super::INVERSE.iter().zip(super::LOG_INV.iter()).enumerate() {
            let r = f64::from_bits(r);
            assert!((-r.ln() - f64::from_bits(h)).abs() < 1e-12, "LOG_INV[{i}]");
        }
        assert_eq!(
            f64::from_bits(super::Q_1[1]),
            1.0,
            "exp's polynomial starts 1 + z"
        );
        assert_eq!(super::c(0x3fe6_2e42_fefa_3800), 0.693_147_180_559_890_3);
    }

    /// log_1 and exp_1 agree with the correctly rounded log and exp to within their bounds.
    #[test]
    fn log_and_exp_within_their_bounds() {
        let mut bits = 0x3ff0_1234_5678_9abcu64;
        for _ in 0..20_000 {
            bits = bits
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let x = f64::from_bits(bits >> 1);
            if !x.is_finite() || x == 0.0 {
                continue;
            }
            let (h, l) = super::log_1(x);
            let want = crate::core_math_dispatch::log(x);
            assert!(
                (h + l - want).abs() <= want.abs() * 2.3e-16,
                "log_1({x:e}) = {h:e} + {l:e}, log = {want:e}"
            );
            let r = want / 7.0;
            let (eh, el) = super::exp_1(r, 0.0);
            let e = crate::core_math_dispatch::exp(r);
            assert!((eh + el - e).abs() <= e * 2.3e-16, "exp_1({r:e})");
        }
    }
}
