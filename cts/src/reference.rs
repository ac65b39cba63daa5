//! Safe wrapper of the long double reference functions in `reference.c` (glibc libm).

use std::ffi::{c_char, c_int, CString};

use crate::ulp::Format;

extern "C" {
    fn ferrocl_cts_ref_id(name: *const c_char) -> c_int;
    fn ferrocl_cts_ref_eval(
        id: c_int,
        prec: c_int,
        n: usize,
        a: *const f64,
        b: *const f64,
        c: *const f64,
        hi: *mut f64,
        lo: *mut f64,
    );
}

/// A reference function, found by its name in the C table.
#[derive(Clone, Copy, Debug)]
pub struct Reference {
    id: c_int,
}

impl Reference {
    pub fn by_name(name: &str) -> Option<Reference> {
        let c = CString::new(name).ok()?;
        // SAFETY: a valid NUL-terminated string; the function only reads it.
        let id = unsafe { ferrocl_cts_ref_id(c.as_ptr()) };
        (id >= 0).then_some(Reference { id })
    }

    /// Evaluates on `a` (and `b`, `c` for binary / ternary functions; shorter slices are
    /// replaced by `a`, never read past). `fmt` selects the format for format-defined
    /// functions (nextafter, float and half fma). Results are hi + lo double-doubles.
    pub fn eval(
        &self,
        fmt: Format,
        a: &[f64],
        b: &[f64],
        c: &[f64],
        hi: &mut [f64],
        lo: &mut [f64],
    ) {
        let n = a.len();
        assert!(hi.len() >= n && lo.len() >= n);
        let b = if b.len() >= n { b } else { a };
        let c = if c.len() >= n { c } else { a };
        // The references see a signalling NaN as the quiet NaN the functions must treat it
        // as (libm may return a NaN for hypot(inf, sNaN) where C99 wants inf).
        let quiet = |x: &[f64]| -> Option<Vec<f64>> {
            x.iter().any(|&v| crate::ulp::is_signalling(v)).then(|| {
                x.iter()
                    .map(|&v| {
                        if crate::ulp::is_signalling(v) {
                            f64::NAN.copysign(v)
                        } else {
                            v
                        }
                    })
                    .collect()
            })
        };
        let (qa, qb, qc) = (quiet(&a[..n]), quiet(&b[..n]), quiet(&c[..n]));
        let a = qa.as_deref().unwrap_or(a);
        let b = qb.as_deref().unwrap_or(b);
        let c = qc.as_deref().unwrap_or(c);
        // SAFETY: every slice holds at least n elements; the C code reads a/b/c and writes hi/lo
        // within 0..n and keeps no pointer.
        unsafe {
            ferrocl_cts_ref_eval(
                self.id,
                match fmt.mant_dig {
                    24 => 0,
                    53 => 1,
                    _ => 2,
                },
                n,
                a.as_ptr(),
                b.as_ptr(),
                c.as_ptr(),
                hi.as_mut_ptr(),
                lo.as_mut_ptr(),
            )
        }
    }

    /// One value, for tests and spot checks.
    pub fn one(&self, fmt: Format, a: f64, b: f64, c: f64) -> (f64, f64) {
        let (mut hi, mut lo) = ([0.0], [0.0]);
        self.eval(fmt, &[a], &[b], &[c], &mut hi, &mut lo);
        (hi[0], lo[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ulp::{F16, F32, F64};

    fn r(name: &str) -> Reference {
        Reference::by_name(name).unwrap()
    }

    #[test]
    fn references_are_accurate_and_exact_where_prescribed() {
        assert!(Reference::by_name("no-such-function").is_none());
        let (hi, lo) = r("sin").one(F64, 1.0, 0.0, 0.0);
        assert_eq!(hi, 1.0f64.sin());
        assert!(lo.abs() < 1e-16);
        assert_eq!(
            r("sinpi").one(F32, -3.0, 0.0, 0.0).0.to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(r("sinpi").one(F32, 2.0, 0.0, 0.0).0.to_bits(), 0);
        assert_eq!(r("sinpi").one(F32, 0.5, 0.0, 0.0).0, 1.0);
        assert_eq!(r("cospi").one(F32, 2.5, 0.0, 0.0).0.to_bits(), 0);
        assert_eq!(r("cospi").one(F32, -7.5, 0.0, 0.0).0.to_bits(), 0);
        assert_eq!(
            r("tanpi").one(F32, 1.0, 0.0, 0.0).0.to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(
            r("tanpi").one(F32, -2.0, 0.0, 0.0).0.to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(r("tanpi").one(F32, 0.5, 0.0, 0.0).0, f64::INFINITY);
        assert_eq!(r("tanpi").one(F32, 1.5, 0.0, 0.0).0, f64::NEG_INFINITY);
        assert!(r("powr").one(F32, 1.0, f64::INFINITY, 0.0).0.is_nan());
        assert_eq!(r("pow").one(F32, 1.0, f64::NAN, 0.0).0, 1.0);
        // sinpi of a tiny argument: pi·x to full precision.
        let (hi, _) = r("sinpi").one(F64, 1e-300, 0.0, 0.0);
        assert!((hi / 1e-300 - std::f64::consts::PI).abs() < 1e-15);
        // float fma is exact as a double-double: 1 + 2^-60 survives.
        let (hi, lo) = r("fma").one(F32, 1.0, 1.0, 2f64.powi(-60));
        assert_eq!((hi, lo), (1.0, 2f64.powi(-60)));
        assert_eq!(
            r("nextafter").one(F32, 0.0, 1.0, 0.0).0,
            f64::from(f32::from_bits(1))
        );
        assert_eq!(
            r("nextafter").one(F64, 0.0, -1.0, 0.0).0,
            -f64::from_bits(1)
        );
        // half fma too: a·b exact in double, the sum as a double-double.
        let (hi, lo) = r("fma").one(F16, 32768.0, 32768.0, 2f64.powi(-24));
        assert_eq!((hi, lo), (2f64.powi(30), 2f64.powi(-24)));
    }
}
