//! Scaling curves: ops/s and ns/op against the number of tasks, for every
//! workload (and mode) a run measured at two or more task counts, and for
//! every comparison measured at several task counts (both arms). With
//! several runs each chart overlays them, one series per run (and arm).

use std::collections::BTreeMap;

use anyhow::Result;

use super::Doc;
use super::blocks::para;
use super::plots::lines::{Axes, Point, Series};
use super::plots::{BASELINE, TREATMENT, lines, per_op_unit, series_color};
use crate::model::Metric;
use crate::report::doc::RunDoc;

/// One curve before it is drawn: points (tasks, value, low, high).
struct Curve {
    run: usize,
    name: String,
    arm: Option<Arm>,
    ops: Vec<Point>,
    ns: Vec<Point>,
}

#[derive(Clone, Copy, PartialEq)]
enum Arm {
    Baseline,
    Treatment,
}

fn point(x: u32, y: f64, low: f64, high: f64) -> Point {
    Point {
        x: f64::from(x),
        y,
        low,
        high,
    }
}

/// Curves of `run` results, by chart key (workload with parameters, mode).
fn result_curves(i: usize, r: &RunDoc, out: &mut BTreeMap<String, Vec<Curve>>) {
    let mut by_key: BTreeMap<String, Vec<&crate::model::WorkloadResult>> = BTreeMap::new();
    for w in &r.results {
        let key = format!(
            "{} ({})",
            crate::report::label::workload(&w.workload, &w.params),
            w.mode
        );
        by_key.entry(key).or_default().push(w);
    }
    for (key, mut results) in by_key {
        results.sort_by_key(|w| w.tasks);
        if distinct_tasks(results.iter().map(|w| w.tasks)) < 2 {
            continue;
        }
        let ops = results
            .iter()
            .map(|w| {
                let s = &w.ops_per_sec;
                point(w.tasks, s.median, s.ci_low, s.ci_high)
            })
            .collect();
        let ns = results
            .iter()
            .map(|w| {
                let s = &w.ns_per_op;
                point(w.tasks, s.median, s.ci_low, s.ci_high)
            })
            .collect();
        out.entry(key).or_default().push(Curve {
            run: i,
            name: r.name(),
            arm: None,
            ops,
            ns,
        });
    }
}

/// Curves of comparisons: both arms, ops/s = tasks x 10^9 / ns/op.
fn comparison_curves(i: usize, r: &RunDoc, out: &mut BTreeMap<String, Vec<Curve>>) {
    let mut by_key: BTreeMap<String, Vec<&crate::model::Comparison>> = BTreeMap::new();
    for c in &r.comparisons {
        let key = format!(
            "{} on {} ({})",
            crate::mechanisms::label_of(c),
            crate::report::label::workload(&c.workload, &c.workload_params),
            c.mode
        );
        by_key.entry(key).or_default().push(c);
    }
    for (key, mut comparisons) in by_key {
        comparisons.sort_by_key(|c| c.tasks);
        if distinct_tasks(comparisons.iter().map(|c| c.tasks)) < 2 {
            continue;
        }
        for arm in [Arm::Baseline, Arm::Treatment] {
            let ns_of = |c: &crate::model::Comparison| match arm {
                Arm::Baseline => c.baseline_per_op,
                Arm::Treatment => c.treatment_per_op,
            };
            let ns = comparisons
                .iter()
                .map(|c| point(c.tasks, ns_of(c), f64::NAN, f64::NAN))
                .collect();
            let ops = comparisons
                .iter()
                .map(|c| {
                    let v = f64::from(c.tasks) * 1e9 / ns_of(c);
                    point(c.tasks, v, f64::NAN, f64::NAN)
                })
                .collect();
            let arm_name = match arm {
                Arm::Baseline => "baseline",
                Arm::Treatment => "treatment",
            };
            out.entry(key.clone()).or_default().push(Curve {
                run: i,
                name: format!("{} {arm_name}", r.name()),
                arm: Some(arm),
                ops,
                ns,
            });
        }
    }
}

