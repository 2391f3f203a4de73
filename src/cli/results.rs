//! `secperf results`: list, show, export and delete stored runs. Runs are
//! named by id, by label (the latest run with it), `latest` or `latest~N`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Subcommand, ValueEnum};

use crate::store::Store;

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// List stored runs, newest first.
    List,
    /// Show one run: its configuration summary and results table.
    Show {
        /// Run id, label, `latest` or `latest~N`.
        run: String,
        /// Output format instead of the default summary and tables.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<crate::report::formats::Format>,
        /// With --format: write to this file (a directory for benchstat).
        #[arg(short, long, value_name = "PATH", requires = "format")]
        output: Option<PathBuf>,
    },
    /// Export runs: JSON is the run document (as `--json` of the command that
    /// made it); CSV has one row per sample of a result and one per pair of
    /// a comparison.
    Export {
        /// Run ids, labels, `latest` or `latest~N`.
        #[arg(required = true)]
        runs: Vec<String>,
        #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Delete runs and all their samples.
    Delete {
        /// Run ids, labels, `latest` or `latest~N`.
        #[arg(required = true)]
        runs: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

pub fn results(cmd: ResultsCommand, db: Option<&Path>, json: bool) -> Result<()> {
    let path = crate::store::resolve_db_path(db)?;
    let mut store = if matches!(cmd, ResultsCommand::Delete { .. }) {
        Store::open(&path)?
    } else {
        Store::open_read_only(&path)?
    };
    match cmd {
        ResultsCommand::List => {
            let runs = store.list_runs()?;
            if json {
                return super::print_json(&serde_json::json!({ "db": path, "runs": runs }));
            }
            if runs.is_empty() {
                super::emit_fmt!(
                    "No runs stored in {} yet (start one with `secperf run`).",
                    path.display()
                );
            } else {
                super::emit_fmt!("{}", crate::report::table::runs(&runs));
            }
        }
        ResultsCommand::Show {
            run,
            format,
            output,
        } => {
            let id = store.resolve_run(&run)?;
            let doc = crate::engine::document::load(&store, id)?;
            super::output::show_run(
                &doc,
                json,
                format,
                output.as_deref(),
                crate::report::sections::Parts::STORED,
            )?;
        }
        ResultsCommand::Export {
            runs,
            format,
            output,
        } => {
            let docs = runs
                .iter()
                .map(|r| crate::engine::document::load(&store, store.resolve_run(r)?))
                .collect::<Result<Vec<_>>>()?;
            let text = match format {
                ExportFormat::Json if docs.len() == 1 => serde_json::to_string_pretty(&docs[0])?,
                ExportFormat::Json => serde_json::to_string_pretty(&docs)?,
                ExportFormat::Csv => crate::report::export::samples_csv(&docs),
            };
            match output {
                Some(file) => super::output::write_file(&file, &(text + "\n"))?,
                None => super::emit_fmt!("{}", text.trim_end()),
            }
        }
        ResultsCommand::Delete { runs } => {
            let ids: Vec<i64> = runs
                .iter()
                .map(|r| store.resolve_run(r))
                .collect::<Result<_>>()?;
            for id in &ids {
                store.delete_run(*id)?;
            }
            if json {
                return super::print_json(&serde_json::json!({ "deleted": ids }));
            }
            for id in ids {
                super::emit_fmt!("Deleted run {id}.");
            }
        }
    }
    Ok(())
}
