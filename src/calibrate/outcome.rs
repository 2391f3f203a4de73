//! What a calibration found ([`CalibrationReport`], stored as JSON) and
//! how its figures follow from the measured comparisons: the A/A
//! false-positive rate, each injected slowdown's truth, detection rate and
//! coverage, and the smallest detectable effect.

use std::time::Instant;

use anyhow::Result;

use super::plan::Plan;
use crate::model::Comparison;
pub use crate::model::calibration::{
    AaResult, CalibrationReport, DesignSummary, InjectedResult, MinEffect, Truth,
};
use crate::stats::decision::Verdict;
use crate::stats::paired::{PairedOpts, compare_paired};
use crate::stats::power::{Proportion, min_detectable_effect_pct};

/// The A/A false-positive rate a calibration checks against: the method
/// promises at most alpha (5%); a rate whose 95% interval lies wholly above
/// it fails.
pub const AA_TARGET_PCT: f64 = 5.0;

/// The comparisons a calibration measured, by role, before any figure
/// is computed from them.
pub(super) struct Measured {
    /// The A/A comparisons, decided.
    pub aa: Vec<Comparison>,
    /// Wall-clock seconds the A/A comparisons took.
    pub aa_s: f64,
    /// Per injected slowdown: its truth comparisons, its short ones
    /// (decided), and why it stopped, when it did.
    pub truths: Vec<Vec<Comparison>>,
    pub shorts: Vec<Vec<Comparison>>,
    pub skipped: Vec<Option<String>>,
}

/// The report of `plan` from what was measured (`started` is when the
/// measuring began): the A/A false-positive rate, each injected
/// slowdown's truth, detection and coverage, the smallest detectable
/// effect.
pub(super) fn report(
    plan: &Plan,
    measured: Measured,
    started: Instant,
) -> Result<CalibrationReport> {
    let Measured {
        aa,
        aa_s,
        mut truths,
        mut shorts,
        mut skipped,
    } = measured;
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
        aa_s / aa_pairs as f64
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
    let side_by_side = plan
        .side_by_side
        .then(|| side_by_side(plan, &aa, &injected));
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
        side_by_side,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// Every sequential test ([`super::replay::TESTS`]) replayed on the
/// calibration's pairs, each with the stop rule `overhead` would give it.
fn side_by_side(
    plan: &Plan,
    aa: &[Comparison],
    injected: &[InjectedResult],
) -> super::replay::SideBySide {
    let ratios = |cs: &[Comparison]| -> Vec<Vec<f64>> {
        cs.iter().map(crate::engine::ab::log_ratios).collect()
    };
    let inj = injected
        .iter()
        .filter_map(|i| {
            Some((
                i.treatment.clone(),
                i.truth.as_ref()?.pct,
                ratios(&i.comparisons),
            ))
        })
        .collect();
    let stored = super::replay::StoredPairs {
        budget_pairs: plan.design.pairs,
        seed: plan.design.seed,
        aa: ratios(aa),
        injected: inj,
    };
    super::replay::side_by_side_stored(&stored, &super::replay::TESTS, &plan.decision)
}

/// Mean pairs a list of comparisons took (NaN for none).
fn mean_pairs(cs: &[Comparison]) -> f64 {
    cs.iter().map(|c| c.pairs as f64).sum::<f64>() / cs.len() as f64
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
            .map(|p| (p.baseline_per_op, p.treatment_per_op))
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
