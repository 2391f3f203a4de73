//! `secperf track` from its typed request to its stored record, in one
//! call ([`run`]): the track's key and lock, the branch's first parents
//! listed from git (fetched first when it follows a remote), the build
//! tools checked, each due revision an `overhead --kernel` run against the
//! last one measured (through [`RevisionAb`]), the record stored and the
//! Prometheus file rewritten after every test, alarms over several commits
//! bisected, and, unless `--once`, a look at the branch every interval.
//! The command line parses, calls this and renders what comes back.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::RevisionTester;
use super::branch;
use super::lock::TrackLock;
use crate::engine::series::SeriesSpec;
use crate::engine::series::revision_ab::RevisionAb;
use crate::model::bisect::{Revision, Tested};
use crate::model::track::{Direction, Question, TrackRecord};

/// A track, as asked (every value checked by the command line).
#[derive(Debug, Clone)]
pub struct TrackRequest {
    /// What every test measures.
    pub series: SeriesSpec,
    /// The ref followed; `None`: HEAD of a checkout with nothing
    /// uncommitted.
    pub branch: Option<String>,
    /// The revision a new track starts from.
    pub from: Option<String>,
    /// The false discovery rate of the whole stream.
    pub alpha: f64,
    /// Test every Nth first-parent commit.
    pub batch: usize,
    /// Test what is new and return, rather than look again every
    /// `interval`.
    pub once: bool,
    pub interval: humantime::Duration,
    /// Where to write the track's metrics for Prometheus (checked
    /// writable).
    pub prometheus: Option<PathBuf>,
    /// The results file (`--db`; the default one when none).
    pub db: Option<PathBuf>,
    /// The command line, as the record and the lock keep it.
    pub command_line: Vec<String>,
}

/// Why a track does not start: each is the command line's to word, since
/// each is answered with one of its flags.
#[derive(Debug, Clone)]
pub enum Refusal {
    /// No branch was given and the checkout (`source`, canonical) holds
    /// uncommitted changes to these files.
    Uncommitted {
        source: PathBuf,
        changed: Vec<String>,
    },
    /// The track `id` exists and started from `started`, not from the
    /// revision given (`from`).
    FromDiffers {
        from: String,
        id: String,
        started: Revision,
    },
    /// The track `id` is new and no revision to start from was given.
    NoFrom { id: String },
}

/// What this invocation of a track did.
#[derive(Debug, Clone)]
pub struct Looked {
    /// The track, as stored.
    pub record: TrackRecord,
    /// The positions tested now.
    pub tested_now: Vec<usize>,
    /// Commits after the last due one, waiting for their batch.
    pub waiting: usize,
    /// The alarms raised now.
    pub new_alarms: Vec<Direction>,
}

/// What [`run`] hands back.
#[derive(Debug, Clone)]
pub enum TrackOutcome {
    Refused(Refusal),
    Looked(Box<Looked>),
}

/// A test: an `overhead --kernel` run of the revision against the last
/// one measured.
struct Tests {
    ab: RevisionAb,
}

impl RevisionTester for Tests {
    fn compare(&mut self, baseline: &Revision, revision: &Revision, level: f64) -> Result<Tested> {
        crate::say!(
            "secperf: track: testing {} against {} at level {level:.2e} (it alarms at an \
             e-value of {:.0})",
            revision.short(),
            baseline.abbrev(),
            1.0 / level
        );
        let base = RevisionAb::name(baseline);
        self.ab.test(&base, baseline, revision, level, "track")
    }
}

/// What identifies a track: the same source, branch and question give the
/// same id, whatever the order of the options.
fn key(q: &Question) -> String {
    let text = format!(
        "{}\n{}\n{}\n{:?}\n{}\n{:?}\n{}\n{}\n{}\n{}",
        q.source,
        q.branch,
        q.workload,
        q.mechanisms,
        q.append,
        q.config,
        q.metric,
        q.threshold_pct,
        q.alpha,
        q.batch
    );
    crate::engine::series::key(&text)
}

/// Writes the track's Prometheus metrics to `file`, whole (a temporary
/// file renamed over it, so that the collector never reads half of it).
fn write_prometheus(file: &Path, t: &TrackRecord) -> Result<()> {
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, crate::report::formats::track_prometheus::render(t))
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("writing {}", file.display()))
}

