//! `secperf suite NAME`: one reference experiment with one command.
//!
//! Plans the suite for this machine (ladders capped at its CPUs), checks
//! every input (the baseline run exists and is the same suite), measures
//! the current side as results and the live-switchable mechanisms as A/B
//! pairs, stores both in one run (kind `suite`, label the suite's name
//! unless given), and prints the post-shaped report read back from the
//! store, so `--report RUN` prints exactly the same tables later.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde::{Deserialize, Serialize};

use super::common::cache_dir;
use super::progress::Progress;
use super::run::install_interrupt_handlers;
use crate::mechanisms::{Availability, Scope, Treatment};
use crate::model::{Skipped, StoredRun};
use crate::overhead::{Case, Design};
use crate::runner::{self, MeasureOpts};
use crate::safety::StateLock;
use crate::stats::decision::{DecisionOpts, min_pairs_for};
use crate::store::Store;
use crate::suites::avc::{AvcDelta, AvcStats};
use crate::suites::render::{ReportParts, render};
use crate::suites::{self, PlanCtx, SuiteDef, SuitePlan};
use crate::usage_bail;

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// The suite to run, or `list` to see them with what each reproduces.
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
    #[arg(long, value_name = "RUN", conflicts_with_all = ["quick", "label", "seed", "scratch"])]
    pub report: Option<String>,

    /// Seed for the AB/BA coin and the bootstrap [default: from the clock].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Directory for the files workloads create (the filesystem under test)
    /// [default: the system temporary directory].
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

/// What a suite run records about itself (the run's params), enough to
/// plan it again and print its report later.
#[derive(Debug, Serialize, Deserialize)]
struct SuiteRecord {
    suite: String,
    version: u32,
    quick: bool,
    cpus: usize,
    pairs: u32,
    seed: u64,
    skipped: Vec<Skipped>,
    /// The plan as measured (for people reading the JSON; the report is
    /// re-planned from suite, version, quick and cpus).
    plan: serde_json::Value,
}

