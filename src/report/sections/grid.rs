//! A grid of configurations side by side ([`Report`]: `compare` of stored
//! runs, and any grid a command shows), written once through the
//! [`Markup`] interface so that every format draws the same thing: the
//! title, how the columns were compared, one table with a row per
//! workload x tasks (x label) and, per configuration, its median and, for
//! the candidates, the change against the first with its interval, mark,
//! p-value and CV; then the summary, the machine and the command that
//! reproduces it.
//!
//! The data formats (CSV) get a second, data-only table in the long
//! ("tidy") layout: one record per present (row, configuration) cell
//! under [`CSV_FIELDS`], every sample joined with ';', so that any number
//! of configurations fits one fixed header.

use super::super::markup::{Align, Cell as MCell, Column, Markup, Raw, Table, Tone};
use super::super::model::{Cell, DesignKind, Report};
use super::super::number::{change, mark, p_short, value_with_unit};

/// The fields of the data table, one record per present cell.
pub const CSV_FIELDS: [&str; 13] = [
    "workload",
    "tasks",
    "label",
    "configuration",
    "unit",
    "value",
    "cv_pct",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "verdict",
    "samples",
];

/// One line saying how the columns were compared.
pub fn design_line(design: DesignKind) -> &'static str {
    match design {
        DesignKind::Paired => "paired: A/B pairs in one run",
        DesignKind::Unpaired => {
            "unpaired: runs from different times; drift between them is not controlled"
        }
        DesignKind::Single => "single: one configuration, no comparison",
    }
}

/// Writes the grid.
pub fn write(report: &Report, m: &mut dyn Markup) {
    m.heading(&report.title);
    let n = report.columns.len();
    let mut intro = vec![design_line(report.design).to_string()];
    if n > 1 {
        intro.push(format!(
            "Values: median {} by workload and tasks; % change against the \
             baseline, \"{}\".",
            report.unit, report.columns[0]
        ));
    } else {
        intro.push(format!(
            "Values: median {} by workload and tasks.",
            report.unit
        ));
    }
    m.list(&intro);
    // What changed first (the counts of changes and their geometric mean),
    // then what to know, then the figures.
    if !report.summary.is_empty() {
        m.list(&report.summary);
    }
    for w in &report.warnings {
        m.text(&format!("warning: {w}"));
    }
    if n == 0 || report.rows.is_empty() {
        m.text("(no results)");
    } else {
        m.table(&grid(report));
        m.table(&cells(report));
    }
    if !report.machine.is_empty() {
        let kv: Vec<String> = report
            .machine
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        m.text(&format!("Machine: {}", kv.join("; ")));
    }
    if !report.command.trim().is_empty() {
        m.command("Reproduce", &report.command);
    }
}

/// "+12.3% [9.4, 16.5] *" (or without interval or mark where the cell has
/// none); "" for a cell without a change.
pub fn change_text(c: &Cell) -> String {
    let Some(e) = c.change_pct else {
        return String::new();
    };
    match (c.verdict, c.ci_low_pct.zip(c.ci_high_pct)) {
        (Some(v), Some((lo, hi))) => change(e, lo, hi, v),
        (Some(v), None) => format!("{e:+.1}% {}", mark(v)),
        (None, Some((lo, hi))) => format!("{e:+.1}% [{lo:.1}, {hi:.1}]"),
        (None, None) => format!("{e:+.1}%"),
    }
}

/// The table people read: a value column per configuration, and for each
/// candidate its change, p-value and CV (the last two may be left out
/// by narrow formats).
fn grid(report: &Report) -> Table {
    let n = report.columns.len();
    let labels = report.rows.iter().any(|r| !r.label.is_empty());
    let mut columns = vec![
        Column::shown("workload", Align::Left),
        Column::shown("tasks", Align::Right),
    ];
    if labels {
        columns.push(Column::shown("label", Align::Left));
    }
    for (i, name) in report.columns.iter().enumerate() {
        if i == 0 {
            columns.push(Column::shown(name, Align::Right).wrapping());
        } else {
            columns.push(Column::shown(name, Align::Right).wrapping());
            columns.push(Column::shown("change [CI]", Align::Right).wrapping());
            columns.push(Column::shown("p", Align::Right).optional());
        }
        columns.push(Column::shown("cv", Align::Right).optional());
    }
    let mut t = Table::new("grid", columns);
    for row in &report.rows {
        let mut cells = vec![
            MCell::text(row.workload.as_str()),
            MCell::text(row.tasks.to_string()),
        ];
        if labels {
            cells.push(MCell::text(row.label.as_str()));
        }
        let unit = row.unit.as_deref().unwrap_or(&report.unit);
        for (i, cell) in row.cells.iter().enumerate() {
            let Some(c) = cell else {
                cells.push(MCell::text("-"));
                if i > 0 {
                    cells.extend([MCell::text(""), MCell::text("")]);
                }
                cells.push(MCell::text(""));
                continue;
            };
            let baseline = row.cells.first().and_then(Option::as_ref);
            cells.push(MCell::text(value_with_unit(c.shown_value(baseline), unit)));
            if i > 0 {
                cells.push(
                    MCell::text(change_text(c)).tone(c.verdict.map_or(Tone::Plain, Tone::of)),
                );
                cells.push(MCell::text(c.p_value.map(p_short).unwrap_or_default()));
            }
            cells.push(MCell::text(
                c.cv_pct.map(|cv| format!("{cv:.1}%")).unwrap_or_default(),
            ));
        }
        t.row(cells);
    }
    if n > 1 {
        let metric = crate::model::Metric::of_per_op_unit(&report.unit);
        let either = crate::report::number::either_way(metric);
        t.footer(format!(
            "* a change (verdict {either}); = negligible; ~ no difference \
             detected. A later column's value is the baseline's x (1 + its change), so the \
             values give the change shown; each run's own median is in --format csv and \
             --json. cv: the samples' coefficient \
             of variation. {}",
            report.sign_convention
        ));
    }
    t
}

