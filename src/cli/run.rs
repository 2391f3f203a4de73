//! `secperf run`: measure workloads under the current configuration.
//!
//! Arguments become a [`RunPlan`] (every name, number and path checked)
//! before the store is opened or a task started; then each workload x task
//! count is measured, stored as soon as it finishes, and shown in a table.

use std::path::Path;

use anyhow::Result;
use clap::Args;

use super::args::TaskArgs;
use crate::engine::current::RunPlan;
use crate::usage_bail;
use crate::workloads::select::{parse_list, resolve_params};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workloads, comma-separated, or "all" (see `secperf list`).
    #[arg(short, long, value_name = "NAME,...|all", default_value = "all",
          value_parser = super::args::Candidates::workloads(), hide_possible_values = true)]
    pub workloads: String,

    #[command(flatten)]
    pub placement: TaskArgs,

    /// Samples kept per measurement [default: 10, 5 with --quick].
    #[arg(long, value_name = "N")]
    pub samples: Option<u32>,

    /// Length of one sample, ms [default: 500; 200 --quick]. A sample is
    /// one time slice, in milliseconds.
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
    pub profile: super::args::ProfileArgs,

    #[command(flatten)]
    pub command: super::args::CommandArgs,

    #[command(flatten)]
    pub report: super::args::ReportFormatArgs,

    #[command(flatten)]
    pub wait: super::args::WaitArgs,

    #[command(flatten)]
    pub vm: super::vm::VmArgs,
}

impl RunArgs {
    /// The plan these arguments ask for, every name, number and path checked.
    fn plan(&self) -> Result<RunPlan> {
        let a = self;
        let mut params = a.placement.params.clone();
        let workloads = match a.command.workload(a.workloads != "all")? {
            Some((name, extra)) => {
                params.extend(extra);
                parse_list(&name)?
            }
            None => parse_list(&a.workloads)?,
        };
        let service = a.command.server.is_some();
        let placement = a.placement.resolve(if service { "1" } else { "auto" })?;
        if service {
            crate::workloads::service::check_placement(&placement.tasks, a.placement.mode)?;
        }
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
            params: resolve_params(&workloads, &params)?,
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
            profile: a.profile.resolve()?,
        })
    }
}

pub fn run(args: RunArgs, db: Option<&Path>, json: bool) -> Result<()> {
    super::output::refuse_json_beside(json, args.report.format.as_ref())?;
    args.report.check_output()?;
    if args.vm.vm.is_some() {
        let show = super::vm::Show::Run {
            json,
            report: Some(&args.report),
        };
        return super::vm::relay(&args.vm, &[], db, args.wait.no_wait, show);
    }
    args.vm.resolve(false)?;
    let plan = args.plan()?;
    let session = crate::engine::current::measure_stored(&plan, db, args.wait.no_wait)?;
    super::output::show_measured(&session, &plan.label, json, &args.report)
}
