//! `secperf suite NAME`: one reference experiment with one command.
//!
//! Plans the suite for this machine (ladders capped at its CPUs), checks
//! every input (the baseline run exists and is the same suite), measures
//! the current side as results and the live-switchable mechanisms as A/B
//! pairs, stores both in one run (kind `suite`, label the suite's name
//! unless given), and shows the run document read back from the store,
//! whose suite part is the post-shaped report: by default as fixed-width
//! text in the post's shape, or in any `--format`, so `--report RUN`
//! prints exactly the same tables later. `--json` is the run document,
//! equal to `secperf results export RUN --json` of the run; with
//! `--baseline B` it is that document with the suite part's sections
//! computed against B (`suite.baseline_run_id`, `suite.differences`).

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::args::{ProfileArgs, ReportFormatArgs};
use crate::engine::session::{open_store, seed_or_clock};
use crate::engine::suite::{SuiteRun, load_suite_run};
use crate::model::StoredRun;
use crate::read::suite::suite_doc;
use crate::report::sections::Parts;
use crate::store::Store;
use crate::suites;
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

    /// A stored run of this suite to print beside this one: an id, a
    /// label or `latest~N`, e.g. the other boot or kernel. With --json: this
    /// run's document, its suite part's sections computed against RUN.
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,

    /// Print a stored run of this suite instead of measuring: its report.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["quick", "label", "seed", "scratch", "profile"])]
    pub report: Option<String>,

    /// Seed for the AB/BA coin and the bootstrap [default: the clock].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Directory for the files workloads create: choose the filesystem
    /// under test [default: the system temporary directory].
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,

    #[command(flatten)]
    pub profile: ProfileArgs,

    #[command(flatten)]
    pub output: ReportFormatArgs,

    #[command(flatten)]
    pub wait: super::args::WaitArgs,

    #[command(flatten)]
    pub metric: super::args::MetricArgs,

    #[command(flatten)]
    pub vm: super::vm::VmArgs,

    /// The post's other side in one command, given twice (the baseline
    /// first): the suite runs in a VM guest of each kernel (one boot each,
    /// labelled NAME), then prints the second against the first in the
    /// post's tables (unpaired: for an A/B paired across boots use
    /// `overhead --kernel`). A directory is a kernel source tree to build,
    /// as with `overhead --kernel`. The keys after NAME=IMAGE|SOURCE,
    /// comma-separated: rev=REV, patch=FILE (repeatable), config=FRAGMENT,
    /// cpus=N, memory=SIZE, append=ARGS.
    #[arg(long = "kernel",
          value_name = "NAME=KERNEL,...",
          conflicts_with_all = ["vm", "baseline", "report", "label"])]
    pub kernels: Vec<String>,

    /// A config fragment for the arms built from source: with --kernel, for
    /// every arm without a config= of its own. It is applied last: after
    /// the architecture's defconfig, virtme-ng's fragment and the options
    /// secperf needs (audit, seccomp, the LSMs), so that its settings win.
    #[arg(long, value_name = "FRAGMENT", requires = "kernels")]
    pub kernel_config: Option<std::path::PathBuf>,
}

