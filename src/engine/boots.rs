//! Boot arms: a kernel A/B across boots (`overhead --kernel A=IMAGE
//! --kernel B=IMAGE[,append=ARGS]`).
//!
//! Each pair is one boot of each arm, in the seeded AB/BA order of the
//! live design. Each boot measures one half of every case still open, in
//! fresh tasks per case, with nothing switched (the kernel and its command
//! line are the treatment). Halves are paired across the two boots of a
//! pair and decided by the same machinery as a live A/B: the sequential
//! stopping rule after every pair (a settled case is not measured again),
//! then Holm, the noise band and equivalence over the table.
//!
//! The guest side is `secperf guest` ([`guest_halves`]): the host writes
//! each boot's request (the plan's cases, which to measure, how, how it
//! counts, whether profiled) to the shared directory
//! ([`super::guest_request`]), and the guest writes one half per case
//! asked for back.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::counting::Counting;
use super::design::{Case, Design, pair_order};
use super::guest_request::{BootHalves, CaseSpec, GuestTask, HalfSpec};
use super::measurer::{HalfResult, Measurer};
use super::vm::{BootSetup, boot, booting_line, resolve_engine};
use crate::mechanisms::Arm;
use crate::model::{ChildCpu, Comparison, PairData, Params};
use crate::profile::attribute::{AttributeOpts, HalfProfile, ProfiledPair, attribute};
use crate::stats::bootstrap::Rng;
use crate::stats::decision::DecisionOpts;
use crate::stats::sequential::{StopReason, settled};
use crate::store::Store;
use crate::vm::accel::AccelChoice;
use crate::vm::arms::{ArmRecord, KernelArm};

/// The mechanism name boot-arm comparisons are stored under.
pub const MECHANISM: &str = "kernel";
/// The file in the shared directory the guest writes its halves to.
pub const HALVES_FILE: &str = "halves.json";
/// The file in the shared directory the guest writes its probe to.
pub const PROBE_FILE: &str = "probe.json";

/// One half the guest measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BootHalf {
    /// The case's index in the plan.
    pub case: usize,
    pub ns_per_op: f64,
    pub child_cpu: Option<ChildCpu>,
    /// With `--profile`: a profiled half after the timed one, its stacks
    /// symbolised in the guest (with the guest kernel's kallsyms).
    #[serde(default)]
    pub profile: Option<HalfProfile>,
    /// Why there is no profile where one was asked for.
    #[serde(default)]
    pub profile_note: Option<String>,
}

/// What a boot gives the host for one case.
#[derive(Debug, Clone, Default)]
pub struct BootResult {
    pub half: Option<HalfResult>,
    pub profile: Option<HalfProfile>,
    pub profile_note: Option<String>,
}

impl BootResult {
    pub fn of(half: HalfResult) -> BootResult {
        BootResult {
            half: Some(half),
            ..Default::default()
        }
    }
}

/// The arm a boot measures a case in: a mechanism given with --kernel is
/// on in every boot of every arm (a runtime setting the kernels share),
/// as the treatment half.
fn boot_arm(case: &Case) -> Arm {
    if case.treatment.mechanism.name() == "none" {
        Arm::Baseline
    } else {
        Arm::Treatment
    }
}

/// In a guest of a kernel A/B (`secperf guest`): the halves its request
/// asks for, measured as [`measure_halves`] does, with the measurement
/// lock and (for a mechanism on in every boot that is system-wide, audit
/// rules) the guest's state lock held.
pub fn guest_halves(shared: &Path, request: &BootHalves) -> Result<()> {
    let cases = request
        .cases
        .iter()
        .map(CaseSpec::case)
        .collect::<Result<Vec<_>>>()
        .context("the host's request names what this guest's secperf lacks")?;
    let design = request
        .halves
        .design(&cases, request.counting, request.profile)?;
    let _measuring = super::session::measurement_lock(false)?;
    let lock = cases
        .iter()
        .any(|c| c.treatment.mechanism.scope() == crate::mechanisms::Scope::System)
        .then(|| crate::safety::StateLock::acquire(super::session::LOCK_WAIT))
        .transpose()?;
    measure_halves(
        &cases,
        &design,
        &request.measure,
        &mut super::measurer::Live {
            lock: lock.as_ref(),
        },
        shared,
        request.profile.as_ref(),
    )
}

/// `secperf guest`: in a guest of a kernel A/B, what the host's request
/// asks for. Refused outside a guest, and in a `--vm` guest (whose request
/// is the command on its command line).
pub fn run_guest() -> Result<()> {
    let (Some(shared), Some(request)) = (
        crate::vm::guest::shared_dir(),
        super::guest_request::of_this_guest()?,
    ) else {
        crate::usage_bail!(
            "`secperf guest` is run by secperf in a guest of `overhead --kernel`, bisect or \
             track, told what to do by the request its host wrote"
        );
    };
    match &request.task {
        GuestTask::BootHalves(h) => guest_halves(&shared, h),
        GuestTask::Command => crate::usage_bail!(
            "this guest's request is to run the command on its command line (a --vm guest), \
             not `secperf guest`"
        ),
    }
}

