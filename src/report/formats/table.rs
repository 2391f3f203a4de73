//! `--format table` (the default): the report for a person at a terminal.
//! A comfy-table grid with one row per workload x tasks (x label) and one
//! column per configuration; each cell holds the value, and for the
//! candidates the change with its interval and mark ("+12.3% [9.4, 16.5] *",
//! "+0.5% [-3.2, 8.1] ~" when no difference was detected), the p-value and the CV. Significant slowdowns
//! are red and speedups green when colour is on. How the numbers were
//! compared and what the sign means come above the grid, the summary, the
//! machine and the command that reproduces it below.

use comfy_table::{Cell as TCell, CellAlignment, Color};

use super::{change_short, design_line, significant};
use crate::report::model::{Cell, Report};
use crate::report::number::{p_short, value_with_unit};
use crate::stats::decision::Verdict;

pub fn render(report: &Report, opts: &super::RenderOpts) -> String {
    let mut out = String::new();
    out.push_str(&report.title);
    out.push('\n');
    out.push_str(design_line(report.design));
    out.push('\n');
    if report.columns.len() > 1 {
        out.push_str(&format!(
            "values: median {}; {}\n",
            report.unit, report.sign_convention
        ));
    } else {
        out.push_str(&format!("values: median {}\n", report.unit));
    }
    for w in &report.warnings {
        let w = w.split(['\n', '\r']).collect::<Vec<_>>().join(" ");
        out.push_str(&format!("warning: {w}\n"));
    }

    let labels = report.rows.iter().any(|r| !r.label.is_empty());
    let mut header: Vec<&str> = vec!["workload", "tasks"];
    if labels {
        header.push("label");
    }
    let names: Vec<String> = report
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 && report.columns.len() > 1 {
                format!("{c} (baseline)")
            } else {
                c.clone()
            }
        })
        .collect();
    header.extend(names.iter().map(String::as_str));
    let mut t = crate::report::table::new_table(&header);
    if opts.color {
        // Style even when comfy-table would not detect a terminal; without
        // colour no cell gets a style, and the table still wraps to the
        // terminal's width.
        t.enforce_styling();
    }
    for row in &report.rows {
        let mut cells = vec![
            TCell::new(&row.workload),
            TCell::new(row.tasks).set_alignment(CellAlignment::Right),
        ];
        if labels {
            cells.push(TCell::new(&row.label));
        }
        for (i, cell) in row.cells.iter().enumerate() {
            cells.push(match cell {
                None => TCell::new("-").set_alignment(CellAlignment::Right),
                Some(c) => grid_cell(c, i == 0, &report.unit, opts.color),
            });
        }
        t.add_row(cells);
    }
    out.push_str(&t.to_string());
    out.push('\n');

    for s in &report.summary {
        out.push_str(s);
        out.push('\n');
    }
    if !report.machine.is_empty() {
        let kv: Vec<String> = report
            .machine
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        out.push_str(&format!("machine: {}\n", kv.join("; ")));
    }
    if !report.command.is_empty() {
        out.push_str(&format!("reproduce: {}\n", report.command));
    }
    out
}

fn grid_cell(c: &Cell, baseline: bool, unit: &str, color: bool) -> TCell {
    let mut lines = vec![value_with_unit(c.value, unit)];
    if !baseline {
        let change = change_short(c);
        if !change.is_empty() {
            lines.push(change);
        }
    }
    let mut stats = Vec::new();
    if let (false, Some(p)) = (baseline, c.p_value) {
        stats.push(p_short(p));
    }
    if let Some(cv) = c.cv_pct {
        stats.push(format!("cv {cv:.1}%"));
    }
    if !stats.is_empty() {
        lines.push(stats.join(" "));
    }
    let mut cell = TCell::new(lines.join("\n")).set_alignment(CellAlignment::Right);
    if color && !baseline && significant(c) {
        cell = cell.fg(match c.verdict {
            Some(Verdict::Faster) => Color::Green,
            _ => Color::Red,
        });
    }
    cell
}

#[cfg(test)]
mod tests {
    use super::super::{RenderOpts, testing};
    use super::*;

    const RED: &str = "\x1b[38;5;9m";
    const GREEN: &str = "\x1b[38;5;10m";

    #[test]
    fn header_grid_and_footer() {
        let r = testing::small();
        let s = render(&r, &RenderOpts { color: false });
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "secperf compare");
        assert!(lines[1].starts_with("unpaired: runs from different times"));
        assert!(lines[2].contains("positive = slower"));
        assert_eq!(
            lines[3],
            "warning: the runs were on different kernels (6.8.0 vs 6.9.1)"
        );
        assert!(s.contains("run 3 base (baseline)"));
        assert!(s.contains("297.5 ns"));
        assert!(s.contains("45.00 us"));
        assert!(s.contains("+12.3% [9.4, 16.5] *"));
        assert!(s.contains("+0.5% [-3.2, 8.1] ~"));
        assert!(s.contains("-10.0% [-12.1, -7.7] *"));
        assert!(s.contains("p=0.002"));
        assert!(s.contains("p<0.001"));
        assert!(s.contains("cv 1.2%"));
        assert!(!s.contains("label"), "no label column without labels");
        assert!(s.contains("\nmachine: host: box; kernel: 6.8.0-45-generic;"));
        assert!(s.ends_with("reproduce: secperf compare 3 5 7 --format email\n"));
        assert!(!s.contains('\x1b'));
    }

    #[test]
    fn colour_marks_only_significant_changes() {
        let r = testing::small();
        let s = render(&r, &RenderOpts { color: true });
        assert!(s.contains(RED), "{s}");
        assert!(s.contains(GREEN), "{s}");
        // The red lines are the slower cell's, the green the faster's.
        for l in s.lines().filter(|l| l.contains(RED)) {
            assert!(!l.contains(GREEN), "{l}");
        }
        assert!(
            s.lines()
                .any(|l| l.contains(RED) && l.contains("+12.3% [9.4, 16.5]"))
        );
        assert!(
            s.lines()
                .any(|l| l.contains(GREEN) && l.contains("-10.0% [-12.1, -7.7]"))
        );
        // No-change cells, baselines and the rest are not styled.
        let mut quiet = r.clone();
        for c in quiet
            .rows
            .iter_mut()
            .flat_map(|r| r.cells.iter_mut().flatten())
        {
            c.verdict = c.verdict.map(|_| Verdict::NoChange);
        }
        assert!(!render(&quiet, &RenderOpts { color: true }).contains('\x1b'));
    }

    #[test]
    fn labels_get_a_column() {
        let r = testing::awkward();
        let s = render(&r, &RenderOpts { color: false });
        assert!(s.contains("label"));
        assert!(s.contains("paired: A/B pairs in one run"));
        assert!(s.contains("warning: stdout was not a terminal\n"));
    }

    #[test]
    fn single_configuration_has_no_changes() {
        let s = render(&testing::single(), &RenderOpts { color: false });
        assert!(s.lines().nth(2).unwrap() == "values: median ns/op");
        assert!(!s.contains("(baseline)"));
        assert!(!s.contains('%') || s.contains("cv "));
    }
}
