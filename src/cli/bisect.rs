//! `secperf bisect SOURCE --good REV --bad REV -w WORKLOAD`: the first
//! commit that made a workload slower, each step a paired A/B across
//! boots of the revision against `--good`, with a stated error rate
//! (`engine::bisect`). Each step is an `overhead --kernel` run, stored;
//! the steps done are kept, so the same command after Ctrl-C goes on.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use crate::engine::bisect::{BisectOpts, Outcome, Revision, Step, StepTester, Tested};
use crate::model::bisect::{BisectionRecord, Status};
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

    /// The kernel command line of every boot, e.g. audit=1.
    #[arg(long, value_name = "ARGS", default_value = "")]
    pub append: String,

    /// A config fragment for every build. It is applied last: after the
    /// architecture's defconfig, virtme-ng's fragment and the options
    /// secperf needs (audit, seccomp, the LSMs), so that its settings win.
    #[arg(long, value_name = "FRAGMENT")]
    pub config: Option<PathBuf>,

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

/// A step: an `overhead --kernel` run of the revision against good.
struct OverheadSteps {
    ab: crate::engine::revision_ab::RevisionAb,
    good: Revision,
}

impl StepTester for OverheadSteps {
    fn test(&mut self, revision: &Revision, alpha: f64) -> Result<Tested> {
        crate::say!("secperf: bisect: testing {}", revision.short());
        self.ab.test("good", &self.good, revision, alpha, "bisect")
    }
}

/// What identifies a bisection: the same question gets the same key, so
/// the same command goes on (state file) and rewrites the same stored
/// record. Not --max-pairs: a step decided with fewer pairs stands, and an
/// undecided one is measured again (with the budget now given).
fn key(args: &BisectArgs, source: &Path, good: &str, bad: &str) -> String {
    let mut key = format!(
        "{}\n{good}\n{bad}\n{}\n{}\n{:?}\n{}\n{}\n{}",
        source.display(),
        args.workload.as_deref().unwrap_or(""),
        args.append,
        args.config,
        args.threshold,
        args.alpha,
        args.extra_steps,
    );
    // Appended only when given, so that earlier keys stay the same.
    if !args.command.is_empty() {
        key.push_str(&format!("\ncommand {:?}", args.command));
    }
    if !args.mechanisms.is_empty() {
        key.push_str(&format!("\nmechanisms {:?}", args.mechanisms));
    }
    if args.metric.metric() != crate::model::Metric::Time {
        key.push_str(&format!("\nmetric {}", args.metric.metric()));
    }
    crate::kbuild::sha256_hex(key.as_bytes())[..16].to_string()
}

