//! TEMPORARY integration stub; replaced by the stats helper's module.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Slower,
    Faster,
    NoChange,
}
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OverheadPct {
    pub estimate: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    pub verdict: Verdict,
}
pub struct PairedOpts {
    pub confidence: f64,
    pub alpha: f64,
    pub resamples: usize,
    pub seed: u64,
}
impl Default for PairedOpts {
    fn default() -> Self {
        PairedOpts {
            confidence: 0.95,
            alpha: 0.05,
            resamples: 10_000,
            seed: 1,
        }
    }
}
pub fn compare_paired(
    baseline: &[f64],
    treatment: &[f64],
    _opts: &PairedOpts,
) -> anyhow::Result<OverheadPct> {
    let r: Vec<f64> = baseline
        .iter()
        .zip(treatment)
        .map(|(b, t)| (t / b).ln())
        .collect();
    let m = crate::stats::median(&r).unwrap_or(0.0);
    Ok(OverheadPct {
        estimate: (m.exp() - 1.0) * 100.0,
        ci_low: 0.0,
        ci_high: 0.0,
        p_value: 1.0,
        verdict: Verdict::NoChange,
    })
}
impl OverheadPct {
    pub fn describe(&self) -> String {
        format!("{:+.1}%", self.estimate)
    }
}
