//! Where a rendered report goes: stdout (coloured on a terminal for the
//! table format) or a file, one file per configuration in a directory for
//! benchstat.

use std::path::Path;

use anyhow::Result;

use crate::report::formats::{Format, RenderOpts, color_default, render, render_benchstat_files};

/// Renders a report to stdout or a file (one file per column in a
/// directory for benchstat).
pub fn write_report(
    report: &crate::report::model::Report,
    format: Format,
    output: Option<&Path>,
) -> Result<()> {
    let write = |file: &Path, text: &str| {
        std::fs::write(file, text).map_err(|e| {
            crate::error::UsageError::new(format!(
                "cannot write {}: {e} (choose another path with -o)",
                file.display()
            ))
        })
    };
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
                write(&dir.join(format!("{file}.txt")), &text)?;
            }
            Ok(())
        }
        (_, Some(file)) => {
            let color = false;
            write(file, &render(report, format, &RenderOpts { color })?)?;
            Ok(())
        }
        (_, None) => {
            let color = format == Format::Table && color_default();
            super::emit(render(report, format, &RenderOpts { color })?.trim_end());
            Ok(())
        }
    }
}
