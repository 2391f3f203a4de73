//! `secperf overhead`: what each security mechanism costs on this machine,
//! now, measured as randomised A/B pairs in one run. The arguments become a
//! request; the engine plans it ([`crate::engine::plan`]), measures and
//! decides; this file renders the table or the chosen format.

use std::path::Path;

use anyhow::Result;
use clap::Args;

use super::args::{
    CommandArgs, DecisionArgs, PairArgs, ProfileArgs, ReportFormatArgs, TaskArgs, WaitArgs,
};
use crate::engine::ab::measure_comparisons;
use crate::engine::measurer::Live;
use crate::engine::plan::{OverheadPlan, OverheadRequest};
use crate::engine::session::{RunSpec, Session, open_store};
use crate::usage_bail;

#[derive(Debug, Args)]
pub struct OverheadArgs {
    /// Mechanisms to measure, repeatable: NAME[:VARIANT][,KEY=VALUE...]
    /// (e.g. seccomp:args,filters=4). Default: every available mechanism
    /// with its survey variants (see `secperf list`).
    #[arg(short, long = "mechanism", value_name = "SPEC",
          value_parser = super::args::Candidates::mechanism_specs(), hide_possible_values = true)]
    pub mechanisms: Vec<String>,

    /// Workloads, comma-separated or "all" [default: the workloads each
    /// mechanism's hooks touch].
    #[arg(short, long, value_name = "NAME,...|all",
          value_parser = super::args::Candidates::workloads(), hide_possible_values = true)]
    pub workloads: Option<String>,

    #[command(flatten)]
    pub placement: TaskArgs,

    #[command(flatten)]
    pub design: PairArgs,

    /// Fast pass: shorter slices and halves (about 50 s here; at most 32
    /// pairs per comparison, fewer where a comparison settles).
    #[arg(long)]
    pub quick: bool,

    /// Leave out the negative control: without -w, each mechanism's first
    /// treatment is also measured on `stream` (no syscall in its loop, so
    /// no mechanism should change it).
    #[arg(long)]
    pub no_control: bool,

    /// Seed for the AB/BA coin and the bootstrap (default: from the clock;
    /// stored with the run, so a run can be replayed in the same order).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Precision wanted, percent (e.g. 1): a sequential comparison also
    /// stops once its 95% interval's half-width is at most this, and the
    /// budget (--max-pairs' default) is raised to what the last `secperf
    /// calibrate` of each workload on this machine predicts it needs.
    #[arg(long, value_name = "PCT", conflicts_with = "pairs")]
    pub precision: Option<f64>,

    /// Sweep one parameter: one comparison per value, and a straight line
    /// fitted to the per-pair differences (ns/op added = intercept + slope x
    /// value, each with a 95% interval, and a test of whether a line fits).
    /// KEY is a mechanism parameter (seccomp filters, landlock rules or
    /// layers, audit count) or WORKLOAD.KEY (open.depth). E.g. -m
    /// seccomp:args -w getppid --sweep filters=1,2,4,8.
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub sweep: Option<String>,

    #[command(flatten)]
    pub profile: ProfileArgs,

    #[command(flatten)]
    pub decision: DecisionArgs,

    #[command(flatten)]
    pub command: CommandArgs,

    #[command(flatten)]
    pub report: ReportFormatArgs,

    #[command(flatten)]
    pub wait: WaitArgs,

    #[command(flatten)]
    pub vm: super::vm::VmArgs,
}

