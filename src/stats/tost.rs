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
//! cancellation of the paired design (docs/methodology.md) and makes
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

/// Unpaired equivalence (two one-sided Welch tests) on log values: H0 is
/// |ln(geomean B / geomean A)| >= ln(1 + margin_pct/100). Matches
/// `scipy.stats.ttest_ind(ln b +- delta, ln a, equal_var=False,
/// alternative='greater'/'less')`; returns the larger p. NaN for fewer than
/// two values a side, a non-positive value or a non-positive margin.
pub fn tost_unpaired_log(a: &[f64], b: &[f64], margin_pct: f64) -> f64 {
    let positive = |v: &f64| v.is_finite() && *v > 0.0;
    if a.len() < 2 || b.len() < 2 || !positive(&margin_pct) || !a.iter().chain(b).all(positive) {
        return f64::NAN;
    }
    let (la, lb): (Vec<f64>, Vec<f64>) = (
        a.iter().map(|v| v.ln()).collect(),
        b.iter().map(|v| v.ln()).collect(),
    );
    let delta = (margin_pct / 100.0).ln_1p();
    let shifted = |s: f64| lb.iter().map(|v| v + s).collect::<Vec<f64>>();
    // welch_t's t is mean(first) - mean(second).
    let lower = super::unpaired::welch_t(&shifted(delta), &la);
    let upper = super::unpaired::welch_t(&shifted(-delta), &la);
    if lower.t.is_nan() || upper.t.is_nan() {
        return f64::NAN;
    }
    let p_lower = 1.0 - super::tdist::t_cdf(lower.t, lower.df); // H1: d > -delta
    let p_upper = super::tdist::t_cdf(upper.t, upper.df); // H1: d < delta
    p_lower.max(p_upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[test]
    fn unpaired_tost_matches_scipy() {
        // scipy 1.17.1: max of ttest_ind(ln b + delta, ln a, equal_var=False,
        // alternative='greater') and (ln b - delta, ..., alternative='less').
        let a = [100.0, 101.0, 99.5, 100.2, 100.8, 99.9];
        let b = [100.3, 100.9, 99.8, 100.1, 101.0, 100.4, 99.7];
        let p = tost_unpaired_log(&a, &b, 1.0);
        assert!((p - 0.005915524740238186).abs() / 0.0059 < 1e-7, "{p}");
        let c = [110.0, 111.0, 109.5, 110.2];
        let p = tost_unpaired_log(&a, &c, 1.0);
        assert!((p - 0.9999999262803599).abs() < 1e-9, "{p}");
        assert!(tost_unpaired_log(&a[..1], &b, 1.0).is_nan());
        assert!(tost_unpaired_log(&a, &b, 0.0).is_nan());
    }

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