fn distinct_tasks(tasks: impl Iterator<Item = u32>) -> usize {
    let mut t: Vec<u32> = tasks.collect();
    t.sort_unstable();
    t.dedup();
    t.len()
}

pub fn section(doc: &mut Doc, runs: &[RunDoc]) -> Result<()> {
    let mut results = BTreeMap::new();
    let mut comparisons = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        result_curves(i, r, &mut results);
        comparison_curves(i, r, &mut comparisons);
    }
    if results.is_empty() && comparisons.is_empty() {
        return Ok(());
    }
    doc.open(2, "scaling", "scaling", "Scaling with the number of tasks");
    doc.push(&para(
        "",
        "Each workload measured at two or more task counts, runs overlaid. ops/s counts \
         every task together (higher is better); ns/op is the time one task takes for one \
         operation (flat is perfect scaling), and instructions/op, in a run that counted \
         them, the instructions it executes for one. Bars: 95% intervals of the median over \
         samples (results). For comparisons the values are the medians over pairs of each \
         arm (dashed: baseline), and ops/s = tasks x 10^9 / ns/op.",
    ));
    let metrics: Vec<Metric> = runs.iter().map(RunDoc::metric).collect();
    for (key, curves) in results.iter().chain(comparisons.iter()) {
        // One metric a chart: counted instructions are not drawn over
        // time, and give no throughput (ops/s of an instruction count
        // would be operations per 10^9 instructions).
        let metric = metrics[curves[0].run];
        let curves: Vec<&Curve> = curves.iter().filter(|c| metrics[c.run] == metric).collect();
        doc.push("<div class=\"grid\">\n");
        if metric == Metric::Time {
            chart(doc, key, &curves, Measure::Ops, metric)?;
        }
        chart(doc, key, &curves, Measure::PerOp, metric)?;
        doc.push("</div>\n");
    }
    doc.close();
    Ok(())
}

#[derive(Clone, Copy)]
enum Measure {
    Ops,
    /// The run's figure per operation of one task: ns, or instructions.
    PerOp,
}

fn chart(doc: &mut Doc, key: &str, curves: &[&Curve], m: Measure, metric: Metric) -> Result<()> {
    let several_runs = curves.iter().any(|c| c.run != curves[0].run);
    let (div, unit) = match m {
        Measure::Ops => (1.0, "ops/s"),
        Measure::PerOp => per_op_unit(
            metric,
            curves
                .iter()
                .flat_map(|c| c.ns.iter().map(|p| p.y))
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max),
        ),
    };
    let series: Vec<Series> = curves
        .iter()
        .map(|c| {
            let color = match (c.arm, several_runs) {
                (Some(Arm::Baseline), false) => BASELINE,
                (Some(Arm::Treatment), false) => TREATMENT,
                _ => series_color(c.run),
            };
            let points = match m {
                Measure::Ops => &c.ops,
                Measure::PerOp => &c.ns,
            };
            Series {
                name: c.name.clone(),
                color,
                dashed: c.arm == Some(Arm::Baseline),
                points: points
                    .iter()
                    .map(|p| Point {
                        x: p.x,
                        y: p.y / div,
                        low: p.low / div,
                        high: p.high / div,
                    })
                    .collect(),
            }
        })
        .collect();
    let what = match m {
        Measure::Ops => "throughput, all tasks",
        Measure::PerOp => match metric {
            Metric::Time => "time per operation, one task",
            Metric::Instructions => "instructions per operation, one task",
        },
    };
    let axes = Axes {
        title: format!("{key}: {unit}"),
        x_desc: "tasks".into(),
        y_desc: format!("{unit} ({what})"),
        whole_x: true,
    };
    let svg = lines::draw(&axes, &series)?;
    let names: Vec<&str> = curves.iter().map(|c| c.name.as_str()).collect();
    doc.plot(
        "scaling",
        &svg,
        &format!("{key}: {what} against tasks; {}.", names.join(", ")),
    );
    Ok(())
}
