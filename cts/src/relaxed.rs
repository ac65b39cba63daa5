//! What a program's math build options let the device do, and so how the checker judges it:
//! `-cl-unsafe-math-optimizations` (and `-cl-fast-relaxed-math`) relax single precision to
//! table 7 of the env spec (6.6.3, "ULP values for single precision math instructions with
//! -cl-unsafe-math-optimizations"), `-cl-finite-math-only` leaves results for infinite or NaN
//! arguments and results undefined, `-cl-no-signed-zeros` the sign of zero, and
//! `-cl-denorms-are-zero` brings the flush-to-zero rules. Table 7 is applied the way the CTS's
//! math_brute_force applies it in its relaxed mode: absolute errors on the stated domains and
//! any result outside them, `3 + floor(|2x|)` ulp for exp and exp2, and for the functions with a
//! "derived implementation" the result is accepted within 8192 ulp of the exact value or of the
//! derived formula evaluated in float (reference.c, `relaxed_*`).

/// The math licences of a build option string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MathOptions {
    /// `-cl-unsafe-math-optimizations` or `-cl-fast-relaxed-math`: table 7 for float, and the
    /// 6.7 edge cases may be violated (API spec 5.8.4.3 (d)).
    pub unsafe_math: bool,
    /// `-cl-finite-math-only` or `-cl-fast-relaxed-math`.
    pub finite_only: bool,
    /// `-cl-no-signed-zeros`, implied by the two above.
    pub no_signed_zeros: bool,
    /// `-cl-denorms-are-zero`: float subnormals may be flushed (the CTS's FTZ rules).
    pub denorms_are_zero: bool,
    /// `-cl-fp32-correctly-rounded-divide-sqrt`.
    pub correctly_rounded_divide_sqrt: bool,
}

/// The option that asks for correctly rounded float `/` and `sqrt`.
pub const CR_DIVIDE_SQRT: &str = "-cl-fp32-correctly-rounded-divide-sqrt";

impl MathOptions {
    pub fn parse(options: &str) -> MathOptions {
        let mut m = MathOptions::default();
        for w in options.split_whitespace() {
            match w {
                "-cl-fast-relaxed-math" => {
                    m.unsafe_math = true;
                    m.finite_only = true;
                    m.no_signed_zeros = true;
                }
                "-cl-unsafe-math-optimizations" => {
                    m.unsafe_math = true;
                    m.no_signed_zeros = true;
                }
                "-cl-finite-math-only" => m.finite_only = true,
                "-cl-no-signed-zeros" => m.no_signed_zeros = true,
                "-cl-denorms-are-zero" => m.denorms_are_zero = true,
                CR_DIVIDE_SQRT => m.correctly_rounded_divide_sqrt = true,
                _ => {}
            }
        }
        m
    }
}

/// Where a table 7 function is defined at all (elsewhere any result is accepted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    All,
    /// cosh, sinh: x in [-88, 88].
    Within88,
    /// atanh: x in (-1, 1).
    OpenUnit,
    /// tanpi: the 8192 ulp bound holds on [-1, 1].
    Unit,
    /// pow: not x = y = 0, not x < 0 with y non-integer or |y| > 2^24; x = 0 may return 0.
    Pow,
    /// pown (n = INT(b)): not x = n = 0.
    Pown,
    /// powr: x >= 0, not x = y = 0.
    Powr,
    /// rootn (n = INT(b)): x > 0 with n != 0, x < 0 with n odd, x = ±0 with n > 0 (may be +0).
    Rootn,
}

/// `INT(b)` of the checker's kernels: `(int)fmod(b, 64)`, NaN giving 0.
pub fn small_int(b: f64) -> i32 {
    let m = b % 64.0;
    if m.is_nan() {
        0
    } else {
        m as i32
    }
}

impl Domain {
    pub fn defined(self, a: f64, b: f64) -> bool {
        match self {
            Domain::All => true,
            Domain::Within88 => a.abs() <= 88.0,
            Domain::OpenUnit => a.abs() < 1.0,
            Domain::Unit => a.abs() <= 1.0,
            Domain::Pow => {
                !(a == 0.0 && b == 0.0) && !(a < 0.0 && (b != b.floor() || b.abs() > 16_777_216.0))
            }
            Domain::Pown => !(a == 0.0 && small_int(b) == 0),
            Domain::Powr => a >= 0.0 && !(a == 0.0 && b == 0.0),
            Domain::Rootn => {
                let n = small_int(b);
                (a > 0.0 && n != 0) || (a < 0.0 && n % 2 != 0) || (a == 0.0 && n > 0)
            }
        }
    }

