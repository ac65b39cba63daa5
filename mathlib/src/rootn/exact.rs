//! The exact last resort of [`super`]: on which side of a midpoint m between two adjacent
//! doubles the true n-th root of a double lies, decided with big integers, never with
//! rounding. It runs only when both faster phases of rootn could not decide: when the root
//! lies within about 2^-100 of its value of the midpoint, which happens to about 2^-37 of the
//! inputs that fail the fast phase's rounding test (those have the root within 2^-62 of m),
//! itself 0.14 % of all inputs: about 2^-47 of the calls, none in the 3.8 million random
//! inputs of the `rootn_bench` example. So its speed does not matter; what matters is that
//! its answer is certain.
//!
//! Notation: m = M·2^p with M odd, 2^53 < M < 2^54 (m is the midpoint of two doubles of the
//! root's range [2^-358, 2^358] for |n| >= 3); a = |x| = A·2^q with A a positive integer; N = |n| >= 3.
//! The root a^(1/n) is above m exactly when
//!
//! * n > 0: m^N < a, i.e. S = N·ln m - ln a < 0;
//! * n < 0: m^N·a < 1, i.e. S = N·ln m + ln a < 0.
//!
//! S is never zero: M^N is odd and greater than 2^53, so m^N is not a double (n > 0), and
//! m^-N = 2^(-pN)/M^N is not even a dyadic rational (n < 0). Two ways to find its sign:
//!
//! * [`by_powers`] (used for N <= [`POWERS_UP_TO`]): compare M^N·2^(pN) with A·2^q, or
//!   M^N·A·2^(pN+q) with 1, as integers — at most 54·64 bits.
//! * [`by_logarithms`] (any N, up to 2^31): S = N·ln α_M ± ln α_A + K·ln 2 with α_M = M/2^53,
//!   α_A = A/2^k_A in [1, 2) and K an integer, each logarithm computed in fixed point with F
//!   fractional bits and a proven error bound ([`ln_fixed`]); when |S̃| exceeds the bound on
//!   the error of the computed S̃, S has S̃'s sign, else F doubles. This terminates: S ≠ 0 and
//!   the error bound shrinks like F·2^-F.

use std::cmp::Ordering;

/// The exponent limit of the exact integer comparison.
const POWERS_UP_TO: u32 = 64;

/// Whether the n-th root of a (a positive finite double, |n| >= 3) is above the midpoint of
/// the adjacent doubles `lo` < next_up(lo) (lo positive and normal).
pub(super) fn root_above_midpoint(a: f64, n: i32, lo: f64) -> bool {
    let mid = Midpoint::new(a, n, lo);
    if mid.big_n <= POWERS_UP_TO {
        by_powers(&mid)
    } else {
        by_logarithms(&mid)
    }
}

/// The integers of the comparison: m = M·2^p, a = A·2^q, N = |n|.
#[derive(Clone, Copy, Debug)]
pub(super) struct Midpoint {
    pub(super) big_m: u64,
    pub(super) p: i64,
    pub(super) big_a: u64,
    pub(super) q: i64,
    pub(super) big_n: u32,
    pub(super) negative_n: bool,
}

impl Midpoint {
    pub(super) fn new(a: f64, n: i32, lo: f64) -> Self {
        let (lo_m, lo_e) = integer_significand(lo);
        debug_assert!(lo_m >> 52 == 1, "lo must be normal");
        let (big_a, q) = integer_significand(a);
        Midpoint {
            // lo = L·2^e with 2^52 <= L < 2^53; next_up(lo) - lo = 2^e, so m = (2L + 1)·2^(e-1).
            big_m: 2 * lo_m + 1,
            p: lo_e - 1,
            big_a,
            q,
            big_n: n.unsigned_abs(),
            negative_n: n < 0,
        }
    }
}

/// (X, e) with x = X·2^e, X the integer significand of a positive finite double.
fn integer_significand(x: f64) -> (u64, i64) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), biased - 1075)
    }
}

