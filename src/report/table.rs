//! Terminal tables (comfy-table): measured results and stored runs.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};
use serde::Serialize;

use super::{ci_pct, ns, si};
use crate::model::{Comparison, RunSummary, Skipped, WorkloadResult};
use crate::stats::decision::Verdict;

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
                c.workload,
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
        let mech = crate::mechanisms::label_of(c);
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

/// What the negative control (`stream`, no syscall in the loop) says:
/// the `--json` form of [`negative_control`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NegativeControl {
    pub workload: &'static str,
    /// No stream comparison came out slower or faster.
    pub passed: bool,
    /// Every stream comparison, by treatment ("audit:enabled", with
    /// " tasks=N" beyond 1 task).
    pub comparisons: Vec<String>,
    /// Those whose final verdict is slower or faster.
    pub failed: Vec<String>,
}

fn stream_comparisons(comparisons: &[Comparison]) -> impl Iterator<Item = &Comparison> {
    comparisons
        .iter()
        .filter(|c| c.workload == crate::overhead::CONTROL_WORKLOAD)
}

fn control_label(c: &Comparison) -> String {
    if c.tasks == 1 {
        crate::mechanisms::label_of(c)
    } else {
        format!("{} tasks={}", crate::mechanisms::label_of(c), c.tasks)
    }
}

fn changed(c: &Comparison) -> bool {
    matches!(c.overhead_pct.verdict, Verdict::Slower | Verdict::Faster)
}