/// The question `r` asks of `source` (canonical) on `branch`, without
/// `from`, which the stored track remembers.
fn question(r: &TrackRequest, source: &Path, branch: &str) -> Question {
    let s = &r.series;
    Question {
        source: source.display().to_string(),
        branch: branch.to_string(),
        from: Revision {
            commit: String::new(),
            subject: String::new(),
        },
        workload: match &s.workload {
            Some(w) => w.clone(),
            None => shell_words::join(&s.command),
        },
        mechanisms: s.mechanisms.clone(),
        append: s.append.clone(),
        config: s.config.as_ref().map(|c| c.display().to_string()),
        metric: s.metric,
        threshold_pct: s.threshold,
        alpha: r.alpha,
        batch: r.batch,
    }
}

/// Waits `interval`, or stops with an interrupt.
fn wait(interval: std::time::Duration) -> Result<()> {
    let stop = crate::engine::session::interrupt_flag()?;
    let until = std::time::Instant::now() + interval;
    while std::time::Instant::now() < until {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(crate::error::Interrupted.into());
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    Ok(())
}

/// A track begun: its key taken and locked, where it starts, its tests.
struct Begun {
    /// The source, canonical.
    source: PathBuf,
    branch_name: String,
    db_path: PathBuf,
    /// The question, `from` filled in when the track is new.
    question: Question,
    id: String,
    /// The commit the track starts from.
    from: String,
    /// The record stored before, if any.
    stored: Option<TrackRecord>,
    tests: Tests,
    _lock: TrackLock,
}

/// Begins the track `r` asks for: its key, its lock, its stored record
/// and where it starts, the build tools checked; or why it does not
/// start.
fn begin(r: &TrackRequest) -> Result<std::result::Result<Begun, Refusal>> {
    let source = std::fs::canonicalize(&r.series.source)?;
    let branch_name = match &r.branch {
        Some(b) => b.clone(),
        None => {
            let changed = branch::uncommitted(&source)?;
            if !changed.is_empty() {
                return Ok(Err(Refusal::Uncommitted { source, changed }));
            }
            "HEAD".to_string()
        }
    };
    let db_path = crate::store::resolve_db_path(r.db.as_deref())?;
    let question = question(r, &source, &branch_name);
    let id = key(&question);
    let lock = TrackLock::take(&id, &r.command_line)?;
    let stored = crate::store::Store::open(&db_path)?.track_by_id(&id)?;
    let from = match (&stored, &r.from) {
        (Some(t), None) => t.question.from.commit.clone(),
        (Some(t), Some(f)) => {
            let given = branch::commit_of(&source, f);
            if given != t.question.from.commit {
                return Ok(Err(Refusal::FromDiffers {
                    from: f.clone(),
                    id,
                    started: t.question.from.clone(),
                }));
            }
            given
        }
        (None, Some(f)) => f.clone(),
        (None, None) => return Ok(Err(Refusal::NoFrom { id })),
    };
    crate::engine::series::check_build_tools()?;
    let seed = u64::from_str_radix(&id[..15], 16).unwrap_or(1);
    let tests = Tests {
        ab: r.series.tests(&source, seed, &db_path)?,
    };
    Ok(Ok(Begun {
        source,
        branch_name,
        db_path,
        question,
        id,
        from,
        stored,
        tests,
        _lock: lock,
    }))
}

/// What one look at the branch tested.
struct Look {
    tested: Vec<usize>,
    new_alarms: Vec<Direction>,
    /// Commits waiting for their batch.
    waiting: usize,
}

/// One look at the branch: its first parents listed, every due revision
/// tested and stored, alarms over several commits bisected.
fn look(r: &TrackRequest, b: &mut Begun, record: &mut Option<TrackRecord>) -> Result<Look> {
    let ((from_commit, from_subject), commits) =
        crate::kbuild::series::first_parents(&b.source, &b.from, &b.branch_name)?;
    let branch = crate::engine::series::revisions(commits);
    let rec = record.get_or_insert_with(|| {
        b.question.from = Revision {
            commit: from_commit,
            subject: from_subject,
        };
        let now = chrono::Utc::now();
        TrackRecord {
            id: b.id.clone(),
            created_at: now,
            updated_at: now,
            command: r.command_line.clone(),
            question: b.question.clone(),
            stream: crate::stats::online::ELond::new(r.alpha),
            points: Vec::new(),
        }
    });
    rec.command = r.command_line.clone();
    let (due, waiting) = super::due(&branch, rec)?;
    if let Some((_, first)) = due.first() {
        // Every test's command line is checked before anything is built.
        b.tests
            .ab
            .check("base", rec.last_measured(), first, rec.stream.next_level())?;
        crate::say!(
            "secperf: track {}: {} to test on {} (every {} of {} commit(s) after {}), \
             stored in {} as it goes",
            b.id,
            due.len(),
            b.branch_name,
            if r.batch == 1 {
                "one".to_string()
            } else {
                format!("{}th", r.batch)
            },
            branch.len(),
            rec.question.from.abbrev(),
            b.db_path.display()
        );
    }
    let before = rec.points.len();
    let db_path = &b.db_path;
    let tested = super::advance(rec, &due, &mut b.tests, &mut |t| {
        let p = t.points.last().expect("a point was added");
        crate::say!(
            "secperf: track: {}",
            crate::report::sections::track::point_line(p)
        );
        crate::store::Store::open(db_path)?.put_track(t)?;
        match &r.prometheus {
            Some(f) => write_prometheus(f, t),
            None => Ok(()),
        }
    })?;
    let new_alarms = rec.points[before..]
        .iter()
        .filter_map(|p| p.alarm())
        .collect();
    super::alarms::bisect_alarms(rec, &branch, &mut b.tests.ab, db_path)?;
    if let Some(f) = &r.prometheus {
        write_prometheus(f, rec)?;
    }
    if rec.points.is_empty() {
        // Stored from its first look, so that `results` lists it.
        crate::store::Store::open(db_path)?.put_track(rec)?;
    }
    Ok(Look {
        tested,
        new_alarms,
        waiting,
    })
}

/// Runs the track `r` asks for: what is new on its branch tested and
/// stored, once (`once`) or at every look until interrupted; refused,
/// before anything is tested, for what [`Refusal`] names.
pub fn run(r: &TrackRequest) -> Result<TrackOutcome> {
    let mut b = match begin(r)? {
        Ok(b) => b,
        Err(refusal) => return Ok(TrackOutcome::Refused(refusal)),
    };
    let remote = branch::remote_of(&b.source, &b.branch_name);
    let mut record: Option<TrackRecord> = b.stored.take();
    let mut new_alarms: Vec<Direction> = Vec::new();
    let mut tested_now: Vec<usize> = Vec::new();
    loop {
        if let Some(remote) = &remote
            && !r.once
            && let Err(e) = branch::fetch(&b.source, remote)
        {
            crate::say!("secperf: track: git fetch {remote} failed ({e:#}); testing what is here");
        }
        let looked = look(r, &mut b, &mut record)?;
        new_alarms.extend(looked.new_alarms);
        tested_now.extend(looked.tested);
        if r.once {
            return Ok(TrackOutcome::Looked(Box::new(Looked {
                record: record.expect("the track was looked at"),
                tested_now,
                waiting: looked.waiting,
                new_alarms,
            })));
        }
        crate::say!(
            "secperf: track {}: nothing more to test{}; looking again in {} (Ctrl-C stops; \
             the next start goes on)",
            b.id,
            if looked.waiting > 0 {
                format!(" ({} commit(s) wait for their batch)", looked.waiting)
            } else {
                String::new()
            },
            r.interval
        );
        wait(*r.interval)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_track_keeps_the_key_it_had_when_the_cli_made_it() {
        // What `secperf track /tmp/series-cap/repo -w getppid --once` named
        // its track before the request was typed: stored tracks go on
        // under it.
        let r = TrackRequest {
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
            branch: None,
            from: None,
            alpha: 0.05,
            batch: 1,
            once: true,
            interval: std::time::Duration::from_secs(3600).into(),
            prometheus: None,
            db: None,
            command_line: Vec::new(),
        };
        let q = question(&r, Path::new("/tmp/series-cap/repo"), "HEAD");
        assert_eq!(key(&q), "ae93dea57b0a9b4b");
        // A command is its words joined as a shell would read them.
        let mut c = r.clone();
        c.series.workload = None;
        c.series.command = vec!["sh".into(), "-c".into(), "echo hi".into()];
        assert_eq!(
            question(&c, Path::new("/x"), "HEAD").workload,
            "sh -c 'echo hi'"
        );
    }
}
