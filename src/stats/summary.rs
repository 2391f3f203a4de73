//! mmtests-style descriptive summaries of one sample.
//!
//! Why: docs/methodology.md notes that mmtests' compare reports Amean (lower is
//! better, for times) or Hmean (for rates) with the coefficient of
//! variation, and readers of secperf's reports expect those numbers next to
//! the median the statistics actually use. Nothing here decides a verdict;
//! these are for display and for spotting noisy runs (a high CoeffVar).
//!
//! Matched against numpy/scipy (`numpy.mean`, `scipy.stats.hmean`,
//! `scipy.stats.gmean`, `numpy.median`, `numpy.std(ddof=1)`) in
//! `tests/fixtures/stats/summary.json`, made by
//! `tests/fixtures/stats/make_unpaired_vectors.py`.

use serde::Serialize;

use super::median;

/// Descriptive statistics of one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Describe {
    pub n: usize,
    /// Arithmetic mean.
    pub amean: f64,
    /// Harmonic mean n / sum(1/x); NaN unless every value is positive.
    pub hmean: f64,
    /// Geometric mean exp(mean(ln x)); NaN unless every value is positive.
    pub gmean: f64,
    pub median: f64,
    /// Sample standard deviation (n - 1 denominator); NaN for n = 1.
    pub stddev: f64,
    /// Coefficient of variation, stddev / amean * 100.
    pub cv_pct: f64,
    pub min: f64,
    pub max: f64,
}

/// The geometric mean exp(mean(ln x)). `None` for an empty slice, a NaN,
/// or any value that is not positive (the logarithm is undefined).
pub fn geometric_mean(x: &[f64]) -> Option<f64> {
    if x.is_empty() || x.iter().any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    Some((x.iter().map(|v| v.ln()).sum::<f64>() / x.len() as f64).exp())
}

/// Summary of `x`; `None` for an empty slice or when any value is NaN.
pub fn describe(x: &[f64]) -> Option<Describe> {
    if x.is_empty() || x.iter().any(|v| v.is_nan()) {
        return None;
    }
    let n = x.len();
    let nf = n as f64;
    let amean = x.iter().sum::<f64>() / nf;
    let all_positive = x.iter().all(|v| *v > 0.0);
    let hmean = if all_positive {
        nf / x.iter().map(|v| 1.0 / v).sum::<f64>()
    } else {
        f64::NAN
    };
    let gmean = geometric_mean(x).unwrap_or(f64::NAN);
    let stddev = if n > 1 {
        (x.iter().map(|v| (v - amean) * (v - amean)).sum::<f64>() / (nf - 1.0)).sqrt()
    } else {
        f64::NAN
    };
    Some(Describe {
        n,
        amean,
        hmean,
        gmean,
        median: median(x)?,
        stddev,
        cv_pct: stddev / amean * 100.0,
        min: x.iter().copied().fold(f64::INFINITY, f64::min),
        max: x.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
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
        x: Vec<f64>,
        n: usize,
        amean: f64,
        hmean: Option<f64>,
        gmean: Option<f64>,
        median: f64,
        stddev: Option<f64>,
        cv_pct: Option<f64>,
        min: f64,
        max: f64,
    }

    fn check(name: &str, what: &str, got: f64, want: Option<f64>) {
        match want {
            None => assert!(got.is_nan(), "{name} {what}: {got} should be NaN"),
            Some(w) => assert!(
                got == w || (got - w).abs() <= 1e-12 * w.abs(),
                "{name} {what}: {got} vs numpy {w}"
            ),
        }
    }

    #[test]
    fn matches_numpy_and_scipy() {
        let f: Fixture =
            serde_json::from_str(include_str!("../../tests/fixtures/stats/summary.json")).unwrap();
        assert!(f.cases.len() >= 6);
        for c in &f.cases {
            let d = describe(&c.x).unwrap();
            assert_eq!(d.n, c.n, "{}", c.name);
            check(&c.name, "amean", d.amean, Some(c.amean));
            check(&c.name, "hmean", d.hmean, c.hmean);
            check(&c.name, "gmean", d.gmean, c.gmean);
            check(&c.name, "median", d.median, Some(c.median));
            check(&c.name, "stddev", d.stddev, c.stddev);
            check(&c.name, "cv_pct", d.cv_pct, c.cv_pct);
            assert_eq!((d.min, d.max), (c.min, c.max), "{}", c.name);
            check(
                &c.name,
                "gmean()",
                geometric_mean(&c.x).unwrap_or(f64::NAN),
                c.gmean,
            );
        }
    }

    #[test]
    fn hand_values_and_degenerate_inputs() {
        let d = describe(&[1.0, 2.0, 4.0]).unwrap();
        assert_eq!(d.median, 2.0);
        assert!((d.gmean - 2.0).abs() < 1e-15);
        assert!((d.hmean - 12.0 / 7.0).abs() < 1e-15);
        assert_eq!(describe(&[]), None);
        assert_eq!(describe(&[1.0, f64::NAN]), None);
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
        assert_eq!(geometric_mean(&[1.0, f64::NAN]), None);
        let one = describe(&[3.0]).unwrap();
        assert!(one.stddev.is_nan() && one.cv_pct.is_nan());
        assert!(describe(&[-1.0, 2.0]).unwrap().hmean.is_nan());
    }
}
