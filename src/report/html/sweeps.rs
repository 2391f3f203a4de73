//! Parameter sweeps (run notes named "sweep"): each pair's added ns/op
//! against the swept value, the fitted line `intercept + slope x value`
//! with its 95% band, a table of the coefficients, and whether a straight
//! line fits (the lack-of-fit test).
//!
//! The band is the 95% band of the mean response, t * s * sqrt(1/n +
//! (x - mean x)^2 / Sxx). It needs no t quantile: the slope's stored
//! interval has half-width t * s / sqrt(Sxx), so the band's half-width is
//! that times sqrt(Sxx / n + (x - mean x)^2), with n, mean x and Sxx from
//! the sweep's own pairs. When the pairs stored do not match the fit (a
//! different count), the page falls back to the envelope of the lines
//! through the corners of the two coefficient intervals, which is wider,
//! and says so.

use anyhow::Result;

use super::Doc;
use super::blocks::{Cell, anchor, para, table};
use super::plots::sweep::{SweepChart, draw};
use crate::model::{LineFit, Sweep};
use crate::report::doc::RunDoc;
use crate::report::number::sig4;

/// Points of the band drawn across the swept range.
const BAND_STEPS: usize = 48;

/// The band around the fitted line and what it is; empty when the fit's
/// intervals are not finite.
pub fn band(sweep: &Sweep, fit: &LineFit) -> (Vec<(f64, f64, f64)>, &'static str) {
    let xs: Vec<f64> = sweep
        .points
        .iter()
        .flat_map(|p| {
            p.delta_ns_per_op
                .iter()
                .filter(|d| d.is_finite())
                .map(move |_| p.value)
        })
        .collect();
    let (Some(lo), Some(hi)) = (
        xs.iter().copied().reduce(f64::min),
        xs.iter().copied().reduce(f64::max),
    ) else {
        return (vec![], "");
    };
    let grid: Vec<f64> = (0..=BAND_STEPS)
        .map(|i| lo + (hi - lo) * i as f64 / BAND_STEPS as f64)
        .collect();
    let (a, b) = (fit.intercept.estimate, fit.slope.estimate);
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sxx: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
    let half_slope = (fit.slope.ci_high - fit.slope.ci_low) / 2.0;
    if xs.len() == fit.n && xs.len() > 2 && sxx > 0.0 && half_slope.is_finite() {
        let band = grid
            .iter()
            .map(|&x| {
                let y = a + b * x;
                let h = half_slope * (sxx / n + (x - mean).powi(2)).sqrt();
                (x, y - h, y + h)
            })
            .collect();
        return (band, "95% band of the mean");
    }
    let (i, s) = (&fit.intercept, &fit.slope);
    if ![i.ci_low, i.ci_high, s.ci_low, s.ci_high]
        .iter()
        .all(|v| v.is_finite())
    {
        return (vec![], "");
    }
    let band = grid
        .iter()
        .map(|&x| {
            let corners = [
                i.ci_low + s.ci_low * x,
                i.ci_low + s.ci_high * x,
                i.ci_high + s.ci_low * x,
                i.ci_high + s.ci_high * x,
            ];
            let lo = corners.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = corners.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (x, lo, hi)
        })
        .collect();
    (band, "95% envelope of the coefficient intervals")
}

pub fn section(doc: &mut Doc, run: &RunDoc, sweeps: &[Sweep]) -> Result<()> {
    if sweeps.is_empty() {
        return Ok(());
    }
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "sweeps"]),
        "sweeps",
        &format!("{}: parameter sweeps", run.name()),
    );
    for s in sweeps {
        one(doc, s)?;
    }
    doc.close();
    Ok(())
}

fn one(doc: &mut Doc, s: &Sweep) -> Result<()> {
    let (band_points, band_name) = match &s.fit {
        Some(f) => band(s, f),
        None => (vec![], ""),
    };
    let chart = SweepChart {
        title: format!("{}: sweep of {}", s.label, s.key),
        x_desc: s.key.clone(),
        pairs: s
            .points
            .iter()
            .flat_map(|p| p.delta_ns_per_op.iter().map(move |d| (p.value, *d)))
            .collect(),
        line: s
            .fit
            .as_ref()
            .map(|f| (f.intercept.estimate, f.slope.estimate))
            .filter(|(a, b)| a.is_finite() && b.is_finite()),
        band: band_points,
        band_name: band_name.to_string(),
    };
    let svg = draw(&chart)?;
    let caption = match &s.fit {
        Some(f) => format!(
            "{}. Dots: one pair each (treatment minus baseline ns/op); line: least squares \
             over all {} pairs; shaded: {band_name}. {}",
            s.model,
            f.n,
            straightness(f)
        ),
        None => format!(
            "{}. Dots: one pair each. No line: fewer than two distinct values could be fitted.",
            s.model
        ),
    };
    doc.plot("sweep", &svg, &caption);
    if let Some(f) = &s.fit {
        doc.push(&coefficients(s, f));
    }
    doc.push(&points_table(s));
    Ok(())
}

fn straightness(f: &LineFit) -> String {
    match (f.lack_of_fit_p, f.straight) {
        (Some(p), true) => format!("A straight line fits (lack-of-fit p = {}).", sig4(p)),
        (Some(p), false) => format!(
            "A straight line does not fit (lack-of-fit p = {}): read the slope as an \
             average, not a per-unit cost.",
            sig4(p)
        ),
        (None, _) => "Lack of fit not tested (fewer than three values).".into(),
    }
}

