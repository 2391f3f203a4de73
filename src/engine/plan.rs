//! Planning: what a measuring command will do, decided before anything
//! runs. The placement and half-design every A/B command shares, and the
//! plan of `overhead`: explicit mechanisms or the survey, the workloads each
//! mechanism's hooks touch, one negative control per mechanism, and the
//! pairs a table needs for Holm correction (or for a precision, from the
//! last calibration).
//!
//! With no mechanism named, every mechanism is surveyed on the workloads
//! its hooks touch; unavailable ones are listed with the reason. Asking
//! explicitly for an unavailable mechanism is a usage error (exit 2) with
//! the reason. Unless workloads are named (or controls turned off), each
//! mechanism also gets one negative control: its first treatment on
//! `stream`, where none of its hooks run, so that a change there flags
//! figures not to be trusted.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use super::ab::design::{CONTROL_WORKLOAD, Case, Design};
use super::session::{cache_dir, seed_or_clock};
use super::sweep::SweepSpec;
use crate::mechanisms::{self, Availability, Scope, Treatment};
use crate::model::{Mode, Skipped};
use crate::profile::ProfileOpts;
use crate::stats::decision::SeqTest;
use crate::stats::decision::{DecisionOpts, min_pairs_for};
use crate::stats::sequential::{StopRule, first_finite, first_finite_by, min_pairs_to_decide_by};
use crate::usage_bail;
use crate::workloads::select::{parse_list, resolve_params};

/// Where tasks run, checked against this machine.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The task ladder (counts of tasks).
    pub tasks: Vec<usize>,
    /// CPUs task i is pinned to (`cpus[i]`); empty without pinning.
    pub cpus: Vec<usize>,
    /// Where workloads create their files.
    pub scratch: PathBuf,
    pub label: String,
}

impl Placement {
    /// The placement of `tasks` (`--tasks`' value: counts or "auto"),
    /// pinned unless `no_pin`, files under `scratch` (a directory; the
    /// system's temporary one when None), the run named `label`: the
    /// ladder validated against the CPUs this process may use.
    pub fn resolve(
        tasks: &str,
        no_pin: bool,
        scratch: Option<&std::path::Path>,
        label: Option<&str>,
    ) -> Result<Placement> {
        use crate::sys::cpus;
        let allowed = cpus::allowed_cpus().context("reading this process's CPU affinity")?;
        let online = cpus::online_cpus().context("reading online CPUs")?.len();
        let tasks = parse_tasks(tasks, online.min(allowed.len()))?;
        let max_tasks = *tasks.iter().max().unwrap_or(&1);
        if !no_pin && max_tasks > allowed.len() {
            usage_bail!(
                "--tasks {max_tasks}: only {} CPUs are available to pin tasks to; \
                 use at most {} tasks, or --no-pin to oversubscribe",
                allowed.len(),
                allowed.len()
            );
        }
        if let Some(dir) = scratch.filter(|d| !d.is_dir()) {
            usage_bail!("--scratch {}: not a directory", dir.display());
        }
        Ok(Placement {
            tasks,
            cpus: if no_pin { Vec::new() } else { allowed },
            scratch: scratch.map_or_else(std::env::temp_dir, |d| d.to_path_buf()),
            label: label.unwrap_or_default().to_string(),
        })
    }
}

/// Parses `--tasks` against the number of online CPUs.
pub fn parse_tasks(spec: &str, online: usize) -> Result<Vec<usize>> {
    if spec.trim() == "auto" {
        let mut v = Vec::new();
        let mut n = 1;
        while n < online {
            v.push(n);
            n *= 2;
        }
        v.push(online.max(1));
        return Ok(v);
    }
    let mut v = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n: usize = part.parse().map_err(|_| {
            crate::error::UsageError::new(format!(
                "--tasks: '{part}' is not a number (give e.g. 1,2,4 or auto)"
            ))
        })?;
        if n == 0 {
            usage_bail!("--tasks: task counts start at 1 (give e.g. 1,2,4 or auto)");
        }
        if n > 4096 {
            usage_bail!("--tasks: {n} tasks is more than secperf supports (4096)");
        }
        if !v.contains(&n) {
            v.push(n);
        }
    }
    if v.is_empty() {
        usage_bail!("--tasks: no task count given (give e.g. 1,2,4 or auto)");
    }
    Ok(v)
}

