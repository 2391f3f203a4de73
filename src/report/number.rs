//! Every number secperf prints is formatted here, so a figure reads the
//! same in every table and format: rates with SI suffixes, durations with
//! a readable unit, interval half-widths, p-values, and the two column
//! styles (fixed decimals for mailing-list columns, four significant digits
//! for post-shaped tables), and an A/B overhead as one line.

use crate::stats::decision::Verdict;
use crate::stats::paired::OverheadPct;

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
    match x.abs() {
        a if a >= 1e9 => format!("{:.3} s", x / 1e9),
        a if a >= 1e6 => format!("{:.3} ms", x / 1e6),
        a if a >= 1e4 => format!("{:.2} us", x / 1e3),
        _ => format!("{x:.1} ns"),
    }
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
pub fn value_with_unit(v: f64, unit: &str) -> String {
    if unit == "ns/op" {
        ns(v)
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

/// An A/B overhead as one line of a report or progress line.
///
/// Slower or faster: `"+48.2% [45.1, 51.0]"` (estimate with its sign,
/// then the interval, one decimal); negligible: the same after
/// `"negligible: "`. No change: `"no difference detected: < 0.8%"`, with
/// the bound of [`no_change_bound`], or without a bound when the interval
/// is not finite.
pub fn overhead(o: &OverheadPct) -> String {
    match o.verdict {
        Verdict::Slower | Verdict::Faster => {
            format!("{:+.1}% [{:.1}, {:.1}]", o.estimate, o.ci_low, o.ci_high)
        }
        Verdict::Negligible => format!(
            "negligible: {:+.1}% [{:.1}, {:.1}]",
            o.estimate, o.ci_low, o.ci_high
        ),
        Verdict::NoChange => match no_change_bound(o.ci_low, o.ci_high) {
            Some(bound_pct) => format!("no difference detected: < {bound_pct:.1}%"),
            None => "no difference detected".to_string(),
        },
    }
}

/// The bound a "no difference detected" interval gives, percent: the
/// larger of |low| and |high| rounded *up* to one decimal, so the printed
/// bound is never below the interval's, and at least 0.1 (identical arms
/// give a [0, 0] interval, and "< 0.0%" would claim something impossible).
/// A NaN end is ignored; None when the interval is not finite.
pub fn no_change_bound(low_pct: f64, high_pct: f64) -> Option<f64> {
    let bound = low_pct.abs().max(high_pct.abs());
    // The epsilon keeps 0.7 (stored as 0.69999..) or 0.8
    // (7.000000000000001 after * 10) from rounding up a step.
    bound
        .is_finite()
        .then(|| ((bound * 10.0 - 1e-9).ceil() / 10.0).max(0.1))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn overhead_lines() {
        let o = |estimate, ci_low, ci_high, verdict| OverheadPct {
            estimate,
            ci_low,
            ci_high,
            p_value: 0.01,
            verdict,
        };
        assert_eq!(
            overhead(&o(48.2, 45.1, 51.0, Verdict::Slower)),
            "+48.2% [45.1, 51.0]"
        );
        assert_eq!(
            overhead(&o(-12.34, -14.0, -10.06, Verdict::Faster)),
            "-12.3% [-14.0, -10.1]"
        );
        assert_eq!(
            overhead(&o(0.04, -0.4, 0.5, Verdict::Negligible)),
            "negligible: +0.0% [-0.4, 0.5]"
        );
        let nc = |lo, hi| overhead(&o(0.1, lo, hi, Verdict::NoChange));
        assert_eq!(nc(-0.75, 0.71), "no difference detected: < 0.8%");
        assert_eq!(nc(-0.3, 0.8), "no difference detected: < 0.8%");
        assert_eq!(nc(-0.7, 0.3), "no difference detected: < 0.7%");
        assert_eq!(nc(-0.3, 0.81), "no difference detected: < 0.9%");
        assert_eq!(nc(-2.01, 1.0), "no difference detected: < 2.1%");
        assert_eq!(nc(0.0, 0.0), "no difference detected: < 0.1%");
        assert_eq!(nc(0.0, 100.0), "no difference detected: < 100.0%");
        assert_eq!(nc(f64::NAN, f64::NAN), "no difference detected");
    }

    #[test]
    fn no_change_bounds_round_up() {
        assert_eq!(no_change_bound(0.0, 0.0), Some(0.1));
        assert_eq!(no_change_bound(-0.7, 0.2), Some(0.7));
        assert_eq!(no_change_bound(-3.2, 8.07), Some(8.1));
        assert_eq!(no_change_bound(f64::NAN, 0.2), Some(0.2));
        assert_eq!(no_change_bound(f64::INFINITY, 0.2), None);
    }
}
