//! Where each difference goes (`--profile`), in every format: a table per
//! profiled comparison with one row per group of kernel functions, then
//! the symbols with the largest deltas, each with baseline and treatment
//! ns/op, the delta with its 95% interval over the profiled pairs, and its
//! share of the whole delta. A delta whose interval contains 0 is marked
//! `~` (within noise).
//!
//! `email` stays within 72 columns of ASCII; `csv` is a block of its own
//! (its own header) after the report's; `json` is the serde form inside
//! the report.

use comfy_table::{Cell as TCell, CellAlignment};

use crate::model::{Attribution, AttributionRow};
use crate::report::model::AttributionSection;

/// Symbol rows shown in the text formats (csv and json carry all stored).
pub const SYMBOLS_SHOWN: usize = 10;

/// What the numbers are, for the line above each table.
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
        "ns/op = share of the half's samples x the half's ns/op; delta = treatment - baseline, \
         mean over pairs [95% CI]; groups count call chains inclusively, symbols their own time; \
         ~ = within noise."
            .to_string(),
    );
    lines.extend(a.notes.iter().map(|n| format!("note: {n}")));
    lines
}

fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let a = v.abs();
    if a >= 1e5 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn signed(v: f64) -> String {
    if v.is_finite() && v >= 0.0 {
        format!("+{}", num(v))
    } else {
        num(v)
    }
}

fn ci(r: &AttributionRow) -> String {
    let d = &r.delta_ns_per_op;
    if d.ci_low.is_finite() && d.ci_high.is_finite() {
        format!("[{}, {}]", signed(d.ci_low), signed(d.ci_high))
    } else {
        "-".to_string()
    }
}

fn delta(r: &AttributionRow) -> String {
    let mark = if r.within_noise { "~" } else { "" };
    format!("{}{mark}", signed(r.delta_ns_per_op.estimate))
}

fn share(r: &AttributionRow) -> String {
    if r.share_of_delta_pct.is_finite() {
        format!("{:.0}%", r.share_of_delta_pct)
    } else {
        "-".to_string()
    }
}