/// In the guest: one baseline half of each case in `indexes`, written to
/// [`HALVES_FILE`] in `shared`; with `profile` a profiled half of each
/// too.
pub fn measure_halves(
    cases: &[Case],
    design: &Design,
    indexes: &[usize],
    measurer: &mut dyn Measurer,
    shared: &Path,
    profile: Option<&crate::profile::ProfileOpts>,
) -> Result<()> {
    let (symbols, notes) = match profile {
        Some(p) => crate::profile::readiness(p.hz),
        None => (None, Vec::new()),
    };
    if design.counting.warms_up() {
        let warm: Vec<&Case> = indexes.iter().filter_map(|&i| cases.get(i)).collect();
        super::warmup::warm_up(warm.into_iter().map(|c| (c, design, boot_arm(c))), measurer)?;
    }
    let mut out = Vec::new();
    for &i in indexes {
        let Some(case) = cases.get(i) else {
            anyhow::bail!(
                "the host's request asks for case {i}, and its plan has {}",
                cases.len()
            );
        };
        let what = crate::report::label::workload(case.workload.name, &case.workload_params);
        crate::say!("secperf: measuring {what} tasks={}", case.tasks);
        // A mechanism given with --kernel is on in every boot of every arm
        // (a runtime setting the kernels share): the treatment half.
        let arm = boot_arm(case);
        let h = measurer
            .half(
                case,
                design,
                arm,
                &mut crate::runner::Unobserved,
                &mut |_| {},
            )
            .with_context(|| format!("{what} tasks={} in the guest", case.tasks))?;
        let (profile, profile_note) = match (profile, &symbols) {
            (None, _) => (None, None),
            (Some(_), None) => (None, Some(notes.join("; "))),
            (Some(p), Some(symbols)) => {
                match crate::profile::profile_half(symbols, p.hz, design.sample_ms, |observer| {
                    measurer
                        .half(case, design, arm, observer, &mut |_| {})
                        .map(|h| h.per_op)
                }) {
                    Ok(half) => (Some(half), None),
                    Err(e) => (None, Some(format!("the profiled half failed: {e:#}"))),
                }
            }
        };
        out.push(BootHalf {
            case: i,
            ns_per_op: h.per_op,
            child_cpu: h.child_cpu,
            profile,
            profile_note,
        });
    }
    let file = shared.join(PROBE_FILE);
    std::fs::write(&file, serde_json::to_string(&crate::probe::probe())?)
        .with_context(|| format!("writing {}", file.display()))?;
    let file = shared.join(HALVES_FILE);
    std::fs::write(&file, serde_json::to_string(&out)?)
        .with_context(|| format!("writing {}", file.display()))
}

