//! `secperf overhead`: what each security mechanism costs on this machine,
//! now, measured as randomised A/B pairs in one run.
//!
//! With no `-m`, every mechanism is surveyed on the workloads its hooks
//! touch; unavailable ones are listed with the reason. Asking explicitly
//! for an unavailable mechanism is a usage error (exit 2) with the reason.
//!
//! Unless `-w` is given (or `--no-control`), each mechanism also gets one
//! negative control: its first treatment on `stream`, where none of its
//! hooks run, so that a change there flags figures not to be trusted.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

use super::common::{PairArgs, TaskArgs, cache_dir, parse_workloads, resolve_params};
use super::progress::Progress;
use super::run::install_interrupt_handlers;
use crate::mechanisms::{self, Availability, Scope, Treatment};
use crate::model::{Comparison, Mode, Skipped};
use crate::overhead::{CONTROL_WORKLOAD, Case, Design};
use crate::safety::StateLock;
use crate::stats::decision::{DecisionOpts, min_pairs_for};
use crate::store::Store;
use crate::usage_bail;

#[derive(Debug, Args)]
pub struct OverheadArgs {
    /// Mechanisms to measure, repeatable: NAME[:VARIANT][,KEY=VALUE...]
    /// (e.g. seccomp:args,filters=4). Default: every available mechanism
    /// with its survey variants (see `secperf list`).
    #[arg(short, long = "mechanism", value_name = "SPEC")]
    pub mechanisms: Vec<String>,

    /// Workloads, comma-separated or "all" [default: the workloads each
    /// mechanism's hooks touch].
    #[arg(short, long, value_name = "NAME,...|all")]
    pub workloads: Option<String>,

    #[command(flatten)]
    pub placement: TaskArgs,

    #[command(flatten)]
    pub design: PairArgs,

    /// Fast pass: shorter slices and halves (under 45 s here).
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

    /// Precision wanted, percent (e.g. 1): the number of pairs is taken from
    /// the last `secperf calibrate` of each workload on this machine so the
    /// 95% interval's half-width is about this (overrides --pairs' default).
    #[arg(long, value_name = "PCT")]
    pub precision: Option<f64>,

    #[command(flatten)]
    pub decision: super::common::DecisionArgs,

    #[command(flatten)]
    pub report: super::common::ReportFormatArgs,
}

/// Pairs for `precision` percent from the latest calibration of each
/// workload in the plan (the largest need wins); workloads never
/// calibrated keep the plan's pairs, with a note saying how to calibrate.
fn pairs_for_precision_from_calibration(
    store: &Store,
    plan: &OverheadPlan,
    precision: f64,
) -> Result<u32> {
    let mut pairs = plan.pairs;
    let mut seen = std::collections::BTreeSet::new();
    for (case, _) in plan.cases.iter().zip(&plan.control).filter(|(_, c)| !**c) {
        if !seen.insert(case.workload.name) {
            continue;
        }
        match crate::store::calibrations::latest_calibration(store, case.workload.name)? {
            Some(c) if c.sd_log_ratio.is_finite() => {
                let n = crate::calibrate::pairs_for_precision(c.sd_log_ratio, precision);
                eprintln!(
                    "secperf: calibration of {} from {} (sd of ln ratio {:.4}): {n} pairs for +-{precision}%",
                    case.workload.name,
                    c.created_at.format("%Y-%m-%d %H:%M UTC"),
                    c.sd_log_ratio
                );
                pairs = pairs.max(n);
            }
            _ => eprintln!(
                "secperf: no calibration of {} on this machine: keeping {} pairs (run `secperf calibrate -w {}` first)",
                case.workload.name, plan.pairs, case.workload.name
            ),
        }
    }
    Ok(pairs)
}

/// Everything `overhead` will do, validated before anything runs.
#[derive(Debug, Serialize)]
pub struct OverheadPlan {
    #[serde(skip)]
    pub cases: Vec<Case>,
    /// One per case: whether it is a negative control the plan added.
    #[serde(skip)]
    pub control: Vec<bool>,
    pub comparisons: Vec<String>,
    /// The comparisons (as named in `comparisons`) that are negative
    /// controls: a treatment on `stream`, which it should not change.
    pub controls: Vec<String>,
    pub skipped: Vec<Skipped>,
    pub pairs: u32,
    pub sample_ms: u64,
    pub samples_per_half: u32,
    pub warmup: u32,
    pub mode: Mode,
    pub cpus: Vec<usize>,
    pub seed: u64,
    pub decision: DecisionOpts,
    pub label: String,
    pub scratch: PathBuf,
    pub quick: bool,
}