#[derive(Serialize)]
struct SuiteOutput<'a> {
    run_id: i64,
    suite: &'a str,
    version: u32,
    label: &'a str,
    baseline_run_id: Option<i64>,
    db: &'a Path,
    system: &'a serde_json::Value,
    skipped: &'a [Skipped],
    notes: &'a [String],
    ab: Option<crate::suites::render::Section>,
    runs: crate::suites::render::Section,
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
    let db_path = crate::store::resolve_db_path(db)?;
    let mut store = Store::open(&db_path)?;
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

    let cpus = crate::sys::cpus::allowed_cpus().context("reading this process's CPU affinity")?;
    let plan = (def.plan)(&PlanCtx {
        quick: args.quick,
        cpus: cpus.len(),
    });
    plan.validate()?;

    // Treatments that can run here; the others are reported with the reason.
    let mut treatments = Vec::new();
    let mut skipped = Vec::new();
    for spec in &plan.treatments {
        let t = Treatment::parse(spec)?;
        match t.mechanism.probe() {
            Availability::Available => treatments.push(t),
            Availability::Unavailable(reason) => skipped.push(Skipped {
                mechanism: t.to_string(),
                reason,
            }),
        }
    }
    // Each case with the task mode of its item.
    let mut cases = Vec::new();
    for t in &treatments {
        for item in &plan.ab_items {
            for &n in &item.tasks {
                let case = Case {
                    workload: item.def(),
                    workload_params: item.full_params(),
                    treatment: t.clone(),
                    tasks: n,
                };
                cases.push((case, item.mode));
            }
        }
    }
    let decision = DecisionOpts::default();
    let pairs = min_pairs_for(cases.len(), decision.alpha).max(plan.ab.min_pairs);
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    let label = args.label.clone().unwrap_or_else(|| def.name.to_string());

    install_interrupt_handlers()?;
    let lock = if cases
        .iter()
        .any(|(c, _)| c.treatment.mechanism.scope() == Scope::System)
    {
        Some(StateLock::acquire(std::time::Duration::from_secs(60))?)
    } else {
        None
    };

    let run_slices: u64 = plan
        .current
        .iter()
        .map(|i| i.tasks.len() as u64 * (plan.run.samples + plan.run.warmup) as u64)
        .sum();
    let ab_slices =
        cases.len() as u64 * 2 * pairs as u64 * (plan.ab.warmup + plan.ab.samples_per_half) as u64;
    let ab_text = match cases.len() {
        0 => "no A/B comparison".to_string(),
        n => format!("{n} A/B comparisons x {pairs} pairs"),
    };
    eprintln!(
        "secperf: suite {} v{}: {} measurements and {ab_text}, about {:.0} s of measurement",
        def.name,
        def.version,
        plan.current.iter().map(|i| i.tasks.len()).sum::<usize>(),
        (run_slices * plan.run.sample_ms + ab_slices * plan.ab.sample_ms) as f64 / 1000.0 * 1.2
    );
    let record = SuiteRecord {
        suite: def.name.into(),
        version: def.version,
        quick: args.quick,
        cpus: cpus.len(),
        pairs,
        seed,
        skipped: skipped.clone(),
        plan: serde_json::to_value(&plan)?,
    };
    let meta = super::common::run_meta("suite", &label, &record)?;
    let run_id = store.begin_run(&meta)?;
    let progress = Progress::new(run_slices + ab_slices);
    let measured = measure(
        &mut store,
        run_id,
        &plan,
        &cases,
        &Design {
            pairs,
            sample_ms: plan.ab.sample_ms,
            samples_per_half: plan.ab.samples_per_half,
            warmup: plan.ab.warmup,
            mode: crate::model::Mode::Process,
            cpus,
            scratch_root: scratch,
            cache_dir: cache_dir(),
            seed,
        },
        lock.as_ref(),
        &progress,
        &decision,
    );
    progress.finish();
    measured.with_context(|| {
        format!(
            "run {run_id}: what was measured so far is stored (`secperf results show {run_id}`)"
        )
    })?;
    drop(lock);
    store.finish_run(run_id)?;
    let run = store.load_run(run_id)?;
    let reported = (run, record);
    print_report(
        &store,
        def,
        &reported,
        baseline.as_ref().map(|b| &b.0),
        &db_path,
        json,
    )
}

/// The current side, then the A/B comparisons; everything stored as it
/// is measured.
#[allow(clippy::too_many_arguments)]
fn measure(
    store: &mut Store,
    run_id: i64,
    plan: &SuitePlan,
    cases: &[(Case, crate::model::Mode)],
    design: &Design,
    lock: Option<&StateLock>,
    progress: &Progress,
    decision: &DecisionOpts,
) -> Result<()> {
    let avc_root = Path::new("/");
    let avc_active = plan.collect_avc && AvcStats::read(avc_root)?.is_some();
    for item in &plan.current {
        for &n in &item.tasks {
            let opts = MeasureOpts {
                tasks: n,
                mode: item.mode,
                cpus: design.cpus.clone(),
                warmup: plan.run.warmup,
                samples: plan.run.samples,
                sample_ms: plan.run.sample_ms,
                scratch_root: design.scratch_root.clone(),
                cache_dir: cache_dir(),
                params: item.full_params(),
            };
            progress.start(&format!("{} tasks={n}", item.name()));
            let before = if avc_active {
                AvcStats::read(avc_root)?
            } else {
                None
            };
            let r = runner::measure(item.def(), &opts, &mut |t| progress.tick(t))?;
            if let Some(before) = before
                && let Some(after) = AvcStats::read(avc_root)?
            {
                let delta = AvcDelta {
                    workload: item.name(),
                    tasks: n as u32,
                    stats: before.delta(&after),
                };
                store.add_run_note(run_id, AVC_NOTE, &serde_json::to_value(&delta)?)?;
            }
            store.add_result(run_id, &r)?;
            progress.line(&format!(
                "{} tasks={n}: {} ops/s, {} per op",
                item.name(),
                crate::report::si(r.ops_per_sec.median),
                crate::report::ns(r.ns_per_op.median)
            ));
        }
    }
    let cases = cases.iter().map(|(case, mode)| {
        let design = Design {
            mode: *mode,
            ..design.clone()
        };
        (case, design, "")
    });
    super::common::measure_comparisons(
        store,
        run_id,
        cases,
        lock,
        design.seed,
        progress,
        decision,
    )?;
    Ok(())
}

