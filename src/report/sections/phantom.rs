//! Phantom audit rules under a run's audit comparisons: when the run's
//! check found the kernel still counting rules that are gone
//! ([`crate::probe::audit_phantom`]), "audit enabled" in its comparisons
//! means audit's rule filters on every syscall, not the cheap path of a
//! kernel with no rules. Shown in every view, since it changes what those
//! figures mean.

use super::super::doc::RunDoc;
use super::super::markup::Markup;
use crate::probe::audit_phantom::PhantomCheck;

/// The note, when the run found phantom rules (only runs that switch
/// audit check for them).
pub fn note(doc: &RunDoc) -> Option<String> {
    let audit = doc.meta.system.get("audit")?;
    if audit.get("phantom_rules")?.as_bool() != Some(true) {
        return None;
    }
    let check: Option<PhantomCheck> = audit
        .get("phantom_check")
        .and_then(|c| serde_json::from_value(c.clone()).ok());
    let consequence = check.map(|c| c.consequence()).unwrap_or_default();
    Some(format!(
        "This kernel has phantom audit rules: it still counts audit rules that are gone, so in \
         these comparisons \"audit enabled\" includes audit's rule filters on every syscall, as \
         if rules were loaded. {consequence}"
    ))
}

pub fn phantom(doc: &RunDoc, m: &mut dyn Markup) {
    if let Some(note) = note(doc) {
        m.heading("Phantom audit rules");
        m.text(&note);
    }
}
