//! A run's A/B comparisons: the forest plot of every overhead with its
//! interval and verdict, the table of figures under it (with the negative
//! control and what the survey skipped), then each comparison's pairs in
//! measurement order.

use anyhow::Result;

use super::Doc;
use super::blocks::{anchor, para};
use super::plots::{forest, pairs};
use crate::model::Comparison;
use crate::report::doc::RunDoc;

/// The noise band the run's verdicts used (`--noise`), 1% when the run's
/// parameters do not say.
pub fn noise_pct(run: &RunDoc) -> f64 {
    run.settings()
        .decision
        .map(|d| d.noise_pct)
        .filter(|v| v.is_finite() && *v >= 0.0)
        .unwrap_or(1.0)
}

/// What a run's forest plot draws as bars: its comparisons' intervals at
/// the level the verdicts were decided at, as the table shows them ("98.2%
/// interval"; "95% interval" when each is its own).
pub fn bar_interval(run: &RunDoc) -> String {
    let level = run
        .comparisons
        .iter()
        .find_map(|c| c.ci_alpha)
        .map_or_else(|| "95%".to_string(), crate::report::number::level_label);
    format!("{level} interval")
}

pub fn section(doc: &mut Doc, r: &RunDoc) -> Result<()> {
    let run = r;
    if run.comparisons.is_empty() {
        return Ok(());
    }
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "overhead"]),
        "overhead",
        &format!("{}: overhead of each comparison", run.name()),
    );
    let noise = noise_pct(run);
    let rows: Vec<forest::Row> = run
        .comparisons
        .iter()
        .map(|c| {
            let o = &c.overhead_pct;
            // An unfinished comparison: its estimate so far, its interval
            // only where it has one, and no verdict (drawn as no change).
            let bounded = !c.unfinished || crate::report::number::bounded(o.ci_low, o.ci_high);
            forest::Row {
                label: if c.unfinished {
                    format!("{} (unfinished)", crate::report::label::comparison(c))
                } else {
                    crate::report::label::comparison(c)
                },
                estimate_pct: o.estimate,
                ci_low_pct: if bounded { o.ci_low } else { f64::NAN },
                ci_high_pct: if bounded { o.ci_high } else { f64::NAN },
                verdict: if c.unfinished {
                    crate::stats::decision::Verdict::NoChange
                } else {
                    o.verdict
                },
            }
        })
        .collect();
    let interval = bar_interval(run);
    let unit = run.metric().per_op_short();
    let up = crate::report::number::change_words(run.metric()).0;
    let either = crate::report::number::either_way(run.metric());
    let svg = forest::draw(
        &format!("Overhead, {}", run.name()),
        &rows,
        noise,
        unit,
        &interval,
    )?;
    doc.plot(
        "forest",
        &svg,
        &format!(
            "Dot: overhead = exp(median over pairs of ln(treatment/baseline)) - 1, in % of the \
             baseline's {unit} (positive: {up} with the mechanism); bar: its {interval}, \
             the one its verdict was decided on (as in the table below); shaded: the \
             ±{noise}% noise band, inside which nothing is called {either}; colour: \
             the verdict ({}).",
            crate::report::sections::verdict_method(run)
        ),
    );
    doc.push(&crate::report::html::writer::table(
        &crate::report::sections::comparisons_table(run),
    ));
    let failed = r.negative_control.as_ref().is_some_and(|c| !c.passed);
    for line in crate::report::sections::control::lines(r) {
        let class = if failed { "note failed" } else { "note" };
        doc.push(&para(class, &format!("Negative control: {line}")));
    }
    for s in run.settings().skipped {
        doc.push(&para(
            "note",
            &format!("Skipped {}: {}", s.mechanism, s.reason),
        ));
    }
    doc.close();
    Ok(())
}

/// Each comparison's pairs, in measurement order, as small charts.
pub fn pairs_section(doc: &mut Doc, run: &RunDoc) -> Result<()> {
    let with_pairs: Vec<&Comparison> = run
        .comparisons
        .iter()
        .filter(|c| !c.pair_data.is_empty())
        .collect();
    if with_pairs.is_empty() {
        return Ok(());
    }
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "pairs"]),
        "pairs",
        &format!("{}: pairs in measurement order", run.name()),
    );
    doc.push(&para(
        "",
        "Each pair measured both arms with fresh tasks, in an order a seeded coin chose: \
         AB (baseline first, dots) or BA (treatment first, triangles, shaded); each point \
         is the median of one half's samples. A drift \
         over the run shows as a trend in both lines; an order effect as BA pairs that \
         differ from AB ones.",
    ));
    doc.push("<div class=\"grid\">\n");
    for c in with_pairs {
        let mut data = c.pair_data.clone();
        data.sort_by_key(|p| p.index);
        let pairs: Vec<pairs::Pair> = data
            .iter()
            .map(|p| pairs::Pair {
                ba: p.order == "BA",
                baseline_per_op: p.baseline_per_op,
                treatment_per_op: p.treatment_per_op,
            })
            .collect();
        let label = crate::report::label::comparison(c);
        let metric = c.measure.metric().unwrap_or(run.metric());
        let svg = pairs::draw(&label, &pairs, metric)?;
        let ba = pairs.iter().filter(|p| p.ba).count();
        doc.plot(
            "pairs",
            &svg,
            &format!(
                "{label}: {} pairs ({} AB, {ba} BA); overhead {}.",
                pairs.len(),
                pairs.len() - ba,
                crate::report::number::comparison_overhead(c)
            ),
        );
    }
    doc.push("</div>\n");
    doc.close();
    Ok(())
}
