//! Where the time goes, for profiled runs: per profiled comparison the
//! ns/op of each group of kernel functions in both arms as stacked bars,
//! the table of groups and top symbols with each delta's interval, and a
//! differential flame graph; per profiled `run` result, its groups and an
//! ordinary flame graph.

use anyhow::Result;

use super::Doc;
use super::blocks::{Cell, anchor, para, table};
use super::flame::{self, Arm};
use super::plots::bars::{self, Bar};
use super::plots::group_color;
use crate::model::{AttributionRow, Comparison, ProfileRow};
use crate::report::doc::RunDoc;
use crate::report::number::sig4;
use crate::report::sections::attribution::{SYMBOLS_SHOWN, preamble};

pub fn section(doc: &mut Doc, run: &RunDoc) -> Result<()> {
    let profiled: Vec<&Comparison> = run
        .comparisons
        .iter()
        .filter(|c| c.attribution.is_some())
        .collect();
    if profiled.is_empty() {
        return Ok(());
    }
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "attribution"]),
        "attribution",
        &format!("{}: where the difference goes", run.name()),
    );
    for c in profiled {
        one(doc, c)?;
    }
    doc.close();
    Ok(())
}

fn one(doc: &mut Doc, c: &Comparison) -> Result<()> {
    let Some(a) = &c.attribution else {
        return Ok(());
    };
    let label = crate::report::label::comparison(c);
    doc.push(&format!("<h4>{}</h4>\n", super::escape::esc(&label)));
    for line in preamble(a) {
        match line.strip_prefix("note: ") {
            Some(note) => doc.push(&para("note", note)),
            None => doc.push(&para("", &line)),
        }
    }
    if !a.groups.is_empty() {
        let segments: Vec<_> = a
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.name.clone(), group_color(&g.name, i)))
            .collect();
        let bar = |label: &str, f: fn(&AttributionRow) -> f64| Bar {
            label: label.to_string(),
            values_ns: a.groups.iter().map(f).collect(),
        };
        let svg = bars::draw(
            &format!("Where the time goes: {label}"),
            "time per operation by group of kernel functions",
            &segments,
            &[
                bar("baseline", |g| g.baseline_ns_per_op),
                bar("treatment", |g| g.treatment_ns_per_op),
            ],
        )?;
        doc.plot(
            "attribution-bars",
            &svg,
            "Each arm's ns/op split by group: a group's share of the profiled half's samples \
             x the half's ns/op, mean over the profiled pairs. The segment that grows is \
             where the mechanism's cost goes.",
        );
        doc.push(&rows_table(&label, a));
    }
    let base_ns = finite_or(a.total.baseline_ns_per_op, c.baseline_per_op);
    let treat_ns = finite_or(a.total.treatment_ns_per_op, c.treatment_per_op);
    let title = format!("Differential flame graph: {label}");
    match flame::differential(
        &title,
        Arm {
            folded: &a.folded[0],
            ns_per_op: base_ns,
        },
        Arm {
            folded: &a.folded[1],
            ns_per_op: treat_ns,
        },
    )? {
        Some(img) => doc.plot(
            "flame differential",
            &img,
            "Treatment against baseline, in ns/op: each arm's samples scaled to its ns/op. \
             Width: the treatment's time per operation in each call stack; colour: the \
             change (red: more time with the mechanism, blue: less; the deeper, the \
             larger). Code only the baseline ran is not drawn (see the table). Frame \
             names are cut to fit; the table above names the largest symbols.",
        ),
        None => doc.push(&para(
            "note",
            "No differential flame graph: the profiled halves left no call stacks.",
        )),
    }
    Ok(())
}

fn finite_or(v: f64, fallback: f64) -> f64 {
    if v.is_finite() && v > 0.0 {
        v
    } else {
        fallback
    }
}

fn rows_table(label: &str, a: &crate::model::Attribution) -> String {
    crate::report::html::writer::table(&crate::report::sections::attribution::table(label, a))
}

/// Profiled `run` results: groups and a flame graph each.
pub fn profiles_section(doc: &mut Doc, run: &RunDoc) -> Result<()> {
    let profiled: Vec<_> = run.results.iter().filter(|r| r.profile.is_some()).collect();
    if profiled.is_empty() {
        return Ok(());
    }
    let id = run.run_id.to_string();
    doc.open(
        3,
        &anchor(&["run", &id, "profiles"]),
        "profiles",
        &format!("{}: where the time goes", run.name()),
    );
    for r in profiled {
        let Some(p) = &r.profile else { continue };
        let label = format!(
            "{} tasks={} ({})",
            crate::report::label::workload(&r.workload, &r.params),
            r.tasks,
            r.mode
        );
        doc.push(&format!("<h4>{}</h4>\n", super::escape::esc(&label)));
        doc.push(&para(
            "",
            &format!(
                "{} profiled measurements, {} at {} Hz per task, {} samples (median {} per \
                 measurement); profiling slowed the workload by {:+.1}%.",
                p.measurements,
                p.clock,
                p.hz,
                p.samples.total,
                p.samples.per_half_median,
                p.profiling_slowdown_pct
            ),
        ));
        for n in &p.notes {
            doc.push(&para("note", n));
        }
        let mut rows: Vec<Vec<Cell>> = p.groups.iter().map(|g| profile_row("group", g)).collect();
        rows.push(profile_row("total", &p.total));
        rows.extend(
            p.symbols
                .iter()
                .take(SYMBOLS_SHOWN)
                .map(|s| profile_row("symbol", s)),
        );
        doc.push(&table(
            "profile",
            &["", "where", "ns/op", "95% CI", "share of samples"],
            &rows,
        ));
        let title = format!("Flame graph: {label}");
        match flame::flame(&title, &p.folded)? {
            Some(img) => doc.plot(
                "flame",
                &img,
                "Call stacks of the profiled measurements: width is the share of samples, \
                 the innermost function on top. Frame names are cut to fit; the table \
                 names the largest symbols.",
            ),
            None => doc.push(&para(
                "note",
                "No flame graph: the profiled measurements left no call stacks.",
            )),
        }
    }
    doc.close();
    Ok(())
}

fn profile_row(kind: &str, r: &ProfileRow) -> Vec<Cell> {
    let name = if kind == "symbol" && !r.group.is_empty() {
        format!("{} ({})", r.name, r.group)
    } else {
        r.name.clone()
    };
    let e = &r.ns_per_op;
    vec![
        Cell::Text(kind.to_string()),
        Cell::Text(name),
        Cell::Num(sig4(e.estimate)),
        Cell::Num(if e.ci_low.is_finite() && e.ci_high.is_finite() {
            format!("[{}, {}]", sig4(e.ci_low), sig4(e.ci_high))
        } else {
            "-".into()
        }),
        Cell::Num(format!("{:.1}%", r.share_pct)),
    ]
}