fn coefficients(s: &Sweep, f: &LineFit) -> String {
    let est = |name: &str, e: &crate::model::Estimate, unit: &str| {
        vec![
            Cell::Text(name.to_string()),
            Cell::Num(sig4(e.estimate)),
            Cell::Num(format!("[{}, {}]", sig4(e.ci_low), sig4(e.ci_high))),
            Cell::Text(unit.to_string()),
        ]
    };
    let mut rows = vec![
        est(&s.intercept_name, &f.intercept, "ns/op"),
        est(
            &s.slope_name,
            &f.slope,
            &format!("ns/op per unit of {}", s.key),
        ),
    ];
    let fact = |k: &str, v: String| {
        vec![
            Cell::Text(k.to_string()),
            Cell::Num(v),
            Cell::Text(String::new()),
            Cell::Text(String::new()),
        ]
    };
    rows.push(fact("pairs fitted", f.n.to_string()));
    rows.push(fact("R²", format!("{:.3}", f.r_squared)));
    rows.push(fact("residual sd, ns/op", sig4(f.residual_sd)));
    rows.push(fact(
        "lack-of-fit p",
        f.lack_of_fit_p.map_or("-".into(), sig4),
    ));
    rows.push(fact(
        "straight line fits",
        if f.straight { "yes" } else { "no" }.into(),
    ));
    table(
        "coefficients",
        &["coefficient", "estimate", "95% interval", "unit"],
        &rows,
    )
}

fn points_table(s: &Sweep) -> String {
    if s.points.is_empty() {
        return para("note", "The sweep has no points.");
    }
    crate::report::html::writer::table(&crate::report::sections::sweeps::table(s))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{Estimate, SweepPoint};

    pub(crate) fn sweep() -> Sweep {
        // y = 10 + 5x exactly at x = 1, 2, 4 with +-1 scatter.
        let points = [1.0, 2.0, 4.0]
            .iter()
            .map(|&x| SweepPoint {
                value: x,
                comparison: format!("seccomp:args,filters={x}"),
                delta_ns_per_op: vec![10.0 + 5.0 * x - 1.0, 10.0 + 5.0 * x + 1.0],
                overhead_pct: 3.0 * x,
                baseline_ns_per_op: 300.0,
                overhead_ci_pct: Some([3.0 * x - 1.0, 3.0 * x + 1.0]),
            })
            .collect();
        Sweep {
            key: "filters".into(),
            label: "seccomp:args on getppid tasks=1".into(),
            model: "ns/op added = entry cost + cost per filter x filters".into(),
            intercept_name: "entry cost".into(),
            slope_name: "per filter".into(),
            points,
            fit: None,
        }
    }

    /// The least-squares fit of `s` as secperf stores it (t with n - 2 df).
    pub(crate) fn fitted(mut s: Sweep, t: f64) -> Sweep {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .flat_map(|p| p.delta_ns_per_op.iter().map(move |d| (p.value, *d)))
            .collect();
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let b = sxy / sxx;
        let a = my - b * mx;
        let sse: f64 = pts.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
        let sd = (sse / (n - 2.0)).sqrt();
        let se_b = sd / sxx.sqrt();
        let se_a = sd * (1.0 / n + mx * mx / sxx).sqrt();
        s.fit = Some(LineFit {
            intercept: Estimate {
                estimate: a,
                ci_low: a - t * se_a,
                ci_high: a + t * se_a,
            },
            slope: Estimate {
                estimate: b,
                ci_low: b - t * se_b,
                ci_high: b + t * se_b,
            },
            n: pts.len(),
            r_squared: 0.99,
            residual_sd: sd,
            lack_of_fit_p: Some(0.9),
            straight: true,
        });
        s
    }

    #[test]
    fn mean_band_meets_the_intercept_interval_at_zero_and_is_narrowest_at_the_mean() {
        let t = 2.776; // t(0.975, 4 df)
        let mut s = fitted(sweep(), t);
        // Put x = 0 in the range so the band's end is the intercept's interval.
        s.points[0].value = 0.0;
        let s = fitted(s, t);
        let f = s.fit.clone().unwrap();
        let (b, name) = band(&s, &f);
        assert_eq!(name, "95% band of the mean");
        let (x0, lo0, hi0) = b[0];
        assert_eq!(x0, 0.0);
        assert!(
            (lo0 - f.intercept.ci_low).abs() < 1e-9,
            "{lo0} vs {:?}",
            f.intercept
        );
        assert!((hi0 - f.intercept.ci_high).abs() < 1e-9);
        let widths: Vec<f64> = b.iter().map(|p| p.2 - p.1).collect();
        let narrowest = widths
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0;
        let mean_x = 6.0 / 3.0;
        assert!((b[narrowest].0 - mean_x).abs() <= 4.0 / BAND_STEPS as f64 + 1e-9);
    }

    #[test]
    fn falls_back_to_the_coefficient_envelope_when_pairs_do_not_match() {
        let mut s = fitted(sweep(), 2.776);
        s.fit.as_mut().unwrap().n += 1;
        let f = s.fit.clone().unwrap();
        let (b, name) = band(&s, &f);
        assert_eq!(name, "95% envelope of the coefficient intervals");
        assert!(
            b.iter()
                .all(|p| p.1 <= f.intercept.estimate + f.slope.estimate * p.0)
        );
        assert!(
            b.iter()
                .all(|p| p.2 >= f.intercept.estimate + f.slope.estimate * p.0)
        );
    }
}
