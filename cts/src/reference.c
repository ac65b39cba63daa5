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

/* Second results of the pointer-output functions, and the integer-argument functions, as the
 * checker's kernels present them (cts/src/check.rs: CVT, INT, QUO7). */
static ld r_frexp_m(ld x) { int e; return frexpl(x, &e); }
static ld r_frexp_e(ld x) {
    int e = 0;
    if (isfinite(x)) frexpl(x, &e); /* spec 6.7: 0 for infinities and NaN */
    return e;
}
static ld r_modf_f(ld x) { return copysignl(isinf(x) ? 0.0L : x - truncl(x), x); }
static ld r_lgamma_sign(ld x) {
    if (!isfinite(x)) return 0;
    if (x == 0 || (x < 0 && x == floorl(x))) return 0; /* spec 6.7: zero or a negative integer */
    int sign;
    lgammal_r(x, &sign);
    return sign;
}
static ld r_ilogb(ld x) {
    if (isnan(x) || isinf(x)) return 2147483647.0L; /* FP_ILOGBNAN = INT_MAX; ilogb(inf) too */
    if (x == 0) return -2147483648.0L;               /* FP_ILOGB0 = INT_MIN */
    return ilogbl(x);
}
/* INT(b): (int)fmod(b, 64), NaN (and fmod of an infinity) giving 0. */
static int small_int(ld b) {
    ld m = fmodl(b, 64.0L);
    return isnan(m) ? 0 : (int)m;
}
static int clamp_ilogb(ld x) {
    int e = (int)r_ilogb(x);
    return e < -2000 ? -2000 : (e > 2000 ? 2000 : e);
}
static ld r_remquo_q(ld x, ld y) {
    if (clamp_ilogb(x) - clamp_ilogb(y) >= 20) return 0;
    if (!isfinite(x) || isnan(y) || y == 0) return 0; /* spec 6.7 */
    ld r = remainderl(x, y);
    /* An integer below 2^21; (x - r) / y is within a tiny error of it (double inputs need more
     * than 64 bits for x - r), so rounding gives it exactly. */
    ld q = isinf(y) ? 0.0L : rintl((x - r) / y);
    return fmodl(q, 128.0L) + 0.0L;
}
static ld r_ldexp(ld x, ld b) { return ldexpl(x, small_int(b)); }
static ld r_pown(ld x, ld b) { return powl(x, (ld)small_int(b)); }
static ld r_rootn(ld x, ld b) {
    int n = small_int(b);
    if (n == 0 || isnan(x)) return NAN;
    if (x < 0 && n % 2 == 0) return NAN;
    if (x == 0) {
        if (n < 0) return n % 2 ? copysignl(INFINITY, x) : INFINITY;
        return n % 2 ? x : 0.0L;
    }
    if (isinf(x)) {
        if (n < 0) return copysignl(0.0L, x);
        return x;
    }
    ld m = powl(fabsl(x), 1.0L / n);
    return x < 0 ? -m : m;
}

/* Derived implementations of table 7 (env spec 6.6.3, -cl-unsafe-math-optimizations): each
 * formula evaluated in float, every operation and elementary function rounded to float, as the
 * CTS's reference_relaxed_* functions do. NaN where the table gives no derived form (the checker
 * then judges by the non-derived bound alone). The table's acospi/asinpi formulas read
 * "* M_PI_F", a misprint for the division by pi they mean: M_1_PI_F is used. */
