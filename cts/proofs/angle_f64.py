#!/usr/bin/env python3
"""Proof that Ferrocl's double `degrees` and `radians` are correctly rounded for every double.

The code (codegen/src/translate/inline_math.rs, `angle_scale_f64`) computes x*C, C = 180/pi or
pi/180, without a branch:

    small = |x| < 2^-900;  s = small ? 2^200 : 1;  xs = x*s          (exact)
    u  = RN(xs*C_lo);  hi = RN(xs*C_hi + u)                          (one fma)
    q  = RN(xs*R);  if not |RN(xs - q*X_h)| > 0: hi = RN(q*W)         (the hard significand)
    r0 = RN(hi/s)
    if |RN(hi - RN(r0*s))| == 2^-1075*s:                             (a tie at a subnormal result)
        e = RN(RN(hi - C_hi*xs) - u);  r = RN(RN(hi + (e < 0 ? +1 : -1)*2^-1075*s)/s)
    else r = r0

with C_hi = RN(C), C_lo = RN(C - C_hi), X_h the one bad significand, R = RN(1/X_h) and
W = RN(C*X_h). RN is IEEE binary64 round-to-nearest-even (subnormals, overflow to inf).

Why this covers every double. Write a finite nonzero x as X*2^k with X an integer in
[2^52, 2^53) (subnormals too, after the scaling by 2^200 makes xs normal). Every step above
scales exactly with 2^k as long as its result stays normal, which the thresholds guarantee
(xs*C_lo >= 2^-962 for radians' C_lo ~ 2^-62), except the final division by s of a subnormal
result. So:

1. Normal results: hi = RN(C*xs) unless C*X lies within |C_hi + C_lo - C|*X +
   ulp(C_lo*X)/2 < 2^-53.9 ulp of a midpoint (the first term is printed below). `near(..., 'mid')`
   finds every X in [2^52, 2^53) whose product is within 2^-40 ulp of a midpoint - a
   continued-fraction (Euclid-like) search for small values of (a*X + b) mod m, exact in
   integers with C to 500 bits - and the whole sequence is evaluated exactly on each of
   them, at every exponent that matters, and compared with the correctly rounded product.
   Every other X is more than 2^-40 ulp from a midpoint and so rounds right.
2. The hard significand test: RN(X*R) is exactly 1 for X_h (printed), so q = 2^k and the
   residual xs - q*X_h is exactly 0; for any other X the residual is nonzero because no
   other significand is X_h times a power of two. (RN(X*R) = 1 also holds for one
   neighbour of X_h, whose residual is nonzero: that is why the residual, not q alone, is
   tested.) Zero gives residual 0 and inf/NaN give NaN; q*W is their result too.
3. Subnormal results: RN(RN53(y)/s) differs from RN(y) only when RN53(y) lies exactly on a
   midpoint of the subnormal grid (double rounding), which the code detects exactly and
   resolves by the sign of e ~ y - hi. That sign is right unless y is within about 2^-52 ulp
   of a double; `near(..., 'int')` finds every X within 2^-40 ulp of one, and those are
   evaluated exactly at every exponent giving a subnormal result.

Run: python3 cts/proofs/angle_f64.py  (needs mpmath; about 10 minutes on one core per
constant). It prints the constants, the error bound, the candidate counts, the number of
wrong results (must be 0) and the hardest significands, which codegen/tests/inline_math.rs
lists as inputs.
"""

import sys
from fractions import Fraction as F

import mpmath

mpmath.mp.prec = 600
P = 500  # bits of C kept (C = K / 2^P * 2^c, truncated)
EMIN = -1022


def rd(q):
    """IEEE binary64 round-to-nearest-even of the rational q, with subnormals and overflow
    (returns float('inf') with q's sign past the largest double)."""
    if q == 0:
        return F(0)
    if q < 0:
        r = rd(-q)
        return -r
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if F(2) ** e > q:
        e -= 1
    if F(2) ** (e + 1) <= q:
        e += 1
    e = max(e, EMIN)
    ulp = F(2) ** (e - 52)
    k = q / ulp
    fl = k.numerator // k.denominator
    rem = k - fl
    if rem > F(1, 2) or (rem == F(1, 2) and fl % 2 == 1):
        fl += 1
    r = fl * ulp
    return float("inf") if r >= F(2) ** 1024 else r


def min_mod(n, m, a, b):
    """min over 0 <= x < n of (a*x + b) mod m, by reducing the modulus as Euclid does: the
    smallest value after the y-th wrap is (b - m*y) mod a, a sequence of the same shape."""
    best = None
    while n > 0:
        a %= m
        b %= m
        best = b if best is None else min(best, b)
        if a == 0:
            break
        wraps = (a * (n - 1) + b) // m
        if wraps == 0:
            break
        n, m, a, b = wraps, a, (-m) % a, (b - m) % a
    return best


def find_all(lo, hi, m, a, b, bound, out):
    """Every X in [lo, hi) with (a*X + b) mod m < bound, by bisection pruned with min_mod."""
    stack = [(lo, hi)]
    while stack:
        l, h = stack.pop()
        if h <= l or min_mod(h - l, m, a, (a * l + b) % m) >= bound:
            continue
        if h - l <= 256:
            out.extend(X for X in range(l, h) if (a * X + b) % m < bound)
            continue
        mid = (l + h) // 2
        stack += [(l, mid), (mid, h)]


