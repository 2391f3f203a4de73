//! What a calibration measures: the injected slowdowns, the counts of
//! comparisons sized from the time budget, the design of a comparison,
//! and the schedule of steps in the order they run.

use anyhow::{Context, Result};
use serde::Serialize;

use crate::engine::ab::design::{Case, Design};
use crate::engine::plan::HalfDesign;
use crate::engine::session::{cache_dir, seed_or_clock};
use crate::mechanisms::{Availability, Treatment};
use crate::model::{Mode, Params};
use crate::stats::decision::{DecisionOpts, SeqTest};
use crate::workloads::WorkloadDef;

pub use crate::model::calibration::Counts;

/// Injected slowdowns of the default calibration, (treatment, workload):
/// an allow-all seccomp filter costs about 30 ns per system call here,
/// about 10% of `getppid` (one call of ~290 ns) and about 2.5% of `open`
/// (openat + close, ~2.4 us): the sizes a sequential comparison must
/// detect and the sizes a survey meets.
pub const DEFAULT_INJECTED: &[(&str, &str)] =
    &[("seccomp:allow", "getppid"), ("seccomp:allow", "open")];
/// Injected slowdown of `--quick` (the one near 10%).
pub const QUICK_INJECTED: &[(&str, &str)] = &[("seccomp:allow", "getppid")];

/// One injected slowdown: a treatment on a workload, whatever `-w` is.
#[derive(Debug, Clone)]
pub struct Injected {
    /// `seccomp:allow on getppid`.
    pub label: String,
    pub treatment: Treatment,
    pub workload: &'static WorkloadDef,
    pub workload_params: Params,
}

impl Injected {
    /// The injected case of `spec` on workload `name` (default parameters).
    pub fn new(spec: &str, name: &str) -> Result<Injected> {
        let workload = crate::workloads::find(name)
            .with_context(|| format!("internal error: no workload {name}"))?;
        Ok(Injected {
            label: format!("{spec} on {name}"),
            treatment: Treatment::parse(spec)?,
            workload,
            workload_params: workload.params_with_defaults(&Default::default()),
        })
    }
}

/// Long comparisons pooled into an injected slowdown's truth.
pub const TRUTH_COMPARISONS: u32 = 3;
/// A truth comparison has this many times the pairs of a normal one.
pub const TRUTH_PAIRS_FACTOR: u32 = 3;

/// `--quick`: A/A comparisons and short comparisons per injected size.
pub const QUICK_AA: u32 = 20;
pub const QUICK_INJECTED_COMPARISONS: u32 = 10;

/// Bounds of the counts sized from the budget.
pub const MIN_AA: u32 = 10;
pub const MIN_INJECTED_COMPARISONS: u32 = 5;
pub const MAX_COMPARISONS: u32 = 200;

/// Time a half costs beyond its slices (forking tasks, setup), seconds;
/// measured here at 5-7 ms.
const HALF_OVERHEAD_S: f64 = 0.007;

/// Estimated seconds of one comparison of `pairs` pairs with `design`'s
/// slices.
pub fn estimate_comparison_s(design: &Design, pairs: u32) -> f64 {
    2.0 * pairs as f64
        * (design.slices_per_half() as f64 * design.sample_ms as f64 / 1000.0 + HALF_OVERHEAD_S)
}

/// Sizes the calibration.
///
/// `--quick`: [`QUICK_AA`] A/A comparisons and, per injected size,
/// [`TRUTH_COMPARISONS`] truth comparisons plus [`QUICK_INJECTED_COMPARISONS`]
/// short ones, whatever the budget.
///
/// Otherwise, with k = round(budget / seconds of one comparison): A/A gets
/// one budget (K = k, within [`MIN_AA`]..=[`MAX_COMPARISONS`]) and every
/// injected size one budget too, the truth's 3 x 3 = 9 comparison-times
/// included (M = k - 9, within [`MIN_INJECTED_COMPARISONS`]..=200). With
/// the two default sizes a calibration thus takes about 3x the budget;
/// more only when the minimums bind (a budget below ~10 comparisons).
pub fn counts(quick: bool, budget_s: f64, comparison_s: f64, pairs: u32) -> Counts {
    let truth_pairs = pairs * TRUTH_PAIRS_FACTOR;
    if quick {
        return Counts {
            aa: QUICK_AA,
            truth_comparisons: TRUTH_COMPARISONS,
            truth_pairs,
            injected: QUICK_INJECTED_COMPARISONS,
        };
    }
    let k = if comparison_s > 0.0 {
        (budget_s / comparison_s)
            .round()
            .min(MAX_COMPARISONS as f64) as u32
    } else {
        MAX_COMPARISONS
    };
    let truth_cost = TRUTH_COMPARISONS * TRUTH_PAIRS_FACTOR;
    Counts {
        aa: k.clamp(MIN_AA, MAX_COMPARISONS),
        truth_comparisons: TRUTH_COMPARISONS,
        truth_pairs,
        injected: k
            .saturating_sub(truth_cost)
            .clamp(MIN_INJECTED_COMPARISONS, MAX_COMPARISONS),
    }
}

