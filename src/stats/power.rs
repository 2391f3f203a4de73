//! The small formulas of `secperf calibrate`: a binomial interval for the
//! rates it counts, the pooled spread of per-pair log-ratios, and the
//! power calculation that turns that spread into "the smallest effect a
//! comparison of n pairs detects" (and back into "pairs needed for a
//! precision").
//!
//! The power formulas use the normal approximation of a paired test on the
//! log-ratios r = ln(B/A), inflated by [`EFFICIENCY_INFLATION`]. The verdict
//! of [`super::paired`] needs *both* a Wilcoxon p < 0.05 *and* a
//! bootstrap interval of the *median* of r that excludes 0; the median's
//! interval is the stricter of the two. For normal noise the median has an
//! asymptotic efficiency of 2/pi relative to the mean (the Wilcoxon test's
//! is 0.955), so its standard error is sqrt(pi/2) ~ 1.25 times the mean's.
//! A simulation of that very verdict (normal r, 1000 runs each, 2000
//! bootstrap resamples) gave 80.4% power at n = 10 and 80.1% at n = 30
//! with the factor 1.2533, but only 64-66% with the Wilcoxon-only 1.05.

use serde::{Deserialize, Serialize};

/// z_{0.975}: two-sided alpha = 0.05.
pub const Z_ALPHA: f64 = 1.959_963_984_540_054;
/// z_{0.80}: power 80%.
pub const Z_POWER: f64 = 0.841_621_233_572_914_3;
/// sqrt(pi / 2): the standard error of a median over that of a mean, for
/// normal data (see the module docs for why the median, not Wilcoxon, sets it).
pub const EFFICIENCY_INFLATION: f64 = 1.253_314_137_315_500_3;
/// Fewest pairs `overhead` accepts, so the least [`pairs_for_precision`] returns.
pub const MIN_PAIRS: u32 = 10;

/// A proportion x/n with its 95% Wilson score interval, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Proportion {
    pub count: u32,
    pub total: u32,
    pub pct: f64,
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
}

impl Proportion {
    pub fn new(count: u32, total: u32) -> Proportion {
        let (lo, hi) = wilson_interval(count, total, Z_ALPHA);
        Proportion {
            count,
            total,
            pct: if total == 0 {
                f64::NAN
            } else {
                100.0 * count as f64 / total as f64
            },
            ci_low_pct: 100.0 * lo,
            ci_high_pct: 100.0 * hi,
        }
    }

    /// `1/12 = 8.3% [1.5, 35.4]`.
    pub fn describe(&self) -> String {
        if self.total == 0 {
            return "0/0 (nothing measured)".to_string();
        }
        format!(
            "{}/{} = {:.1}% [{:.1}, {:.1}]",
            self.count, self.total, self.pct, self.ci_low_pct, self.ci_high_pct
        )
    }
}

/// The Wilson score interval of a binomial proportion `x / n` for the
/// normal quantile `z` (1.96 for 95%), as fractions in [0, 1]. Unlike the
/// textbook p +- z sqrt(p(1-p)/n) it stays inside [0, 1] and is not empty
/// at 0/n or n/n. `(0, 1)` when n = 0 (nothing is known).
pub fn wilson_interval(x: u32, n: u32, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = x.min(n as u32) as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((center - half).max(0.0), (center + half).min(1.0))
}

/// Pooled within-group standard deviation: each group (the log-ratios of
/// one comparison) is centred on its own mean, then sum of squares / (N -
/// groups). Differences between comparisons (drift between them) do not
/// count, since a single comparison never sees them. `None` when there are
/// no degrees of freedom or a value is not finite.
pub fn pooled_sd(groups: &[Vec<f64>]) -> Option<f64> {
    let mut ss = 0.0;
    let mut dof = 0usize;
    for g in groups.iter().filter(|g| !g.is_empty()) {
        if g.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        ss += g.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
        dof += g.len() - 1;
    }
    (dof > 0).then(|| (ss / dof as f64).sqrt())
}

