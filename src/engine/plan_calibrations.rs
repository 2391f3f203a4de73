//! What past calibrations of this machine (`secperf calibrate`, stored)
//! say about a plan: the pairs a precision needs, and the margin of
//! "negligible" under `--equivalence auto`. Read from the store before
//! anything is measured; a workload never calibrated keeps the plan's
//! values, with a note saying how to calibrate it.

use anyhow::Result;

use super::plan::OverheadPlan;
use crate::store::Store;

impl OverheadPlan {
    /// With a precision asked for and neither `--pairs` nor `--max-pairs`:
    /// the sequential budget is raised to the pairs the confidence sequence
    /// needs for that precision, predicted from the spread in the latest
    /// calibration of each workload in `store` (the largest need wins);
    /// workloads never calibrated keep the plan's budget, with a note
    /// saying how to calibrate. The comparisons still stop as soon as the
    /// precision is reached.
    pub fn pairs_from_calibration(&mut self, store: &Store) -> Result<()> {
        let Some(precision) = self.precision_from_calibration else {
            return Ok(());
        };
        let Some(stop) = self.stop.as_mut() else {
            return Ok(());
        };
        let mut pairs = self.pairs;
        let mut seen = std::collections::BTreeSet::new();
        for (case, _) in self.cases.iter().zip(&self.control).filter(|(_, c)| !**c) {
            if !seen.insert(case.workload.name) {
                continue;
            }
            match crate::store::calibrations::latest_calibration(store, case.workload.name)? {
                Some(c) if c.sd_log_ratio.is_finite() => {
                    let n = crate::stats::sequential::pairs_for_precision(
                        c.sd_log_ratio,
                        precision,
                        self.decision.alpha,
                        stop.min_pairs,
                    )
                    .unwrap_or(100_000);
                    crate::say!(
                        "secperf: calibration of {} from {} (sd of ln ratio {:.4}): up to {n} pairs for +-{precision}%",
                        case.workload.name,
                        c.created_at.format("%Y-%m-%d %H:%M UTC"),
                        c.sd_log_ratio
                    );
                    pairs = pairs.max(n);
                }
                _ => crate::say!(
                    "secperf: no calibration of {} on this machine: keeping at most {} pairs (run `secperf calibrate -w {}` first)",
                    case.workload.name,
                    self.pairs,
                    case.workload.name
                ),
            }
        }
        self.pairs = pairs;
        stop.max_pairs = pairs;
        Ok(())
    }

    /// With `--equivalence auto`: the equivalence margin from the newest
    /// calibration of each of the plan's workloads in `store` (one whose
    /// design matches the plan's where there is one): the margin a
    /// comparison with no difference shows itself within in
    /// [`AUTO_MARGIN_PAIRS`](crate::stats::sequential::AUTO_MARGIN_PAIRS)
    /// pairs, 4 times in 5, under the plan's test
    /// ([`crate::stats::sequential::auto_margin_pct`]); the largest over
    /// the workloads, as a table has one margin. Workloads never calibrated
    /// are named in a note; none calibrated at all is a usage error.
    pub fn equivalence_from_calibrations(&mut self, store: &Store) -> Result<()> {
        if !self.equivalence_from_calibration {
            return Ok(());
        }
        if self.stop.is_none() {
            crate::usage_bail!(
                "--equivalence auto sizes the sequential tests' margin: leave out --pairs, or give \
                 a margin in percent (e.g. --equivalence 1)"
            );
        }
        let mut margins: Vec<(String, f64)> = Vec::new();
        let mut missing = Vec::new();
        let mut notes = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for case in &self.cases {
            let name = case.workload.name;
            if !seen.insert(name) {
                continue;
            }
            let all = crate::store::calibrations::calibrations_of(store, name)?;
            let same_design = |c: &&crate::store::calibrations::Calibration| {
                let d = &c.json["design"];
                d["sample_ms"].as_u64() == Some(self.sample_ms)
                    && d["samples_per_half"].as_u64() == Some(self.samples_per_half as u64)
                    && d["warmup"].as_u64() == Some(self.warmup as u64)
            };
            let Some(c) = all.iter().find(same_design).or(all.first()) else {
                missing.push(name);
                continue;
            };
            if !same_design(&c) {
                notes.push(format!(
                    "the calibration of {name} used another design (sample_ms {}, samples per \
                     half {}, warmup {}) than this run",
                    c.json["design"]["sample_ms"],
                    c.json["design"]["samples_per_half"],
                    c.json["design"]["warmup"]
                ));
            }
            let pool = c.aa_pool();
            match crate::stats::sequential::auto_margin_pct(
                self.decision.test,
                &pool,
                crate::stats::sequential::AUTO_MARGIN_PAIRS,
                self.decision.alpha,
                c.id as u64,
            ) {
                Some(m) => margins.push((
                    format!(
                        "{name} +-{m}% (calibration {} of {})",
                        c.id,
                        c.created_at.format("%Y-%m-%d %H:%M UTC")
                    ),
                    m,
                )),
                None => missing.push(name),
            }
        }
        let Some(margin) = margins.iter().map(|(_, m)| *m).reduce(f64::max) else {
            crate::usage_bail!(
                "--equivalence auto: no calibration of {} on this machine; run `secperf calibrate \
                 -w {}` (add --quick for a first figure), or give a margin in percent (e.g. \
                 --equivalence 1)",
                missing.join(", "),
                missing.first().copied().unwrap_or("getppid")
            );
        };
        if !missing.is_empty() {
            notes.push(format!(
                "never calibrated here: {} (run `secperf calibrate -w NAME`)",
                missing.join(", ")
            ));
        }
        let margin = margin.min(99.0);
        self.decision.equivalence_pct = margin;
        self.decision.equivalence_auto = true;
        if let Some(stop) = self.stop.as_mut() {
            stop.decision.equivalence_pct = margin;
            stop.decision.equivalence_auto = true;
        }
        let mut note = format!(
            "equivalence margin +-{margin}% (auto, the largest of: {})",
            margins
                .iter()
                .map(|(w, _)| w.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
        for n in notes {
            note.push_str("; ");
            note.push_str(&n);
        }
        crate::say!("secperf: {note}");
        self.equivalence_note = Some(note);
        Ok(())
    }
}