/// The data-only table: one record per present cell.
fn cells(report: &Report) -> Table {
    let mut t = Table::new(
        "cells",
        CSV_FIELDS.iter().map(|f| Column::data(f)).collect(),
    );
    for row in &report.rows {
        let unit = row.unit.as_deref().unwrap_or(&report.unit);
        for (column, cell) in report.columns.iter().zip(&row.cells) {
            let Some(c) = cell else { continue };
            let samples: Vec<String> = c.samples.iter().map(f64::to_string).collect();
            let raw: [Raw; 13] = [
                row.workload.as_str().into(),
                row.tasks.into(),
                row.label.as_str().into(),
                column.as_str().into(),
                unit.into(),
                c.value.into(),
                c.cv_pct.into(),
                c.change_pct.into(),
                c.ci_low_pct.into(),
                c.ci_high_pct.into(),
                c.p_value.into(),
                c.verdict.map(|v| v.to_string()).into(),
                samples.join(";").into(),
            ];
            t.data_row(raw.into_iter().map(|r| MCell::value("", r)).collect());
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::markup::{Kind, text::WIDTH, writer};
    use crate::report::model::testing;

    fn render(r: &Report, kind: Kind) -> String {
        let mut m = writer(kind);
        write(r, m.as_mut());
        m.finish()
    }

    #[test]
    fn every_format_writes_every_report() {
        for r in testing::all() {
            for kind in [
                Kind::Terminal { color: false },
                Kind::Terminal { color: true },
                Kind::Email,
                Kind::Plain,
                Kind::Markdown,
                Kind::Csv,
            ] {
                let s = render(&r, kind);
                assert!(s.ends_with('\n'), "{kind:?} of {}", r.title);
                assert!(!s.trim().is_empty(), "{kind:?} of {}", r.title);
            }
        }
    }

    #[test]
    fn the_terminal_grid_shows_values_changes_and_how_to_reproduce() {
        let s = render(&testing::small(), Kind::Terminal { color: false });
        assert!(s.starts_with("secperf compare:\n"), "{s}");
        assert!(s.contains("unpaired: runs from different times"), "{s}");
        assert!(s.contains("against the baseline, \"run 3 base\""), "{s}");
        assert!(s.contains("+12.3% [9.4, 16.5] *"), "{s}");
        assert!(s.contains("+0.5% [-3.2, 8.1] ~"), "{s}");
        assert!(s.contains("-10.0% [-12.1, -7.7] *"), "{s}");
        assert!(s.contains("p=0.002"), "{s}");
        assert!(
            s.contains("warning: the runs were on different kernels"),
            "{s}"
        );
        assert!(s.contains("geometric mean of changes"), "{s}");
        assert!(
            s.contains("Machine: host: box; kernel: 6.8.0-45-generic"),
            "{s}"
        );
        assert!(
            s.contains("Reproduce: secperf compare 3 5 7 --format email"),
            "{s}"
        );
        assert!(!s.contains('\x1b'), "no colour unless asked");
        let coloured = render(&testing::small(), Kind::Terminal { color: true });
        assert!(coloured.contains('\x1b'), "{coloured}");
    }

    #[test]
    fn email_is_ascii_within_72_columns_for_any_report() {
        for r in testing::all() {
            let s = render(&r, Kind::Email);
            for l in s.lines() {
                assert!(l.len() <= WIDTH, "{} wide: {l:?}\n{s}", l.len());
                assert!(l.is_ascii(), "{l:?}");
            }
            assert!(s.contains("Reproduce: "), "{s}");
        }
    }

    #[test]
    fn a_single_configuration_has_values_only() {
        let s = render(&testing::single(), Kind::Terminal { color: false });
        assert!(!s.contains("change [CI]"), "{s}");
        assert!(!s.contains("baseline"), "{s}");
        assert!(s.contains("297.5"), "{s}");
    }

    #[test]
    fn markdown_keeps_awkward_names_in_their_cells() {
        let s = render(&testing::awkward(), Kind::Markdown);
        let rows: Vec<&str> = s.lines().filter(|l| l.starts_with('|')).collect();
        assert!(rows.len() >= 4, "{s}");
        let bars = |l: &str| l.replace("\\|", "").matches('|').count();
        assert!(rows.iter().all(|l| bars(l) == bars(rows[0])), "{s}");
    }

    #[test]
    fn csv_is_one_record_per_present_cell() {
        let r = testing::small();
        let s = render(&r, Kind::Csv);
        let mut reader = csv::Reader::from_reader(s.as_bytes());
        assert_eq!(
            reader.headers().unwrap().iter().collect::<Vec<_>>(),
            CSV_FIELDS
        );
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        // 3 cells in the first row, 2 in the second (one is missing).
        assert_eq!(rows.len(), 5, "{s}");
        assert_eq!(&rows[1][3], "run 5 patched");
        assert_eq!(&rows[1][7], "12.3");
        assert_eq!(&rows[1][11], "slower");
        assert_eq!(rows[0][12].split(';').count(), 3);
        let awkward = render(&testing::awkward(), Kind::Csv);
        let mut reader = csv::Reader::from_reader(awkward.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert!(rows.iter().any(|r| &r[0] == "open,close"), "{awkward}");
    }

    #[test]
    fn an_empty_report_says_so() {
        let mut r = testing::small();
        r.rows.clear();
        for kind in [Kind::Terminal { color: false }, Kind::Email, Kind::Markdown] {
            assert!(render(&r, kind).contains("(no results)"), "{kind:?}");
        }
    }
}
