//! Checking device results against host references: float tolerances, exact integers,
//! and the conversions between device bytes and typed vectors.

/// Bytes of a plain-data slice (f32, u32) as the device sees them.
pub fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: T is plain old data (f32/u32 here); we copy its bytes out.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        .to_vec()
}

pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect()
}

pub fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Each `got[i]` must be within `abs + rel * scale[i]` of `want[i]`, where `scale` is the
/// magnitude of the terms that produced the value (so cancellation does not make the test brittle).
pub fn close_f32(
    got: &[f32],
    want: &[f64],
    scale: &[f64],
    rel: f64,
    abs: f64,
) -> Result<(), String> {
    close(got, want, scale, rel, abs)
}

/// `close_f32` for double results.
pub fn close_f64(
    got: &[f64],
    want: &[f64],
    scale: &[f64],
    rel: f64,
    abs: f64,
) -> Result<(), String> {
    close(got, want, scale, rel, abs)
}

fn close<T: Copy + Into<f64>>(
    got: &[T],
    want: &[f64],
    scale: &[f64],
    rel: f64,
    abs: f64,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let mut bad = 0usize;
    let mut first = None;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = abs + rel * scale.get(i).copied().unwrap_or(w.abs());
        let g: f64 = g.into();
        if !(g - w).abs().le(&tol) {
            bad += 1;
            first.get_or_insert((i, g, w));
        }
    }
    match first {
        None => Ok(()),
        Some((i, g, w)) => Err(format!(
            "{bad} of {} wrong; first [{i}] = {g} want {w}",
            got.len()
        )),
    }
}

/// Exact equality of integers.
pub fn equal_u32(got: &[u32], want: &[u32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let bad = got.iter().zip(want).filter(|(g, w)| g != w).count();
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{bad} of {} wrong; first [{i}] = {:#x} want {:#x}",
            got.len(),
            got[i],
            want[i]
        )),
    }
}

/// Integers that may differ in at most `max_frac` of the positions (e.g. mandelbrot escape counts,
/// which legitimately change at the set's boundary with floating-point contraction).
pub fn mostly_equal_u32(got: &[u32], want: &[u32], max_frac: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let bad = got.iter().zip(want).filter(|(g, w)| g != w).count();
    if bad as f64 <= max_frac * got.len() as f64 {
        Ok(())
    } else {
        let i = got.iter().zip(want).position(|(g, w)| g != w).unwrap_or(0);
        Err(format!(
            "{bad} of {} differ (allowed {:.2}%); first [{i}] = {} want {}",
            got.len(),
            max_frac * 100.0,
            got[i],
            want[i]
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_tolerance() {
        assert!(close_f32(&[1.0, 2.0], &[1.0, 2.000_001], &[1.0, 2.0], 1e-6, 0.0).is_ok());
        let e = close_f32(&[1.0, 2.1], &[1.0, 2.0], &[1.0, 2.0], 1e-6, 0.0).unwrap_err();
        assert!(e.starts_with("1 of 2 wrong; first [1]"), "{e}");
        // NaN never passes
        assert!(close_f32(&[f32::NAN], &[1.0], &[1.0], 1.0, 1.0).is_err());
        assert!(close_f32(&[1.0], &[1.0, 2.0], &[], 1.0, 1.0).is_err());
        // double results keep their precision: 1e-12 off fails a 1e-14 tolerance
        assert!(close_f64(&[1.0 + 1e-15], &[1.0], &[1.0], 1e-14, 0.0).is_ok());
        assert!(close_f64(&[1.0 + 1e-12], &[1.0], &[1.0], 1e-14, 0.0).is_err());
        assert_eq!(f64s(&bytes_of(&[-2.5f64])), [-2.5]);
    }

    #[test]
    fn integer_checks_and_bytes() {
        let v = [1u32, 0xdead_beef];
        assert_eq!(u32s(&bytes_of(&v)), v);
        assert_eq!(f32s(&bytes_of(&[1.5f32])), [1.5]);
        assert!(equal_u32(&[1, 2, 3], &[1, 2, 3]).is_ok());
        assert!(equal_u32(&[1, 2, 4], &[1, 2, 3])
            .unwrap_err()
            .contains("[2]"));
        assert!(mostly_equal_u32(&[1, 2, 4, 4], &[1, 2, 3, 4], 0.25).is_ok());
        assert!(mostly_equal_u32(&[1, 9, 4, 4], &[1, 2, 3, 4], 0.25).is_err());
    }
}
