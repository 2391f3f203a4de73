//! A comparison's figures from its measured pairs: the overhead and its
//! interval, the arms' medians, child CPU time and the measures beside its
//! own (each figured the same way), and
//! the partial comparison a stopped one leaves. Pure arithmetic over pairs
//! already measured (nothing here measures), so the loops, the boots'
//! sweeps and the table's decision can all summarise the same way.

use anyhow::{Context, Result};

use super::design::{Case, Design};
use crate::model::{
    Attribution, ChildCpu, Comparison, Measure, MeasureChange, PairData, SequentialStop,
};
use crate::stats::paired::{OverheadPct, PairedOpts, check_pairs, overhead_by_ranks};
use crate::stats::sequential::{self, StopReason};

/// A measure's paired change from each pair's (baseline, treatment): its
/// estimate, interval and p-value (the sequence's when sequential, else
/// the fixed design's: the signed-rank test inverted, about the
/// Hodges-Lehmann estimate), at the comparison's own level; its verdict
/// is the table's to give ([`super::decide_all`]). None without pairs, or
/// with a log ratio that is not finite. The same for a comparison's own
/// measure and for those beside it.
fn paired_change(design: &Design, b: &[f64], t: &[f64]) -> Option<OverheadPct> {
    let r: Vec<f64> = b.iter().zip(t).map(|(b, t)| (t / b).ln()).collect();
    match &design.stop {
        Some(rule) => sequential::overhead_pct(&r, rule.decision.alpha, rule.decision.test),
        None => overhead_by_ranks(&r, PairedOpts::default().alpha),
    }
}

/// Each measure beside the comparison's own: its change over the pairs
/// that reported it, figured as the own measure's is.
fn beside_changes(design: &Design, pair_data: &[PairData]) -> Vec<MeasureChange> {
    let mut measures: Vec<&Measure> = Vec::new();
    for f in pair_data.iter().flat_map(|p| &p.beside) {
        if !measures.contains(&&f.measure) {
            measures.push(&f.measure);
        }
    }
    measures
        .into_iter()
        .filter_map(|measure| {
            let (b, t): (Vec<f64>, Vec<f64>) = pair_data
                .iter()
                .filter_map(|p| p.beside_of(measure))
                .unzip();
            let change_pct = paired_change(design, &b, &t)?;
            Some(MeasureChange::new(
                measure.clone(),
                crate::stats::median(&b)?,
                crate::stats::median(&t)?,
                change_pct,
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
    let baseline: Vec<f64> = pair_data.iter().map(|p| p.baseline_per_op).collect();
    let treatment: Vec<f64> = pair_data.iter().map(|p| p.treatment_per_op).collect();
    if design.stop.is_none() {
        check_pairs(&baseline, &treatment).context("computing the overhead")?;
    }
    let overhead_pct = paired_change(design, &baseline, &treatment)
        .context("computing the overhead: no pairs, or a log ratio that is not finite")?;
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
        measure: Measure::of(design.metric()),
        baseline_per_op: arm_median(pair_data, |p| p.baseline_per_op),
        treatment_per_op: arm_median(pair_data, |p| p.treatment_per_op),
        overhead_pct,
        hodges_lehmann_pct: crate::stats::paired::hodges_lehmann_pct(&baseline, &treatment),
        pair_data: pair_data.to_vec(),
        attribution,
        child_cpu: median_child_cpu(&cpu[0])
            .zip(median_child_cpu(&cpu[1]))
            .map(|(b, t)| [b, t]),
        beside: beside_changes(design, pair_data),
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
