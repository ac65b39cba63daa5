//! OpenCL.std math for the JIT: `extern "C"` entry points that generated code calls, and the
//! symbol table codegen registers with the JIT (so no symbol is ever looked up with dlsym).
//!
//! Simple operations (fabs, fma, sqrt, floor, min/max, …) are emitted inline by codegen and do
//! not appear here. The transcendental functions come from CORE-MATH (the `core-math-sys` crate):
//! correctly rounded f32 and f64, so every one of them is within 0.5 ulp, far inside the
//! full-profile ULP table, and its special values follow C99 Annex F / IEEE 754-2019, which is
//! what OpenCL 6.7 asks for. The OpenCL-only functions (powr, logb, maxmag, …) are in [`ocl`];
//! entry points whose shape is not `T -> T` or `(T, T) -> T` (frexp, sincos, pown, …) are in
//! [`shapes`], except the correctly rounded double `rootn`, which CORE-MATH lacks, in
//! [`rootn`]; half precision (`_f16`, as `u16` bits) is in [`half`]. `ferrocl-cts` measures the
//! f32/f64 functions codegen calls, through the ICD; the others have unit tests until codegen
//! calls them.

/// The floating-point width of an entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    F32,
    F64,
}

/// The enum of one entry-point family, declared once from the family's list: its OpenCL.std
/// instruction (the key codegen looks it up by) and its two symbols.
macro_rules! entry_point_enum {
    ($(#[$doc:meta])* $enum:ident: $($name:ident),*) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $enum { $($name),* }

        impl $enum {
            pub const ALL: &[$enum] = &[$($enum::$name),*];

            /// The entry point of OpenCL.std instruction `op` (its precise form: codegen maps
            /// `native_`/`half_` forms first).
            pub fn from_opencl_std(op: spirv::OpenclStd100Op) -> Option<Self> {
                match op {
                    $(spirv::OpenclStd100Op::$name => Some($enum::$name),)*
                    _ => None,
                }
            }

            /// The OpenCL name.
            pub fn name(self) -> &'static str {
                match self { $($enum::$name => stringify!($name)),* }
            }

            /// The JIT symbol of the `precision` form.
            pub fn symbol(self, precision: Precision) -> &'static str {
                match (self, precision) {
                    $(
                        ($enum::$name, Precision::F32) => concat!("ferrocl_", stringify!($name), "_f32"),
                        ($enum::$name, Precision::F64) => concat!("ferrocl_", stringify!($name), "_f64"),
                    )*
                }
            }
        }
    };
}

pub mod core_math_dispatch;
#[cfg(test)]
mod edge_cases;
pub mod half;
pub mod ocl;
pub mod rootn;
pub mod shapes;

pub use shapes::Shaped;

/// What the JIT calls for the function at `path` (as `stringify!` writes it): the CORE-MATH C
/// function itself, in the copy this CPU runs, where `path` only forwards to one
/// (`core_math_dispatch::…`), otherwise `wrapper`.
fn entry_point(path: &str, wrapper: *const u8) -> *const u8 {
    let mut segments = path.rsplit("::").map(str::trim);
    match (segments.next(), segments.next()) {
        (Some(name), Some("core_math_dispatch")) => {
            core_math_dispatch::c_entry_point(name).unwrap_or(wrapper)
        }
        _ => wrapper,
    }
}

macro_rules! unary {
    ($($name:ident => $f32:path, $f64:path;)*) => {
        entry_point_enum!(
            /// `T -> T` functions (f32 and f64), by OpenCL name.
            Unary: $($name),*
        );
        pub mod unary {
            $(
                pub mod $name {
                    pub extern "C" fn f32(x: f32) -> f32 { $f32(x) }
                    pub extern "C" fn f64(x: f64) -> f64 { $f64(x) }
                }
            )*
        }
        fn unary_symbols(out: &mut Vec<(String, *const u8)>) {
            $(
                out.push((format!("ferrocl_{}_f32", stringify!($name)), entry_point(stringify!($f32), unary::$name::f32 as *const u8)));
                out.push((format!("ferrocl_{}_f64", stringify!($name)), entry_point(stringify!($f64), unary::$name::f64 as *const u8)));
            )*
        }
    };
}

