//! `secperf track SOURCE --from REV -w WORKLOAD`: every new revision of a
//! branch measured against the one tested before it, paired across boots,
//! alarms raised under e-LOND so that the false discovery rate over the
//! whole stream stays at `--alpha` (`engine::track`, `stats::online`).
//! The track is stored after every test: run again, it goes on.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use crate::engine::revision_ab::RevisionAb;
use crate::engine::track::RevisionTester;
use crate::model::bisect::{Revision, Tested};
use crate::model::track::{Direction, Outcome, Question, TrackRecord};
use crate::usage_bail;

/// Exit status of `--once` when this invocation raised an alarm of a
/// slowdown.
pub const EXIT_SLOWER: i32 = 3;
/// Exit status of `--once` when it raised alarms of speed-ups only.
pub const EXIT_FASTER: i32 = 4;

#[derive(Debug, Args)]
pub struct TrackArgs {
    /// The kernel source: a git checkout. It is never changed (each
    /// revision is checked out into secperf's own build tree), except that
    /// polling fetches a remote-tracking --branch's remote.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The branch (or any ref) followed, by its first parents: a merge is
    /// one commit. Default: HEAD, of a checkout with nothing uncommitted
    /// (a track tests commits).
    #[arg(long, value_name = "REF")]
    pub branch: Option<String>,

    /// The revision the track starts from, its first baseline (needed the
    /// first time; a track that exists goes on from where it stopped).
    #[arg(long, value_name = "REV")]
    pub from: Option<String>,

    /// The workload every test measures (see `secperf list`); or a command
    /// after `--`.
    #[arg(short, long, value_name = "NAME", required_unless_present = "command",
          value_parser = super::args::Candidates::workloads(), hide_possible_values = true)]
    pub workload: Option<String>,

    /// A command every test measures instead of a workload: everything
    /// after `--`. One operation is one complete run of it (wall time), in
    /// the guest; it must exit with status 0.
    #[arg(last = true, value_name = "CMD", conflicts_with = "workload")]
    pub command: Vec<String>,

    /// A mechanism on in every boot of every test, e.g. -m
    /// audit:rules=FILE (repeatable).
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

    /// The change that counts, percent of the figure per op: of the
    /// workload's ns, or its instructions with --metric instructions. A test
    /// alarms when its whole interval lies beyond half of it, slower or
    /// faster.
    #[arg(long, default_value_t = 5.0, value_name = "PCT")]
    pub threshold: f64,

    /// The false discovery rate of the whole stream (e-LOND): the expected
    /// share of false alarms among the alarms, at every point of the
    /// track, however long it runs. Each test's own level is a share of it
    /// (printed before the test).
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    pub alpha: f64,

    /// Test every Nth first-parent commit; the commits in between wait for
    /// their batch to fill.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub batch: usize,

    /// Pairs of boots a test may take: then it stops without an alarm.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub max_pairs: u32,

    /// Test what is new and exit: 0 without a new alarm, 3 with a new
    /// alarm of a slowdown, 4 with new alarms of speed-ups only.
    #[arg(long, conflicts_with = "interval")]
    pub once: bool,

    /// How long to wait between looks at the branch: e.g. 30m, 1h, 2h30m
    /// (not with --once).
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub interval: humantime::Duration,

    /// Also write the track's metrics to this file, for Prometheus: in its
    /// text format, after every test (for the node exporter's textfile collector:
    /// the latest change and level, tests and alarms so far).
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<PathBuf>,

    #[command(flatten)]
    pub metric: super::args::MetricArgs,
}

/// Writes the track's Prometheus metrics to `file`, whole (a temporary
/// file renamed over it, so that the collector never reads half of it).
fn write_prometheus(file: &Path, t: &TrackRecord) -> Result<()> {
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, crate::report::formats::track_prometheus::render(t))
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("writing {}", file.display()))
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
    crate::kbuild::sha256_hex(text.as_bytes())[..16].to_string()
}