fn availability_reason(a: &Availability) -> Option<String> {
    match a {
        Availability::Available => None,
        Availability::Unavailable(r) => Some(r.clone()),
    }
}

/// Parses a survey variant string: what follows `NAME:` (a variant, maybe
/// with parameters) or `NAME,` (parameters only).
fn survey_treatment(name: &str, v: &str) -> Result<Treatment> {
    if v.is_empty() {
        return Treatment::parse(name);
    }
    Treatment::parse(&format!("{name}:{v}")).or_else(|_| Treatment::parse(&format!("{name},{v}")))
}

/// How a case is named in the plan and its JSON.
fn case_label(c: &Case) -> String {
    format!("{} on {} x{}", c.treatment, c.workload.name, c.tasks)
}

/// Adds the negative control to `cases`: for each mechanism (but `none`,
/// which has no hook to rule out), its first treatment on `stream` with
/// default parameters at `tasks`, right after that mechanism's last case
/// (so the controls are spread over the run's time). In the survey the
/// first treatment is `survey_variants()[0]`. Returns (case, is control).
fn with_negative_controls(cases: Vec<Case>, tasks: usize) -> Result<Vec<(Case, bool)>> {
    let stream = crate::workloads::find(CONTROL_WORKLOAD)
        .context("internal error: the negative-control workload is not in the catalog")?;
    let params = resolve_params(&[stream], &[])?
        .remove(stream.name)
        .unwrap_or_default();
    let mech = |c: &Case| c.treatment.mechanism.name();
    let mut out = Vec::with_capacity(cases.len() + 8);
    for (i, case) in cases.iter().enumerate() {
        out.push((case.clone(), false));
        let m = mech(case);
        let last_of_mechanism = !cases[i + 1..].iter().any(|c| mech(c) == m);
        let first = cases.iter().find(|c| mech(c) == m).unwrap_or(case);
        let measured = cases
            .iter()
            .any(|c| mech(c) == m && c.workload.name == stream.name);
        if last_of_mechanism && m != "none" && !measured {
            out.push((
                Case {
                    workload: stream,
                    workload_params: params.clone(),
                    treatment: first.treatment.clone(),
                    tasks,
                },
                true,
            ));
        }
    }
    Ok(out)
}

impl OverheadPlan {
    pub fn from_args(a: &OverheadArgs) -> Result<OverheadPlan> {
        let placement = a.placement.resolve("1")?;
        let half = a.design.resolve(a.quick)?;
        if let Some(p) = a.precision.filter(|p| !(*p > 0.0 && *p < 100.0)) {
            usage_bail!("--precision {p}: give a percentage between 0 and 100 (e.g. 1)");
        }
        let decision = a.decision.resolve()?;
        let explicit_workloads = a.workloads.as_deref().map(parse_workloads).transpose()?;

        // Treatments: explicit (unavailable = usage error) or the survey.
        let mut treatments = Vec::new();
        let mut skipped = Vec::new();
        if a.mechanisms.is_empty() {
            for m in mechanisms::MECHANISMS {
                if let Some(reason) = availability_reason(&m.probe()) {
                    skipped.push(Skipped {
                        mechanism: m.name().to_string(),
                        reason,
                    });
                    continue;
                }
                for v in m.survey_variants() {
                    treatments.push(survey_treatment(m.name(), v)?);
                }
            }
        } else {
            for spec in &a.mechanisms {
                let t = Treatment::parse(spec)?;
                if let Some(reason) = availability_reason(&t.mechanism.probe()) {
                    usage_bail!(
                        "mechanism {} is unavailable here: {reason}",
                        t.mechanism.name()
                    );
                }
                treatments.push(t);
            }
        }

        let mut cases = Vec::new();
        for t in &treatments {
            let workloads = match &explicit_workloads {
                Some(w) => w.clone(),
                None => t
                    .mechanism
                    .survey_workloads()
                    .iter()
                    .filter_map(|n| crate::workloads::find(n))
                    .collect(),
            };
            let params = resolve_params(&workloads, &a.placement.params)?;
            for w in workloads {
                for &n in &placement.tasks {
                    cases.push(Case {
                        workload: w,
                        workload_params: params[w.name].clone(),
                        treatment: t.clone(),
                        tasks: n,
                    });
                }
            }
        }
        // The negative control, in the same Holm family as the rest: with
        // -w the user chose the workloads (stream included, or not).
        let (cases, control): (Vec<Case>, Vec<bool>) =
            if explicit_workloads.is_none() && !a.no_control {
                with_negative_controls(cases, placement.tasks[0])?
                    .into_iter()
                    .unzip()
            } else {
                let n = cases.len();
                (cases, vec![false; n])
            };
        if cases.is_empty() {
            usage_bail!(
                "nothing to measure: no available mechanism (see the reasons with `secperf list`)"
            );
        }
        // The smallest two-sided exact Wilcoxon p-value with n pairs is
        // 2/2^n; after Holm over m comparisons it must still beat alpha.
        let needed = min_pairs_for(cases.len(), decision.alpha);
        let pairs = half.pairs.unwrap_or(needed.max(12));
        if pairs < needed {
            eprintln!(
                "secperf: warning: with {pairs} pairs and {} comparisons nothing can be significant \
                 after Holm correction at alpha {}; use --pairs {needed} or more",
                cases.len(),
                decision.alpha
            );
        }
        let seed = a.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
        Ok(OverheadPlan {
            comparisons: cases.iter().map(case_label).collect(),
            controls: cases
                .iter()
                .zip(&control)
                .filter(|(_, c)| **c)
                .map(|(case, _)| case_label(case))
                .collect(),
            cases,
            control,
            skipped,
            pairs,
            sample_ms: half.sample_ms,
            samples_per_half: half.samples_per_half,
            warmup: half.warmup,
            mode: a.placement.mode,
            cpus: placement.cpus,
            seed,
            decision,
            label: placement.label,
            scratch: placement.scratch,
            quick: a.quick,
        })
    }