    /// The table lets a derived implementation return +0 here.
    pub fn zero_allowed(self, a: f64, b: f64) -> bool {
        match self {
            Domain::Pow => a == 0.0 && b != 0.0,
            Domain::Rootn => a == 0.0 && small_int(b) > 0,
            _ => false,
        }
    }
}

/// One table 7 entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// A bound in ulps (acos, asin, atan: 4096).
    Ulp(f64),
    /// Absolute error at most `abs` for x in [-limit, limit]; "larger otherwise": any result.
    AbsWithin { limit: f64, abs: f64 },
    /// exp, exp2: 3 + floor(|2x|) ulp.
    ExpUlp,
    /// log, log2, log10: absolute error at most 2^-21 for x in [0.5, 2], else 3 ulp.
    LogAbs,
    /// x / y: 2.5 ulp for |x| and |y| in [2^-62, 2^62]; any result outside.
    Divide,
    /// Derived implementations may compute `formula` (reference.c `reference`); others are
    /// within 8192 ulp.
    Derived {
        reference: &'static str,
        formula: &'static str,
        domain: Domain,
    },
}

/// The non-derived bound of table 7.
pub const DERIVED_ULPS: f64 = 8192.0;

const fn derived(reference: &'static str, formula: &'static str, domain: Domain) -> Rule {
    Rule::Derived {
        reference,
        formula,
        domain,
    }
}

/// The table 7 rule of a float row of the checker (by its name in funcs.rs); None: the
/// full-profile bound still applies.
pub fn rule(name: &str) -> Option<Rule> {
    use Domain::*;
    let pi = std::f64::consts::PI;
    Some(match name {
        "divide" => Rule::Divide,
        "acos" | "asin" | "atan" => Rule::Ulp(4096.0),
        "sin" | "cos" | "sincos" | "sincos.cos" => Rule::AbsWithin {
            limit: pi,
            abs: 1.0 / 2048.0,
        },
        "sinpi" | "cospi" => Rule::AbsWithin {
            limit: 1.0,
            abs: 1.0 / 2048.0,
        },
        "exp" | "exp2" => Rule::ExpUlp,
        "log" | "log2" | "log10" => Rule::LogAbs,
        "acosh" => derived("relaxed_acosh", "log(x + sqrt(x*x - 1))", All),
        "asinh" => derived("relaxed_asinh", "log(x + sqrt(x*x + 1))", All),
        "acospi" => derived("relaxed_acospi", "acos(x) * M_1_PI_F", All),
        "asinpi" => derived("relaxed_asinpi", "asin(x) * M_1_PI_F", All),
        "atanpi" => derived("relaxed_atanpi", "atan(x) * M_1_PI_F", All),
        "atanh" => derived("relaxed_atanh", "x, or 0.5f * log((1+x)/(1-x))", OpenUnit),
        "atan2" => derived("relaxed_atan2", "atan(y/x) ± M_PI_F", All),
        "atan2pi" => derived("relaxed_atan2pi", "atan2(y, x) * M_1_PI_F", All),
        "cbrt" => derived("relaxed_cbrt", "rootn(x, 3)", All),
        "cosh" => derived("relaxed_cosh", "0.5f * (exp(x) + exp(-x))", Within88),
        "exp10" => derived("relaxed_exp10", "exp2(x * log2(10))", All),
        "expm1" => derived("relaxed_expm1", "exp(x) - 1", All),
        "log1p" => derived("relaxed_log1p", "log(x + 1)", All),
        "pow" => derived("relaxed_pow", "±exp2(y * log2(fabs(x)))", Pow),
        "pown" => derived("relaxed_pown", "±exp2(y * log2(fabs(x)))", Pown),
        "powr" => derived("relaxed_powr", "exp2(y * log2(x))", Powr),
        "rootn" => derived("relaxed_rootn", "±exp2(log2(fabs(x)) / y)", Rootn),
        "sinh" => derived("relaxed_sinh", "x, or 0.5f * (exp(x) - exp(-x))", Within88),
        "tan" => derived("relaxed_tan", "sin(x) * (1.0f / cos(x))", All),
        "tanh" => derived(
            "relaxed_tanh",
            "x, or (exp(x) - exp(-x)) / (exp(x) + exp(-x))",
            All,
        ),
        "tanpi" => derived("relaxed_tanpi", "tan(x * M_PI_F)", Unit),
        _ => return None,
    })
}

