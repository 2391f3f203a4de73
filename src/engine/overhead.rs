//! `overhead` on this machine: its typed request planned, measured as
//! randomised A/B pairs in one session and stored, comparison by
//! comparison. The command line parses the request, calls [`measure`] and
//! renders the finished run.

use std::path::Path;

use anyhow::Result;

use super::ab::measure_comparisons;
use super::ab::measurer::Live;
use super::plan::{OverheadPlan, OverheadRequest};
use super::session::{RunSpec, Session, measurement_lock, open_store};

/// A finished `overhead` run.
pub struct Measured {
    pub session: Session,
    pub comparisons: Vec<crate::model::Comparison>,
    /// The run's label (`--label`).
    pub label: String,
}

/// Plans and measures `request` on this machine (the trial of a command,
/// the plan's line on stderr, the stored run) into the store at `db` (the
/// default one when None), under the measurement lock (`no_wait`: fail at
/// once if another secperf measures): the finished session, its
/// comparisons and the run's label.
pub fn measure(request: &OverheadRequest, db: Option<&Path>, no_wait: bool) -> Result<Measured> {
    let mut plan = OverheadPlan::new(request)?;
    let (db_path, store) = open_store(db)?;
    plan.pairs_from_calibration(&store)?;
    plan.equivalence_from_calibrations(&store)?;
    let measuring = measurement_lock(no_wait)?;
    let design = plan.design();
    let profiled_pairs = plan.profile.map_or(0, |p| p.pairs as u64);
    let slices = 2
        * (plan.max_pairs_total() + plan.cases.len() as u64 * profiled_pairs)
        * design.slices_per_half();
    for w in &plan.warnings {
        crate::say!("secperf: warning: {w}");
    }
    for note in &plan.treatment_notes {
        crate::say!("secperf: {note}");
    }
    let run_ms = super::trial::command_trial(
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
        Some(stop) => crate::say!(
            "secperf: {} x {} to {} pairs{profiled} (sequential: each stops once its verdict is \
             settled), at most about {seconds:.0} s of measurement",
            crate::report::number::count(plan.cases.len(), "comparison"),
            stop.min_pairs,
            plan.pairs,
        ),
        None => crate::say!(
            "secperf: {} x {} pairs{profiled}, about {seconds:.0} s of measurement",
            crate::report::number::count(plan.cases.len(), "comparison"),
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
            audit_check: plan.switches("audit"),
            slices,
            seed: Some(plan.seed),
            metric: plan.counting.metric(),
        },
    )?;
    session.progress.planned(plan.sample_ms as f64 + run_ms);
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
    if plan.counting.warms_up() {
        crate::say!("secperf: a warm-up half of each workload first (counted instructions)");
        let designs: Vec<_> = plan.control.iter().map(|&c| plan.design_for(c)).collect();
        super::ab::warmup::warm_up(
            plan.cases
                .iter()
                .zip(&designs)
                .map(|(c, d)| (c, d, crate::mechanisms::Arm::Baseline)),
            &mut Live {
                lock: session.lock.as_ref(),
            },
        )
        .map_err(|e| session.stopped(e))?;
    }
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
    Ok(Measured {
        session,
        comparisons,
        label: plan.label.clone(),
    })
}
