//! The negative control: the run's comparisons on a workload with no
//! system call in its loop (`stream`), which no mechanism should change.
//! It passed when none came out slower or faster after the run's
//! correction; otherwise something other than the mechanisms moved the
//! figures, and the reader is told to read the rest with care.

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::Markup;

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The verdict lines, unindented: "passed: ..." or "FAILED: ..." (then
/// what did not change). Empty without a negative control.
pub fn lines(doc: &RunDoc) -> Vec<String> {
    let Some(nc) = &doc.negative_control else {
        return Vec::new();
    };
    let controls = doc.comparisons.iter().filter(|c| c.workload == nc.workload);
    let (failed, passed): (Vec<_>, Vec<_>) =
        controls.partition(|c| nc.failed.contains(&label::control(c)));
    let figures = |cs: &[&crate::model::Comparison], parens: bool| -> Vec<String> {
        cs.iter()
            .map(|c| {
                if parens {
                    format!(
                        "{} ({})",
                        label::control(c),
                        crate::report::number::comparison_overhead(c)
                    )
                } else {
                    format!(
                        "{} {}",
                        label::control(c),
                        crate::report::number::comparison_overhead(c)
                    )
                }
            })
            .collect()
    };
    if failed.is_empty() {
        return vec![format!(
            "passed: no mechanism changed {} ({})",
            nc.workload,
            figures(&passed, false).join(", ")
        )];
    }
    let hooks = if failed.len() == 1 {
        "the mechanism's hooks"
    } else {
        "the mechanisms' hooks"
    };
    let mut out = vec![format!(
        "FAILED: {} changed under {}: something other than {hooks} moved the figures \
         (noise, frequency scaling, another load); treat the results above with care and \
         rerun on a quieter machine.",
        nc.workload,
        and_list(&figures(&failed, true))
    )];
    if !passed.is_empty() {
        out.push(format!(
            "unchanged under {}",
            figures(&passed, true).join(", ")
        ));
    }
    out
}

pub fn negative_control(doc: &RunDoc, m: &mut dyn Markup) {
    let lines = lines(doc);
    if lines.is_empty() {
        return;
    }
    m.heading(&format!(
        "Negative control ({}: no syscall in the loop, so no mechanism should change it)",
        doc.negative_control
            .as_ref()
            .map_or("stream", |nc| nc.workload.as_str())
    ));
    m.list(&lines);
}
