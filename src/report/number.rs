//! Every number secperf prints is formatted here, so a figure reads the
//! same in every table and format: rates with SI suffixes, durations with
//! a readable unit, interval half-widths, p-values, the two column styles
//! (fixed decimals for mailing-list columns, four significant digits for
//! post-shaped tables), and how changes and verdicts are worded.
//!
//! Marks have one meaning each, wherever they appear (overhead tables,
//! `compare`, suites, attribution rows):
//! - `*` significant: slower or faster (p < alpha after correction, and
//!   the whole interval outside the noise band);
//! - `=` negligible: shown to lie within the equivalence margin;
//! - `~` no difference detected: the interval includes no change, and its
//!   bounds say how large a difference could hide.

use crate::model::Metric;
use crate::stats::decision::{DecisionOpts, Verdict};
use crate::stats::paired::OverheadPct;

/// `n` and a noun, singular for 1: "1 comparison", "3 comparisons".
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A confidence level 1 - `alpha` in percent, to the digits that tell it
/// from 95%: "96.6%", "99.83%", and "95%" itself.
pub fn level_label(alpha: f64) -> String {
    let c = (1.0 - alpha) * 100.0;
    let text = if c < 99.0 {
        format!("{c:.1}%")
    } else {
        format!("{c:.2}%")
    };
    text.replace(".0%", "%").replace(".00%", "%")
}

/// One figure of a measure, readable: time and instructions per operation
/// with their units ("195.0 ns", "336.1 insns"), any other measure (a
/// client's figure, whose name carries its unit) with an SI suffix.
pub fn figure(measure: &crate::model::Measure, x: f64) -> String {
    match measure.metric() {
        Some(metric) => metric.format(x),
        None => si(x),
    }
}

/// A rate with an SI suffix and 4 significant digits: 12.35M, 987.6k.
pub fn si(x: f64) -> String {
    let (v, suffix) = match x.abs() {
        a if a >= 1e9 => (x / 1e9, "G"),
        a if a >= 1e6 => (x / 1e6, "M"),
        a if a >= 1e3 => (x / 1e3, "k"),
        _ => (x, ""),
    };
    let digits = match v.abs() {
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        _ => 3,
    };
    format!("{v:.digits$}{suffix}")
}

/// A duration in nanoseconds with a unit that keeps it readable.
pub fn ns(x: f64) -> String {
    let (div, unit, digits) = ns_scale(x);
    format!("{:.digits$} {unit}", x / div)
}

/// A duration in nanoseconds as a prediction says it (`secperf predict`):
/// two decimals in s and ms, one in us and ns, switching at 1000 of each
/// ("12.35 ms", "800.0 us"); finer below a millisecond than [`ns`].
pub fn duration(x: f64) -> String {
    if x.abs() >= 1e9 {
        format!("{:.2} s", x / 1e9)
    } else if x.abs() >= 1e6 {
        format!("{:.2} ms", x / 1e6)
    } else if x.abs() >= 1e3 {
        format!("{:.1} us", x / 1e3)
    } else {
        format!("{x:.1} ns")
    }
}

/// A signed percentage with two decimals and never an exponent
/// ("+0.88%", "-0.12%"), "n/a" when not finite; [`change_pct`] switches
/// to an exponent from 10^5.
pub fn signed_pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.2}%")
    } else {
        "n/a".into()
    }
}

/// A duration in nanoseconds with 3 significant digits, for figures
/// whose resolution is coarse (CPU time in clock ticks): "57.5 ms".
pub fn ns3(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let (div, unit, _) = ns_scale(x);
    let v = x / div;
    let digits = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    format!("{v:.digits$} {unit}")
}

/// How [`ns`] shows a duration of about `x` ns: (divisor, unit, decimals).
pub fn ns_scale(x: f64) -> (f64, &'static str, usize) {
    crate::model::metric::time_scale(x)
}

/// Half-width of an interval as a percentage of its centre: "±0.4%".
pub fn ci_pct(s: &crate::model::Summary) -> String {
    if s.median == 0.0 {
        return "-".into();
    }
    let half = (s.ci_high - s.ci_low) / 2.0 / s.median.abs() * 100.0;
    format!("±{half:.1}%")
}

/// A p-value for people: "p=0.012", "p<0.001".
pub fn p_short(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".to_string()
    } else {
        format!("p={p:.3}")
    }
}

/// A cell's central value with its unit, readable: "297.5 ns" for ns/op
/// (switching to us, ms, s as it grows), else "12.35k ops/s".
/// The unit of a row of ratios of treatment to baseline (a comparison's
/// overhead, each pair's ratio), shown as the overhead in percent.
pub const RATIO_UNIT: &str = "treatment/baseline";

pub fn value_with_unit(v: f64, unit: &str) -> String {
    if unit == "ns/op" {
        ns(v)
    } else if unit == RATIO_UNIT {
        // A ratio of treatment to baseline: the overhead it is.
        format!("{:+.1}%", (v - 1.0) * 100.0)
    } else if unit == crate::model::Metric::Instructions.per_op_short() {
        crate::model::Metric::Instructions.format(v)
    } else if unit.is_empty() {
        si(v)
    } else {
        format!("{} {unit}", si(v))
    }
}