/// The rows of one section, as the text formats show them: groups, the
/// total, then the top symbols.
fn shown(a: &Attribution) -> Vec<(&'static str, &AttributionRow)> {
    let mut rows: Vec<(&'static str, &AttributionRow)> =
        a.groups.iter().map(|r| ("group", r)).collect();
    rows.push(("total", &a.total));
    rows.extend(a.symbols.iter().take(SYMBOLS_SHOWN).map(|r| ("symbol", r)));
    rows
}

fn cells(kind: &str, r: &AttributionRow) -> Vec<String> {
    let name = match kind {
        "symbol" if !r.group.is_empty() => format!("{} ({})", r.name, r.group),
        _ => r.name.clone(),
    };
    vec![
        name,
        num(r.baseline_ns_per_op),
        num(r.treatment_ns_per_op),
        delta(r),
        ci(r),
        share(r),
    ]
}

const HEADER: [&str; 6] = [
    "where",
    "baseline ns/op",
    "treatment ns/op",
    "delta ns/op",
    "95% CI",
    "of delta",
];

/// Terminal tables (comfy-table).
pub fn table(sections: &[AttributionSection]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!("\nWhere the time goes: {}\n", s.comparison));
        for line in preamble(&s.attribution) {
            out.push_str(&line);
            out.push('\n');
        }
        if s.attribution.groups.is_empty() {
            continue;
        }
        let mut t = crate::report::table::new_table(&HEADER);
        for (kind, r) in shown(&s.attribution) {
            if kind == "symbol" && std::ptr::eq(r, &s.attribution.symbols[0]) {
                t.add_row(vec![TCell::new("largest deltas by symbol (self time):")]);
            }
            t.add_row(cells(kind, r));
        }
        for i in 1..=5 {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out
}

/// Terminal tables of `run --profile`: where each profiled result's time
/// goes; empty when none was profiled.
pub fn profiles(results: &[crate::model::WorkloadResult]) -> String {
    let mut out = String::new();
    for r in results {
        let Some(p) = &r.profile else { continue };
        out.push_str(&format!(
            "\nWhere the time goes: {} tasks={}\n",
            r.workload, r.tasks
        ));
        out.push_str(&format!(
            "{} profiled measurements, {} at {} Hz per task, {} samples per measurement \
             (median; min {}); profiling slowed the workload by {:+.1}%.\n",
            p.measurements,
            p.clock,
            p.hz,
            p.samples.per_half_median,
            p.samples.per_half_min,
            p.profiling_slowdown_pct
        ));
        out.push_str(
            "ns/op = share of the measurement's samples x its ns/op, mean over measurements \
             [95% CI]; groups count call chains inclusively, symbols their own time.\n",
        );
        for n in &p.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        if p.groups.is_empty() {
            continue;
        }
        let mut t = crate::report::table::new_table(&["where", "ns/op", "95% CI", "of samples"]);
        let ci = |e: &crate::model::Estimate| {
            if e.ci_low.is_finite() {
                format!("[{}, {}]", num(e.ci_low), num(e.ci_high))
            } else {
                "-".to_string()
            }
        };
        let mut add = |name: String, row: &crate::model::ProfileRow| {
            t.add_row(vec![
                name,
                num(row.ns_per_op.estimate),
                ci(&row.ns_per_op),
                format!("{:.1}%", row.share_pct),
            ]);
        };
        for g in &p.groups {
            add(g.name.clone(), g);
        }
        add("total".to_string(), &p.total);
        for s in p.symbols.iter().take(SYMBOLS_SHOWN) {
            add(format!("{} ({})", s.name, s.group), s);
        }
        for i in 1..=3 {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out
}

/// Cuts `s` to `width` characters, marking the cut with "..".
fn fit(s: &str, width: usize) -> String {
    let s = super::ascii(s);
    if s.chars().count() <= width {
        s
    } else {
        let cut: String = s.chars().take(width - 2).collect();
        format!("{cut}..")
    }
}

/// Mailing-list text: ASCII, at most 72 columns.
pub fn email(sections: &[AttributionSection]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push('\n');
        for line in super::wrap(
            &format!("Where the time goes: {}", s.comparison),
            72,
            "",
            "  ",
        ) {
            out.push_str(&line);
            out.push('\n');
        }
        for p in preamble(&s.attribution) {
            for line in super::wrap(&super::ascii(&p), 72, "", "") {
                out.push_str(&line);
                out.push('\n');
            }
        }
        if s.attribution.groups.is_empty() {
            continue;
        }
        out.push('\n');
        let line = |c: &[String]| {
            format!(
                "{:<24}{:>8}{:>8}{:>9} {:<17}{:>5}",
                fit(&c[0], 24),
                c[1],
                c[2],
                c[3],
                c[4],
                c[5]
            )
            .trim_end()
            .to_string()
        };
        out.push_str(&line(&[
            "ns/op".into(),
            "base".into(),
            "treat".into(),
            "delta".into(),
            "95% CI".into(),
            "share".into(),
        ]));
        out.push('\n');
        for (kind, r) in shown(&s.attribution) {
            if kind == "symbol" && std::ptr::eq(r, &s.attribution.symbols[0]) {
                out.push_str("symbols (self time):\n");
            }
            let mut c = cells(kind, r);
            // The group in email is implied by the names; keep names short.
            c[0] = if kind == "symbol" {
                format!("  {}", r.name)
            } else {
                c[0].clone()
            };
            out.push_str(&line(&c));
            out.push('\n');
        }
    }
    out
}

/// GitHub-flavoured markdown.
pub fn markdown(sections: &[AttributionSection]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!("\n#### Where the time goes: {}\n\n", s.comparison));
        for line in preamble(&s.attribution) {
            out.push_str(&line);
            out.push_str("\n\n");
        }
        if s.attribution.groups.is_empty() {
            continue;
        }
        let md_row = |c: &[String]| format!("| {} |\n", c.join(" | "));
        out.push_str(&md_row(&HEADER.map(String::from)));
        out.push_str("|---|---:|---:|---:|---:|---:|\n");
        for (kind, r) in shown(&s.attribution) {
            let mut c = cells(kind, r);
            c[0] = match kind {
                "group" => c[0].clone(),
                "total" => format!("**{}**", c[0]),
                _ => format!("`{}` ({})", r.name.replace('|', "\\|"), r.group),
            };
            out.push_str(&md_row(&c));
        }
    }
    out
}

pub const CSV_HEADER: &str = "comparison,kind,name,group,baseline_ns_per_op,treatment_ns_per_op,delta_ns_per_op,delta_ci_low,delta_ci_high,share_of_delta_pct,baseline_share_pct,treatment_share_pct,within_noise";

/// A CSV block of its own: one line per group, total and stored symbol.
pub fn csv(sections: &[AttributionSection]) -> String {
    if sections.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{CSV_HEADER}\n");
    let n = |x: f64| {
        if x.is_finite() {
            x.to_string()
        } else {
            String::new()
        }
    };
    for s in sections {
        let a = &s.attribution;
        let rows = a
            .groups
            .iter()
            .map(|r| ("group", r))
            .chain([("total", &a.total)])
            .chain(a.symbols.iter().map(|r| ("symbol", r)));
        for (kind, r) in rows {
            let fields = [
                s.comparison.clone(),
                kind.to_string(),
                r.name.clone(),
                r.group.clone(),
                n(r.baseline_ns_per_op),
                n(r.treatment_ns_per_op),
                n(r.delta_ns_per_op.estimate),
                n(r.delta_ns_per_op.ci_low),
                n(r.delta_ns_per_op.ci_high),
                n(r.share_of_delta_pct),
                n(r.baseline_share_pct),
                n(r.treatment_share_pct),
                r.within_noise.to_string(),
            ];
            out.push_str(&crate::report::markup::csv::records([fields]));
        }
    }
    out
}

