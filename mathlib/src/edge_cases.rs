//! Unit tests of the OpenCL 6.7 edge cases for the f32 and f64 entry points (the checker covers
//! them through the ICD as well; these run without a device and name each rule).

macro_rules! edge_tests {
    ($t:ident, $m:ident) => {
        mod $m {
            use crate::binary as b;
            use crate::unary as u;
            const INF: $t = $t::INFINITY;

            fn same(x: $t, y: $t) -> bool {
                (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
            }

            macro_rules! expect {
                ($e:expr, $v:expr) => {
                    assert!(same($e, $v), "{} = {:?}, expected {:?}", stringify!($e), $e, $v)
                };
            }

            #[test]
            fn pi_functions() {
                expect!(u::acospi::$t(1.0), 0.0);
                assert!(u::acospi::$t(1.5).is_nan());
                expect!(u::asinpi::$t(-0.0), -0.0);
                assert!(u::asinpi::$t(-2.0).is_nan());
                expect!(u::atanpi::$t(-0.0), -0.0);
                expect!(u::atanpi::$t(INF), 0.5);
                expect!(u::atanpi::$t(-INF), -0.5);
                expect!(b::atan2pi::$t(0.0, -0.0), 1.0);
                expect!(b::atan2pi::$t(-0.0, -0.0), -1.0);
                expect!(b::atan2pi::$t(-0.0, 0.0), -0.0);
                expect!(b::atan2pi::$t(0.0, -3.0), 1.0);
                expect!(b::atan2pi::$t(-0.0, 3.0), -0.0);
                expect!(b::atan2pi::$t(-2.0, 0.0), -0.5);
                expect!(b::atan2pi::$t(2.0, -0.0), 0.5);
                expect!(b::atan2pi::$t(-2.0, -INF), -1.0);
                expect!(b::atan2pi::$t(2.0, INF), 0.0);
                expect!(b::atan2pi::$t(-INF, 5.0), -0.5);
                expect!(b::atan2pi::$t(INF, -INF), 0.75);
                expect!(b::atan2pi::$t(-INF, INF), -0.25);
            }

            #[test]
            fn sinpi_cospi_tanpi() {
                expect!(u::sinpi::$t(-0.0), -0.0);
                expect!(u::sinpi::$t(3.0), 0.0);
                expect!(u::sinpi::$t(-3.0), -0.0);
                expect!(u::sinpi::$t(-4.0), -0.0);
                assert!(u::sinpi::$t(INF).is_nan());
                expect!(u::cospi::$t(-0.0), 1.0);
                expect!(u::cospi::$t(2.5), 0.0);
                expect!(u::cospi::$t(-7.5), 0.0);
                assert!(u::cospi::$t(-INF).is_nan());
                expect!(u::tanpi::$t(-0.0), -0.0);
                assert!(u::tanpi::$t(INF).is_nan());
                expect!(u::tanpi::$t(2.0), 0.0);
                expect!(u::tanpi::$t(-2.0), -0.0);
                expect!(u::tanpi::$t(3.0), -0.0);
                expect!(u::tanpi::$t(-3.0), 0.0);
                expect!(u::tanpi::$t(0.5), INF);
                expect!(u::tanpi::$t(2.5), INF);
                expect!(u::tanpi::$t(1.5), -INF);
                expect!(u::tanpi::$t(-0.5), -INF);
            }

            #[test]
            fn exp_log_pow() {
                expect!(u::exp10::$t(-0.0), 1.0);
                expect!(u::exp10::$t(-INF), 0.0);
                expect!(u::exp10::$t(INF), INF);
                expect!(b::pow::$t(0.0, -INF), INF);
                expect!(b::pow::$t(-0.0, -INF), INF);
                expect!(b::pow::$t($t::NAN, 0.0), 1.0);
                expect!(b::pow::$t(1.0, $t::NAN), 1.0);
                expect!(b::pow::$t(-1.0, INF), 1.0);
                expect!(b::pow::$t(-0.0, -3.0), -INF);
                expect!(u::log::$t(-0.0), -INF);
                expect!(u::log1p::$t(-0.0), -0.0);
                expect!(u::expm1::$t(-0.0), -0.0);
                expect!(u::logb::$t(-0.0), -INF);
            }

            #[test]
            fn odd_functions_keep_the_sign_of_zero() {
                for f in [u::sin::$t, u::tan::$t, u::asin::$t, u::atan::$t, u::sinh::$t, u::tanh::$t,
                          u::asinh::$t, u::atanh::$t, u::cbrt::$t, u::erf::$t] {
                    expect!(f(-0.0), -0.0);
                    expect!(f(0.0), 0.0);
                }
            }

            #[test]
            fn powr_maxmag_minmag_fdim() {
                expect!(b::powr::$t(2.0, -0.0), 1.0);
                expect!(b::powr::$t(-0.0, -1.0), INF);
                expect!(b::powr::$t(0.0, -INF), INF);
                expect!(b::powr::$t(-0.0, 2.0), 0.0);
                expect!(b::powr::$t(1.0, 5.0), 1.0);
                assert!(b::powr::$t(-1.0, 2.0).is_nan());
                assert!(b::powr::$t(0.0, 0.0).is_nan());
                assert!(b::powr::$t(INF, 0.0).is_nan());
                assert!(b::powr::$t(1.0, -INF).is_nan());
                assert!(b::powr::$t(2.0, $t::NAN).is_nan());
                assert!(b::powr::$t($t::NAN, 0.0).is_nan());
                assert!(b::fdim::$t(1.0, $t::NAN).is_nan());
                assert!(b::fdim::$t($t::NAN, 1.0).is_nan());
                expect!(b::maxmag::$t(-5.0, 4.0), -5.0);
                expect!(b::minmag::$t(-5.0, 4.0), 4.0);
            }

            #[test]
            fn nextafter_from_zero_reaches_the_smallest_subnormal() {
                expect!(b::nextafter::$t(-0.0, 1.0), $t::from_bits(1));
                expect!(b::nextafter::$t(0.0, -1.0), -$t::from_bits(1));
            }
        }
    };
}

edge_tests!(f32, float);
edge_tests!(f64, double);
