//! Entry points whose shape is not `T -> T` or `(T, T) -> T`: out-parameters through pointers
//! (frexp, modf, fract, remquo, sincos, lgamma_r), integer arguments or results (ilogb, ldexp,
//! pown, rootn, nan). Codegen calls them as `ferrocl_<name>_f32` / `_f64` with the C signatures
//! written here; [`symbols`] lists them for the JIT.

macro_rules! shapes {
    ($t:ident, $ti:ident, $sfx:literal, $mant:expr, $bias:expr, $scale:expr, $scale_exp:expr,
     $sin:path, $cos:path, $lgamma:path) => {
        pub mod $t {
            /// frexp: x = m · 2^e with 0.5 <= |m| < 1; ±0, ±inf and NaN are returned with e = 0.
            ///
            /// # Safety
            /// `e` must be valid for a write.
            pub unsafe extern "C" fn frexp(x: $t, e: *mut i32) -> $t {
                let (m, n) = if x == 0.0 || !x.is_finite() {
                    (x, 0)
                } else {
                    let (y, adjust) = if x.is_subnormal() {
                        (x * $scale, $scale_exp)
                    } else {
                        (x, 0)
                    };
                    let bits = y.to_bits();
                    let exp = ((bits >> $mant)
                        & ((1 << (std::mem::size_of::<$t>() * 8 - 1 - $mant)) - 1))
                        as i32;
                    let m = $t::from_bits(
                        (bits
                            & !(((1 << (std::mem::size_of::<$t>() * 8 - 1 - $mant)) - 1) << $mant))
                            | ((($bias - 1) as $ti) << $mant),
                    );
                    (m, exp - ($bias - 1) - adjust)
                };
                // SAFETY: the caller passes a valid pointer.
                unsafe { *e = n };
                m
            }

            /// modf as OpenCL 6.7.2 defines it: iptr = trunc(x), result keeps x's sign, 0 for inf.
            ///
            /// # Safety
            /// `iptr` must be valid for a write.
            pub unsafe extern "C" fn modf(x: $t, iptr: *mut $t) -> $t {
                let i = x.trunc();
                // SAFETY: the caller passes a valid pointer.
                unsafe { *iptr = i };
                let f = if x.is_infinite() { 0.0 } else { x - i };
                f.copysign(x)
            }

            /// fract: min(x - floor(x), largest float below 1), iptr = floor(x); the 6.7 cases
            /// (±0 keep their sign, ±inf give ±0, NaN gives NaN twice) are explicit.
            ///
            /// # Safety
            /// `iptr` must be valid for a write.
            pub unsafe extern "C" fn fract(x: $t, iptr: *mut $t) -> $t {
                let i = x.floor();
                // SAFETY: the caller passes a valid pointer.
                unsafe { *iptr = i };
                if x.is_nan() {
                    return x;
                }
                if x == 0.0 || x.is_infinite() {
                    return (0.0 as $t).copysign(x);
                }
                // x - floor(x) is exact; only the clamp just below 1 (for tiny negative x) rounds.
                (x - i).min(1.0 - $t::EPSILON / 2.0)
            }

            /// remquo: the IEEE remainder, and at least 7 low bits of the quotient with its
            /// sign; quo = 0 when the result is NaN (6.7).
            ///
            /// # Safety
            /// `quo` must be valid for a write.
            pub unsafe extern "C" fn remquo(x: $t, y: $t, quo: *mut i32) -> $t {
                let (r, q) = super::remquo_impl::$t(x, y);
                // SAFETY: the caller passes a valid pointer.
                unsafe { *quo = if r.is_nan() { 0 } else { q } };
                r
            }

            /// sincos: returns sin(x), stores cos(x); both correctly rounded.
            ///
            /// # Safety
            /// `c` must be valid for a write.
            pub unsafe extern "C" fn sincos(x: $t, c: *mut $t) -> $t {
                // SAFETY: the caller passes a valid pointer.
                unsafe { *c = $cos(x) };
                $sin(x)
            }

            /// lgamma_r: lgamma(x) and the sign of Γ(x) in `sign`: 0 for zero, negative
            /// integers (6.7), -inf and NaN, where Γ has no sign.
            ///
            /// # Safety
            /// `sign` must be valid for a write.
            pub unsafe extern "C" fn lgamma_r(x: $t, sign: *mut i32) -> $t {
                let s =
                    if x.is_nan() || x == 0.0 || (x < 0.0 && (x.is_infinite() || x == x.floor())) {
                        0
                    } else if x > 0.0 {
                        1
                    } else if (x.floor() as f64 / 2.0).fract() != 0.0 {
                        // Γ is negative on (-1, 0), (-3, -2), …: where floor(x) is odd.
                        -1
                    } else {
                        1
                    };
                // SAFETY: the caller passes a valid pointer.
                unsafe { *sign = s };
                $lgamma(x)
            }

            /// ilogb: the exponent as an int; FP_ILOGB0 = INT_MIN for 0 and FP_ILOGBNAN = INT_MAX
            /// for NaN (clang's opencl-c-base.h), INT_MAX for ±inf.
            pub extern "C" fn ilogb(x: $t) -> i32 {
                if x.is_nan() || x.is_infinite() {
                    return i32::MAX;
                }
                if x == 0.0 {
                    return i32::MIN;
                }
                crate::ocl::logb_of(x)
            }

            /// ldexp: x · 2^n, correctly rounded (also reachable as `ferrocl_ldexpf`/`ferrocl_ldexp`).
            pub extern "C" fn ldexp(x: $t, n: i32) -> $t {
                super::ldexp_impl::$t(x, n)
            }

            /// pown: x^n for an int n; pown(x, 0) = 1 for every x (6.7).
            pub extern "C" fn pown(x: $t, n: i32) -> $t {
                if n == 0 {
                    return 1.0;
                }
                super::pown_impl::$t(x, n)
            }

            /// rootn: the n-th root; NaN for n = 0 and for x < 0 with even n (6.7).
            pub extern "C" fn rootn(x: $t, n: i32) -> $t {
                super::rootn_impl::$t(x, n)
            }

            /// nan: a quiet NaN carrying the low bits of `code` as payload.
            pub extern "C" fn nan(code: $ti) -> $t {
                let quiet = 1 << ($mant - 1);
                $t::from_bits(
                    ((((1 as $ti) << (std::mem::size_of::<$t>() * 8 - 1 - $mant)) - 1) << $mant)
                        | quiet
                        | (code & (quiet - 1)),
                )
            }
        }
    };
}

