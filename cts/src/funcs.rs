//! The functions the checker measures: OpenCL C expression, reference, and the full-profile
//! bounds of spec table 6.6.1 (OpenCL SPIR-V environment 3.1.1): float, double and half.

/// An accuracy requirement in ulps; `None` is "implementation-defined" (measured, not judged).
pub type Bound = Option<f64>;

/// Correctly rounded: within half an ulp of the exact result.
pub const CR: Bound = Some(0.5);
/// Exact (the spec's "0 ulp"; floor/ceil/… are "correctly rounded" of a representable value).
pub const EXACT: Bound = Some(0.0);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Plain,
    /// mad: either the correctly rounded fma or the correctly rounded a*b then + c.
    Mad,
    /// fmin/fmax/maxmag/minmag: the sign of a zero result between ±0 is not prescribed.
    ZeroSignFree,
    /// native_*: any result is conformant (not even 6.7 applies); measured and reported only.
    Native,
    /// half_*: the CTS lets them flush subnormals even on a denormal-supporting device, and
    /// half_sin/cos/tan are only defined on |x| <= 2^16.
    Half,
}

#[derive(Clone, Copy, Debug)]
pub struct Func {
    /// Name in the table and for `--function`.
    pub name: &'static str,
    pub arity: usize,
    /// OpenCL C expression in a, b, c.
    pub expr: &'static str,
    /// Name of the reference in reference.c.
    pub reference: &'static str,
    pub f32_bound: Bound,
    /// `None`: no double version (native_*, half_*).
    pub f64_bound: Option<Bound>,
    /// The half bound of the table (cl_khr_fp16); `None`: no half version (native_*, half_*).
    pub f16_bound: Option<Bound>,
    pub kind: Kind,
}

/// One table row; positional so the table below reads as the spec's table does.
#[allow(clippy::too_many_arguments)]
const fn f(
    name: &'static str,
    arity: usize,
    expr: &'static str,
    reference: &'static str,
    f32_bound: Bound,
    f64_bound: Option<Bound>,
    f16_bound: Option<Bound>,
    kind: Kind,
) -> Func {
    Func {
        name,
        arity,
        expr,
        reference,
        f32_bound,
        f64_bound,
        f16_bound,
        kind,
    }
}

use Kind::*;

