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
use crate::engine::series::SeriesSpec;
use crate::engine::series::revision_ab::RevisionAb;
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

/// Writes a bisection's record, whole, after every step.
struct Recorder<'a> {
    r: &'a BisectRequest,
    db_path: &'a Path,
    id: &'a str,
    /// The source, canonical.
    source: &'a Path,
    /// The workload, or the command.
    what: &'a str,
}

impl Recorder<'_> {
    /// Stores the record of the bisection at `status` with `outcome`
    /// and every step `attempts` (its first time of writing kept).
    fn store(
        &self,
        status: Status,
        outcome: Outcome,
        attempts: &[Step],
    ) -> Result<BisectionRecord> {
        let (r, s) = (self.r, &self.r.series);
        let mut store = crate::store::Store::open(self.db_path)?;
        let now = chrono::Utc::now();
        let created_at = store
            .bisection(self.id)
            .map(|b| b.created_at)
            .unwrap_or(now);
        let record = BisectionRecord {
            id: self.id.to_string(),
            created_at,
            updated_at: now,
            command: r.command_line.clone(),
            source: self.source.display().to_string(),
            workload: self.what.to_string(),
            append: s.append.clone(),
            mechanisms: s.mechanisms.clone(),
            threshold_pct: s.threshold,
            alpha: r.alpha,
            metric: s.metric,
            status,
            outcome,
            attempts: attempts.to_vec(),
        };
        store.put_bisection(&record)?;
        Ok(record)
    }
}

