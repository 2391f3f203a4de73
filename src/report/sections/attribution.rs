//! Where each difference goes (`--profile`): per profiled comparison, a
//! table with one row per group of kernel functions, the total, then the
//! symbols with the largest deltas, each with baseline and treatment
//! ns/op, the delta (treatment - baseline, mean over the profiled pairs)
//! with its 95% interval, and its share of the whole delta. The baseline
//! and treatment columns are means over the same pairs, so treatment minus
//! baseline is the delta shown. A delta whose interval contains 0 is
//! marked `~` (no difference detected, as everywhere). People see the ten
//! largest symbols; CSV carries every stored one. The suites also show
//! each profile in the shape their posts used, `perf diff`'s share of
//! samples before and after ([`shares`]).

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::{Align, Cell, Column, Markup, Table, Tone};
use crate::model::{Attribution, AttributionRow, Profile};

/// Symbol rows people see (CSV carries all stored).
pub const SYMBOLS_SHOWN: usize = 10;

/// A time per operation of a profile with its unit ("85.04 ns", "1.25 us",
/// "61.82 ms"): a command's figures are milliseconds, a syscall's
/// nanoseconds; "-" when not finite.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    match v.abs() {
        a if a >= 1e9 => format!("{:.3} s", v / 1e9),
        a if a >= 1e6 => format!("{:.2} ms", v / 1e6),
        a if a >= 1e3 => format!("{:.2} us", v / 1e3),
        _ => format!("{v:.2} ns"),
    }
}

fn signed(v: f64) -> String {
    if v.is_finite() && v >= 0.0 {
        format!("+{}", num(v))
    } else {
        num(v)
    }
}

/// What the numbers of an attribution are.
pub fn preamble(a: &Attribution) -> Vec<String> {
    let mut lines = vec![format!(
        "{} profiled pairs, {} at {} Hz per task, {} samples per half (median; min {}); \
         profiling slowed the workload by {:+.1}% (baseline {:+.1}%, treatment {:+.1}%).",
        a.pairs,
        a.clock,
        a.hz,
        a.samples.per_half_median,
        a.samples.per_half_min,
        a.profiling_slowdown_pct,
        a.baseline_slowdown_pct,
        a.treatment_slowdown_pct,
    )];
    lines.push(
        "time per operation = share of the half's samples x the half's time per operation, \
         mean over pairs, so delta = treatment - baseline [95% CI]; groups count call chains \
         inclusively, symbols their own time; ~ = no difference detected (the interval \
         contains 0)."
            .to_string(),
    );
    lines.extend(a.notes.iter().map(|n| format!("note: {n}")));
    lines
}

/// What the numbers of a single configuration's profile are.
pub fn profile_preamble(p: &Profile) -> Vec<String> {
    let mut lines = vec![format!(
        "{} profiled measurements, {} at {} Hz per task, {} samples per measurement (median; \
         min {}); profiling slowed the workload by {:+.1}%.",
        p.measurements,
        p.clock,
        p.hz,
        p.samples.per_half_median,
        p.samples.per_half_min,
        p.profiling_slowdown_pct
    )];
    lines.push(
        "per op = share of the measurement's samples x its time per operation, mean over \
         measurements [95% CI]; groups count call chains inclusively, symbols their own time."
            .to_string(),
    );
    lines.extend(p.notes.iter().map(|n| format!("note: {n}")));
    lines
}

/// Worse for a delta that adds time, better for one that saves it, plain
/// within noise.
fn tone(r: &AttributionRow) -> Tone {
    match (r.within_noise, r.delta_ns_per_op.estimate > 0.0) {
        (true, _) => Tone::Plain,
        (false, true) => Tone::Worse,
        (false, false) => Tone::Better,
    }
}

