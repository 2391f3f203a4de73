//! Estimates with a 95% interval, and the straight line fitted through
//! them: the value types the statistics here return, serialisable so that
//! runs can store them. `null` (how JSON writes NaN) reads back as NaN.

use serde::{Deserialize, Serialize};

/// Reads a number written as `null` (how JSON writes NaN) back as NaN.
pub(crate) fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// An upper bound that JSON wrote as null (serde_json writes infinities
/// as null): +inf, an interval unbounded above.
pub(crate) fn inf_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// A lower bound that JSON wrote as null: -inf.
pub(crate) fn neg_inf_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NEG_INFINITY))
}

/// A value with a 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    #[serde(deserialize_with = "nan_if_null")]
    pub estimate: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub ci_high: f64,
}

/// A least-squares line `y = intercept + slope * x` over every pair of
/// every point, with 95% intervals (Student t, n - 2 degrees of freedom)
/// and the lack-of-fit test that says whether a straight line fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineFit {
    pub intercept: Estimate,
    pub slope: Estimate,
    /// Pairs fitted.
    pub n: usize,
    pub r_squared: f64,
    /// Standard deviation of the residuals, ns/op.
    pub residual_sd: f64,
    /// p-value of the lack-of-fit F test (point means against the line,
    /// measured against the scatter within points); None with fewer than
    /// three distinct values.
    pub lack_of_fit_p: Option<f64>,
    /// False when the lack-of-fit test rejects the line at alpha 0.05.
    pub straight: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_reads_back_as_nan() {
        let e: Estimate =
            serde_json::from_str(r#"{"estimate":1.5,"ci_low":null,"ci_high":2.0}"#).unwrap();
        assert_eq!(e.estimate, 1.5);
        assert!(e.ci_low.is_nan());
        assert_eq!(e.ci_high, 2.0);
    }
}