/// The bound column's text for a table 7 row.
pub fn rule_text(rule: Rule) -> String {
    match rule {
        Rule::Ulp(u) => format!("T7: {u}"),
        Rule::AbsWithin { limit, abs } => {
            let range = if limit == 1.0 { "1" } else { "π" };
            format!("T7: abs {abs:e} on [-{range}, {range}]")
        }
        Rule::ExpUlp => "T7: 3 + ⌊|2x|⌋".into(),
        Rule::LogAbs => "T7: abs 2^-21 on [0.5, 2], else 3".into(),
        Rule::Divide => "T7: 2.5 on [2^-62, 2^62]".into(),
        Rule::Derived { formula, .. } => format!("T7: 8192 or `{formula}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Reference;
    use crate::ulp::F32;

    #[test]
    fn options_imply_what_the_spec_says() {
        let fast = MathOptions::parse("-cl-fast-relaxed-math");
        assert!(fast.unsafe_math && fast.finite_only && fast.no_signed_zeros);
        assert!(!fast.denorms_are_zero && !fast.correctly_rounded_divide_sqrt);
        let unsafe_math = MathOptions::parse("-D X=1 -cl-unsafe-math-optimizations");
        assert!(unsafe_math.unsafe_math && unsafe_math.no_signed_zeros && !unsafe_math.finite_only);
        assert_eq!(MathOptions::parse(""), MathOptions::default());
        assert!(MathOptions::parse(CR_DIVIDE_SQRT).correctly_rounded_divide_sqrt);
    }

    #[test]
    fn domains() {
        assert!(!Domain::Pow.defined(0.0, 0.0));
        assert!(!Domain::Pow.defined(-2.0, 0.5));
        assert!(!Domain::Pow.defined(-2.0, 3.3e7));
        assert!(Domain::Pow.defined(-2.0, 3.0));
        assert!(Domain::Pow.zero_allowed(0.0, 3.0));
        assert!(!Domain::Powr.defined(-1.0, 2.0));
        // INT(b) = (int)fmod(b, 64): 67 → 3, odd.
        assert!(Domain::Rootn.defined(-8.0, 67.0));
        assert!(!Domain::Rootn.defined(-8.0, 66.0));
        assert!(Domain::Rootn.zero_allowed(0.0, 3.0));
        assert!(!Domain::Rootn.defined(0.0, -3.0));
        assert!(!Domain::Pown.defined(0.0, 128.0));
        assert!(!Domain::OpenUnit.defined(1.0, 0.0));
        assert!(!Domain::Within88.defined(-88.5, 0.0));
    }

    #[test]
    fn derived_formulas_are_float_evaluations() {
        let one =
            |name: &str, a: f64, b: f64| Reference::by_name(name).unwrap().one(F32, a, b, 0.0);
        // Each step rounded to float: exp2(3 * log2(2)) is exactly 8.
        assert_eq!(one("relaxed_pow", 2.0, 3.0), (8.0, 0.0));
        assert_eq!(one("relaxed_pow", -2.0, 3.0).0, -8.0);
        assert!(one("relaxed_pow", 0.0, 3.0).0.is_nan());
        assert_eq!(one("relaxed_rootn", -8.0, 3.0).0, -2.0);
        assert_eq!(one("relaxed_rootn", 0.0, 2.0).0, 0.0);
        assert_eq!(one("relaxed_sinh", 1e-4, 0.0).0, f64::from(1e-4f32));
        assert!(one("relaxed_atan2", 1.0, 0.0).0.is_nan());
        // atan2 in the second quadrant: atan(y/x) + pi.
        let (h, _) = one("relaxed_atan2", 1.0, -1.0);
        assert!((h - 3.0 * std::f64::consts::FRAC_PI_4).abs() < 1e-6, "{h}");
        // exp10 through a float log2(10): not exactly 1000.
        let (h, _) = one("relaxed_exp10", 3.0, 0.0);
        assert!((h - 1000.0).abs() < 1e-3 && h == f64::from(h as f32), "{h}");
        let (h, _) = one("relaxed_acospi", 0.0, 0.0);
        assert!((h - 0.5).abs() < 1e-7 && h == f64::from(h as f32), "{h}");
        for name in [
            "acosh", "tan", "tanpi", "pown", "expm1", "log1p", "cbrt", "tanh",
        ] {
            let Some(Rule::Derived { reference, .. }) = rule(name) else {
                panic!("{name}");
            };
            assert!(Reference::by_name(reference).is_some(), "{reference}");
        }
    }
}
