//! The `--format` of a grid ([`Report`]: `compare` of stored runs, and a
//! run's grid for benchstat): [`render`] is its one entry point.
//!
//! Who reads what:
//! * `table` (default): a person at a terminal; comfy-table grid, colour.
//! * `email`: a kernel mailing list or a commit message; at most 72
//!   columns a line, plain ASCII.
//! * `markdown`: a GitHub issue or pull request.
//! * `csv`: spreadsheets and pandas; one record per cell.
//! * `json`: programs; the whole report as serde writes it.
//! * `benchstat`: Go's benchstat, which compares one file per configuration
//!   (see [`render_benchstat_files`]).
//!
//! The four text formats are the grid section (`report::sections::grid`)
//! written through the one `report::markup` interface that run documents,
//! campaigns and bisections use; json and benchstat are data in their own
//! grammars, written here.

pub mod benchstat;
pub mod campaign;
pub mod json;
pub mod track_prometheus;

use serde::Serialize;

use super::markup::{Kind, writer};
use super::model::Report;

pub use benchstat::render_files as render_benchstat_files;

/// The `--format` of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Terminal grid (comfy-table), coloured on a terminal.
    Table,
    /// Mailing-list text: 72 columns, ASCII, mmtests-style.
    Email,
    /// GitHub-flavoured markdown table.
    Markdown,
    /// JSON: of one run, the run document (as --json); of a comparison of
    /// runs, the report grid.
    Json,
    /// CSV: of one run, raw numbers per table; of a comparison of runs,
    /// one line per cell.
    Csv,
    /// Go benchmark format for benchstat (one block per configuration).
    Benchstat,
}

/// Settings of [`render`] that do not come from the report itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RenderOpts {
    /// Colour significant changes (table only). The caller decides, usually
    /// from `markup::terminal::color_default`.
    pub color: bool,
}

/// The report as text in `format`, ending in a newline.
///
/// `benchstat` with several configurations gives every configuration's
/// block after a `# file: <name>` line (benchstat ignores `#` lines); use
/// [`render_benchstat_files`] to write one file per configuration.
pub fn render(report: &Report, format: Format, opts: &RenderOpts) -> anyhow::Result<String> {
    Ok(match (format, markup_kind(format, opts.color)) {
        (_, Some(kind)) => {
            let mut m = writer(kind);
            super::sections::grid::write(report, m.as_mut());
            m.finish()
        }
        (Format::Benchstat, None) => benchstat::render(report),
        (_, None) => json::render(report)?,
    })
}

/// The markup a text `--format` writes through; None for json and
/// benchstat, which are data in their own grammars.
pub fn markup_kind(format: Format, color: bool) -> Option<Kind> {
    match format {
        Format::Table => Some(Kind::Terminal { color }),
        Format::Email => Some(Kind::Email),
        Format::Markdown => Some(Kind::Markdown),
        Format::Csv => Some(Kind::Csv),
        Format::Json | Format::Benchstat => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::testing::*;

    #[test]
    fn every_format_renders_every_report() {
        for r in all() {
            for &f in <Format as clap::ValueEnum>::value_variants() {
                for color in [false, true] {
                    let s = render(&r, f, &RenderOpts { color }).unwrap();
                    assert!(s.ends_with('\n'), "{f:?} of {}", r.title);
                    assert!(!s.trim().is_empty(), "{f:?} of {}", r.title);
                }
            }
        }
    }

    #[test]
    fn only_table_uses_colour() {
        let r = small();
        for f in [
            Format::Email,
            Format::Markdown,
            Format::Json,
            Format::Csv,
            Format::Benchstat,
        ] {
            let a = render(&r, f, &RenderOpts { color: true }).unwrap();
            let b = render(&r, f, &RenderOpts { color: false }).unwrap();
            assert_eq!(a, b, "{f:?}");
            assert!(!a.contains('\x1b'), "{f:?}");
        }
    }

    #[test]
    fn format_names() {
        use clap::ValueEnum;
        let names: Vec<String> = Format::value_variants()
            .iter()
            .map(|f| f.to_possible_value().unwrap().get_name().to_string())
            .collect();
        assert_eq!(
            names,
            ["table", "email", "markdown", "json", "csv", "benchstat"]
        );
        assert_eq!(
            serde_json::to_string(&Format::Benchstat).unwrap(),
            "\"benchstat\""
        );
    }
}
