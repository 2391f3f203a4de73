//! `secperf results`: list, show, export and delete stored runs. Runs are
//! named by id, by label (the latest run with it), `latest` or `latest~N`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Subcommand, ValueEnum};

use crate::store::Store;

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// List stored runs, newest first, then the bisections and the tracks.
    List,
    /// Show one run: its results, then its configuration. Or, with
    /// --campaign, every host's run of a campaign side by side (ns/op and
    /// overhead % with 95% intervals, one column or row per host) and what
    /// differs between the hosts (kernel, CPU, mitigations, LSMs).
    Show {
        /// Run id, label, `latest` or `latest~N`.
        #[arg(required_unless_present_any = ["campaign", "bisection", "track"])]
        run: Option<String>,
        /// A campaign's id (or a unique prefix, or `latest`) instead of a run.
        #[arg(long, value_name = "ID", conflicts_with_all = ["run", "bisection", "track"])]
        campaign: Option<String>,
        /// A bisection's id (or a unique prefix, or `latest`) instead of a
        /// run: its verdict and error rate, each tested revision in commit
        /// order (slowdown against --good in % with its interval, class,
        /// pairs, run), and its `git bisect log`.
        #[arg(long, value_name = "ID", conflicts_with_all = ["run", "track"])]
        bisection: Option<String>,
        /// A track's id (or a unique prefix, or `latest`) instead of a run:
        /// one row per tested revision in branch order (its change against
        /// the revision tested before it in % with its interval at its
        /// e-LOND level, the level, pairs, alarm, run). With --format
        /// email: one email per alarm, in the kernel test robot's form.
        #[arg(long, value_name = "ID", conflicts_with = "run")]
        track: Option<String>,
        /// Output format instead of the default summary and tables.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<crate::report::formats::Format>,
        /// With --format: write to this file (a directory for benchstat).
        #[arg(short, long, value_name = "PATH", requires = "format")]
        output: Option<PathBuf>,
    },
    /// Export runs as JSON or CSV. JSON is the run document (as `--json` of
    /// the command that made it); CSV has one row per sample of a result and one per pair of
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
    /// Copy finished runs into a shared PostgreSQL store, each once: a run
    /// is known by the UUID it got when it started, so pushing twice, or
    /// again after an interrupted push, stores nothing twice. Creates
    /// or upgrades the store's tables. The password comes from the URL,
    /// PGPASSWORD or ~/.pgpass and is never printed.
    Push {
        /// postgresql://[USER@]HOST[:PORT]/DATABASE[?sslmode=...]; default
        /// $SECPERF_REMOTE. PG* variables fill what the URL leaves out.
        #[arg(env = "SECPERF_REMOTE", hide_env_values = true, value_name = "URL")]
        url: String,
        /// Push only these runs (ids, labels, `latest`); default: every
        /// finished run, then the bisections and tracks (their runs named
        /// by the shared store's ids).
        #[arg(long = "run", value_name = "RUN")]
        runs: Vec<String>,
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
    if let ResultsCommand::Push { url, runs } = &cmd {
        return push(url, runs, db, json);
    }
    if let ResultsCommand::Show { format, .. } = &cmd {
        super::output::refuse_json_beside(json, format.as_ref())?;
    }
    if let ResultsCommand::Delete { runs } = &cmd {
        if super::reading::shared_url(db).is_some() {
            crate::usage_bail!(
                "secperf deletes runs only from results files: delete from a shared store with \
                 SQL (DELETE FROM runs WHERE uuid = ...; its rows cascade)"
            );
        }
        let path = crate::store::resolve_db_path(db)?;
        let ids = crate::engine::session::delete_runs(&path, runs)?;
        if json {
            return super::emit::print_json(&serde_json::json!({ "deleted": ids }));
        }
        for id in ids {
            super::emit::emit_fmt!("Deleted run {id}.");
        }
        return Ok(());
    }
    let (store, path) = super::reading::open(db)?;
    match cmd {
        ResultsCommand::List => {
            let runs = store.list_runs()?;
            let bisections = store.list_bisections()?;
            let tracks = store.list_tracks()?;
            if json {
                return super::emit::print_json(&serde_json::json!({
                    "db": path, "runs": runs, "bisections": bisections, "tracks": tracks
                }));
            }
            if runs.is_empty() {
                super::emit::emit_fmt!(
                    "No runs stored in {} yet (start one with `secperf run`).",
                    path.display()
                );
            } else {
                super::emit::emit_fmt!("{}", crate::report::table::runs(&runs));
            }
            if !tracks.is_empty() {
                super::emit::emit_fmt!(
                    "\nTracks (`secperf results show --track ID`):\n{}",
                    tracks
                        .iter()
                        .map(|t| format!(
                            "  {}  {}  {} on {} of {}: {} tested, {} alarm(s)",
                            t.id,
                            t.updated_at.format("%Y-%m-%d %H:%M"),
                            t.workload,
                            t.branch,
                            t.source,
                            t.tested,
                            t.alarms
                        ))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
            if !bisections.is_empty() {
                super::emit::emit_fmt!(
                    "\nBisections (`secperf results show --bisection ID`):\n{}",
                    bisections
                        .iter()
                        .map(|b| format!(
                            "  {}  {}  {} on {}, {} revision(s), {} step(s): {}",
                            b.id,
                            b.updated_at.format("%Y-%m-%d %H:%M"),
                            b.status.word(),
                            b.workload,
                            b.revisions,
                            b.steps,
                            b.verdict
                        ))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
        }
        ResultsCommand::Push { .. } => unreachable!("handled above"),
        ResultsCommand::Show {
            track: Some(spec),
            format,
            output,
            ..
        } => {
            let t = store.track(&spec)?;
            use crate::report::formats::Format;
            let color = output.is_none() && crate::report::markup::terminal::color_default();
            let format = if json {
                Format::Json
            } else {
                format.unwrap_or(Format::Table)
            };
            let text = match (format, crate::report::formats::markup_kind(format, color)) {
                (Format::Email, _) => track_emails(&store, &t),
                (_, Some(kind)) => crate::report::sections::track::render(&t, kind),
                (Format::Json, None) => serde_json::to_string_pretty(&t)? + "\n",
                (_, None) => crate::usage_bail!(
                    "--format benchstat compares runs: a track is shown as table, email, \
                     markdown, csv or json (each test's run: `secperf results show RUN \
                     --format benchstat`)"
                ),
            };
            match output {
                Some(file) => super::output::write_file(&file, &text)?,
                None => super::emit::emit_fmt!("{}", text.trim_end()),
            }
        }
        ResultsCommand::Show {
            campaign: Some(campaign),
            format,
            output,
            ..
        } => {
            let (view, _) = crate::read::campaign::view(&store, &campaign)?;
            let format = if json {
                crate::report::formats::Format::Json
            } else {
                format.unwrap_or(crate::report::formats::Format::Table)
            };
            let opts = crate::report::formats::RenderOpts {
                color: output.is_none() && crate::report::markup::terminal::color_default(),
            };
            let text = crate::report::formats::campaign::render(&view, format, opts);
            match output {
                Some(file) => super::output::write_file(&file, &text)?,
                None => super::emit::emit_fmt!("{}", text.trim_end()),
            }
        }
        ResultsCommand::Show {
            bisection: Some(spec),
            format,
            output,
            ..
        } => {
            let b = store.bisection(&spec)?;
            use crate::report::formats::Format;
            let color = output.is_none() && crate::report::markup::terminal::color_default();
            let format = if json {
                Format::Json
            } else {
                format.unwrap_or(Format::Table)
            };
            let text = match (format, crate::report::formats::markup_kind(format, color)) {
                (_, Some(kind)) => crate::report::sections::bisect::render(&b, kind),
                (Format::Json, None) => serde_json::to_string_pretty(&b)? + "\n",
                (_, None) => crate::usage_bail!(
                    "--format benchstat compares runs: a bisection is shown as table, email, \
                     markdown, csv or json (each step's run: `secperf results show RUN \
                     --format benchstat`)"
                ),
            };
            match output {
                Some(file) => super::output::write_file(&file, &text)?,
                None => super::emit::emit_fmt!("{}", text.trim_end()),
            }
        }
        ResultsCommand::Show {
            run,
            format,
            output,
            ..
        } => {
            let run = run.expect("clap requires a run without --campaign");
            let id = store.resolve_run(&run)?;
            let doc = crate::read::document::load(&store, id)?;
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
                .map(|r| crate::read::document::load(&store, store.resolve_run(r)?))
                .collect::<Result<Vec<_>>>()?;
            let text = match format {
                ExportFormat::Json if docs.len() == 1 => serde_json::to_string_pretty(&docs[0])?,
                ExportFormat::Json => serde_json::to_string_pretty(&docs)?,
                ExportFormat::Csv => crate::report::export::samples_csv(&docs),
            };
            match output {
                Some(file) => super::output::write_file(&file, &(text + "\n"))?,
                None => super::emit::emit_fmt!("{}", text.trim_end()),
            }
        }
        ResultsCommand::Delete { .. } => unreachable!("deleted above"),
    }
    Ok(())
}

/// `results push URL`.
fn push(url: &str, runs: &[String], db: Option<&Path>, json: bool) -> Result<()> {
    if !crate::remote::conn::is_url(url) {
        crate::usage_bail!(
            "push takes a postgresql:// URL (postgresql://USER@HOST:PORT/DATABASE), not '{}'",
            crate::remote::conn::redact_in(url)
        );
    }
    if super::reading::shared_url(db).is_some() {
        crate::usage_bail!(
            "--db names a shared store: push copies from a results file (--db FILE) to the URL"
        );
    }
    let path = crate::store::resolve_db_path(db)?;
    let mut store = Store::open_read_only(&path)?;
    let only = if runs.is_empty() {
        None
    } else {
        Some(
            runs.iter()
                .map(|r| store.resolve_run(r))
                .collect::<Result<Vec<_>>>()?,
        )
    };
    let mut bar: Option<crate::engine::progress::Progress> = None;
    let report = crate::remote::push::push(&mut store, url, only.as_deref(), &mut |done, total| {
        let bar = bar.get_or_insert_with(|| crate::engine::progress::Progress::new(total as u64));
        bar.skip(1);
        if done % 25 == 0 || done == total {
            bar.now(&format!("pushed {done} of {total} runs"));
            if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                bar.line(&format!("pushed {done} of {total} runs"));
            }
        }
    });
    if let Some(bar) = &bar {
        bar.finish();
    }
    let report = report?;
    if json {
        return super::emit::print_json(&report);
    }
    for lost in &report.reconnects {
        super::emit::emit_fmt!("The connection was lost ({lost}); reconnected and went on.");
    }
    super::emit::emit_fmt!(
        "Pushed {} run(s) from {} to {}; {} already there{}{}.",
        report.pushed.len(),
        path.display(),
        report.remote,
        report.already_there,
        if report.unfinished > 0 {
            format!(
                "; {} unfinished run(s) left out (still measuring, or interrupted)",
                report.unfinished
            )
        } else {
            String::new()
        },
        if report.bisections + report.tracks > 0 {
            format!(
                "; {} bisection(s) and {} track(s) copied or brought up to date{}",
                report.bisections,
                report.tracks,
                if report.unlinked_runs > 0 {
                    format!(
                        " ({} of their runs are not in the shared store: unfinished, or not \
                         pushed)",
                        report.unlinked_runs
                    )
                } else {
                    String::new()
                }
            )
        } else {
            String::new()
        }
    );
    Ok(())
}

/// A track's alarms, each an email in the kernel test robot's form (its
/// run read for the figures and the builds), or a line saying there is
/// none.
fn track_emails(store: &crate::store::Store, t: &crate::model::track::TrackRecord) -> String {
    let mails: Vec<String> = t
        .alarms()
        .map(|p| {
            let run = match &p.outcome {
                crate::model::track::Outcome::Measured {
                    run_id: Some(r), ..
                } => crate::read::document::load(store, *r).ok(),
                _ => None,
            };
            crate::report::sections::track::alarm_email(t, p, run.as_ref())
        })
        .collect();
    if mails.is_empty() {
        format!(
            "{}\nNo alarm: nothing to report.\n",
            crate::report::sections::track::headline(t)
        )
    } else {
        mails.join("\n-- \n\n")
    }
}
