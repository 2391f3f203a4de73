//! `--format markdown`: the report for a GitHub issue, pull request or wiki
//! page. One GitHub table with everything per configuration (value, CV,
//! and for the candidates change, confidence interval, p-value and
//! verdict); the header, warnings, summary and machine as text around it,
//! and the command that reproduces it in a code block.

use super::design_line;
use crate::report::model::{Cell, Report};
use crate::report::number::{p_short, value_with_unit};

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!("### {}\n\n", inline(&report.title)));
    out.push_str(&format!("{}  \n", inline(design_line(report.design))));
    out.push_str(&format!("Values: median {}", inline(&report.unit)));
    if report.columns.len() > 1 && !report.sign_convention.is_empty() {
        out.push_str(&format!("  \n{}", inline(&report.sign_convention)));
    }
    out.push_str("\n\n");
    for w in &report.warnings {
        out.push_str(&format!("> **warning:** {}\n", inline(w)));
    }
    if !report.warnings.is_empty() {
        out.push('\n');
    }

    let labels = report.rows.iter().any(|r| !r.label.is_empty());
    let mut header = vec!["workload".to_string(), "tasks".to_string()];
    let mut align = vec![":--", "--:"];
    if labels {
        header.push("label".into());
        align.push(":--");
    }
    for (i, c) in report.columns.iter().enumerate() {
        let c = cell_text(c);
        if i == 0 {
            header.push(if report.columns.len() > 1 {
                format!("{c} (baseline)")
            } else {
                c
            });
            header.push("CV".into());
            align.extend(["--:", "--:"]);
        } else {
            header.push(c);
            header.extend(["change [CI]", "p", "verdict", "CV"].map(String::from));
            align.extend(["--:", "--:", "--:", ":--", "--:"]);
        }
    }
    out.push_str(&table_line(&header));
    out.push_str(&table_line(&align));
    for row in &report.rows {
        let mut fields = vec![cell_text(&row.workload), row.tasks.to_string()];
        if labels {
            fields.push(cell_text(&row.label));
        }
        for (i, cell) in row.cells.iter().enumerate() {
            fields.extend(cell_fields(cell.as_ref(), i == 0, &report.unit));
        }
        out.push_str(&table_line(&fields));
    }

    if !report.summary.is_empty() {
        out.push('\n');
        for s in &report.summary {
            out.push_str(&format!("- {}\n", inline(s)));
        }
    }
    if !report.machine.is_empty() {
        out.push_str("\n**Machine:** ");
        let kv: Vec<String> = report
            .machine
            .iter()
            .map(|(k, v)| format!("{}: {}", inline(k), inline(v)))
            .collect();
        out.push_str(&kv.join("; "));
        out.push('\n');
    }
    if !report.command.is_empty() {
        let fence = fence_for(&report.command);
        out.push_str(&format!(
            "\nReproduce:\n\n{fence}sh\n{}\n{fence}\n",
            report.command.trim_end()
        ));
    }
    out
}

/// Fields of one configuration in one row: value and CV for the baseline,
/// value, change [CI], p, verdict and CV for the others.
fn cell_fields(cell: Option<&Cell>, baseline: bool, unit: &str) -> Vec<String> {
    let n = if baseline { 2 } else { 5 };
    let Some(c) = cell else {
        let mut v = vec!["-".to_string()];
        v.resize(n, String::new());
        return v;
    };
    let cv = c.cv_pct.map(|cv| format!("{cv:.1}%")).unwrap_or_default();
    let value = value_with_unit(c.value, unit);
    if baseline {
        return vec![value, cv];
    }
    let change = match (c.change_pct, c.ci_low_pct.zip(c.ci_high_pct)) {
        (Some(ch), Some((lo, hi))) => format!("{ch:+.1}% [{lo:.1}, {hi:.1}]"),
        (Some(ch), None) => format!("{ch:+.1}%"),
        (None, _) => String::new(),
    };
    let verdict = match c.verdict {
        Some(v) if super::significant(c) => format!("**{v}**"),
        Some(v) => v.to_string(),
        None => String::new(),
    };
    vec![
        value,
        change,
        c.p_value.map(p_short).unwrap_or_default(),
        verdict,
        cv,
    ]
}

