//! Terminal tables (comfy-table): measured results and stored runs.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::{ci_pct, ns, si};
use crate::model::{
    Comparison, ControlOutcome, NegativeControl, RunSummary, Skipped, WorkloadResult,
};

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
    // Outliers by the MAD rule: reported, never dropped.
    let ns: Vec<f64> = r.sample_data.iter().map(|s| s.ns_per_op).collect();
    let outliers = crate::stats::outliers::mad_outliers(&ns, OUTLIER_Z).len();
    if outliers > 0 {
        counts.insert("outlier", outliers);
    }
    counts
        .iter()
        .map(|(f, n)| format!("{f} {n}/{}", r.sample_data.len()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Modified z-score beyond which a sample or pair is reported as an
/// outlier (Iglewicz and Hoaglin).
pub const OUTLIER_Z: f64 = 3.5;

/// Pairs of each comparison whose log ratio is a MAD outlier: reported
/// under the overhead table, kept in every figure.
pub fn outlier_pairs(comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    for c in comparisons {
        let r: Vec<f64> = c
            .pair_data
            .iter()
            .map(|p| (p.treatment_ns_per_op / p.baseline_ns_per_op).ln())
            .collect();
        let idx = crate::stats::outliers::mad_outliers(&r, OUTLIER_Z);
        if !idx.is_empty() {
            let pairs: Vec<String> = idx.iter().map(|i| (i + 1).to_string()).collect();
            out.push_str(&format!(
                "  {} {} tasks={}: pair {} of {} (kept)\n",
                crate::workloads::label(&c.workload, &c.workload_params),
                crate::mechanisms::label_of(c),
                c.tasks,
                pairs.join(", "),
                c.pair_data.len()
            ));
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("Outlier pairs (MAD, modified z > {OUTLIER_Z}):\n{out}")
    }
}

/// One row per workload x tasks: medians with the half-width of their 95%
/// intervals (the full intervals are in --json and exports).
pub fn results(results: &[WorkloadResult]) -> String {
    let mut t = new_table(&[
        "workload", "params", "mode", "tasks", "ops/s", "95% CI", "ns/op", "95% CI", "other",
        "flags",
    ]);
    for r in results {
        let params = crate::workloads::shown_params(&r.workload, &r.params);
        let other = match (&r.unit_rate, &r.child_cpu) {
            (Some(u), _) => format!("{} {}/s", si(u.per_sec.median), u.unit),
            (None, Some(c)) => format!(
                "CPU/op: user {}, sys {}",
                ns(c.user_ns_per_op),
                ns(c.sys_ns_per_op)
            ),
            (None, None) => String::new(),
        };
        t.add_row(vec![
            crate::workloads::label(&r.workload, &r.params),
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
/// Where each profiled comparison's difference goes; empty when none was
/// profiled.
pub fn attributions(comparisons: &[Comparison]) -> String {
    super::formats::attribution::table(&super::build::attributions(comparisons))
}

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
    let mut cpu = String::new();
    for c in comparisons {
        let mech = crate::mechanisms::label_of(c);
        let workload = crate::workloads::label(&c.workload, &c.workload_params);
        if let Some([b, tr]) = &c.child_cpu {
            cpu.push_str(&format!(
                "  {workload} under {mech}: user {} -> {}, sys {} -> {}\n",
                ns(b.user_ns_per_op),
                ns(tr.user_ns_per_op),
                ns(b.sys_ns_per_op),
                ns(tr.sys_ns_per_op)
            ));
        }
        t.add_row(vec![
            workload,
            mech,
            c.tasks.to_string(),
            match &c.sequential {
                Some(s) => format!("{}/{}", c.pairs, s.max_pairs),
                None => c.pairs.to_string(),
            },
            ns(c.baseline_ns_per_op),
            ns(c.treatment_ns_per_op),
            crate::report::number::overhead(&c.overhead_pct),
            format!("{:.3}", c.overhead_pct.p_value),
            serde_json::to_value(c.overhead_pct.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        ]);
    }
    right_align(&mut t, &[2, 3, 4, 5, 7]);
    let mut out = t.to_string()
        + "\nbaseline/treatment: median ns per operation of one task over pairs; overhead = exp(median ln(treatment/baseline)) - 1.\n";
    if comparisons.iter().any(|c| c.sequential.is_some()) {
        out.push_str(
            "pairs N/M: sequential, N pairs measured of a budget of M, stopped once the verdict was \
             settled; its interval is an anytime-valid 95% confidence sequence and its p-value \
             anytime-valid (valid however early it stopped).\n",
        );
    }
    if !cpu.is_empty() {
        out.push_str(
            "CPU time per run of the command (user and system, baseline -> treatment, medians \
             over pairs):\n",
        );
        out.push_str(&cpu);
    }
    out
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The verdict lines of the negative control, unindented: "passed: ..."
/// or "FAILED: ..." (then what did not change). Empty without stream.
fn negative_control_lines(nc: Option<&NegativeControl>) -> Vec<String> {
    let Some(nc) = nc else {
        return Vec::new();
    };
    let (failed, passed): (Vec<&ControlOutcome>, Vec<&ControlOutcome>) =
        nc.outcomes.iter().partition(|o| o.changed);
    let with_figures = |os: &[&ControlOutcome], parens: bool| -> Vec<String> {
        os.iter()
            .map(|o| {
                if parens {
                    format!("{} ({})", o.label, o.figure)
                } else {
                    format!("{} {}", o.label, o.figure)
                }
            })
            .collect()
    };
    if failed.is_empty() {
        return vec![format!(
            "passed: no mechanism changed {} ({})",
            nc.workload,
            with_figures(&passed, false).join(", ")
        )];
    }
    let hooks = if failed.len() == 1 {
        "the mechanism's hooks"
    } else {
        "the mechanisms' hooks"
    };
    let mut lines = vec![format!(
        "FAILED: {} changed under {}: something other than {hooks} moved the figures \
         (noise, frequency scaling, another load); treat the results above with care and \
         rerun on a quieter machine.",
        nc.workload,
        and_list(&with_figures(&failed, true))
    )];
    if !passed.is_empty() {
        lines.push(format!(
            "unchanged under {}",
            with_figures(&passed, true).join(", ")
        ));
    }
    lines
}

/// The section under the `overhead` table on the negative control: the
/// `stream` comparisons (no syscall in the loop, so no mechanism should
/// change them) passed when none is slower or faster after Holm. Empty
/// when stream was not measured.
pub fn negative_control(nc: Option<&NegativeControl>) -> String {
    let lines = negative_control_lines(nc);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "Negative control (stream: no syscall in the loop, so no mechanism should change it):\n",
    );
    for l in lines {
        out.push_str(&format!("  {l}\n"));
    }
    out
}

/// The negative control as report summary lines (`--format`); empty when
/// stream was not measured.
pub fn negative_control_summary(nc: Option<&NegativeControl>) -> Vec<String> {
    negative_control_lines(nc)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("Negative control (stream, no syscall in the loop): {l}")
            } else {
                format!("Negative control: {l}")
            }
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Comparison, Mode, PairData};
    use crate::stats::paired::{OverheadPct, Verdict};

    #[test]
    fn outlier_pairs_are_listed_not_dropped() {
        let ratios = [
            1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00, 1.60, 1.00,
        ];
        let c = Comparison {
            workload: "getppid".into(),
            workload_params: Default::default(),
            mechanism: "none".into(),
            variant: "control".into(),
            params: Default::default(),
            mode: Mode::Process,
            tasks: 1,
            pairs: ratios.len() as u32,
            sample_ms: 10,
            samples_per_half: 1,
            baseline_ns_per_op: 100.0,
            treatment_ns_per_op: 100.0,
            overhead_pct: OverheadPct {
                estimate: 0.0,
                ci_low: -1.0,
                ci_high: 1.0,
                p_value: 1.0,
                verdict: Verdict::NoChange,
            },
            hodges_lehmann_pct: f64::NAN,
            pair_data: ratios
                .iter()
                .enumerate()
                .map(|(i, r)| PairData {
                    index: i as u32,
                    order: "AB".into(),
                    baseline_ns_per_op: 100.0,
                    treatment_ns_per_op: 100.0 * r,
                })
                .collect(),
            attribution: None,
            child_cpu: None,
            sequential: None,
        };
        let text = outlier_pairs(std::slice::from_ref(&c));
        assert!(text.contains("pair 11 of 12 (kept)"), "{text}");
        let mut calm = c;
        calm.pair_data.truncate(10);
        assert_eq!(outlier_pairs(&[calm]), "");
    }
}