shapes!(
    f32,
    u32,
    "f32",
    23,
    127,
    16_777_216.0,
    24,
    crate::core_math_dispatch::sinf,
    crate::core_math_dispatch::cosf,
    crate::core_math_dispatch::lgammaf
);
shapes!(
    f64,
    u64,
    "f64",
    52,
    1023,
    18_014_398_509_481_984.0,
    54,
    crate::core_math_dispatch::sin,
    crate::core_math_dispatch::cos,
    crate::core_math_dispatch::lgamma
);

mod remquo_impl {
    pub fn f32(x: f32, y: f32) -> (f32, i32) {
        libm::remquof(x, y)
    }
    pub fn f64(x: f64, y: f64) -> (f64, i32) {
        libm::remquo(x, y)
    }
}

mod ldexp_impl {
    pub fn f32(x: f32, n: i32) -> f32 {
        libm::ldexpf(x, n)
    }
    pub fn f64(x: f64, n: i32) -> f64 {
        libm::ldexp(x, n)
    }
}

mod pown_impl {
    /// In f64 through the correctly rounded pow: n is exact in f64, and one rounding of a
    /// correctly rounded double to float errs by at most 0.5 ulp + 2^-29 ulp.
    pub fn f32(x: f32, n: i32) -> f32 {
        crate::core_math_dispatch::pow(f64::from(x), f64::from(n)) as f32
    }
    /// n is exact in f64, so this is the correctly rounded x^n.
    pub fn f64(x: f64, n: i32) -> f64 {
        crate::core_math_dispatch::pow(x, f64::from(n))
    }
}

mod rootn_impl {
    fn special<T: Into<f64> + Copy>(x: T, n: i32) -> Option<f64> {
        let xf: f64 = x.into();
        if n == 0 || xf.is_nan() || (xf < 0.0 && n % 2 == 0) {
            return Some(f64::NAN);
        }
        if xf == 0.0 {
            let odd = n % 2 != 0;
            let mag = if n < 0 { f64::INFINITY } else { 0.0 };
            return Some(if odd { mag.copysign(xf) } else { mag });
        }
        if xf.is_infinite() {
            let mag = if n < 0 { 0.0 } else { f64::INFINITY };
            return Some(mag.copysign(xf));
        }
        None
    }

    /// In f64: |x|^(1/n) where fl(1/n) has relative error 2^-53 that the exponent
    /// ln|x|/n <= 89 magnifies to at most 2^-46 — far below a float ulp.
    pub fn f32(x: f32, n: i32) -> f32 {
        if let Some(s) = special(x, n) {
            return s as f32;
        }
        let a = f64::from(x.abs());
        let r = crate::core_math_dispatch::pow(a, 1.0 / f64::from(n));
        (r as f32).copysign(x)
    }

