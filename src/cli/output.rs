//! Where what a command shows goes: a run document rendered in the format
//! asked for (`--json`, `--format`, or the terminal table) on stdout or in
//! a file, and the reports of several runs (`compare`) likewise, one file
//! per configuration in a directory for benchstat.

use std::path::Path;

use anyhow::{Context, Result};

use crate::report::doc::RunDoc;
use crate::report::formats::{Format, RenderOpts, markup_kind, render, render_benchstat_files};
use crate::report::markup::Kind;
use crate::report::markup::terminal::color_default;
use crate::report::sections::{self, Parts};

/// `--json` beside a `--format` other than json asks for two outputs: a
/// usage error before anything runs, naming both (`--json` is `--format
/// json`).
pub fn refuse_json_beside<F: clap::ValueEnum>(json: bool, format: Option<&F>) -> Result<()> {
    let Some(name) = format
        .and_then(|f| f.to_possible_value())
        .map(|v| v.get_name().to_string())
    else {
        return Ok(());
    };
    if json && name != "json" {
        crate::usage_bail!(
            "--json and --format {name} ask for two outputs: give one of them (--json is the \
             same as --format json)"
        );
    }
    Ok(())
}

/// Writes `text` to `file`; a failure is a usage error naming the file.
pub(super) fn write_file(file: &Path, text: &str) -> Result<()> {
    std::fs::write(file, text).map_err(|e| {
        crate::error::UsageError::new(format!(
            "cannot write {}: {e} (choose another path with -o)",
            file.display()
        ))
        .into()
    })
}

/// Shows a run document: `--json` (or `--format json`) is the document
/// itself, as `results export` writes it; `--format` another format; the
/// terminal table otherwise (a suite run's: fixed-width text in the shape
/// of its post's tables). `parts` says what the table and the text
/// formats include (see [`Parts`]); email, markdown and csv always carry
/// the facts and the command that reproduces the run.
pub fn show_run(
    doc: &RunDoc,
    json: bool,
    format: Option<Format>,
    output: Option<&Path>,
    parts: Parts,
) -> Result<()> {
    if !json && format == Some(Format::Benchstat) {
        let report = crate::report::build::of_doc(doc);
        return write_report(&report, Format::Benchstat, output);
    }
    let color = output.is_none() && color_default();
    let text = render_run(doc, json, format, parts, color)?;
    match output {
        Some(file) => write_file(file, &text),
        None => {
            super::emit::emit(text.trim_end());
            Ok(())
        }
    }
}

/// What a measuring command shows once its run is finished: the run
/// document read back from the store, as the user asked (the view right
/// after measuring), then where it is stored, on stderr.
pub fn show_measured(
    session: &crate::engine::session::Session,
    label: &str,
    json: bool,
    report: &super::args::ReportFormatArgs,
) -> Result<()> {
    let doc = crate::read::document::load(&session.store, session.run_id)?;
    let shown = show_run(
        &doc,
        json,
        report.format,
        report.output.as_deref(),
        Parts::MEASURED,
    );
    then_stored(shown, &session.stored_line(label), session.run_id)
}

/// After a measured run is shown (`shown`): where it is stored, on
/// stderr, whether showing it worked or not, so that a view that failed
/// (a file that could not be written) does not make the run look lost.
pub fn then_stored(shown: Result<()>, stored: &str, run_id: i64) -> Result<()> {
    crate::say!("secperf: {stored}");
    shown.with_context(|| {
        format!(
            "showing run {run_id}, which is stored (`secperf results show {run_id}` shows it, \
             with --format and -o as you like)"
        )
    })
}

/// The text [`show_run`] writes (benchstat aside, which writes files).
fn render_run(
    doc: &RunDoc,
    json: bool,
    format: Option<Format>,
    parts: Parts,
    color: bool,
) -> Result<String> {
    let text_parts = Parts {
        facts: true,
        reproduce: true,
        ..parts
    };
    Ok(match (json, format) {
        (true, _) | (false, Some(Format::Json)) => serde_json::to_string_pretty(doc)? + "\n",
        // A suite's report looks like the post's tables by default.
        (false, None) if doc.suite.is_some() => sections::render(doc, parts, Kind::Plain),
        (false, Some(Format::Table) | None) => {
            sections::render(doc, parts, Kind::Terminal { color })
        }
        (false, Some(f @ (Format::Email | Format::Markdown | Format::Csv))) => sections::render(
            doc,
            text_parts,
            markup_kind(f, color).expect("a markup format"),
        ),
        (false, Some(Format::Benchstat)) => crate::report::formats::render(
            &crate::report::build::of_doc(doc),
            Format::Benchstat,
            &RenderOpts { color: false },
        )?,
    })
}

/// Renders a report to stdout or a file (one file per column in a
/// directory for benchstat).
pub fn write_report(
    report: &crate::report::model::Report,
    format: Format,
    output: Option<&Path>,
) -> Result<()> {
    match (format, output) {
        (Format::Benchstat, Some(dir)) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                crate::error::UsageError::new(format!(
                    "cannot create directory {}: {e}",
                    dir.display()
                ))
            })?;
            for (name, text) in render_benchstat_files(report) {
                let file: String = name
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                write_file(&dir.join(format!("{file}.txt")), &text)?;
            }
            Ok(())
        }
        (_, Some(file)) => {
            let color = false;
            write_file(file, &render(report, format, &RenderOpts { color })?)
        }
        (_, None) => {
            let color = format == Format::Table && color_default();
            super::emit::emit(render(report, format, &RenderOpts { color })?.trim_end());
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::testing::overhead_doc;

    #[test]
    fn the_default_output_is_format_table_and_format_json_is_json() {
        let doc = overhead_doc();
        for parts in [Parts::MEASURED, Parts::STORED] {
            for color in [false, true] {
                let plain = render_run(&doc, false, None, parts, color).unwrap();
                let table = render_run(&doc, false, Some(Format::Table), parts, color).unwrap();
                assert_eq!(plain, table);
            }
        }
        let json = render_run(&doc, true, None, Parts::MEASURED, false).unwrap();
        let format_json =
            render_run(&doc, false, Some(Format::Json), Parts::MEASURED, false).unwrap();
        assert_eq!(json, format_json);
        assert_eq!(json, serde_json::to_string_pretty(&doc).unwrap() + "\n");
    }
}