def constant(c):
    """C as (exponent, K) with C = K/2^P * 2^e, 1 <= K/2^P < 2; the exact rational; C_hi, C_lo."""
    e = int(mpmath.floor(mpmath.log(c, 2)))
    K = int(mpmath.floor(c / mpmath.mpf(2) ** e * mpmath.mpf(2) ** P))
    exact = F(K, 2**P) * F(2) ** e
    hi = rd(exact)
    return e, K, exact, hi, rd(exact - hi)


def near(K, bits, what):
    """Significands X whose product with C (scaled to [2^52, 2^53)) lies within 2^-bits of a
    half-integer (what='mid': a midpoint) or of an integer (what='int': a double)."""
    x1 = -(-(2 ** (53 + P)) // K)  # first X whose product has the next exponent
    assert x1 == -(-(2 ** (53 + P)) // (K + 1)), "the binade boundary depends on C's tail"
    out = []
    for m, lo, hi in [(2**P, 2**52, x1), (2 ** (P + 1), x1, 2**53)]:
        off = m // 2 if what == "mid" else 0
        for a, b in [(K, -off), (-K, off)]:
            find_all(lo, hi, m, a % m, b % m, m >> bits, out)
    return sorted(set(out))


def distance(K, X, what):
    """Distance in ulps of C*X from the nearest midpoint (what='mid') or double ('int')."""
    x1 = -(-(2 ** (53 + P)) // K)
    v = F(K * X, 2**P) if X < x1 else F(K * X, 2 ** (P + 1))
    if what == "mid":
        v -= F(1, 2)
    return abs(v - round(v))


def evaluate(x, c_hi, c_lo, x_h, r, w):
    """The code's sequence on the double x (a Fraction), each operation rounded as the CPU does."""
    small = abs(x) < F(2) ** -900
    s = F(2) ** 200 if small else F(1)
    xs = x * s
    u = rd(xs * c_lo)
    hi = rd(xs * c_hi + u)
    q = rd(xs * r)
    if not abs(rd(xs - q * x_h)) > 0:
        hi = rd(q * w)
    if isinstance(hi, float):
        return hi  # overflow: inf stays inf through the rest (inf - inf is no tie)
    r0 = rd(hi / s)
    half_step = F(2) ** -1075 * s
    if abs(rd(hi - rd(r0 * s))) == half_step:
        e = rd(rd(hi - c_hi * xs) - u)
        assert e != 0
        return rd(rd(hi + (half_step if e < 0 else -half_step)) / s)
    return r0


def prove(name, c):
    e, K, exact, c_hi, c_lo = constant(c)
    print(f"{name}: C_hi = {float(c_hi).hex()}, C_lo = {float(c_lo).hex()}")
    tail = abs(c_hi + c_lo - exact) / exact
    print(f"  |C_hi + C_lo - C| / C = 2^{float(mpmath.log(float(tail), 2)):.2f}")
    mid = near(K, 40, "mid")
    dbl = near(K, 40, "int")
    print(f"  significands within 2^-40 ulp of a midpoint: {len(mid)}, of a double: {len(dbl)}")
    # The hard significand: the one the double-double evaluation alone rounds wrongly.
    plain_wrong = [X for X in mid if rd(c_hi * X + rd(c_lo * X)) != rd(exact * X)]
    assert len(plain_wrong) == 1, plain_wrong
    x_h = plain_wrong[0]
    r, w = rd(F(1, x_h)), rd(exact * x_h)
    print(f"  hard significand X_h = {x_h:#x}: R = {float(r).hex()}, W = {float(w).hex()}")
    ones = [X for X in range(x_h - 4, x_h + 5) if rd(X * r) == 1]
    assert x_h in ones
    print(f"  significands with RN(X*R) = 1: {[hex(X) for X in ones]}")
    wrong = checked = 0
    exponents = list(range(-1074 - 52, -1000)) + [-953, -60, 0, 900] + list(range(965, 972))
    for X in mid + dbl + [2**52, 2**53 - 1] + list(range(x_h - 3, x_h + 4)):
        for k in exponents:
            for sign in (1, -1):
                x = sign * F(X) * F(2) ** k
                if abs(x) < F(2) ** -1022 and (x / F(2) ** -1074).denominator != 1:
                    continue  # not a double
                if abs(x) >= F(2) ** 1024:
                    continue
                checked += 1
                want = rd(exact * x)
                got = evaluate(x, c_hi, c_lo, x_h, r, w)
                if got != want:
                    wrong += 1
                    print(f"  WRONG: X = {X:#x}, 2^{k}, sign {sign}")
    print(f"  evaluated exactly on {checked} doubles: {wrong} wrong")
    hardest_mid = sorted(mid, key=lambda X: distance(K, X, "mid"))[:3]
    hardest_dbl = sorted(dbl, key=lambda X: distance(K, X, "int"))[:3]
    for what, xs in [("mid", hardest_mid), ("int", hardest_dbl)]:
        for X in xs:
            d = distance(K, X, what)
            print(f"  closest to a {'midpoint' if what == 'mid' else 'double'}: {X:#x} "
                  f"(2^{float(mpmath.log(float(d), 2)):.1f} ulp)")
    return wrong


if __name__ == "__main__":
    which = sys.argv[1:] or ["degrees", "radians"]
    constants = {"degrees": 180 / mpmath.pi, "radians": mpmath.pi / 180}
    failures = sum(prove(name, constants[name]) for name in which)
    sys.exit(1 if failures else 0)
