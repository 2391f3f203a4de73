//! `secperf compare A B [C...]`: stored runs side by side, each later run
//! against the first, unpaired statistics, in any output format.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use crate::compare::{CompareOpts, build};
use crate::report::formats::Format;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Runs: ids, labels (the latest run with that label), `latest` or
    /// `latest~N`. The first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub runs: Vec<String>,

    /// Output format. `email`: plain ASCII within 72 columns for a mailing
    /// list or commit message; `benchstat`: Go benchmark lines (with -o DIR,
    /// one file per run).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Write to this file (a directory for --format benchstat) instead of stdout.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub decision: super::args::DecisionArgs,

    /// Compare emulated guests' runs with others' too: runs measured in an
    /// emulated VM guest with runs that were not (refused otherwise: the
    /// difference would be the emulator's).
    #[arg(long)]
    pub force: bool,

    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
}

pub fn compare(args: CompareArgs, db: Option<&Path>, json: bool) -> Result<()> {
    // The table is the default, so only another format conflicts.
    super::output::refuse_json_beside(json, Some(&args.format).filter(|f| **f != Format::Table))?;
    args.decision.resolve()?;
    let (store, _) = super::reading::open(db)?;
    let runs = args
        .runs
        .iter()
        .map(|spec| store.load_run(store.resolve_run(spec)?))
        .collect::<Result<Vec<_>>>()?;
    crate::compare::check_metrics(&runs)?;
    // The noise band and margin of the runs' metric (0.5% for counted
    // instructions) where none is given.
    let metric = runs
        .first()
        .map(|r| crate::model::metric::of_params(&r.meta.params))
        .unwrap_or_default();
    let decision = args.decision.resolve_for(metric)?;
    crate::compare::check_emulation(&runs, args.force)?;
    let command = format!("secperf compare {}", args.runs.join(" "));
    let report = build(
        &runs,
        &CompareOpts {
            decision,
            seed: args.seed,
        },
        &command,
    );
    let format = if json { Format::Json } else { args.format };
    super::output::write_report(&report, format, args.output.as_deref())
}