#[cfg(test)]
mod placement_tests {
    use super::*;

    #[test]
    fn auto_ladder_includes_cpu_count() {
        assert_eq!(parse_tasks("auto", 1).unwrap(), vec![1]);
        assert_eq!(parse_tasks("auto", 2).unwrap(), vec![1, 2]);
        assert_eq!(parse_tasks("auto", 6).unwrap(), vec![1, 2, 4, 6]);
        assert_eq!(parse_tasks("auto", 16).unwrap(), vec![1, 2, 4, 8, 16]);
    }

    #[test]
    fn explicit_ladder() {
        assert_eq!(parse_tasks("1, 2,4,2", 2).unwrap(), vec![1, 2, 4]);
        for bad in ["0", "abc", "", "1,-2"] {
            let e = parse_tasks(bad, 2).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}");
        }
    }
}

/// `overhead`'s sequential test unless `--test` says otherwise (and
/// `calibrate`'s, which checks it): docs/methodology.md 4.6 gives the
/// measurements behind the choice.
pub const DEFAULT_TEST: crate::stats::decision::SeqTest = crate::stats::decision::SeqTest::Both;
/// `overhead`'s error rate over a table in the sequential design.
pub const DEFAULT_ERROR_RATE: crate::stats::decision::ErrorRate =
    crate::stats::decision::ErrorRate::Fdr;
/// Length of one slice (sample) of a half, ms, unless `--sample-ms` or
/// `--quick` says otherwise.
pub const DEFAULT_SAMPLE_MS: u64 = 60;
/// Slices per half unless `--samples-per-half` or `--quick` says otherwise.
pub const DEFAULT_SAMPLES_PER_HALF: u32 = 2;

/// Slices per half of a kernel A/B counting instructions (`--metric
/// instructions` with `--kernel`) unless `--samples-per-half` says
/// otherwise: each half is the least of them ([`super::ab::measurer::least_sample`]),
/// and three leave the least a spare where one slice in a half caught
/// other work in the guest. A slice costs about a third of a second of an
/// emulated guest; a boot about 26 s.
pub const COUNTING_SAMPLES_PER_HALF: u32 = 3;

/// How each half of a pair is measured, defaults filled in and checked;
/// `pairs` stays the planner's choice when not given.
#[derive(Debug, Clone, Copy)]
pub struct HalfDesign {
    /// `--pairs`: a fixed number of pairs (None: the sequential design).
    pub pairs: Option<u32>,
    /// `--max-pairs`: the sequential design's budget per comparison.
    pub max_pairs: Option<u32>,
    pub sample_ms: u64,
    pub samples_per_half: u32,
    pub warmup: u32,
}

/// What the user asked `overhead` for, each value already checked.
#[derive(Debug, Clone)]
pub struct OverheadRequest {
    /// Mechanism specs (`seccomp:args,filters=4`); empty for the survey.
    pub mechanisms: Vec<String>,
    /// A `-w` list, or None for the workloads each mechanism touches.
    pub workloads: Option<String>,
    /// Raw `--param` values.
    pub params: Vec<String>,
    pub placement: Placement,
    pub mode: Mode,
    pub half: HalfDesign,
    pub quick: bool,
    pub no_control: bool,
    pub seed: Option<u64>,
    pub decision: DecisionOpts,
    /// `--precision`: the 95% interval's half-width wanted, percent.
    pub precision: Option<f64>,
    /// `--profile`: extra profiled pairs per comparison.
    pub profile: Option<ProfileOpts>,
    /// `--sweep`: one comparison per value of one parameter.
    pub sweep: Option<SweepSpec>,
    /// `--equivalence auto`: the margin from this machine's calibrations
    /// ([`OverheadPlan::equivalence_from_calibrations`]).
    pub equivalence_auto: bool,
    /// How the halves count ([`super::ab::counting::decide`]).
    pub counting: super::ab::counting::Counting,
}