/// A value for aligned mailing-list columns: two decimals, whole numbers
/// from 100000, an exponent from 10^9; "n/a" when not finite.
pub fn fixed(v: f64) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if v.abs() >= 1e9 {
        format!("{v:.3e}")
    } else if v.abs() >= 1e5 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// A signed percent change for mailing-list columns: "+1.23%".
pub fn change_pct(c: f64) -> String {
    if !c.is_finite() {
        "n/a".into()
    } else if c.abs() >= 1e5 {
        format!("{c:+.2e}%")
    } else {
        format!("{c:+.2}%")
    }
}

/// A value with 4 significant digits and no exponent (post-shaped tables);
/// "-" when not finite.
pub fn sig4(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    match v.abs() {
        a if a >= 1000.0 => format!("{v:.0}"),
        a if a >= 100.0 => format!("{v:.1}"),
        a if a >= 10.0 => format!("{v:.2}"),
        _ => format!("{v:.3}"),
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

/// The words of a change in `metric`, up then down: time is slower or
/// faster; counted instructions are more or fewer.
pub fn change_words(metric: Metric) -> (&'static str, &'static str) {
    match metric {
        Metric::Time => ("slower", "faster"),
        Metric::Instructions => ("more instructions", "fewer instructions"),
    }
}

/// Both ways a change in `metric` can go: "slower or faster", "more or
/// fewer instructions".
pub fn either_way(metric: Metric) -> &'static str {
    match metric {
        Metric::Time => "slower or faster",
        Metric::Instructions => "more or fewer instructions",
    }
}

/// A verdict in the words of `metric` ("more instructions" where time's
/// reads "slower"). The data formats keep the verdict's own name.
pub fn verdict_text(metric: Metric, v: Verdict) -> String {
    let (up, down) = change_words(metric);
    match v {
        Verdict::Slower => up.to_string(),
        Verdict::Faster => down.to_string(),
        other => other.to_string(),
    }
}

/// Where a sequential comparison stopped, in the words of `metric`.
pub fn stopped_text(metric: Metric, s: crate::stats::sequential::StopReason) -> String {
    use crate::stats::sequential::StopReason;
    let (up, down) = change_words(metric);
    match s {
        StopReason::Slower => format!("settled: {up}"),
        StopReason::Faster => format!("settled: {down}"),
        other => other.describe().to_string(),
    }
}

/// The legend of the marks, with the table's thresholds (a run of time's).
pub fn marks_legend(d: &DecisionOpts) -> String {
    marks_legend_in(d, Metric::Time)
}

/// The legend of the marks, with the table's thresholds, in the words of
/// `metric`.
pub fn marks_legend_in(d: &DecisionOpts, metric: Metric) -> String {
    let either = either_way(metric);
    let of = match metric {
        Metric::Time => "",
        Metric::Instructions => " of the instructions",
    };
    let margin = if d.equivalence_auto {
        format!(
            "{}% (--equivalence auto: the margin a comparison with no difference shows itself \
             within in {} pairs 4 times in 5, from the noise `secperf calibrate` measured on \
             this machine)",
            d.equivalence_pct,
            crate::stats::sequential::AUTO_MARGIN_PAIRS
        )
    } else {
        format!("{}%", d.equivalence_pct)
    };
    format!(
        "* {either}: p < {} after correction and the whole interval outside \
         +-{}%{of}; = negligible: the whole interval within +-{margin}{of} (equivalence, as by \
         two one-sided tests at its level); ~ no difference detected: the interval bounds what \
         could hide.",
        d.alpha, d.noise_pct
    )
}

/// What an interval in a progress line is: the comparison's own, at its
/// own level, before the table's correction, which the table's verdicts
/// are decided at (so the table's interval is as wide or wider).
pub fn own_interval(alpha: f64) -> String {
    format!(
        "its own {} interval; the table's, after correction, is wider",
        level_label(alpha)
    )
}

/// An estimate and its interval so far, for progress lines: "+12.3%
/// [8.0, 26.8]", or "+12.3% (no bounded interval yet: too few pairs)"
/// while a bound is infinite (the signed-rank interval has none before 6
/// pairs).
pub fn so_far(estimate: f64, ci_low: f64, ci_high: f64, alpha: f64) -> String {
    if ci_low.is_finite() && ci_high.is_finite() && ci_low > -100.0 {
        format!(
            "{estimate:+.1}% [{ci_low:.1}, {ci_high:.1}] ({})",
            own_interval(alpha)
        )
    } else {
        format!("{estimate:+.1}% (no bounded interval yet: too few pairs)")
    }
}

/// A bound of an interval, one decimal ("inf" when unbounded).
fn bound(x: f64) -> String {
    format!("{x:.1}")
}

/// A change with its interval and mark: "+12.3% [8.0, 26.8] *".
pub fn change(estimate: f64, ci_low: f64, ci_high: f64, verdict: Verdict) -> String {
    // No bound on either side (too few samples for the level): said so,
    // rather than as the numbers [-100.0, inf].
    if ci_low.partial_cmp(&-100.0) != Some(std::cmp::Ordering::Greater) && !ci_high.is_finite() {
        return format!("{estimate:+.1}% [unbounded] {}", mark(verdict));
    }
    format!(
        "{estimate:+.1}% [{}, {}] {}",
        bound(ci_low),
        bound(ci_high),
        mark(verdict)
    )
}

/// A comparison's overhead as every table shows it: [`overhead`] for one
/// that finished; for one the run stopped inside, its estimate so far,
/// with its interval only where it has one (bounded on both sides), and
/// no mark: it has no verdict (its verdict and pairs say unfinished).
pub fn comparison_overhead(c: &crate::model::Comparison) -> String {
    if !c.unfinished {
        return overhead(&c.overhead_pct);
    }
    let o = &c.overhead_pct;
    if bounded(o.ci_low, o.ci_high) {
        format!("{:+.1}% [{:.1}, {:.1}]", o.estimate, o.ci_low, o.ci_high)
    } else {
        format!("{:+.1}%", o.estimate)
    }
}

/// Whether an interval in percent has both ends: not -100% (a ratio of 0)
/// below, not infinite above.
pub fn bounded(low_pct: f64, high_pct: f64) -> bool {
    low_pct.is_finite() && high_pct.is_finite() && low_pct > -100.0
}

/// A comparison's verdict as every table words it: "unfinished" for one
/// the run stopped inside; else its verdict in its measure's words.
pub fn comparison_verdict(c: &crate::model::Comparison, metric: Metric) -> String {
    if c.unfinished {
        "unfinished".to_string()
    } else {
        verdict_text(c.measure.metric().unwrap_or(metric), c.overhead_pct.verdict)
    }
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
    fn coarse_durations_and_counts() {
        assert_eq!(ns3(57_500_000.0), "57.5 ms");
        assert_eq!(ns3(139_317_000.0), "139 ms");
        assert_eq!(ns3(2_070_000_000.0), "2.07 s");
        assert_eq!(ns3(f64::NAN), "-");
        assert_eq!(count(1, "comparison"), "1 comparison");
        assert_eq!(count(3, "comparison"), "3 comparisons");
    }

    #[test]
    fn si_suffixes() {
        assert_eq!(si(12_345_678.0), "12.35M");
        assert_eq!(si(987_600.0), "987.6k");
        assert_eq!(si(5.0), "5.000");
        assert_eq!(si(2.5e9), "2.500G");
    }

    #[test]
    fn ns_units() {
        assert_eq!(ns(85.04), "85.0 ns");
        assert_eq!(ns(45_000.0), "45.00 us");
        assert_eq!(ns(61_234_000.0), "61.234 ms");
    }

    #[test]
    fn ci_half_width() {
        let s = crate::stats::Summary {
            median: 100.0,
            ci_low: 99.0,
            ci_high: 101.0,
        };
        assert_eq!(ci_pct(&s), "±1.0%");
    }

    #[test]
    fn column_styles() {
        assert_eq!(sig4(1234567.8), "1234568");
        assert_eq!(sig4(123.45), "123.5");
        assert_eq!(sig4(1.23456), "1.235");
        assert_eq!(sig4(f64::NAN), "-");
        assert_eq!(fixed(1.234), "1.23");
        assert_eq!(fixed(123456.7), "123457");
        assert_eq!(fixed(f64::INFINITY), "n/a");
        assert_eq!(change_pct(-1.5), "-1.50%");
        assert_eq!(p_short(0.0004), "p<0.001");
    }

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
        // Issue 53: an interval bounded on neither side reads so.
        assert_eq!(
            change(0.1, -100.0, f64::INFINITY, Verdict::NoChange),
            "+0.1% [unbounded] ~"
        );
        assert_eq!(
            change(0.1, -100.0, 12.0, Verdict::NoChange),
            "+0.1% [-100.0, 12.0] ~"
        );
        assert_eq!(overhead(&o(-5.0, Verdict::Faster)), "-5.0% [-7.0, -2.5] *");
        assert_eq!(
            overhead(&o(0.2, Verdict::Negligible)),
            "+0.2% [-1.8, 2.7] ="
        );
        assert_eq!(overhead(&o(1.0, Verdict::NoChange)), "+1.0% [-1.0, 3.5] ~");
        assert_eq!(p_value(0.0004), "<0.001");
        assert_eq!(p_value(0.0123), "0.012");
        assert_eq!(Verdict::NoChange.to_string(), "no-change");
        assert_eq!("negligible".parse::<Verdict>(), Ok(Verdict::Negligible));
        assert_eq!(<&str>::from(Verdict::Slower), "slower");
        assert_eq!(
            serde_json::to_string(&Verdict::NoChange).unwrap(),
            "\"no-change\""
        );
        let legend = marks_legend(&DecisionOpts::default());
        assert!(legend.contains("+-1%"), "{legend}");
    }
}
