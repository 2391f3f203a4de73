//! The data every part of secperf passes around: samples, per-workload
//! results, run metadata. Plain serde types, no behaviour beyond naming.
//!
//! Units are in the field names (`ns_per_op`, `ops_per_sec`, `sample_ms`).

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use crate::params::Params;

pub mod bisect;
pub mod calibration;
pub mod measure;
pub mod metric;
pub mod prediction;
pub mod track;

pub use measure::{Figure, Measure, Per};
pub use metric::Metric;

/// How the tasks of a measurement are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One forked process per task (will-it-scale's default).
    Process,
    /// One thread per task inside the secperf process.
    Thread,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Process => "process",
            Mode::Thread => "thread",
        })
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "process" => Ok(Mode::Process),
            "thread" => Ok(Mode::Thread),
            other => Err(format!("unknown mode '{other}' (valid: process, thread)")),
        }
    }
}

use crate::stats::estimate::nan_if_null;
pub use crate::stats::{Estimate, LineFit, Summary};

/// One fixed-duration slice of a measurement, after warmup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// 0-based index among the kept (non-warmup) samples.
    pub index: u32,
    /// Measured length of the slice (monotonic clock), nanoseconds.
    pub elapsed_ns: u64,
    /// Operations completed by all tasks in the slice.
    pub ops: u64,
    /// All tasks together.
    pub ops_per_sec: f64,
    /// Mean time one task takes for one operation: tasks * elapsed / ops.
    pub ns_per_op: f64,
    /// The event counted per task beside the clock (the PMU's retired
    /// instructions, `--metric instructions` on a host), per operation;
    /// absent when nothing was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_per_op: Option<f64>,
    /// Operations per second of each task, in task order.
    pub per_task_ops_per_sec: Vec<f64>,
    /// Involuntary context switches of all tasks during the slice.
    pub involuntary_ctxt_switches: u64,
    /// Steal time on the CPUs the tasks ran on, milliseconds.
    pub steal_ms: f64,
    /// Quality flags: `preempted` (involuntary context switches),
    /// `steal` (hypervisor steal time), `imbalance` (a task far slower
    /// than the others), `starved` (the slice had to be stretched by half
    /// or more until every task completed an operation), `busy` (another
    /// runnable thread competed for a task's CPU: a task waited on a run
    /// queue, per `/proc/<tid>/schedstat`, for over 5% of the slice beyond
    /// 3 us per time it was put on the CPU, which a hand-off to a partner
    /// such as pipe_ctx's takes).
    pub flags: Vec<String>,
}

/// A secondary rate some workloads report besides operations, e.g. the
/// directory entries a `tree_walk` visits per second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitRate {
    /// What is counted, plural: "entries".
    pub unit: String,
    /// How many units one operation does.
    pub per_op: u64,
    /// Units per second, all tasks together.
    pub per_sec: Summary,
}

/// CPU time of the processes a workload's operations started (the
/// `command` workload's runs), per operation, over the kept samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ChildCpu {
    /// Operations (runs) the figures average over.
    pub runs: u64,
    pub user_ns_per_op: f64,
    pub sys_ns_per_op: f64,
}

impl ChildCpu {
    /// User + system CPU time per operation, ns.
    pub fn ns_per_op(&self) -> f64 {
        self.user_ns_per_op + self.sys_ns_per_op
    }
}

/// The outcome of measuring one workload at one task count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub workload: String,
    pub mode: Mode,
    pub tasks: u32,
    /// Whether tasks were pinned, and to which CPUs (task i on `cpus[i]`).
    pub pinned: bool,
    pub cpus: Vec<usize>,
    pub params: Params,
    pub sample_ms: u64,
    pub warmup_samples: u32,
    /// Number of kept samples (`sample_data.len()`).
    pub samples: u32,
    pub ops_per_sec: Summary,
    pub ns_per_op: Summary,
    /// The counted event per operation over the kept samples (the PMU's
    /// instructions on a host); absent when nothing was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_per_op: Option<Summary>,
    pub unit_rate: Option<UnitRate>,
    pub sample_data: Vec<Sample>,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// Where the time goes, from extra profiled measurements (`run
    /// --profile`); absent when not profiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// CPU time per operation of the processes the operations started
    /// (`command`); absent for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_cpu: Option<ChildCpu>,
    /// The figures the client reported (`service` with a client secperf
    /// reads), each the median over the kept runs; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_metrics: Vec<crate::clients::ClientMetric>,
}

