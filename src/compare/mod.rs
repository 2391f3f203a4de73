//! `secperf compare`: stored runs from different times, boots, kernels or
//! machines, side by side, with real statistics.
//!
//! There are no pairs between runs, so the design is unpaired: each row's
//! samples (ns/op per slice for `run` results, per pair for `overhead`
//! arms) are compared with a Mann-Whitney U test, the change shown is the
//! Hodges-Lehmann shift with the interval that inverts the same test at
//! the column's level (`stats::unpaired_table`); p-values are corrected
//! across the rows of each column. A change is reported as slower/faster
//! only when the corrected p < alpha and the whole interval lies outside
//! the noise band (criterion's rule), and an interval outside the band is
//! always such a verdict; drift between the runs is not controlled, and the
//! report says so. Differences between the runs' probes that change what
//! a syscall costs (kernel, LSMs, mitigations, CPUs, BPF JIT, CPU frequency
//! governor and boost, SMT, preemption model, ASLR, audit's backlog and
//! failure settings) are listed as warnings.

use std::collections::BTreeMap;

use crate::model::StoredRun;
use crate::probe::probe_differences;
use crate::report::model::{Cell, DesignKind, Report, Row};
use crate::stats::decision::DecisionOpts;
use crate::stats::decision::Verdict;
use crate::stats::summary::geometric_mean;
use crate::stats::unpaired::UnpairedOpts;
use crate::stats::unpaired_table::{UnpairedCell, decide_unpaired_table};

/// Decision thresholds (the equivalence test is Welch's on log values)
/// and the bootstrap's seed.
#[derive(Debug, Clone, Copy)]
pub struct CompareOpts {
    pub decision: DecisionOpts,
    pub seed: u64,
}

/// What identifies a row across runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey {
    pub workload: String,
    pub tasks: u32,
    /// Mode and non-default parameters, or the mechanism arm for overhead runs.
    pub label: String,
}

/// The label's end of a comparison's overhead row, whose values are each
/// pair's treatment / baseline.
pub const OVERHEAD_ROW: &str = "(overhead)";

pub use crate::report::number::RATIO_UNIT;

/// A run's rows: key -> samples of the run's figure per operation (ns, or
/// counted instructions; for a comparison's overhead row each pair's
/// ratio), in first-seen order.
pub fn series(run: &StoredRun) -> Vec<(RowKey, Vec<f64>)> {
    let mut out: Vec<(RowKey, Vec<f64>)> = Vec::new();
    let mut push = |key: RowKey, values: Vec<f64>| match out.iter_mut().find(|(k, _)| *k == key) {
        Some((_, v)) => v.extend(values),
        None => out.push((key, values)),
    };
    for r in &run.results {
        let mut label: Vec<String> = Vec::new();
        if r.mode != crate::model::Mode::Process {
            label.push(r.mode.to_string());
        }
        // As every table names a workload: the parameters that differ
        // from its defaults (a workload's defaults are the same in both
        // runs, so rows still match one to one).
        label.extend(crate::report::label::non_default_params(
            &r.workload,
            &r.params,
        ));
        push(
            RowKey {
                workload: r.workload.clone(),
                tasks: r.tasks,
                label: label.join(" "),
            },
            r.sample_data.iter().map(|s| s.ns_per_op).collect(),
        );
    }
    for c in &run.comparisons {
        let mech = crate::mechanisms::label_of(c);
        // The overhead itself first: each pair's treatment / baseline, so
        // that two runs say whether the mechanism's cost changed, not only
        // whether each arm did.
        push(
            RowKey {
                workload: c.workload.clone(),
                tasks: c.tasks,
                label: format!("{mech} {OVERHEAD_ROW}"),
            },
            c.pair_data
                .iter()
                .map(|p| p.treatment_per_op / p.baseline_per_op)
                .filter(|r| r.is_finite() && *r > 0.0)
                .collect(),
        );
        push(
            RowKey {
                workload: c.workload.clone(),
                tasks: c.tasks,
                label: format!("{mech} (baseline arm)"),
            },
            c.pair_data.iter().map(|p| p.baseline_per_op).collect(),
        );
        push(
            RowKey {
                workload: c.workload.clone(),
                tasks: c.tasks,
                label: mech,
            },
            c.pair_data.iter().map(|p| p.treatment_per_op).collect(),
        );
    }
    out
}

