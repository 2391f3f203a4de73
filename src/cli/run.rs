//! `secperf run`: measure workloads under the current configuration.
//!
//! Arguments become a [`RunPlan`] (every name, number and path checked)
//! before the store is opened or a task started; then each workload x task
//! count is measured, stored as soon as it finishes, and shown in a table.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

use super::common::{TaskArgs, cache_dir, meta_command, parse_workloads, resolve_params, run_meta};
use super::progress::Progress;
use crate::model::{Mode, Params, WorkloadResult};
use crate::runner::{self, MeasureOpts};
use crate::store::Store;
use crate::usage_bail;
use crate::workloads::WorkloadDef;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workloads, comma-separated, or "all" (see `secperf list`).
    #[arg(short, long, value_name = "NAME,...|all", default_value = "all")]
    pub workloads: String,

    #[command(flatten)]
    pub placement: TaskArgs,

    /// Samples kept per measurement [default: 10, 5 with --quick].
    #[arg(long, value_name = "N")]
    pub samples: Option<u32>,

    /// Length of one sample (a time slice), milliseconds [default: 500, 200 with --quick].
    #[arg(long, value_name = "MS")]
    pub sample_ms: Option<u64>,

    /// Slices run and discarded before the samples start [default: 1].
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,

    /// Fast pass over the catalog: 5 samples of 200 ms each (under a minute
    /// on 2 CPUs); explicit --samples/--sample-ms still win.
    #[arg(long)]
    pub quick: bool,

    #[command(flatten)]
    pub report: super::common::ReportFormatArgs,
}

/// Everything `run` will do, validated.
#[derive(Debug, Clone, Serialize)]
pub struct RunPlan {
    #[serde(serialize_with = "ser_names")]
    pub workloads: Vec<&'static WorkloadDef>,
    pub tasks: Vec<usize>,
    pub mode: Mode,
    pub samples: u32,
    pub sample_ms: u64,
    pub warmup: u32,
    pub pin: bool,
    /// CPUs tasks are pinned to, in order.
    pub cpus: Vec<usize>,
    /// Effective parameters per workload (defaults filled in).
    pub params: std::collections::BTreeMap<String, Params>,
    pub label: String,
    pub scratch: PathBuf,
    pub quick: bool,
}

fn ser_names<S: serde::Serializer>(w: &[&'static WorkloadDef], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(w.iter().map(|d| d.name))
}

impl RunPlan {
    pub fn from_args(a: &RunArgs) -> Result<RunPlan> {
        let workloads = parse_workloads(&a.workloads)?;
        let placement = a.placement.resolve("auto")?;
        let samples = a.samples.unwrap_or(if a.quick { 5 } else { 10 });
        let sample_ms = a.sample_ms.unwrap_or(if a.quick { 200 } else { 500 });
        let warmup = a.warmup.unwrap_or(1);
        if samples == 0 {
            usage_bail!("--samples must be at least 1 (10 or more for a useful interval)");
        }
        if !(10..=600_000).contains(&sample_ms) {
            usage_bail!("--sample-ms must be between 10 and 600000 milliseconds");
        }
        Ok(RunPlan {
            params: resolve_params(&workloads, &a.placement.params)?,
            workloads,
            tasks: placement.tasks,
            mode: a.placement.mode,
            samples,
            sample_ms,
            warmup,
            pin: !a.placement.no_pin,
            cpus: placement.cpus,
            label: placement.label,
            scratch: placement.scratch,
            quick: a.quick,
        })
    }

    fn slices(&self) -> u64 {
        (self.workloads.len() * self.tasks.len()) as u64 * (self.samples + self.warmup) as u64
    }
}

#[derive(Serialize)]
struct RunOutput<'a> {
    run_id: i64,
    label: &'a str,
    db: &'a Path,
    system: &'a serde_json::Value,
    params: &'a RunPlan,
    results: &'a [WorkloadResult],
}

pub fn run(args: RunArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let plan = RunPlan::from_args(&args)?;
    let db_path = crate::store::resolve_db_path(db)?;
    let mut store = Store::open(&db_path)?;
    install_interrupt_handlers()?;

    let meta = run_meta("run", &plan.label, &plan)?;
    let system = meta.system.clone();
    let run_id = store.begin_run(&meta)?;
    let progress = Progress::new(plan.slices());
    let mut results = Vec::new();
    for def in &plan.workloads {
        for &tasks in &plan.tasks {
            let opts = MeasureOpts {
                tasks,
                mode: plan.mode,
                cpus: plan.cpus.clone(),
                warmup: plan.warmup,
                samples: plan.samples,
                sample_ms: plan.sample_ms,
                scratch_root: plan.scratch.clone(),
                cache_dir: cache_dir(),
                params: plan.params[def.name].clone(),
            };
            progress.start(&format!("{} tasks={tasks} ({})", def.name, plan.mode));
            let r = runner::measure(def, &opts, &mut |t| progress.tick(t)).with_context(|| {
                format!("run {run_id}: results measured so far are stored (`secperf results show {run_id}`)")
            });
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    progress.finish();
                    return Err(e);
                }
            };
            store.add_result(run_id, &r)?;
            progress.line(&format!(
                "{} tasks={}: {} ops/s, {} per op",
                r.workload,
                r.tasks,
                crate::report::si(r.ops_per_sec.median),
                crate::report::ns(r.ns_per_op.median)
            ));
            results.push(r);
        }
    }
    store.finish_run(run_id)?;
    progress.finish();
    if json {
        return super::print_json(&RunOutput {
            run_id,
            label: &plan.label,
            db: &db_path,
            system: &system,
            params: &plan,
            results: &results,
        });
    }
    if let Some(format) = args.report.format {
        let name = if plan.label.is_empty() {
            format!("run {run_id}")
        } else {
            format!("{} (run {run_id})", plan.label)
        };
        let report = crate::report::build::from_results(
            &name,
            &results,
            &system,
            &crate::sys::hostname(),
            &meta_command(),
        );
        return super::compare::write_report(&report, format, args.report.output.as_deref());
    }
    super::emit_fmt!("{}", crate::report::table::results(&results));
    let label = if plan.label.is_empty() {
        String::new()
    } else {
        format!(" label '{}'", plan.label)
    };
    super::emit_fmt!("Stored as run {run_id}{label} in {}.", db_path.display());
    Ok(())
}

/// SIGINT/SIGTERM stop the measurement cleanly (tasks stopped, scratch
/// removed, results so far kept); a second SIGINT exits at once.
pub(super) fn install_interrupt_handlers() -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let f = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        flag::register_conditional_shutdown(sig, 130, f.clone())
            .context("installing signal handlers")?;
        flag::register(sig, f.clone()).context("installing signal handlers")?;
    }
    runner::set_interrupt_source(f);
    Ok(())
}
