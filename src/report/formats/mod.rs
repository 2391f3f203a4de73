//! Output formats of a [`Report`]: one entry point, [`render`], that
//! `compare` calls with the user's `--format` (and `benchstat` of any run,
//! from its grid). A run's own outputs are its document's sections
//! (`report::sections`) written through `report::markup`.
//!
//! Who reads what:
//! * `table` (default): a person at a terminal; comfy-table grid, colour.
//! * `email`: a kernel mailing list or a commit message; mmtests-style
//!   columns, at most 72 columns a line, plain ASCII.
//! * `markdown`: a GitHub issue or pull request.
//! * `json`: programs; the whole report as serde writes it.
//! * `csv`: spreadsheets and pandas; one line per cell.
//! * `benchstat`: Go's benchstat, which compares one file per configuration
//!   (see [`render_benchstat_files`]).
//!
//! The helpers here are the wording and number formatting the formats share,
//! so that a change is described the same way everywhere.

pub mod benchstat;
pub mod csv;
pub mod email;
pub mod json;
pub mod markdown;
pub mod table;

use serde::Serialize;

use super::model::{Cell, DesignKind, Report};
use crate::stats::decision::Verdict;

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
    /// from [`color_default`].
    pub color: bool,
}

/// The report as text in `format`, ending in a newline.
///
/// `benchstat` with several configurations gives every configuration's
/// block after a `# file: <name>` line (benchstat ignores `#` lines); use
/// [`render_benchstat_files`] to write one file per configuration.
pub fn render(report: &Report, format: Format, opts: &RenderOpts) -> anyhow::Result<String> {
    Ok(match format {
        Format::Table => table::render(report, opts),
        Format::Email => email::render(report),
        Format::Markdown => markdown::render(report),
        Format::Json => json::render(report)?,
        Format::Csv => csv::render(report),
        Format::Benchstat => benchstat::render(report),
    })
}

/// Whether colour should be used on stdout: false when NO_COLOR is set (any
/// value) or stdout is not a terminal.
pub fn color_default() -> bool {
    color_from(
        std::env::var_os("NO_COLOR").is_some(),
        std::io::IsTerminal::is_terminal(&std::io::stdout()),
    )
}

fn color_from(no_color_set: bool, stdout_is_terminal: bool) -> bool {
    !no_color_set && stdout_is_terminal
}

/// One line saying how the columns were compared.
pub(crate) fn design_line(design: DesignKind) -> &'static str {
    match design {
        DesignKind::Paired => "paired: A/B pairs in one run",
        DesignKind::Unpaired => {
            "unpaired: runs from different times; drift between them is not controlled"
        }
        DesignKind::Single => "single: one configuration, no comparison",
    }
}

/// Whether a cell's change is significant (a "slower" or "faster" verdict).
pub(crate) fn significant(cell: &Cell) -> bool {
    matches!(cell.verdict, Some(Verdict::Slower | Verdict::Faster))
}

/// A short description of a cell's change for a table cell, with its
/// interval and mark ("+12.3% [9.4, 16.5] *", "+0.5% [-3.2, 8.1] ~"), "+12.3%"
/// without statistics, "" for the baseline.
pub(crate) fn change_short(cell: &Cell) -> String {
    let Some(change) = cell.change_pct else {
        return String::new();
    };
    match (cell.verdict, cell.ci_low_pct.zip(cell.ci_high_pct)) {
        (Some(v), Some((lo, hi))) => crate::report::number::change(change, lo, hi, v),
        (Some(v), None) => format!("{change:+.1}% {}", crate::report::number::mark(v)),
        (None, Some((lo, hi))) => format!("{change:+.1}% [{lo:.1}, {hi:.1}]"),
        (None, None) => format!("{change:+.1}%"),
    }
}

/// Text with every character made printable ASCII: common typographic
/// characters transliterated ("±" -> "+-"), control characters (newlines,
/// tabs) turned into spaces, anything else into '?'.
pub(crate) fn ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            ' '..='~' => out.push(c),
            c if c.is_control() => out.push(' '),
            '\u{b1}' => out.push_str("+-"),
            '\u{d7}' => out.push('x'),
            '\u{b5}' | '\u{3bc}' => out.push('u'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
            '\u{2018}' | '\u{2019}' => out.push('\''),
            '\u{201c}' | '\u{201d}' => out.push('"'),
            '\u{2026}' => out.push_str("..."),
            '\u{2192}' => out.push_str("->"),
            '\u{2190}' => out.push_str("<-"),
            '\u{2264}' => out.push_str("<="),
            '\u{2265}' => out.push_str(">="),
            '\u{2248}' => out.push('~'),
            '\u{a0}' | '\u{2009}' | '\u{202f}' => out.push(' '),
            _ => out.push('?'),
        }
    }
    out
}

