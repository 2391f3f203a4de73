//! Paired equivalence test (TOST, Schuirmann 1987) on log-ratios.
//!
//! Why: a non-significant difference is not evidence of no difference
//! (benchstat's `~` means "not significant", not "equal"). To claim that a
//! mechanism costs *less than* some margin, say 1%, the null hypothesis has
//! to be the opposite: "the change is at least the margin". Two one-sided
//! tests reject it when the mean log-ratio is significantly above -bound
//! *and* significantly below +bound, with bound = ln(1 + margin/100);
//! the TOST p-value is the larger of the two one-sided p-values. Working on
//! r = ln(treatment/baseline) of randomised pairs keeps the drift
//! cancellation of the paired design (methodology.md, points 2-3) and makes
//! the margin symmetric in ratio terms.
//!
//! Each one-sided test is `scipy.stats.ttest_1samp(r, bound, alternative=..)`
//! (a t-test: the mean of log-ratios of many slices is close to normal even
//! when single timings are not). Reference values in
//! `tests/fixtures/stats/tost.json`, made by
//! `tests/fixtures/stats/make_unpaired_vectors.py` with SciPy 1.17.1.

use super::tdist::t_cdf;

/// The two one-sided p-values: (H0 mean <= -bound, H0 mean >= +bound).
fn one_sided(r: &[f64], margin_pct: f64) -> (f64, f64) {
    let nan = (f64::NAN, f64::NAN);
    if r.len() < 2 || r.iter().any(|v| !v.is_finite()) || margin_pct.is_nan() || margin_pct <= 0.0 {
        return nan;
    }
    let bound = (margin_pct / 100.0).ln_1p();
    if !bound.is_finite() {
        return nan;
    }
    let n = r.len() as f64;
    let mean = r.iter().sum::<f64>() / n;
    let var = r.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    let se = (var / n).sqrt();
    let df = n - 1.0;
    // ttest_1samp(r, -bound, alternative="greater"): p = P(T >= t_lo).
    let t_lo = (mean + bound) / se;
    // ttest_1samp(r, +bound, alternative="less"): p = P(T <= t_hi).
    let t_hi = (mean - bound) / se;
    (t_cdf(-t_lo, df), t_cdf(t_hi, df))
}

/// Paired equivalence (two one-sided tests) on log ratios
/// r_i = ln(t_i/b_i): H0 is |true change| >= margin_pct. Uses one-sample t
/// tests against +-ln(1 + margin_pct/100) (one-sided, like
/// scipy.stats.ttest_1samp(r, bound, alternative='less'/'greater'));
/// returns the TOST p-value = max of the two. Small p => the change is
/// negligible (inside +-margin).
///
/// NaN for fewer than 2 values, a non-finite value, or a margin that is not
/// positive and finite. Constant r (zero variance) gives 0 when r lies
/// strictly inside the band, 1 when outside, and NaN exactly on a bound,
/// as SciPy does.
pub fn tost_log_ratios(r: &[f64], margin_pct: f64) -> f64 {
    let (lo, hi) = one_sided(r, margin_pct);
    if lo.is_nan() || hi.is_nan() {
        return f64::NAN;
    }
    lo.max(hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Fixture {
        cases: Vec<Case>,
    }
    #[derive(Deserialize)]
    struct Case {
        name: String,
        r: Vec<f64>,
        margin_pct: f64,
        p_lower: f64,
        p_upper: f64,
        p_value: f64,
    }

    fn close(got: f64, want: f64) -> bool {
        got == want || (got - want).abs() <= 1e-8 * want.abs() || (got - want).abs() <= 1e-12
    }

    #[test]
    fn matches_scipy_ttest_1samp() {
        let f: Fixture =
            serde_json::from_str(include_str!("../../tests/fixtures/stats/tost.json")).unwrap();
        assert!(f.cases.iter().any(|c| c.p_value < 0.05));
        assert!(f.cases.iter().any(|c| c.p_value > 0.5));
        for c in &f.cases {
            let (lo, hi) = one_sided(&c.r, c.margin_pct);
            assert!(
                close(lo, c.p_lower),
                "{}: lower {lo:e} vs {:e}",
                c.name,
                c.p_lower
            );
            assert!(
                close(hi, c.p_upper),
                "{}: upper {hi:e} vs {:e}",
                c.name,
                c.p_upper
            );
            let p = tost_log_ratios(&c.r, c.margin_pct);
            assert!(close(p, c.p_value), "{}: {p:e} vs {:e}", c.name, c.p_value);
        }
    }

    #[test]
    fn degenerate_inputs() {
        assert!(tost_log_ratios(&[0.01], 1.0).is_nan());
        assert!(tost_log_ratios(&[0.01, 0.02], 0.0).is_nan());
        assert!(tost_log_ratios(&[0.01, 0.02], -5.0).is_nan());
        assert!(tost_log_ratios(&[0.01, f64::NAN], 1.0).is_nan());
        // Constant r inside the band: certain equivalence; outside: none.
        assert_eq!(tost_log_ratios(&[0.001; 5], 1.0), 0.0);
        assert_eq!(tost_log_ratios(&[0.05; 5], 1.0), 1.0);
    }

    #[test]
    fn symmetric_in_the_sign_of_r() {
        let r = [0.004, -0.002, 0.006, 0.001, 0.003, -0.001, 0.002, 0.005];
        let neg: Vec<f64> = r.iter().map(|v| -v).collect();
        let (a, b) = (tost_log_ratios(&r, 1.0), tost_log_ratios(&neg, 1.0));
        assert!((a - b).abs() < 1e-15, "{a} {b}");
        assert!(a < 1e-4, "{a}");
    }
}