/// What identifies a run: who started it, when, where, with what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub label: String,
    /// "run" for `secperf run`; later commands add their own kinds.
    pub kind: String,
    pub started_at: DateTime<Utc>,
    pub host: String,
    pub secperf_version: String,
    /// The command line that started the run, for reproduction.
    pub command: String,
    /// The run's parameters (tasks ladder, mode, samples, ...).
    pub params: serde_json::Value,
    /// The probe snapshot (`secperf probe --json`) taken at the start.
    pub system: serde_json::Value,
}

/// One pair of an A/B comparison: which arm ran first, and each arm's
/// figure per operation in the comparison's measure (median of that
/// half's slices), with the figures of the measures beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairData {
    pub index: u32,
    /// "AB" (baseline first) or "BA".
    pub order: String,
    /// In the comparison's measure ([`Comparison::measure`]); stored
    /// before measures existed as `baseline_ns_per_op`, time.
    #[serde(alias = "baseline_ns_per_op")]
    pub baseline_per_op: f64,
    #[serde(alias = "treatment_ns_per_op")]
    pub treatment_per_op: f64,
    /// The pair's figures of the measures beside the comparison's own
    /// (a client's, a server's CPU, time beside counted instructions).
    #[serde(default, alias = "metrics", skip_serializing_if = "Vec::is_empty")]
    pub beside: Vec<PairFigure>,
}

/// One figure of a pair beside its own measure: its value in each half.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairFigure {
    #[serde(flatten)]
    pub measure: Measure,
    pub baseline: f64,
    pub treatment: f64,
}

/// A measure's change under the treatment, from the pairs that reported
/// it: the baseline arm's median, the paired interval of the change
/// (treatment / baseline - 1, in %), computed and decided as the
/// comparison's own measure is (its verdict among the same measure's
/// figures of the table), and the treatment the change gives, as the
/// overhead table shows it: `treatment / baseline - 1` is the change.
/// The treatment arm's own median is `treatment_median`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredMeasureChange")]
pub struct MeasureChange {
    #[serde(flatten)]
    pub measure: Measure,
    /// The baseline arm's median over pairs.
    pub baseline: f64,
    /// baseline x (1 + change / 100).
    pub treatment: f64,
    /// The treatment arm's own median over pairs (its ratio to `baseline`
    /// is not the paired change).
    pub treatment_median: f64,
    pub change_pct: crate::stats::paired::OverheadPct,
    pub pairs: u32,
    /// The level `change_pct`'s interval is at when it is the table's
    /// rather than the figure's own; absent when it is its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_alpha: Option<f64>,
}

impl MeasureChange {
    /// The figure from each arm's median and the paired change; its
    /// `treatment` is the one the change gives.
    pub fn new(
        measure: Measure,
        baseline: f64,
        treatment_median: f64,
        change_pct: crate::stats::paired::OverheadPct,
        pairs: u32,
    ) -> MeasureChange {
        MeasureChange {
            measure,
            baseline,
            treatment: baseline * (1.0 + change_pct.estimate / 100.0),
            treatment_median,
            change_pct,
            pairs,
            ci_alpha: None,
        }
    }
}

/// A [`MeasureChange`] as stored. Runs stored before `treatment_median`
/// existed kept the treatment arm's own median in `treatment`: read back,
/// it moves to `treatment_median` and `treatment` becomes the one the
/// change gives, so every document's baseline and treatment give its
/// change.
#[derive(Deserialize)]
struct StoredMeasureChange {
    #[serde(flatten)]
    measure: Measure,
    baseline: f64,
    treatment: f64,
    #[serde(default)]
    treatment_median: Option<f64>,
    change_pct: crate::stats::paired::OverheadPct,
    pairs: u32,
    #[serde(default)]
    ci_alpha: Option<f64>,
}

