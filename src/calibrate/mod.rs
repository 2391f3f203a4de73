//! `secperf calibrate`: the A/B method checks itself on this machine
//! (docs/methodology.md).
//!
//! Three experiments, all with the same design and the same decision rule
//! as `secperf overhead` (randomised interleaved pairs,
//! [`crate::engine::ab::compare`]; sequential unless `--pairs` is given,
//! so by default it checks the sequential stopping rule):
//!
//! 1. **A/A**: K comparisons of the `none` control against itself, each
//!    decided as a table of one. A verdict "slower" or "faster" is a false
//!    positive; the rate comes with a 95% Wilson interval. The target is at
//!    most 5% (alpha). Also counted: intervals that exclude 0 at all, and
//!    the pairs a comparison took.
//! 2. **Injected slowdowns**: an allow-all seccomp filter costs a stable,
//!    known time per system call: about 10% of `getppid` and 2.5% of
//!    `open` here ([`DEFAULT_INJECTED`], whatever `-w` is). Its "truth" is
//!    measured independently by T long comparisons of a fixed number of
//!    pairs (3x the budget each), pooled: exp(median of all their
//!    log-ratios) - 1. Then M short comparisons (the normal design) are
//!    run, interleaved with the truth blocks so drift affects both alike;
//!    reported are the detection rate (verdict "slower"), the coverage
//!    (the fraction of 95% intervals that contain the truth; should be at
//!    least 95%) and the pairs they took.
//! 3. **Smallest detectable effect**: the pooled within-comparison spread
//!    of the A/A log-ratios (robust: 1.4826 x MAD, since a preempted half
//!    gives heavy tails that the median ignores) gives, by a normal approximation
//!    ([`min_detectable_effect_pct`]), the smallest slowdown detected
//!    with 80% power at alpha 0.05 by 10 pairs and by as many pairs as fit
//!    in the time budget (budget / measured seconds per pair).
//!
//! This module plans and runs the experiments through a measuring callback
//! (so the bookkeeping is tested without a machine), measures them through
//! the engine's [`Measurer`], builds the [`CalibrationReport`] and stores
//! it; the command line and printing are in `cli/calibrate.rs`.

pub mod render;

use std::time::Instant;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::engine::design::{Case, Design};
use crate::engine::measurer::Measurer;
use crate::engine::plan::HalfDesign;
use crate::engine::progress::Progress;
use crate::engine::session::{cache_dir, seed_or_clock};
use crate::mechanisms::Availability;
use crate::mechanisms::Treatment;
use crate::model::{Comparison, Mode, Params};
use crate::stats::bootstrap::Rng;
use crate::stats::decision::{DecisionOpts, Verdict};
use crate::stats::paired::{PairedOpts, compare_paired};
pub use crate::stats::power::{Proportion, min_detectable_effect_pct, pairs_for_precision};
use crate::store::Store;
use crate::store::calibrations::Calibration;
use crate::workloads::WorkloadDef;

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

/// The A/A false-positive rate a calibration checks against: the method
/// promises at most alpha (5%); a rate whose 95% interval lies wholly above
/// it fails.
pub const AA_TARGET_PCT: f64 = 5.0;

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

/// How many comparisons of each kind a calibration makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub aa: u32,
    pub truth_comparisons: u32,
    pub truth_pairs: u32,
    pub injected: u32,
}

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
}

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
}

impl Plan {
    /// Plans a calibration: the design on the CPUs this process may use,
    /// the counts from the budget (or as given), and the injected
    /// slowdowns when seccomp can run here (the reason when not).
    pub fn new(r: &Request) -> Result<Plan> {
        let stop = r.half.pairs.is_none().then(|| {
            crate::engine::plan::stop_rule(1, r.half.max_pairs, &DecisionOpts::default(), None)
        });
        let pairs = r
            .half
            .pairs
            .unwrap_or_else(|| stop.map_or(10, |s| s.max_pairs));
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
        };
        let mut counts = counts(
            r.quick,
            r.budget_s,
            estimate_comparison_s(&design, pairs),
            pairs,
        );
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
        for (spec, workload) in specs {
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
    /// Wall-clock seconds the measurements took.
    pub elapsed_s: f64,
}

fn is_interrupt(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<crate::error::Interrupted>())
}