macro_rules! binary {
    ($($name:ident => $f32:path, $f64:path;)*) => {
        entry_point_enum!(
            /// `(T, T) -> T` functions (f32 and f64), by OpenCL name.
            Binary: $($name),*
        );
        pub mod binary {
            $(
                pub mod $name {
                    pub extern "C" fn f32(x: f32, y: f32) -> f32 { $f32(x, y) }
                    pub extern "C" fn f64(x: f64, y: f64) -> f64 { $f64(x, y) }
                }
            )*
        }
        fn binary_symbols(out: &mut Vec<(String, *const u8)>) {
            $(
                out.push((format!("ferrocl_{}_f32", stringify!($name)), entry_point(stringify!($f32), binary::$name::f32 as *const u8)));
                out.push((format!("ferrocl_{}_f64", stringify!($name)), entry_point(stringify!($f64), binary::$name::f64 as *const u8)));
            )*
        }
    };
}

unary! {
    acos => crate::core_math_dispatch::acosf, crate::core_math_dispatch::acos;
    acosh => crate::core_math_dispatch::acoshf, crate::core_math_dispatch::acosh;
    acospi => crate::core_math_dispatch::acospif, crate::core_math_dispatch::acospi;
    asin => crate::core_math_dispatch::asinf, crate::core_math_dispatch::asin;
    asinh => crate::core_math_dispatch::asinhf, crate::core_math_dispatch::asinh;
    asinpi => crate::core_math_dispatch::asinpif, crate::core_math_dispatch::asinpi;
    atan => crate::core_math_dispatch::atanf, crate::core_math_dispatch::atan;
    atanh => crate::core_math_dispatch::atanhf, crate::core_math_dispatch::atanh;
    atanpi => crate::core_math_dispatch::atanpif, crate::core_math_dispatch::atanpi;
    cbrt => crate::core_math_dispatch::cbrtf, crate::core_math_dispatch::cbrt;
    cos => crate::core_math_dispatch::cosf, crate::core_math_dispatch::cos;
    cosh => crate::core_math_dispatch::coshf, crate::core_math_dispatch::cosh;
    cospi => crate::core_math_dispatch::cospif, crate::core_math_dispatch::cospi;
    erfc => crate::core_math_dispatch::erfcf, crate::core_math_dispatch::erfc;
    erf => crate::core_math_dispatch::erff, crate::core_math_dispatch::erf;
    exp => crate::core_math_dispatch::expf, crate::core_math_dispatch::exp;
    exp2 => crate::core_math_dispatch::exp2f, crate::core_math_dispatch::exp2;
    exp10 => crate::core_math_dispatch::exp10f, crate::core_math_dispatch::exp10;
    expm1 => crate::core_math_dispatch::expm1f, crate::core_math_dispatch::expm1;
    lgamma => crate::core_math_dispatch::lgammaf, crate::core_math_dispatch::lgamma;
    log => crate::core_math_dispatch::logf, crate::core_math_dispatch::log;
    log2 => crate::core_math_dispatch::log2f, crate::core_math_dispatch::log2;
    log10 => crate::core_math_dispatch::log10f, crate::core_math_dispatch::log10;
    log1p => crate::core_math_dispatch::log1pf, crate::core_math_dispatch::log1p;
    logb => crate::ocl::logbf, crate::ocl::logb;
    rsqrt => crate::core_math_dispatch::rsqrtf, crate::core_math_dispatch::rsqrt;
    sin => crate::core_math_dispatch::sinf, crate::core_math_dispatch::sin;
    sinh => crate::core_math_dispatch::sinhf, crate::core_math_dispatch::sinh;
    sinpi => crate::core_math_dispatch::sinpif, crate::core_math_dispatch::sinpi;
    tan => crate::core_math_dispatch::tanf, crate::core_math_dispatch::tan;
    tanh => crate::core_math_dispatch::tanhf, crate::core_math_dispatch::tanh;
    tanpi => crate::core_math_dispatch::tanpif, crate::core_math_dispatch::tanpi;
    tgamma => crate::core_math_dispatch::tgammaf, crate::core_math_dispatch::tgamma;
}