/// The order in which one block's arms boot: for two arms the seeded coin
/// of the live design (AB or BA); for more, a seeded shuffle.
fn block_order(rng: &mut Rng, arms: usize) -> Vec<usize> {
    if arms == 2 {
        return pair_order(rng)
            .map(|a| (a == Arm::Treatment) as usize)
            .to_vec();
    }
    let mut order: Vec<usize> = (0..arms).collect();
    for i in (1..arms).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// The arms' boot order of each block (0: baseline, then the others), as
/// the seeded draws of `design` will make it.
pub fn boot_order(design: &Design, arms: usize) -> Vec<Vec<usize>> {
    let mut rng = Rng::new(design.seed);
    (0..design.pairs)
        .map(|_| block_order(&mut rng, arms))
        .collect()
}

/// Boots an arm and returns the halves of the cases asked for (profiled
/// too when `profile`).
pub trait Booter {
    fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>>;

    /// Whether a block's boots may run at the same time: only where that
    /// cannot change what they measure (counted instructions, whose
    /// guest clock counts the guest's own instructions whatever the
    /// host's load), and where the host has a CPU for each.
    fn together(&self) -> bool {
        false
    }

    /// Boots each `(arm, cases)` at the same time; a result per boot, in
    /// order. Only called when [`Booter::together`] says so.
    fn boot_together(
        &mut self,
        asks: &[(usize, Vec<usize>)],
        profile: bool,
    ) -> Vec<Result<Vec<BootResult>>> {
        asks.iter()
            .map(|(arm, cases)| self.boot(*arm, cases, profile))
            .collect()
    }
}

/// How one boot went, for progress.
pub struct BootDone {
    pub index: usize,
    pub total: usize,
    pub arm: usize,
    pub pair: u32,
    /// After the last boot of a pair (block): each comparison's estimate
    /// and interval so far ("getppid, fine against base: +12.0% [4.1,
    /// 21.3] after 3 pairs"), before the table's correction.
    pub findings: Vec<String>,
}

/// Pairs halves across boots: for each block (a pair, with two arms) a
/// seeded draw orders the arms' boots, each boot measures the cases still
/// open for its arm, and a case whose stopping rule settles is left out
/// of later boots. Every arm after the first is compared with the first
/// (its baseline): with the layout control's third arm, each block is
/// one boot of each of the three, and the baseline's boot serves both
/// comparisons. Returns one comparison per case and compared arm
/// (unfinished ones marked when a boot fails, with the error).
pub fn pairs_over_boots(
    cases: &[Case],
    design: &Design,
    arm_names: &[&str],
    booter: &mut dyn Booter,
    on_boot: &mut dyn FnMut(&BootDone),
) -> (Vec<Comparison>, Option<anyhow::Error>) {
    let mut rng = Rng::new(design.seed);
    let n = cases.len();
    let k = arm_names.len();
    let contrasts = k.saturating_sub(1);
    // Indexed [contrast][case].
    let mut pairs: Vec<Vec<Vec<PairData>>> = vec![vec![Vec::new(); n]; contrasts];
    let mut cpu: Vec<Vec<[Vec<ChildCpu>; 2]>> = vec![vec![Default::default(); n]; contrasts];
    let mut stopped: Vec<Vec<Option<StopReason>>> = vec![vec![None; n]; contrasts];
    let mut profiled: Vec<Vec<Vec<ProfiledPair>>> = vec![vec![Vec::new(); n]; contrasts];
    let mut profile_notes: Vec<Vec<Vec<String>>> = vec![vec![Vec::new(); n]; contrasts];
    let total = k * design.pairs as usize;
    let mut index = 0;
    let mut error = None;
    'pairs: for i in 0..design.pairs {
        // The cases each arm must measure in this block.
        let open_for = |arm: usize, stopped: &Vec<Vec<Option<StopReason>>>| -> Vec<usize> {
            (0..n)
                .filter(|&c| {
                    if arm == 0 {
                        (0..contrasts).any(|j| stopped[j][c].is_none())
                    } else {
                        stopped[arm - 1][c].is_none()
                    }
                })
                .collect()
        };
        if open_for(0, &stopped).is_empty() {
            break;
        }
        let order = block_order(&mut rng, k);
        // The arms that boot in this block (one with every case settled
        // sits it out): each boot but the last is reported as soon as it
        // is done, so that its time a boot is its own; the last waits for
        // the block's pairs, to say what they find.
        let booting: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&arm| !open_for(arm, &stopped).is_empty())
            .collect();
        let mut last_done: Option<BootDone> = None;
        let mut got: Vec<Vec<(usize, BootResult)>> = vec![Vec::new(); k];
        let profile = design.profile.is_some_and(|p| i < p.pairs);
        // Counting instructions, the block's boots run at once (a pair in
        // the time of one boot); each is then reported as if in turn.
        let mut together = (booter.together() && !profile && booting.len() > 1).then(|| {
            let asks: Vec<(usize, Vec<usize>)> = booting
                .iter()
                .map(|&arm| (arm, open_for(arm, &stopped)))
                .collect();
            booter.boot_together(&asks, profile).into_iter()
        });
        for (b, &arm) in booting.iter().enumerate() {
            let open = open_for(arm, &stopped);
            let booted = match together.as_mut() {
                Some(results) => results
                    .next()
                    .unwrap_or_else(|| Err(anyhow::anyhow!("no boot of arm {arm} came back"))),
                None => booter.boot(arm, &open, profile),
            };
            match booted {
                Ok(h) if h.len() == open.len() => got[arm] = open.iter().copied().zip(h).collect(),
                Ok(h) => {
                    error = Some(anyhow::anyhow!(
                        "the guest of arm '{}' measured {} of {} cases",
                        arm_names[arm],
                        h.len(),
                        open.len()
                    ));
                    break 'pairs;
                }
                Err(e) => {
                    error = Some(e.context(format!(
                        "boot of arm '{}', {} {} of {}",
                        arm_names[arm],
                        if k == 2 { "pair" } else { "block" },
                        i + 1,
                        design.pairs
                    )));
                    break 'pairs;
                }
            }
            index += 1;
            let done = BootDone {
                index,
                total,
                arm,
                pair: i,
                findings: Vec::new(),
            };
            if b + 1 < booting.len() {
                on_boot(&done);
            } else {
                last_done = Some(done);
            }
        }
        let position = |arm: usize| order.iter().position(|&a| a == arm).unwrap_or(0);
        for j in 0..contrasts {
            let arm = j + 1;
            let label = if position(0) < position(arm) {
                "AB"
            } else {
                "BA"
            };
            let (base, rest) = got.split_at_mut(1);
            for (c, t_result) in rest[arm - 1].iter_mut() {
                let c = *c;
                let Some(b_result) = base[0].iter().find(|(bc, _)| *bc == c).map(|x| &x.1) else {
                    continue;
                };
                let (Some(b), Some(t)) = (b_result.half.clone(), t_result.half.clone()) else {
                    continue;
                };
                match (b_result.profile.clone(), t_result.profile.take()) {
                    (Some(baseline), Some(treatment)) => profiled[j][c].push(ProfiledPair {
                        baseline,
                        treatment,
                    }),
                    _ => {
                        for note in [&b_result.profile_note, &t_result.profile_note]
                            .into_iter()
                            .flatten()
                        {
                            if !profile_notes[j][c].contains(note) {
                                profile_notes[j][c].push(note.clone());
                            }
                        }
                    }
                }
                pairs[j][c].push(PairData {
                    index: i,
                    order: label.to_string(),
                    baseline_per_op: b.per_op,
                    treatment_per_op: t.per_op,
                    beside: Vec::new(),
                });
                cpu[j][c][0].extend(b.child_cpu);
                cpu[j][c][1].extend(t.child_cpu);
                if let Some(rule) = &design.stop {
                    stopped[j][c] = settled(&super::ab::pair_log_ratios(&pairs[j][c]), rule);
                }
                if let Some(done) = last_done.as_mut()
                    && pairs[j][c].len() >= 2
                    && let Ok(so_far) = super::ab::summarise(
                        &cases[c],
                        design,
                        &pairs[j][c],
                        &cpu[j][c],
                        None,
                        None,
                    )
                {
                    let o = &so_far.overhead_pct;
                    done.findings.push(format!(
                        "{}, {} against {}: {} after {}{}",
                        cases[c].workload.name,
                        arm_names[arm],
                        arm_names[0],
                        crate::report::number::so_far(
                            o.estimate,
                            o.ci_low,
                            o.ci_high,
                            super::ab::own_alpha(design),
                        ),
                        crate::report::number::count(pairs[j][c].len(), "pair"),
                        match stopped[j][c] {
                            Some(s) => format!(" ({})", s.describe()),
                            None => String::new(),
                        }
                    ));
                }
            }
        }
        if let Some(done) = last_done.take() {
            on_boot(&done);
        }
    }
    let mut comparisons = Vec::new();
    for j in 0..contrasts {
        for (c, case) in cases.iter().enumerate() {
            let unfinished = error.is_some();
            let stop = match (&design.stop, unfinished) {
                (Some(_), true) => Some(StopReason::Interrupted),
                _ => stopped[j][c],
            };
            let data = &pairs[j][c];
            let attribution = design.profile.map(|p| {
                let median = |f: fn(&PairData) -> f64| super::ab::arm_median(data, f);
                let mut a = attribute(
                    &profiled[j][c],
                    &AttributeOpts {
                        hz: p.hz,
                        timed_baseline_ns_per_op: median(|p| p.baseline_per_op),
                        timed_treatment_ns_per_op: median(|p| p.treatment_per_op),
                        top_symbols: crate::profile::TOP_SYMBOLS,
                    },
                );
                a.notes.append(&mut profile_notes[j][c]);
                a
            });
            if let Ok(mut comparison) =
                super::ab::summarise(case, design, data, &cpu[j][c], stop, attribution)
            {
                comparison.mechanism = MECHANISM.to_string();
                comparison.variant = arm_names[j + 1].to_string();
                comparison.params = Params::from([("vs".to_string(), arm_names[0].to_string())]);
                comparison.unfinished = unfinished;
                comparisons.push(comparison);
            }
        }
    }
    (comparisons, error)
}