/// Held while a track runs: a second invocation of the same track refuses,
/// naming this one.
struct TrackLock {
    _file: std::fs::File,
}

impl TrackLock {
    fn take(id: &str) -> Result<TrackLock> {
        let dir = crate::kbuild::writable_cache_root()?.join("track");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(format!("{id}.lock"));
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        match f.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                usage_bail!(
                    "track {id} is already running: {} (one track at a time; stop it, or let \
                     it test what is new)",
                    holder.trim()
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()));
            }
        }
        f.set_len(0)?;
        writeln!(
            f,
            "pid {} (`secperf {}`), since {}",
            std::process::id(),
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
        )?;
        Ok(TrackLock { _file: f })
    }
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

fn check(args: &TrackArgs) -> Result<()> {
    if !(args.threshold > 0.0 && args.threshold < 1000.0) {
        usage_bail!(
            "--threshold {}: give a change in percent above 0 (e.g. 5)",
            args.threshold
        );
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        usage_bail!(
            "--alpha {}: give a false discovery rate between 0 and 1 (e.g. 0.05)",
            args.alpha
        );
    }
    if args.batch == 0 {
        usage_bail!("--batch 0: give how many commits a test covers, 1 or more");
    }
    if args.max_pairs < 3 {
        usage_bail!(
            "--max-pairs {}: a test needs at least 3 pairs",
            args.max_pairs
        );
    }
    if args.interval.as_secs() < 60 && !args.once {
        usage_bail!(
            "--interval {}: give at least a minute between looks (e.g. 30m)",
            args.interval
        );
    }
    if let Some(w) = &args.workload
        && crate::workloads::find(w).is_none()
    {
        usage_bail!(
            "-w {w}: unknown workload{} (see `secperf list`); a track measures one workload",
            crate::params::did_you_mean(w, crate::workloads::WORKLOADS.iter().map(|d| d.name))
        );
    }
    if !args.source.is_dir() {
        usage_bail!(
            "track: {} is not a directory (give a git checkout of a kernel)",
            args.source.display()
        );
    }
    Ok(())
}

/// The remote a remote-tracking ref follows (`origin` of
/// `origin/master`), if `branch` is one.
fn remote_of(source: &Path, branch: &str) -> Option<String> {
    let full =
        crate::kbuild::source::git(source, &["rev-parse", "--symbolic-full-name", branch]).ok()?;
    let rest = full.strip_prefix("refs/remotes/")?;
    Some(rest.split('/').next()?.to_string())
}

/// Without --branch a track follows HEAD, which must hold everything the
/// checkout has: uncommitted changes would look tracked and are not.
fn dirty_head(source: &Path) -> Result<()> {
    if !crate::kbuild::source::is_git(source) {
        // first_parents says so.
        return Ok(());
    }
    // Staged or not; files git does not track are not a change.
    let changed = crate::kbuild::source::git(source, &["diff", "--name-only", "HEAD"])?;
    if let Some(first) = changed.lines().next() {
        usage_bail!(
            "track: {} has uncommitted changes ({}{}), which a track does not test: it tests \
             commits. Commit them, or give --branch REF to follow a branch whatever the \
             checkout holds (--branch HEAD follows HEAD as it is)",
            source.display(),
            first,
            match changed.lines().count() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            }
        );
    }
    Ok(())
}

