//! Parameter sweeps in every text format: per sweep, one row per value
//! (the comparison's overhead and the mean ns/op it added with a 95%
//! interval over pairs), then the fitted line's coefficients with their
//! intervals and whether a straight line fits. `email` stays within 72
//! ASCII columns; `csv` is a block of its own with its own header; `json`
//! is the serde form inside the report.

use crate::model::Sweep;
use crate::report::number::p_short;
use crate::report::table::new_table;

/// A signed ns/op difference: "+20.4 ns".
fn delta(x: f64) -> String {
    let sign = if x >= 0.0 { "+" } else { "-" };
    format!("{sign}{}", crate::report::number::ns(x.abs()))
}

/// The terminal rendering of every sweep; empty without any.
pub fn table(sweeps: &[Sweep]) -> String {
    let mut out = String::new();
    for s in sweeps {
        out.push_str(&format!("Sweep of {} for {}:\n", s.key, s.label));
        let mut t = new_table(&[&s.key, "comparison", "overhead", "added per op [95% CI]"]);
        for p in &s.points {
            let m = crate::stats::mean_ci(&p.delta_ns_per_op);
            t.add_row(vec![
                format!("{}", p.value),
                p.comparison.clone(),
                format!("{:+.1}%", p.overhead_pct),
                format!(
                    "{} [{}, {}]",
                    delta(m.estimate),
                    delta(m.ci_low),
                    delta(m.ci_high)
                ),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
        match &s.fit {
            None => out.push_str("  no line fitted (too few pairs or values)\n"),
            Some(f) => {
                out.push_str(&format!("  model: {}\n", s.model));
                for (name, e) in [(&s.intercept_name, &f.intercept), (&s.slope_name, &f.slope)] {
                    out.push_str(&format!(
                        "  {name}: {} [{}, {}]\n",
                        delta(e.estimate),
                        delta(e.ci_low),
                        delta(e.ci_high)
                    ));
                }
                let fits = match f.lack_of_fit_p {
                    None => "not tested (needs three values and several pairs each)".to_string(),
                    Some(p) if f.straight => {
                        format!("a straight line fits (lack of fit {})", p_short(p))
                    }
                    Some(p) => format!(
                        "a straight line does NOT fit (lack of fit {}): the cost does not grow \
                         linearly in {}; read the slope as an average over the values swept",
                        p_short(p),
                        s.key
                    ),
                };
                out.push_str(&format!(
                    "  {} pairs, R^2 {:.3}, residual sd {}; {fits}\n",
                    f.n,
                    f.r_squared,
                    crate::report::number::ns(f.residual_sd)
                ));
            }
        }
        out.push('\n');
    }
    out
}

/// The verdict on the line, one sentence.
fn fit_sentence(s: &Sweep) -> String {
    match &s.fit {
        None => "No line fitted (too few pairs or values).".to_string(),
        Some(f) => {
            let verdict = match f.lack_of_fit_p {
                None => "not tested for lack of fit".to_string(),
                Some(p) if f.straight => {
                    format!("a straight line fits (lack of fit {})", p_short(p))
                }
                Some(p) => format!("a straight line does NOT fit (lack of fit {})", p_short(p)),
            };
            format!("{} pairs, R^2 {:.3}; {verdict}.", f.n, f.r_squared)
        }
    }
}

/// The coefficient lines: "entry cost: +37.2 ns [+25.1 ns, +49.3 ns]".
fn coefficient_lines(s: &Sweep) -> Vec<String> {
    let Some(f) = &s.fit else {
        return Vec::new();
    };
    [(&s.intercept_name, &f.intercept), (&s.slope_name, &f.slope)]
        .iter()
        .map(|(name, e)| {
            format!(
                "{name}: {} [{}, {}]",
                delta(e.estimate),
                delta(e.ci_low),
                delta(e.ci_high)
            )
        })
        .collect()
}

/// Mailing-list text, 72 ASCII columns.
pub fn email(sweeps: &[Sweep]) -> String {
    let mut out = String::new();
    for s in sweeps {
        out.push('\n');
        let title = format!("Sweep of {} for {}", s.key, s.label);
        for line in super::wrap(&super::ascii(&title), 72, "", "  ") {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&format!(
            "{:>10}  {:>9}  {:>28}\n",
            s.key.chars().take(10).collect::<String>(),
            "overhead",
            "added per op [95% CI]"
        ));
        for p in &s.points {
            let m = crate::stats::mean_ci(&p.delta_ns_per_op);
            out.push_str(&format!(
                "{:>10}  {:>9}  {:>28}\n",
                p.value,
                format!("{:+.1}%", p.overhead_pct),
                format!(
                    "{} [{}, {}]",
                    delta(m.estimate),
                    delta(m.ci_low),
                    delta(m.ci_high)
                )
            ));
        }
        for line in std::iter::once(s.model.clone())
            .chain(coefficient_lines(s))
            .chain([fit_sentence(s)])
        {
            for l in super::wrap(&super::ascii(&line), 72, "", "  ") {
                out.push_str(&l);
                out.push('\n');
            }
        }
    }
    out
}

/// GitHub-flavoured markdown.
pub fn markdown(sweeps: &[Sweep]) -> String {
    let mut out = String::new();
    for s in sweeps {
        out.push_str(&format!("\n#### Sweep of `{}` for {}\n\n", s.key, s.label));
        out.push_str(&format!(
            "| {} | comparison | overhead | added per op [95% CI] |\n",
            s.key
        ));
        out.push_str("|---:|---|---:|---:|\n");
        for p in &s.points {
            let m = crate::stats::mean_ci(&p.delta_ns_per_op);
            out.push_str(&format!(
                "| {} | `{}` | {:+.1}% | {} [{}, {}] |\n",
                p.value,
                p.comparison.replace('|', "\\|"),
                p.overhead_pct,
                delta(m.estimate),
                delta(m.ci_low),
                delta(m.ci_high)
            ));
        }
        out.push_str(&format!("\n{}\n\n", s.model));
        for line in coefficient_lines(s) {
            out.push_str(&format!("- {line}\n"));
        }
        out.push_str(&format!("\n{}\n", fit_sentence(s)));
    }
    out
}

/// The csv block's header: one line per point, then one per coefficient.
pub const CSV_HEADER: &str = "sweep_key,sweep_label,row,value,comparison,overhead_pct,ns_per_op_added,ci_low,ci_high,lack_of_fit_p,straight";

/// CSV: a block of its own after the report's, with its own header.
pub fn csv(sweeps: &[Sweep]) -> String {
    if sweeps.is_empty() {
        return String::new();
    }
    let n = |x: f64| {
        if x.is_finite() {
            x.to_string()
        } else {
            String::new()
        }
    };
    let field = |s: &str| crate::store::export::csv_field(s).into_owned();
    let mut out = format!("\n{CSV_HEADER}\n");
    for s in sweeps {
        for p in &s.points {
            let m = crate::stats::mean_ci(&p.delta_ns_per_op);
            let row = [
                field(&s.key),
                field(&s.label),
                "point".to_string(),
                n(p.value),
                field(&p.comparison),
                n(p.overhead_pct),
                n(m.estimate),
                n(m.ci_low),
                n(m.ci_high),
                String::new(),
                String::new(),
            ];
            out.push_str(&row.join(","));
            out.push('\n');
        }
        if let Some(f) = &s.fit {
            for (name, e) in [(&s.intercept_name, &f.intercept), (&s.slope_name, &f.slope)] {
                let row = [
                    field(&s.key),
                    field(&s.label),
                    field(name),
                    String::new(),
                    String::new(),
                    String::new(),
                    n(e.estimate),
                    n(e.ci_low),
                    n(e.ci_high),
                    f.lack_of_fit_p.map(n).unwrap_or_default(),
                    f.straight.to_string(),
                ];
                out.push_str(&row.join(","));
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Estimate, LineFit, SweepPoint};

    fn est(v: f64) -> Estimate {
        Estimate {
            estimate: v,
            ci_low: v - 1.0,
            ci_high: v + 1.0,
        }
    }

    #[test]
    fn shows_points_coefficients_and_the_fit_verdict() {
        let mut s = Sweep {
            key: "filters".into(),
            label: "seccomp:args on getppid tasks=1".into(),
            model: "ns/op added = entry cost + cost per filter x filters".into(),
            intercept_name: "entry cost".into(),
            slope_name: "cost per filter".into(),
            points: vec![SweepPoint {
                value: 4.0,
                comparison: "seccomp:args,filters=4".into(),
                delta_ns_per_op: vec![99.0, 101.0, 100.0],
                overhead_pct: 34.4,
            }],
            fit: Some(LineFit {
                intercept: est(21.5),
                slope: est(19.9),
                n: 48,
                r_squared: 0.98,
                residual_sd: 4.2,
                lack_of_fit_p: Some(0.4),
                straight: true,
            }),
        };
        let t = table(std::slice::from_ref(&s));
        for want in [
            "Sweep of filters for seccomp:args on getppid tasks=1",
            "seccomp:args,filters=4",
            "+34.4%",
            "+100.0 ns [",
            "entry cost: +21.5 ns [+20.5 ns, +22.5 ns]",
            "cost per filter: +19.9 ns",
            "a straight line fits",
        ] {
            assert!(t.contains(want), "missing {want:?} in\n{t}");
        }
        s.fit.as_mut().unwrap().straight = false;
        s.fit.as_mut().unwrap().lack_of_fit_p = Some(0.001);
        assert!(table(std::slice::from_ref(&s)).contains("does NOT fit"));
        assert_eq!(table(&[]), "");
        let mail = email(std::slice::from_ref(&s));
        assert!(
            mail.lines().all(|l| l.len() <= 72 && l.is_ascii()),
            "{mail}"
        );
        assert!(mail.contains("entry cost: +21.5 ns"), "{mail}");
        let md = markdown(std::slice::from_ref(&s));
        assert!(
            md.contains("| 4 | `seccomp:args,filters=4` | +34.4% |"),
            "{md}"
        );
        let c = csv(std::slice::from_ref(&s));
        let lines: Vec<&str> = c.trim().lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), 1 + 1 + 2, "{c}");
        // A comparison label with a comma is quoted.
        assert!(lines[1].contains(",\"seccomp:args,filters=4\","), "{c}");
        assert!(lines[3].starts_with("filters,seccomp:args on getppid tasks=1,cost per filter,"));
        assert_eq!(csv(&[]), "");
    }
}
