//! `secperf suite NAME`: one reference experiment with one command.
//!
//! Plans the suite for this machine (ladders capped at its CPUs), checks
//! every input (the baseline run exists and is the same suite), measures
//! the current side as results and the live-switchable mechanisms as A/B
//! pairs, stores both in one run (kind `suite`, label the suite's name
//! unless given), and prints the post-shaped report read back from the
//! store, so `--report RUN` prints exactly the same tables later.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::args::ProfileArgs;
use crate::engine::measurer::Live;
use crate::engine::session::{RunSpec, Session, open_store, seed_or_clock};
use crate::engine::suite::{SuiteRecord, SuiteRun, avc_deltas, load_suite_run};
use crate::model::{Skipped, StoredRun};
use crate::stats::decision::DecisionOpts;
use crate::store::Store;
use crate::suites::avc::AvcDelta;
use crate::suites::sections::{ReportParts, sections};
use crate::suites::text::render;
use crate::suites::{self, SuiteDef};
use crate::usage_bail;

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// The suite to run, or `list` to see them with the post each reproduces
    /// (author, subject, list, date, archive link).
    #[arg(value_name = "NAME|list")]
    pub name: String,

    /// Fast pass: shorter samples and fewer pairs (about a minute or less
    /// per suite on 2 CPUs).
    #[arg(long)]
    pub quick: bool,

    /// Label of the stored run [default: the suite's name]; name the boot
    /// or kernel ("selinux-off", "6.18-patched") to compare sides later.
    #[arg(short, long, value_name = "TEXT")]
    pub label: Option<String>,

    /// A stored run of the same suite (id, label, `latest~N`) to print
    /// beside this one, e.g. the other boot or kernel.
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,

    /// Print the report of a stored run of this suite instead of measuring.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["quick", "label", "seed", "scratch", "profile"])]
    pub report: Option<String>,

    /// Seed for the AB/BA coin and the bootstrap [default: from the clock].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Directory for the files workloads create (the filesystem under test)
    /// [default: the system temporary directory].
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,

    #[command(flatten)]
    pub profile: ProfileArgs,

    #[command(flatten)]
    pub wait: super::args::WaitArgs,
}

#[derive(Serialize)]
struct SuiteOutput<'a> {
    run_id: i64,
    suite: &'a str,
    version: u32,
    /// The mailing-list post the suite reproduces.
    reproduces: &'a suites::Citation,
    label: &'a str,
    baseline_run_id: Option<i64>,
    db: &'a Path,
    system: &'a serde_json::Value,
    skipped: &'a [Skipped],
    notes: &'a [String],
    ab: Option<crate::report::model::Report>,
    runs: crate::report::model::Report,
    avc: Option<Vec<AvcDelta>>,
    comparisons: &'a [crate::model::Comparison],
    results: &'a [crate::model::WorkloadResult],
    report: String,
}