impl From<StoredMeasureChange> for MeasureChange {
    fn from(s: StoredMeasureChange) -> MeasureChange {
        match s.treatment_median {
            Some(median) => MeasureChange {
                measure: s.measure,
                baseline: s.baseline,
                treatment: s.treatment,
                treatment_median: median,
                change_pct: s.change_pct,
                pairs: s.pairs,
                ci_alpha: s.ci_alpha,
            },
            None => MeasureChange {
                ci_alpha: s.ci_alpha,
                ..MeasureChange::new(s.measure, s.baseline, s.treatment, s.change_pct, s.pairs)
            },
        }
    }
}

impl PairData {
    /// A stored pair's (baseline, treatment) per operation from its JSON,
    /// under either name (`*_per_op`; `*_ns_per_op` before measures
    /// existed); None where either is missing or not a number.
    pub fn arms_of_json(p: &serde_json::Value) -> Option<(f64, f64)> {
        let arm = |name: &str| {
            p[format!("{name}_per_op")]
                .as_f64()
                .or_else(|| p[format!("{name}_ns_per_op")].as_f64())
        };
        Some((arm("baseline")?, arm("treatment")?))
    }

    /// The pair's (baseline, treatment) of a measure beside its own, where
    /// it has both and both are positive (a ratio of them is then finite).
    pub fn beside_of(&self, measure: &Measure) -> Option<(f64, f64)> {
        self.beside
            .iter()
            .find(|f| &f.measure == measure && f.baseline > 0.0 && f.treatment > 0.0)
            .map(|f| (f.baseline, f.treatment))
    }

    /// The pair's ln(treatment / baseline) in its comparison's measure.
    pub fn log_ratio(&self) -> f64 {
        (self.treatment_per_op / self.baseline_per_op).ln()
    }
}

/// The cost of one mechanism (variant, parameters) on one workload at one
/// task count, from randomised interleaved pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub workload: String,
    /// Workload parameters (defaults filled in).
    pub workload_params: Params,
    pub mechanism: String,
    pub variant: String,
    /// Mechanism parameters (defaults filled in).
    pub params: Params,
    pub mode: Mode,
    pub tasks: u32,
    pub pairs: u32,
    /// Length of one sample and samples per half.
    pub sample_ms: u64,
    pub samples_per_half: u32,
    /// What the comparison's figures and verdict are in: time (ns per
    /// operation) or counted instructions per operation, the run's
    /// `--metric`. Stored before measures existed: time.
    #[serde(default)]
    pub measure: Measure,
    /// Medians over pairs of each arm's figure per operation, in
    /// `measure` (stored before measures existed as `*_ns_per_op`).
    #[serde(alias = "baseline_ns_per_op")]
    pub baseline_per_op: f64,
    #[serde(alias = "treatment_ns_per_op")]
    pub treatment_per_op: f64,
    pub overhead_pct: crate::stats::paired::OverheadPct,
    /// Hodges-Lehmann estimate of the overhead (median of Walsh averages of
    /// the pairs' log ratios), beside the median-based `overhead_pct`.
    #[serde(default)]
    pub hodges_lehmann_pct: f64,
    pub pair_data: Vec<PairData>,
    /// Where the difference goes, from extra profiled pairs (`--profile`);
    /// absent when not profiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    /// CPU time per operation of the processes the workload started
    /// (`command`), [baseline, treatment], each the median over pairs;
    /// absent for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_cpu: Option<[ChildCpu; 2]>,
    /// The measures beside the comparison's own, each with its paired
    /// interval and verdict: a load client's figures (`service`:
    /// requests/s, latency), a server's CPU per client run, and time
    /// beside counted instructions where one run has both.
    #[serde(
        default,
        alias = "client_metrics",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub beside: Vec<MeasureChange>,
    /// How the sequential design (the default) ended this comparison;
    /// absent for a fixed number of pairs (`--pairs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialStop>,
    /// The run stopped (Ctrl-C, a failing half) inside this comparison:
    /// its figures are from the pairs finished before that.
    #[serde(default, skip_serializing_if = "is_false")]
    pub unfinished: bool,
    /// The level `overhead_pct`'s interval is at when it is the table's
    /// rather than the comparison's own 95% one (alpha / m under Holm,
    /// alpha x R / m under e-BH: [`crate::stats::decision::shown_alpha`]);
    /// absent when it is the comparison's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_alpha: Option<f64>,
    /// The comparison's own 95% interval (%), when the one shown is the
    /// table's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ci_low_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ci_high_pct: Option<f64>,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// Where a sequential comparison stopped: `pairs` of the comparison were