/// The note name of AVC counters.
const AVC_NOTE: &str = "avc";

/// Loads `spec` and checks it is a run of suite `def` at its version.
fn load_suite_run(
    store: &Store,
    spec: &str,
    def: &SuiteDef,
    flag: &str,
) -> Result<(StoredRun, SuiteRecord)> {
    let run = store.load_run(store.resolve_run(spec)?)?;
    let record: Option<SuiteRecord> = (run.meta.kind == "suite")
        .then(|| serde_json::from_value(run.meta.params.clone()).ok())
        .flatten();
    match record {
        Some(r) if r.suite == def.name && r.version == def.version => Ok((run, r)),
        Some(r) if r.suite == def.name => usage_bail!(
            "{flag} {spec}: run {} was made by {} v{}, this secperf has v{}: their measurements \
             differ; use `secperf compare` for a plain comparison",
            run.run_id,
            r.suite,
            r.version,
            def.version
        ),
        Some(r) => usage_bail!(
            "{flag} {spec}: run {} is suite {}, not {} (see `secperf results list`)",
            run.run_id,
            r.suite,
            def.name
        ),
        None => usage_bail!(
            "{flag} {spec}: run {} is a `{}` run, not a run of suite {} (see `secperf results list`)",
            run.run_id,
            run.meta.kind,
            def.name
        ),
    }
}

fn print_report(
    store: &Store,
    def: &'static SuiteDef,
    (run, record): &(StoredRun, SuiteRecord),
    baseline: Option<&StoredRun>,
    db_path: &Path,
    json: bool,
) -> Result<()> {
    let plan = (def.plan)(&PlanCtx {
        quick: record.quick,
        cpus: record.cpus,
    });
    let avc: Option<Vec<AvcDelta>> = if plan.collect_avc {
        let notes = store.run_notes(run.run_id, AVC_NOTE)?;
        let deltas = notes
            .into_iter()
            .map(serde_json::from_value)
            .collect::<Result<Vec<AvcDelta>, _>>()
            .context("reading the AVC statistics of the run")?;
        let selinux_on = run
            .meta
            .system
            .pointer("/selinux/state")
            .and_then(|s| s.as_str())
            .is_some_and(|s| s == "enforcing" || s == "permissive");
        (selinux_on || !deltas.is_empty()).then_some(deltas)
    } else {
        None
    };
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
    let (ab, runs) = crate::suites::render::sections(&parts);
    let text = render(&parts, ab.as_ref(), &runs);
    if json {
        return super::print_json(&SuiteOutput {
            run_id: run.run_id,
            suite: def.name,
            version: def.version,
            label: &run.meta.label,
            baseline_run_id: baseline.map(|b| b.run_id),
            db: db_path,
            system: &run.meta.system,
            skipped: &record.skipped,
            notes: &plan.notes,
            ab,
            runs,
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
        seed: &'static str,
        reproduces: &'static str,
        measures: &'static str,
    }
    let entries: Vec<Entry> = suites::SUITES
        .iter()
        .map(|s| Entry {
            name: s.name,
            version: s.version,
            seed: s.seed,
            reproduces: s.title,
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
            format!("{}\n(shared/seeds/{})", e.reproduces, e.seed),
            e.measures.to_string(),
        ]);
    }
    super::emit_fmt!("{t}");
    super::emit_fmt!(
        "Run one with `secperf suite NAME` (`--quick` for a fast pass); `secperf suite NAME --help` \
         explains the options."
    );
    Ok(())
}