/// Compares every later run against the first.
/// Whether a run was measured in a guest under emulation.
pub fn emulated(run: &StoredRun) -> bool {
    crate::vm::VmFacts::of(&run.meta.system).is_some_and(|f| f.accel == crate::vm::Accel::Emulated)
}

/// Refuses runs measured under emulation beside runs that were not
/// (emulation slows some operations far more than others, so the
/// difference would be the emulator's), unless `force`.
pub fn check_emulation(runs: &[StoredRun], force: bool) -> anyhow::Result<()> {
    let (emu, native): (Vec<&StoredRun>, Vec<&StoredRun>) = runs.iter().partition(|r| emulated(r));
    if force || emu.is_empty() || native.is_empty() {
        return Ok(());
    }
    let names = |v: &[&StoredRun]| v.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ");
    crate::usage_bail!(
        "{} ran in an emulated VM guest and {} did not: {}, so the difference would be mostly \
         the emulator's; compare emulated runs with each other, or pass --force",
        names(&emu),
        names(&native),
        crate::vm::EMULATED_NOTE
    )
}

/// Refuses runs of different metrics side by side (time against counted
/// instructions): their figures are not of one kind, so no change between
/// them means anything. `--force` does not override it.
pub fn check_metrics(runs: &[StoredRun]) -> anyhow::Result<()> {
    let of = |r: &StoredRun| crate::model::metric::of_params(&r.meta.params);
    let Some(first) = runs.first() else {
        return Ok(());
    };
    if let Some(other) = runs.iter().find(|r| of(r) != of(first)) {
        crate::usage_bail!(
            "{} measured {} and {} measured {}: a change between time and counted \
             instructions means nothing; compare runs of one metric (`secperf results show \
             RUN` says which a run measured)",
            first.name(),
            of(first).per_op(),
            other.name(),
            of(other).per_op()
        );
    }
    Ok(())
}