/// Boots of the real thing: a guest per boot running `secperf guest`,
/// told its halves by its request.
struct GuestBooter<'a> {
    setups: Vec<BootSetup<'a>>,
    /// The plan's cases, how a half is measured and counted, and the
    /// profile of a profiled boot: what every boot's request carries.
    cases: Vec<CaseSpec>,
    halves: HalfSpec,
    counting: Counting,
    profile: Option<crate::profile::ProfileOpts>,
    records: &'a mut [ArmRecord],
    /// Boot a block's arms at once (counted instructions, CPUs enough).
    together: bool,
}

impl GuestBooter<'_> {
    /// The request of a boot measuring `cases` (profiled or not).
    fn task_for(&self, cases: &[usize], profile: bool) -> GuestTask {
        GuestTask::BootHalves(BootHalves {
            cases: self.cases.clone(),
            measure: cases.to_vec(),
            halves: self.halves.clone(),
            counting: self.counting,
            profile: self.profile.filter(|_| profile),
        })
    }

    /// What a finished guest of `arm` measured of `cases`.
    fn collect(
        &mut self,
        arm: usize,
        cases: &[usize],
        guest: &super::vm::Guest,
    ) -> Result<Vec<BootResult>> {
        let setup = &self.setups[arm];
        self.records[arm].boots.push(setup.facts(guest));
        if self.records[arm].probe.is_none() {
            self.records[arm].probe = std::fs::read_to_string(guest.shared.path().join(PROBE_FILE))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
        }
        let file = guest.shared.path().join(HALVES_FILE);
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading the guest's halves from {}", file.display()))?;
        let halves: Vec<BootHalf> = serde_json::from_str(&text)
            .with_context(|| format!("reading the guest's halves from {}", file.display()))?;
        cases
            .iter()
            .map(|c| {
                let h = halves
                    .iter()
                    .find(|h| h.case == *c)
                    .with_context(|| format!("the guest measured no half of case {c}"))?;
                Ok(BootResult {
                    half: Some(HalfResult {
                        child_cpu: h.child_cpu,
                        ..HalfResult::of(h.ns_per_op)
                    }),
                    profile: h.profile.clone(),
                    profile_note: h.profile_note.clone(),
                })
            })
            .collect()
    }
}

impl Booter for GuestBooter<'_> {
    fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>> {
        let task = self.task_for(cases, profile);
        let guest = boot(&self.setups[arm], &guest_argv(), &task)?;
        self.collect(arm, cases, &guest)
    }

    fn together(&self) -> bool {
        self.together
    }

    fn boot_together(
        &mut self,
        asks: &[(usize, Vec<usize>)],
        profile: bool,
    ) -> Vec<Result<Vec<BootResult>>> {
        let tasks: Vec<GuestTask> = asks
            .iter()
            .map(|(_, cases)| self.task_for(cases, profile))
            .collect();
        let setups = &self.setups;
        let argv = guest_argv();
        let guests: Vec<Result<super::vm::Guest>> = std::thread::scope(|scope| {
            let argv = &argv;
            let running: Vec<_> = asks
                .iter()
                .zip(&tasks)
                .map(|((arm, _), task)| scope.spawn(move || boot(&setups[*arm], argv, task)))
                .collect();
            running
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a boot's thread panicked")))
                })
                .collect()
        });
        asks.iter()
            .zip(guests)
            .map(|((arm, cases), guest)| self.collect(*arm, cases, &guest?))
            .collect()
    }
}

