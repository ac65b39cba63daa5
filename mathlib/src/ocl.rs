//! The OpenCL-only functions of the `T -> T` / `(T, T) -> T` shape that C99 and CORE-MATH do not
//! provide: logb, fdim, maxmag, minmag and powr, with the special values of OpenCL 6.7.

macro_rules! float_ops {
    ($t:ident, $mant:expr, $bias:expr, $scale:expr, $scale_exp:expr,
     $logb:ident, $fdim:ident, $maxmag:ident, $minmag:ident, $powr:ident, $pow:path) => {
        /// logb: the unbiased exponent as a float, exact (0 ulp). Subnormals are scaled into the
        /// normal range first so their exponent is the true one, not the format's minimum.
        pub fn $logb(x: $t) -> $t {
            if x.is_nan() {
                return x;
            }
            if x.is_infinite() {
                return $t::INFINITY;
            }
            if x == 0.0 {
                return $t::NEG_INFINITY;
            }
            let (x, adjust) = if x.is_subnormal() {
                (x * $scale, $scale_exp)
            } else {
                (x, 0)
            };
            let e = ((x.to_bits() >> $mant)
                & ((1 << (std::mem::size_of::<$t>() * 8 - 1 - $mant)) - 1)) as i32;
            (e - $bias - adjust) as $t
        }

        /// fdim: x - y when x > y, +0 otherwise, NaN if either is NaN (6.7).
        pub fn $fdim(x: $t, y: $t) -> $t {
            if x.is_nan() || y.is_nan() {
                return x + y;
            }
            if x > y {
                x - y
            } else {
                0.0
            }
        }

        /// maxmag: the argument of larger magnitude; fmax when the magnitudes are equal (so a
        /// NaN loses to a number, and +0 wins over -0 to make the result deterministic).
        pub fn $maxmag(x: $t, y: $t) -> $t {
            let (ax, ay) = (x.abs(), y.abs());
            if ax > ay {
                x
            } else if ay > ax {
                y
            } else if x.is_nan() {
                y
            } else if y.is_nan() || y.is_sign_negative() {
                x
            } else {
                y
            }
        }

        /// minmag: the argument of smaller magnitude; fmin when the magnitudes are equal.
        pub fn $minmag(x: $t, y: $t) -> $t {
            let (ax, ay) = (x.abs(), y.abs());
            if ax < ay {
                x
            } else if ay < ax {
                y
            } else if x.is_nan() {
                y
            } else if y.is_nan() || y.is_sign_positive() {
                x
            } else {
                y
            }
        }

        /// powr: x^y = exp(y log x) for x >= 0 only; every special value of 6.7 is decided here
        /// (they differ from pow's: powr(1, inf), powr(0, 0) and powr(inf, 0) are NaN), the rest
        /// is the correctly rounded pow.
        pub fn $powr(x: $t, y: $t) -> $t {
            if x.is_nan() || y.is_nan() {
                return x + y;
            }
            if x < 0.0 {
                return $t::NAN;
            }
            if x == 0.0 {
                return if y == 0.0 {
                    $t::NAN
                } else if y < 0.0 {
                    $t::INFINITY
                } else {
                    0.0
                };
            }
            if x.is_infinite() {
                return if y == 0.0 {
                    $t::NAN
                } else if y < 0.0 {
                    0.0
                } else {
                    $t::INFINITY
                };
            }
            if x == 1.0 {
                return if y.is_infinite() { $t::NAN } else { 1.0 };
            }
            if y == 0.0 {
                return 1.0;
            }
            $pow(x, y)
        }
    };
}

/// hypot with C99 F.9.4.3's "hypot(±∞, y) returns +∞, even if y is a NaN" also for a
/// signalling NaN (CORE-MATH returns a NaN then; the Khronos CTS feeds signalling halves).
pub fn hypotf(x: f32, y: f32) -> f32 {
    if x.is_infinite() || y.is_infinite() {
        return f32::INFINITY;
    }
    crate::core_math_dispatch::hypotf(x, y)
}

/// [`hypotf`] for double.
pub fn hypot(x: f64, y: f64) -> f64 {
    if x.is_infinite() || y.is_infinite() {
        return f64::INFINITY;
    }
    crate::core_math_dispatch::hypot(x, y)
}

/// pow with C99 F.9.4.4's "pow(+1, y) returns 1 for any y, even a NaN" and "pow(x, ±0)
/// returns 1 for any x, even a NaN" also for signalling NaNs (CORE-MATH returns a NaN then).
pub fn powf(x: f32, y: f32) -> f32 {
    if x == 1.0 || y == 0.0 {
        return 1.0;
    }
    crate::core_math_dispatch::powf(x, y)
}