/// measured out of a budget of `max_pairs`, and why. Its interval is the
/// anytime-valid confidence sequence and its p-value the anytime one
/// ([`crate::stats::sequential`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SequentialStop {
    pub max_pairs: u32,
    /// Comparisons in the table when it was measured (the Bonferroni
    /// divisor of its stopping rule).
    pub family: u32,
    pub stopped: crate::stats::sequential::StopReason,
}

/// A parameter sweep (`overhead --sweep KEY=V1,V2,...`): one comparison per
/// value of one parameter, in the same randomised design, and a straight
/// line fitted by least squares to the per-pair differences in ns/op.
/// Stored with the run as a run note named [`Sweep::NOTE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// What was swept, as given: `filters` (a mechanism parameter) or
    /// `open.depth` (a workload parameter).
    pub key: String,
    /// The comparisons' common part: "seccomp:args on getppid tasks=1".
    pub label: String,
    /// What the fitted coefficients mean, e.g. "ns/op added = entry cost +
    /// cost per filter x filters".
    pub model: String,
    /// The names of the intercept and the slope ("entry cost", "per filter").
    pub intercept_name: String,
    pub slope_name: String,
    pub points: Vec<SweepPoint>,
    /// Absent when fewer than two distinct values could be fitted.
    pub fit: Option<LineFit>,
}

impl Sweep {
    /// The run-note name sweeps are stored under.
    pub const NOTE: &'static str = "sweep";
}

/// One value of a sweep: its comparison's per-pair differences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    pub value: f64,
    /// The comparison's treatment label (`seccomp:args,filters=4`).
    pub comparison: String,
    /// Treatment minus baseline ns/op, one per pair, in pair order.
    pub delta_ns_per_op: Vec<f64>,
    /// The comparison's overhead estimate, percent.
    pub overhead_pct: f64,
    /// The comparison's baseline (median over pairs), ns/op; NaN in
    /// sweeps stored before it was recorded.
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub baseline_ns_per_op: f64,
    /// The overhead's 95% interval, percent; absent in older sweeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_ci_pct: Option<[f64; 2]>,
}

fn nan() -> f64 {
    f64::NAN
}

/// One row of an attribution table: a group of kernel functions, or one
/// sampled function (self time). ns/op are means over the profiled pairs
/// of (the row's share of the half's samples) x (the half's ns/op).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttributionRow {
    pub name: String,
    /// The group a symbol row's samples mostly belong to (empty for group rows).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(deserialize_with = "nan_if_null")]
    pub baseline_ns_per_op: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub treatment_ns_per_op: f64,
    /// Treatment minus baseline per pair, mean over pairs with a 95%
    /// Student-t interval (NaN bounds with fewer than 2 pairs).
    pub delta_ns_per_op: Estimate,
    /// This row's delta as a percentage of the whole delta.
    #[serde(deserialize_with = "nan_if_null")]
    pub share_of_delta_pct: f64,
    /// Share of the samples in each arm, percent (what `perf diff` shows).
    #[serde(deserialize_with = "nan_if_null")]
    pub baseline_share_pct: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub treatment_share_pct: f64,
    /// The delta's interval contains 0.
    pub within_noise: bool,
}

/// One row of a single configuration's profile: a group or a symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRow {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// Share of samples x the measurement's ns/op, mean over the profiled
    /// measurements with a 95% Student-t interval.
    pub ns_per_op: Estimate,
    /// Share of the samples, percent.
    #[serde(deserialize_with = "nan_if_null")]
    pub share_pct: f64,
}