/// Robust pooled standard deviation: each group centred on its own
/// median, then 1.4826 x the median absolute residual (the MAD, scaled to
/// be the standard deviation for normal data). Timing log-ratios have
/// heavy tails (a preempted half gives +-0.1..0.4 among +-0.01s); the
/// median and its interval ignore those tails, so the spread that decides
/// what the median detects is the core's, which this measures. `None` when
/// no group has 2 values or a value is not finite.
pub fn pooled_robust_sd(groups: &[Vec<f64>]) -> Option<f64> {
    let mut abs_residuals = Vec::new();
    for g in groups.iter().filter(|g| g.len() >= 2) {
        let m = super::median(g)?;
        abs_residuals.extend(g.iter().map(|v| (v - m).abs()));
    }
    if abs_residuals.iter().any(|v| !v.is_finite()) {
        return None;
    }
    super::median(&abs_residuals).map(|mad| MAD_TO_SD * mad)
}

/// 1 / Phi^-1(3/4): makes the MAD of normal data its standard deviation.
pub const MAD_TO_SD: f64 = 1.482_602_218_505_602;

/// The smallest slowdown, in percent, that a paired comparison of `pairs`
/// pairs detects with 80% power at two-sided alpha 0.05, when the per-pair
/// log-ratios have standard deviation `sd_log_ratio`:
/// exp((z_0.975 + z_0.8) * sd / sqrt(n) * sqrt(pi/2)) - 1. A normal
/// approximation (see the module docs); NaN for 0 pairs or a bad sd.
pub fn min_detectable_effect_pct(sd_log_ratio: f64, pairs: u32) -> f64 {
    if pairs == 0 || !sd_log_ratio.is_finite() || sd_log_ratio < 0.0 {
        return f64::NAN;
    }
    let delta = (Z_ALPHA + Z_POWER) * sd_log_ratio / (pairs as f64).sqrt() * EFFICIENCY_INFLATION;
    delta.exp_m1() * 100.0
}

/// Pairs needed so that the 95% interval of the overhead is about
/// +-`precision_pct` wide (half-width): n = (1.96 * sd * sqrt(pi/2) /
/// ln(1 + p/100))^2, rounded up, at least [`MIN_PAIRS`]. The inverse of
/// the interval part of [`min_detectable_effect_pct`]. Saturates at
/// `u32::MAX` for a precision that is not positive and finite, or a spread
/// that is not finite.
pub fn pairs_for_precision(sd_log_ratio: f64, precision_pct: f64) -> u32 {
    if !(precision_pct.is_finite() && precision_pct > 0.0 && sd_log_ratio.is_finite()) {
        return u32::MAX;
    }
    let half_width = ln_1p_pct(precision_pct);
    let n = (Z_ALPHA * sd_log_ratio.abs() * EFFICIENCY_INFLATION / half_width).powi(2);
    let n = n.ceil();
    if n >= u32::MAX as f64 {
        u32::MAX
    } else {
        (n as u32).max(MIN_PAIRS)
    }
}