/// Says that the bisection goes on from what is stored.
fn say_resumed(done: usize, undecided_before: usize, db_path: &Path) {
    crate::say!(
        "secperf: bisect: going on from {done} finished step(s) stored in {}{}",
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

/// The steps stored by an earlier run of bisection `id` (none when the
/// results file does not exist yet; read-only: a dry run writes nothing).
fn stored_steps(db_path: &Path, id: &str) -> Result<Vec<Step>> {
    if !db_path.exists() {
        return Ok(Vec::new());
    }
    let stored = crate::store::Store::open_read_only(db_path)?
        .bisection(id)
        .ok();
    Ok(BisectionRecord::resumed_steps(stored.as_ref()))
}

/// A bisection planned: its revisions, error budget, key and the steps
/// an earlier run of it stored.
struct Planned {
    /// The source, canonical.
    source: PathBuf,
    good: Revision,
    bad: Revision,
    revisions: Vec<Revision>,
    decisions: usize,
    step_alpha: f64,
    id: String,
    db_path: PathBuf,
    /// Every step stored before, undecided attempts included.
    all_before: Vec<Step>,
    /// The stored steps taken as they are.
    done: Vec<Step>,
    opts: BisectOpts,
    /// The workload, or the command.
    what: String,
}

/// Plans the bisection `r` asks for: its revisions listed from git, the
/// build tools checked, its key, what was stored before.
fn plan(r: &BisectRequest) -> Result<Planned> {
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
    let id = key(r, &source, &good.commit, &bad.commit);
    let db_path = crate::store::resolve_db_path(r.db.as_deref())?;
    let all_before = stored_steps(&db_path, &id)?;
    let (done, undecided_before) = super::split_steps(&all_before);
    Ok(Planned {
        decisions: super::decisions(revisions.len(), r.extra_steps),
        step_alpha: super::step_alpha(r.alpha, revisions.len(), r.extra_steps),
        opts: BisectOpts {
            threshold_pct: r.series.threshold,
            alpha: r.alpha,
            extra: r.extra_steps,
            skip: r.skip.clone(),
            spent_before: undecided_before,
        },
        what: match &r.series.workload {
            Some(w) => w.clone(),
            None => r.series.command.join(" "),
        },
        source,
        good,
        bad,
        revisions,
        id,
        db_path,
        all_before,
        done,
    })
}

/// Runs the bisection `r` asks for (or plans it, with `dry_run`): stored
/// in the results file after every step, resumed from it when the same
/// bisection was begun before. An endpoint check that finds no slowdown
/// is stored as the bisection's answer and returned as the usage error
/// it is.
pub fn run(r: &BisectRequest) -> Result<BisectOutcome> {
    let p = plan(r)?;
    if r.dry_run {
        return Ok(BisectOutcome::Planned(BisectPlan {
            id: p.id,
            good: p.good,
            revisions: p.revisions,
            decisions: p.decisions,
            step_alpha: p.step_alpha,
            done: p.done,
            what: p.what,
        }));
    }
    measure(r, &p).map(|record| BisectOutcome::Finished(Box::new(record)))
}

/// Measures the bisection planned: every step stored as it ends, the log
/// written, the record stored finished.
fn measure(r: &BisectRequest, p: &Planned) -> Result<BisectionRecord> {
    let (good, revisions, k) = (&p.good, &p.revisions, p.decisions);
    let seed = r
        .seed
        .unwrap_or_else(|| u64::from_str_radix(&good.commit[..15], 16).unwrap_or(1));
    let mut tester = OverheadSteps {
        ab: r.series.tests(&p.source, seed, &p.db_path)?,
        good: good.clone(),
    };
    // Every step's command line is checked before anything is built.
    tester.ab.check("good", good, &p.bad, p.step_alpha)?;
    let recorder = Recorder {
        r,
        db_path: &p.db_path,
        id: &p.id,
        source: &p.source,
        what: &p.what,
    };
    if !p.all_before.is_empty() {
        say_resumed(p.done.len(), p.opts.spent_before, &p.db_path);
    }
    crate::say!(
        "secperf: bisect {id}: stored in {} as it goes (`secperf results show --bisection \
         {id}`)",
        p.db_path.display(),
        id = p.id
    );
    let begun = std::time::Instant::now();
    // Kept whole, earlier undecided attempts included (they keep their
    // share of the budget when the bisection goes on again).
    let mut finished = p.all_before.clone();
    let result = super::bisect(
        good,
        revisions,
        &p.opts,
        &mut tester,
        &p.done,
        &mut |s, left| {
            finished.push(s.clone());
            recorder.store(
                Status::InProgress,
                super::in_progress(good, revisions, &p.opts, &finished, left),
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
            store_stopped(&recorder, p, &finished, &e)?;
            return Err(e);
        }
    };
    if let Some(path) = &r.log {
        std::fs::write(path, outcome.log.join("\n") + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    recorder.store(Status::Finished, outcome, &finished)
}

/// When the endpoint check said the endpoints do not differ (`e`, a
/// usage error), that is the bisection's answer: stored as such.
fn store_stopped(
    recorder: &Recorder<'_>,
    p: &Planned,
    finished: &[Step],
    e: &anyhow::Error,
) -> Result<()> {
    let n = p.revisions.len();
    let endpoint = finished.iter().rev().find(|s| s.index + 1 == n);
    if crate::error::exit_code(e) == 2 && endpoint.is_some_and(|s| s.class != Class::Bad) {
        let mut o = super::in_progress(&p.good, &p.revisions, &p.opts, finished, n);
        o.verdict = format!("{e:#}");
        o.candidates.clear();
        recorder.store(Status::Stopped, o, finished)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request of `secperf bisect /tmp/series-cap/repo --good G --bad
    /// B -w getppid` with every default.
    fn request() -> BisectRequest {
        BisectRequest {
            series: SeriesSpec {
                source: "/tmp/series-cap/repo".into(),
                workload: Some("getppid".into()),
                command: Vec::new(),
                mechanisms: Vec::new(),
                append: String::new(),
                config: None,
                threshold: 5.0,
                max_pairs: 16,
                metric: crate::model::Metric::Time,
            },
            good: "HEAD~2".into(),
            bad: "HEAD".into(),
            alpha: 0.05,
            skip: Vec::new(),
            extra_steps: 2,
            seed: None,
            log: None,
            dry_run: true,
            db: None,
            command_line: Vec::new(),
        }
    }

    #[test]
    fn a_bisection_keeps_the_key_it_had_when_the_cli_made_it() {
        // What `secperf bisect --dry-run --json` printed for this question
        // before the request was typed: stored bisections go on under it.
        let (good, bad) = (
            "67d5ee8ff7526cab76b1cad19cc97a84d536417c",
            "c8af92a7378c4679c105a7ececa208bb90f99351",
        );
        let r = request();
        assert_eq!(
            key(&r, Path::new("/tmp/series-cap/repo"), good, bad),
            "73ba73b0edd68f30"
        );
        // --max-pairs is not part of it; the question's other parts are.
        let mut more = request();
        more.series.max_pairs = 3;
        assert_eq!(
            key(&more, Path::new("/tmp/series-cap/repo"), good, bad),
            "73ba73b0edd68f30"
        );
        more.series.metric = crate::model::Metric::Instructions;
        assert_ne!(
            key(&more, Path::new("/tmp/series-cap/repo"), good, bad),
            "73ba73b0edd68f30"
        );
    }
}
