//! Reports (see [`super::model`]) from what `run` and `overhead` measured,
//! so every command speaks every format.

use super::model::{AttributionSection, Cell, DesignKind, Report, Row};
use crate::model::{Comparison, WorkloadResult};

fn machine(system: &serde_json::Value, host: &str) -> Vec<(String, String)> {
    let text = |p: &str| {
        system
            .pointer(p)
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
            .unwrap_or_else(|| "unknown".into())
    };
    vec![
        ("host".into(), host.to_string()),
        ("kernel".into(), text("/kernel/release")),
        (
            "cpu".into(),
            format!("{} x {}", text("/cpu/model"), text("/cpu/online_count")),
        ),
        ("lsms".into(), text("/lsm/modules")),
        ("secperf".into(), env!("CARGO_PKG_VERSION").into()),
    ]
}

/// `secperf run`: one configuration, ns/op per sample.
pub fn from_results(
    name: &str,
    results: &[WorkloadResult],
    system: &serde_json::Value,
    host: &str,
    command: &str,
) -> Report {
    Report {
        title: "secperf run".into(),
        design: DesignKind::Single,
        unit: "ns/op".into(),
        sign_convention: "ns per operation of one task; median over samples".into(),
        columns: vec![name.to_string()],
        rows: results
            .iter()
            .map(|r| Row {
                workload: crate::workloads::label(&r.workload, &r.params),
                tasks: r.tasks,
                label: crate::workloads::shown_params(&r.workload, &r.params).join(" "),
                unit: None,
                cells: vec![Some(Cell::from_samples(
                    r.sample_data.iter().map(|s| s.ns_per_op).collect(),
                ))],
            })
            .collect(),
        summary: vec![],
        warnings: vec![],
        machine: machine(system, host),
        command: command.to_string(),
        attributions: vec![],
        sweeps: vec![],
    }
}

/// `secperf overhead`: baseline and treatment arms of each comparison.
pub fn from_comparisons(
    comparisons: &[Comparison],
    system: &serde_json::Value,
    host: &str,
    command: &str,
) -> Report {
    let rows = comparisons
        .iter()
        .map(|c| {
            let label = crate::mechanisms::label_of(c);
            let o = &c.overhead_pct;
            let mut treatment =
                Cell::from_samples(c.pair_data.iter().map(|p| p.treatment_ns_per_op).collect());
            treatment.change_pct = Some(o.estimate);
            treatment.ci_low_pct = Some(o.ci_low);
            treatment.ci_high_pct = Some(o.ci_high);
            treatment.p_value = Some(o.p_value);
            treatment.verdict = Some(o.verdict);
            Row {
                workload: crate::workloads::label(&c.workload, &c.workload_params),
                tasks: c.tasks,
                label,
                unit: None,
                cells: vec![
                    Some(Cell::from_samples(
                        c.pair_data.iter().map(|p| p.baseline_ns_per_op).collect(),
                    )),
                    Some(treatment),
                ],
            }
        })
        .collect();
    let attributions = attributions(comparisons);
    Report {
        title: "secperf overhead".into(),
        design: DesignKind::Paired,
        unit: "ns/op".into(),
        sign_convention: "% overhead = exp(median over pairs of ln(treatment/baseline)) - 1: positive = \
                          slower with the mechanism; significant when the Holm-corrected Wilcoxon p < \
                          alpha and the 95% CI lies outside the noise band"
            .into(),
        columns: vec!["baseline".into(), "treatment".into()],
        rows,
        summary: vec![],
        warnings: vec![],
        machine: machine(system, host),
        command: command.to_string(),
        attributions,
        sweeps: vec![],
    }
}

/// The attribution of every profiled comparison, named as its row is.
pub fn attributions(comparisons: &[Comparison]) -> Vec<AttributionSection> {
    comparisons
        .iter()
        .filter_map(|c| {
            Some(AttributionSection {
                comparison: format!(
                    "{} on {} tasks={}",
                    crate::mechanisms::label_of(c),
                    crate::workloads::label(&c.workload, &c.workload_params),
                    c.tasks
                ),
                attribution: c.attribution.clone()?,
            })
        })
        .collect()
}