/// ln(1 + pct / 100): a percentage as a log-ratio.
fn ln_1p_pct(pct: f64) -> f64 {
    (pct / 100.0).ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn wilson_matches_statsmodels() {
        // statsmodels.stats.proportion.proportion_confint(x, n, 0.05, 'wilson')
        let cases = [
            (1, 12, 0.014865094404917095, 0.35387991114111705),
            (0, 20, 0.0, 0.1611251580528194),
            (3, 40, 0.025836025774588184, 0.1986423352431055),
            (20, 20, 0.8388748419471804, 1.0),
            (5, 10, 0.23659309051256394, 0.7634069094874361),
        ];
        for (x, n, lo, hi) in cases {
            let (l, h) = wilson_interval(x, n, Z_ALPHA);
            assert!(
                close(l, lo, 1e-12) && close(h, hi, 1e-12),
                "{x}/{n}: {l} {h}"
            );
        }
        assert_eq!(wilson_interval(0, 0, Z_ALPHA), (0.0, 1.0));
    }

    #[test]
    fn proportion_describes_like_the_docs() {
        assert_eq!(Proportion::new(1, 12).describe(), "1/12 = 8.3% [1.5, 35.4]");
        assert_eq!(Proportion::new(0, 20).describe(), "0/20 = 0.0% [0.0, 16.1]");
        assert!(Proportion::new(0, 0).pct.is_nan());
    }

    #[test]
    fn pooled_sd_ignores_group_means() {
        // Two groups with different means, each with sample variance 1.
        let g = vec![vec![0.0, 1.0, 2.0], vec![10.0, 11.0, 12.0]];
        assert!(close(pooled_sd(&g).unwrap(), 1.0, 1e-12));
        assert_eq!(pooled_sd(&[vec![1.0], vec![2.0]]), None);
        assert_eq!(pooled_sd(&[vec![1.0, f64::NAN]]), None);
        // Python: statistics.stdev([1, 2, 4, 8]) = 3.095695936834452
        assert!(close(
            pooled_sd(&[vec![1.0, 2.0, 4.0, 8.0]]).unwrap(),
            3.095695936834452,
            1e-12
        ));
    }

    #[test]
    fn robust_sd_ignores_group_medians_and_outliers() {
        let k = MAD_TO_SD;
        let g = vec![vec![0.0, 1.0, 2.0], vec![10.0, 11.0, 12.0]];
        assert!(close(pooled_robust_sd(&g).unwrap(), k, 1e-12));
        // One wild value does not move it.
        let g = vec![vec![1.0, 2.0, 3.0, 4.0, 100.0]];
        assert!(close(pooled_robust_sd(&g).unwrap(), k, 1e-12));
        assert_eq!(pooled_robust_sd(&[vec![1.0]]), None);
        assert_eq!(pooled_robust_sd(&[vec![1.0, f64::NAN]]), None);
        // scipy.stats.norm.ppf(0.75) = 0.6744897501960817
        assert!(close(1.0 / k, 0.6744897501960817, 1e-12));
    }

    #[test]
    fn min_effect_formula() {
        // Python: math.expm1((1.959963984540054 + 0.8416212335729143)
        //   * 0.05 / math.sqrt(10) * math.sqrt(math.pi / 2)) * 100
        assert!(close(
            min_detectable_effect_pct(0.05, 10),
            5.708_804_010_707_7,
            1e-9
        ));
        // Four times the pairs halve the log effect.
        let a = ln_1p_pct(min_detectable_effect_pct(0.02, 25));
        let b = ln_1p_pct(min_detectable_effect_pct(0.02, 100));
        assert!(close(a / b, 2.0, 1e-12));
        assert_eq!(min_detectable_effect_pct(0.0, 10), 0.0);
        assert!(min_detectable_effect_pct(0.05, 0).is_nan());
        assert!(min_detectable_effect_pct(f64::NAN, 10).is_nan());
    }

    #[test]
    fn pairs_for_precision_formula() {
        // (1.959963984540054 * 0.05 * sqrt(pi/2) / ln(1.01))^2 = 152.37... -> 153
        assert_eq!(pairs_for_precision(0.05, 1.0), 153);
        // Tiny spread: never fewer than the 10 pairs `overhead` needs.
        assert_eq!(pairs_for_precision(0.001, 5.0), MIN_PAIRS);
        assert_eq!(pairs_for_precision(0.05, 0.0), u32::MAX);
        assert_eq!(pairs_for_precision(0.05, -1.0), u32::MAX);
        assert_eq!(pairs_for_precision(f64::INFINITY, 1.0), u32::MAX);
        assert_eq!(pairs_for_precision(1e6, 1e-9), u32::MAX);
        // Round trip: n pairs for a precision give an interval no wider.
        for (sd, p) in [(0.01, 0.5), (0.03, 2.0), (0.2, 10.0)] {
            let n = pairs_for_precision(sd, p);
            let half = Z_ALPHA * sd * EFFICIENCY_INFLATION / (n as f64).sqrt();
            assert!(half.exp_m1() * 100.0 <= p + 1e-9, "sd {sd} p {p}: n {n}");
            let half_less = Z_ALPHA * sd * EFFICIENCY_INFLATION / ((n - 1) as f64).sqrt();
            assert!(n == MIN_PAIRS || half_less.exp_m1() * 100.0 > p);
        }
    }
}
