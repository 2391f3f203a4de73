//! The measures beside each comparison's own (a load client's figures, a
//! server's CPU, time beside counted instructions): per comparison, each
//! measure's baseline, the treatment its paired change gives, and the
//! change with its interval and verdict: the table every format shows
//! (`report::sections::beside`), as HTML.

use super::Doc;
use super::blocks::anchor;
use crate::report::doc::RunDoc;

pub fn section(doc: &mut Doc, run: &RunDoc) {
    let Some(t) = crate::report::sections::beside_table(run) else {
        return;
    };
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "beside"]),
        "beside",
        &format!(
            "{}: {}",
            run.name(),
            crate::report::sections::beside::heading(run).to_lowercase()
        ),
    );
    doc.push(&crate::report::html::writer::table(&t));
    doc.close();
}