fn table_line<S: AsRef<str>>(fields: &[S]) -> String {
    let mut line = String::from("|");
    for f in fields {
        line.push(' ');
        line.push_str(f.as_ref());
        line.push_str(" |");
    }
    line.push('\n');
    line
}

/// Text on one line (newlines become spaces).
fn inline(s: &str) -> String {
    s.split(['\n', '\r']).collect::<Vec<_>>().join(" ")
}

/// Text for a table cell: one line, pipes escaped.
fn cell_text(s: &str) -> String {
    inline(s).replace('|', "\\|")
}

/// A code fence longer than any run of backticks in `s`.
fn fence_for(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn table_rows(s: &str) -> Vec<&str> {
        s.lines().filter(|l| l.starts_with('|')).collect()
    }

    /// Cells of a table line, honouring escaped pipes.
    fn split(l: &str) -> Vec<String> {
        let inner = &l[1..l.len() - 1];
        let mut out = vec![String::new()];
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&'|') => {
                    out.last_mut().unwrap().push('|');
                    chars.next();
                }
                '|' => out.push(String::new()),
                c => out.last_mut().unwrap().push(c),
            }
        }
        out.into_iter().map(|f| f.trim().to_string()).collect()
    }

    #[test]
    fn table_with_everything() {
        let r = testing::small();
        let s = render(&r);
        let rows = table_rows(&s);
        // header, alignment, 2 rows
        assert_eq!(rows.len(), 4);
        let widths: Vec<usize> = rows.iter().map(|l| split(l).len()).collect();
        // workload, tasks, base+CV, 2 x (value, change, p, verdict, CV)
        assert!(widths.iter().all(|&w| w == 2 + 2 + 2 * 5), "{widths:?}");
        let h = split(rows[0]);
        assert_eq!(h[2], "run 3 base (baseline)");
        assert_eq!(h[4], "run 5 patched");
        let getpid = split(rows[2]);
        assert_eq!(getpid[2], "297.5 ns");
        assert_eq!(getpid[5], "+12.3% [9.4, 16.5]");
        assert_eq!(getpid[6], "p=0.002");
        assert_eq!(getpid[7], "**slower**");
        assert_eq!(getpid[8], "1.2%");
        assert_eq!(getpid[12], "no-change");
        let tree = split(rows[3]);
        assert_eq!(&tree[4..9], ["-", "", "", "", ""]);
        assert_eq!(tree[12], "**faster**");
        assert!(s.contains("> **warning:** the runs were"));
        assert!(s.contains("\n- geometric mean of changes"));
        assert!(s.contains("**Machine:** host: box; kernel: 6.8.0-45-generic;"));
        assert!(s.ends_with("Reproduce:\n\n```sh\nsecperf compare 3 5 7 --format email\n```\n"));
    }

    #[test]
    fn awkward_names_stay_in_their_cells() {
        let r = testing::awkward();
        let s = render(&r);
        let rows = table_rows(&s);
        assert_eq!(rows.len(), 4);
        let n = split(rows[0]).len();
        assert_eq!(n, 3 + 2 + 4 * 5);
        assert!(rows.iter().all(|l| split(l).len() == n));
        assert_eq!(split(rows[3])[0], "open,close");
        assert!(!s.contains("stdout\nwas"));
    }

    #[test]
    fn command_fence_outlasts_backticks() {
        assert_eq!(fence_for("echo `x`"), "```");
        assert_eq!(fence_for("a ``` b"), "````");
        let mut r = testing::small();
        r.command = "secperf run --label 'x | y'".into();
        assert!(render(&r).contains("```sh\nsecperf run --label 'x | y'\n```"));
    }
}