impl OverheadArgs {
    /// The request these arguments make, every value checked.
    fn request(&self) -> Result<OverheadRequest> {
        if let Some(p) = self.precision.filter(|p| !(*p > 0.0 && *p < 100.0)) {
            usage_bail!("--precision {p}: give a percentage between 0 and 100 (e.g. 1)");
        }
        let mut workloads = self.workloads.clone();
        let mut params = self.placement.params.clone();
        if let Some((name, extra)) = self.command.workload(workloads.is_some())? {
            if self.mechanisms.is_empty() {
                usage_bail!(
                    "a command needs the mechanisms to measure it under: -m SPEC [-m SPEC ...] \
                     -- CMD (see `secperf list`)"
                );
            }
            workloads = Some(name);
            params.extend(extra);
        }
        Ok(OverheadRequest {
            mechanisms: self.mechanisms.clone(),
            workloads,
            params,
            placement: self.placement.resolve("1")?,
            mode: self.placement.mode,
            half: self.design.resolve(self.quick)?,
            quick: self.quick,
            no_control: self.no_control,
            seed: self.seed,
            decision: self.decision.resolve()?,
            precision: self.precision,
            profile: self.profile.resolve()?,
            sweep: self
                .sweep
                .as_deref()
                .map(crate::engine::sweep::parse)
                .transpose()?,
        })
    }
}

pub fn overhead(args: OverheadArgs, db: Option<&Path>, json: bool) -> Result<()> {
    if args.vm.vm.is_some() {
        let show = super::vm::Show::Run {
            json,
            report: Some(&args.report),
        };
        return super::vm::relay(&args.vm, &args.mechanisms, db, args.wait.no_wait, show);
    }
    let mut plan = OverheadPlan::new(&args.request()?)?;
    let (db_path, store) = open_store(db)?;
    plan.pairs_from_calibration(&store)?;
    let measuring = args.wait.lock()?;
    let design = plan.design();
    let profiled_pairs = plan.profile.map_or(0, |p| p.pairs as u64);
    let slices = 2
        * (plan.max_pairs_total() + plan.cases.len() as u64 * profiled_pairs)
        * design.slices_per_half();
    for note in &plan.treatment_notes {
        eprintln!("secperf: {note}");
    }
    let run_ms = super::command_trial(
        &plan
            .cases
            .iter()
            .map(|c| (c.workload.name.to_string(), c.workload_params.clone()))
            .collect(),
    )?
    .unwrap_or(0.0);
    let seconds = slices as f64 * (plan.sample_ms as f64 + run_ms) / 1000.0 * 1.15;
    let profiled = plan.profile.map_or(String::new(), |p| {
        format!(" + {} profiled pairs at {} Hz", p.pairs, p.hz)
    });
    match &plan.stop {
        Some(stop) => eprintln!(
            "secperf: {} comparisons x {} to {} pairs{profiled} (sequential: each stops once its \
             verdict is settled), at most about {seconds:.0} s of measurement",
            plan.cases.len(),
            stop.min_pairs,
            plan.pairs,
        ),
        None => eprintln!(
            "secperf: {} comparisons x {} pairs{profiled}, about {seconds:.0} s of measurement",
            plan.cases.len(),
            plan.pairs,
        ),
    }
    let mut session = Session::begin_measuring(
        measuring,
        db_path,
        store,
        &RunSpec {
            kind: "overhead",
            label: &plan.label,
            params: &plan,
            system_wide: plan.system_wide(),
            slices,
            seed: Some(plan.seed),
        },
    )?;
    for f in &plan.policy_files {
        session.store.add_policy_file(session.run_id, f)?;
    }
    let cases = plan
        .cases
        .iter()
        .zip(&plan.control)
        .map(|(case, &control)| {
            let role = if control { " (negative control)" } else { "" };
            (case, plan.design_for(control), role)
        });
    let measured = measure_comparisons(
        &mut session.store,
        session.run_id,
        cases,
        &mut Live {
            lock: session.lock.as_ref(),
        },
        plan.seed,
        &session.progress,
        &plan.decision,
    );
    let comparisons = measured.map_err(|e| session.stopped(e))?;
    if let Some(spec) = &plan.sweep {
        crate::engine::sweep::record(&mut session.store, session.run_id, spec, &comparisons)?;
    }
    session.finish()?;
    super::output::show_measured(&session, &plan.label, json, &args.report)
}