    /// Correctly rounded for every x and n: the `rootn` module (three phases, the last exact).
    pub fn f64(x: f64, n: i32) -> f64 {
        if let Some(s) = special(x, n) {
            return s;
        }
        crate::rootn::of_positive(x.abs(), n).copysign(x)
    }
}

use crate::Precision;

macro_rules! shaped {
    ($($name:ident),*) => {
        entry_point_enum!(
            /// Functions of other shapes (an out-pointer, an int argument or result), by
            /// OpenCL name; each one's signature is in its `f32`/`f64` module.
            Shaped: $($name),*
        );

        /// Symbols of this module, for [`crate::symbols`].
        pub(crate) fn symbols(out: &mut Vec<(String, *const u8)>) {
            $(
                out.push((Shaped::$name.symbol(Precision::F32).to_owned(), f32::$name as *const u8));
                out.push((Shaped::$name.symbol(Precision::F64).to_owned(), f64::$name as *const u8));
            )*
        }
    };
}

shaped!(frexp, modf, fract, remquo, sincos, lgamma_r, ilogb, ldexp, pown, rootn, nan);

#[cfg(test)]
mod tests {
    #[test]
    fn frexp_modf_fract() {
        let mut e = 0;
        // SAFETY: valid pointers to locals throughout.
        unsafe {
            assert_eq!(super::f32::frexp(8.0, &mut e), 0.5);
            assert_eq!(e, 4);
            assert_eq!(super::f32::frexp(f32::from_bits(1), &mut e), 0.5);
            assert_eq!(e, -148);
            assert_eq!(super::f64::frexp(-0.75, &mut e), -0.75);
            assert_eq!(e, 0);
            assert_eq!(super::f64::frexp(f64::INFINITY, &mut e), f64::INFINITY);
            assert_eq!(e, 0);
            let mut i = 0.0f32;
            assert_eq!(super::f32::modf(-3.5, &mut i), -0.5);
            assert_eq!(i, -3.0);
            assert_eq!(
                super::f32::modf(f32::NEG_INFINITY, &mut i).to_bits(),
                (-0.0f32).to_bits()
            );
            assert_eq!(super::f32::fract(-1e-30, &mut i), 1.0 - f32::EPSILON / 2.0);
            assert_eq!(i, -1.0);
            assert_eq!(
                super::f32::fract(-0.0, &mut i).to_bits(),
                (-0.0f32).to_bits()
            );
            assert_eq!(super::f32::fract(f32::INFINITY, &mut i), 0.0);
            assert_eq!(i, f32::INFINITY);
            let mut s = 7;
            super::f32::lgamma_r(-0.5, &mut s);
            assert_eq!(s, -1);
            super::f32::lgamma_r(-1.5, &mut s);
            assert_eq!(s, 1);
            super::f64::lgamma_r(-2.0, &mut s);
            assert_eq!(s, 0);
            let mut q = 9;
            assert!(super::f32::remquo(1.0, 0.0, &mut q).is_nan());
            assert_eq!(q, 0);
            assert_eq!(super::f32::remquo(7.0, 2.0, &mut q), -1.0);
            assert_eq!(q & 0x7f, 4);
        }
    }

    #[test]
    fn integer_shapes() {
        assert_eq!(super::f32::ilogb(0.0), i32::MIN);
        assert_eq!(super::f32::ilogb(f32::from_bits(1)), -149);
        assert_eq!(super::f64::ilogb(1024.0), 10);
        assert_eq!(super::f32::pown(f32::NAN, 0), 1.0);
        assert_eq!(super::f32::pown(-0.0, -3), f32::NEG_INFINITY);
        assert_eq!(super::f64::pown(3.0, 4), 81.0);
        assert_eq!(super::f32::rootn(-8.0, 3), -2.0);
        assert!(super::f32::rootn(-8.0, 2).is_nan());
        assert!(super::f32::rootn(8.0, 0).is_nan());
        assert_eq!(super::f64::rootn(-0.0, -3), f64::NEG_INFINITY);
        assert_eq!(super::f64::rootn(1e300, 100), 1e3);
        assert_eq!(super::f64::rootn(2f64.powi(-1000), 5), 2f64.powi(-200));
        assert!(super::f32::nan(5).is_nan());
        assert_eq!(super::f32::nan(5).to_bits(), 0x7fc0_0005);
    }
}