/// Where the time of one workload goes under the current configuration
/// (`run --profile`), from profiled measurements after the timed one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub measurements: u32,
    pub hz: u64,
    pub clock: String,
    pub samples: ProfileSamples,
    /// How much slower the profiled measurements ran than the timed one.
    #[serde(deserialize_with = "nan_if_null")]
    pub profiling_slowdown_pct: f64,
    pub total: ProfileRow,
    pub groups: Vec<ProfileRow>,
    pub symbols: Vec<ProfileRow>,
    #[serde(default)]
    pub notes: Vec<String>,
    /// Folded call stacks summed over the profiled measurements (stored,
    /// left out of `--json`).
    #[serde(skip)]
    pub folded: std::collections::BTreeMap<String, u64>,
}

/// Sample counts of the profiled halves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSamples {
    pub total: u64,
    pub per_half_min: u64,
    #[serde(deserialize_with = "nan_if_null")]
    pub per_half_median: f64,
    /// Samples the kernel dropped because the ring buffer was full.
    pub lost: u64,
}

/// Where an A/B difference goes: the delta ns/op of each group of kernel
/// functions and of each sampled function, from profiled pairs measured
/// after the timed ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// Profiled pairs and the sampling frequency (per task, Hz).
    pub pairs: u32,
    pub hz: u64,
    /// The software clock sampled (`cpu-clock`).
    pub clock: String,
    pub samples: ProfileSamples,
    /// How much slower the profiled halves ran than the timed ones of the
    /// same arm (mean of the two arms, and each), percent.
    #[serde(deserialize_with = "nan_if_null")]
    pub profiling_slowdown_pct: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub baseline_slowdown_pct: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub treatment_slowdown_pct: f64,
    /// The whole profiled delta (the sum of every row).
    pub total: AttributionRow,
    pub groups: Vec<AttributionRow>,
    /// The symbols with the largest deltas, largest first.
    pub symbols: Vec<AttributionRow>,
    /// Limits of this profile (too few samples, hidden kernel addresses).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Folded call stacks per arm (`outer;...;leaf` -> samples), summed
    /// over the profiled halves: what a flame graph is drawn from. Stored
    /// in the database, left out of `--json`.
    #[serde(skip)]
    pub folded: [std::collections::BTreeMap<String, u64>; 2],
}

/// What the negative control (a workload no mechanism should change) says
/// about trusting the rest of a run's comparisons.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NegativeControl {
    pub workload: String,
    /// No control comparison came out slower or faster.
    pub passed: bool,
    /// Every control comparison, by treatment ("audit:enabled", with
    /// " tasks=N" beyond 1 task).
    pub comparisons: Vec<String>,
    /// Those whose final verdict is slower or faster.
    pub failed: Vec<String>,
}

/// SELinux access vector cache counters, summed over CPUs, as
/// [`AvcStats::FILE`] gives them; `suites::avc` reads them around each
/// workload of the suites that collect them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AvcStats {
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    pub allocations: u64,
    pub reclaims: u64,
    pub frees: u64,
}

impl AvcStats {
    /// Where SELinux exports the counters (absent: SELinux is not active).
    pub const FILE: &'static str = "/sys/fs/selinux/avc/cache_stats";

    /// The counters in file order, as its header names them.
    pub const FIELDS: [&'static str; 6] = [
        "lookups",
        "hits",
        "misses",
        "allocations",
        "reclaims",
        "frees",
    ];

    /// What happened between `self` (before) and `after`; counters that
    /// went backwards (a reset) count from zero.
    pub fn delta(&self, after: &AvcStats) -> AvcStats {
        let d = |a: u64, b: u64| b.checked_sub(a).unwrap_or(b);
        AvcStats {
            lookups: d(self.lookups, after.lookups),
            hits: d(self.hits, after.hits),
            misses: d(self.misses, after.misses),
            allocations: d(self.allocations, after.allocations),
            reclaims: d(self.reclaims, after.reclaims),
            frees: d(self.frees, after.frees),
        }
    }

    /// The counters in [`AvcStats::FIELDS`] order.
    pub fn values(&self) -> [u64; 6] {
        [
            self.lookups,
            self.hits,
            self.misses,
            self.allocations,
            self.reclaims,
            self.frees,
        ]
    }

