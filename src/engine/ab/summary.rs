//! A comparison's figures from its measured pairs: the overhead and its
//! interval, the arms' medians, child CPU time and client figures, and
//! the partial comparison a stopped one leaves. Pure arithmetic over pairs
//! already measured (nothing here measures), so the loops, the boots'
//! sweeps and the table's decision can all summarise the same way.

use anyhow::{Context, Result};

use crate::engine::design::{Case, Design};
use crate::model::{Attribution, ChildCpu, Comparison, MetricChange, PairData, SequentialStop};
use crate::stats::paired::{PairedOpts, check_pairs, overhead_by_ranks};
use crate::stats::sequential::{self, StopReason};

/// Each client figure's change over the pairs that reported it, with the
/// interval the run time's overhead gets (the sequence's when sequential,
/// else the fixed design's), at the comparison's own level.
fn metric_changes(design: &Design, pair_data: &[PairData]) -> Vec<MetricChange> {
    let mut names: Vec<(&str, bool)> = Vec::new();
    for m in pair_data.iter().flat_map(|p| &p.metrics) {
        if !names.iter().any(|(n, _)| *n == m.name) {
            names.push((&m.name, m.higher_is_better));
        }
    }
    names
        .into_iter()
        .filter_map(|(name, higher_is_better)| {
            let (b, t): (Vec<f64>, Vec<f64>) = pair_data
                .iter()
                .flat_map(|p| &p.metrics)
                .filter(|m| m.name == name && m.baseline > 0.0 && m.treatment > 0.0)
                .map(|m| (m.baseline, m.treatment))
                .unzip();
            let r: Vec<f64> = b.iter().zip(&t).map(|(b, t)| (t / b).ln()).collect();
            let change_pct = match &design.stop {
                Some(rule) => sequential::overhead_pct(&r, rule.decision.alpha, rule.decision.test),
                // The fixed design: the run time's method (the signed-rank
                // test inverted, about the Hodges-Lehmann estimate).
                None => overhead_by_ranks(&r, PairedOpts::default().alpha),
            }?;
            Some(MetricChange::new(
                name.to_string(),
                higher_is_better,
                crate::stats::median(&b)?,
                crate::stats::median(&t)?,
                crate::stats::paired::OverheadPct {
                    verdict: crate::stats::paired::Verdict::NoChange,
                    ..change_pct
                },
                b.len() as u32,
            ))
        })
        .collect()
}

/// The comparison of the pairs a stopped comparison finished, marked
/// unfinished (None before its first pair, or when they give no figure).
pub(super) fn partial(
    case: &Case,
    design: &Design,
    pair_data: &[PairData],
    cpu: &[Vec<ChildCpu>; 2],
    stop: Option<StopReason>,
) -> Option<Box<Comparison>> {
    summarise(case, design, pair_data, cpu, stop, None)
        .ok()
        .map(|mut c| {
            c.unfinished = true;
            Box::new(c)
        })
}

/// A comparison of the pairs measured: its overhead (the anytime-valid
/// sequence's with a stopping rule, else the fixed design's), the arms'
/// medians, child CPU time and how a sequential one stopped.
pub(in crate::engine) fn summarise(
    case: &Case,
    design: &Design,
    pair_data: &[PairData],
    cpu: &[Vec<ChildCpu>; 2],
    stopped: Option<StopReason>,
    attribution: Option<Attribution>,
) -> Result<Comparison> {
    let baseline: Vec<f64> = pair_data.iter().map(|p| p.baseline_ns_per_op).collect();
    let treatment: Vec<f64> = pair_data.iter().map(|p| p.treatment_ns_per_op).collect();
    let overhead_pct = match &design.stop {
        Some(rule) => sequential::overhead_pct(
            &pair_log_ratios(pair_data),
            rule.decision.alpha,
            rule.decision.test,
        )
        .context("computing the overhead: no pairs")?,
        // The fixed design: the Hodges-Lehmann estimate with the interval
        // that inverts its Wilcoxon test, at the comparison's own level.
        None => {
            check_pairs(&baseline, &treatment).context("computing the overhead")?;
            overhead_by_ranks(&pair_log_ratios(pair_data), PairedOpts::default().alpha)
                .context("computing the overhead: a log ratio is not finite")?
        }
    };
    let t = &case.treatment;
    Ok(Comparison {
        workload: case.workload.name.to_string(),
        workload_params: case.workload_params.clone(),
        mechanism: t.mechanism.name().to_string(),
        variant: t.variant.to_string(),
        params: t.params.clone(),
        mode: design.mode,
        tasks: case.tasks as u32,
        pairs: pair_data.len() as u32,
        sample_ms: design.sample_ms,
        samples_per_half: design.samples_per_half,
        baseline_ns_per_op: arm_median(pair_data, |p| p.baseline_ns_per_op),
        treatment_ns_per_op: arm_median(pair_data, |p| p.treatment_ns_per_op),
        overhead_pct,
        hodges_lehmann_pct: crate::stats::paired::hodges_lehmann_pct(&baseline, &treatment),
        pair_data: pair_data.to_vec(),
        attribution,
        child_cpu: median_child_cpu(&cpu[0])
            .zip(median_child_cpu(&cpu[1]))
            .map(|(b, t)| [b, t]),
        client_metrics: metric_changes(design, pair_data),
        sequential: design.stop.as_ref().map(|rule| SequentialStop {
            max_pairs: design.pairs,
            family: rule.family,
            stopped: stopped.unwrap_or(StopReason::MaxPairs),
        }),
        unfinished: false,
        ci_alpha: None,
        own_ci_low_pct: None,
        own_ci_high_pct: None,
    })
}

/// Each figure's median over the halves of one arm (runs: their sum).
fn median_child_cpu(halves: &[ChildCpu]) -> Option<ChildCpu> {
    let of =
        |f: fn(&ChildCpu) -> f64| crate::stats::median(&halves.iter().map(f).collect::<Vec<_>>());
    Some(ChildCpu {
        runs: halves.iter().map(|c| c.runs).sum(),
        user_ns_per_op: of(|c| c.user_ns_per_op)?,
        sys_ns_per_op: of(|c| c.sys_ns_per_op)?,
    })
}

/// The per-pair ln(treatment / baseline) of a comparison.
pub fn log_ratios(c: &Comparison) -> Vec<f64> {
    pair_log_ratios(&c.pair_data)
}

/// The per-pair ln(treatment / baseline) of measured pairs.
pub(in crate::engine) fn pair_log_ratios(pairs: &[PairData]) -> Vec<f64> {
    pairs.iter().map(PairData::log_ratio).collect()
}

/// The median over pairs of one arm's ns/op (NaN without pairs).
pub(in crate::engine) fn arm_median(pairs: &[PairData], arm: fn(&PairData) -> f64) -> f64 {
    crate::stats::median(&pairs.iter().map(arm).collect::<Vec<_>>()).unwrap_or(f64::NAN)
}
