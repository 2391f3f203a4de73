//! `secperf predict`: what a policy would cost a program, predicted
//! without switching it. Counts the program's syscalls (read-only),
//! takes the mechanism's cost model from stored probes or measures them
//! (as `overhead` would, stored), and renders the prediction.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Parser, ValueEnum};

use super::args::WaitArgs;
use crate::mechanisms::Treatment;
use crate::predict::{self, counts};
use crate::usage_bail;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PredictFormat {
    /// A table of the dearest syscalls (the default).
    Table,
    Markdown,
    Json,
    /// One row per syscall (calls, class, ns per call, ns added).
    Csv,
    /// Prometheus text format, for the node exporter's textfile collector
    /// (ratios and seconds).
    Prometheus,
}

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// The policy whose cost is predicted. NAME[:VARIANT][,KEY=VALUE...] of
    /// seccomp, audit or landlock, e.g. seccomp:profile=docker.json,
    /// audit:rules=/etc/audit/rules.d/stig.rules,
    /// landlock:ro=/usr:/etc,rw=/tmp.
    #[arg(short, long = "mechanism", value_name = "SPEC")]
    pub mechanism: String,

    /// Count this running process and its whole tree (its threads, its
    /// descendants, and what they start while counted: a server's master
    /// and its workers) instead of running a command. Read-only: no policy is
    /// applied to it, no ptrace; each counted syscall costs it a
    /// tracepoint's few tens of ns. Needs root or CAP_PERFMON.
    #[arg(long, value_name = "PID")]
    pub pid: Option<i32>,

    /// How long to count a --pid, seconds [default: 10]. The first third
    /// with one counter per thread (the target's CPU time per call), the
    /// rest with one per syscall and thread (the calls by name, whose
    /// ~370 counters a thread inflate a busy server's CPU time: nginx used
    /// 70% more while so counted).
    #[arg(long = "for", value_name = "SECONDS", requires = "pid")]
    pub window_s: Option<f64>,

    /// How many times to run and count the command after `--`. The
    /// prediction is for the run whose CPU time is the median (the first
    /// run may read from disk; the counts of such programs barely change).
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,

    /// Measure the model's probes again, even where this machine has them
    /// stored (stored ones are reused for 7 days, on the same kernel, CPU
    /// model and CPU count, and policy file contents).
    #[arg(long)]
    pub remeasure: bool,

    /// Price calls as the probes' hot loops find the caches: leave out the
    /// cache-cold term (each call's extra cost when the target's work
    /// between calls has refilled the caches, measured on getppid with the
    /// kernel's page-fault path run once before each call).
    #[arg(long)]
    pub no_cold: bool,

    /// Measure missing probes with overhead's fast design (--quick).
    #[arg(long)]
    pub quick: bool,

    /// Output format [default: table]; --json is the same as --format json.
    #[arg(long, value_enum)]
    pub format: Option<PredictFormat>,

    /// Write the output to this file instead of stdout.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub wait: WaitArgs,

    /// The program to count: everything after `--`. It runs once, without
    /// any policy, and must exit with status 0.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Pairs per probe: default, and with --quick.
const PROBE_PAIRS: [u32; 2] = [20, 10];

/// `overhead`'s arguments, to measure probes as `overhead` does.
#[derive(Debug, Parser)]
struct ProbeRun {
    #[command(flatten)]
    overhead: super::overhead::OverheadArgs,
}