/// Everything a calibration will do, validated.
#[derive(Debug, Clone)]
pub struct Plan {
    pub workload: &'static WorkloadDef,
    pub workload_params: Params,
    /// The design of a normal (short) comparison.
    pub design: Design,
    pub counts: Counts,
    /// Available injected slowdowns.
    pub injected: Vec<Injected>,
    /// Why the injected part is skipped, when it is.
    pub injected_skipped: Option<String>,
    pub budget_s: f64,
    pub quick: bool,
    /// How each comparison is decided: as `overhead` decides a table of
    /// one, with the sequential test asked for (`--test`).
    pub decision: DecisionOpts,
    /// Side by side: every A/A and short comparison is measured to the
    /// budget of a survey-sized table (`design.pairs`, fixed) and each
    /// test replayed on its pairs afterwards.
    pub side_by_side: bool,
}

/// `--side-by-side`: A/A comparisons (seven tables of the survey's size)
/// and short comparisons per injected size; `--quick`: two tables and 10.
pub const SIDE_BY_SIDE_AA: u32 = 7 * super::replay::SURVEY_TABLE as u32;
pub const SIDE_BY_SIDE_INJECTED: u32 = 40;
pub const SIDE_BY_SIDE_QUICK_AA: u32 = 2 * super::replay::SURVEY_TABLE as u32;
pub const SIDE_BY_SIDE_QUICK_INJECTED: u32 = 10;

/// What the user asked a calibration for, each value already checked.
#[derive(Debug, Clone)]
pub struct Request {
    pub workload: &'static WorkloadDef,
    pub workload_params: Params,
    /// The design of a normal (short) comparison: sequential unless pairs
    /// are given.
    pub half: HalfDesign,
    pub budget_s: f64,
    pub quick: bool,
    /// Counts that override the budget's.
    pub aa_comparisons: Option<u32>,
    pub injected_comparisons: Option<u32>,
    pub seed: Option<u64>,
    /// The sequential test checked (`--test`).
    pub test: SeqTest,
    /// Measure every comparison to the sequential budget and replay each
    /// test on the same pairs (`--side-by-side`, [`super::replay`]).
    pub side_by_side: bool,
    /// How the halves count (`--metric`, decided for this machine).
    pub counting: crate::engine::ab::counting::Counting,
}

/// What is stored as a calibration run's parameters.
#[derive(Debug, Serialize)]
pub struct Record<'a> {
    workload: &'a str,
    budget_s: f64,
    quick: bool,
    pairs: u32,
    sample_ms: u64,
    samples_per_half: u32,
    warmup: u32,
    seed: u64,
    counts: Counts,
    injected: Vec<&'a str>,
    injected_skipped: Option<&'a str>,
    test: SeqTest,
    side_by_side: bool,
}

impl Plan {
    /// Plans a calibration: the design on the CPUs this process may use,
    /// the counts from the budget (or as given), and the injected
    /// slowdowns when seccomp can run here (the reason when not).
    pub fn new(r: &Request) -> Result<Plan> {
        let decision = DecisionOpts {
            test: r.test,
            ..DecisionOpts::default()
        };
        // Side by side, every comparison runs, fixed, to the budget of a
        // table of the survey's size, whichever test would stop it sooner;
        // otherwise it is sequential unless pairs are given.
        let stop = (r.half.pairs.is_none() && !r.side_by_side)
            .then(|| crate::engine::plan::stop_rule(1, r.half.max_pairs, &decision, None));
        let pairs = if r.side_by_side {
            super::replay::TESTS
                .iter()
                .map(|&test| {
                    let d = DecisionOpts { test, ..decision };
                    let table = super::replay::SURVEY_TABLE;
                    crate::engine::plan::stop_rule(table, r.half.max_pairs, &d, None).max_pairs
                })
                .max()
                .unwrap_or(crate::engine::plan::DEFAULT_MAX_PAIRS)
        } else {
            r.half
                .pairs
                .unwrap_or_else(|| stop.map_or(10, |s| s.max_pairs))
        };
        let cpus =
            crate::sys::cpus::allowed_cpus().context("reading this process's CPU affinity")?;
        let design = Design {
            pairs,
            sample_ms: r.half.sample_ms,
            samples_per_half: r.half.samples_per_half,
            warmup: r.half.warmup,
            mode: Mode::Process,
            cpus,
            scratch_root: std::env::temp_dir(),
            cache_dir: cache_dir(),
            seed: seed_or_clock(r.seed),
            profile: None,
            stop,
            counting: r.counting,
        };
        let mut counts = counts(
            r.quick,
            r.budget_s,
            estimate_comparison_s(&design, pairs),
            pairs,
        );
        if r.side_by_side {
            (counts.aa, counts.injected) = if r.quick {
                (SIDE_BY_SIDE_QUICK_AA, SIDE_BY_SIDE_QUICK_INJECTED)
            } else {
                (SIDE_BY_SIDE_AA, SIDE_BY_SIDE_INJECTED)
            };
        }
        if let Some(k) = r.aa_comparisons {
            counts.aa = k;
        }
        if let Some(m) = r.injected_comparisons {
            counts.injected = m;
        }
        let specs = if r.quick {
            QUICK_INJECTED
        } else {
            DEFAULT_INJECTED
        };
        let mut injected = Vec::new();
        let mut injected_skipped = None;
        if counts.injected == 0 {
            injected_skipped = Some(
                "--injected-comparisons 0: the A/A control only (the noise for `overhead \
                 --equivalence auto` and --precision)"
                    .to_string(),
            );
        }
        for (spec, workload) in specs.iter().filter(|_| counts.injected > 0) {
            let i = Injected::new(spec, workload)?;
            match i.treatment.mechanism.probe() {
                Availability::Available => injected.push(i),
                Availability::Unavailable(reason) => {
                    injected_skipped = Some(format!(
                        "seccomp is unavailable here ({reason}); the injected slowdowns need it"
                    ));
                    injected.clear();
                    break;
                }
            }
        }
        Ok(Plan {
            workload: r.workload,
            workload_params: r.workload_params.clone(),
            design,
            counts,
            injected,
            injected_skipped,
            budget_s: r.budget_s,
            quick: r.quick,
            decision,
            side_by_side: r.side_by_side,
        })
    }