pub fn suite(args: SuiteArgs, db: Option<&Path>, json: bool) -> Result<()> {
    if args.name == "list" {
        return list(json);
    }
    let Some(def) = suites::find(&args.name) else {
        usage_bail!(
            "unknown suite '{}' (valid: {}; see `secperf suite list`)",
            args.name,
            suites::names()
        );
    };
    if let Some(dir) = args.scratch.as_ref().filter(|d| !d.is_dir()) {
        usage_bail!("--scratch {}: not a directory", dir.display());
    }
    let (db_path, store) = open_store(db)?;
    let baseline = args
        .baseline
        .as_deref()
        .map(|spec| load_suite_run(&store, spec, def, "--baseline"))
        .transpose()?;
    if let Some(spec) = &args.report {
        let run = load_suite_run(&store, spec, def, "--report")?;
        return print_report(
            &store,
            def,
            &run,
            baseline.as_ref().map(|b| &b.0),
            &db_path,
            json,
        );
    }

    let suite = SuiteRun::new(
        def,
        args.quick,
        seed_or_clock(args.seed),
        args.profile.resolve()?,
    )?;
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    let measuring = args.wait.lock()?;
    let label = args.label.clone().unwrap_or_else(|| def.name.to_string());
    let ab_text = match suite.cases.len() {
        0 => "no A/B comparison".to_string(),
        n => format!("{n} A/B comparisons x {} pairs", suite.record.pairs),
    };
    eprintln!(
        "secperf: suite {} v{}: {} measurements and {ab_text}, about {:.0} s of measurement",
        def.name,
        def.version,
        suite
            .plan
            .current
            .iter()
            .map(|i| i.tasks.len())
            .sum::<usize>(),
        suite.estimate_s()
    );
    let (run_slices, ab_slices) = suite.slices();
    let mut session = Session::begin_measuring(
        measuring,
        db_path,
        store,
        &RunSpec {
            kind: "suite",
            label: &label,
            params: &suite.record,
            system_wide: suite.system_wide(),
            slices: run_slices + ab_slices,
            seed: Some(suite.record.seed),
        },
    )?;
    let lock = session.lock.take();
    let measured = suite.measure(
        &mut session,
        &mut Live {
            lock: lock.as_ref(),
        },
        &scratch,
    );
    drop(lock);
    measured.map_err(|e| session.stopped(e))?;
    session.finish()?;
    let run = session.store.load_run(session.run_id)?;
    print_report(
        &session.store,
        def,
        &(run, suite.record),
        baseline.as_ref().map(|b| &b.0),
        &session.db_path,
        json,
    )
}

fn print_report(
    store: &Store,
    def: &'static SuiteDef,
    (run, record): &(StoredRun, SuiteRecord),
    baseline: Option<&StoredRun>,
    db_path: &Path,
    json: bool,
) -> Result<()> {
    let plan = record.replan(def);
    let avc = avc_deltas(store, run, &plan)?;
    let decision = DecisionOpts::default();
    let parts = ReportParts {
        suite: def,
        plan: &plan,
        run,
        baseline,
        skipped: &record.skipped,
        avc: avc.as_deref(),
        decision,
    };
    let (ab, runs) = sections(&parts);
    let text = render(&parts, ab.as_ref(), &runs);
    if json {
        return super::print_json(&SuiteOutput {
            run_id: run.run_id,
            suite: def.name,
            version: def.version,
            reproduces: &def.post,
            label: &run.meta.label,
            baseline_run_id: baseline.map(|b| b.run_id),
            db: db_path,
            system: &run.meta.system,
            skipped: &record.skipped,
            notes: &plan.notes,
            ab: ab.map(|s| s.report),
            runs: runs.report,
            avc,
            comparisons: &run.comparisons,
            results: &run.results,
            report: text,
        });
    }
    super::emit_fmt!("{}", text.trim_end());
    let label = if run.meta.label.is_empty() {
        String::new()
    } else {
        format!(" label '{}'", run.meta.label)
    };
    super::emit_fmt!(
        "Stored as run {}{label} in {}.",
        run.run_id,
        db_path.display()
    );
    Ok(())
}

fn list(json: bool) -> Result<()> {
    #[derive(Serialize)]
    struct Entry {
        name: &'static str,
        version: u32,
        reproduces: &'static str,
        /// The post: author, date, list, subject, link.
        post: suites::Citation,
        measures: &'static str,
    }
    let entries: Vec<Entry> = suites::SUITES
        .iter()
        .map(|s| Entry {
            name: s.name,
            version: s.version,
            reproduces: s.title,
            post: s.post,
            measures: s.summary,
        })
        .collect();
    if json {
        return super::print_json(&entries);
    }
    let mut t = crate::report::table::new_table(&["suite", "reproduces", "measures"]);
    for e in &entries {
        t.add_row(vec![
            format!("{} v{}", e.name, e.version),
            format!("{}\n{}", e.reproduces, e.post.text()),
            e.measures.to_string(),
        ]);
    }
    super::emit_fmt!("{t}");
    super::emit_fmt!(
        "Run one with `secperf suite NAME` (`--quick` for a fast pass); `secperf suite NAME --help` \
         explains the options; `secperf --json suite list` gives each post's archive link."
    );
    Ok(())
}
