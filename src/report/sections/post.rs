//! Post-shaped tables: a suite's section ([`PostSection`]) as markup
//! tables laid out the way the posts that suites reproduce drew theirs,
//! in one of three [`Layout`]s over groups of its rows. Each cell is a
//! value with 4 significant digits and, against the first column, its %
//! change (with the 95% interval where the table has room) and a mark:
//! `*` a change, `=` shown negligible, `~` no difference detected
//! (`report::number`); its tone follows the verdict. The unit is in the
//! first column's title ("open [ops/s]").
//!
//! For the data formats each value column gives its value, change,
//! interval and verdict as raw fields named after the column ("cred:fsuid",
//! "cred:fsuid change_pct", ...), and the item and its unit are fields of
//! every row.

use super::super::markup::{Align, Cell as MCell, Column, Raw, Table, Tone};
use super::super::model::{Cell, Layout, PostSection, PostTable, Report, Row};
use super::super::number::sig4;

/// The tables of a section, in order; `id` names them for CSV and HTML.
pub fn tables(s: &PostSection, id: &str) -> Vec<Table> {
    s.tables
        .iter()
        .filter_map(|t| match t.layout {
            Layout::ConfigRows => config_rows(&s.report, t, id),
            Layout::TaskRows => task_rows(&s.report, t, id),
            Layout::ItemRows => item_rows(&s.report, t, id),
        })
        .collect()
}

/// "1 CPU", "2 CPUs".
fn counted(n: usize, per: &str) -> String {
    match per.strip_suffix('s') {
        Some(one) if n == 1 => format!("{n} {one}"),
        _ => format!("{n} {per}"),
    }
}

/// "500000 (-50.00% [-51.0, -49.0])*": the value (with a change, the
/// baseline's x (1 + change), so the values give the change), its change
/// against the first column (with the interval when `with_ci`) and the
/// verdict's mark.
fn cell_text(c: &Cell, baseline: Option<&Cell>, with_ci: bool) -> String {
    let mut s = sig4(c.shown_value(baseline));
    if let Some(e) = c.change_pct {
        match (with_ci, c.ci_low_pct.zip(c.ci_high_pct)) {
            (true, Some((lo, hi))) => s.push_str(&format!(" ({e:+.2}% [{lo:+.1}, {hi:+.1}])")),
            _ => s.push_str(&format!(" ({e:+.2}%)")),
        }
    }
    s.push_str(c.verdict.map_or("", crate::report::number::mark));
    s
}

/// The unit of a row.
fn unit<'a>(report: &'a Report, row: &'a Row) -> &'a str {
    row.unit.as_deref().unwrap_or(&report.unit)
}

/// "open [ops/s]": a row's name and unit.
fn row_title(report: &Report, row: &Row) -> String {
    format!("{} [{}]", row.workload, unit(report, row))
}

/// A column of values titled `title`, its CSV fields named after `key`.
fn value_column(title: &str, key: &str) -> Column {
    let fields = [
        key.to_string(),
        format!("{key} change_pct"),
        format!("{key} ci_low_pct"),
        format!("{key} ci_high_pct"),
        format!("{key} verdict"),
    ];
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    Column::with_fields(title, Align::Right, &fields).wrapping()
}

