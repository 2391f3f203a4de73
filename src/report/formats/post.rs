//! Post-shaped tables: a report drawn the way the posts that suites
//! reproduce drew theirs (ASCII rules above, under the header and below),
//! in one of three [`Layout`]s over groups of its rows ([`PostTable`]).
//! Each cell is a value with 4 significant digits and, against the first
//! column, its % change with the 95% interval and a mark: `*` a change,
//! `=` shown negligible, `~` no difference detected (`report::number`).

use comfy_table::{CellAlignment, LineStyle, Table, TableStyle};

use crate::report::model::{Cell, Layout, PostTable, Report, Row};
use crate::report::number::sig4;
use crate::stats::decision::Verdict;

/// The report's tables, then its warnings.
pub fn render(report: &Report, tables: &[PostTable]) -> String {
    let mut out = format!("{}\n", report.title);
    for t in tables {
        let text = match t.layout {
            Layout::ConfigRows => config_rows(report, t),
            Layout::TaskRows => task_rows(report, t),
            Layout::ItemRows => item_rows(report, t),
        };
        if let Some(text) = text {
            out.push('\n');
            out.push_str(&text);
            out.push('\n');
        }
    }
    for w in &report.warnings {
        para(&mut out, &format!("warning: {w}"));
    }
    out
}

/// Appends `text` wrapped at 100 columns, continuation lines indented.
pub fn para(out: &mut String, text: &str) {
    let opts = textwrap::Options::new(100).subsequent_indent("    ");
    out.push_str(&textwrap::fill(text, opts));
    out.push('\n');
}

/// ASCII rules above, under the header and below, as the posts' tables.
const POST_STYLE: TableStyle = TableStyle::new()
    .top_border(LineStyle::none().fill('-').junction('-'))
    .header_separator(LineStyle::none().fill('-').junction('-'))
    .bottom_border(LineStyle::none().fill('-').junction('-'));

/// A table in the posts' style, every column but the first right-aligned.
pub fn ascii_table(header: Vec<String>, rows: Vec<Vec<String>>) -> String {
    let mut t = Table::new();
    t.load_style(POST_STYLE);
    t.set_header(header);
    let cols = rows.first().map_or(0, |r| r.len());
    for r in rows {
        t.add_row(r);
    }
    for c in 1..cols {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

/// "1 CPU", "2 CPUs".
fn counted(n: usize, per: &str) -> String {
    match per.strip_suffix('s') {
        Some(one) if n == 1 => format!("{n} {one}"),
        _ => format!("{n} {per}"),
    }
}

/// The mark of a verdict, as everywhere (`report::number`); none
/// without a comparison.
fn mark(v: Option<Verdict>) -> &'static str {
    v.map_or("", crate::report::number::mark)
}

fn fmt_cell(c: &Cell, with_ci: bool) -> String {
    let mut s = sig4(c.value);
    if let Some(e) = c.change_pct {
        match (with_ci, c.ci_low_pct.zip(c.ci_high_pct)) {
            (true, Some((lo, hi))) => s.push_str(&format!(" ({e:+.2}% [{lo:+.1}, {hi:+.1}])")),
            _ => s.push_str(&format!(" ({e:+.2}%)")),
        }
    }
    s.push_str(mark(c.verdict));
    s
}

/// "open [ops/s]": a row's name and unit.
fn row_title(report: &Report, row: &Row) -> String {
    format!(
        "{} [{}]",
        row.workload,
        row.unit.as_deref().unwrap_or(&report.unit)
    )
}

/// The columns (configurations) that have a cell in any row of `t`.
fn present(report: &Report, t: &PostTable) -> Vec<usize> {
    (0..report.columns.len())
        .filter(|&c| {
            t.rows
                .iter()
                .any(|&r| report.rows[r].cells.get(c).is_some_and(Option::is_some))
        })
        .collect()
}

fn cell_text(report: &Report, row: usize, col: usize, with_ci: bool) -> String {
    report.rows[row]
        .cells
        .get(col)
        .and_then(Option::as_ref)
        .map_or("-".into(), |c| fmt_cell(c, with_ci))
}

/// A row per configuration, a column per task count.
fn config_rows(report: &Report, t: &PostTable) -> Option<String> {
    let cols = present(report, t);
    let first = &report.rows[*t.rows.first()?];
    if cols.is_empty() {
        return None;
    }
    let single = t.rows.len() == 1;
    let mut header = vec![row_title(report, first)];
    if single {
        header.push("median (% change [95% CI])".into());
    } else {
        header.extend(
            t.rows
                .iter()
                .map(|&r| counted(report.rows[r].tasks as usize, &t.per)),
        );
    }
    let rows = cols
        .iter()
        .map(|&c| {
            let mut row = vec![report.columns[c].clone()];
            row.extend(t.rows.iter().map(|&r| cell_text(report, r, c, single)));
            row
        })
        .collect();
    Some(ascii_table(header, rows))
}

/// A row per task count, a column per configuration (mmtests).
fn task_rows(report: &Report, t: &PostTable) -> Option<String> {
    let cols = present(report, t);
    let first = &report.rows[*t.rows.first()?];
    if cols.is_empty() {
        return None;
    }
    let with_ci = cols.len() <= 2;
    let mut header = vec![row_title(report, first)];
    header.extend(cols.iter().map(|&c| report.columns[c].clone()));
    let rows = t
        .rows
        .iter()
        .map(|&r| {
            let n = report.rows[r].tasks as usize;
            let mut row = vec![format!(
                "Median {n:>3} {}",
                counted(n, &t.per).split_once(' ').map_or("", |x| x.1)
            )];
            row.extend(cols.iter().map(|&c| cell_text(report, r, c, with_ci)));
            row
        })
        .collect();
    Some(ascii_table(header, rows))
}

/// A row per workload and task count, a column per configuration.
fn item_rows(report: &Report, t: &PostTable) -> Option<String> {
    let cols = present(report, t);
    if cols.is_empty() {
        return None;
    }
    let with_ci = cols.len() <= 2;
    let mut header = vec!["test".to_string(), t.per.clone()];
    header.extend(cols.iter().map(|&c| report.columns[c].clone()));
    let rows = t
        .rows
        .iter()
        .map(|&r| {
            let row = &report.rows[r];
            let mut line = vec![row_title(report, row), row.tasks.to_string()];
            line.extend(cols.iter().map(|&c| cell_text(report, r, c, with_ci)));
            line
        })
        .collect();
    Some(ascii_table(header, rows))
}