/// The negative control's outcome over the `stream` comparisons (final
/// verdicts, after Holm); None when stream was not measured.
pub fn negative_control_of(comparisons: &[Comparison]) -> Option<NegativeControl> {
    let all: Vec<&Comparison> = stream_comparisons(comparisons).collect();
    if all.is_empty() {
        return None;
    }
    let failed: Vec<String> = all
        .iter()
        .filter(|c| changed(c))
        .map(|c| control_label(c))
        .collect();
    Some(NegativeControl {
        workload: crate::overhead::CONTROL_WORKLOAD,
        passed: failed.is_empty(),
        comparisons: all.iter().map(|c| control_label(c)).collect(),
        failed,
    })
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
fn negative_control_lines(comparisons: &[Comparison]) -> Vec<String> {
    let all: Vec<&Comparison> = stream_comparisons(comparisons).collect();
    if all.is_empty() {
        return Vec::new();
    }
    let (failed, passed): (Vec<&Comparison>, Vec<&Comparison>) =
        all.iter().partition(|c| changed(c));
    let with_figures = |cs: &[&Comparison], parens: bool| -> Vec<String> {
        cs.iter()
            .map(|c| {
                if parens {
                    format!("{} ({})", control_label(c), c.overhead_pct.describe())
                } else {
                    format!("{} {}", control_label(c), c.overhead_pct.describe())
                }
            })
            .collect()
    };
    if failed.is_empty() {
        return vec![format!(
            "passed: no mechanism changed stream ({})",
            with_figures(&passed, false).join(", ")
        )];
    }
    let hooks = if failed.len() == 1 {
        "the mechanism's hooks"
    } else {
        "the mechanisms' hooks"
    };
    let mut lines = vec![format!(
        "FAILED: stream changed under {}: something other than {hooks} moved the figures \
         (noise, frequency scaling, another load); treat the results above with care and \
         rerun on a quieter machine.",
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
pub fn negative_control(comparisons: &[Comparison]) -> String {
    let lines = negative_control_lines(comparisons);
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
pub fn negative_control_summary(comparisons: &[Comparison]) -> Vec<String> {
    negative_control_lines(comparisons)
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
        };
        let text = outlier_pairs(std::slice::from_ref(&c));
        assert!(text.contains("pair 11 of 12 (kept)"), "{text}");
        let mut calm = c;
        calm.pair_data.truncate(10);
        assert_eq!(outlier_pairs(&[calm]), "");
    }

    /// A comparison with its final verdict, as `decide_all` leaves it.
    fn decided(
        workload: &str,
        treatment: &str,
        verdict: Verdict,
        (estimate, ci_low, ci_high): (f64, f64, f64),
    ) -> Comparison {
        let (mechanism, variant) = treatment.split_once(':').unwrap();
        Comparison {
            workload: workload.into(),
            workload_params: Default::default(),
            mechanism: mechanism.into(),
            variant: variant.into(),
            params: Default::default(),
            mode: Mode::Process,
            tasks: 1,
            pairs: 12,
            sample_ms: 60,
            samples_per_half: 2,
            baseline_ns_per_op: 100.0,
            treatment_ns_per_op: 100.0 * (1.0 + estimate / 100.0),
            overhead_pct: OverheadPct {
                estimate,
                ci_low,
                ci_high,
                p_value: if verdict == Verdict::NoChange {
                    1.0
                } else {
                    0.014
                },
                verdict,
            },
            hodges_lehmann_pct: f64::NAN,
            pair_data: vec![],
        }
    }

    #[test]
    fn negative_control_passes_when_no_mechanism_changes_stream() {
        let cs = [
            decided(
                "getppid",
                "seccomp:allow",
                Verdict::Slower,
                (12.3, 8.0, 26.8),
            ),
            decided(
                "stream",
                "seccomp:allow",
                Verdict::NoChange,
                (0.3, -1.2, 2.03),
            ),
            decided(
                "stream",
                "audit:enabled",
                Verdict::Negligible,
                (0.1, -0.4, 0.5),
            ),
        ];
        let text = negative_control(&cs);
        assert_eq!(
            text,
            "Negative control (stream: no syscall in the loop, so no mechanism should change it):\n  \
             passed: no mechanism changed stream (seccomp:allow no difference detected: < 2.1%, \
             audit:enabled negligible: +0.1% [-0.4, 0.5])\n"
        );
        let json = negative_control_of(&cs).unwrap();
        assert!(json.passed);
        assert_eq!(json.comparisons, ["seccomp:allow", "audit:enabled"]);
        assert!(json.failed.is_empty());
        let summary = negative_control_summary(&cs);
        assert_eq!(summary.len(), 1);
        assert!(
            summary[0].contains("passed: no mechanism changed stream"),
            "{summary:?}"
        );
    }

    #[test]
    fn negative_control_fails_on_any_slower_or_faster_stream() {
        let mut tasks2 = decided("stream", "cred:fsuid", Verdict::Faster, (-3.0, -5.0, -1.5));
        tasks2.tasks = 2;
        let cs = [
            decided(
                "stream",
                "seccomp:allow",
                Verdict::NoChange,
                (0.3, -1.2, 2.03),
            ),
            decided("stream", "audit:enabled", Verdict::Slower, (4.2, 1.1, 6.0)),
            decided(
                "getppid",
                "audit:enabled",
                Verdict::Faster,
                (-22.6, -23.0, -20.3),
            ),
            tasks2,
        ];
        let text = negative_control(&cs);
        assert!(
            text.contains(
                "  FAILED: stream changed under audit:enabled (+4.2% [1.1, 6.0]) and \
                 cred:fsuid tasks=2 (-3.0% [-5.0, -1.5]): something other than the \
                 mechanisms' hooks moved the figures"
            ),
            "{text}"
        );
        assert!(text.contains("rerun on a quieter machine."), "{text}");
        assert!(
            text.contains("  unchanged under seccomp:allow (no difference detected: < 2.1%)\n"),
            "{text}"
        );
        assert!(!text.contains("getppid"), "{text}");
        let json = negative_control_of(&cs).unwrap();
        assert!(!json.passed);
        assert_eq!(json.failed, ["audit:enabled", "cred:fsuid tasks=2"]);
        assert_eq!(json.comparisons.len(), 3);
        let summary = negative_control_summary(&cs);
        assert!(
            summary[0].contains("FAILED: stream changed under audit:enabled"),
            "{summary:?}"
        );

        // One failure alone: "the mechanism's hooks".
        let one = negative_control(&cs[..2]);
        assert!(one.contains("other than the mechanism's hooks"), "{one}");
    }

    #[test]
    fn negative_control_is_absent_without_stream() {
        let cs = [decided(
            "getppid",
            "seccomp:allow",
            Verdict::Slower,
            (12.3, 8.0, 26.8),
        )];
        assert_eq!(negative_control(&cs), "");
        assert_eq!(negative_control_of(&cs), None);
        assert!(negative_control_summary(&cs).is_empty());
        assert_eq!(negative_control(&[]), "");
    }
}
