//! Where what a command shows goes: a run document rendered in the format
//! asked for (`--json`, `--format`, or the terminal table) on stdout or in
//! a file, and the reports of several runs (`compare`) likewise, one file
//! per configuration in a directory for benchstat.

use std::path::Path;

use anyhow::Result;

use crate::report::doc::RunDoc;
use crate::report::formats::{Format, RenderOpts, color_default, render, render_benchstat_files};
use crate::report::markup::Kind;
use crate::report::sections::{self, Parts};

fn write_file(file: &Path, text: &str) -> Result<()> {
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
    let text_parts = Parts {
        facts: true,
        reproduce: true,
        ..parts
    };
    let text = match (json, format) {
        (true, _) | (false, Some(Format::Json)) => serde_json::to_string_pretty(doc)? + "\n",
        (false, Some(Format::Benchstat)) => {
            let report = crate::report::build::of_doc(doc);
            return write_report(&report, Format::Benchstat, output);
        }
        // A suite's report looks like the post's tables by default.
        (false, None) if doc.suite.is_some() => sections::render(doc, parts, Kind::Plain),
        (false, None | Some(Format::Table)) => {
            let color = output.is_none() && color_default();
            sections::render(doc, parts, Kind::Terminal { color })
        }
        (false, Some(Format::Email)) => sections::render(doc, text_parts, Kind::Email),
        (false, Some(Format::Markdown)) => sections::render(doc, text_parts, Kind::Markdown),
        (false, Some(Format::Csv)) => sections::render(doc, text_parts, Kind::Csv),
    };
    match output {
        Some(file) => write_file(file, &text),
        None => {
            super::emit(text.trim_end());
            Ok(())
        }
    }
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
            super::emit(render(report, format, &RenderOpts { color })?.trim_end());
            Ok(())
        }
    }
}
