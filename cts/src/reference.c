/* ferrocl-cts reference functions: glibc's long double (x87, 64-bit significand) math, used as
 * the higher-precision reference the way the CTS math_brute_force does. It shares no code with
 * ferrocl-mathlib (CORE-MATH and the libm crate). Each result goes back to Rust as an unevaluated
 * double-double hi + lo (lo scaled for tiny results, see split); operations whose exact result needs more than 64 bits (fma, fdim, mad on
 * float or half inputs) are formed exactly in double-double instead. `prec` is 0 for float, 1 for
 * double, 2 for half: it only matters for functions defined in terms of the format (nextafter,
 * whose half version the caller computes) and for fma/mad. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <string.h>

typedef long double ld;
static const ld PI = 3.141592653589793238462643383279502884L;

/* sin(pi x) for x >= 0: reduce exactly to r in [-1, 1], then by symmetry to [-0.5, 0.5], where
 * sinl(PI * r) has a relative error of a few 2^-64 (the product's rounding is not amplified). */
static ld sinpi_pos(ld x) {
    ld r = x - 2.0L * rintl(x * 0.5L);
    if (r > 0.5L) r = 1.0L - r;
    if (r < -0.5L) r = -1.0L - r;
    return sinl(PI * r);
}
static ld ref_sinpi(ld x) { return signbit(x) ? -sinpi_pos(-x) : sinpi_pos(x); }
static ld ref_cospi(ld x) {
    ld a = fabsl(x);
    ld s = fabsl(a - 2.0L * rintl(a * 0.5L)); /* in [0, 1] */
    return sinl(PI * (0.5L - s));             /* +0 exactly at s = 0.5 */
}
static ld ref_tanpi(ld x) { return ref_sinpi(x) / ref_cospi(x); }

static ld ref_powr(ld x, ld y) {
    if (isnan(x) || isnan(y)) return x + y;
    if (x < 0) return NAN;
    if (x == 0) return y == 0 ? NAN : (y < 0 ? INFINITY : 0.0L);
    if (isinf(x)) return y == 0 ? NAN : (y < 0 ? 0.0L : INFINITY);
    if (x == 1) return isinf(y) ? NAN : 1.0L;
    return powl(x, y);
}
static ld ref_maxmag(ld x, ld y) {
    if (fabsl(x) > fabsl(y)) return x;
    if (fabsl(y) > fabsl(x)) return y;
    return fmaxl(x, y);
}
static ld ref_minmag(ld x, ld y) {
    if (fabsl(x) < fabsl(y)) return x;
    if (fabsl(y) < fabsl(x)) return y;
    return fminl(x, y);
}
static ld ref_round(ld x) { return roundl(x); }

/* The tail is stored times 2^LO_SHIFT when |hi| < 2^-800, or it would underflow for results
 * near the double subnormal range (ulp.rs undoes the scaling with the same rule). */
#define LO_SHIFT 256
static int tiny(double h) { return h != 0 && fabs(h) < 0x1p-800; }
static void split(ld r, double *hi, double *lo) {
    double h = (double)r;
    *hi = h;
    *lo = isfinite(h) ? (double)((r - (ld)h) * (tiny(h) ? 0x1p256L : 1.0L)) : 0.0;
}
/* Exact a + b as hi + lo (Knuth's two-sum). */
static void two_sum(double a, double b, double *hi, double *lo) {
    double s = a + b;
    if (!isfinite(s)) { *hi = s; *lo = 0; return; }
    double bb = s - a;
    *hi = s;
    *lo = ((a - (s - bb)) + (b - bb)) * (tiny(s) ? 0x1p256 : 1.0);
}

enum { U1, U2, U3 };
typedef struct {
    const char *name;
    int arity;
    ld (*f1)(ld);
    ld (*f2)(ld, ld);
} entry;

static ld r_asinpi(ld x) { return asinl(x) / PI; }
static ld r_acospi(ld x) { return acosl(x) / PI; }
static ld r_atanpi(ld x) { return atanl(x) / PI; }
static ld r_atan2pi(ld y, ld x) { return atan2l(y, x) / PI; }
static ld r_degrees(ld x) { return x * (180.0L / PI); }
static ld r_radians(ld x) { return x * (PI / 180.0L); }
static ld r_rsqrt(ld x) { return 1.0L / sqrtl(x); }
static ld r_recip(ld x) { return 1.0L / x; }
static ld r_divide(ld x, ld y) { return x / y; }
static ld r_exp10(ld x) { return exp10l(x); }
/* lgammal writes the global signgam: the reentrant form keeps reference threads independent. */
static ld r_lgamma(ld x) { int sign; return lgammal_r(x, &sign); }