/// [`powf`] for double.
pub fn pow(x: f64, y: f64) -> f64 {
    if x == 1.0 || y == 0.0 {
        return 1.0;
    }
    crate::core_math_dispatch::pow(x, y)
}

/// The exponent of a finite nonzero float (subnormals included), for ilogb.
pub(crate) fn logb_of<T: LogbOf>(x: T) -> i32 {
    x.logb_i32()
}

pub(crate) trait LogbOf {
    fn logb_i32(self) -> i32;
}
impl LogbOf for f32 {
    fn logb_i32(self) -> i32 {
        logbf(self) as i32
    }
}
impl LogbOf for f64 {
    fn logb_i32(self) -> i32 {
        logb(self) as i32
    }
}

float_ops!(
    f32,
    23,
    127,
    16_777_216.0,
    24,
    logbf,
    fdimf,
    maxmagf,
    minmagf,
    powrf,
    crate::core_math_dispatch::powf
);
float_ops!(
    f64,
    52,
    1023,
    18_014_398_509_481_984.0,
    54,
    logb,
    fdim,
    maxmag,
    minmag,
    powr,
    crate::core_math_dispatch::pow
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logb_is_the_exponent() {
        assert_eq!(logbf(1.0), 0.0);
        assert_eq!(logbf(-10.0), 3.0);
        assert_eq!(logbf(f32::from_bits(1)), -149.0);
        assert_eq!(logbf(f32::MIN_POSITIVE), -126.0);
        assert_eq!(logbf(0.0), f32::NEG_INFINITY);
        assert_eq!(logbf(f32::NEG_INFINITY), f32::INFINITY);
        assert_eq!(logb(f64::from_bits(1)), -1074.0);
        assert_eq!(logb(0.75), -1.0);
    }

    #[test]
    fn powr_edge_cases() {
        assert!(powrf(-2.0, 2.0).is_nan());
        assert!(powrf(0.0, 0.0).is_nan());
        assert!(powrf(f32::INFINITY, -0.0).is_nan());
        assert!(powrf(1.0, f32::INFINITY).is_nan());
        assert_eq!(powrf(-0.0, -3.0), f32::INFINITY);
        assert_eq!(powrf(-0.0, f32::NEG_INFINITY), f32::INFINITY);
        assert_eq!(powrf(-0.0, 3.0).to_bits(), 0);
        assert_eq!(powrf(1.0, 1e30), 1.0);
        assert_eq!(powrf(5.0, -0.0), 1.0);
        assert_eq!(powr(2.0, 10.0), 1024.0);
    }

    #[test]
    fn hypot_of_an_infinity_and_any_nan_is_infinity() {
        let snan32 = f32::from_bits(0x7fa0_0000);
        let snan64 = f64::from_bits(0x7ff4_0000_0000_0000);
        assert_eq!(hypotf(f32::NEG_INFINITY, snan32), f32::INFINITY);
        assert_eq!(hypotf(snan32, f32::INFINITY), f32::INFINITY);
        assert_eq!(hypotf(f32::NAN, f32::INFINITY), f32::INFINITY);
        assert_eq!(hypot(snan64, f64::NEG_INFINITY), f64::INFINITY);
        assert!(hypotf(snan32, 1.0).is_nan());
        assert_eq!(hypotf(3.0, 4.0), 5.0);
    }

    #[test]
    fn pow_of_one_or_to_zero_is_one_for_any_nan() {
        let snan32 = f32::from_bits(0x7fa0_0000);
        let snan64 = f64::from_bits(0x7ff4_0000_0000_0000);
        assert_eq!(powf(1.0, snan32), 1.0);
        assert_eq!(powf(snan32, -0.0), 1.0);
        assert_eq!(pow(1.0, snan64), 1.0);
        assert_eq!(pow(snan64, 0.0), 1.0);
        assert!(powf(snan32, 1.0).is_nan());
        assert_eq!(powf(2.0, 10.0), 1024.0);
    }

    #[test]
    fn magnitudes() {
        assert_eq!(maxmagf(-3.0, 2.0), -3.0);
        assert_eq!(minmagf(-3.0, 2.0), 2.0);
        assert_eq!(maxmagf(-2.0, 2.0), 2.0);
        assert_eq!(minmagf(2.0, -2.0), -2.0);
        assert_eq!(maxmagf(f32::NAN, 1.0), 1.0);
        assert_eq!(minmag(1.0, f64::NAN), 1.0);
        assert_eq!(fdimf(1.0, 3.0).to_bits(), 0);
        assert!(fdim(f64::NAN, 1.0).is_nan());
    }
}
