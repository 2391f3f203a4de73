//! `secperf bisect` from its typed request to its stored record, in one
//! call ([`run`]): the revisions listed from git, the build tools checked,
//! the bisection's key, the steps resumed from the store, each step an
//! `overhead --kernel` run of the revision against `--good` (through
//! [`RevisionAb`]), the record rewritten after every step and the `git
//! bisect log` written. The command line parses, calls this and renders
//! what comes back.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{BisectOpts, Class, Outcome, Revision, Step, StepTester, Tested};
use crate::engine::revision_ab::RevisionAb;
use crate::engine::series::SeriesSpec;
use crate::model::bisect::{BisectionRecord, Status};

/// A bisection, as asked (every value checked by the command line).
#[derive(Debug, Clone)]
pub struct BisectRequest {
    /// What every step measures.
    pub series: SeriesSpec,
    /// The older revision, without the slowdown.
    pub good: String,
    /// The newer revision, with the slowdown.
    pub bad: String,
    /// The whole bisection's error rate.
    pub alpha: f64,
    /// Revisions not to test (`--skip`).
    pub skip: Vec<String>,
    /// Steps kept for skips.
    pub extra_steps: usize,
    /// The seed of every step's boot order (default: from the revisions).
    pub seed: Option<u64>,
    /// Where to write the `git bisect log` (checked writable).
    pub log: Option<PathBuf>,
    /// Plan only: nothing is built, booted or written.
    pub dry_run: bool,
    /// The results file (`--db`; the default one when none).
    pub db: Option<PathBuf>,
    /// The command line, as the record keeps it.
    pub command_line: Vec<String>,
}

/// What a dry run found: the bisection planned, nothing built.
#[derive(Debug, Clone)]
pub struct BisectPlan {
    pub id: String,
    pub good: Revision,
    /// After `good`, oldest first, the bad endpoint last.
    pub revisions: Vec<Revision>,
    /// The decisions the error budget is shared by.
    pub decisions: usize,
    pub step_alpha: f64,
    /// The steps already done (resumed).
    pub done: Vec<Step>,
    /// What is measured: the workload, or the command.
    pub what: String,
}

/// What [`run`] hands back.
#[derive(Debug, Clone)]
pub enum BisectOutcome {
    /// `--dry-run`: the plan.
    Planned(BisectPlan),
    /// The bisection finished, as stored.
    Finished(Box<BisectionRecord>),
}