/// Runs the plan's schedule through `measure` (one comparison per call,
/// given the step and its case) and builds the report. An A/A failure
/// ends the calibration; a failing injected treatment is recorded as
/// skipped with the error and its remaining steps are dropped (an
/// interrupt always ends it).
/// Runs the calibration of `plan` through `measurer`, one A/B comparison
/// per step, with a line per comparison on `progress`.
pub fn measure(
    plan: &Plan,
    measurer: &mut dyn Measurer,
    progress: &Progress,
) -> Result<CalibrationReport> {
    let c = plan.counts;
    let mut rng = Rng::new(plan.design.seed);
    let mut aa_done = 0u32;
    run(plan, &mut |step, case| {
        let what = match step.role {
            Role::AaControl => {
                aa_done += 1;
                format!("A/A {aa_done} of {}: none on {}", c.aa, case.workload.name)
            }
            Role::Truth(i) => format!("truth of {} ({} pairs)", plan.injected[i].label, step.pairs),
            Role::Short(i) => plan.injected[i].label.clone(),
        };
        progress.start(&what);
        let design = plan.design_of(step);
        let r = crate::engine::ab::compare(case, &design, measurer, &mut rng, &mut |t| {
            progress.tick(t)
        })?;
        progress.skip(crate::engine::ab::unmeasured_slices(&design, &r));
        progress.line(&format!(
            "{what}: {}",
            crate::engine::ab::describe_measured(&r)
        ));
        Ok(r)
    })
}

/// A calibration comparison's verdict, decided as `overhead` decides a
/// table of one: significance, the noise band, the equivalence test.
fn decide_alone(c: &mut Comparison) {
    crate::engine::ab::decide_all(std::slice::from_mut(c), &DecisionOpts::default());
}

/// Mean pairs a list of comparisons took (NaN for none).
fn mean_pairs(cs: &[Comparison]) -> f64 {
    cs.iter().map(|c| c.pairs as f64).sum::<f64>() / cs.len() as f64
}

/// Stores every comparison of a calibration in run `run_id`, then the
/// calibration itself; returns its id.
pub fn store_report(store: &mut Store, run_id: i64, report: &CalibrationReport) -> Result<i64> {
    for cmp in report
        .aa
        .comparisons
        .iter()
        .chain(report.injected.iter().flat_map(|i| {
            i.truth
                .iter()
                .flat_map(|t| t.comparisons.iter())
                .chain(i.comparisons.iter())
        }))
    {
        store.add_comparison(run_id, cmp)?;
    }
    let m = &report.min_effect;
    store.add_calibration(&Calibration {
        id: 0,
        run_id,
        workload: report.workload.clone(),
        created_at: chrono::Utc::now(),
        aa_comparisons: report.aa.false_positives.total,
        aa_false_positives: report.aa.false_positives.count,
        sd_log_ratio: m.sd_log_ratio,
        pair_seconds: m.pair_seconds,
        budget_s: m.budget_s,
        min_effect_pct: m.budget_min_effect_pct,
        min_effect_pairs: m.budget_pairs,
        json: serde_json::to_value(report)?,
    })
}

