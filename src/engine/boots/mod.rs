//! Boots and builds: a kernel A/B across boots (`overhead --kernel A=IMAGE
//! --kernel B=IMAGE[,append=ARGS]`, bisect's and track's steps), and a
//! command in a guest (`--vm`).
//!
//! - [`kernels`]: the arms made bootable (images taken, sources built).
//! - [`vm`]: one guest booted with virtme-ng, and what it ran.
//! - [`guest_request`]: what the host asks of a guest, in types.
//! - [`guest`]: the guest's side of a kernel A/B (`secperf guest`).
//! - [`order`]: the arms' boot order.
//! - [`pairs`]: the pair loop behind the [`pairs::Booter`] seam.
//! - `booter`: the real booter.
//! - here: the kernel A/B's run, measured and stored ([`measure`]).
//!
//! Each pair is one boot of each arm, in the seeded AB/BA order of the
//! live design. Each boot measures one half of every case still open, in
//! fresh tasks per case, with nothing switched (the kernel and its command
//! line are the treatment). Halves are paired across the two boots of a
//! pair and decided by the same machinery as a live A/B: the sequential
//! stopping rule after every pair (a settled case is not measured again),
//! then Holm, the noise band and equivalence over the table.
//!
//! The guest side is `secperf guest` ([`guest::guest_halves`]): the host writes
//! each boot's request (the plan's cases, which to measure, how, how it
//! counts, whether profiled) to the shared directory
//! ([`guest_request`]), and the guest writes one half per case
//! asked for back.

mod booter;
pub mod guest;
pub mod guest_request;
pub mod kernels;
pub mod order;
pub mod pairs;
#[cfg(test)]
mod tests;
pub mod vm;

use std::path::Path;

use anyhow::{Context, Result};

use self::booter::GuestBooter;
use self::guest_request::{CaseSpec, HalfSpec};
use self::pairs::pairs_over_boots;
use self::vm::{BootSetup, booting_line, resolve_engine};
use crate::engine::ab::counting::Counting;
use crate::engine::ab::design::{Case, Design};
use crate::stats::decision::DecisionOpts;
use crate::store::Store;
use crate::vm::accel::AccelChoice;
use crate::vm::arms::{ArmRecord, KernelArm};

pub use self::guest::{measure_halves, run_guest};
pub use self::order::boot_order;
pub use self::pairs::MECHANISM;

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
    let stop = crate::engine::session::interrupt_flag()?;
    // The run starts now (its recorded configuration is replaced by the
    // baseline arm's guest once it has booted).
    let mut meta = crate::engine::session::run_meta(
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
    crate::engine::ab::store_decided(&mut store, &mut comparisons, &ids, decision)?;
    if let Some(e) = error {
        return Err(e.context(format!(
            "the kernel A/B stopped; the pairs it finished are stored as run {run_id}"
        )));
    }
    store.finish_run(run_id)?;
    Ok(run_id)
}