pub fn predict(args: PredictArgs, db: Option<&Path>, json: bool) -> Result<()> {
    super::output::refuse_json_beside(json, args.format.as_ref())?;
    if let Some(o) = &args.output {
        super::paths::check_output_file(o, "-o")?;
    }
    let format = if json {
        PredictFormat::Json
    } else {
        args.format.unwrap_or(PredictFormat::Table)
    };
    let (pid, target) = match (&args.pid, args.command.is_empty()) {
        (Some(_), false) => usage_bail!("give either --pid PID or -- CMD, not both"),
        (None, true) => usage_bail!(
            "predict needs a program: --pid PID [--for SECONDS] (a running process) or -- CMD \
             ARGS (run once, counted)"
        ),
        (Some(pid), true) => (*pid, format!("pid {pid}")),
        (None, false) => (std::process::id() as i32, shell_words::join(&args.command)),
    };
    let window = match args.window_s {
        Some(s) if !(s > 0.0 && s <= 86_400.0) => {
            usage_bail!("--for {s}: give seconds between 0 and 86400 (e.g. 10)")
        }
        Some(s) => std::time::Duration::from_secs_f64(s),
        None => std::time::Duration::from_secs(10),
    };
    let t = Treatment::parse(&args.mechanism)?;
    let creds = predict::audit::Creds::of(pid).map_err(|e| {
        crate::error::UsageError::new(format!("--pid {pid}: {e:#}: is the process running?"))
    })?;
    let mut plan = predict::plan_for(&t, creds)?;
    counts::tracefs()?;
    // A bad --db is said before the program runs, not after.
    crate::engine::session::open_store(db)?;

    let counted = if args.command.is_empty() {
        // After the window, a third of it more with one counter per thread:
        // the target's CPU time per call without the by-name counters.
        let light_window = window / 3;
        crate::say!(
            "secperf: counting the syscalls of pid {pid} and its descendants for {:.0} s, each \
             by name, then {:.1} s more with one counter per thread to time its calls \
             (read-only: nothing is applied to them)",
            window.as_secs_f64(),
            light_window.as_secs_f64()
        );
        let mut last = u64::MAX;
        let (counted, tree, when) = counts::count_pid(pid, window, light_window, &mut |left| {
            let s = left.as_secs();
            if s % 5 == 0 && s != last && s > 0 {
                crate::say!("secperf: {s} s left");
                last = s;
            }
        })?;
        crate::say!(
            "secperf: counted pid {pid} and its tree ({}) for {:.1} s: {}",
            tree.describe(),
            counted.wall_ns as f64 / 1e9,
            when.describe()
        );
        if counted.counts.values().sum::<u64>() == 0 {
            usage_bail!(
                "pid {pid} and its tree ({}) made no system calls in the {:.0} s counted, so \
                 there is nothing to predict: count while it works (start its load, then \
                 `predict --pid {pid} --for N`), or give the process that does the work",
                tree.describe(),
                window.as_secs_f64()
            );
        }
        plan.notes
            .push(format!("what was counted when: {}", when.describe()));
        counted
    } else {
        let runs = args.runs;
        crate::say!(
            "secperf: counting the syscalls of {target} ({runs} run{}, no policy applied)",
            if runs == 1 { "" } else { "s" }
        );
        let mut all = Vec::new();
        for _ in 0..runs {
            let (counted, status) = counts::count_command(&args.command)?;
            if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
                usage_bail!(
                    "`{target}` {}: a prediction needs a run of it that succeeds (exits with \
                     status 0); check the command by running it as it is",
                    crate::workloads::child::describe_status(status)
                );
            }
            all.push(counted);
        }
        predict::counts::median_run(all)
    };

    let (cpu_ns, cpu_note) = counted.cpu_for_prediction();
    plan.notes.extend(cpu_note);
    let calls: u64 = counted.counts.values().sum();
    if !args.no_cold && calls > 0 {
        let cpu_ns_per_call = cpu_ns as f64 / calls as f64;
        let (with_term, said) = predict::cold::for_target(plan, &args.mechanism, cpu_ns_per_call)?;
        plan = with_term;
        match said {
            predict::cold::Said::Progress(line) => crate::say!("secperf: {target} {line}"),
            predict::cold::Said::Note(note) => plan.notes.push(note),
        }
    }
    let mut busy_note = None;
    let figures = crate::engine::probes::figures(
        &plan,
        args.remeasure,
        db,
        &mut busy_note,
        &|specs, name, params| probes_request(&args, specs, name, params),
    )?;
    plan.notes.extend(busy_note);
    let prediction = predict::model::predict(
        &plan,
        figures,
        &counted.counts,
        target,
        counted.wall_ns as f64 / 1e9,
        cpu_ns,
    );
    let out = match format {
        PredictFormat::Table => crate::report::sections::prediction::text(&prediction),
        PredictFormat::Markdown => crate::report::sections::prediction::markdown(&prediction),
        PredictFormat::Csv => crate::report::sections::prediction::csv(&prediction),
        PredictFormat::Prometheus => predict::prometheus::prometheus(&prediction),
        PredictFormat::Json => serde_json::to_string_pretty(&prediction)? + "\n",
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?;
            crate::say!(
                "secperf: {}",
                crate::report::sections::prediction::headline(&prediction)
            );
            crate::say!("secperf: wrote {}", path.display());
        }
        None => print!("{out}"),
    }
    Ok(())
}

/// The `overhead` request that measures `specs` (the probes missing for
/// one workload) on workload `name` with `params`, as `overhead` would
/// parse it: a fixed number of pairs (a model wants each probe's interval
/// from all of them, not the sequential design's stop at a verdict), no
/// negative control.
fn probes_request(
    args: &PredictArgs,
    specs: &[String],
    name: &str,
    params: &crate::params::Params,
) -> Result<(crate::engine::plan::OverheadRequest, bool)> {
    let mut argv = vec!["overhead".to_string()];
    for spec in specs {
        argv.extend(["-m".to_string(), spec.clone()]);
    }
    argv.extend(["-w".into(), name.to_string(), "--no-control".into()]);
    for (k, v) in params {
        argv.extend(["--param".into(), format!("{name}.{k}={v}")]);
    }
    argv.extend([
        "--pairs".into(),
        PROBE_PAIRS[args.quick as usize].to_string(),
    ]);
    if args.quick {
        argv.push("--quick".into());
    }
    if args.wait.no_wait {
        argv.push("--no-wait".into());
    }
    let run = ProbeRun::try_parse_from(&argv)
        .with_context(|| format!("building the probes' overhead run: {}", argv.join(" ")))?;
    let counting = run.overhead.metric.counting(false)?;
    Ok((run.overhead.request(counting)?, run.overhead.wait.no_wait))
}