fn row(comparison: &str, kind: &str, r: &AttributionRow) -> Vec<Cell> {
    let name = match kind {
        "symbol" if !r.group.is_empty() => format!("{} ({})", r.name, r.group),
        _ => r.name.clone(),
    };
    let d = &r.delta_ns_per_op;
    let ci = if d.ci_low.is_finite() && d.ci_high.is_finite() {
        format!("[{}, {}]", signed(d.ci_low), signed(d.ci_high))
    } else {
        "-".to_string()
    };
    let mark = if r.within_noise { " ~" } else { "" };
    let tone = tone(r);
    vec![
        Cell::text(comparison),
        Cell::values(
            name,
            vec![kind.into(), r.name.clone().into(), r.group.clone().into()],
        ),
        Cell::value(num(r.baseline_ns_per_op), r.baseline_ns_per_op),
        Cell::value(num(r.treatment_ns_per_op), r.treatment_ns_per_op),
        Cell::value(format!("{}{mark}", signed(d.estimate)), d.estimate).tone(tone),
        Cell::values(ci, vec![d.ci_low.into(), d.ci_high.into()]),
        Cell::value(
            if r.share_of_delta_pct.is_finite() {
                format!("{:.0}%", r.share_of_delta_pct)
            } else {
                "-".to_string()
            },
            r.share_of_delta_pct,
        ),
        Cell::value("", r.baseline_share_pct),
        Cell::value("", r.treatment_share_pct),
        Cell::value("", r.within_noise),
    ]
}

/// The table of one attribution: groups, the total, then the symbols.
pub fn table(what: &str, a: &Attribution) -> Table {
    let mut t = Table::new(
        "attribution",
        vec![
            Column::data("comparison"),
            Column::with_fields("where", Align::Left, &["kind", "name", "group"]),
            Column::new("baseline per op", Align::Right, "baseline_ns_per_op"),
            Column::new("treatment per op", Align::Right, "treatment_ns_per_op"),
            Column::new("delta per op", Align::Right, "delta_ns_per_op"),
            Column::with_fields("95% CI", Align::Right, &["delta_ci_low", "delta_ci_high"])
                .wrapping(),
            Column::new("of delta", Align::Right, "share_of_delta_pct"),
            Column::data("baseline_share_pct"),
            Column::data("treatment_share_pct"),
            Column::data("within_noise"),
        ],
    );
    for g in &a.groups {
        t.row(row(what, "group", g));
    }
    t.row(row(what, "total", &a.total));
    t.divider(Some("largest deltas by symbol (self time)"));
    for (i, s) in a.symbols.iter().enumerate() {
        if i < SYMBOLS_SHOWN {
            t.row(row(what, "symbol", s));
        } else {
            t.data_row(row(what, "symbol", s));
        }
    }
    t
}

/// The shape profiles are posted in (`perf diff`): each symbol's share of
/// the samples before and after, with the delta in ns/op beside it.
/// People see the largest ten; CSV carries every stored symbol.
pub fn shares(what: &str, a: &Attribution) -> Table {
    let mut t = Table::new(
        "shares",
        vec![
            Column::data("comparison"),
            Column::new("symbol", Align::Left, "symbol"),
            Column::data("group"),
            Column::new("before", Align::Right, "baseline_share_pct"),
            Column::new("after", Align::Right, "treatment_share_pct"),
            Column::new("delta ns/op", Align::Right, "delta_ns_per_op"),
        ],
    );
    let pct = |x: f64| {
        if x.is_finite() {
            format!("{x:.2}%")
        } else {
            "-".to_string()
        }
    };
    for (i, r) in a.symbols.iter().enumerate() {
        let d = r.delta_ns_per_op.estimate;
        let mark = if r.within_noise { " ~" } else { "" };
        let cells = vec![
            Cell::text(what),
            Cell::text(r.name.as_str()),
            Cell::text(r.group.as_str()),
            Cell::value(pct(r.baseline_share_pct), r.baseline_share_pct),
            Cell::value(pct(r.treatment_share_pct), r.treatment_share_pct),
            Cell::value(format!("{}{mark}", signed(d)), d).tone(tone(r)),
        ];
        if i < SYMBOLS_SHOWN {
            t.row(cells);
        } else {
            t.data_row(cells);
        }
    }
    t
}

pub fn attributions(doc: &RunDoc, m: &mut dyn Markup) {
    for c in &doc.comparisons {
        let Some(a) = &c.attribution else { continue };
        let what = label::comparison(c);
        m.heading(&format!("Where the time goes: {what}"));
        for line in preamble(a) {
            m.text(&line);
        }
        if !a.groups.is_empty() {
            m.table(&table(&what, a));
        }
    }
}