    /// Hits per lookup, percent (None without lookups).
    pub fn hit_pct(&self) -> Option<f64> {
        (self.lookups > 0).then(|| self.hits as f64 * 100.0 / self.lookups as f64)
    }
}

/// One workload's effect on the AVC, stored as a note of a suite run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AvcDelta {
    pub workload: String,
    pub tasks: u32,
    pub stats: AvcStats,
}

/// A mechanism the survey or the user could not measure, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub mechanism: String,
    pub reason: String,
}

/// A policy file a run measured under (an OCI seccomp profile, an audit
/// rules file), stored with the run as it was read, so that the run can be
/// read and repeated (`secperf rerun`) after the file changed or went away.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyFile {
    /// The treatment that named it: "audit:rules=/tmp/stig.rules".
    pub treatment: String,
    /// The parameter that named it: "rules", "profile".
    pub param: String,
    /// The path as given.
    pub path: String,
    /// SHA-256 of the bytes read, lowercase hex.
    pub sha256: String,
    pub bytes: u64,
    /// The content as read (UTF-8; invalid sequences would be replaced,
    /// and `sha256` still names the bytes).
    pub content: String,
}

/// The settings of a run that reports show, read leniently from the run's
/// stored parameters: each command stores its own plan, and older runs
/// lack fields, so a field that is missing or of another shape is absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// The seed of the AB/BA coin and the bootstrap.
    pub seed: Option<u64>,
    /// The thresholds of the verdicts.
    pub decision: Option<crate::stats::decision::DecisionOpts>,
    /// Mechanisms the survey could not measure, and why.
    pub skipped: Vec<Skipped>,
    /// What each treatment's mechanism said before measuring (rule-file
    /// lines not applied, a compiled profile's size).
    pub treatment_notes: Vec<String>,
    /// How many comparisons the plan had (an interrupted run stores
    /// fewer); absent for plans that do not list them.
    #[serde(default)]
    pub planned_comparisons: Option<usize>,
}

impl RunSettings {
    /// The settings in a run's stored parameters.
    pub fn of(params: &serde_json::Value) -> RunSettings {
        fn field<T: serde::de::DeserializeOwned>(v: &serde_json::Value, key: &str) -> Option<T> {
            serde_json::from_value(v.get(key)?.clone()).ok()
        }
        // Thresholds a run did not record keep their defaults.
        let decision = params.get("decision").and_then(|given| {
            let mut d =
                serde_json::to_value(crate::stats::decision::DecisionOpts::default()).ok()?;
            for (k, v) in given.as_object()? {
                d[k] = v.clone();
            }
            serde_json::from_value(d).ok()
        });
        RunSettings {
            seed: field(params, "seed"),
            decision,
            skipped: field(params, "skipped").unwrap_or_default(),
            treatment_notes: field(params, "treatment_notes").unwrap_or_default(),
            planned_comparisons: params
                .get("comparisons")
                .and_then(|c| c.as_array())
                .map(Vec::len),
        }
    }
}

/// A run as read back from the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    pub run_id: i64,
    #[serde(flatten)]
    pub meta: RunMeta,
    pub finished_at: Option<DateTime<Utc>>,
    pub results: Vec<WorkloadResult>,
    /// A/B comparisons (`secperf overhead` runs).
    #[serde(default)]
    pub comparisons: Vec<Comparison>,
    /// The run's identity across databases, recorded when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The campaign that pulled this run from a host, and the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<CampaignTag>,
}

/// A run measured by `secperf campaign`: which campaign, on which host
/// (the name the campaign was given for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignTag {
    pub id: String,
    pub host: String,
}

impl StoredRun {
    /// The run's name in headings and columns: "run 3", or "label (run 3)"
    /// when it has a label.
    pub fn name(&self) -> String {
        if self.meta.label.is_empty() {
            format!("run {}", self.run_id)
        } else {
            format!("{} (run {})", self.meta.label, self.run_id)
        }
    }
}