binary! {
    atan2 => crate::core_math_dispatch::atan2f, crate::core_math_dispatch::atan2;
    atan2pi => crate::core_math_dispatch::atan2pif, crate::core_math_dispatch::atan2pi;
    fdim => crate::ocl::fdimf, crate::ocl::fdim;
    hypot => crate::ocl::hypotf, crate::ocl::hypot;
    maxmag => crate::ocl::maxmagf, crate::ocl::maxmag;
    minmag => crate::ocl::minmagf, crate::ocl::minmag;
    pow => crate::ocl::powf, crate::ocl::pow;
    powr => crate::ocl::powrf, crate::ocl::powr;
    remainder => libm::remainderf, libm::remainder;
    nextafter => libm::nextafterf, libm::nextafter;
}

/// Helpers generated code calls for operations Cranelift does not provide, and the libcalls
/// Cranelift itself may emit during legalisation.
pub mod support {
    pub extern "C" fn fmodf(x: f32, y: f32) -> f32 {
        libm::fmodf(x, y)
    }
    pub extern "C" fn fmod(x: f64, y: f64) -> f64 {
        libm::fmod(x, y)
    }
    pub extern "C" fn ceilf(x: f32) -> f32 {
        libm::ceilf(x)
    }
    pub extern "C" fn ceil(x: f64) -> f64 {
        libm::ceil(x)
    }
    pub extern "C" fn floorf(x: f32) -> f32 {
        libm::floorf(x)
    }
    pub extern "C" fn floor(x: f64) -> f64 {
        libm::floor(x)
    }
    pub extern "C" fn truncf(x: f32) -> f32 {
        libm::truncf(x)
    }
    pub extern "C" fn trunc(x: f64) -> f64 {
        libm::trunc(x)
    }
    pub extern "C" fn nearbyintf(x: f32) -> f32 {
        libm::rintf(x)
    }
    pub extern "C" fn nearbyint(x: f64) -> f64 {
        libm::rint(x)
    }
    pub extern "C" fn fmaf(x: f32, y: f32, z: f32) -> f32 {
        libm::fmaf(x, y, z)
    }
    pub extern "C" fn fma(x: f64, y: f64, z: f64) -> f64 {
        libm::fma(x, y, z)
    }
    pub extern "C" fn ldexpf(x: f32, n: i32) -> f32 {
        libm::ldexpf(x, n)
    }
    pub extern "C" fn ldexp(x: f64, n: i32) -> f64 {
        libm::ldexp(x, n)
    }
    /// # Safety
    /// Same contract as C `memmove`.
    pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
        // SAFETY: the caller (JIT code translating OpCopyMemory*) passes valid, possibly
        // overlapping regions of `n` bytes, as memmove allows.
        unsafe { std::ptr::copy(src, dst, n) };
        dst
    }
    /// # Safety
    /// Same contract as C `memcpy`.
    pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
        // SAFETY: Cranelift emits memcpy only for non-overlapping valid regions; `copy`
        // is correct even if they overlapped.
        unsafe { std::ptr::copy(src, dst, n) };
        dst
    }
    /// # Safety
    /// Same contract as C `memset`.
    pub unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
        // SAFETY: valid region of `n` bytes by the caller's contract.
        unsafe { std::ptr::write_bytes(dst, c as u8, n) };
        dst
    }
    /// # Safety
    /// Same contract as C `memcmp`.
    pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
        // SAFETY: both regions are valid for `n` bytes by the caller's contract.
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(a, n),
                std::slice::from_raw_parts(b, n),
            )
        };
        match a.cmp(b) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        }
    }
}