pub fn suite(args: SuiteArgs, db: Option<&Path>, json: bool) -> Result<()> {
    super::output::refuse_json_beside(json, args.output.format.as_ref())?;
    args.output.check_output()?;
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
    args.metric.refuse_with(args.profile.profile, false)?;
    let counting = args
        .metric
        .counting(args.vm.vm.is_some() || !args.kernels.is_empty())?;
    if counting.metric() == crate::model::Metric::Instructions {
        usage_bail!(
            "suite {} --metric instructions: a suite's tables are in its post's units (calls \
             per second, ns per round), which counted instructions do not have; count the \
             suite's workloads in instructions with `secperf overhead --metric instructions \
             --vm IMAGE -w WORKLOAD` or `--kernel` (docs/vms.md)",
            def.name
        );
    }
    if !args.kernels.is_empty() {
        return other_side(&args, def, db, json);
    }
    if args.vm.vm.is_some() {
        if args.baseline.is_some() || args.report.is_some() {
            usage_bail!(
                "--vm measures in a guest: --baseline and --report read this store; run the \
                 suite with --vm first, then `secperf suite {} --report RUN --baseline RUN`",
                args.name
            );
        }
        let show = super::vm::Show::Run {
            json,
            report: Some(&args.output),
        };
        let relay = super::vm::Relay {
            mechanisms: &[],
            counting,
            tasks: None,
        };
        return super::vm::relay_counted(&args.vm, &relay, db, args.wait.no_wait, show);
    }
    args.vm.resolve(false)?;
    let (db_path, store) = open_store(db)?;
    let baseline = args
        .baseline
        .as_deref()
        .map(|spec| load_suite_run(&store, spec, def, "--baseline"))
        .transpose()?;
    if let Some(spec) = &args.report {
        let (run, _) = load_suite_run(&store, spec, def, "--report")?;
        return show(
            &store,
            &run,
            baseline.as_ref().map(|b| &b.0),
            &args.output,
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
    let label = args.label.clone().unwrap_or_else(|| def.name.to_string());
    let session = suite.measure_stored(
        def,
        &label,
        &scratch,
        (db_path, store),
        args.wait.no_wait,
        counting.metric(),
    )?;
    let run = session.store.load_run(session.run_id)?;
    let shown = show(
        &session.store,
        &run,
        baseline.as_ref().map(|b| &b.0),
        &args.output,
        json,
    );
    super::output::then_stored(shown, &session.stored_line(&label), session.run_id)
}

/// `suite NAME --kernel A=... --kernel B=...`: the suite in a guest of each
/// kernel, then B against A in the post's tables.
fn other_side(
    args: &SuiteArgs,
    def: &'static suites::SuiteDef,
    db: Option<&Path>,
    json: bool,
) -> Result<()> {
    let reqs = crate::engine::boots::kernels::Arms::checked(super::kernel_arms::kernel_arms(
        &args.kernels,
        args.kernel_config.as_deref(),
        false,
    )?)?;
    let (accel, timeout) = args.vm.resolve(true)?;
    let stop = crate::engine::session::interrupt_flag()?;
    let (arms, _) = crate::engine::boots::kernels::resolve(&reqs, &stop, args.wait.no_wait)
        .map_err(super::kernel_arms::worded)?;
    let argv = crate::engine::session::argv();
    let db_path = crate::store::resolve_db_path(db)?;
    let mut runs = Vec::new();
    for (i, arm) in arms.iter().enumerate() {
        crate::say!(
            "secperf: suite {}, side {} of 2: {} ({})",
            def.name,
            i + 1,
            arm.name,
            if i == 0 { "baseline" } else { "compared" }
        );
        let mut guest_args = super::vm::guest_args(&argv, true);
        guest_args.extend(["--label".to_string(), arm.name.clone()]);
        // Each side's run is stored with the command that repeats it alone.
        let side_argv: Vec<String> = argv
            .iter()
            .take(1)
            .cloned()
            .chain(guest_args.iter().cloned())
            .chain(["--vm".to_string(), arm.spec.to_arg()])
            .collect();
        let request = crate::engine::boots::vm::VmRequest {
            spec: arm.spec.clone(),
            accel,
            timeout,
            guest_args,
            mechanisms: Vec::new(),
            stores_run: true,
            counting: crate::engine::ab::counting::Counting::Clock,
        };
        let guest = crate::engine::boots::vm::measure_in_guest(
            &request,
            &db_path,
            &side_argv,
            args.wait.no_wait,
        )?;
        crate::say!("secperf: {}", guest.facts.line());
        runs.push(
            guest
                .run_id
                .ok_or_else(|| anyhow::anyhow!("the guest of {} stored no run", arm.name))?,
        );
    }
    let store = Store::open_read_only(&db_path)?;
    let base = store.load_run(runs[0])?;
    let other = store.load_run(runs[1])?;
    show(&store, &other, Some(&base), &args.output, json)?;
    crate::say!(
        "secperf: stored as runs {} ({}) and {} ({}) in {}",
        runs[0],
        arms[0].name,
        runs[1],
        arms[1].name,
        db_path.display()
    );
    Ok(())
}

/// Shows the document of the stored suite run `run`: the post-shaped
/// report, or with `--json` the run document (as `results export`); with
/// a baseline run, its suite part is computed against it.
fn show(
    store: &Store,
    run: &StoredRun,
    baseline: Option<&StoredRun>,
    output: &ReportFormatArgs,
    json: bool,
) -> Result<()> {
    let mut doc = crate::read::document::load(store, run.run_id)?;
    if baseline.is_some() {
        doc.suite = Some(suite_doc(store, run, baseline)?);
    }
    super::output::show_run(
        &doc,
        json,
        output.format,
        output.output.as_deref(),
        Parts::MEASURED,
    )
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
        return super::emit::print_json(&entries);
    }
    let mut t = crate::report::table::new_table(&["suite", "reproduces", "measures"]);
    for e in &entries {
        t.add_row(vec![
            format!("{} v{}", e.name, e.version),
            format!("{}\n{}", e.reproduces, e.post.text()),
            e.measures.to_string(),
        ]);
    }
    super::emit::emit_fmt!("{t}");
    super::emit::emit_fmt!(
        "Run one with `secperf suite NAME` (`--quick` for a fast pass); `secperf suite NAME --help` \
         explains the options; `secperf --json suite list` gives each post's archive link."
    );
    Ok(())
}