static const entry TABLE[] = {
    {"acos", 1, acosl, 0}, {"acosh", 1, acoshl, 0}, {"acospi", 1, r_acospi, 0},
    {"asin", 1, asinl, 0}, {"asinh", 1, asinhl, 0}, {"asinpi", 1, r_asinpi, 0},
    {"atan", 1, atanl, 0}, {"atanh", 1, atanhl, 0}, {"atanpi", 1, r_atanpi, 0},
    {"cbrt", 1, cbrtl, 0}, {"ceil", 1, ceill, 0}, {"cos", 1, cosl, 0}, {"cosh", 1, coshl, 0},
    {"cospi", 1, ref_cospi, 0}, {"degrees", 1, r_degrees, 0}, {"erf", 1, erfl, 0}, {"erfc", 1, erfcl, 0},
    {"exp", 1, expl, 0}, {"exp2", 1, exp2l, 0}, {"exp10", 1, r_exp10, 0},
    {"expm1", 1, expm1l, 0}, {"fabs", 1, fabsl, 0}, {"floor", 1, floorl, 0},
    {"lgamma", 1, r_lgamma, 0}, {"log", 1, logl, 0}, {"log2", 1, log2l, 0},
    {"log10", 1, log10l, 0}, {"log1p", 1, log1pl, 0}, {"logb", 1, logbl, 0},
    {"radians", 1, r_radians, 0}, {"recip", 1, r_recip, 0}, {"rint", 1, rintl, 0}, {"round", 1, ref_round, 0},
    {"rsqrt", 1, r_rsqrt, 0}, {"sin", 1, sinl, 0}, {"sinh", 1, sinhl, 0},
    {"sinpi", 1, ref_sinpi, 0}, {"sqrt", 1, sqrtl, 0}, {"tan", 1, tanl, 0},
    {"tanh", 1, tanhl, 0}, {"tanpi", 1, ref_tanpi, 0}, {"tgamma", 1, tgammal, 0},
    {"trunc", 1, truncl, 0},
    {"atan2", 2, 0, atan2l}, {"atan2pi", 2, 0, r_atan2pi}, {"copysign", 2, 0, copysignl},
    {"divide", 2, 0, r_divide}, {"fmax", 2, 0, fmaxl}, {"fmin", 2, 0, fminl},
    {"fmod", 2, 0, fmodl}, {"hypot", 2, 0, hypotl}, {"maxmag", 2, 0, ref_maxmag},
    {"minmag", 2, 0, ref_minmag}, {"pow", 2, 0, powl}, {"powr", 2, 0, ref_powr},
    {"remainder", 2, 0, remainderl},
    /* computed below from the exact double-double forms */
    {"fdim", 2, 0, 0}, {"nextafter", 2, 0, 0}, {"fma", 3, 0, 0}, {"mad", 3, 0, 0},
};

/* Index of `name` in the table, or -1. */
int ferrocl_cts_ref_id(const char *name) {
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
        if (strcmp(TABLE[i].name, name) == 0) return (int)i;
    return -1;
}

/* Evaluates function `id` on n inputs (b, c may be NULL for lower arities). */
void ferrocl_cts_ref_eval(int id, int prec, size_t n, const double *a, const double *b,
                          const double *c, double *hi, double *lo) {
    const entry *e = &TABLE[id];
    for (size_t i = 0; i < n; i++) {
        if (e->f1) {
            split(e->f1((ld)a[i]), &hi[i], &lo[i]);
        } else if (e->f2) {
            split(e->f2((ld)a[i], (ld)b[i]), &hi[i], &lo[i]);
        } else if (strcmp(e->name, "fdim") == 0) {
            if (isnan(a[i]) || isnan(b[i])) { hi[i] = NAN; lo[i] = 0; }
            else if (a[i] > b[i]) two_sum(a[i], -b[i], &hi[i], &lo[i]);
            else { hi[i] = 0.0; lo[i] = 0.0; }
        } else if (strcmp(e->name, "nextafter") == 0) {
            hi[i] = prec == 0 ? (double)nextafterf((float)a[i], (float)b[i])
                              : nextafter(a[i], b[i]);
            lo[i] = 0;
        } else if (prec != 1) {
            /* float or half fma / mad: a*b is exact in double, the sum exact as double-double. */
            two_sum(a[i] * b[i], c[i], &hi[i], &lo[i]);
            if (isnan(hi[i])) lo[i] = 0;
        } else {
            split(fmal((ld)a[i], (ld)b[i], (ld)c[i]), &hi[i], &lo[i]);
        }
    }
}
