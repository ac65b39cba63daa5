//! CORE-MATH through the fastest copy this CPU can run: the x86-64-v3 copy (AVX2, FMA, BMI2;
//! built by `build.rs`, its symbols suffixed `_ferrocl_v3`) when the CPU has those features,
//! otherwise the baseline copy of the `core-math-sys` crate (x86-64-v2, `.cargo/config.toml`).
//! Both are the same correctly rounded functions, so the results are the same bits; only the
//! speed differs (FMA makes the f64 functions 3–4× faster). The choice is made once, at the
//! first call. Rust callers pay a predictable branch per call; the JIT pays nothing: it calls
//! the chosen copy's C function directly ([`c_entry_point`]), since a Rust wrapper around the
//! branch cost the transcendental benchmark 20 %.

#[cfg(ferrocl_core_math_v3)]
use std::sync::atomic::{AtomicU8, Ordering};

/// Whether this process calls the x86-64-v3 copy.
#[inline]
pub fn uses_x86_64_v3() -> bool {
    #[cfg(ferrocl_core_math_v3)]
    {
        // 0: not decided yet, 1: baseline, 2: x86-64-v3.
        static CHOICE: AtomicU8 = AtomicU8::new(0);
        match CHOICE.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => {
                let v3 = cpu_is_x86_64_v3();
                CHOICE.store(if v3 { 2 } else { 1 }, Ordering::Relaxed);
                v3
            }
        }
    }
    #[cfg(not(ferrocl_core_math_v3))]
    {
        false
    }
}

/// The x86-64-v3 microarchitecture level: AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE
/// (and OS support for the AVX state, which the AVX checks include).
#[cfg(ferrocl_core_math_v3)]
fn cpu_is_x86_64_v3() -> bool {
    std::arch::is_x86_feature_detected!("avx")
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("movbe")
}

macro_rules! dispatch {
    ($($f:ident = $sys:ident($($a:ident: $t:ty),+) -> $r:ty;)+) => {
        /// The x86-64-v3 copy's entry points.
        #[cfg(ferrocl_core_math_v3)]
        pub mod x86_64_v3 {
            extern "C" {
                $(
                    #[link_name = concat!(stringify!($sys), "_ferrocl_v3")]
                    pub fn $sys($($a: $t),+) -> $r;
                )+
            }
        }
        /// The C function of CORE-MATH function `name` ("sinf", "pow", …: this module's names)
        /// in the copy this CPU runs, for the JIT to call without a Rust wrapper; None for
        /// other names.
        pub fn c_entry_point(name: &str) -> Option<*const u8> {
            match name {
                $(
                    stringify!($f) => {
                        #[cfg(ferrocl_core_math_v3)]
                        if uses_x86_64_v3() {
                            return Some(x86_64_v3::$sys as *const u8);
                        }
                        Some(core_math_sys::$sys as *const u8)
                    }
                )+
                _ => None,
            }
        }

        $(
            #[inline]
            pub fn $f($($a: $t),+) -> $r {
                #[cfg(ferrocl_core_math_v3)]
                if uses_x86_64_v3() {
                    // SAFETY: the same C function as core_math's, compiled for x86-64-v3,
                    // which uses_x86_64_v3 found this CPU runs; it takes and returns values.
                    return unsafe { x86_64_v3::$sys($($a),+) };
                }
                // SAFETY: CORE-MATH's C function for every x86-64-v2 CPU; it takes and returns
                // values.
                unsafe { core_math_sys::$sys($($a),+) }
            }
        )+
    };
}