/// A step: an `overhead --kernel` run of the revision against good.
struct OverheadSteps {
    ab: RevisionAb,
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
fn key(r: &BisectRequest, source: &Path, good: &str, bad: &str) -> String {
    let s = &r.series;
    let mut key = format!(
        "{}\n{good}\n{bad}\n{}\n{}\n{:?}\n{}\n{}\n{}",
        source.display(),
        s.workload.as_deref().unwrap_or(""),
        s.append,
        s.config,
        s.threshold,
        r.alpha,
        r.extra_steps,
    );
    // Appended only when given, so that earlier keys stay the same.
    if !s.command.is_empty() {
        key.push_str(&format!("\ncommand {:?}", s.command));
    }
    if !s.mechanisms.is_empty() {
        key.push_str(&format!("\nmechanisms {:?}", s.mechanisms));
    }
    if s.metric != crate::model::Metric::Time {
        key.push_str(&format!("\nmetric {}", s.metric));
    }
    crate::engine::series::key(&key)
}

/// One finished step in a line, for the progress on stderr.
fn step_line(s: &Step, decision: String, k: usize, left: usize, so_far: f64) -> String {
    format!(
        "secperf: bisect: {decision} of at most {k}: {} is {}{} ({:.0} s building and \
         booting; {so_far:.0} s in all so far); {left} revision(s) left",
        s.revision.short(),
        s.class.word(),
        match &s.tested {
            Tested::Measured {
                estimate,
                ci_low,
                ci_high,
                pairs,
                ..
            } => format!(": {estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}] in {pairs} pairs"),
            Tested::Failed(why) => format!(": {why}"),
        },
        s.seconds,
    )
}

/// Runs the bisection `r` asks for (or plans it, with `dry_run`): stored
/// in the results file after every step, resumed from it when the same
/// bisection was begun before. An endpoint check that finds no slowdown
/// is stored as the bisection's answer and returned as the usage error
/// it is.
pub fn run(r: &BisectRequest) -> Result<BisectOutcome> {
    let source = std::fs::canonicalize(&r.series.source)?;
    let ((good_commit, good_subject), series) =
        crate::kbuild::series::series(&source, &r.good, &r.bad)?;
    crate::engine::series::check_build_tools()?;
    let good = Revision {
        commit: good_commit,
        subject: good_subject,
    };
    let revisions = crate::engine::series::revisions(series);
    let bad = revisions
        .last()
        .expect("series has the bad endpoint")
        .clone();
    let k = super::decisions(revisions.len(), r.extra_steps);
    let alpha_step = super::step_alpha(r.alpha, revisions.len(), r.extra_steps);
    let id = key(r, &source, &good.commit, &bad.commit);
    // Resumed from the store (read-only: a dry run writes nothing).
    let db_path = crate::store::resolve_db_path(r.db.as_deref())?;
    let all_before = if db_path.exists() {
        let stored = crate::store::Store::open_read_only(&db_path)?
            .bisection(&id)
            .ok();
        BisectionRecord::resumed_steps(stored.as_ref())
    } else {
        Vec::new()
    };
    let (done, undecided_before) = super::split_steps(&all_before);
    let opts = BisectOpts {
        threshold_pct: r.series.threshold,
        alpha: r.alpha,
        extra: r.extra_steps,
        skip: r.skip.clone(),
        spent_before: undecided_before,
    };
    let what = match &r.series.workload {
        Some(w) => w.clone(),
        None => r.series.command.join(" "),
    };
    if r.dry_run {
        return Ok(BisectOutcome::Planned(BisectPlan {
            id,
            good,
            revisions,
            decisions: k,
            step_alpha: alpha_step,
            done,
            what,
        }));
    }
    let seed = r
        .seed
        .unwrap_or_else(|| u64::from_str_radix(&good.commit[..15], 16).unwrap_or(1));
    let mut tester = OverheadSteps {
        ab: r.series.tests(&source, seed, &db_path)?,
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
                command: r.command_line.clone(),
                source: source.display().to_string(),
                workload: what.clone(),
                append: r.series.append.clone(),
                mechanisms: r.series.mechanisms.clone(),
                threshold_pct: r.series.threshold,
                alpha: r.alpha,
                metric: r.series.metric,
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
    let result = super::bisect(
        &good,
        &revisions,
        &opts,
        &mut tester,
        &done,
        &mut |s, left| {
            finished.push(s.clone());
            store_record(
                Status::InProgress,
                super::in_progress(&good, &revisions, &opts, &finished, left),
                &finished,
            )?;
            let decision = if s.index + 1 == revisions.len() {
                "the endpoint check, decision 1".to_string()
            } else {
                format!("decision {}", finished.len())
            };
            let so_far = begun.elapsed().as_secs_f64();
            crate::say!("{}", step_line(s, decision, k, left, so_far));
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
            if crate::error::exit_code(&e) == 2 && endpoint.is_some_and(|s| s.class != Class::Bad) {
                let mut o =
                    super::in_progress(&good, &revisions, &opts, &finished, revisions.len());
                o.verdict = format!("{e:#}");
                o.candidates.clear();
                store_record(Status::Stopped, o, &finished)?;
            }
            return Err(e);
        }
    };
    if let Some(path) = &r.log {
        std::fs::write(path, outcome.log.join("\n") + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let record = store_record(Status::Finished, outcome, &finished)?;
    Ok(BisectOutcome::Finished(Box::new(record)))
}
