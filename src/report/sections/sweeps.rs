//! Parameter sweeps (`--sweep`): per sweep, one row per value with its
//! baseline, the overhead with its interval, and the ns/op it added
//! (baseline x overhead, so the row adds up with the comparisons table);
//! then the straight line fitted by least squares to the per-pair
//! differences (treatment - baseline ns/op), each coefficient with its
//! 95% interval, and whether a straight line fits at all.

use super::super::doc::RunDoc;
use super::super::markup::{Align, Cell, Column, Markup, Table};
use super::super::number::{ns, p_short};
use crate::model::{Sweep, SweepPoint};

/// A signed ns/op difference: "+20.4 ns".
fn delta(x: f64) -> String {
    let sign = if x >= 0.0 { "+" } else { "-" };
    format!("{sign}{}", ns(x.abs()))
}

/// The ns/op a point added with its interval: baseline x overhead where
/// the baseline is stored, else (sweeps stored before it was) the mean
/// per-pair difference with its Student-t interval.
fn added(p: &SweepPoint) -> (f64, f64, f64) {
    match p.overhead_ci_pct {
        Some([lo, hi]) if p.baseline_ns_per_op.is_finite() => {
            let b = p.baseline_ns_per_op / 100.0;
            (b * p.overhead_pct, b * lo, b * hi)
        }
        _ => {
            let m = crate::stats::mean_ci(&p.delta_ns_per_op);
            (m.estimate, m.ci_low, m.ci_high)
        }
    }
}

/// The table of one sweep's points.
pub fn table(s: &Sweep) -> Table {
    let mut t = Table::new(
        "sweep",
        vec![
            Column::data("sweep"),
            Column::new(&s.key, Align::Right, "value"),
            Column::new("comparison", Align::Left, "comparison"),
            Column::new("baseline", Align::Right, "baseline_ns_per_op"),
            Column::with_fields(
                "overhead [95% CI]",
                Align::Right,
                &["overhead_pct", "ci_low_pct", "ci_high_pct"],
            )
            .wrapping(),
            Column::with_fields(
                "added per op [95% CI]",
                Align::Right,
                &["added_ns_per_op", "added_ci_low", "added_ci_high"],
            )
            .wrapping(),
        ],
    );
    for p in &s.points {
        let (a, lo, hi) = added(p);
        let overhead = match p.overhead_ci_pct {
            Some([l, h]) => format!("{:+.1}% [{l:.1}, {h:.1}]", p.overhead_pct),
            None => format!("{:+.1}%", p.overhead_pct),
        };
        let [ci_low, ci_high] = p.overhead_ci_pct.unwrap_or([f64::NAN; 2]);
        t.row(vec![
            Cell::text(format!("{} for {}", s.key, s.label)),
            Cell::value(p.value.to_string(), p.value),
            Cell::text(p.comparison.clone()),
            Cell::value(
                if p.baseline_ns_per_op.is_finite() {
                    ns(p.baseline_ns_per_op)
                } else {
                    "-".to_string()
                },
                p.baseline_ns_per_op,
            ),
            Cell::values(
                overhead,
                vec![p.overhead_pct.into(), ci_low.into(), ci_high.into()],
            ),
            Cell::values(
                format!("{} [{}, {}]", delta(a), delta(lo), delta(hi)),
                vec![a.into(), lo.into(), hi.into()],
            ),
        ]);
    }
    t.footer(
        "added per op = baseline x overhead, as in the comparisons above; the line below is \
         fitted to the per-pair differences (treatment - baseline ns/op), a separate estimate.",
    );
    t
}

/// The fitted line in words: the model, each coefficient, the fit.
fn fit_lines(s: &Sweep) -> Vec<String> {
    let Some(f) = &s.fit else {
        return vec!["no line fitted (too few pairs or values)".to_string()];
    };
    let mut lines = vec![format!("model: {}", s.model)];
    for (name, e) in [(&s.intercept_name, &f.intercept), (&s.slope_name, &f.slope)] {
        lines.push(format!(
            "{name}: {} [{}, {}]",
            delta(e.estimate),
            delta(e.ci_low),
            delta(e.ci_high)
        ));
    }
    let fits = match f.lack_of_fit_p {
        None => "not tested (needs three values and several pairs each)".to_string(),
        Some(p) if f.straight => format!("a straight line fits (lack of fit {})", p_short(p)),
        Some(p) => format!(
            "a straight line does NOT fit (lack of fit {}): the cost does not grow linearly in \
             {}; read the slope as an average over the values swept",
            p_short(p),
            s.key
        ),
    };
    lines.push(format!(
        "{} pairs, R^2 {:.3}, residual sd {}; {fits}",
        f.n,
        f.r_squared,
        ns(f.residual_sd)
    ));
    lines
}

pub fn sweeps(doc: &RunDoc, m: &mut dyn Markup) {
    for s in &doc.sweeps {
        m.heading(&format!("Sweep of {} for {}", s.key, s.label));
        m.table(&table(s));
        m.list(&fit_lines(s));
    }
}