dispatch! {
    acos = cr_acos(x: f64) -> f64;
    acosf = cr_acosf(x: f32) -> f32;
    acosh = cr_acosh(x: f64) -> f64;
    acoshf = cr_acoshf(x: f32) -> f32;
    acospi = cr_acospi(x: f64) -> f64;
    acospif = cr_acospif(x: f32) -> f32;
    asin = cr_asin(x: f64) -> f64;
    asinf = cr_asinf(x: f32) -> f32;
    asinh = cr_asinh(x: f64) -> f64;
    asinhf = cr_asinhf(x: f32) -> f32;
    asinpi = cr_asinpi(x: f64) -> f64;
    asinpif = cr_asinpif(x: f32) -> f32;
    atan = cr_atan(x: f64) -> f64;
    atan2 = cr_atan2(y: f64, x: f64) -> f64;
    atan2f = cr_atan2f(y: f32, x: f32) -> f32;
    atan2pi = cr_atan2pi(y: f64, x: f64) -> f64;
    atan2pif = cr_atan2pif(y: f32, x: f32) -> f32;
    atanf = cr_atanf(x: f32) -> f32;
    atanh = cr_atanh(x: f64) -> f64;
    atanhf = cr_atanhf(x: f32) -> f32;
    atanpi = cr_atanpi(x: f64) -> f64;
    atanpif = cr_atanpif(x: f32) -> f32;
    cbrt = cr_cbrt(x: f64) -> f64;
    cbrtf = cr_cbrtf(x: f32) -> f32;
    cos = cr_cos(x: f64) -> f64;
    cosf = cr_cosf(x: f32) -> f32;
    cosh = cr_cosh(x: f64) -> f64;
    coshf = cr_coshf(x: f32) -> f32;
    cospi = cr_cospi(x: f64) -> f64;
    cospif = cr_cospif(x: f32) -> f32;
    erf = cr_erf(x: f64) -> f64;
    erfc = cr_erfc(x: f64) -> f64;
    erfcf = cr_erfcf(x: f32) -> f32;
    erff = cr_erff(x: f32) -> f32;
    exp = cr_exp(x: f64) -> f64;
    exp10 = cr_exp10(x: f64) -> f64;
    exp10f = cr_exp10f(x: f32) -> f32;
    exp2 = cr_exp2(x: f64) -> f64;
    exp2f = cr_exp2f(x: f32) -> f32;
    expf = cr_expf(x: f32) -> f32;
    expm1 = cr_expm1(x: f64) -> f64;
    expm1f = cr_expm1f(x: f32) -> f32;
    hypot = cr_hypot(x: f64, y: f64) -> f64;
    hypotf = cr_hypotf(x: f32, y: f32) -> f32;
    lgamma = cr_lgamma(x: f64) -> f64;
    lgammaf = cr_lgammaf(x: f32) -> f32;
    log = cr_log(x: f64) -> f64;
    log10 = cr_log10(x: f64) -> f64;
    log10f = cr_log10f(x: f32) -> f32;
    log1p = cr_log1p(x: f64) -> f64;
    log1pf = cr_log1pf(x: f32) -> f32;
    log2 = cr_log2(x: f64) -> f64;
    log2f = cr_log2f(x: f32) -> f32;
    logf = cr_logf(x: f32) -> f32;
    pow = cr_pow(x: f64, y: f64) -> f64;
    powf = cr_powf(x: f32, y: f32) -> f32;
    rsqrt = cr_rsqrt(x: f64) -> f64;
    rsqrtf = cr_rsqrtf(x: f32) -> f32;
    sin = cr_sin(x: f64) -> f64;
    sinf = cr_sinf(x: f32) -> f32;
    sinh = cr_sinh(x: f64) -> f64;
    sinhf = cr_sinhf(x: f32) -> f32;
    sinpi = cr_sinpi(x: f64) -> f64;
    sinpif = cr_sinpif(x: f32) -> f32;
    tan = cr_tan(x: f64) -> f64;
    tanf = cr_tanf(x: f32) -> f32;
    tanh = cr_tanh(x: f64) -> f64;
    tanhf = cr_tanhf(x: f32) -> f32;
    tanpi = cr_tanpi(x: f64) -> f64;
    tanpif = cr_tanpif(x: f32) -> f32;
    tgamma = cr_tgamma(x: f64) -> f64;
    tgammaf = cr_tgammaf(x: f32) -> f32;
}

#[cfg(all(test, ferrocl_core_math_v3))]
mod tests {
    use super::*;

    /// Both copies give the same bits: every f32 function on a spread of inputs (special
    /// values, subnormals, a sweep through the exponents), when this CPU runs the v3 copy.
    #[test]
    fn both_copies_agree() {
        if !cpu_is_x86_64_v3() {
            eprintln!("not checked: this CPU is not x86-64-v3");
            return;
        }
        let mut inputs: Vec<f32> = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            1e-40,
            -3.5,
            100.0,
            1e30,
        ];
        let mut bits = 0x0001_2345u32;
        while inputs.len() < 20_000 {
            bits = bits.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
            inputs.push(f32::from_bits(bits));
        }
        let same32 = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let same64 = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for &x in &inputs {
            let d = f64::from(x) * 1.000_000_1;
            // SAFETY: value-in, value-out C functions on a CPU that runs them.
            unsafe {
                assert!(
                    same32(x86_64_v3::cr_expf(x), core_math_sys::cr_expf(x)),
                    "expf {x:e}"
                );
                assert!(
                    same32(x86_64_v3::cr_sinf(x), core_math_sys::cr_sinf(x)),
                    "sinf {x:e}"
                );
                assert!(
                    same32(x86_64_v3::cr_powf(x, 1.37), core_math_sys::cr_powf(x, 1.37)),
                    "powf {x:e}"
                );
                assert!(
                    same32(x86_64_v3::cr_tgammaf(x), core_math_sys::cr_tgammaf(x)),
                    "tgammaf {x:e}"
                );
                assert!(
                    same64(x86_64_v3::cr_sin(d), core_math_sys::cr_sin(d)),
                    "sin {d:e}"
                );
                assert!(
                    same64(x86_64_v3::cr_log(d), core_math_sys::cr_log(d)),
                    "log {d:e}"
                );
                assert!(
                    same64(x86_64_v3::cr_pow(d, -2.5), core_math_sys::cr_pow(d, -2.5)),
                    "pow {d:e}"
                );
                assert!(
                    same64(x86_64_v3::cr_atan2(d, 3.0), core_math_sys::cr_atan2(d, 3.0)),
                    "atan2 {d:e}"
                );
            }
        }
        assert!(uses_x86_64_v3());
    }
}