/// The sign of S by integer powers (exact).
pub(super) fn by_powers(mid: &Midpoint) -> bool {
    let mn = Big::from_u64(mid.big_m).pow(mid.big_n);
    let pn = mid.p * i64::from(mid.big_n);
    if mid.negative_n {
        // Above iff M^N·A·2^(pN+q) < 1.
        let prod = mn.mul(&Big::from_u64(mid.big_a));
        let s = pn + mid.q;
        if s >= 0 {
            return false;
        }
        prod.cmp(&Big::from_u64(1).shl(s.unsigned_abs())) == Ordering::Less
    } else {
        // Above iff M^N·2^(pN) < A·2^q, i.e. M^N·2^s < A with s = pN - q.
        let s = pn - mid.q;
        let a = Big::from_u64(mid.big_a);
        let (lhs, rhs) = if s >= 0 {
            (mn.bits() + s.unsigned_abs(), a.bits())
        } else {
            (mn.bits(), a.bits() + s.unsigned_abs())
        };
        if lhs != rhs {
            return lhs < rhs;
        }
        let ord = if s >= 0 {
            mn.shl(s.unsigned_abs()).cmp(&a)
        } else {
            mn.cmp(&a.shl(s.unsigned_abs()))
        };
        ord == Ordering::Less
    }
}

/// The sign of S by fixed-point logarithms at doubling precision (see the module docs).
pub(super) fn by_logarithms(mid: &Midpoint) -> bool {
    let mut frac_bits = 256;
    loop {
        if let Some(above) = by_logarithms_at(mid, frac_bits) {
            return above;
        }
        frac_bits *= 2;
    }
}

/// The sign of S from logarithms with `f` fractional bits, or None when the error bound does
/// not exclude S = 0 at this precision.
pub(super) fn by_logarithms_at(mid: &Midpoint, f: u64) -> Option<bool> {
    // m = α_M·2^(p+53), a = α_A·2^(q+k_A), with α in [1, 2) given as the fraction X/2^k.
    let k_a = 63 - i64::from(mid.big_a.leading_zeros());
    let (ln_m, err_m) = ln_fixed(mid.big_m, 53, f);
    let (ln_a, err_a) = ln_fixed(mid.big_a, k_a as u32, f);
    let (ln_2, err_2) = ln2_fixed(f);
    let big_n = u64::from(mid.big_n);
    let k_m = mid.p + 53;
    let k_x = mid.q + k_a;
    // S = N·ln α_M + σ·ln α_A + K·ln 2, σ = -1 for n > 0 (S = N ln m - ln a), +1 for n < 0.
    let k = if mid.negative_n {
        k_m * big_n as i64 + k_x
    } else {
        k_m * big_n as i64 - k_x
    };
    let mut plus = ln_m.mul_small(big_n);
    let mut minus = Big::zero();
    if mid.negative_n {
        plus = plus.add(&ln_a);
    } else {
        minus = minus.add(&ln_a);
    }
    let k_term = ln_2.mul_small(k.unsigned_abs());
    if k >= 0 {
        plus = plus.add(&k_term);
    } else {
        minus = minus.add(&k_term);
    }
    // Each error bound is in units of 2^-f and scales with its coefficient.
    let err = u128::from(big_n) * u128::from(err_m)
        + u128::from(err_a)
        + u128::from(k.unsigned_abs()) * u128::from(err_2);
    let err = Big::from_u128(err);
    if plus.cmp(&minus.add(&err)) == Ordering::Greater {
        Some(false) // S > 0: the root is below m.
    } else if minus.cmp(&plus.add(&err)) == Ordering::Greater {
        Some(true)
    } else {
        None
    }
}

