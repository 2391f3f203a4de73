//! Measurements of one configuration (`secperf run`, a suite's current
//! configuration): one row per workload and task count with its rate and
//! time per operation and their 95% intervals, and where each profiled
//! result's time goes (`run --profile`).

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::{Align, Cell, Column, Markup, Table};
use super::super::number::{ci_pct, ns, si};
use super::attribution::{num, profile_preamble};
use crate::model::WorkloadResult;

/// Flag counts over samples, outliers by the MAD rule included (reported,
/// never dropped): "preempted 2/10, outlier 1/10".
fn flag_summary(r: &WorkloadResult) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for s in &r.sample_data {
        for f in &s.flags {
            *counts.entry(f.as_str()).or_default() += 1;
        }
    }
    let ns: Vec<f64> = r.sample_data.iter().map(|s| s.ns_per_op).collect();
    let outliers = crate::stats::outliers::mad_outliers(&ns, super::OUTLIER_Z).len();
    if outliers > 0 {
        counts.insert("outlier", outliers);
    }
    counts
        .iter()
        .map(|(f, n)| format!("{f} {n}/{}", r.sample_data.len()))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn results(doc: &RunDoc, m: &mut dyn Markup) {
    if doc.results.is_empty() {
        return;
    }
    let mut t = Table::new(
        "results",
        vec![
            Column::new("workload", Align::Left, "workload"),
            Column::data("params"),
            Column::new("mode", Align::Left, "mode"),
            Column::new("tasks", Align::Right, "tasks"),
            Column::new("ops/s", Align::Right, "ops_per_sec"),
            Column::with_fields(
                "95% CI",
                Align::Right,
                &["ops_per_sec_ci_low", "ops_per_sec_ci_high"],
            ),
            Column::new("ns/op", Align::Right, "ns_per_op"),
            Column::with_fields(
                "95% CI",
                Align::Right,
                &["ns_per_op_ci_low", "ns_per_op_ci_high"],
            ),
            Column::with_fields(
                "other",
                Align::Left,
                &[
                    "unit",
                    "units_per_sec",
                    "child_user_ns_per_op",
                    "child_sys_ns_per_op",
                ],
            )
            .optional(),
            Column::new("flags", Align::Left, "flags").optional(),
            Column::data("vm_accel"),
        ],
    );
    let accel = super::guest::accel_field(doc);
    for r in &doc.results {
        let other = match (&r.unit_rate, &r.child_cpu) {
            (Some(u), _) => format!("{} {}/s", si(u.per_sec.median), u.unit),
            (None, Some(c)) => format!(
                "CPU/op: user {}, sys {}",
                ns(c.user_ns_per_op),
                ns(c.sys_ns_per_op)
            ),
            (None, None) => String::new(),
        };
        t.row(vec![
            Cell::value(label::workload(&r.workload, &r.params), r.workload.as_str()),
            Cell::text(label::params_field(&r.params)),
            Cell::text(r.mode.to_string()),
            Cell::value(r.tasks.to_string(), r.tasks),
            Cell::value(si(r.ops_per_sec.median), r.ops_per_sec.median),
            Cell::values(
                ci_pct(&r.ops_per_sec),
                vec![r.ops_per_sec.ci_low.into(), r.ops_per_sec.ci_high.into()],
            ),
            Cell::value(ns(r.ns_per_op.median), r.ns_per_op.median),
            Cell::values(
                ci_pct(&r.ns_per_op),
                vec![r.ns_per_op.ci_low.into(), r.ns_per_op.ci_high.into()],
            ),
            Cell::values(
                other,
                vec![
                    r.unit_rate.as_ref().map(|u| u.unit.clone()).into(),
                    r.unit_rate.as_ref().map(|u| u.per_sec.median).into(),
                    r.child_cpu.map(|c| c.user_ns_per_op).into(),
                    r.child_cpu.map(|c| c.sys_ns_per_op).into(),
                ],
            ),
            Cell::text(flag_summary(r)),
            Cell::value("", accel.clone()),
        ]);
    }
    t.footer(
        "ops/s: all tasks together; ns/op: one task's time per operation; medians over \
         samples with the half-width of their 95% intervals (the bounds are in --json and csv).",
    );
    m.table(&t);
}

/// Where each profiled result's time goes (`run --profile`).
pub fn profiles(doc: &RunDoc, m: &mut dyn Markup) {
    for r in &doc.results {
        let Some(p) = &r.profile else { continue };
        let what = format!(
            "{} tasks={}",
            label::workload(&r.workload, &r.params),
            r.tasks
        );
        m.heading(&format!("Where the time goes: {what}"));
        for line in profile_preamble(p) {
            m.text(&line);
        }
        if p.groups.is_empty() {
            continue;
        }
        let mut t = Table::new(
            "profile",
            vec![
                Column::data("result"),
                Column::with_fields("where", Align::Left, &["kind", "name", "group"]),
                Column::new("per op", Align::Right, "ns_per_op"),
                Column::with_fields("95% CI", Align::Right, &["ci_low", "ci_high"]),
                Column::new("of samples", Align::Right, "share_pct"),
            ],
        );
        let row = |kind: &str, name: String, row: &crate::model::ProfileRow| {
            let e = &row.ns_per_op;
            let ci = if e.ci_low.is_finite() {
                format!("[{}, {}]", num(e.ci_low), num(e.ci_high))
            } else {
                "-".to_string()
            };
            vec![
                Cell::text(what.clone()),
                Cell::values(
                    name,
                    vec![
                        kind.into(),
                        row.name.clone().into(),
                        row.group.clone().into(),
                    ],
                ),
                Cell::value(num(e.estimate), e.estimate),
                Cell::values(ci, vec![e.ci_low.into(), e.ci_high.into()]),
                Cell::value(format!("{:.1}%", row.share_pct), row.share_pct),
            ]
        };
        for g in &p.groups {
            t.row(row("group", g.name.clone(), g));
        }
        t.row(row("total", "total".into(), &p.total));
        t.divider(Some("largest by symbol (self time)"));
        for (i, s) in p.symbols.iter().enumerate() {
            let cells = row("symbol", format!("{} ({})", s.name, s.group), s);
            if i < super::attribution::SYMBOLS_SHOWN {
                t.row(cells);
            } else {
                t.data_row(cells);
            }
        }
        m.table(&t);
    }
}