/// The cell of configuration `col` in row `row`: "-" where it is missing.
fn value_cell(report: &Report, row: usize, col: usize, with_ci: bool) -> MCell {
    match report.rows[row].cells.get(col).and_then(Option::as_ref) {
        None => MCell::values("-", vec![Raw::Empty; 5]),
        Some(c) => MCell::values(
            cell_text(
                c,
                report.rows[row].cells.first().and_then(Option::as_ref),
                with_ci,
            ),
            vec![
                c.value.into(),
                c.change_pct.into(),
                c.ci_low_pct.into(),
                c.ci_high_pct.into(),
                c.verdict.map(|v| v.to_string()).into(),
            ],
        )
        .tone(c.verdict.map_or(Tone::Plain, Tone::of)),
    }
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

/// The item and unit of a row, as data.
fn item_cells(report: &Report, row: &Row) -> [MCell; 2] {
    [
        MCell::text(row.workload.as_str()),
        MCell::text(unit(report, row)),
    ]
}

/// A row per configuration, a column per task count.
fn config_rows(report: &Report, t: &PostTable, id: &str) -> Option<Table> {
    let cols = present(report, t);
    let first = &report.rows[*t.rows.first()?];
    if cols.is_empty() {
        return None;
    }
    let single = t.rows.len() == 1;
    let mut columns = vec![
        Column::data("item"),
        Column::data("unit"),
        Column::new(&row_title(report, first), Align::Left, "configuration"),
    ];
    columns.extend(t.rows.iter().map(|&r| {
        let n = counted(report.rows[r].tasks as usize, &t.per);
        let title = if single {
            "median (% change [95% CI])"
        } else {
            &n
        };
        value_column(title, &n)
    }));
    let mut table = Table::new(id, columns);
    for &c in &cols {
        let mut row: Vec<MCell> = item_cells(report, first).into();
        row.push(MCell::text(report.columns[c].as_str()));
        row.extend(t.rows.iter().map(|&r| value_cell(report, r, c, single)));
        table.row(row);
    }
    Some(table)
}

/// A value column per configuration, named as it is.
fn config_columns(report: &Report, cols: &[usize]) -> Vec<Column> {
    cols.iter()
        .map(|&c| value_column(&report.columns[c], &report.columns[c]))
        .collect()
}

/// A row per task count, a column per configuration (mmtests).
fn task_rows(report: &Report, t: &PostTable, id: &str) -> Option<Table> {
    let cols = present(report, t);
    let first = &report.rows[*t.rows.first()?];
    if cols.is_empty() {
        return None;
    }
    let with_ci = cols.len() <= 2;
    let mut columns = vec![
        Column::data("item"),
        Column::data("unit"),
        Column::new(&row_title(report, first), Align::Left, "tasks"),
    ];
    columns.extend(config_columns(report, &cols));
    let mut table = Table::new(id, columns);
    for &r in &t.rows {
        let row = &report.rows[r];
        let n = row.tasks as usize;
        let what = counted(n, &t.per);
        let what = what.split_once(' ').map_or("", |x| x.1);
        let mut cells: Vec<MCell> = item_cells(report, row).into();
        cells.push(MCell::value(format!("Median {n:>3} {what}"), row.tasks));
        cells.extend(cols.iter().map(|&c| value_cell(report, r, c, with_ci)));
        table.row(cells);
    }
    Some(table)
}

/// A row per workload and task count, a column per configuration.
fn item_rows(report: &Report, t: &PostTable, id: &str) -> Option<Table> {
    let cols = present(report, t);
    if cols.is_empty() || t.rows.is_empty() {
        return None;
    }
    let with_ci = cols.len() <= 2;
    let mut columns = vec![
        Column::with_fields("test", Align::Left, &["item", "unit"]),
        Column::new(&t.per, Align::Right, "tasks"),
    ];
    columns.extend(config_columns(report, &cols));
    let mut table = Table::new(id, columns);
    for &r in &t.rows {
        let row = &report.rows[r];
        let mut cells = vec![
            MCell::values(
                row_title(report, row),
                vec![row.workload.clone().into(), unit(report, row).into()],
            ),
            MCell::value(row.tasks.to_string(), row.tasks),
        ];
        cells.extend(cols.iter().map(|&c| value_cell(report, r, c, with_ci)));
        table.row(cells);
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::markup::{Kind, writer};
    use crate::report::model::DesignKind;
    use crate::stats::decision::Verdict;

    /// Two configurations of one item at 1 and 2 CPUs; the second is
    /// slower at 2 CPUs, missing at 1.
    fn section(layout: Layout) -> PostSection {
        let cell = |v: f64, change: Option<(f64, Verdict)>| {
            let mut c = Cell::of_value(v);
            if let Some((e, verdict)) = change {
                c.change_pct = Some(e);
                c.ci_low_pct = Some(e - 1.0);
                c.ci_high_pct = Some(e + 1.0);
                c.verdict = Some(verdict);
            }
            Some(c)
        };
        let row = |tasks: u32, cells| Row {
            workload: "write".into(),
            tasks,
            label: String::new(),
            unit: Some("K ops/s".into()),
            cells,
        };
        PostSection {
            report: Report {
                title: "This boot".into(),
                design: DesignKind::Paired,
                unit: String::new(),
                sign_convention: String::new(),
                columns: vec!["permissive".into(), "selinux:enforcing".into()],
                rows: vec![
                    row(1, vec![cell(535.8, None), None]),
                    row(
                        2,
                        vec![
                            cell(1071.6, None),
                            // The median 30.2; shown as 1071.6 x (1 - 0.9718) = 30.22.
                            cell(30.2, Some((-97.18, Verdict::Slower))),
                        ],
                    ),
                ],
                summary: vec![],
                warnings: vec![],
                machine: vec![],
                command: String::new(),
            },
            tables: vec![PostTable {
                layout,
                rows: vec![0, 1],
                per: "CPUs".into(),
            }],
        }
    }

    fn plain(t: &Table) -> String {
        let mut m = writer(Kind::Plain);
        m.table(t);
        m.finish()
    }

    #[test]
    fn config_rows_have_a_column_per_cpu_count() {
        let t = &tables(&section(Layout::ConfigRows), "x")[0];
        let s = plain(t);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[1].starts_with("write [K ops/s]"), "{s}");
        assert!(
            lines[1].contains("1 CPU") && lines[1].ends_with("2 CPUs"),
            "{s}"
        );
        assert!(lines[3].starts_with("permissive") && lines[3].ends_with("1072"));
        assert!(s.contains("selinux:enforcing"), "{s}");
        // Two columns of values: the change without its interval.
        assert!(s.contains("30.22 (-97.18%)*"), "{s}");
        // The slower cell is toned so; the missing one is "-".
        let row = t.rows().nth(1).unwrap();
        assert_eq!(row[4].tone, Tone::Worse);
        assert_eq!(row[3].text, "-");
        // CSV: item and unit on every row, raw values under named fields.
        let mut csv = writer(Kind::Csv);
        csv.table(t);
        let csv = csv.finish();
        let header = csv.lines().next().unwrap();
        assert!(
            header.starts_with("item,unit,configuration,1 CPU,1 CPU change_pct"),
            "{csv}"
        );
        assert!(
            csv.contains("write,K ops/s,selinux:enforcing,,,,,,30.2,-97.18,-98.18,-96.18,slower"),
            "{csv}"
        );
    }

    #[test]
    fn task_rows_have_a_row_per_count_and_item_rows_one_per_item() {
        let s = plain(&tables(&section(Layout::TaskRows), "x")[0]);
        assert!(s.contains("Median   2 CPUs"), "{s}");
        // Two configurations: room for the interval.
        assert!(s.contains("30.22 (-97.18% [-98.2, -96.2])*"), "{s}");
        let s = plain(&tables(&section(Layout::ItemRows), "x")[0]);
        let lines: Vec<&str> = s.lines().collect();
        assert!(
            lines[1].starts_with("test") && lines[1].contains("CPUs"),
            "{s}"
        );
        assert!(lines[4].starts_with("write [K ops/s]"), "{s}");
    }

    #[test]
    fn a_single_count_is_one_column_with_its_interval() {
        let mut s = section(Layout::ConfigRows);
        s.tables[0].rows = vec![1];
        let text = plain(&tables(&s, "x")[0]);
        assert!(text.contains("median (% change [95% CI])"), "{text}");
        assert!(text.contains("30.22 (-97.18% [-98.2, -96.2])*"), "{text}");
        // No configuration measured: no table.
        s.tables[0].rows = vec![];
        assert!(tables(&s, "x").is_empty());
    }
}