    /// The run's stored parameters.
    pub fn record(&self) -> Record<'_> {
        let d = &self.design;
        Record {
            workload: self.workload.name,
            budget_s: self.budget_s,
            quick: self.quick,
            pairs: d.pairs,
            sample_ms: d.sample_ms,
            samples_per_half: d.samples_per_half,
            warmup: d.warmup,
            seed: d.seed,
            counts: self.counts,
            injected: self.injected.iter().map(|i| i.label.as_str()).collect(),
            injected_skipped: self.injected_skipped.as_deref(),
            test: self.decision.test,
            side_by_side: self.side_by_side,
        }
    }
}

/// What one comparison of a calibration is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `none` against itself.
    AaControl,
    /// A long comparison of injected treatment i, pooled into its truth.
    Truth(usize),
    /// A normal comparison of injected treatment i.
    Short(usize),
}

/// One comparison to make, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub role: Role,
    pub pairs: u32,
}

impl Plan {
    /// The comparisons in the order they run: all A/A, then for every
    /// injected size its truth blocks spread evenly among its short
    /// comparisons (T S S S S T S S S T S S S for 3 and 10), so slow drift
    /// moves the truth and the short comparisons alike.
    pub fn schedule(&self) -> Vec<Step> {
        let c = self.counts;
        let short = self.design.pairs;
        let mut steps: Vec<Step> = (0..c.aa)
            .map(|_| Step {
                role: Role::AaControl,
                pairs: short,
            })
            .collect();
        for i in 0..self.injected.len() {
            let truth = Step {
                role: Role::Truth(i),
                pairs: c.truth_pairs,
            };
            let (t, m) = (c.truth_comparisons as u64, c.injected as u64);
            let mut placed = 0u64;
            for s in 0..m {
                while placed < t && placed * m <= s * t {
                    steps.push(truth);
                    placed += 1;
                }
                steps.push(Step {
                    role: Role::Short(i),
                    pairs: short,
                });
            }
            steps.extend((placed..t).map(|_| truth));
        }
        steps
    }

    /// Slices the whole schedule runs (for the progress bar).
    pub fn total_slices(&self) -> u64 {
        self.schedule()
            .iter()
            .map(|s| 2 * s.pairs as u64 * self.design.slices_per_half())
            .sum()
    }

    /// Estimated seconds of the whole schedule.
    pub fn estimate_s(&self) -> f64 {
        self.schedule()
            .iter()
            .map(|s| estimate_comparison_s(&self.design, s.pairs))
            .sum()
    }

    /// The case of a step.
    pub fn case_of(&self, step: &Step) -> Result<Case> {
        Ok(match step.role {
            Role::AaControl => Case {
                workload: self.workload,
                workload_params: self.workload_params.clone(),
                treatment: Treatment::parse("none")?,
                tasks: 1,
            },
            Role::Truth(i) | Role::Short(i) => {
                let inj = &self.injected[i];
                Case {
                    workload: inj.workload,
                    workload_params: inj.workload_params.clone(),
                    treatment: inj.treatment.clone(),
                    tasks: 1,
                }
            }
        })
    }

    /// The design of a step: a truth block always has a fixed number of
    /// pairs; the others follow the plan (sequential unless `--pairs`).
    pub fn design_of(&self, step: &Step) -> Design {
        Design {
            pairs: step.pairs,
            stop: match step.role {
                Role::Truth(_) => None,
                _ => self.design.stop,
            },
            ..self.design.clone()
        }
    }
}
