//! The page of `secperf compare A B [...]`: a forest plot of each later
//! run's change against the first, per row of the grid (median change
//! with its interval, coloured by verdict, the noise band shaded), then
//! the grid itself, written through the same sections as the terminal,
//! email and markdown formats ([`crate::report::sections::grid`]) into
//! HTML ([`HtmlMarkup`]), and the command that reproduces it.

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::Doc;
use super::blocks::para;
use super::escape::esc;
use super::plots::forest;
use crate::report::markup::{Markup, Table};
use crate::report::model::Report;

/// The grid's primitives as HTML: the page's own tables
/// ([`super::writer::table`]), paragraphs, lists and preformatted text,
/// every text escaped.
#[derive(Debug, Default)]
pub struct HtmlMarkup {
    out: String,
}

impl Markup for HtmlMarkup {
    fn heading(&mut self, text: &str) {
        self.out.push_str(&format!("<h3>{}</h3>\n", esc(text)));
    }

    fn table(&mut self, table: &Table) {
        if table.is_shown() {
            // Its id is its class in HTML: "grid" is the page's layout of
            // plots, so the compare grid's table is named apart.
            let mut t = table.clone();
            t.id = format!("table-{}", t.id);
            self.out.push_str(&super::writer::table(&t));
        }
    }

    fn text(&mut self, text: &str) {
        // A warning stands out as the report's notes do.
        let class = if text.starts_with("warning") {
            "note"
        } else {
            "grid-text"
        };
        self.out.push_str(&para(class, text));
    }

    fn list(&mut self, items: &[String]) {
        self.out.push_str("<ul>");
        for i in items {
            self.out.push_str(&format!("<li>{}</li>", esc(i)));
        }
        self.out.push_str("</ul>\n");
    }

    fn verbatim(&mut self, title: &str, content: &str) {
        self.out.push_str(&format!(
            "<p>{}</p><pre>{}</pre>\n",
            esc(title),
            esc(content)
        ));
    }

    fn command(&mut self, label: &str, command: &str) {
        self.out.push_str(&format!(
            "<p>{}:</p><pre class=\"command\">{}</pre>\n",
            esc(label),
            esc(command)
        ));
    }

    fn finish(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

/// The forest plot's rows: every candidate cell with a change and an
/// interval, labelled by its row and column.
fn forest_rows(report: &Report) -> Vec<forest::Row> {
    let mut rows = Vec::new();
    for row in &report.rows {
        for (i, cell) in row.cells.iter().enumerate().skip(1) {
            let Some(cell) = cell else { continue };
            let (Some(change), Some(lo), Some(hi), Some(verdict)) = (
                cell.change_pct,
                cell.ci_low_pct,
                cell.ci_high_pct,
                cell.verdict,
            ) else {
                continue;
            };
            // An interval with no bound draws no bar (nor stretches the
            // axis to -100%).
            let (lo, hi) = if crate::report::number::bounded(lo, hi) {
                (lo, hi)
            } else {
                (f64::NAN, f64::NAN)
            };
            rows.push(forest::Row {
                label: format!(
                    "{} x{}{}: {}",
                    row.workload,
                    row.tasks,
                    if row.label.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", row.label)
                    },
                    report.columns.get(i).map(String::as_str).unwrap_or("?")
                ),
                estimate_pct: change,
                ci_low_pct: lo,
                ci_high_pct: hi,
                verdict,
            });
        }
    }
    rows
}

/// The whole page, `noise_pct` the band the verdicts used; `intro`, ready
/// markup, goes under its title (the server's links to the runs and its
/// form that filters the rows).
pub fn page(report: &Report, noise_pct: f64, now: DateTime<Utc>, intro: &str) -> Result<String> {
    let mut doc = Doc::default();
    doc.open(2, "compare", "compare", &report.title);
    doc.push(intro);
    let rows = forest_rows(report);
    if rows.is_empty() {
        doc.push(&para(
            "empty",
            "No row has a change with an interval to draw (each run needs samples of the same \
             workload and task count as the first).",
        ));
    } else {
        let drawing = forest::draw(
            "Change against the first run",
            &rows,
            noise_pct,
            &report.unit,
            "95% interval",
        )?;
        doc.plot("forest", &drawing, &report.sign_convention);
    }
    let mut m = HtmlMarkup::default();
    crate::report::sections::grid::write(report, &mut m);
    doc.push(&m.finish());
    doc.close();
    Ok(doc.into_page(
        &report.title,
        &format!(
            "Generated by secperf {} at {}. Unpaired: each run's samples against the first's, \
             every interval 95%.",
            env!("CARGO_PKG_VERSION"),
            now.format("%Y-%m-%d %H:%M UTC")
        ),
        "",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::markup::testing::awkward;

    #[test]
    fn the_markup_escapes_everything_it_is_given() {
        let mut m = HtmlMarkup::default();
        m.heading("<h>");
        m.table(&awkward());
        m.text("a <b> & c");
        m.list(&["<li>".into()]);
        m.verbatim("<t>", "<script>x</script>");
        m.command("Reproduce", "secperf compare 1 '<2>'");
        let s = m.finish();
        assert!(
            !s.contains("<script>") && !s.contains("<h>") && !s.contains("<b>"),
            "{s}"
        );
        assert!(s.contains("&lt;script&gt;"), "{s}");
        assert!(s.contains("<table"), "{s}");
    }
}
