//! What a calibration found (`secperf calibrate`), as plain data: the
//! stored report (A/A false positives, each injected slowdown's truth,
//! detection and coverage, the smallest detectable effect) and the
//! side-by-side replay of the sequential tests. Kept here, below both the
//! calibration that computes it and the report that draws it
//! (`report::sections::calibration`); how the figures follow from the
//! comparisons is `calibrate`'s.

use serde::{Deserialize, Serialize};

use crate::model::{Comparison, Mode, Params};
use crate::stats::decision::SeqTest;
use crate::stats::power::Proportion;

/// How many comparisons of each kind a calibration makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub aa: u32,
    pub truth_comparisons: u32,
    pub truth_pairs: u32,
    pub injected: u32,
}

/// The design, as stored and printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignSummary {
    pub pairs: u32,
    pub sample_ms: u64,
    pub samples_per_half: u32,
    pub warmup: u32,
    pub mode: Mode,
    pub tasks: u32,
    pub cpus: Vec<usize>,
    pub seed: u64,
    pub quick: bool,
    pub counts: Counts,
    /// Whether the A/A and short comparisons were sequential (`pairs` is
    /// then their budget) or of a fixed number of pairs (`--pairs`).
    #[serde(default)]
    pub sequential: bool,
}

/// The A/A experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AaResult {
    /// Comparisons whose verdict was "slower" or "faster".
    pub false_positives: Proportion,
    /// Whether the rate is consistent with the 2-8% target, in words.
    pub assessment: String,
    pub target_met: bool,
    /// Comparisons whose interval excludes 0 at all, noise band or not: a
    /// stricter count than the verdicts.
    #[serde(default)]
    pub excluding_zero: Option<Proportion>,
    /// Pairs an A/A comparison took on average (the sequential design's
    /// cost where nothing is to be found).
    #[serde(default)]
    pub mean_pairs: Option<f64>,
    pub comparisons: Vec<Comparison>,
}

/// The independently measured size of an injected slowdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    /// exp(median of the pooled log-ratios) - 1, percent.
    pub pct: f64,
    /// Its bootstrap 95% interval, percent.
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    /// Pairs pooled.
    pub pairs: u32,
    pub comparisons: Vec<Comparison>,
}

/// One injected slowdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InjectedResult {
    /// `seccomp:args,filters=4`.
    pub treatment: String,
    /// None when it could not be measured (see `skipped`).
    pub truth: Option<Truth>,
    /// Short comparisons with the verdict "slower".
    pub detected: Proportion,
    /// Short comparisons whose interval contains the truth.
    pub covered: Proportion,
    pub assessment: String,
    /// Pairs a short comparison took on average.
    #[serde(default)]
    pub mean_pairs: Option<f64>,
    pub comparisons: Vec<Comparison>,
    /// Why the measurement stopped, when it did.
    pub skipped: Option<String>,
}

/// The smallest detectable effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MinEffect {
    /// Robust pooled within-comparison standard deviation of the A/A
    /// ln(B/A) (1.4826 x MAD, [`crate::stats::power::pooled_robust_sd`]): the one used.
    pub sd_log_ratio: f64,
    /// The classic pooled standard deviation, for comparison: larger when
    /// preempted halves give heavy tails, which the median ignores.
    pub sd_log_ratio_classic: f64,
    /// A/A pairs it is estimated from.
    pub sd_from_pairs: u32,
    /// Measured wall-clock seconds of one pair (A/A comparisons).
    pub pair_seconds: f64,
    pub alpha: f64,
    pub power: f64,
    pub budget_s: f64,
    /// Pairs that fit in the budget.
    pub budget_pairs: u32,
    /// Smallest slowdown detectable with `budget_pairs` pairs, percent.
    pub budget_min_effect_pct: f64,
    /// ... and with 10 pairs (the default of `overhead`).
    pub ten_pairs_min_effect_pct: f64,
    /// How it was computed (an approximation).
    pub method: String,
}

/// Everything a calibration found; stored as the `json` of its row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    pub workload: String,
    pub workload_params: Params,
    pub design: DesignSummary,
    pub aa: AaResult,
    pub injected: Vec<InjectedResult>,
    /// Why the injected part was skipped entirely (seccomp unavailable).
    pub injected_skipped: Option<String>,
    pub min_effect: MinEffect,
    /// `--side-by-side`: each sequential test replayed on the same pairs.
    #[serde(default)]
    pub side_by_side: Option<SideBySide>,
    /// Wall-clock seconds the measurements took.
    pub elapsed_s: f64,
}

/// One injected slowdown replayed by one test, each comparison alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InjectedReplay {
    pub treatment: String,
    /// Comparisons with the verdict "slower".
    pub detected: Proportion,
    /// Comparisons whose interval at the stop contains the truth.
    pub covered: Proportion,
    /// Pairs a comparison took on average.
    pub mean_pairs: f64,
}

/// One test's replay over a calibration's pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestReplay {
    pub test: SeqTest,
    /// Whether outlier halves were injected.
    pub outliers: bool,
    /// A/A comparisons alone: "slower" or "faster" verdicts.
    pub aa_alone: Proportion,
    /// Pairs an A/A comparison alone took on average.
    pub aa_mean_pairs: f64,
    /// A/A tables of `calibrate::replay::SURVEY_TABLE` with any false verdict, under the
    /// FWER (Holm) and under the FDR (e-BH).
    pub aa_tables_fwer: Proportion,
    pub aa_tables_fdr: Proportion,
    pub injected: Vec<InjectedReplay>,
    /// Survey-like tables under the FDR, [`MIXED_NULLS`] A/A comparisons
    /// and the rest injected (absent from calibrations replayed before
    /// they existed, and without injected comparisons).
    #[serde(default)]
    pub mixed_fdr: Option<MixedReplay>,
}

/// Mixed tables replayed in rounds under the FDR: the A/A comparisons
/// are the false discoveries a survey could make among real ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedReplay {
    pub tables: u32,
    /// The mean over tables of false discoveries / discoveries (0 for a
    /// table without any): the false discovery rate e-BH controls.
    pub mean_fdp: f64,
    /// Tables with any false discovery.
    pub any_false: Proportion,
    /// Injected comparisons detected (slower), over every table.
    pub injected_detected: Proportion,
    /// Pairs an injected comparison took on average, in the tables.
    pub injected_mean_pairs: f64,
}

/// The side-by-side replay: every test, without and with outliers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideBySide {
    /// Pairs every comparison was measured to (the sequential budget).
    pub budget_pairs: u32,
    pub table_size: u32,
    pub outlier_share: f64,
    pub outlier_factors: (f64, f64),
    pub rows: Vec<TestReplay>,
    /// How it was done, in words.
    pub method: String,
}

/// A/A comparisons in a mixed table of `calibrate::replay::SURVEY_TABLE` (the survey's
/// null and negative controls number about this many).
pub const MIXED_NULLS: usize = 10;
