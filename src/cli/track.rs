//! `secperf track SOURCE --from REV -w WORKLOAD`: every new revision of a
//! branch measured against the one tested before it, paired across boots,
//! alarms raised under e-LOND so that the false discovery rate over the
//! whole stream stays at `--alpha` (`engine::series::track`, `stats::online`).
//! The track is stored after every test: run again, it goes on.
//!
//! Here: the arguments checked (each usage error names its flag) and typed
//! as an `engine::series::track::TrackRequest`, one call of `engine::series::track::run`,
//! its refusals worded with the flag that answers them, and what it
//! tested rendered, with `--once`'s exit status.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use crate::engine::series::track::{Looked, Refusal, TrackOutcome, TrackRequest};
use crate::model::track::{Direction, TrackRecord};
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

    #[command(flatten)]
    pub revision: super::series::RevisionArgs,

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
    super::series::check_source("track", &args.source)
}

/// Checks the arguments (usage errors name the flag) and types them.
fn request(args: &TrackArgs, db: Option<&Path>) -> Result<TrackRequest> {
    check(args)?;
    if let Some(file) = &args.prometheus {
        super::paths::check_output_file(file, "--prometheus")?;
    }
    if super::reading::shared_url(db).is_some() {
        usage_bail!(
            "track stores its tests in a results file: give --db FILE, then `secperf results \
             push` copies them to a shared store"
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
    Ok(TrackRequest {
        series: measured.spec(),
        branch: args.branch.clone(),
        from: args.from.clone(),
        alpha: args.alpha,
        batch: args.batch,
        once: args.once,
        interval: args.interval,
        prometheus: args.prometheus.clone(),
        db: db.map(Path::to_path_buf),
        command_line: super::series::command_line(),
    })
}

/// A refusal of the engine, worded with the flag that answers it.
fn refused(r: Refusal) -> anyhow::Error {
    match r {
        Refusal::Uncommitted { source, changed } => crate::error::UsageError::new(format!(
            "track: {} has uncommitted changes ({}{}), which a track does not test: it tests \
             commits. Commit them, or give --branch REF to follow a branch whatever the \
             checkout holds (--branch HEAD follows HEAD as it is)",
            source.display(),
            changed[0],
            match changed.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            }
        ))
        .into(),
        Refusal::FromDiffers { from, id, started } => crate::error::UsageError::new(format!(
            "--from {from}: track {id} started from {} and goes on from where it stopped; \
             drop --from, or start another track in another --db",
            started.short()
        ))
        .into(),
        Refusal::NoFrom { id } => crate::error::UsageError::new(format!(
            "track {id} is new: give --from REV, the revision it starts from (e.g. the release \
             tag the branch builds on)"
        ))
        .into(),
    }
}

pub fn track(args: TrackArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let request = request(&args, db)?;
    let Looked {
        record,
        tested_now,
        waiting,
        new_alarms,
    } = match crate::engine::series::track::run(&request)? {
        TrackOutcome::Refused(r) => return Err(refused(r)),
        TrackOutcome::Looked(looked) => *looked,
    };
    if json {
        let mut doc = serde_json::to_value(&record)?;
        doc["alarms"] = serde_json::to_value(record.alarms().collect::<Vec<_>>())?;
        doc["tested_now"] = serde_json::to_value(&tested_now)?;
        doc["nothing_new"] = serde_json::Value::Bool(tested_now.is_empty());
        doc["waiting_for_batch"] = serde_json::to_value(waiting)?;
        super::emit::print_json(&doc)?;
    } else {
        super::emit::emit(&summary(&record, &tested_now, waiting));
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
        out.push_str(&format!(
            "  {}\n",
            crate::report::sections::track::point_line(p)
        ));
    }
    out.push_str(&format!(
        "Next test's level: {:.2e} (an e-value of {:.0} alarms)",
        r.stream.next_level(),
        r.stream.next_bar()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engines_refusals_are_usage_errors_worded_with_their_flags() {
        let e = refused(Refusal::Uncommitted {
            source: "/src/linux".into(),
            changed: vec!["a.c".into(), "b.c".into(), "c.c".into()],
        });
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(
            format!("{e:#}"),
            "track: /src/linux has uncommitted changes (a.c and 2 more), which a track does not \
             test: it tests commits. Commit them, or give --branch REF to follow a branch \
             whatever the checkout holds (--branch HEAD follows HEAD as it is)"
        );
        let started = crate::model::bisect::Revision {
            commit: "c8af92a7378c4679c105a7ececa208bb90f99351".into(),
            subject: "three".into(),
        };
        let e = refused(Refusal::FromDiffers {
            from: "HEAD~1".into(),
            id: "ae93dea57b0a9b4b".into(),
            started,
        });
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(
            format!("{e:#}"),
            "--from HEAD~1: track ae93dea57b0a9b4b started from c8af92a7378c (three) and goes on \
             from where it stopped; drop --from, or start another track in another --db"
        );
        let e = refused(Refusal::NoFrom {
            id: "ae93dea57b0a9b4b".into(),
        });
        assert!(format!("{e:#}").starts_with("track ae93dea57b0a9b4b is new: give --from REV"));
    }
}