/// Word-wrap `text` to `width` columns: the first line starts with
/// `first`, the others with `rest`. Words longer than a line are cut.
/// Counts chars, so give it ASCII when the width matters.
pub(crate) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let mut word = word;
        loop {
            let len = line.chars().count();
            let need = word.chars().count() + usize::from(!empty);
            if len + need <= width {
                if !empty {
                    line.push(' ');
                }
                line.push_str(word);
                empty = false;
                break;
            }
            if !empty {
                lines.push(std::mem::replace(&mut line, rest.to_string()));
                empty = true;
                continue;
            }
            // An empty line and a word that does not fit: cut the word.
            let room = width.saturating_sub(len).max(1);
            let cut = word.char_indices().nth(room).map_or(word.len(), |(i, _)| i);
            line.push_str(&word[..cut]);
            word = &word[cut..];
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            if word.is_empty() {
                break;
            }
        }
    }
    if !empty || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
pub(crate) mod testing {
    //! Small hand-built reports the format tests share.

    use super::*;
    use crate::report::model::Row;

    pub fn cell(value: f64, change: Option<f64>, ci: (f64, f64), p: f64, v: Verdict) -> Cell {
        Cell {
            value,
            samples: vec![value * 0.99, value, value * 1.01],
            cv_pct: Some(1.2),
            change_pct: change,
            ci_low_pct: change.map(|_| ci.0),
            ci_high_pct: change.map(|_| ci.1),
            p_value: change.map(|_| p),
            verdict: change.map(|_| v),
            amean: Some(value),
            hmean: Some(value),
            welch_p_value: None,
        }
    }

    pub fn base(value: f64) -> Option<Cell> {
        Some(cell(value, None, (0.0, 0.0), 1.0, Verdict::NoChange))
    }

    /// 2 rows x 3 columns: one slower, one no-change, one faster, one
    /// missing cell.
    pub fn small() -> Report {
        Report {
            title: "secperf compare".into(),
            design: DesignKind::Unpaired,
            unit: "ns/op".into(),
            sign_convention: "% change: positive = slower than the baseline (more ns/op)".into(),
            columns: vec![
                "run 3 base".into(),
                "run 5 patched".into(),
                "run 7 rcu".into(),
            ],
            rows: vec![
                Row {
                    workload: "getpid".into(),
                    tasks: 1,
                    label: String::new(),
                    unit: None,
                    cells: vec![
                        base(297.5),
                        Some(cell(334.1, Some(12.3), (9.4, 16.5), 0.002, Verdict::Slower)),
                        Some(cell(
                            299.0,
                            Some(0.5),
                            (-3.2, 8.07),
                            0.41,
                            Verdict::NoChange,
                        )),
                    ],
                },
                Row {
                    workload: "tree_walk".into(),
                    tasks: 16,
                    label: String::new(),
                    unit: None,
                    cells: vec![
                        base(45_000.0),
                        None,
                        Some(cell(
                            40_500.0,
                            Some(-10.0),
                            (-12.1, -7.7),
                            0.0001,
                            Verdict::Faster,
                        )),
                    ],
                },
            ],
            summary: vec![
                "geometric mean of changes: run 5 patched +12.3%, run 7 rcu -5.0%".into(),
            ],
            warnings: vec!["the runs were on different kernels (6.8.0 vs 6.9.1)".into()],
            machine: vec![
                ("host".into(), "box".into()),
                ("kernel".into(), "6.8.0-45-generic".into()),
                ("cpu".into(), "AMD EPYC 7763 64-Core Processor".into()),
            ],
            command: "secperf compare 3 5 7 --format email".into(),
        }
    }