pub fn track(args: TrackArgs, db: Option<&Path>, json: bool) -> Result<()> {
    check(&args)?;
    if let Some(file) = &args.prometheus {
        super::paths::check_output_file(file, "--prometheus")?;
    }
    if super::reading::shared_url(db).is_some() {
        usage_bail!(
            "track stores its tests in a results file: give --db FILE, then `secperf results \
             push` copies them to a shared store"
        );
    }
    let source = std::fs::canonicalize(&args.source)?;
    let branch_name = match &args.branch {
        Some(b) => b.clone(),
        None => {
            dirty_head(&source)?;
            "HEAD".to_string()
        }
    };
    let db_path = crate::store::resolve_db_path(db)?;
    let workload = match &args.workload {
        Some(w) => w.clone(),
        None => shell_words::join(&args.command),
    };
    // The question without `from`, which the stored track remembers.
    let mut question = Question {
        source: source.display().to_string(),
        branch: branch_name.clone(),
        from: Revision {
            commit: String::new(),
            subject: String::new(),
        },
        workload,
        mechanisms: args.mechanisms.clone(),
        append: args.append.clone(),
        config: args.config.as_ref().map(|c| c.display().to_string()),
        metric: args.metric.metric(),
        threshold_pct: args.threshold,
        alpha: args.alpha,
        batch: args.batch,
    };
    let id = key(&question);
    let _lock = TrackLock::take(&id)?;
    let stored = crate::store::Store::open(&db_path)?.track_by_id(&id)?;
    let from = match (&stored, &args.from) {
        (Some(t), None) => t.question.from.commit.clone(),
        (Some(t), Some(f)) => {
            let given =
                crate::kbuild::source::git(&source, &["rev-parse", &format!("{f}^{{commit}}")])
                    .unwrap_or_default();
            if given != t.question.from.commit {
                usage_bail!(
                    "--from {f}: track {id} started from {} and goes on from where it stopped; \
                     drop --from, or start another track in another --db",
                    t.question.from.short()
                );
            }
            given
        }
        (None, Some(f)) => f.clone(),
        (None, None) => usage_bail!(
            "track {id} is new: give --from REV, the revision it starts from (e.g. the release \
             tag the branch builds on)"
        ),
    };
    crate::kbuild::tools::check()?;
    let seed = u64::from_str_radix(&id[..15], 16).unwrap_or(1);
    let mut tests = Tests {
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
    };
    let remote = remote_of(&source, &branch_name);
    let mut record: Option<TrackRecord> = stored;
    let mut new_alarms: Vec<Direction> = Vec::new();
    let mut tested_now: Vec<usize> = Vec::new();
    let mut waiting;
    loop {
        if let Some(r) = &remote
            && !args.once
            && let Err(e) = crate::kbuild::source::git(&source, &["fetch", "--quiet", r])
        {
            crate::say!("secperf: track: git fetch {r} failed ({e:#}); testing what is here");
        }
        let ((from_commit, from_subject), commits) =
            crate::kbuild::series::first_parents(&source, &from, &branch_name)?;
        let branch: Vec<Revision> = commits
            .into_iter()
            .map(|(commit, subject)| Revision { commit, subject })
            .collect();
        let rec = record.get_or_insert_with(|| {
            question.from = Revision {
                commit: from_commit,
                subject: from_subject,
            };
            let now = chrono::Utc::now();
            TrackRecord {
                id: id.clone(),
                created_at: now,
                updated_at: now,
                command: std::env::args().skip(1).collect(),
                question: question.clone(),
                stream: crate::stats::online::ELond::new(args.alpha),
                points: Vec::new(),
            }
        });
        rec.command = std::env::args().skip(1).collect();
        let (due, wait) = crate::engine::track::due(&branch, rec)?;
        waiting = wait;
        if let Some((_, first)) = due.first() {
            // Every test's command line is checked before anything is built.
            tests
                .ab
                .check("base", rec.last_measured(), first, rec.stream.next_level())?;
            crate::say!(
                "secperf: track {id}: {} to test on {} (every {} of {} commit(s) after {}), \
                 stored in {} as it goes",
                due.len(),
                branch_name,
                if args.batch == 1 {
                    "one".to_string()
                } else {
                    format!("{}th", args.batch)
                },
                branch.len(),
                rec.question.from.abbrev(),
                db_path.display()
            );
        }
        let before = rec.points.len();
        let tested = crate::engine::track::advance(rec, &due, &mut tests, &mut |r| {
            let p = r.points.last().expect("a point was added");
            crate::say!("secperf: track: {}", point_line(p));
            crate::store::Store::open(&db_path)?.put_track(r)?;
            match &args.prometheus {
                Some(f) => write_prometheus(f, r),
                None => Ok(()),
            }
        })?;
        new_alarms.extend(rec.points[before..].iter().filter_map(|p| p.alarm()));
        tested_now.extend(tested);
        crate::engine::track_alarms::bisect_alarms(rec, &branch, &mut tests.ab, &db_path)?;
        if let Some(f) = &args.prometheus {
            write_prometheus(f, rec)?;
        }
        if rec.points.is_empty() {
            // Stored from its first look, so that `results` lists it.
            crate::store::Store::open(&db_path)?.put_track(rec)?;
        }
        if args.once {
            break;
        }
        crate::say!(
            "secperf: track {id}: nothing more to test{}; looking again in {} (Ctrl-C stops; \
             the next start goes on)",
            if waiting > 0 {
                format!(" ({waiting} commit(s) wait for their batch)")
            } else {
                String::new()
            },
            args.interval
        );
        let stop = crate::engine::session::interrupt_flag()?;
        let until = std::time::Instant::now() + *args.interval;
        while std::time::Instant::now() < until {
            if stop.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(crate::error::Interrupted.into());
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
    let record = record.expect("the track was looked at");
    if json {
        let mut doc = serde_json::to_value(&record)?;
        doc["alarms"] = serde_json::to_value(record.alarms().collect::<Vec<_>>())?;
        doc["tested_now"] = serde_json::to_value(&tested_now)?;
        doc["nothing_new"] = serde_json::Value::Bool(tested_now.is_empty());
        doc["waiting_for_batch"] = serde_json::to_value(waiting)?;
        super::print_json(&doc)?;
    } else {
        super::emit(&summary(&record, &tested_now, waiting));
    }
    let code = if new_alarms.contains(&Direction::Slower) {
        EXIT_SLOWER
    } else if new_alarms.is_empty() {
        0
    } else {
        EXIT_FASTER
    };
    if code != 0 {
        return Err(crate::error::Exit(code).into());
    }
    Ok(())
}

/// One tested revision in a line.
fn point_line(p: &crate::model::track::Point) -> String {
    match &p.outcome {
        Outcome::Measured {
            estimate,
            ci_low,
            ci_high,
            pairs,
            run_id,
            alarm,
        } => format!(
            "{} against {}: {estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}] at level {:.2e} in \
             {pairs} pairs (run {}){}",
            p.revision.short(),
            p.baseline.abbrev(),
            p.level.unwrap_or(f64::NAN),
            run_id.map_or("?".into(), |r| r.to_string()),
            match alarm {
                Some(d) => format!(
                    ": ALARM, {}{}",
                    d.word(),
                    match (&p.culprit, &p.culprit_note) {
                        (Some(c), _) => format!("; the commit: {}", c.short()),
                        (None, Some(n)) => format!("; {n}"),
                        (None, None) => String::new(),
                    }
                ),
                None => String::new(),
            }
        ),
        Outcome::Failed { why } => format!("{}: skipped ({why})", p.revision.short()),
    }
}

/// What this invocation did, and the track's alarms.
fn summary(r: &TrackRecord, tested_now: &[usize], waiting: usize) -> String {
    let mut out = format!(
        "Track {} of {} on {} ({} from {}): {} tested, {} alarm(s); false discovery rate {} \
         over the stream (e-LOND)\n",
        r.id,
        r.question.workload,
        r.question.branch,
        r.question.source,
        r.question.from.short(),
        r.points.len(),
        r.alarms().count(),
        r.question.alpha
    );
    if tested_now.is_empty() {
        out.push_str("Nothing new to test");
        if waiting > 0 {
            out.push_str(&format!(" ({waiting} commit(s) wait for their batch)"));
        }
        out.push('\n');
    }
    for p in r
        .points
        .iter()
        .filter(|p| tested_now.contains(&p.position) || p.alarm().is_some())
    {
        out.push_str(&format!("  {}\n", point_line(p)));
    }
    out.push_str(&format!(
        "Next test's level: {:.2e} (an e-value of {:.0} alarms)",
        r.stream.next_level(),
        r.stream.next_bar()
    ));
    out
}