/// Everything `overhead` will do, validated before anything runs.
#[derive(Debug, Serialize)]
pub struct OverheadPlan {
    #[serde(skip)]
    pub cases: Vec<Case>,
    /// How the halves count (`--metric`, decided for this machine; stored
    /// in the run's parameters by the session, not here).
    #[serde(skip)]
    pub counting: super::ab::counting::Counting,
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
    /// What each treatment's mechanism says about it before measuring (a
    /// compiled profile's size, rule-file lines not applied), "label: text".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub treatment_notes: Vec<String>,
    /// Warnings about the design (too few pairs to decide), for the
    /// command to print.
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// The policy files the treatments measure, as read while planning
    /// (stored with the run, not in its parameters).
    #[serde(skip)]
    pub policy_files: Vec<crate::model::PolicyFile>,
    /// The parameter swept (`--sweep`); absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSpec>,
    /// Profiled pairs after the timed ones (`--profile`); absent when off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileOpts>,
    /// The precision to size pairs for from calibrations (see
    /// [`OverheadPlan::pairs_from_calibration`]); None when `--pairs` was
    /// given or no precision asked for.
    #[serde(skip)]
    pub(super) precision_from_calibration: Option<f64>,
    /// `--equivalence auto`, until the margin is sized.
    #[serde(skip)]
    pub(super) equivalence_from_calibration: bool,
    /// Where `--equivalence auto`'s margin came from, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equivalence_note: Option<String>,
    /// The sequential design's stopping rule (`pairs` is then its budget);
    /// absent with `--pairs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopRule>,
}

/// The sequential design's default budget per comparison: enough for an
/// effect with up to four pairs on the wrong side to settle in a table of
/// 29 (the default survey). Comparisons that could no longer settle stop
/// early (futility), so the default survey stays under 3 minutes here:
/// 167 and 177 s in two interleaved runs against 149 s for 12 fixed pairs.
pub const DEFAULT_MAX_PAIRS: u32 = 32;

/// A negative control's sequential budget (see [`OverheadPlan::design_for`]).
pub const CONTROL_MAX_PAIRS: u32 = 12;