    /// Long workload, label and configuration names, non-ASCII text, many
    /// columns, a comma and quotes in names: everything a fixed-width
    /// format has to cope with.
    pub fn awkward() -> Report {
        let columns: Vec<String> = vec![
            "baseline kernel 6.8.0-45-generic with no LSM at all".into(),
            "landlock \u{2192} fs-ro, \"strict\"".into(),
            "seccomp-bpf filter with 200 rules".into(),
            "selinux enforcing targeted policy".into(),
            "apparmor".into(),
        ];
        let n = columns.len();
        let mut cells = vec![base(1234.5)];
        for i in 1..n {
            let (ch, v) = match i % 3 {
                0 => (-4.25, Verdict::Faster),
                1 => (48.2, Verdict::Slower),
                _ => (0.3, Verdict::NoChange),
            };
            cells.push(Some(cell(
                1234.5 * (1.0 + ch / 100.0),
                Some(ch),
                (ch - 1.0, ch + 1.0),
                0.01,
                v,
            )));
        }
        let mut missing = cells.clone();
        missing[2] = None;
        Report {
            title: "secperf overhead \u{2014} a very long title that goes on and on past the width of an email line".into(),
            design: DesignKind::Paired,
            unit: "ns/op".into(),
            sign_convention: "% change: positive = slower than the baseline (more ns/op)".into(),
            columns,
            rows: vec![
                Row {
                    workload: "a_really_quite_extraordinarily_long_workload_name_for_testing".into(),
                    tasks: 4_000_000_000,
                    label: "landlock:fs-ro rules=\"1000\", extra=\u{b1}1 and a long tail of parameters that never ends at all".into(),
                    unit: None,
                    cells: cells.clone(),
                },
                Row {
                    workload: "open,close".into(),
                    tasks: 1,
                    label: "seccomp:allow/kill".into(),
                    unit: None,
                    cells: missing,
                },
            ],
            summary: vec!["\u{b5}-benchmark overhead \u{2248} 48% for landlock; this line is long enough to need wrapping in an email".into()],
            warnings: vec!["stdout\nwas not a terminal".into()],
            machine: vec![
                ("cpu".into(), "Intel(R) Xeon(R) Platinum 8480+ \u{d7} 2 sockets, 112 cores".into()),
                ("mitigations".into(), "spectre_v2=retpoline,ibpb spec_store_bypass=seccomp l1tf=flush".into()),
            ],
            command: "secperf overhead --mechanisms 'landlock:fs-ro seccomp:allow' --workloads a_really_quite_extraordinarily_long_workload_name_for_testing,open --tasks 1,4000000000 --pairs 30 --format email --output /tmp/some/very/long/path/that/keeps/going/and/going/and/going/report.txt".into(),
        }
    }

    /// One configuration only (`secperf run`).
    pub fn single() -> Report {
        let mut r = small();
        r.design = DesignKind::Single;
        r.title = "secperf run".into();
        r.columns.truncate(1);
        for row in &mut r.rows {
            row.cells.truncate(1);
        }
        r.summary.clear();
        r.warnings.clear();
        r
    }

    pub fn all() -> Vec<Report> {
        vec![small(), awkward(), single()]
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

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
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(color_from(false, true));
        assert!(!color_from(true, true));
        assert!(!color_from(false, false));
        assert!(!color_from(true, false));
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

    #[test]
    fn change_descriptions() {
        let r = small();
        let c = |i: usize, j: usize| r.rows[i].cells[j].as_ref().unwrap();
        assert_eq!(change_short(c(0, 0)), "");
        assert_eq!(change_short(c(0, 1)), "+12.3% [9.4, 16.5] *");
        assert_eq!(change_short(c(0, 2)), "+0.5% [-3.2, 8.1] ~");
        assert_eq!(change_short(c(1, 2)), "-10.0% [-12.1, -7.7] *");
        assert_eq!(crate::report::number::p_short(0.0001), "p<0.001");
        assert_eq!(crate::report::number::p_short(0.0123), "p=0.012");
    }

    #[test]
    fn ascii_transliterates() {
        assert_eq!(
            ascii("\u{b1}1 \u{2192} \u{201c}x\u{201d}\n\u{4e2d}"),
            "+-1 -> \"x\" ?"
        );
        assert!(ascii("\u{2014}\u{2026}\u{b5}").is_ascii());
    }

    #[test]
    fn wrap_words() {
        assert_eq!(wrap("a bb ccc", 6, "", "  "), ["a bb", "  ccc"]);
        assert_eq!(wrap("", 6, "x: ", ""), ["x: "]);
        let long = wrap("abcdefghij", 4, "", "");
        assert_eq!(long, ["abcd", "efgh", "ij"]);
        for l in wrap(&"word ".repeat(50), 20, "first: ", "    ") {
            assert!(l.len() <= 20, "{l:?}");
        }
    }
}