    fn design(&self) -> Design {
        Design {
            pairs: self.pairs,
            sample_ms: self.sample_ms,
            samples_per_half: self.samples_per_half,
            warmup: self.warmup,
            mode: self.mode,
            cpus: self.cpus.clone(),
            scratch_root: self.scratch.clone(),
            cache_dir: cache_dir(),
            seed: self.seed,
        }
    }
}

#[derive(Serialize)]
struct OverheadOutput<'a> {
    run_id: i64,
    label: &'a str,
    db: &'a Path,
    system: &'a serde_json::Value,
    design: &'a OverheadPlan,
    comparisons: &'a [Comparison],
    /// What the `stream` comparisons say about trusting the rest; null
    /// when none was measured.
    negative_control: Option<crate::report::table::NegativeControl>,
    skipped: &'a [Skipped],
}

pub fn overhead(args: OverheadArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let plan = OverheadPlan::from_args(&args)?;
    let db_path = crate::store::resolve_db_path(db)?;
    let mut store = Store::open(&db_path)?;
    install_interrupt_handlers()?;
    let mut plan = plan;
    if let (Some(precision), None) = (args.precision, args.design.pairs) {
        plan.pairs = pairs_for_precision_from_calibration(&store, &plan, precision)?;
    }
    let needs_lock = plan
        .cases
        .iter()
        .any(|c| c.treatment.mechanism.scope() == Scope::System);
    let lock = if needs_lock {
        Some(StateLock::acquire(std::time::Duration::from_secs(60))?)
    } else {
        None
    };

    let design = plan.design();
    let slices = plan.cases.len() as u64 * 2 * plan.pairs as u64 * design.slices_per_half();
    eprintln!(
        "secperf: {} comparisons x {} pairs, about {:.0} s of measurement",
        plan.cases.len(),
        plan.pairs,
        slices as f64 * plan.sample_ms as f64 / 1000.0 * 1.15
    );
    let meta = super::common::run_meta("overhead", &plan.label, &plan)?;
    let system = meta.system.clone();
    let run_id = store.begin_run(&meta)?;
    let progress = Progress::new(slices);
    let cases = plan
        .cases
        .iter()
        .zip(&plan.control)
        .map(|(case, &control)| {
            let role = if control { " (negative control)" } else { "" };
            (case, design.clone(), role)
        });
    let measured = super::common::measure_comparisons(
        &mut store,
        run_id,
        cases,
        lock.as_ref(),
        plan.seed,
        &progress,
        &plan.decision,
    )
    .with_context(|| {
        format!(
            "run {run_id}: comparisons measured so far are stored (`secperf results show {run_id}`)"
        )
    });
    let comparisons = match measured {
        Ok(c) => c,
        Err(e) => {
            progress.finish();
            return Err(e);
        }
    };
    store.finish_run(run_id)?;
    progress.finish();
    if json {
        return super::print_json(&OverheadOutput {
            run_id,
            label: &plan.label,
            db: &db_path,
            system: &system,
            design: &plan,
            comparisons: &comparisons,
            negative_control: crate::report::table::negative_control_of(&comparisons),
            skipped: &plan.skipped,
        });
    }
    if let Some(format) = args.report.format {
        let mut report = crate::report::build::from_comparisons(
            &comparisons,
            &system,
            &crate::sys::hostname(),
            &super::common::meta_command(),
        );
        report
            .summary
            .extend(crate::report::table::negative_control_summary(&comparisons));
        return super::compare::write_report(&report, format, args.report.output.as_deref());
    }
    super::emit_fmt!("{}", crate::report::table::comparisons(&comparisons));
    let control = crate::report::table::negative_control(&comparisons);
    if !control.is_empty() {
        super::emit_fmt!("{}", control.trim_end());
    }
    let outliers = crate::report::table::outlier_pairs(&comparisons);
    if !outliers.is_empty() {
        super::emit_fmt!("{}", outliers.trim_end());
    }
    super::emit_fmt!(
        "{}",
        crate::report::table::skipped(&plan.skipped).trim_end()
    );
    let label = if plan.label.is_empty() {
        String::new()
    } else {
        format!(" label '{}'", plan.label)
    };
    super::emit_fmt!("Stored as run {run_id}{label} in {}.", db_path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: OverheadArgs,
    }

    fn plan(args: &[&str]) -> OverheadPlan {
        let cli = Cli::parse_from(std::iter::once("overhead").chain(args.iter().copied()));
        OverheadPlan::from_args(&cli.args).unwrap()
    }

    fn available(name: &str) -> bool {
        mechanisms::find(name).unwrap().probe() == Availability::Available
    }

    /// (treatment, workload, tasks) of the control cases.
    fn controls(p: &OverheadPlan) -> Vec<(String, &'static str, usize)> {
        p.cases
            .iter()
            .zip(&p.control)
            .filter(|(_, c)| **c)
            .map(|(c, _)| (c.treatment.to_string(), c.workload.name, c.tasks))
            .collect()
    }

    #[test]
    fn survey_adds_one_stream_control_per_mechanism_after_its_cases() {
        let p = plan(&["--no-pin", "--tasks", "2,1", "--seed", "1"]);
        assert_eq!(p.cases.len(), p.control.len());
        let mut expected = Vec::new();
        for m in mechanisms::MECHANISMS {
            if m.name() == "none" || !available(m.name()) {
                continue;
            }
            let t = survey_treatment(m.name(), m.survey_variants()[0]).unwrap();
            expected.push((t.to_string(), "stream", 2));
        }
        assert_eq!(controls(&p), expected);
        assert_eq!(p.controls.len(), expected.len());
        for (label, (t, _, _)) in p.controls.iter().zip(&expected) {
            assert_eq!(label, &format!("{t} on stream x2"));
            assert!(
                p.comparisons.contains(label),
                "{label} not in {:?}",
                p.comparisons
            );
        }
        // Each control comes right after its mechanism's last case, on
        // default parameters.
        for (i, case) in p.cases.iter().enumerate().filter(|(i, _)| p.control[*i]) {
            let m = case.treatment.mechanism.name();
            assert_eq!(p.cases[i - 1].treatment.mechanism.name(), m);
            let mut later = p.cases.iter().zip(&p.control).skip(i + 1);
            assert!(!later.any(|(c, control)| c.treatment.mechanism.name() == m && !control));
            assert_eq!(case.workload_params["elements"], "2000000");
        }
        assert!(
            !p.cases
                .iter()
                .any(|c| c.treatment.mechanism.name() == "none" && c.workload.name == "stream")
        );
    }

    #[test]
    fn explicit_mechanisms_get_one_control_each_unless_workloads_are_given() {
        if !available("seccomp") {
            eprintln!("skipped: seccomp unavailable here");
            return;
        }
        let p = plan(&[
            "-m",
            "seccomp:args",
            "-m",
            "seccomp",
            "-m",
            "none",
            "--no-pin",
        ]);
        assert_eq!(
            controls(&p),
            [("seccomp:args".to_string(), "stream", 1)],
            "{:?}",
            p.comparisons
        );
        assert_eq!(p.controls, ["seccomp:args on stream x1"]);
        // The control is in the Holm family: counted like any comparison.
        assert_eq!(p.comparisons.len(), p.cases.len());

        for args in [
            &["-m", "seccomp", "-w", "getppid"][..],
            &["-m", "seccomp", "--no-control"][..],
        ] {
            let p = plan(args);
            assert!(p.controls.is_empty(), "{args:?}: {:?}", p.controls);
            assert!(!p.control.iter().any(|c| *c));
            assert!(!p.cases.iter().any(|c| c.workload.name == "stream"));
        }
        // -w stream: measured because asked for, not added as a control.
        let p = plan(&["-m", "seccomp", "-w", "getppid,stream"]);
        assert!(p.controls.is_empty());
        assert_eq!(
            p.cases
                .iter()
                .filter(|c| c.workload.name == "stream")
                .count(),
            1
        );
    }
}