/// The stopping rule of a table of `family` comparisons: looks from the
/// first pair count at which the sequence can exclude anything, a budget
/// of `max_pairs` (default [`DEFAULT_MAX_PAIRS`]) raised, with a warning,
/// to the pairs a table this size needs before anything can be slower or
/// faster.
pub fn stop_rule(
    family: usize,
    max_pairs: Option<u32>,
    decision: &DecisionOpts,
    precision_pct: Option<f64>,
) -> StopRule {
    let needed = min_pairs_to_decide_by(family, decision.alpha, decision.test) as u32;
    let max = match max_pairs {
        Some(max) => {
            if max < needed {
                crate::say!(
                    "secperf: warning: with at most {max} pairs and {family} comparisons nothing \
                     can be significant at alpha {}; use --max-pairs {needed} or more",
                    decision.alpha
                );
            }
            max
        }
        None => DEFAULT_MAX_PAIRS.max(needed),
    };
    // The sign test looks from 6 pairs; the t-test from the first pair
    // count at which it can exclude anything.
    let min = match decision.test {
        SeqTest::Sign => (first_finite(decision.alpha) as u32).max(6),
        SeqTest::T | SeqTest::Both => first_finite_by(decision.alpha, decision.test) as u32,
    }
    .min(max);
    StopRule {
        min_pairs: min,
        max_pairs: max,
        family: family as u32,
        decision: *decision,
        precision_pct,
        rank: 1,
    }
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
    let params = stream.params_with_defaults(&Default::default());
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

/// The `-m` specs with a mechanism-parameter sweep applied: each spec
/// whose mechanism has the parameter becomes one spec per value; a sweep
/// that no named mechanism takes is a usage error.
fn sweep_specs(specs: &[String], sweep: Option<&SweepSpec>) -> Result<Vec<String>> {
    let Some(sw) = sweep.filter(|s| s.workload.is_none()) else {
        return Ok(specs.to_vec());
    };
    let mut out = Vec::new();
    for spec in specs {
        let t = Treatment::parse(spec)?;
        if t.mechanism.params().iter().any(|p| p.name == sw.param) {
            out.extend(sw.values.iter().map(|v| format!("{spec},{}={v}", sw.param)));
        } else {
            out.push(spec.clone());
        }
    }
    if out.len() == specs.len() {
        usage_bail!(
            "--sweep {}: no mechanism given with -m has a parameter '{}' (see `secperf list`; \
             for a workload parameter write WORKLOAD.{})",
            sw.key,
            sw.param,
            sw.param
        );
    }
    Ok(out)
}

/// A workload's parameters, once per value of a workload-parameter sweep
/// on it (each checked as the workload checks them), or just once.
fn swept_workload_params(
    w: &crate::workloads::WorkloadDef,
    params: &crate::model::Params,
    sweep: Option<&SweepSpec>,
) -> Result<Vec<crate::model::Params>> {
    let Some(sw) = sweep.filter(|s| s.workload.as_deref() == Some(w.name)) else {
        return Ok(vec![params.clone()]);
    };
    if !w.params.iter().any(|p| p.name == sw.param) {
        let valid: Vec<&str> = w.params.iter().map(|p| p.name).collect();
        usage_bail!(
            "--sweep {}: workload {} has no parameter '{}' (valid: {})",
            sw.key,
            w.name,
            sw.param,
            if valid.is_empty() {
                "none".to_string()
            } else {
                valid.join(", ")
            }
        );
    }
    sw.values
        .iter()
        .map(|v| {
            let mut p = params.clone();
            p.insert(sw.param.clone(), v.clone());
            (w.validate)(&p).with_context(|| format!("--sweep {}={v}", sw.key))?;
            Ok(p)
        })
        .collect()
}

impl OverheadPlan {
    /// Plans what `a` asks for: every name checked, unavailable mechanisms
    /// asked for by name refused with the reason, the survey otherwise.
    pub fn new(a: &OverheadRequest) -> Result<OverheadPlan> {
        let placement = &a.placement;
        let half = a.half;
        let decision = a.decision;
        let explicit_workloads = a.workloads.as_deref().map(parse_list).transpose()?;

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
            for spec in &sweep_specs(&a.mechanisms, a.sweep.as_ref())? {
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

        let mut treatment_notes = Vec::new();
        let mut policy_files: Vec<crate::model::PolicyFile> = Vec::new();
        for t in &treatments {
            for line in t.mechanism.describe(t).with_context(|| t.to_string())? {
                treatment_notes.push(format!("{t}: {line}"));
            }
            for (param, path) in t.mechanism.policy_files(t) {
                if !policy_files.iter().any(|f| f.path == path) {
                    policy_files.push(crate::policy::source::policy_file(
                        &t.to_string(),
                        param,
                        &path,
                    )?);
                }
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
            let params = resolve_params(&workloads, &a.params)?;
            for w in workloads {
                for wp in swept_workload_params(w, &params[w.name], a.sweep.as_ref())? {
                    t.mechanism
                        .check_workload(t, w, &wp)
                        .with_context(|| format!("{t} on {}", w.name))?;
                    for &n in &placement.tasks {
                        cases.push(Case {
                            workload: w,
                            workload_params: wp.clone(),
                            treatment: t.clone(),
                            tasks: n,
                        });
                    }
                }
            }
        }
        if let Some(sw) = a.sweep.as_ref().filter(|s| s.workload.is_some()) {
            let w = sw.workload.as_deref().unwrap_or_default();
            if !cases.iter().any(|c| c.workload.name == w) {
                usage_bail!(
                    "--sweep {}: workload {w} is not measured; select it with -w {w}",
                    sw.key
                );
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
        let mut warnings = Vec::new();
        let (pairs, stop) = match half.pairs {
            Some(pairs) => {
                // The smallest two-sided exact Wilcoxon p-value with n pairs
                // is 2/2^n; after Holm over m comparisons it must still beat
                // alpha.
                let needed = min_pairs_for(cases.len(), decision.alpha);
                if pairs < needed {
                    warnings.push(format!(
                        "with {pairs} pairs and {} nothing can be significant after Holm \
                         correction at alpha {}; use --pairs {needed} or more",
                        crate::report::number::count(cases.len(), "comparison"),
                        decision.alpha
                    ));
                }
                (pairs, None)
            }
            None => {
                let rule = stop_rule(cases.len(), half.max_pairs, &decision, a.precision);
                (rule.max_pairs, Some(rule))
            }
        };
        for case in &cases {
            crate::mechanisms::audit::refuse_scratch_watches(&case.treatment, &placement.scratch)?;
        }
        let seed = seed_or_clock(a.seed);
        Ok(OverheadPlan {
            counting: a.counting,
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
            mode: a.mode,
            cpus: placement.cpus.clone(),
            seed,
            decision,
            label: placement.label.clone(),
            scratch: placement.scratch.clone(),
            quick: a.quick,
            treatment_notes,
            warnings,
            policy_files,
            sweep: a.sweep.clone(),
            profile: a.profile,
            precision_from_calibration: a
                .precision
                .filter(|_| half.pairs.is_none() && half.max_pairs.is_none()),
            equivalence_from_calibration: a.equivalence_auto,
            equivalence_note: None,
            stop,
        })
    }

    /// Whether any case switches a system-wide mechanism (the run then
    /// holds the state lock).
    pub fn system_wide(&self) -> bool {
        self.cases
            .iter()
            .any(|c| c.treatment.mechanism.scope() == Scope::System)
    }

    /// Whether any case switches the mechanism named `name`.
    pub fn switches(&self, name: &str) -> bool {
        self.cases
            .iter()
            .any(|c| c.treatment.mechanism.name() == name)
    }

    /// The design of one comparison: a negative control's sequential
    /// budget is the fixed design's 12 pairs (or the fewest its table
    /// needs to decide): it is there to flag a disturbed run, which it does
    /// as well with 12 pairs, and `stream`'s noise would take the whole of
    /// a larger budget without settling.
    pub fn design_for(&self, control: bool) -> Design {
        let mut d = self.design();
        if let (true, Some(stop)) = (control, d.stop.as_mut()) {
            let needed = min_pairs_to_decide_by(
                stop.family as usize,
                stop.decision.alpha,
                stop.decision.test,
            ) as u32;
            stop.max_pairs = stop.max_pairs.min(CONTROL_MAX_PAIRS.max(needed));
            d.pairs = stop.max_pairs;
        }
        d
    }

    /// Pairs the plan measures at most (the progress bar's length).
    pub fn max_pairs_total(&self) -> u64 {
        self.control
            .iter()
            .map(|&c| self.design_for(c).pairs as u64)
            .sum()
    }

    /// The design every comparison of the plan is measured with.
    pub fn design(&self) -> Design {
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
            profile: self.profile,
            stop: self.stop,
            counting: self.counting,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of `-m` specs and `-w`, on tasks `tasks`, unpinned.
    fn plan_of(
        mechanisms: &[&str],
        workloads: Option<&str>,
        no_control: bool,
        tasks: &[usize],
    ) -> OverheadPlan {
        OverheadPlan::new(&request_of(mechanisms, workloads, no_control, tasks)).unwrap()
    }

    fn request_of(
        mechanisms: &[&str],
        workloads: Option<&str>,
        no_control: bool,
        tasks: &[usize],
    ) -> OverheadRequest {
        OverheadRequest {
            mechanisms: mechanisms.iter().map(|m| m.to_string()).collect(),
            workloads: workloads.map(str::to_string),
            params: vec![],
            placement: Placement {
                tasks: tasks.to_vec(),
                cpus: vec![],
                scratch: std::env::temp_dir(),
                label: String::new(),
            },
            mode: Mode::Process,
            half: HalfDesign {
                pairs: None,
                max_pairs: None,
                sample_ms: 60,
                samples_per_half: 2,
                warmup: 1,
            },
            quick: false,
            no_control,
            seed: Some(1),
            decision: DecisionOpts::default(),
            precision: None,
            profile: None,
            sweep: None,
            equivalence_auto: false,
            counting: crate::engine::ab::counting::Counting::Clock,
        }
    }

    #[test]
    fn a_sweep_makes_one_case_per_value() {
        use crate::engine::sweep::parse;
        let mut r = request_of(&["seccomp:args", "none"], Some("getppid"), true, &[1]);
        r.sweep = Some(parse("filters=1,2,4").unwrap());
        let p = OverheadPlan::new(&r).unwrap();
        let labels: Vec<String> = p.cases.iter().map(|c| c.treatment.to_string()).collect();
        assert_eq!(
            labels,
            [
                "seccomp:args",
                "seccomp:args,filters=2",
                "seccomp:args,filters=4",
                "none:control"
            ]
        );
        assert_eq!(p.sweep.as_ref().unwrap().key, "filters");

        let mut r = request_of(&["seccomp"], Some("open,getppid"), true, &[1]);
        r.sweep = Some(parse("open.depth=1,8").unwrap());
        let p = OverheadPlan::new(&r).unwrap();
        let depths: Vec<(&str, Option<&String>)> = p
            .cases
            .iter()
            .map(|c| (c.workload.name, c.workload_params.get("depth")))
            .collect();
        assert_eq!(depths.len(), 3, "{depths:?}");
        assert_eq!(depths[0].1.map(String::as_str), Some("1"));
        assert_eq!(depths[1].1.map(String::as_str), Some("8"));
        assert_eq!(depths[2].0, "getppid");

        for (mechs, workloads, sweep) in [
            (&["none"][..], "getppid", "filters=1,2"),
            (&["seccomp"][..], "getppid", "open.depth=1,2"),
            (&["seccomp"][..], "open", "open.nope=1,2"),
            (&["seccomp"][..], "open", "open.depth=0,2"),
        ] {
            let mut r = request_of(mechs, Some(workloads), true, &[1]);
            r.sweep = Some(parse(sweep).unwrap());
            let e = OverheadPlan::new(&r).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{sweep}: {e:#}");
        }
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
        let p = plan_of(&[], None, false, &[2, 1]);
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
            let test = "explicit_mechanisms_get_one_control_each_unless_workloads_are_given";
            crate::testing::skip_kernel_feature(test, "seccomp", "seccomp unavailable here");
            return;
        }
        let p = plan_of(&["seccomp:args", "seccomp", "none"], None, false, &[1]);
        assert_eq!(
            controls(&p),
            [("seccomp:args".to_string(), "stream", 1)],
            "{:?}",
            p.comparisons
        );
        assert_eq!(p.controls, ["seccomp:args on stream x1"]);
        // The control is in the Holm family: counted like any comparison.
        assert_eq!(p.comparisons.len(), p.cases.len());

        for (workloads, no_control) in [(Some("getppid"), false), (None, true)] {
            let args = (workloads, no_control);
            let p = plan_of(&["seccomp"], workloads, no_control, &[1]);
            assert!(p.controls.is_empty(), "{args:?}: {:?}", p.controls);
            assert!(!p.control.iter().any(|c| *c));
            assert!(!p.cases.iter().any(|c| c.workload.name == "stream"));
        }
        // -w stream: measured because asked for, not added as a control.
        let p = plan_of(&["seccomp"], Some("getppid,stream"), false, &[1]);
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
