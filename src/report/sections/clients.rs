//! The load client's own figures of a plain measurement (`run --server`
//! with a client secperf reads: redis-benchmark, ab, wrk, pgbench): each
//! figure's median over the kept client runs. A comparison's client
//! figures are measures beside its own ([`super::beside`]).

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::{Align, Cell, Column, Markup, Table};
use super::super::number::si;

/// The client figures of every result that has them (`run --server`):
/// each figure's median over the kept client runs.
pub fn result_metrics(doc: &RunDoc, m: &mut dyn Markup) {
    let with: Vec<_> = doc
        .results
        .iter()
        .filter(|r| !r.client_metrics.is_empty())
        .collect();
    if with.is_empty() {
        return;
    }
    let mut t = Table::new(
        "result_client_metrics",
        vec![
            Column::new("workload", Align::Left, "workload"),
            Column::new("tasks", Align::Right, "tasks"),
            Column::new("figure", Align::Left, "figure"),
            Column::new("value", Align::Right, "value"),
            Column::new("better", Align::Left, "better"),
        ],
    );
    t.group = Some(1);
    for r in with {
        for f in &r.client_metrics {
            t.row(vec![
                Cell::text(label::workload(&r.workload, &r.params)),
                Cell::value(r.tasks.to_string(), r.tasks),
                Cell::text(f.name.clone()),
                Cell::value(si(f.value), f.value),
                Cell::text(if f.higher_is_better {
                    "higher"
                } else {
                    "lower"
                }),
            ]);
        }
    }
    t.footer(
        "What the client reported: the median over the measurement's kept client runs of \
         each figure (requests or transactions per second, latencies in ms).",
    );
    m.heading("The client's figures");
    m.table(&t);
}