/// ln(X/2^k) for 2^k <= X < 2^(k+1), in fixed point with `f` fractional bits, and a bound on
/// its error in units of 2^-f: ln α = 2·atanh(s), s = (α - 1)/(α + 1) = (X - 2^k)/(X + 2^k)
/// in [0, 1/3).
pub(super) fn ln_fixed(x: u64, k: u32, f: u64) -> (Big, u64) {
    let one = 1u64 << k;
    debug_assert!(x >= one && (x - one) < one);
    atanh_doubled(x - one, x + one, f)
}

/// ln 2 = 2·atanh(1/3), in fixed point with `f` fractional bits, and its error bound.
pub(super) fn ln2_fixed(f: u64) -> (Big, u64) {
    atanh_doubled(1, 3, f)
}

/// 2·atanh(num/den) for 0 <= num/den <= 1/3 as 2·Σ s^(2j+1)/(2j+1), truncated fixed point
/// with f fractional bits (u = 2^-f), and a bound on the error in units of u.
///
/// Error: s̃ = floor(s/u)·u errs by < u; s2 = floor(s̃²/u)·u by < u + (2/3)·u from s². The
/// powers p_0 = s̃, p_(j+1) = floor(p_j·s2/u)·u have errors e_j with
/// e_(j+1) <= p_j·|s2 - s²| + s²·e_j + u <= (1/3)·(5/3)u + e_j/9 + u, so e_j <= 1.75u for
/// all j (the fixed point of that recursion, e_0 < u). Each term floor(p_j/(2j+1)/u)·u errs
/// by < 1.75u + u. The sum stops at the first p_J = 0, after J terms; the true remainder is
/// Σ_(j>=J) s^(2j+1)/(2j+1) <= (9/8)·s^(2J+1) <= (9/8)·1.75u < 2u. So atanh errs by
/// < 2.75·J·u + 2u and the doubled value by < (5.5·J + 4)·u <= (6J + 4)·u.
fn atanh_doubled(num: u64, den: u64, f: u64) -> (Big, u64) {
    debug_assert!(num.checked_mul(3).is_some_and(|t| t <= den));
    let s = Big::from_u64(num).shl(f).div_small(den);
    let s2 = s.mul(&s).shr(f);
    let mut power = s;
    let mut sum = Big::zero();
    let mut terms = 0u64;
    while !power.is_zero() {
        sum = sum.add(&power.div_small(2 * terms + 1));
        terms += 1;
        power = power.mul(&s2).shr(f);
    }
    (sum.shl(1), 6 * terms + 4)
}

/// A non-negative integer: little-endian 64-bit limbs without high zero limbs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Big(Vec<u64>);

impl Big {
    pub(super) fn zero() -> Self {
        Big(Vec::new())
    }

    pub(super) fn from_u64(v: u64) -> Self {
        Big(vec![v]).normalized()
    }

    pub(super) fn from_u128(v: u128) -> Self {
        Big(vec![v as u64, (v >> 64) as u64]).normalized()
    }

