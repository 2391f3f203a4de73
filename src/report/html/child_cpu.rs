//! CPU time of the processes a workload started (the `command` workload):
//! per run of the command, user and system time, for results as a table
//! and for comparisons as stacked bars of both arms with a table.

use anyhow::Result;

use super::Doc;
use super::blocks::{Cell, anchor, table};
use super::plots::bars::{self, Bar};
use super::plots::series_color;
use crate::model::ChildCpu;
use crate::report::doc::RunDoc;
use crate::report::number::ns;

pub fn section(doc: &mut Doc, run: &RunDoc) -> Result<()> {
    let results: Vec<_> = run
        .results
        .iter()
        .filter_map(|r| Some((r, r.child_cpu?)))
        .collect();
    let comparisons: Vec<_> = run
        .comparisons
        .iter()
        .filter_map(|c| Some((c, c.child_cpu?)))
        .collect();
    if results.is_empty() && comparisons.is_empty() {
        return Ok(());
    }
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "child-cpu"]),
        "child-cpu",
        &format!("{}: CPU time of the commands run", run.name()),
    );
    let cpu = |c: &ChildCpu| {
        vec![
            Cell::Num(c.runs.to_string()),
            Cell::Num(ns(c.user_ns_per_op)),
            Cell::Num(ns(c.sys_ns_per_op)),
        ]
    };
    if !results.is_empty() {
        let rows: Vec<Vec<Cell>> = results
            .iter()
            .map(|(r, c)| {
                let mut row = vec![
                    Cell::Text(crate::report::label::workload(&r.workload, &r.params)),
                    Cell::Num(r.tasks.to_string()),
                ];
                row.extend(cpu(c));
                row
            })
            .collect();
        doc.push(&table(
            "child-cpu",
            &["command", "tasks", "runs", "user per run", "system per run"],
            &rows,
        ));
    }
    for (c, [b, t]) in &comparisons {
        let label = crate::report::label::comparison(c);
        let bar = |name: &str, x: &ChildCpu| Bar {
            label: name.to_string(),
            values_ns: vec![x.user_ns_per_op, x.sys_ns_per_op],
        };
        let svg = bars::draw(
            &format!("CPU time per run: {label}"),
            "CPU time of one run of the command",
            &[
                ("user".to_string(), series_color(0)),
                ("system".to_string(), series_color(1)),
            ],
            &[bar("baseline", b), bar("treatment", t)],
        )?;
        doc.plot(
            "child-cpu",
            &svg,
            &format!(
                "{label}: user and system CPU time of one run of the command, each arm the \
                 median over pairs."
            ),
        );
        let rows: Vec<Vec<Cell>> = [("baseline", b), ("treatment", t)]
            .iter()
            .map(|(arm, x)| {
                let mut row = vec![Cell::Text(arm.to_string())];
                row.extend(cpu(x));
                row
            })
            .collect();
        doc.push(&table(
            "child-cpu",
            &["arm", "runs", "user per run", "system per run"],
            &rows,
        ));
    }
    doc.close();
    Ok(())
}