/// Every function, in table order.
#[rustfmt::skip]
pub const FUNCS: &[Func] = &[
    f("acos", 1, "acos(a)", "acos", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("acosh", 1, "acosh(a)", "acosh", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("acospi", 1, "acospi(a)", "acospi", Some(5.0), Some(Some(5.0)), Some(Some(2.0)), Plain),
    f("asin", 1, "asin(a)", "asin", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("asinh", 1, "asinh(a)", "asinh", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("asinpi", 1, "asinpi(a)", "asinpi", Some(5.0), Some(Some(5.0)), Some(Some(2.0)), Plain),
    f("atan", 1, "atan(a)", "atan", Some(5.0), Some(Some(5.0)), Some(Some(2.0)), Plain),
    f("atanh", 1, "atanh(a)", "atanh", Some(5.0), Some(Some(5.0)), Some(Some(2.0)), Plain),
    f("atanpi", 1, "atanpi(a)", "atanpi", Some(5.0), Some(Some(5.0)), Some(Some(2.0)), Plain),
    f("cbrt", 1, "cbrt(a)", "cbrt", Some(2.0), Some(Some(2.0)), Some(Some(2.0)), Plain),
    f("ceil", 1, "ceil(a)", "ceil", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("cos", 1, "cos(a)", "cos", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("cosh", 1, "cosh(a)", "cosh", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("cospi", 1, "cospi(a)", "cospi", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("degrees", 1, "degrees(a)", "degrees", Some(2.0), Some(Some(2.0)), Some(Some(2.0)), Plain),
    f("erf", 1, "erf(a)", "erf", Some(16.0), Some(Some(16.0)), Some(Some(4.0)), Plain),
    f("erfc", 1, "erfc(a)", "erfc", Some(16.0), Some(Some(16.0)), Some(Some(4.0)), Plain),
    f("exp", 1, "exp(a)", "exp", Some(3.0), Some(Some(3.0)), Some(Some(2.0)), Plain),
    f("exp2", 1, "exp2(a)", "exp2", Some(3.0), Some(Some(3.0)), Some(Some(2.0)), Plain),
    f("exp10", 1, "exp10(a)", "exp10", Some(3.0), Some(Some(3.0)), Some(Some(2.0)), Plain),
    f("expm1", 1, "expm1(a)", "expm1", Some(3.0), Some(Some(3.0)), Some(Some(2.0)), Plain),
    f("fabs", 1, "fabs(a)", "fabs", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("floor", 1, "floor(a)", "floor", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("lgamma", 1, "lgamma(a)", "lgamma", None, Some(None), Some(None), Plain),
    f("log", 1, "log(a)", "log", Some(3.0), Some(Some(3.0)), Some(Some(2.0)), Plain),
    f("log2", 1, "log2(a)", "log2", Some(3.0), Some(Some(3.0)), Some(Some(2.0)), Plain),
    f("log10", 1, "log10(a)", "log10", Some(3.0), Some(Some(3.0)), Some(Some(2.0)), Plain),
    f("log1p", 1, "log1p(a)", "log1p", Some(2.0), Some(Some(2.0)), Some(Some(2.0)), Plain),
    f("logb", 1, "logb(a)", "logb", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("radians", 1, "radians(a)", "radians", Some(2.0), Some(Some(2.0)), Some(Some(2.0)), Plain),
    f("rint", 1, "rint(a)", "rint", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("round", 1, "round(a)", "round", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("rsqrt", 1, "rsqrt(a)", "rsqrt", Some(2.0), Some(Some(2.0)), Some(Some(1.0)), Plain),
    f("sin", 1, "sin(a)", "sin", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("sinh", 1, "sinh(a)", "sinh", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("sinpi", 1, "sinpi(a)", "sinpi", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("sqrt", 1, "sqrt(a)", "sqrt", Some(3.0), Some(CR), Some(Some(1.5)), Plain),
    f("tan", 1, "tan(a)", "tan", Some(5.0), Some(Some(5.0)), Some(Some(2.5)), Plain),
    f("tanh", 1, "tanh(a)", "tanh", Some(5.0), Some(Some(5.0)), Some(Some(2.0)), Plain),
    f("tanpi", 1, "tanpi(a)", "tanpi", Some(6.0), Some(Some(6.0)), Some(Some(2.0)), Plain),
    f("tgamma", 1, "tgamma(a)", "tgamma", Some(16.0), Some(Some(16.0)), Some(Some(4.0)), Plain),
    f("trunc", 1, "trunc(a)", "trunc", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("atan2", 2, "atan2(a, b)", "atan2", Some(6.0), Some(Some(6.0)), Some(Some(2.0)), Plain),
    f("atan2pi", 2, "atan2pi(a, b)", "atan2pi", Some(6.0), Some(Some(6.0)), Some(Some(2.0)), Plain),
    f("copysign", 2, "copysign(a, b)", "copysign", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("divide", 2, "a / b", "divide", Some(2.5), Some(CR), Some(Some(1.0)), Plain),
    f("fdim", 2, "fdim(a, b)", "fdim", CR, Some(CR), Some(CR), Plain),
    f("fmax", 2, "fmax(a, b)", "fmax", EXACT, Some(EXACT), Some(EXACT), ZeroSignFree),
    f("fmin", 2, "fmin(a, b)", "fmin", EXACT, Some(EXACT), Some(EXACT), ZeroSignFree),
    f("fmod", 2, "fmod(a, b)", "fmod", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("hypot", 2, "hypot(a, b)", "hypot", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("maxmag", 2, "maxmag(a, b)", "maxmag", EXACT, Some(EXACT), Some(EXACT), ZeroSignFree),
    f("minmag", 2, "minmag(a, b)", "minmag", EXACT, Some(EXACT), Some(EXACT), ZeroSignFree),
    f("nextafter", 2, "nextafter(a, b)", "nextafter", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("pow", 2, "pow(a, b)", "pow", Some(16.0), Some(Some(16.0)), Some(Some(4.0)), Plain),
    f("powr", 2, "powr(a, b)", "powr", Some(16.0), Some(Some(16.0)), Some(Some(4.0)), Plain),
    f("remainder", 2, "remainder(a, b)", "remainder", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("fma", 3, "fma(a, b, c)", "fma", CR, Some(CR), Some(CR), Plain),
    f("mad", 3, "mad(a, b, c)", "fma", CR, Some(CR), Some(CR), Mad),
    // Functions with a second result through a pointer, each result its own row (the second
    // named `function.part`); integer results are converted to the float type (exact: they are
    // small). `CVT` converts an integer (vector) to the float type of the kernel, `INT` turns the
    // argument b into a small integer n = (int)fmod(b, 64) (saturating: NaN gives 0).
    f("frexp", 1, "({ __typeof__(ilogb(a)) e_; frexp(a, &e_); })", "frexp_m", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("frexp.exp", 1, "({ __typeof__(ilogb(a)) e_; frexp(a, &e_); CVT(e_); })", "frexp_e", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("modf", 1, "({ __typeof__(a) i_; modf(a, &i_); })", "modf_f", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("modf.int", 1, "({ __typeof__(a) i_; modf(a, &i_); i_; })", "trunc", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("fract", 1, "({ __typeof__(a) i_; fract(a, &i_); })", "fract_f", CR, Some(CR), Some(CR), Plain),
    f("fract.floor", 1, "({ __typeof__(a) i_; fract(a, &i_); i_; })", "floor", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("sincos", 1, "({ __typeof__(a) c_; sincos(a, &c_); })", "sin", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("sincos.cos", 1, "({ __typeof__(a) c_; sincos(a, &c_); c_; })", "cos", Some(4.0), Some(Some(4.0)), Some(Some(2.0)), Plain),
    f("lgamma_r", 1, "({ __typeof__(ilogb(a)) s_; lgamma_r(a, &s_); })", "lgamma", None, Some(None), Some(None), Plain),
    f("lgamma_r.sign", 1, "({ __typeof__(ilogb(a)) s_; lgamma_r(a, &s_); CVT(ilogb(a) != 2147483647 ? s_ : 0); })", "lgamma_sign", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("remquo", 2, "({ __typeof__(ilogb(a)) q_; remquo(a, b, &q_); })", "remainder", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("remquo.quo", 2, "({ __typeof__(ilogb(a)) q_; remquo(a, b, &q_); CVT(QUO7(q_, a, b)); })", "remquo_q", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("ilogb", 1, "CVT(ilogb(a))", "ilogb_cvt", EXACT, Some(EXACT), Some(EXACT), Plain),
    f("ldexp", 2, "ldexp(a, INT(b))", "ldexp", CR, Some(CR), Some(CR), Plain),
    f("pown", 2, "pown(a, INT(b))", "pown", Some(16.0), Some(Some(16.0)), Some(Some(4.0)), Plain),
    f("rootn", 2, "rootn(a, INT(b))", "rootn", Some(16.0), Some(Some(16.0)), Some(Some(4.0)), Plain),
    f("native_cos", 1, "native_cos(a)", "cos", None, None, None, Native),
    f("native_divide", 2, "native_divide(a, b)", "divide", None, None, None, Native),
    f("native_exp", 1, "native_exp(a)", "exp", None, None, None, Native),
    f("native_exp2", 1, "native_exp2(a)", "exp2", None, None, None, Native),
    f("native_exp10", 1, "native_exp10(a)", "exp10", None, None, None, Native),
    f("native_log", 1, "native_log(a)", "log", None, None, None, Native),
    f("native_log2", 1, "native_log2(a)", "log2", None, None, None, Native),
    f("native_log10", 1, "native_log10(a)", "log10", None, None, None, Native),
    f("native_powr", 2, "native_powr(a, b)", "powr", None, None, None, Native),
    f("native_recip", 1, "native_recip(a)", "recip", None, None, None, Native),
    f("native_rsqrt", 1, "native_rsqrt(a)", "rsqrt", None, None, None, Native),
    f("native_sin", 1, "native_sin(a)", "sin", None, None, None, Native),
    f("native_sqrt", 1, "native_sqrt(a)", "sqrt", None, None, None, Native),
    f("native_tan", 1, "native_tan(a)", "tan", None, None, None, Native),
    f("half_cos", 1, "half_cos(a)", "cos", Some(8192.0), None, None, Half),
    f("half_divide", 2, "half_divide(a, b)", "divide", Some(8192.0), None, None, Half),
    f("half_exp", 1, "half_exp(a)", "exp", Some(8192.0), None, None, Half),
    f("half_exp2", 1, "half_exp2(a)", "exp2", Some(8192.0), None, None, Half),
    f("half_exp10", 1, "half_exp10(a)", "exp10", Some(8192.0), None, None, Half),
    f("half_log", 1, "half_log(a)", "log", Some(8192.0), None, None, Half),
    f("half_log2", 1, "half_log2(a)", "log2", Some(8192.0), None, None, Half),
    f("half_log10", 1, "half_log10(a)", "log10", Some(8192.0), None, None, Half),
    f("half_powr", 2, "half_powr(a, b)", "powr", Some(8192.0), None, None, Half),
    f("half_recip", 1, "half_recip(a)", "recip", Some(8192.0), None, None, Half),
    f("half_rsqrt", 1, "half_rsqrt(a)", "rsqrt", Some(8192.0), None, None, Half),
    f("half_sin", 1, "half_sin(a)", "sin", Some(8192.0), None, None, Half),
    f("half_sqrt", 1, "half_sqrt(a)", "sqrt", Some(8192.0), None, None, Half),
    f("half_tan", 1, "half_tan(a)", "tan", Some(8192.0), None, None, Half),
];

pub fn by_name(name: &str) -> Option<&'static Func> {
    FUNCS.iter().find(|f| f.name == name)
}

/// Text of a bound for the table.
pub fn bound_text(b: Bound) -> String {
    match b {
        None => "impl-defined".into(),
        Some(0.0) => "0 (exact)".into(),
        Some(0.5) => "0.5 (CR)".into(),
        Some(x) => format!("{x}"),
    }
}
