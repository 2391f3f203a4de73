//! Terminal tables that are not about one run: the list of stored runs.
//! (A run's own tables are sections, [`super::sections`].)

use comfy_table::CellAlignment;

pub use super::markup::terminal::new_table;
use crate::model::RunSummary;

/// `secperf results list`: one line per run, newest first, with what it
/// holds (results of one configuration and A/B comparisons) and what it
/// measured.
pub fn runs(runs: &[RunSummary]) -> String {
    let mut t = new_table(&[
        "id",
        "label",
        "kind",
        "started (UTC)",
        "host",
        "kernel",
        "results",
        "comparisons",
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
            r.comparisons.to_string(),
            r.workloads.join(","),
        ]);
    }
    for c in [0, 6, 7] {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}
