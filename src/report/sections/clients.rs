//! The load client's own figures (`service` with a client secperf reads:
//! redis-benchmark, ab, wrk, pgbench): one row per figure of each
//! comparison with the baseline and treatment medians over pairs and the
//! paired change with its interval. The verdict of the comparison is the
//! run time's; these intervals are at the comparison's level and not
//! corrected across figures, so they say how large a change the client
//! saw, not whether it is significant on its own.

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

/// The client figures of every comparison that has them, one row each;
/// None when no comparison has any. The HTML page shows the same table.
pub fn client_metrics_table(doc: &RunDoc) -> Option<Table> {
    let with: Vec<_> = doc
        .comparisons
        .iter()
        .filter(|c| !c.client_metrics.is_empty())
        .collect();
    if with.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "client_metrics",
        vec![
            Column::new("workload", Align::Left, "workload"),
            Column::new("mechanism", Align::Left, "treatment"),
            Column::new("figure", Align::Left, "figure"),
            Column::new("pairs", Align::Right, "pairs"),
            Column::new("baseline", Align::Right, "baseline"),
            Column::new("treatment", Align::Right, "treatment"),
            Column::with_fields(
                "change [95% CI]",
                Align::Right,
                &["change_pct", "change_ci_low_pct", "change_ci_high_pct"],
            ),
            Column::new("better", Align::Left, "better"),
            Column::data("treatment_median"),
        ],
    );
    t.group = Some(2);
    for c in &with {
        for f in &c.client_metrics {
            let o = &f.change_pct;
            let treatment = f.treatment;
            t.row(vec![
                Cell::text(label::workload(&c.workload, &c.workload_params)),
                Cell::text(label::treatment(c)),
                Cell::text(f.name.clone()),
                Cell::value(f.pairs.to_string(), f.pairs),
                Cell::value(si(f.baseline), f.baseline),
                Cell::value(si(treatment), treatment),
                Cell::values(
                    format!("{:+.1}% [{:+.1}, {:+.1}]", o.estimate, o.ci_low, o.ci_high),
                    vec![o.estimate.into(), o.ci_low.into(), o.ci_high.into()],
                ),
                Cell::text(if f.higher_is_better {
                    "higher"
                } else {
                    "lower"
                }),
                Cell::value("", f.treatment_median),
            ]);
        }
    }
    t.footer(
        "What the client reported, per run: requests or transactions per second, latencies in \
         ms. baseline: the median over pairs of the baseline half (a half's value is the \
         median of its runs); treatment: baseline x the median paired ratio, so treatment / \
         baseline - 1 is the change (as in the overhead table); change: from the pairs, with \
         the interval the run time gets, at the comparison's level and not corrected across \
         figures (the verdict above is the run time's). better: which direction is better for \
         that figure (a fall in requests/s is a cost, a rise in latency is).",
    );
    if with
        .iter()
        .any(|c| c.client_metrics.iter().any(|f| is_server_cpu(&f.name)))
    {
        t.footer(
            "server.*_ms_per_run: the server's CPU time per client run, its whole process \
             group's: cpu exact (each process's CPU clock), user and system its split in the \
             proportion of /proc's clock ticks; paired like the client's figures, so it has \
             an interval: the figure `secperf predict --pid` of the server is checked \
             against.",
        );
    }
    Some(t)
}

/// Whether a figure is the server's CPU time, not the client's.
fn is_server_cpu(name: &str) -> bool {
    name.starts_with("server.")
}

/// The client figures of every comparison that has them.
pub fn client_metrics(doc: &RunDoc, m: &mut dyn Markup) {
    if let Some(t) = client_metrics_table(doc) {
        let server = doc
            .comparisons
            .iter()
            .any(|c| c.client_metrics.iter().any(|f| is_server_cpu(&f.name)));
        m.heading(if server {
            "The client's figures and the server's CPU"
        } else {
            "The client's figures"
        });
        m.table(&t);
    }
}
