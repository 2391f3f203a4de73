//! The A/B design of `secperf overhead`: randomised interleaved pairs.
//!
//! For each pair a coin decides whether the baseline or the treatment runs
//! first (AB or BA); each half starts fresh tasks on the same CPUs (so
//! fork-time state such as an audit context is right), discards a warmup
//! slice and keeps `samples_per_half` slices of the same length in both
//! halves. A half's figure is the median ns/op of its slices. Per pair
//! r = ln(treatment / baseline); the statistics (median of r, bootstrap
//! interval over pairs, Wilcoxon signed-rank) live in
//! [`crate::stats::paired`]. Running A and B in alternation is what turns
//! slow machine drift into noise instead of a false difference
//! (methodology.md).

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::mechanisms::{Arm, Scope, SystemEnv, Treatment, WorkerEnv};
use crate::model::{Comparison, Mode, PairData, Params};
use crate::runner::{self, MeasureOpts, Tick};
use crate::safety::StateLock;
use crate::stats::bootstrap::Rng;
use crate::stats::decision::{DecisionOpts, Samples, Tested, decide_table};
use crate::stats::paired::{PairedOpts, compare_paired};
use crate::workloads::WorkloadDef;

/// The negative control of `overhead`: the STREAM triad runs no system
/// call and no security hook in its loop, so no mechanism should change
/// it; a change there means something else moved the figures (noise,
/// frequency scaling, another load).
pub const CONTROL_WORKLOAD: &str = "stream";

/// One comparison to make: a treatment on a workload at a task count.
#[derive(Debug, Clone)]
pub struct Case {
    pub workload: &'static WorkloadDef,
    pub workload_params: Params,
    pub treatment: Treatment,
    pub tasks: usize,
}

/// How every comparison of a run is measured.
#[derive(Debug, Clone)]
pub struct Design {
    pub pairs: u32,
    pub sample_ms: u64,
    pub samples_per_half: u32,
    pub warmup: u32,
    pub mode: Mode,
    /// CPUs tasks are pinned to (empty: no pinning).
    pub cpus: Vec<usize>,
    pub scratch_root: PathBuf,
    pub cache_dir: PathBuf,
    pub seed: u64,
}

impl Design {
    /// Slices one half runs (for progress and time estimates).
    pub fn slices_per_half(&self) -> u64 {
        (self.warmup + self.samples_per_half) as u64
    }
}

/// Which arm runs first in each pair, from a seeded coin.
pub fn pair_orders(pairs: u32, rng: &mut Rng) -> Vec<[Arm; 2]> {
    (0..pairs)
        .map(|_| {
            if rng.next_u64() & 1 == 0 {
                [Arm::Baseline, Arm::Treatment]
            } else {
                [Arm::Treatment, Arm::Baseline]
            }
        })
        .collect()
}

/// Measures one case as randomised pairs. `lock` must be held when the
/// mechanism is system-wide; `on_half` is called after every half.
pub fn compare(
    case: &Case,
    design: &Design,
    lock: Option<&StateLock>,
    rng: &mut Rng,
    on_tick: &mut dyn FnMut(Tick),
) -> Result<Comparison> {
    let mut baseline = Vec::with_capacity(design.pairs as usize);
    let mut treatment = Vec::with_capacity(design.pairs as usize);
    let mut pair_data = Vec::with_capacity(design.pairs as usize);
    for (i, order) in pair_orders(design.pairs, rng).into_iter().enumerate() {
        let mut ns = [0.0f64; 2];
        for arm in order {
            let v = run_half(case, design, arm, lock, on_tick).with_context(|| {
                format!(
                    "{} on {}, pair {} of {}, {arm:?} half",
                    case.treatment,
                    case.workload.name,
                    i + 1,
                    design.pairs
                )
            })?;
            ns[(arm == Arm::Treatment) as usize] = v;
        }
        baseline.push(ns[0]);
        treatment.push(ns[1]);
        pair_data.push(PairData {
            index: i as u32,
            order: if order[0] == Arm::Baseline {
                "AB"
            } else {
                "BA"
            }
            .to_string(),
            baseline_ns_per_op: ns[0],
            treatment_ns_per_op: ns[1],
        });
    }
    let overhead_pct = compare_paired(
        &baseline,
        &treatment,
        &PairedOpts {
            seed: design.seed,
            ..Default::default()
        },
    )
    .context("computing the overhead")?;
    let t = &case.treatment;
    Ok(Comparison {
        workload: case.workload.name.to_string(),
        workload_params: case.workload_params.clone(),
        mechanism: t.mechanism.name().to_string(),
        variant: t.variant.to_string(),
        params: t.params.clone(),
        mode: design.mode,
        tasks: case.tasks as u32,
        pairs: design.pairs,
        sample_ms: design.sample_ms,
        samples_per_half: design.samples_per_half,
        baseline_ns_per_op: crate::stats::median(&baseline).unwrap_or(f64::NAN),
        treatment_ns_per_op: crate::stats::median(&treatment).unwrap_or(f64::NAN),
        overhead_pct,
        hodges_lehmann_pct: crate::stats::paired::hodges_lehmann_pct(&baseline, &treatment),
        pair_data,
    })
}

