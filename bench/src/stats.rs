//! Statistics over repetitions (median, min, geometric mean) and how ratios and times are printed.

/// Median of the samples (mean of the two middle values for an even count); `None` when empty.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut v = samples.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

pub fn min(samples: &[f64]) -> Option<f64> {
    samples.iter().copied().min_by(|a, b| a.total_cmp(b))
}

/// Geometric mean of positive finite values; `None` when there are none.
pub fn geomean(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    if v.is_empty() {
        return None;
    }
    Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// A Ferrocl/PoCL ratio as printed: `0.83x`, with more digits for small ratios.
pub fn format_ratio(r: Option<f64>) -> String {
    match r {
        None => "-".into(),
        Some(r) if !r.is_finite() => "-".into(),
        Some(r) if r >= 10.0 => format!("{r:.1}x"),
        Some(r) if r >= 0.1 => format!("{r:.2}x"),
        Some(r) => format!("{r:.3}x"),
    }
}

/// Milliseconds with three significant-ish digits: `1280`, `12.3`, `0.123`.
pub fn format_ms(ms: Option<f64>) -> String {
    match ms {
        None => "-".into(),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) if v >= 1.0 => format!("{v:.2}"),
        Some(v) if v >= 0.01 => format!("{v:.3}"),
        Some(v) => format!("{v:.4}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(min(&[4.0, 1.5, 3.0]), Some(1.5));
    }

    #[test]
    fn geomean_of_ratios() {
        let g = geomean(&[0.5, 2.0]).unwrap();
        assert!((g - 1.0).abs() < 1e-12);
        let g = geomean(&[1.0, 8.0, 8.0]).unwrap();
        assert!((g - 4.0).abs() < 1e-12);
        // non-positive and non-finite values are ignored, nothing left gives None
        assert_eq!(geomean(&[0.0, f64::NAN]), None);
    }

    #[test]
    fn ratio_and_time_formatting() {
        assert_eq!(format_ratio(Some(0.834)), "0.83x");
        assert_eq!(format_ratio(Some(0.0512)), "0.051x");
        assert_eq!(format_ratio(Some(12.34)), "12.3x");
        assert_eq!(format_ratio(None), "-");
        assert_eq!(format_ms(Some(1280.4)), "1280");
        assert_eq!(format_ms(Some(0.1234)), "0.123");
        assert_eq!(format_ms(Some(0.00134)), "0.0013");
        assert_eq!(format_ms(None), "-");
    }
}