    fn normalized(mut self) -> Self {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    pub(super) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of significant bits (0 for zero).
    pub(super) fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(top) => 64 * self.0.len() as u64 - u64::from(top.leading_zeros()),
        }
    }

    pub(super) fn shl(&self, k: u64) -> Self {
        if self.is_zero() {
            return Big::zero();
        }
        let (limbs, bits) = ((k / 64) as usize, (k % 64) as u32);
        let mut out = vec![0u64; limbs];
        let mut carry = 0u64;
        for &w in &self.0 {
            if bits == 0 {
                out.push(w);
            } else {
                out.push((w << bits) | carry);
                carry = w >> (64 - bits);
            }
        }
        out.push(carry);
        Big(out).normalized()
    }

    pub(super) fn shr(&self, k: u64) -> Self {
        let (limbs, bits) = ((k / 64) as usize, (k % 64) as u32);
        if limbs >= self.0.len() {
            return Big::zero();
        }
        let src = &self.0[limbs..];
        let out = (0..src.len())
            .map(|i| {
                let low = src[i] >> bits;
                match src.get(i + 1) {
                    Some(&high) if bits != 0 => low | (high << (64 - bits)),
                    _ => low,
                }
            })
            .collect();
        Big(out).normalized()
    }

    pub(super) fn add(&self, other: &Big) -> Self {
        let (long, short) = if self.0.len() >= other.0.len() {
            (self, other)
        } else {
            (other, self)
        };
        let mut out = Vec::with_capacity(long.0.len() + 1);
        let mut carry = false;
        for (i, &w) in long.0.iter().enumerate() {
            let (s, c1) = w.overflowing_add(short.0.get(i).copied().unwrap_or(0));
            let (s, c2) = s.overflowing_add(u64::from(carry));
            out.push(s);
            carry = c1 || c2;
        }
        out.push(u64::from(carry));
        Big(out).normalized()
    }

    /// self - other; panics if other > self (a bug in the caller). Only the tests subtract.
    #[cfg(test)]
    pub(super) fn sub(&self, other: &Big) -> Self {
        assert!(
            self.cmp(other) != Ordering::Less,
            "Big::sub would be negative"
        );
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = false;
        for (i, &w) in self.0.iter().enumerate() {
            let (d, b1) = w.overflowing_sub(other.0.get(i).copied().unwrap_or(0));
            let (d, b2) = d.overflowing_sub(u64::from(borrow));
            out.push(d);
            borrow = b1 || b2;
        }
        Big(out).normalized()
    }

    pub(super) fn mul(&self, other: &Big) -> Self {
        if self.is_zero() || other.is_zero() {
            return Big::zero();
        }
        let mut out = vec![0u64; self.0.len() + other.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in other.0.iter().enumerate() {
                let t = u128::from(a) * u128::from(b) + u128::from(out[i + j]) + carry;
                out[i + j] = t as u64;
                carry = t >> 64;
            }
            out[i + other.0.len()] = carry as u64;
        }
        Big(out).normalized()
    }

    pub(super) fn mul_small(&self, m: u64) -> Self {
        self.mul(&Big::from_u64(m))
    }

    /// floor(self / d) for d > 0.
    pub(super) fn div_small(&self, d: u64) -> Self {
        assert!(d != 0, "division by zero");
        let mut out = vec![0u64; self.0.len()];
        let mut rem = 0u128;
        for i in (0..self.0.len()).rev() {
            let cur = (rem << 64) | u128::from(self.0[i]);
            out[i] = (cur / u128::from(d)) as u64;
            rem = cur % u128::from(d);
        }
        Big(out).normalized()
    }

    /// self^e by binary powering.
    pub(super) fn pow(&self, e: u32) -> Self {
        let mut result = Big::from_u64(1);
        for bit in (0..32 - e.leading_zeros()).rev() {
            result = result.mul(&result);
            if (e >> bit) & 1 == 1 {
                result = result.mul(self);
            }
        }
        result
    }

    /// The value nearest self·2^shift as a double (ties to even), for self > 0 and a result
    /// below the overflow threshold; the tests build their hard cases with it.
    #[cfg(test)]
    pub(super) fn to_f64_scaled(&self, shift: i64) -> f64 {
        // The weight of the last bit kept: 53 significant bits, or fewer below 2^-1022.
        let lsb = (shift + self.bits() as i64 - 53).max(-1074);
        let drop = lsb - shift;
        if drop <= 0 {
            // At most 53 bits: exact.
            return self.0[0] as f64 * super::pow2(shift);
        }
        let drop = drop as u64;
        let top = self.shr(drop);
        let mut sig = top.0.first().copied().unwrap_or(0);
        let rest = self.sub(&top.shl(drop));
        let half = Big::from_u64(1).shl(drop - 1);
        match rest.cmp(&half) {
            Ordering::Greater => sig += 1,
            Ordering::Equal if sig & 1 == 1 => sig += 1,
            _ => {}
        }
        // sig <= 2^53 with its last bit worth 2^lsb >= 2^-1074: the product is exact.
        sig as f64 * super::pow2(lsb)
    }

    pub(super) fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}
