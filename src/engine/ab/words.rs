//! What the progress lines say about a comparison: its name, the figure
//! it measured, and the slices of its budget it did not need. Wording
//! only, so that every loop (and calibration) says the same.

use super::design::{Case, Design};
use crate::model::Comparison;

/// A case's name in progress lines.
pub(super) fn describe_case(case: &Case) -> String {
    crate::report::label::case(
        &case.treatment.to_string(),
        &crate::report::label::workload(case.workload.name, &case.workload_params),
        case.tasks as u32,
    )
}

/// The level a comparison's own interval is at: the decision's alpha for
/// a sequential one, 0.05 for the fixed design.
pub fn own_alpha(design: &Design) -> f64 {
    design
        .stop
        .as_ref()
        .map_or(crate::stats::paired::PairedOpts::default().alpha, |rule| {
            rule.decision.alpha
        })
}

/// Slices of the budget a sequential comparison did not need (for the
/// progress bar).
pub fn unmeasured_slices(design: &Design, c: &Comparison) -> u64 {
    2 * design.pairs.saturating_sub(c.pairs) as u64 * design.slices_per_half()
}

/// A finished comparison's progress line: its estimate and its own
/// interval, labelled so, before the table's correction (so no verdict
/// mark yet), and where a sequential one stopped.
pub fn describe_measured(c: &Comparison, design: &Design) -> String {
    let o = &c.overhead_pct;
    let figure = format!(
        "{:+.1}% [{:.1}, {:.1}], {}",
        o.estimate,
        o.ci_low,
        o.ci_high,
        crate::report::number::own_interval(own_alpha(design))
    );
    match &c.sequential {
        Some(s) => format!(
            "{figure} ({} of at most {} pairs, {})",
            c.pairs,
            s.max_pairs,
            crate::report::number::stopped_text(c.measure.metric().unwrap_or_default(), s.stopped)
        ),
        None => format!("{figure} ({} pairs)", c.pairs),
    }
}
