//! The policy files the run measured (an OCI seccomp profile, an audit
//! rules file): path, size and SHA-256 always, and in the stored view
//! their content as it was read, so a reader knows exactly which policy a
//! figure belongs to even after the file changed.

use super::super::doc::RunDoc;
use super::super::markup::Markup;

pub fn policy_files(doc: &RunDoc, content: bool, m: &mut dyn Markup) {
    if doc.policy_files.is_empty() {
        return;
    }
    m.heading("Policy files measured (stored with the run)");
    let items: Vec<String> = doc
        .policy_files
        .iter()
        .map(|f| {
            format!(
                "{}: {}={} ({} bytes, sha256 {})",
                f.treatment, f.param, f.path, f.bytes, f.sha256
            )
        })
        .collect();
    m.list(&items);
    if content {
        for f in &doc.policy_files {
            m.verbatim(&format!("{} as measured", f.path), &f.content);
        }
    } else {
        m.text(&format!(
            "Their content: `secperf results show {}`; `secperf rerun {}` measures them again.",
            doc.run_id, doc.run_id
        ));
    }
}