/// One line of `secperf results list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: i64,
    pub label: String,
    pub kind: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub host: String,
    /// Kernel release from the probe snapshot, if it had one.
    pub kernel: Option<String>,
    /// Results of one configuration (`run`, suites).
    pub results: u32,
    /// A/B comparisons (`overhead`, suites).
    #[serde(default)]
    pub comparisons: u32,
    /// The workloads measured, in order of first measurement.
    pub workloads: Vec<String>,
    /// The treatments its comparisons switched (`seccomp:allow`), in
    /// order of first comparison.
    #[serde(default)]
    pub mechanisms: Vec<String>,
    /// How many of its comparisons reached each verdict (`slower`, ...;
    /// `unfinished` for those the run stopped inside).
    #[serde(default)]
    pub verdicts: std::collections::BTreeMap<String, u32>,
}

/// A cost probe's measured figure (`secperf predict`'s models): ns a
/// treatment adds per operation of a workload, from one comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeFigure {
    pub spec: String,
    pub workload: String,
    pub baseline_ns_per_op: f64,
    pub delta_ns_per_op: f64,
    /// The comparison's 95% interval, in ns per operation.
    pub delta_low_ns: f64,
    pub delta_high_ns: f64,
    pub pairs: u32,
    /// The run that measured it.
    pub run_id: i64,
    pub measured_at: chrono::DateTime<chrono::Utc>,
}

/// Stored runs and results built in memory, for tests of what reads them.
#[cfg(test)]
pub mod testing {
    use chrono::Utc;
    use serde_json::json;

    use super::{Mode, RunMeta, Sample, StoredRun, Summary, WorkloadResult};

    /// A one-task result of `workload` whose samples took `values` ns/op.
    pub fn result(workload: &str, values: &[f64]) -> WorkloadResult {
        let s = Summary {
            median: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
        };
        WorkloadResult {
            workload: workload.into(),
            mode: Mode::Process,
            tasks: 1,
            pinned: true,
            cpus: vec![0],
            params: Default::default(),
            sample_ms: 100,
            warmup_samples: 1,
            samples: values.len() as u32,
            ops_per_sec: s,
            ns_per_op: s,
            unit_rate: None,
            sample_data: values
                .iter()
                .enumerate()
                .map(|(i, &ns)| Sample {
                    index: i as u32,
                    elapsed_ns: 100_000_000,
                    ops: (1e8 / ns) as u64,
                    ops_per_sec: 1e9 / ns,
                    ns_per_op: ns,
                    counted_per_op: None,
                    per_task_ops_per_sec: vec![1e9 / ns],
                    involuntary_ctxt_switches: 0,
                    steal_ms: 0.0,
                    flags: vec![],
                })
                .collect(),
            started_at: Utc::now(),
            finished_at: Utc::now(),
            profile: None,
            child_cpu: None,
            client_metrics: Vec::new(),
            counted_per_op: None,
        }
    }

    /// A comparison of `mechanism:variant` on `workload`, one task, no
    /// pairs yet (tests fill `pair_data` and `params` as they need).
    pub fn comparison(workload: &str, mechanism: &str, variant: &str) -> super::Comparison {
        super::Comparison {
            workload: workload.into(),
            workload_params: Default::default(),
            mechanism: mechanism.into(),
            variant: variant.into(),
            params: Default::default(),
            mode: Mode::Process,
            tasks: 1,
            pairs: 0,
            sample_ms: 60,
            samples_per_half: 2,
            measure: Default::default(),
            baseline_per_op: f64::NAN,
            treatment_per_op: f64::NAN,
            overhead_pct: crate::stats::paired::OverheadPct {
                estimate: 0.0,
                ci_low: 0.0,
                ci_high: 0.0,
                p_value: 1.0,
                verdict: crate::stats::decision::Verdict::NoChange,
            },
            hodges_lehmann_pct: f64::NAN,
            pair_data: vec![],
            attribution: None,
            child_cpu: None,
            sequential: None,
            unfinished: false,
            ci_alpha: None,
            own_ci_low_pct: None,
            own_ci_high_pct: None,
            beside: Vec::new(),
        }
    }

