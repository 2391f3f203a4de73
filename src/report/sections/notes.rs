//! The run's remarks: mechanisms it could not measure and why, what each
//! treatment's mechanism said before measuring (rule-file lines not
//! applied, a compiled profile's size), and parts of the stored run that
//! could not be read back.

use super::super::doc::RunDoc;
use super::super::markup::Markup;

pub fn skipped(doc: &RunDoc, m: &mut dyn Markup) {
    let skipped = doc.settings().skipped;
    if skipped.is_empty() {
        return;
    }
    m.heading("Skipped");
    let items: Vec<String> = skipped
        .iter()
        .map(|s| format!("{}: unavailable: {}", s.mechanism, s.reason))
        .collect();
    m.list(&items);
}

pub fn treatment_notes(doc: &RunDoc, m: &mut dyn Markup) {
    let notes = doc.settings().treatment_notes;
    if notes.is_empty() {
        return;
    }
    m.heading("Treatments as applied");
    m.list(&notes);
}

pub fn problems(doc: &RunDoc, m: &mut dyn Markup) {
    if doc.problems.is_empty() {
        return;
    }
    m.heading("Problems reading this run back");
    m.list(&doc.problems);
}
