//! Pure statistics: no I/O, no clocks. Everything here is tested against
//! values worked out by hand or with SciPy.
//!
//! For now: the median and its distribution-free confidence interval from
//! order statistics (the interval benchstat reports), which assumes only
//! that samples are independent and identically distributed.

pub mod bootstrap;
pub mod decision;
pub mod estimate;
pub mod holm;
pub mod linear;
pub mod online;
pub mod outliers;
pub mod paired;
pub mod power;
pub mod rank_interval;
pub mod sequential;
pub mod summary;
pub mod tdist;
pub mod tost;
pub mod unpaired;
pub mod unpaired_table;
pub mod wilcoxon;

use serde::{Deserialize, Serialize};

pub use estimate::{Estimate, LineFit};

/// A median with a 95% confidence interval of that median.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// The median of `values` (mean of the two middle values for even n).
/// `None` for an empty slice or when a value is NaN.
pub fn median(values: &[f64]) -> Option<f64> {
    let v = sorted(values)?;
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn sorted(values: &[f64]) -> Option<Vec<f64>> {
    if values.is_empty() || values.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(v)
}

/// P(X <= k) for X ~ Binomial(n, 1/2).
pub fn binom_half_cdf(n: usize, k: usize) -> f64 {
    // Sum of C(n, i) / 2^n, computed in log space to stay finite for big n.
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_c = 0.0f64; // ln C(n, 0)
    let mut total = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        total += (ln_c - ln2n).exp();
    }
    total.min(1.0)
}

/// The 1-based rank `r` such that [x(r), x(n+1-r)] is the narrowest
/// order-statistic interval covering the median with at least
/// `confidence`; `None` when even [min, max] covers less.
pub fn median_ci_rank(n: usize, confidence: f64) -> Option<usize> {
    let alpha_half = (1.0 - confidence) / 2.0;
    // Coverage of [x(r), x(n+1-r)] = 1 - 2 P(B <= r-1).
    let mut best = None;
    for r in 1..=n.div_ceil(2) {
        if binom_half_cdf(n, r - 1) <= alpha_half {
            best = Some(r);
        } else {
            break;
        }
    }
    best
}

/// Median with a distribution-free `confidence` interval (0.95 typical).
/// With too few samples for that confidence the interval is [min, max],
/// which then covers less; callers that care can check
/// [`median_ci_coverage`].
pub fn median_ci(values: &[f64], confidence: f64) -> Option<Summary> {
    let v = sorted(values)?;
    let med = median(&v)?;
    let n = v.len();
    let r = median_ci_rank(n, confidence).unwrap_or(1);
    Some(Summary {
        median: med,
        ci_low: v[r - 1],
        ci_high: v[n - r],
    })
}

/// The actual coverage of the interval [`median_ci`] returns for n samples.
pub fn median_ci_coverage(n: usize, confidence: f64) -> f64 {
    let r = median_ci_rank(n, confidence).unwrap_or(1);
    1.0 - 2.0 * binom_half_cdf(n, r - 1)
}

/// Mean of `x` with a 95% Student-t interval (NaN bounds below two
/// values, all NaN when empty).
pub fn mean_ci(x: &[f64]) -> Estimate {
    let n = x.len() as f64;
    let nan = Estimate {
        estimate: f64::NAN,
        ci_low: f64::NAN,
        ci_high: f64::NAN,
    };
    if x.is_empty() {
        return nan;
    }
    let mean = x.iter().sum::<f64>() / n;
    if x.len() < 2 {
        return Estimate {
            estimate: mean,
            ..nan
        };
    }
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = tdist::t_quantile(0.975, n - 1.0) * (var / n).sqrt();
    Estimate {
        estimate: mean,
        ci_low: mean - half,
        ci_high: mean + half,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn median_odd_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn binomial_cdf_reference_values() {
        // scipy.stats.binom.cdf(k, n, 0.5)
        assert!((binom_half_cdf(10, 1) - 0.0107421875).abs() < 1e-12);
        assert!((binom_half_cdf(20, 5) - 0.020694732666015625).abs() < 1e-12);
        assert!((binom_half_cdf(20, 6) - 0.057659149169921875).abs() < 1e-12);
        assert!((binom_half_cdf(5, 5) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn order_statistic_ranks_match_tables() {
        // Standard tables for the 95% CI of a median.
        assert_eq!(median_ci_rank(5, 0.95), None); // [min,max] covers 93.75%
        assert_eq!(median_ci_rank(6, 0.95), Some(1));
        assert_eq!(median_ci_rank(10, 0.95), Some(2));
        assert_eq!(median_ci_rank(20, 0.95), Some(6));
        assert_eq!(median_ci_rank(100, 0.95), Some(40));
        assert!((median_ci_coverage(10, 0.95) - 0.978515625).abs() < 1e-9);
        assert!((median_ci_coverage(5, 0.95) - 0.9375).abs() < 1e-9);
    }

    #[test]
    fn interval_of_ten() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = median_ci(&v, 0.95).unwrap();
        assert_eq!((s.median, s.ci_low, s.ci_high), (5.5, 2.0, 9.0));
    }

    proptest! {
        #[test]
        fn ci_contains_median(v in proptest::collection::vec(-1e9f64..1e9, 1..60)) {
            let s = median_ci(&v, 0.95).unwrap();
            prop_assert!(s.ci_low <= s.median && s.median <= s.ci_high);
        }

        #[test]
        fn scaling_scales(v in proptest::collection::vec(1f64..1e6, 1..40), k in 0.001f64..1000.0) {
            let a = median_ci(&v, 0.95).unwrap();
            let scaled: Vec<f64> = v.iter().map(|x| x * k).collect();
            let b = median_ci(&scaled, 0.95).unwrap();
            prop_assert!((b.median - a.median * k).abs() <= 1e-9 * b.median.abs().max(1.0));
            prop_assert!((b.ci_low - a.ci_low * k).abs() <= 1e-9 * b.ci_low.abs().max(1.0));
        }
    }
}
