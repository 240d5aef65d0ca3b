//! Latency statistics, one definition for every report: the q-quantile of a sample, linearly
//! interpolated between the two nearest ranks (numpy's default), NaN for an empty sample.

use serde_json::{json, Value};

/// The q-quantile (0..=1) of `v`, which need not be sorted.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    quantile_sorted(&s, q)
}

/// The q-quantile of an already sorted sample.
pub fn quantile_sorted(s: &[f64], q: f64) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// p50/p95/p99 and the count of latency samples in milliseconds, as every report gives them.
pub fn latency(mut v: Vec<f64>) -> Value {
    v.sort_by(f64::total_cmp);
    let q = |p| quantile_sorted(&v, p);
    json!({"p50_ms": q(0.5), "p95_ms": q(0.95), "p99_ms": q(0.99), "n": v.len()})
}

/// Mean, median and 95th percentile of counts (null for none).
pub fn counts(mut v: Vec<f64>) -> Value {
    if v.is_empty() {
        return Value::Null;
    }
    v.sort_by(f64::total_cmp);
    let q = |p| quantile_sorted(&v, p);
    json!({"mean": v.iter().sum::<f64>() / v.len() as f64, "p50": q(0.5), "p95": q(0.95), "n": v.len()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_ranks() {
        assert!(quantile(&[], 0.5).is_nan());
        assert_eq!(quantile(&[3.0], 0.99), 3.0);
        assert_eq!(quantile(&[4.0, 1.0, 2.0, 3.0], 0.5), 2.5);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), 2.0);
        assert_eq!(quantile(&[0.0, 10.0], 0.95), 9.5);
    }
}
