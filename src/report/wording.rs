//! How verdicts and changes are worded, once for every format.
//!
//! Marks have one meaning each, wherever they appear (overhead tables,
//! `compare`, suites, attribution rows):
//! - `*` significant: slower or faster (p < alpha after correction, and
//!   the whole interval outside the noise band);
//! - `=` negligible: shown to lie within the equivalence margin;
//! - `~` no difference detected: the interval includes no change, and its
//!   bounds say how large a difference could hide.

use crate::stats::decision::{DecisionOpts, Verdict};
use crate::stats::paired::OverheadPct;

/// A verdict's name, as JSON, CSV and the tables spell it.
pub fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "slower",
        Verdict::Faster => "faster",
        Verdict::NoChange => "no-change",
        Verdict::Negligible => "negligible",
    }
}

/// A verdict's mark (see the module header).
pub fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower | Verdict::Faster => "*",
        Verdict::Negligible => "=",
        Verdict::NoChange => "~",
    }
}

/// The legend of the marks, with the table's thresholds.
pub fn marks_legend(d: &DecisionOpts) -> String {
    format!(
        "* slower or faster: p < {} after correction and the whole interval outside \
         +-{}%; = negligible: within +-{}% by two one-sided tests; ~ no difference \
         detected: the interval bounds what could hide.",
        d.alpha, d.noise_pct, d.equivalence_pct
    )
}

/// A bound of an interval, one decimal ("inf" when unbounded).
fn bound(x: f64) -> String {
    format!("{x:.1}")
}

/// A change with its interval and mark: "+12.3% [8.0, 26.8] *".
pub fn change(estimate: f64, ci_low: f64, ci_high: f64, verdict: Verdict) -> String {
    format!(
        "{estimate:+.1}% [{}, {}] {}",
        bound(ci_low),
        bound(ci_high),
        mark(verdict)
    )
}

/// An overhead with its interval and mark: "+12.3% [8.0, 26.8] *".
pub fn overhead(o: &OverheadPct) -> String {
    change(o.estimate, o.ci_low, o.ci_high, o.verdict)
}

/// A p-value in a table column: "0.012", "<0.001".
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mark_per_meaning() {
        let o = |estimate, verdict| OverheadPct {
            estimate,
            ci_low: estimate - 2.0,
            ci_high: estimate + 2.5,
            p_value: 0.01,
            verdict,
        };
        assert_eq!(overhead(&o(12.3, Verdict::Slower)), "+12.3% [10.3, 14.8] *");
        assert_eq!(overhead(&o(-5.0, Verdict::Faster)), "-5.0% [-7.0, -2.5] *");
        assert_eq!(
            overhead(&o(0.2, Verdict::Negligible)),
            "+0.2% [-1.8, 2.7] ="
        );
        assert_eq!(overhead(&o(1.0, Verdict::NoChange)), "+1.0% [-1.0, 3.5] ~");
        assert_eq!(p_value(0.0004), "<0.001");
        assert_eq!(p_value(0.0123), "0.012");
        assert_eq!(verdict_name(Verdict::NoChange), "no-change");
        let legend = marks_legend(&DecisionOpts::default());
        assert!(legend.contains("+-1%"), "{legend}");
    }
}
