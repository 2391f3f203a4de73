//! Parameter sweeps as text: per sweep, one row per value (the
//! comparison's overhead and the mean ns/op it added with a 95% interval
//! over pairs), then the fitted line's coefficients with their intervals
//! and whether a straight line fits.

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
        assert!(table(&[s]).contains("does NOT fit"));
        assert_eq!(table(&[]), "");
    }
}
