//! `secperf results`: list, show, export and delete stored runs. Runs are
//! named by id, by label (the latest run with it), `latest` or `latest~N`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Subcommand, ValueEnum};

use crate::model::StoredRun;
use crate::store::{Store, export};

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
    /// Export runs with every sample, as JSON or CSV (one row per sample).
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
            let run = store.load_run(id)?;
            let sweeps = crate::engine::sweep::stored(&store, id)?;
            if json {
                let mut v = serde_json::to_value(&run)?;
                if !sweeps.is_empty() {
                    v["sweeps"] = serde_json::to_value(&sweeps)?;
                }
                return super::print_json(&v);
            }
            if let Some(format) = format {
                let m = &run.meta;
                let mut report = if run.comparisons.is_empty() {
                    let name = run.name();
                    crate::report::build::from_results(
                        &name,
                        &run.results,
                        &m.system,
                        &m.host,
                        &m.command,
                    )
                } else {
                    crate::report::build::from_comparisons(
                        &run.comparisons,
                        &m.system,
                        &m.host,
                        &m.command,
                    )
                };
                report.sweeps = sweeps;
                return super::output::write_report(&report, format, output.as_deref());
            }
            print_run(&run, &sweeps);
        }
        ResultsCommand::Export {
            runs,
            format,
            output,
        } => {
            let loaded = load_all(&store, &runs)?;
            let text = match format {
                ExportFormat::Json if loaded.len() == 1 => export::export_json(&loaded[0])?,
                ExportFormat::Json => serde_json::to_string_pretty(&loaded)?,
                ExportFormat::Csv => export::export_csv(&loaded),
            };
            match output {
                Some(file) => std::fs::write(&file, text + "\n").map_err(|e| {
                    crate::error::UsageError::new(format!(
                        "cannot write {}: {e} (choose another file with -o)",
                        file.display()
                    ))
                })?,
                None => super::emit_fmt!("{text}"),
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

fn load_all(store: &Store, specs: &[String]) -> Result<Vec<StoredRun>> {
    specs
        .iter()
        .map(|s| store.load_run(store.resolve_run(s)?))
        .collect()
}

fn print_run(run: &StoredRun, sweeps: &[crate::model::Sweep]) {
    let m = &run.meta;
    let label = if m.label.is_empty() {
        "(no label)"
    } else {
        m.label.as_str()
    };
    super::emit_fmt!(
        "Run {} {label}: {} on {} at {}",
        run.run_id,
        m.kind,
        m.host,
        m.started_at.format("%Y-%m-%d %H:%M:%S UTC")
    );
    if run.finished_at.is_none() {
        super::emit_fmt!("Unfinished: the run stopped before all its measurements were done.");
    }
    super::emit_fmt!("Command: {}", m.command);
    match serde_json::from_value::<crate::probe::SystemInfo>(m.system.clone()) {
        Ok(info) => super::emit_fmt!("{}", crate::probe::render(&info).trim_end()),
        Err(_) => super::emit_fmt!("(system snapshot in an older format: see --json)"),
    }
    if !run.results.is_empty() {
        super::emit_fmt!("{}", crate::report::table::results(&run.results));
        let profiles = crate::report::formats::attribution::profiles(&run.results);
        if !profiles.is_empty() {
            super::emit_fmt!("{}", profiles.trim_end());
        }
    }
    if !run.comparisons.is_empty() {
        super::emit_fmt!("{}", crate::report::table::comparisons(&run.comparisons));
        let sweep_table = crate::report::formats::sweep::table(sweeps);
        if !sweep_table.is_empty() {
            super::emit_fmt!("{}", sweep_table.trim_end());
        }
        let attributions = crate::report::table::attributions(&run.comparisons);
        if !attributions.is_empty() {
            super::emit_fmt!("{}", attributions.trim_end());
        }
        let control = crate::report::table::negative_control(
            crate::engine::control::judge(&run.comparisons).as_ref(),
        );
        if !control.is_empty() {
            super::emit_fmt!("{}", control.trim_end());
        }
    }
}