/// Every symbol JIT code may reference, by name.
pub fn symbols() -> Vec<(String, *const u8)> {
    let mut out = Vec::new();
    unary_symbols(&mut out);
    binary_symbols(&mut out);
    let support: [(&str, *const u8); 18] = [
        ("ferrocl_fmodf", support::fmodf as *const u8),
        ("ferrocl_fmod", support::fmod as *const u8),
        ("ferrocl_ceilf", support::ceilf as *const u8),
        ("ferrocl_ceil", support::ceil as *const u8),
        ("ferrocl_floorf", support::floorf as *const u8),
        ("ferrocl_floor", support::floor as *const u8),
        ("ferrocl_truncf", support::truncf as *const u8),
        ("ferrocl_trunc", support::trunc as *const u8),
        ("ferrocl_nearbyintf", support::nearbyintf as *const u8),
        ("ferrocl_nearbyint", support::nearbyint as *const u8),
        ("ferrocl_fmaf", support::fmaf as *const u8),
        ("ferrocl_fma", support::fma as *const u8),
        ("ferrocl_ldexpf", support::ldexpf as *const u8),
        ("ferrocl_ldexp", support::ldexp as *const u8),
        ("ferrocl_memmove", support::memmove as *const u8),
        ("ferrocl_memcpy", support::memcpy as *const u8),
        ("ferrocl_memset", support::memset as *const u8),
        ("ferrocl_memcmp", support::memcmp as *const u8),
    ];
    out.extend(support.iter().map(|(n, p)| (n.to_string(), *p)));
    shapes::symbols(&mut out);
    half::symbols(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JIT calls CORE-MATH's C functions of the chosen copy directly where the OpenCL
    /// function only forwards to one, and the wrappers elsewhere; both compute the same.
    #[test]
    fn core_math_functions_are_called_without_a_wrapper() {
        let syms = symbols();
        let address = |name: &str| syms.iter().find(|(n, _)| n == name).unwrap().1;
        let sin = address("ferrocl_sin_f32");
        assert_eq!(Some(sin), core_math_dispatch::c_entry_point("sinf"));
        assert_ne!(sin, unary::sin::f32 as *const u8);
        assert_eq!(
            Some(address("ferrocl_atan2_f64")),
            core_math_dispatch::c_entry_point("atan2")
        );
        // Not a forwarder: the wrapper stays.
        assert_eq!(address("ferrocl_logb_f32"), unary::logb::f32 as *const u8);
        // SAFETY: `sin` is cr_sinf (of one copy or the other): extern "C" fn(f32) -> f32.
        let sin: extern "C" fn(f32) -> f32 = unsafe { std::mem::transmute(sin) };
        // SAFETY: likewise cr_atan2: extern "C" fn(f64, f64) -> f64.
        let atan2: extern "C" fn(f64, f64) -> f64 =
            unsafe { std::mem::transmute(address("ferrocl_atan2_f64")) };
        for x in [0.5f32, -3.0, 1e-30, 100.0, f32::INFINITY] {
            assert_eq!(sin(x).to_bits(), unary::sin::f32(x).to_bits(), "{x}");
            let d = f64::from(x);
            assert_eq!(
                atan2(d, 1.5).to_bits(),
                binary::atan2::f64(d, 1.5).to_bits(),
                "{x}"
            );
        }
    }

    #[test]
    fn symbol_names_are_unique_and_cover_every_function() {
        let syms = symbols();
        let mut names: Vec<&str> = syms.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
        let typed = Unary::ALL
            .iter()
            .map(|f| f.symbol(Precision::F32))
            .chain(Unary::ALL.iter().map(|f| f.symbol(Precision::F64)))
            .chain(Binary::ALL.iter().map(|f| f.symbol(Precision::F32)))
            .chain(Binary::ALL.iter().map(|f| f.symbol(Precision::F64)))
            .chain(Shaped::ALL.iter().map(|f| f.symbol(Precision::F32)))
            .chain(Shaped::ALL.iter().map(|f| f.symbol(Precision::F64)));
        for symbol in typed {
            assert!(names.contains(&symbol), "{symbol}");
        }
        assert_eq!(
            Unary::from_opencl_std(spirv::OpenclStd100Op::exp10),
            Some(Unary::exp10)
        );
        assert_eq!(Unary::exp10.symbol(Precision::F64), "ferrocl_exp10_f64");
        assert_eq!(Binary::from_opencl_std(spirv::OpenclStd100Op::sin), None);
    }

    #[test]
    fn entry_points_compute() {
        assert_eq!(unary::exp2::f32(3.0), 8.0);
        assert_eq!(binary::pow::f64(2.0, 10.0), 1024.0);
        assert_eq!(support::fmodf(7.5, 2.0), 1.5);
        assert!(support::fmod(1.0, 0.0).is_nan());
    }
}
