//! The load client's own figures (`service` with redis-benchmark, ab, wrk
//! or pgbench): per comparison, each figure's baseline and treatment
//! medians and its paired change with the interval, as a table.

use super::Doc;
use super::markup::{Cell, anchor, para, table};
use crate::report::doc::RunDoc;
use crate::report::number::si;

pub fn section(doc: &mut Doc, run: &RunDoc) {
    let with: Vec<_> = run
        .comparisons
        .iter()
        .filter(|c| !c.client_metrics.is_empty())
        .collect();
    if with.is_empty() {
        return;
    }
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "client-metrics"]),
        "client-metrics",
        &format!("{}: the client's figures", run.name()),
    );
    let rows: Vec<Vec<Cell>> = with
        .iter()
        .flat_map(|c| {
            let label = crate::report::label::comparison(c);
            c.client_metrics.iter().map(move |f| {
                let o = &f.change_pct;
                vec![
                    Cell::Text(label.clone()),
                    Cell::Text(f.name.clone()),
                    Cell::Num(f.pairs.to_string()),
                    Cell::Num(si(f.baseline)),
                    Cell::Num(si(f.treatment)),
                    Cell::Num(format!(
                        "{:+.1}% [{:+.1}, {:+.1}]",
                        o.estimate, o.ci_low, o.ci_high
                    )),
                    Cell::Text(
                        if f.higher_is_better {
                            "higher"
                        } else {
                            "lower"
                        }
                        .into(),
                    ),
                ]
            })
        })
        .collect();
    doc.push(&table(
        "client-metrics",
        &[
            "comparison",
            "figure",
            "pairs",
            "baseline",
            "treatment",
            "change [95% CI]",
            "better",
        ],
        &rows,
    ));
    doc.push(&para(
        "note",
        "What the client reported per run (requests or transactions per second, latencies in \
         ms): medians over pairs of each arm, and the paired change treatment / baseline - 1 \
         with the interval the run time gets, at the comparison's level and not corrected \
         across figures; the verdict is the run time's.",
    ));
    doc.close();
}
