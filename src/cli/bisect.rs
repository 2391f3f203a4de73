//! `secperf bisect SOURCE --good REV --bad REV -w WORKLOAD`: the first
//! commit that made a workload slower, each step a paired A/B across
//! boots of the revision against `--good`, with a stated error rate
//! (`engine::series::bisect`). Each step is an `overhead --kernel` run, stored;
//! the steps done are kept, so the same command after Ctrl-C goes on.
//!
//! Here: the arguments checked (each usage error names its flag) and typed
//! as an `engine::series::bisect::BisectRequest`, one call of
//! `engine::series::bisect::run`, and what comes back rendered (the dry run's
//! plan, or the stored record).

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use crate::engine::series::bisect::{BisectOutcome, BisectPlan, BisectRequest};
use crate::usage_bail;

#[derive(Debug, Args)]
pub struct BisectArgs {
    /// The kernel source: a git checkout. It is never touched: each
    /// revision is checked out into secperf's own build tree.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The older revision, without the slowdown.
    #[arg(long, value_name = "REV")]
    pub good: String,

    /// The newer revision, with the slowdown.
    #[arg(long, value_name = "REV")]
    pub bad: String,

    /// The workload every step measures (see `secperf list`); or a
    /// command after `--`.
    #[arg(short, long, value_name = "NAME", required_unless_present = "command",
          value_parser = super::args::Candidates::workloads(), hide_possible_values = true)]
    pub workload: Option<String>,

    /// A command every step measures instead of a workload: everything
    /// after `--`. One operation is one complete run of it (wall time),
    /// in the guest, whose root file system is this machine's; it must
    /// exit with status 0.
    #[arg(last = true, value_name = "CMD", conflicts_with = "workload")]
    pub command: Vec<String>,

    /// A mechanism on in every boot of every step, e.g. -m
    /// audit:rules=FILE (repeatable; see `secperf list`).
    #[arg(short, long = "mechanism", value_name = "SPEC")]
    pub mechanisms: Vec<String>,

    #[command(flatten)]
    pub revision: super::series::RevisionArgs,

    /// The slowdown that counts, percent of the workload's ns/op (or
    /// instructions per operation, with --metric instructions): a
    /// revision is bad when it is slower than --good by more than half of
    /// it (its whole interval), good when its whole interval is below half
    /// of it.
    #[arg(long, default_value_t = 5.0, value_name = "PCT")]
    pub threshold: f64,

    /// The whole bisection's error rate: the probability that the named
    /// commit is wrong, split over the endpoint check and every step
    /// (Bonferroni, docs/methodology.md).
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    pub alpha: f64,

    /// Revisions not to test (they do not build or boot), as `git bisect
    /// skip`; repeatable. A revision that fails to build or boot is
    /// skipped by itself.
    #[arg(long, value_name = "REV")]
    pub skip: Vec<String>,

    /// Steps kept for skips, beyond log2 of the revisions: the error budget
    /// is shared over log2 of the revisions and these.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub extra_steps: usize,

    /// Pairs of boots a step may take before it is undecided.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub max_pairs: u32,

    /// The seed of every step's boot order (default: from the revisions).
    #[arg(long)]
    pub seed: Option<u64>,

    /// Write the `git bisect log`-compatible log here (for `git bisect
    /// replay`).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Show the revisions, the error budget and what is cached, and stop.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub metric: super::args::MetricArgs,
}

/// Checks the arguments (usage errors name the flag) and types them.
fn request(args: &BisectArgs, db: Option<&Path>) -> Result<BisectRequest> {
    if let Some(log) = &args.log {
        super::paths::check_output_file(log, "--log")?;
    }
    if !(args.threshold > 0.0 && args.threshold < 1000.0) {
        usage_bail!(
            "--threshold {}: give a slowdown in percent above 0 (e.g. 5)",
            args.threshold
        );
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        usage_bail!(
            "--alpha {}: give an error rate between 0 and 1 (e.g. 0.05)",
            args.alpha
        );
    }
    if let Some(w) = &args.workload
        && crate::workloads::find(w).is_none()
    {
        usage_bail!(
            "-w {w}: unknown workload{} (see `secperf list`); bisect measures one workload",
            crate::params::did_you_mean(w, crate::workloads::WORKLOADS.iter().map(|d| d.name))
        );
    }
    if args.max_pairs < 3 {
        usage_bail!(
            "--max-pairs {}: a step needs at least 3 pairs",
            args.max_pairs
        );
    }
    super::series::check_source("bisect", &args.source)?;
    if super::reading::shared_url(db).is_some() {
        usage_bail!(
            "bisect stores its steps in a results file: give --db FILE, then `secperf results \
             push` copies the steps' runs to a shared store"
        );
    }
    let measured = super::series::Measured {
        source: &args.source,
        workload: &args.workload,
        command: &args.command,
        mechanisms: &args.mechanisms,
        revision: &args.revision,
        threshold: args.threshold,
        max_pairs: args.max_pairs,
        metric: &args.metric,
    };
    Ok(BisectRequest {
        series: measured.spec(),
        good: args.good.clone(),
        bad: args.bad.clone(),
        alpha: args.alpha,
        skip: args.skip.clone(),
        extra_steps: args.extra_steps,
        seed: args.seed,
        log: args.log.clone(),
        dry_run: args.dry_run,
        db: db.map(Path::to_path_buf),
        command_line: super::series::command_line(),
    })
}

/// The dry run's plan, as people read it.
fn plan_text(args: &BisectArgs, p: &BisectPlan) -> String {
    let bad = p.revisions.last().expect("series has the bad endpoint");
    format!(
        "Bisect {} revisions after {} up to {} on {} (nothing is built or booted: \
         --dry-run)\nError budget: {} decisions (the endpoint check, {} steps, {} for \
         skips), each at alpha {:.4} (whole bisection: {})\nA revision is bad when its \
         slowdown's interval lies above {:.1}%, good when below; at most {} pairs a step.\n\
         Steps already done (resumed): {}\nRevisions:\n{}",
        p.revisions.len(),
        p.good.short(),
        bad.short(),
        p.what,
        p.decisions,
        p.decisions - 1 - args.extra_steps,
        args.extra_steps,
        p.step_alpha,
        args.alpha,
        args.threshold / 2.0,
        args.max_pairs,
        p.done.len(),
        p.revisions
            .iter()
            .map(|r| format!("  {}", r.short()))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

pub fn bisect(args: BisectArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let request = request(&args, db)?;
    match crate::engine::series::bisect::run(&request)? {
        BisectOutcome::Planned(p) if json => super::emit::print_json(&serde_json::json!({
            "id": p.id, "good": p.good, "revisions": p.revisions, "decisions": p.decisions,
            "step_alpha": p.step_alpha, "done": p.done,
        })),
        BisectOutcome::Planned(p) => {
            super::emit::emit(&plan_text(&args, &p));
            Ok(())
        }
        BisectOutcome::Finished(record) if json => super::emit::print_json(&record),
        BisectOutcome::Finished(record) => {
            super::emit::emit(&crate::report::sections::bisect::text(&record));
            Ok(())
        }
    }
}