typedef float flt;
static flt F(ld x) { return (flt)x; }
static const flt M_PI_FLT = (flt)3.141592653589793238462643383279502884L;
static const flt M_1_PI_FLT = (flt)0.318309886183790671537767526745028724L;
static flt f_exp(flt x) { return F(expl(x)); }
static flt f_exp2(flt x) { return F(exp2l(x)); }
static flt f_log(flt x) { return F(logl(x)); }
static flt f_log2(flt x) { return F(log2l(x)); }
static flt f_sqrt(flt x) { return F(sqrtl(x)); }
static int is_int(flt y) { return y == floorf(y); }
static int is_odd(flt y) { return is_int(y) && fabsf(y) < 0x1p24f && fmodf(y, 2.0f) != 0; }
static ld d_acosh(ld a) { flt x = F(a); return f_log(x + f_sqrt(x * x - 1.0f)); }
static ld d_asinh(ld a) { flt x = F(a); return f_log(x + f_sqrt(x * x + 1.0f)); }
static ld d_acospi(ld a) { return F(acosl(F(a))) * M_1_PI_FLT; }
static ld d_asinpi(ld a) { return F(asinl(F(a))) * M_1_PI_FLT; }
static ld d_atanpi(ld a) { return F(atanl(F(a))) * M_1_PI_FLT; }
static ld d_atanh(ld a) {
    flt x = F(a);
    if (fabsf(x) <= 0x1p-10f) return x;
    return 0.5f * f_log((1.0f + x) / (1.0f - x));
}
static flt atan2_derived(flt y, flt x) {
    flt t = F(atanl(y / x));
    if (x > 0) return t;
    if (x < 0 && y > 0) return t + M_PI_FLT;
    if (x < 0 && y < 0) return t - M_PI_FLT;
    return NAN;
}
static ld d_atan2(ld y, ld x) { return atan2_derived(F(y), F(x)); }
static ld d_atan2pi(ld y, ld x) { return atan2_derived(F(y), F(x)) * M_1_PI_FLT; }
static flt rootn_derived(flt x, int n) {
    if (n != 0 && x > 0) return f_exp2(f_log2(x) / (flt)n);
    if (n % 2 != 0 && x < 0) return -f_exp2(f_log2(-x) / (flt)n);
    if (n > 0 && x == 0) return 0.0f;
    return NAN;
}
static ld d_cbrt(ld a) { return rootn_derived(F(a), 3); }
static ld d_cosh(ld a) { flt x = F(a); return 0.5f * (f_exp(x) + f_exp(-x)); }
static ld d_exp10(ld a) { return f_exp2(F(a) * F(log2l(10.0L))); }
static ld d_expm1(ld a) { return f_exp(F(a)) - 1.0f; }
static ld d_log1p(ld a) { return f_log(F(a) + 1.0f); }
static flt pow_derived(flt x, flt y) {
    if (x > 0 || (x < 0 && is_int(y) && !is_odd(y))) return f_exp2(y * f_log2(fabsf(x)));
    if (x < 0 && is_odd(y)) return -f_exp2(y * f_log2(-x));
    return NAN;
}
static ld d_pow(ld x, ld y) { return pow_derived(F(x), F(y)); }
static ld d_pown(ld x, ld b) { return pow_derived(F(x), (flt)small_int(b)); }
static ld d_powr(ld x, ld y) { flt a = F(x); return a >= 0 ? f_exp2(F(y) * f_log2(a)) : NAN; }
static ld d_rootn(ld x, ld b) { return rootn_derived(F(x), small_int(b)); }
static ld d_sinh(ld a) {
    flt x = F(a);
    if (fabsf(x) <= 0x1p-10f) return x;
    return 0.5f * (f_exp(x) - f_exp(-x));
}
static ld d_tan(ld a) { flt x = F(a); return F(sinl(x)) * (1.0f / F(cosl(x))); }
static ld d_tanh(ld a) {
    flt x = F(a);
    if (fabsf(x) <= 0x1p-10f) return x;
    flt p = f_exp(x), m = f_exp(-x);
    return (p - m) / (p + m);
}
static ld d_tanpi(ld a) { return F(tanl(F(a) * M_PI_FLT)); }

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
    {"frexp_m", 1, r_frexp_m, 0}, {"frexp_e", 1, r_frexp_e, 0}, {"modf_f", 1, r_modf_f, 0},
    {"lgamma_sign", 1, r_lgamma_sign, 0},
    {"remquo_q", 2, 0, r_remquo_q}, {"ldexp", 2, 0, r_ldexp}, {"pown", 2, 0, r_pown},
    {"rootn", 2, 0, r_rootn}, {"fract_f", 1, 0, 0}, {"ilogb_cvt", 1, 0, 0},
    {"relaxed_acosh", 1, d_acosh, 0}, {"relaxed_asinh", 1, d_asinh, 0},
    {"relaxed_acospi", 1, d_acospi, 0}, {"relaxed_asinpi", 1, d_asinpi, 0},
    {"relaxed_atanpi", 1, d_atanpi, 0}, {"relaxed_atanh", 1, d_atanh, 0},
    {"relaxed_atan2", 2, 0, d_atan2}, {"relaxed_atan2pi", 2, 0, d_atan2pi},
    {"relaxed_cbrt", 1, d_cbrt, 0}, {"relaxed_cosh", 1, d_cosh, 0},
    {"relaxed_exp10", 1, d_exp10, 0}, {"relaxed_expm1", 1, d_expm1, 0},
    {"relaxed_log1p", 1, d_log1p, 0}, {"relaxed_pow", 2, 0, d_pow}, {"relaxed_pown", 2, 0, d_pown},
    {"relaxed_powr", 2, 0, d_powr}, {"relaxed_rootn", 2, 0, d_rootn},
    {"relaxed_sinh", 1, d_sinh, 0}, {"relaxed_tan", 1, d_tan, 0}, {"relaxed_tanh", 1, d_tanh, 0},
    {"relaxed_tanpi", 1, d_tanpi, 0},
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
        } else if (strcmp(e->name, "ilogb_cvt") == 0) {
            /* ilogb converted to the format (the kernel's CVT rounds to nearest): INT_MAX and
             * INT_MIN become +-2^31 in float and overflow half to +-infinity. */
            ld v = r_ilogb(a[i]);
            double d = prec == 0 ? (double)(float)v : (double)v;
            if (prec == 2 && fabs(d) > 65504.0) d = copysign(INFINITY, d);
            hi[i] = d;
            lo[i] = 0;
        } else if (strcmp(e->name, "fract_f") == 0) {
            /* min(x - floor(x), largest value below 1 in the format); spec 6.7 for 0, inf, NaN */
            ld x = a[i];
            ld cap = prec == 0 ? 0x1.fffffep-1L : (prec == 1 ? 0x1.fffffffffffffp-1L : 0x1.ffcp-1L);
            ld f = isnan(x) ? x : (isinf(x) ? copysignl(0.0L, x) : fminl(x - floorl(x), cap));
            if (x == 0) f = x;
            split(f, &hi[i], &lo[i]);
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
