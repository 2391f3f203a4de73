//! The guest's side of a kernel A/B: `secperf guest` reads the host's
//! request and measures one half of each case asked for, writing them
//! (and the guest's probe) to the shared directory.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::guest_request::{BootHalves, CaseSpec, GuestTask};
use crate::engine::ab::design::{Case, Design};
use crate::engine::ab::measurer::Measurer;
use crate::mechanisms::Arm;
use crate::model::ChildCpu;
use crate::profile::attribute::HalfProfile;

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
    let _measuring = crate::engine::session::measurement_lock(false)?;
    let lock = cases
        .iter()
        .any(|c| c.treatment.mechanism.scope() == crate::mechanisms::Scope::System)
        .then(|| crate::safety::StateLock::acquire(crate::engine::session::LOCK_WAIT))
        .transpose()?;
    measure_halves(
        &cases,
        &design,
        &request.measure,
        &mut crate::engine::ab::measurer::Live {
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
        crate::engine::ab::warmup::warm_up(
            warm.into_iter().map(|c| (c, design, boot_arm(c))),
            measurer,
        )?;
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