/// The post's own shape (`perf diff`): each symbol's share of samples
/// before and after, beside the ns/op form.
pub fn shares(a: &Attribution, top: usize) -> String {
    let mut out = format!(
        "{:<40}{:>10}    {:>10}{:>13}\n",
        "symbol", "before", "after", "delta ns/op"
    );
    for r in a.symbols.iter().take(top) {
        out.push_str(&format!(
            "{:<40}{:>9.2}% -> {:>9.2}%{:>13}\n",
            fit(&r.name, 39),
            r.baseline_share_pct,
            r.treatment_share_pct,
            delta(r)
        ));
    }
    out
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::model::{Estimate, ProfileSamples};

    pub fn row(name: &str, group: &str, b: f64, t: f64, lo: f64, hi: f64) -> AttributionRow {
        AttributionRow {
            name: name.to_string(),
            group: group.to_string(),
            baseline_ns_per_op: b,
            treatment_ns_per_op: t,
            delta_ns_per_op: Estimate {
                estimate: t - b,
                ci_low: lo,
                ci_high: hi,
            },
            share_of_delta_pct: (t - b) / 50.0 * 100.0,
            baseline_share_pct: b,
            treatment_share_pct: t / 1.5,
            within_noise: lo <= 0.0 && hi >= 0.0,
        }
    }

    pub fn section() -> AttributionSection {
        AttributionSection {
            comparison: "audit:unrelated-rule on getppid tasks=1".to_string(),
            attribution: Attribution {
                pairs: 8,
                hz: 4000,
                clock: "cpu-clock".to_string(),
                samples: ProfileSamples {
                    total: 8000,
                    per_half_min: 480,
                    per_half_median: 500.0,
                    lost: 0,
                },
                profiling_slowdown_pct: 12.5,
                baseline_slowdown_pct: 12.0,
                treatment_slowdown_pct: 13.0,
                total: row("total", "", 100.0, 150.0, 45.0, 55.0),
                groups: vec![
                    row("audit", "", 0.0, 45.0, 40.0, 50.0),
                    row("user space", "", 50.0, 50.5, -1.0, 2.0),
                ],
                symbols: vec![
                    row("__audit_syscall_exit", "audit", 0.0, 30.0, 25.0, 35.0),
                    row(
                        "a_very_long_function_name_that_will_not_fit_in_the_email_column",
                        "kernel (other)",
                        1.0,
                        2.0,
                        -1.0,
                        3.0,
                    ),
                ],
                notes: vec!["as few as 480 samples in a half".to_string()],
                folded: Default::default(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::section;
    use super::*;

    #[test]
    fn email_fits_72_ascii_columns() {
        let text = email(&[section()]);
        for line in text.lines() {
            assert!(line.len() <= 72, "{line:?} is {} wide", line.len());
            assert!(line.is_ascii(), "{line:?}");
        }
        assert!(text.contains("audit"));
        assert!(text.contains("+45.00"));
        assert!(text.contains("[+40.00, +50.00]"));
        assert!(text.contains("+0.50~"), "within-noise mark:\n{text}");
    }

    #[test]
    fn table_and_markdown_show_groups_total_and_symbols() {
        for text in [table(&[section()]), markdown(&[section()])] {
            assert!(text.contains("Where the time goes: audit:unrelated-rule on getppid"));
            assert!(text.contains("__audit_syscall_exit"));
            assert!(text.contains("total"));
            assert!(text.contains("note: as few as 480"));
            assert!(text.contains("slowed the workload by +12.5%"));
        }
    }

    #[test]
    fn csv_has_its_own_header_and_a_line_per_row() {
        let text = csv(&[section()]);
        let lines: Vec<&str> = text.trim().lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        // 2 groups + total + 2 symbols
        assert_eq!(lines.len(), 1 + 5);
        let fields = CSV_HEADER.split(',').count();
        assert!(
            lines.iter().all(|l| l.split(',').count() == fields),
            "{lines:?}"
        );
        assert!(csv(&[]).is_empty());
    }

    #[test]
    fn shares_read_like_perf_diff() {
        let text = shares(&section().attribution, 5);
        assert!(text.contains("__audit_syscall_exit"));
        assert!(text.contains("% ->"));
    }

    #[test]
    fn an_empty_profile_prints_its_notes_only() {
        let mut s = section();
        s.attribution.groups.clear();
        s.attribution.symbols.clear();
        s.attribution.notes = vec!["not profiled: perf_event_open refused".to_string()];
        for text in [
            table(&[s.clone()]),
            email(&[s.clone()]),
            markdown(&[s.clone()]),
        ] {
            assert!(
                text.contains("not profiled: perf_event_open refused"),
                "{text}"
            );
        }
    }
}