pub fn build(runs: &[StoredRun], opts: &CompareOpts, command: &str) -> Report {
    let base = &runs[0];
    // One metric for every run ([`check_metrics`]): its unit and words.
    let metric = crate::model::metric::of_params(&base.meta.params);
    let unit = metric.per_op_short();
    let more = crate::report::number::change_words(metric).0;
    let either = crate::report::number::either_way(metric);
    let base_series = series(base);
    let others: Vec<BTreeMap<RowKey, Vec<f64>>> = runs[1..]
        .iter()
        .map(|r| series(r).into_iter().collect())
        .collect();
    // Rows: the baseline's rows present in at least one other run.
    let keys: Vec<&(RowKey, Vec<f64>)> = base_series
        .iter()
        .filter(|(key, _)| others.iter().any(|o| o.contains_key(key)))
        .collect();
    // One decision per column: each row's test, Holm across the column's
    // rows, then verdicts.
    let columns: Vec<Vec<UnpairedCell>> = others
        .iter()
        .map(|o| {
            keys.iter()
                .filter_map(|(key, a)| Some((a.as_slice(), o.get(key)?.as_slice())))
                .collect()
        })
        .collect();
    let test = UnpairedOpts {
        seed: opts.seed,
        ..Default::default()
    };
    let mut decided: Vec<_> = decide_unpaired_table(&columns, &test, &opts.decision)
        .into_iter()
        .map(Vec::into_iter)
        .collect();
    let mut rows: Vec<Row> = Vec::new();
    for (key, a) in keys {
        let mut cells = vec![Some(Cell::from_samples(a.clone()))];
        for (o, decided) in others.iter().zip(&mut decided) {
            let c = o.get(key).map(|b| {
                let mut c = Cell::from_samples(b.clone());
                if let Some(d) = decided.next().flatten() {
                    // Shown: the Hodges-Lehmann shift and the interval
                    // the verdict was decided on (the Mann-Whitney
                    // inversion at the column's level), which contains it.
                    c.change_pct = Some(d.estimate_pct);
                    c.ci_low_pct = Some(d.decision.ci_low);
                    c.ci_high_pct = Some(d.decision.ci_high);
                    if (d.decision.ci_low, d.decision.ci_high) != d.own_ci_pct {
                        c.ci_alpha = Some(d.decision.alpha);
                        c.own_ci_low_pct = Some(d.own_ci_pct.0);
                        c.own_ci_high_pct = Some(d.own_ci_pct.1);
                    }
                    c.p_value = Some(d.decision.p_value);
                    c.welch_p_value = Some(d.change.welch_p_value);
                    c.verdict = Some(d.decision.verdict);
                }
                c
            });
            cells.push(c);
        }
        let overhead_row = key.label.ends_with(OVERHEAD_ROW);
        rows.push(Row {
            workload: key.workload.clone(),
            tasks: key.tasks,
            label: key.label.clone(),
            unit: overhead_row.then(|| RATIO_UNIT.to_string()),
            cells,
        });
    }
    let (up, down) = crate::report::number::change_words(metric);
    let mut summary = Vec::new();
    for (j, run) in runs[1..].iter().enumerate() {
        // What changed, by verdict: the overheads, then the arms' figures.
        for (overheads, what) in [(true, "overheads"), (false, "figures")] {
            let cells: Vec<&Cell> = rows
                .iter()
                .filter(|r| r.unit.is_some() == overheads)
                .filter_map(|r| r.cells[j + 1].as_ref())
                .filter(|c| c.change_pct.is_some())
                .collect();
            if cells.is_empty() {
                continue;
            }
            let count = |v: Verdict| cells.iter().filter(|c| c.verdict == Some(v)).count();
            let ratios: Vec<f64> = cells
                .iter()
                .filter_map(|c| c.change_pct.map(|c| 1.0 + c / 100.0))
                .collect();
            let (up, down) = if overheads {
                ("higher", "lower")
            } else {
                (up, down)
            };
            let counts: Vec<String> = [
                (Verdict::Slower, up),
                (Verdict::Faster, down),
                (Verdict::Negligible, "negligible"),
                (Verdict::NoChange, "no difference detected"),
            ]
            .into_iter()
            .filter(|(v, _)| count(*v) > 0)
            .map(|(v, word)| format!("{} {word}", count(v)))
            .collect();
            summary.push(format!(
                "{} vs {}, {what}: {}{}",
                run.name(),
                base.name(),
                counts.join(", "),
                geometric_mean(&ratios).map_or(String::new(), |g| format!(
                    "; geometric mean of changes {:+.2}% over {}",
                    (g - 1.0) * 100.0,
                    crate::report::number::count(ratios.len(), "row")
                ))
            ));
        }
    }
    let mut warnings = Vec::new();
    for run in &runs[1..] {
        for d in probe_differences(&base.meta.system, &run.meta.system) {
            warnings.push(format!("{} vs {}: {d}", base.name(), run.name()));
        }
    }
    for run in runs {
        if metric == crate::model::Metric::Instructions {
            // Counted instructions are exact under emulation: what they
            // miss is what an instruction costs, not the emulator's speed.
            if crate::vm::VmFacts::of(&run.meta.system).is_some_and(|f| f.icount.is_some()) {
                warnings.push(format!(
                    "{}: instructions counted in a VM guest by QEMU's icount: exact counts, \
                     not time (a cache miss or a serialising instruction counts as one)",
                    run.name()
                ));
            }
        } else if emulated(run) {
            warnings.push(format!(
                "{}: measured in an emulated VM guest: {}",
                run.name(),
                crate::vm::EMULATED_NOTE
            ));
        }
    }
    if rows.is_empty() {
        warnings.push("no workload x tasks row is present in the baseline and another run".into());
    }
    Report {
        title: "secperf compare".into(),
        design: DesignKind::Unpaired,
        unit: unit.into(),
        sign_convention: format!(
            "% change of {unit} against {}: positive = {more}; the change is the \
             Hodges-Lehmann shift of log {unit} between the runs' samples, p the Mann-Whitney \
             test's, {} across the column, and the interval that test inverted at the \
             column's level (alpha / rows under Holm), so it lies outside +-{}% exactly where \
             the verdict is {either} (p < {} and the whole interval outside the band)",
            base.name(),
            match opts.decision.error_rate {
                crate::stats::decision::ErrorRate::Fwer => "Holm-corrected",
                crate::stats::decision::ErrorRate::Fdr => "Benjamini-Hochberg-adjusted",
            },
            opts.decision.noise_pct,
            opts.decision.alpha,
        ),
        columns: runs.iter().map(StoredRun::name).collect(),
        rows,
        summary,
        warnings,
        machine: crate::report::model::machine(&base.meta),
        command: command.to_string(),
    }
}

#[cfg(test)]
mod tests;