pub fn bisect(args: BisectArgs, db: Option<&Path>, json: bool) -> Result<()> {
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
    if !args.source.is_dir() {
        usage_bail!(
            "bisect: {} is not a directory (give a git checkout of a kernel)",
            args.source.display()
        );
    }
    if super::reading::shared_url(db).is_some() {
        usage_bail!(
            "bisect stores its steps in a results file: give --db FILE, then `secperf results \
             push` copies the steps' runs to a shared store"
        );
    }
    let source = std::fs::canonicalize(&args.source)?;
    let ((good_commit, good_subject), series) =
        crate::kbuild::series::series(&source, &args.good, &args.bad)?;
    crate::kbuild::tools::check()?;
    let good = Revision {
        commit: good_commit.clone(),
        subject: good_subject,
    };
    let revisions: Vec<Revision> = series
        .into_iter()
        .map(|(commit, subject)| Revision { commit, subject })
        .collect();
    let bad = revisions
        .last()
        .expect("series has the bad endpoint")
        .clone();
    let k = crate::engine::bisect::decisions(revisions.len(), args.extra_steps);
    let alpha_step =
        crate::engine::bisect::step_alpha(args.alpha, revisions.len(), args.extra_steps);
    let id = key(&args, &source, &good.commit, &bad.commit);
    // Resumed from the store (read-only: a dry run writes nothing).
    let db_path = crate::store::resolve_db_path(db)?;
    let all_before = if db_path.exists() {
        let stored = crate::store::Store::open_read_only(&db_path)?
            .bisection(&id)
            .ok();
        BisectionRecord::resumed_steps(stored.as_ref())
    } else {
        Vec::new()
    };
    let (done, undecided_before) = crate::engine::bisect::split_steps(&all_before);
    let opts = BisectOpts {
        threshold_pct: args.threshold,
        alpha: args.alpha,
        extra: args.extra_steps,
        skip: args.skip.clone(),
        spent_before: undecided_before,
    };
    let what = match &args.workload {
        Some(w) => w.clone(),
        None => args.command.join(" "),
    };
    if args.dry_run {
        let text = format!(
            "Bisect {} revisions after {} up to {} on {what} (nothing is built or booted: \
             --dry-run)\nError budget: {k} decisions (the endpoint check, {} steps, {} for \
             skips), each at alpha {:.4} (whole bisection: {})\nA revision is bad when its \
             slowdown's interval lies above {:.1}%, good when below; at most {} pairs a step.\n\
             Steps already done (resumed): {}\nRevisions:\n{}",
            revisions.len(),
            good.short(),
            bad.short(),
            k - 1 - args.extra_steps,
            args.extra_steps,
            alpha_step,
            args.alpha,
            args.threshold / 2.0,
            args.max_pairs,
            done.len(),
            revisions
                .iter()
                .map(|r| format!("  {}", r.short()))
                .collect::<Vec<_>>()
                .join("\n")
        );
        if json {
            return super::print_json(&serde_json::json!({
                "id": id, "good": good, "revisions": revisions, "decisions": k,
                "step_alpha": alpha_step, "done": done,
            }));
        }
        super::emit(&text);
        return Ok(());
    }
    let seed = args
        .seed
        .unwrap_or_else(|| u64::from_str_radix(&good.commit[..15], 16).unwrap_or(1));
    let mut tester = OverheadSteps {
        ab: super::revision_ab::revision_ab(
            source.clone(),
            args.workload.clone(),
            args.command.clone(),
            args.mechanisms.clone(),
            args.append.clone(),
            args.config.clone(),
            args.threshold,
            args.max_pairs,
            args.metric.counting(true)?,
            seed,
            db_path.clone(),
        ),
        good: good.clone(),
    };
    // Every step's command line is checked before anything is built.
    tester.ab.check("good", &good, &bad, alpha_step)?;
    let store_record =
        |status: Status, outcome: Outcome, attempts: &[Step]| -> Result<BisectionRecord> {
            let mut store = crate::store::Store::open(&db_path)?;
            let now = chrono::Utc::now();
            let created_at = store.bisection(&id).map(|b| b.created_at).unwrap_or(now);
            let record = BisectionRecord {
                id: id.clone(),
                created_at,
                updated_at: now,
                command: std::env::args().skip(1).collect(),
                source: source.display().to_string(),
                workload: what.clone(),
                append: args.append.clone(),
                mechanisms: args.mechanisms.clone(),
                threshold_pct: args.threshold,
                alpha: args.alpha,
                metric: args.metric.metric(),
                status,
                outcome,
                attempts: attempts.to_vec(),
            };
            store.put_bisection(&record)?;
            Ok(record)
        };
    if !all_before.is_empty() {
        crate::say!(
            "secperf: bisect: going on from {} finished step(s) stored in {}{}",
            done.len(),
            db_path.display(),
            if undecided_before > 0 {
                format!(
                    "; {undecided_before} undecided attempt(s) are measured again, each \
                     having spent a decision of the budget"
                )
            } else {
                String::new()
            }
        );
    }
    crate::say!(
        "secperf: bisect {id}: stored in {} as it goes (`secperf results show --bisection \
         {id}`)",
        db_path.display()
    );
    let begun = std::time::Instant::now();
    // Kept whole, earlier undecided attempts included (they keep their
    // share of the budget when the bisection goes on again).
    let mut finished = all_before.clone();
    let result = crate::engine::bisect::bisect(
        &good,
        &revisions,
        &opts,
        &mut tester,
        &done,
        &mut |s, left| {
            finished.push(s.clone());
            store_record(
                Status::InProgress,
                crate::engine::bisect::in_progress(&good, &revisions, &opts, &finished, left),
                &finished,
            )?;
            crate::say!(
                "secperf: bisect: {} of at most {k}: {} is {}{} ({:.0} s building and \
                 booting; {:.0} s in all so far); {left} revision(s) left",
                if s.index + 1 == revisions.len() {
                    "the endpoint check, decision 1".to_string()
                } else {
                    format!("decision {}", finished.len())
                },
                s.revision.short(),
                s.class.word(),
                match &s.tested {
                    Tested::Measured {
                        estimate,
                        ci_low,
                        ci_high,
                        pairs,
                        ..
                    } =>
                        format!(": {estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}] in {pairs} pairs"),
                    Tested::Failed(why) => format!(": {why}"),
                },
                s.seconds,
                begun.elapsed().as_secs_f64()
            );
            Ok(())
        },
    );
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => {
            // The endpoint check said the endpoints do not differ: that
            // is the bisection's answer, stored as such.
            let endpoint = finished
                .iter()
                .rev()
                .find(|s| s.index + 1 == revisions.len());
            if crate::error::exit_code(&e) == 2
                && endpoint.is_some_and(|s| s.class != crate::engine::bisect::Class::Bad)
            {
                let mut o = crate::engine::bisect::in_progress(
                    &good,
                    &revisions,
                    &opts,
                    &finished,
                    revisions.len(),
                );
                o.verdict = format!("{e:#}");
                o.candidates.clear();
                store_record(Status::Stopped, o, &finished)?;
            }
            return Err(e);
        }
    };
    if let Some(path) = &args.log {
        std::fs::write(path, outcome.log.join("\n") + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let record = store_record(Status::Finished, outcome, &finished)?;
    if json {
        return super::print_json(&record);
    }
    super::emit(&crate::report::sections::bisect::text(&record));
    Ok(())
}