    pub fn run(id: i64, label: &str, kernel: &str, results: Vec<WorkloadResult>) -> StoredRun {
        StoredRun {
            run_id: id,
            meta: RunMeta {
                label: label.into(),
                kind: "run".into(),
                started_at: Utc::now(),
                host: "box".into(),
                secperf_version: "0.1.0".into(),
                command: "secperf run".into(),
                params: json!({}),
                system: json!({"kernel": {"release": kernel}, "lsm": {"modules": ["capability", "landlock"]},
                           "cpu": {"model": "AMD EPYC", "online_count": 2}}),
            },
            finished_at: Some(Utc::now()),
            results,
            comparisons: vec![],
            uuid: None,
            campaign: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::run;

    #[test]
    fn a_run_is_named_by_its_label_and_id() {
        assert_eq!(run(3, "", "6.18", vec![]).name(), "run 3");
        assert_eq!(run(3, "before", "6.18", vec![]).name(), "before (run 3)");
    }

    #[test]
    fn a_client_figures_baseline_and_treatment_give_its_change_old_records_too() {
        // Measured on a loaded machine: each arm's own median is -4.3%
        // apart while the paired change is +4.0%.
        let change = serde_json::json!({
            "estimate": 4.0, "ci_low": 1.0, "ci_high": 7.0, "p_value": 0.01,
            "verdict": "no-change"
        });
        let old = serde_json::json!({
            "name": "SET.requests_per_sec", "higher_is_better": true,
            "baseline": 49720.0, "treatment": 47570.0, "change_pct": change, "pairs": 16
        });
        let m: super::MeasureChange = serde_json::from_value(old).unwrap();
        assert_eq!(m.treatment_median, 47570.0);
        assert!((m.treatment / m.baseline - 1.04).abs() < 1e-12, "{m:?}");
        let back: super::MeasureChange =
            serde_json::from_value(serde_json::to_value(&m).unwrap()).unwrap();
        assert_eq!(back, m, "a new record reads back as written");
        let doc = serde_json::to_value(&m).unwrap();
        assert_eq!(doc["treatment_median"], 47570.0);
    }

    #[test]
    fn a_comparison_stored_in_ns_with_client_metrics_reads_as_time_with_measures_beside() {
        let mut c = super::testing::comparison("service", "seccomp", "allow");
        c.baseline_per_op = 300.0;
        c.treatment_per_op = 310.0;
        c.hodges_lehmann_pct = 3.3;
        c.pair_data = vec![super::PairData {
            index: 0,
            order: "AB".into(),
            baseline_per_op: 300.0,
            treatment_per_op: 310.0,
            beside: vec![],
        }];
        let mut old = serde_json::to_value(&c).unwrap();
        let o = old.as_object_mut().unwrap();
        o.remove("measure");
        for (new, was) in [
            ("baseline_per_op", "baseline_ns_per_op"),
            ("treatment_per_op", "treatment_ns_per_op"),
        ] {
            let v = o.remove(new).unwrap();
            o.insert(was.into(), v);
            let p = o["pair_data"][0].as_object_mut().unwrap();
            let v = p.remove(new).unwrap();
            p.insert(was.into(), v);
        }
        o["pair_data"][0]["metrics"] = serde_json::json!([
            {"name": "requests_per_sec", "higher_is_better": true,
             "baseline": 5000.0, "treatment": 4900.0}
        ]);
        o.insert(
            "client_metrics".into(),
            serde_json::json!([{
                "name": "requests_per_sec", "higher_is_better": true,
                "baseline": 5000.0, "treatment": 4900.0, "treatment_median": 4900.0,
                "change_pct": {"estimate": -2.0, "ci_low": -3.0, "ci_high": -1.0,
                               "p_value": 0.01, "verdict": "no-change"},
                "pairs": 1
            }]),
        );
        let back: super::Comparison = serde_json::from_value(old).unwrap();
        assert_eq!(back.measure, super::Measure::of(super::Metric::Time));
        assert_eq!(
            (back.baseline_per_op, back.treatment_per_op),
            (300.0, 310.0)
        );
        assert_eq!(back.pair_data[0].baseline_per_op, 300.0);
        let rps = super::Measure::per_run("requests_per_sec", true);
        assert_eq!(back.pair_data[0].beside[0].measure, rps);
        assert_eq!(back.beside[0].measure, rps);
        assert_eq!(back.beside[0].treatment_median, 4900.0);
    }
}