/// Runs the experiments of `plan`, measuring each step with `measure`.
pub fn run(
    plan: &Plan,
    measure: &mut dyn FnMut(&Step, &Case) -> Result<Comparison>,
) -> Result<CalibrationReport> {
    let started = Instant::now();
    let mut aa = Vec::new();
    let mut aa_seconds = 0.0;
    let mut truths: Vec<Vec<Comparison>> = vec![Vec::new(); plan.injected.len()];
    let mut shorts: Vec<Vec<Comparison>> = vec![Vec::new(); plan.injected.len()];
    let mut skipped: Vec<Option<String>> = vec![None; plan.injected.len()];
    for step in plan.schedule() {
        let case = plan.case_of(&step)?;
        match step.role {
            Role::AaControl => {
                let t0 = Instant::now();
                let mut c = measure(&step, &case)?;
                aa_seconds += t0.elapsed().as_secs_f64();
                decide_alone(&mut c);
                aa.push(c);
            }
            Role::Truth(i) | Role::Short(i) => {
                if skipped[i].is_some() {
                    continue;
                }
                match measure(&step, &case) {
                    Ok(c) if matches!(step.role, Role::Truth(_)) => truths[i].push(c),
                    Ok(mut c) => {
                        decide_alone(&mut c);
                        shorts[i].push(c)
                    }
                    Err(e) if is_interrupt(&e) => return Err(e),
                    Err(e) => skipped[i] = Some(format!("{e:#}")),
                }
            }
        }
    }

    let fp = aa
        .iter()
        .filter(|c| matches!(c.overhead_pct.verdict, Verdict::Slower | Verdict::Faster))
        .count() as u32;
    let false_positives = Proportion::new(fp, aa.len() as u32);
    let excluding_zero = Proportion::new(
        aa.iter()
            .filter(|c| c.overhead_pct.ci_low > 0.0 || c.overhead_pct.ci_high < 0.0)
            .count() as u32,
        aa.len() as u32,
    );
    let target_met = false_positives.ci_low_pct <= AA_TARGET_PCT;
    let assessment = if target_met {
        format!("consistent with the target of at most {AA_TARGET_PCT}%")
    } else {
        format!(
            "ABOVE the target of at most {AA_TARGET_PCT}%: A/A differences are detected too often \
             on this machine now; stop other load, or use longer --sample-ms / more \
             --samples-per-half"
        )
    };

    let injected = plan
        .injected
        .iter()
        .enumerate()
        .map(|(i, inj)| {
            injected_result(
                &inj.label,
                std::mem::take(&mut truths[i]),
                std::mem::take(&mut shorts[i]),
                skipped[i].take(),
                plan.design.seed,
            )
        })
        .collect::<Result<Vec<_>>>()?;

    let groups: Vec<Vec<f64>> = aa.iter().map(crate::engine::ab::log_ratios).collect();
    let sd = crate::stats::power::pooled_robust_sd(&groups).unwrap_or(f64::NAN);
    let sd_classic = crate::stats::power::pooled_sd(&groups).unwrap_or(f64::NAN);
    let aa_pairs: u32 = aa.iter().map(|c| c.pairs).sum();
    let pair_seconds = if aa_pairs > 0 {
        aa_seconds / aa_pairs as f64
    } else {
        f64::NAN
    };
    let budget_pairs = if pair_seconds > 0.0 {
        (plan.budget_s / pair_seconds)
            .floor()
            .clamp(0.0, u32::MAX as f64) as u32
    } else {
        0
    };
    let min_effect = MinEffect {
        sd_log_ratio: sd,
        sd_log_ratio_classic: sd_classic,
        sd_from_pairs: aa_pairs,
        pair_seconds,
        alpha: 0.05,
        power: 0.8,
        budget_s: plan.budget_s,
        budget_pairs,
        budget_min_effect_pct: min_detectable_effect_pct(sd, budget_pairs),
        ten_pairs_min_effect_pct: min_detectable_effect_pct(sd, 10),
        method:
            "normal approximation: exp((z_0.975 + z_0.8) * sd / sqrt(pairs) * sqrt(pi/2)) - 1, \
                 sd = 1.4826 x MAD of the A/A ln(B/A) centred per comparison, \
                 sqrt(pi/2) for the median's efficiency"
                .to_string(),
    };
    let d = &plan.design;
    Ok(CalibrationReport {
        workload: plan.workload.name.to_string(),
        workload_params: plan.workload_params.clone(),
        design: DesignSummary {
            pairs: d.pairs,
            sample_ms: d.sample_ms,
            samples_per_half: d.samples_per_half,
            warmup: d.warmup,
            mode: d.mode,
            tasks: 1,
            cpus: d.cpus.clone(),
            seed: d.seed,
            quick: plan.quick,
            counts: plan.counts,
            sequential: d.stop.is_some(),
        },
        aa: AaResult {
            false_positives,
            assessment,
            target_met,
            excluding_zero: Some(excluding_zero),
            mean_pairs: (!aa.is_empty()).then(|| mean_pairs(&aa)),
            comparisons: aa,
        },
        injected,
        injected_skipped: plan.injected_skipped.clone(),
        min_effect,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

fn injected_result(
    spec: &str,
    truths: Vec<Comparison>,
    shorts: Vec<Comparison>,
    skipped: Option<String>,
    seed: u64,
) -> Result<InjectedResult> {
    let truth = if truths.is_empty() {
        None
    } else {
        let (b, tr): (Vec<f64>, Vec<f64>) = truths
            .iter()
            .flat_map(|c| &c.pair_data)
            .map(|p| (p.baseline_ns_per_op, p.treatment_ns_per_op))
            .unzip();
        let o = compare_paired(
            &b,
            &tr,
            &PairedOpts {
                seed,
                ..Default::default()
            },
        )?;
        Some(Truth {
            pct: o.estimate,
            ci_low_pct: o.ci_low,
            ci_high_pct: o.ci_high,
            pairs: b.len() as u32,
            comparisons: truths,
        })
    };
    let n = shorts.len() as u32;
    let detected = shorts
        .iter()
        .filter(|c| c.overhead_pct.verdict == Verdict::Slower)
        .count() as u32;
    let covered = truth.as_ref().map_or(0, |tr| {
        shorts
            .iter()
            .filter(|c| c.overhead_pct.ci_low <= tr.pct && tr.pct <= c.overhead_pct.ci_high)
            .count() as u32
    });
    let detected = Proportion::new(detected, n);
    let covered = Proportion::new(covered, if truth.is_some() { n } else { 0 });
    let assessment = if skipped.is_some() || n == 0 || truth.is_none() {
        "not measured".to_string()
    } else {
        let mut notes = Vec::new();
        if detected.pct < 80.0 {
            notes.push(format!(
                "detected in only {:.0}% of comparisons: below the size this design detects reliably",
                detected.pct
            ));
        }
        if covered.ci_high_pct < 95.0 {
            notes.push(
                "intervals cover the truth less often than 95%: they are too narrow here"
                    .to_string(),
            );
        }
        if notes.is_empty() {
            "detected, and intervals consistent with 95% coverage".to_string()
        } else {
            notes.join("; ")
        }
    };
    Ok(InjectedResult {
        treatment: spec.to_string(),
        truth,
        detected,
        covered,
        assessment,
        mean_pairs: (!shorts.is_empty()).then(|| mean_pairs(&shorts)),
        comparisons: shorts,
        skipped,
    })
}

#[cfg(test)]
mod tests;