/// The command line of a kernel A/B's guest: `secperf guest`, which reads
/// its request.
fn guest_argv() -> Vec<String> {
    vec![super::guest_request::SUBCOMMAND.to_string()]
}

/// What the host needs for a boot-arm run.
pub struct BootRequest<'a> {
    /// The baseline first, then the compared arm, then (with the layout
    /// control) the baseline rebuilt with an inert change.
    pub arms: &'a [KernelArm],
    pub accel: AccelChoice,
    pub timeout: crate::vm::process::Timeouts,
    /// How the guests count (instructions: every boot under QEMU's
    /// icount).
    pub counting: Counting,
}

/// Measures the plan's cases across boots of the two arms and stores the
/// run, under the measurement lock the caller holds (`_measuring`, taken
/// once for the builds and the boots). Returns its id.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    req: &BootRequest,
    cases: &[Case],
    design: &Design,
    decision: &DecisionOpts,
    label: &str,
    params: serde_json::Value,
    db_path: &Path,
    _measuring: &crate::safety::MeasureLock,
) -> Result<i64> {
    let (accel, vng_path) = resolve_engine(req.accel, req.counting)?;
    let mut store = Store::open(db_path)?;
    let stop = super::session::interrupt_flag()?;
    // The run starts now (its recorded configuration is replaced by the
    // baseline arm's guest once it has booted).
    let mut meta = super::session::run_meta(
        "overhead",
        label,
        &params,
        Some(design.seed),
        req.counting.metric(),
    )?;
    // Each compared arm adds a comparison per case to the table's family.
    let mut design = Design {
        counting: req.counting,
        ..design.clone()
    };
    if let Some(stop) = design.stop.as_mut() {
        stop.family *= req.arms.len().saturating_sub(1).max(1) as u32;
    }
    let design = &design;
    let counting = req.counting.boots_with_icount();
    // Counting instructions, a guest has one vCPU per task (the most any
    // case asks for) unless the arm says cpus=: a vCPU more would add its
    // own work to every figure.
    let specs: Vec<crate::vm::VmSpec> = req
        .arms
        .iter()
        .map(|arm| {
            let mut spec = arm.spec.clone();
            if counting && spec.cpus.is_none() {
                spec.cpus = Some(
                    cases
                        .iter()
                        .map(|c| c.tasks as u32)
                        .max()
                        .unwrap_or(1)
                        .max(1),
                );
            }
            spec
        })
        .collect();
    let setups: Vec<BootSetup> = specs
        .iter()
        .map(|spec| BootSetup {
            spec,
            accel,
            extra_append: Vec::new(),
            vng: &vng_path,
            timeout: req.timeout,
            stop: &stop,
            icount: counting,
        })
        .collect();
    let mut records: Vec<ArmRecord> = (0..req.arms.len())
        .map(|i| ArmRecord {
            name: req.arms[i].name.clone(),
            role: match i {
                0 => "baseline",
                1 => "treatment",
                _ => "layout control",
            }
            .to_string(),
            spec: specs[i].clone(),
            boots: Vec::new(),
            probe: None,
            build: req.arms[i].build.clone(),
        })
        .collect();
    for (i, s) in setups.iter().enumerate() {
        crate::say!("secperf: arm {}: {}", req.arms[i].name, booting_line(s));
    }
    let names: Vec<&str> = req.arms.iter().map(|a| a.name.as_str()).collect();
    let started = std::time::Instant::now();
    let (comparisons, error) = {
        // Counting instructions, a block's guests boot at once when the
        // host has a CPU for each vCPU of them (each emulated vCPU keeps
        // one host CPU busy): their figures are the same, their time not
        // added up. Timing, never: one guest would slow the other.
        let host_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let vcpus: usize = specs.iter().map(|s| s.vcpus() as usize).sum();
        let together = counting && req.arms.len() > 1 && vcpus <= host_cpus;
        if together {
            crate::say!(
                "secperf: counting instructions, the {} arms of each pair boot at once ({} vCPUs \
                 on {} CPUs): what they count is the same, and a pair takes one boot's time",
                req.arms.len(),
                vcpus,
                host_cpus
            );
        }
        let mut booter = GuestBooter {
            setups,
            cases: cases.iter().map(CaseSpec::of).collect(),
            halves: HalfSpec::of(design),
            counting: req.counting,
            profile: design.profile,
            records: &mut records,
            together,
        };
        pairs_over_boots(cases, design, &names, &mut booter, &mut |b| {
            let per_boot = started.elapsed().as_secs_f64() / b.index as f64;
            let left = per_boot * (b.total - b.index) as f64;
            crate::say!(
                "secperf: boot {} of at most {} done (arm {}, pair {}): {:.0} s a boot; at most \
                 about {:.0} min left",
                b.index,
                b.total,
                names[b.arm],
                b.pair + 1,
                per_boot,
                left / 60.0
            );
            for f in &b.findings {
                crate::say!("secperf:   so far: {f}");
            }
        })
    };
    if comparisons.is_empty() {
        return Err(error.unwrap_or_else(|| anyhow::anyhow!("no pair was measured")))
            .context("the kernel A/B stopped before its first pair; nothing was stored");
    }
    // The baseline arm's guest is the run's recorded configuration (the
    // report lists both arms' kernels and command lines).
    if let Some(p) = records[0].probe.clone() {
        meta.system = p;
    }
    if let (Some(o), Some(first)) = (meta.system.as_object_mut(), records[0].boots.first()) {
        // The VM's facts (the accelerator above all) mark every figure; the
        // run is the host's, stamped by its clock.
        let mut facts = first.clone();
        facts.stamps = Some(crate::vm::Stamps::Host { guest: None });
        o.insert("vm".into(), serde_json::to_value(facts)?);
    }
    let run_id = store.begin_run(&meta)?;
    store.add_run_note(
        run_id,
        crate::vm::arms::NOTE,
        &serde_json::to_value(&records)?,
    )?;
    let mut comparisons = comparisons;
    let ids = comparisons
        .iter()
        .map(|c| store.add_comparison(run_id, c))
        .collect::<Result<Vec<_>>>()?;
    super::ab::store_decided(&mut store, &mut comparisons, &ids, decision)?;
    if let Some(e) = error {
        return Err(e.context(format!(
            "the kernel A/B stopped; the pairs it finished are stored as run {run_id}"
        )));
    }
    store.finish_run(run_id)?;
    Ok(run_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(workload: &str) -> Case {
        Case {
            workload: crate::workloads::find(workload).unwrap(),
            workload_params: Params::new(),
            treatment: crate::mechanisms::Treatment::parse("none").unwrap(),
            tasks: 1,
        }
    }

    /// Boots that return a fixed figure per arm and case, and record what
    /// they were asked.
    struct Scripted {
        ns: [[f64; 2]; 2],
        calls: Vec<(usize, Vec<usize>)>,
        fail_at: Option<usize>,
    }

    impl Booter for Scripted {
        fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>> {
            self.calls.push((arm, cases.to_vec()));
            if Some(self.calls.len()) == self.fail_at {
                anyhow::bail!("the guest did not boot");
            }
            let jitter = 1.0 + self.calls.len() as f64 * 1e-4;
            Ok(cases
                .iter()
                .map(|&c| {
                    let ns = self.ns[arm][c] * jitter;
                    let mut r = BootResult::of(HalfResult::of(ns));
                    if profile {
                        // The extra time of the slower arm is all in one
                        // kernel function.
                        let mut stacks = crate::profile::Folded::new();
                        stacks.insert("[user];loop".into(), 1000);
                        stacks.insert("entry;do_syscall;hook".into(), (10.0 * ns) as u64);
                        r.profile = Some(HalfProfile {
                            ns_per_op: ns,
                            stacks,
                            lost: 0,
                        });
                    }
                    r
                })
                .collect())
        }
    }

    #[test]
    fn the_first_profile_pairs_boots_are_profiled_and_attributed() {
        let cases = [case("getppid")];
        let mut design = Design::for_tests(4, 9);
        design.profile = Some(crate::profile::ProfileOpts { hz: 997, pairs: 2 });
        struct Recording(Scripted, Vec<bool>);
        impl Booter for Recording {
            fn boot(
                &mut self,
                arm: usize,
                cases: &[usize],
                profile: bool,
            ) -> Result<Vec<BootResult>> {
                self.1.push(profile);
                self.0.boot(arm, cases, profile)
            }
        }
        let mut b = Recording(
            Scripted {
                ns: [[100.0, 0.0], [120.0, 0.0]],
                calls: Vec::new(),
                fail_at: None,
            },
            Vec::new(),
        );
        let (cs, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut b, &mut |_| {});
        assert!(err.is_none());
        assert_eq!(b.1, [true, true, true, true, false, false, false, false]);
        let a = cs[0].attribution.as_ref().expect("an attribution");
        assert_eq!((a.pairs, a.hz), (2, 997));
        let hook = a
            .symbols
            .iter()
            .find(|r| r.name == "hook")
            .expect("hook row");
        assert!(hook.delta_ns_per_op.estimate > 0.0, "{hook:?}");
    }

    #[test]
    fn each_pair_reports_what_it_found_so_far() {
        let cases = [case("getppid")];
        let design = Design::for_tests(4, 9);
        let mut b = Scripted {
            ns: [[100.0, 0.0], [120.0, 0.0]],
            calls: Vec::new(),
            fail_at: None,
        };
        let mut seen: Vec<(usize, Vec<String>)> = Vec::new();
        let (_, err) = pairs_over_boots(&cases, &design, &["base", "fine"], &mut b, &mut |d| {
            seen.push((d.index, d.findings.clone()))
        });
        assert!(err.is_none());
        let indexes: Vec<usize> = seen.iter().map(|s| s.0).collect();
        assert_eq!(indexes, [1, 2, 3, 4, 5, 6, 7, 8], "every boot, in order");
        // The first pair has one pair: nothing to say yet; from the second
        // on, the last boot of each pair says the estimate so far.
        assert!(seen[1].1.is_empty());
        for (i, f) in seen.iter().enumerate() {
            assert_eq!(f.1.is_empty(), i % 2 == 0 || i == 1, "{i}: {:?}", f.1);
        }
        assert!(
            seen[3].1[0].starts_with("getppid, fine against base: +20.0%"),
            "{:?}",
            seen[3].1
        );
        assert!(seen[3].1[0].contains("after 2 pairs"), "{:?}", seen[3].1);
    }

    #[test]
    fn each_boot_is_reported_before_the_next_boot_starts() {
        // A boot reported only after the next one had run showed the time
        // of two boots as its own ("25 s a boot", then "12 s a boot").
        use std::cell::RefCell;
        use std::rc::Rc;
        struct Counting(Scripted, Rc<RefCell<usize>>);
        impl Booter for Counting {
            fn boot(&mut self, arm: usize, cases: &[usize], p: bool) -> Result<Vec<BootResult>> {
                *self.1.borrow_mut() += 1;
                self.0.boot(arm, cases, p)
            }
        }
        let booted = Rc::new(RefCell::new(0));
        let mut b = Counting(
            Scripted {
                ns: [[100.0, 0.0], [120.0, 0.0]],
                calls: Vec::new(),
                fail_at: None,
            },
            booted.clone(),
        );
        let mut seen: Vec<(usize, usize)> = Vec::new();
        let design = Design::for_tests(3, 5);
        let (_, err) =
            pairs_over_boots(&[case("getppid")], &design, &["a", "b"], &mut b, &mut |d| {
                seen.push((d.index, *booted.borrow()))
            });
        assert!(err.is_none());
        for (index, boots_run) in &seen {
            assert_eq!(
                index, boots_run,
                "boot {index} reported after {boots_run} boots"
            );
        }
        assert_eq!(seen.len(), 6);
    }

    #[test]
    fn the_dry_run_order_is_the_order_booted() {
        let design = Design::for_tests(5, 11);
        let mut b = Scripted {
            ns: [[100.0, 1000.0], [100.0, 1000.0]],
            calls: Vec::new(),
            fail_at: None,
        };
        pairs_over_boots(
            &[case("getppid")],
            &design,
            &["a", "b"],
            &mut b,
            &mut |_| {},
        );
        let booted: Vec<usize> = b.calls.iter().map(|c| c.0).collect();
        let planned: Vec<usize> = boot_order(&design, 2).into_iter().flatten().collect();
        assert_eq!(booted, planned);
    }

    #[test]
    fn each_pair_is_one_boot_of_each_arm_in_the_seeded_order() {
        let cases = [case("getppid"), case("open")];
        let design = Design::for_tests(4, 7);
        let mut b = Scripted {
            ns: [[100.0, 1000.0], [110.0, 1000.0]],
            calls: Vec::new(),
            fail_at: None,
        };
        let (cs, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut b, &mut |_| {});
        assert!(err.is_none());
        assert_eq!(b.calls.len(), 8);
        let mut rng = Rng::new(7);
        for (i, pair) in b.calls.chunks(2).enumerate() {
            let order = pair_order(&mut rng);
            let want: Vec<usize> = order
                .iter()
                .map(|a| (*a == Arm::Treatment) as usize)
                .collect();
            assert_eq!(vec![pair[0].0, pair[1].0], want, "pair {i}");
            assert_eq!(pair[0].1, vec![0, 1]);
            let c = &cs[0].pair_data[i];
            let ab = if want[0] == 0 { "AB" } else { "BA" };
            assert_eq!(c.order, ab);
        }
        assert_eq!(cs.len(), 2);
        let c = &cs[0];
        assert_eq!((c.mechanism.as_str(), c.variant.as_str()), ("kernel", "b"));
        assert_eq!(c.params.get("vs").map(String::as_str), Some("a"));
        assert_eq!(c.pairs, 4);
        assert!(
            (c.overhead_pct.estimate - 10.0).abs() < 0.1,
            "{:?}",
            c.overhead_pct
        );
        assert!(cs[1].overhead_pct.estimate.abs() < 0.1);
    }

    /// [`Scripted`] whose blocks boot together: each block's asks are
    /// recorded as one call.
    struct Together {
        inner: Scripted,
        blocks: Vec<Vec<(usize, Vec<usize>)>>,
    }

    impl Booter for Together {
        fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>> {
            self.inner.boot(arm, cases, profile)
        }
        fn together(&self) -> bool {
            true
        }
        fn boot_together(
            &mut self,
            asks: &[(usize, Vec<usize>)],
            profile: bool,
        ) -> Vec<Result<Vec<BootResult>>> {
            self.blocks.push(asks.to_vec());
            asks.iter()
                .map(|(arm, cases)| self.inner.boot(*arm, cases, profile))
                .collect()
        }
    }

    #[test]
    fn booted_together_a_block_gives_the_pairs_booting_in_turn_gives() {
        let cases = [case("getppid"), case("open")];
        let design = Design::for_tests(4, 7);
        let scripted = || Scripted {
            ns: [[100.0, 1000.0], [110.0, 1000.0]],
            calls: Vec::new(),
            fail_at: None,
        };
        let mut apart = scripted();
        let (a, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut apart, &mut |_| {});
        assert!(err.is_none());
        let mut at_once = Together {
            inner: scripted(),
            blocks: Vec::new(),
        };
        let mut reported = Vec::new();
        let (b, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut at_once, &mut |d| {
            reported.push((d.index, d.arm, d.pair))
        });
        assert!(err.is_none());
        // One call a block, both arms in it, in the seeded order.
        assert_eq!(at_once.blocks.len(), 4);
        assert!(at_once.blocks.iter().all(|blk| blk.len() == 2));
        assert_eq!(at_once.inner.calls, apart.calls);
        // The same comparisons, and every boot reported.
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.pair_data, y.pair_data);
            assert_eq!(x.overhead_pct.estimate, y.overhead_pct.estimate);
        }
        assert_eq!(reported.len(), 8, "{reported:?}");
        // A boot that fails in a block ends the pairs there, as in turn.
        let mut failing = Together {
            inner: Scripted {
                fail_at: Some(4),
                ..scripted()
            },
            blocks: Vec::new(),
        };
        let (c, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut failing, &mut |_| {});
        assert!(format!("{:#}", err.unwrap()).contains("did not boot"));
        assert!(c.iter().all(|c| c.pairs == 1), "one whole pair kept");
    }

    #[test]
    fn a_settled_case_is_not_measured_again_and_a_failed_boot_keeps_the_pairs() {
        let cases = [case("getppid"), case("open")];
        let mut design = Design::for_tests(32, 3);
        design.stop = Some(crate::stats::sequential::StopRule {
            min_pairs: 2,
            max_pairs: 32,
            family: 2,
            decision: DecisionOpts::validated(0.05, 1.0, 0.5).unwrap(),
            precision_pct: None,
            rank: 1,
        });
        // Case 0: +50% every pair, settles as slower; case 1: +0.7% every
        // pair, inside the 1% noise band but outside the 0.5% equivalence
        // margin, so never slower nor negligible: it stops otherwise (as
        // futile), at another pair. (A ratio of about 1 would settle as
        // negligible only once the interval shown is finite and within the
        // margin, at the same pair as case 0's verdict, and the boots would
        // not tell settled cases from the others.)
        let mut b = Scripted {
            ns: [[100.0, 1000.0], [150.0, 1007.0]],
            calls: Vec::new(),
            fail_at: None,
        };
        let (cs, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut b, &mut |_| {});
        assert!(err.is_none());
        let pairs: Vec<usize> = cs.iter().map(|c| c.pairs as usize).collect();
        assert!(pairs.iter().all(|&p| p < 32), "{pairs:?}");
        assert_ne!(pairs[0], pairs[1], "{pairs:?}");
        let stopped: Vec<_> = cs
            .iter()
            .map(|c| c.sequential.as_ref().map(|s| s.stopped))
            .collect();
        assert_eq!(
            stopped,
            [Some(StopReason::Slower), Some(StopReason::Futile)],
            "{pairs:?}"
        );
        // Each boot measures exactly the cases not settled yet.
        for (k, (_, asked)) in b.calls.iter().enumerate() {
            let want: Vec<usize> = (0..2).filter(|&c| k / 2 < pairs[c]).collect();
            assert_eq!(asked, &want, "boot {k}");
        }
        assert_eq!(b.calls.len(), 2 * pairs[0].max(pairs[1]));
        let mut failing = Scripted {
            ns: [[100.0, 1000.0], [150.0, 1000.0]],
            calls: Vec::new(),
            fail_at: Some(5),
        };
        let (cs, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut failing, &mut |_| {});
        let e = format!("{:#}", err.expect("an error"));
        assert!(
            e.contains("pair 3 of 32") && e.contains("did not boot"),
            "{e}"
        );
        assert!(cs.iter().all(|c| c.unfinished && c.pairs == 2), "{cs:?}");
    }

    #[test]
    fn a_layout_arm_shares_the_baselines_boot_of_each_block() {
        struct Three {
            calls: Vec<(usize, Vec<usize>)>,
        }
        impl Booter for Three {
            fn boot(&mut self, arm: usize, cases: &[usize], _: bool) -> Result<Vec<BootResult>> {
                self.calls.push((arm, cases.to_vec()));
                let ns = [100.0, 120.0, 101.0][arm] * (1.0 + self.calls.len() as f64 * 1e-4);
                Ok(cases
                    .iter()
                    .map(|_| BootResult::of(HalfResult::of(ns)))
                    .collect())
            }
        }
        let design = Design::for_tests(4, 5);
        let mut b = Three { calls: Vec::new() };
        let (cs, err) = pairs_over_boots(
            &[case("getppid")],
            &design,
            &["base", "patched", "layout"],
            &mut b,
            &mut |_| {},
        );
        assert!(err.is_none());
        // One boot of each arm per block, in the seeded order.
        assert_eq!(b.calls.len(), 12);
        let planned: Vec<usize> = boot_order(&design, 3).into_iter().flatten().collect();
        let booted: Vec<usize> = b.calls.iter().map(|c| c.0).collect();
        assert_eq!(booted, planned);
        for block in booted.chunks(3) {
            let mut sorted = block.to_vec();
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2]);
        }
        // Two comparisons against the baseline: the patch's and the layout's.
        assert_eq!(cs.len(), 2);
        assert_eq!((cs[0].variant.as_str(), cs[0].pairs), ("patched", 4));
        assert_eq!(cs[1].variant.as_str(), "layout");
        assert_eq!(cs[1].params.get("vs").map(String::as_str), Some("base"));
        assert!(
            (cs[0].overhead_pct.estimate - 20.0).abs() < 0.5,
            "{:?}",
            cs[0].overhead_pct
        );
        assert!(
            (cs[1].overhead_pct.estimate - 1.0).abs() < 0.5,
            "{:?}",
            cs[1].overhead_pct
        );
        // Each pair's order says whether the baseline booted first.
        for (i, block) in booted.chunks(3).enumerate() {
            let first = |arm| block.iter().position(|&a| a == arm).unwrap();
            let want = if first(0) < first(2) { "AB" } else { "BA" };
            assert_eq!(cs[1].pair_data[i].order, want);
        }
    }
}