/// Final verdicts of a report: Holm-corrected p-values across its
/// comparisons (stored as `p_value`), the noise band, and the equivalence
/// test on each comparison's log ratios for `negligible`.
pub fn decide_all(comparisons: &mut [Comparison], opts: &DecisionOpts) {
    let ratios: Vec<Vec<f64>> = comparisons.iter().map(log_ratios).collect();
    let rows: Vec<Tested> = comparisons
        .iter()
        .zip(&ratios)
        .map(|(c, r)| Tested {
            p_value: c.overhead_pct.p_value,
            ci_low: c.overhead_pct.ci_low,
            ci_high: c.overhead_pct.ci_high,
            samples: Samples::Paired(r),
        })
        .collect();
    for (c, d) in comparisons.iter_mut().zip(decide_table(&rows, opts)) {
        c.overhead_pct.p_value = d.p_value;
        c.overhead_pct.verdict = d.verdict;
    }
}

/// The per-pair ln(treatment / baseline) of a comparison.
pub fn log_ratios(c: &Comparison) -> Vec<f64> {
    c.pair_data
        .iter()
        .map(|p| (p.treatment_ns_per_op / p.baseline_ns_per_op).ln())
        .collect()
}

/// One half: sets the arm up, measures in fresh tasks, undoes the arm.
/// Returns the median ns/op of the half's slices.
fn run_half(
    case: &Case,
    design: &Design,
    arm: Arm,
    lock: Option<&StateLock>,
    on_tick: &mut dyn FnMut(Tick),
) -> Result<f64> {
    let t = &case.treatment;
    let def = case.workload;
    let opts = MeasureOpts {
        tasks: case.tasks,
        mode: design.mode,
        cpus: design.cpus.clone(),
        warmup: design.warmup,
        samples: design.samples_per_half,
        sample_ms: design.sample_ms,
        scratch_root: design.scratch_root.clone(),
        cache_dir: design.cache_dir.clone(),
        params: case.workload_params.clone(),
    };
    let applied = match t.mechanism.scope() {
        Scope::System => {
            let lock =
                lock.context("internal error: system-wide mechanism without the state lock")?;
            Some(lock.apply(t, arm, &SystemEnv { workload: def })?)
        }
        Scope::Worker => None,
    };
    let result = if arm == Arm::Treatment {
        let hook = |ctx: &crate::workloads::TaskCtx| {
            t.mechanism.apply_in_worker(
                t,
                &WorkerEnv {
                    workload: def,
                    scratch: ctx.scratch,
                    data_dir: ctx.setup.data_dir.as_deref(),
                    task: ctx.task,
                },
            )
        };
        runner::measure_with(def, &opts, &hook, on_tick)
    } else {
        runner::measure(def, &opts, on_tick)
    };
    if let Some(applied) = applied {
        applied.restore()?;
    }
    Ok(result?.ns_per_op.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(pairs: &[(f64, f64)], p_value: f64, ci: (f64, f64)) -> Comparison {
        use crate::stats::paired::{OverheadPct, Verdict};
        Comparison {
            workload: "getppid".into(),
            workload_params: Params::new(),
            mechanism: "none".into(),
            variant: "control".into(),
            params: Params::new(),
            mode: Mode::Process,
            tasks: 1,
            pairs: pairs.len() as u32,
            sample_ms: 10,
            samples_per_half: 1,
            baseline_ns_per_op: 1.0,
            treatment_ns_per_op: 1.0,
            overhead_pct: OverheadPct {
                estimate: 0.0,
                ci_low: ci.0,
                ci_high: ci.1,
                p_value,
                verdict: Verdict::NoChange,
            },
            hodges_lehmann_pct: f64::NAN,
            pair_data: pairs
                .iter()
                .enumerate()
                .map(|(i, &(b, t))| PairData {
                    index: i as u32,
                    order: "AB".into(),
                    baseline_ns_per_op: b,
                    treatment_ns_per_op: t,
                })
                .collect(),
        }
    }

    #[test]
    fn final_verdicts_use_holm_noise_band_and_equivalence() {
        use crate::stats::decision::Verdict;
        let slow: Vec<(f64, f64)> = (0..12)
            .map(|i| (100.0, 110.0 + (i % 3) as f64 * 0.1))
            .collect();
        let same: Vec<(f64, f64)> = (0..12)
            .map(|i| (100.0, 100.0 + ((i % 5) as f64 - 2.0) * 0.05))
            .collect();
        let tiny: Vec<(f64, f64)> = (0..12)
            .map(|i| (100.0, 100.5 + (i % 3) as f64 * 0.01))
            .collect();
        let mut cs = vec![
            comparison(&slow, 0.0005, (9.9, 10.3)),
            comparison(&same, 0.9, (-0.2, 0.2)),
            comparison(&tiny, 0.0005, (0.49, 0.52)),
        ];
        decide_all(&mut cs, &DecisionOpts::default());
        // Holm: the smallest p times 3, the next times 2.
        assert!((cs[0].overhead_pct.p_value - 0.0015).abs() < 1e-12);
        assert_eq!(cs[0].overhead_pct.verdict, Verdict::Slower);
        // Inside +-1%: significant but inside the noise band, and shown to be within it.
        assert_eq!(cs[1].overhead_pct.verdict, Verdict::Negligible);
        assert_eq!(cs[2].overhead_pct.verdict, Verdict::Negligible);
        assert!(cs[2].overhead_pct.describe().starts_with("negligible"));
    }

    #[test]
    fn orders_are_random_but_reproducible() {
        let a = pair_orders(200, &mut Rng::new(7));
        let b = pair_orders(200, &mut Rng::new(7));
        assert_eq!(a, b);
        let ab = a.iter().filter(|o| o[0] == Arm::Baseline).count();
        assert!((70..=130).contains(&ab), "{ab} of 200 pairs AB");
        assert!(a.iter().all(|o| o[0] != o[1]));
    }

    #[test]
    fn a_a_control_runs_end_to_end() {
        let case = Case {
            workload: crate::workloads::find("getppid").unwrap(),
            workload_params: Params::new(),
            treatment: Treatment::parse("none").unwrap(),
            tasks: 1,
        };
        let design = Design {
            pairs: 4,
            sample_ms: 20,
            samples_per_half: 1,
            warmup: 0,
            mode: Mode::Process,
            cpus: crate::sys::cpus::allowed_cpus().unwrap(),
            scratch_root: std::env::temp_dir(),
            cache_dir: std::env::temp_dir().join("secperf-test-cache"),
            seed: 1,
        };
        let mut halves = 0;
        let c = compare(&case, &design, None, &mut Rng::new(1), &mut |_| halves += 1).unwrap();
        assert_eq!(halves, 8);
        assert_eq!(c.pair_data.len(), 4);
        assert!(c.baseline_ns_per_op > 0.0 && c.treatment_ns_per_op > 0.0);
        assert_eq!(
            (c.mechanism.as_str(), c.variant.as_str()),
            ("none", "control")
        );
    }
}
