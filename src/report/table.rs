//! Terminal tables (comfy-table): measured results and stored runs.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::{ci_pct, ns, si};
use crate::model::{Comparison, RunSummary, Skipped, WorkloadResult};

pub fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        // Pipes and files get a fixed width that still fits a wide review.
        t.set_width(140);
    }
    t.set_header(header.to_vec());
    t
}

fn right_align(t: &mut Table, cols: &[usize]) {
    for &c in cols {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// Flag counts over samples: "preempted 2/10".
pub fn flag_summary(r: &WorkloadResult) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for s in &r.sample_data {
        for f in &s.flags {
            *counts.entry(f.as_str()).or_default() += 1;
        }
    }
    counts
        .iter()
        .map(|(f, n)| format!("{f} {n}/{}", r.sample_data.len()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row per workload x tasks: medians with the half-width of their 95%
/// intervals (the full intervals are in --json and exports).
pub fn results(results: &[WorkloadResult]) -> String {
    let mut t = new_table(&[
        "workload", "params", "mode", "tasks", "ops/s", "95% CI", "ns/op", "95% CI", "other",
        "flags",
    ]);
    for r in results {
        let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let other = r
            .unit_rate
            .as_ref()
            .map(|u| format!("{} {}/s", si(u.per_sec.median), u.unit))
            .unwrap_or_default();
        t.add_row(vec![
            r.workload.clone(),
            params.join(" "),
            r.mode.to_string(),
            r.tasks.to_string(),
            si(r.ops_per_sec.median),
            ci_pct(&r.ops_per_sec),
            ns(r.ns_per_op.median),
            ci_pct(&r.ns_per_op),
            other,
            flag_summary(r),
        ]);
    }
    right_align(&mut t, &[3, 4, 5, 6, 7]);
    t.to_string()
}

/// `secperf results list`.
pub fn runs(runs: &[RunSummary]) -> String {
    let mut t = new_table(&[
        "id",
        "label",
        "kind",
        "started (UTC)",
        "host",
        "kernel",
        "results",
        "workloads",
    ]);
    for r in runs {
        let label = if r.finished_at.is_none() {
            format!("{} (unfinished)", r.label)
        } else {
            r.label.clone()
        };
        t.add_row(vec![
            r.run_id.to_string(),
            label,
            r.kind.clone(),
            r.started_at.format("%Y-%m-%d %H:%M:%S").to_string(),
            r.host.clone(),
            r.kernel.clone().unwrap_or_else(|| "-".into()),
            r.results.to_string(),
            r.workloads.join(","),
        ]);
    }
    right_align(&mut t, &[0, 6]);
    t.to_string()
}

/// `secperf overhead`: one row per mechanism x workload x task count.
pub fn comparisons(comparisons: &[Comparison]) -> String {
    let mut t = new_table(&[
        "workload",
        "mechanism",
        "tasks",
        "pairs",
        "baseline",
        "treatment",
        "overhead [95% CI]",
        "p",
        "verdict",
    ]);
    for c in comparisons {
        // Only parameters that differ from the mechanism's defaults.
        let default_of = |k: &str| {
            crate::mechanisms::find(&c.mechanism)
                .and_then(|m| m.params().iter().find(|p| p.name == k).map(|p| p.default))
        };
        let params: Vec<String> = c
            .params
            .iter()
            .filter(|(k, v)| default_of(k) != Some(v.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mech = if params.is_empty() {
            format!("{}:{}", c.mechanism, c.variant)
        } else {
            format!("{}:{} {}", c.mechanism, c.variant, params.join(" "))
        };
        t.add_row(vec![
            c.workload.clone(),
            mech,
            c.tasks.to_string(),
            c.pairs.to_string(),
            ns(c.baseline_ns_per_op),
            ns(c.treatment_ns_per_op),
            c.overhead_pct.describe(),
            format!("{:.3}", c.overhead_pct.p_value),
            serde_json::to_value(c.overhead_pct.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        ]);
    }
    right_align(&mut t, &[2, 3, 4, 5, 7]);
    t.to_string()
        + "\nbaseline/treatment: median ns per operation of one task over pairs; overhead = exp(median ln(treatment/baseline)) - 1.\n"
}

/// The mechanisms a survey could not measure, and why.
pub fn skipped(skipped: &[Skipped]) -> String {
    let mut out = String::new();
    if !skipped.is_empty() {
        out.push_str("Skipped:\n");
        for s in skipped {
            out.push_str(&format!("  {}: unavailable: {}\n", s.mechanism, s.reason));
        }
    }
    out
}
