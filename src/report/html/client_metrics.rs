//! The load client's own figures (`service` with redis-benchmark, ab, wrk
//! or pgbench): per comparison, each figure's baseline, the treatment its
//! paired change gives, and the change with its interval: the table every
//! format shows (`report::sections::clients`), as HTML.

use super::Doc;
use super::blocks::anchor;
use crate::report::doc::RunDoc;

pub fn section(doc: &mut Doc, run: &RunDoc) {
    let Some(t) = crate::report::sections::client_metrics_table(run) else {
        return;
    };
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "client-metrics"]),
        "client-metrics",
        &format!("{}: the client's figures", run.name()),
    );
    doc.push(&crate::report::html::writer::table(&t));
    doc.close();
}
