//! Running a calibration: each step of the schedule measured (through
//! the engine's A/B loop, or a callback in tests), decided as a table of
//! one, then the report computed and stored.

use std::time::Instant;

use anyhow::Result;

use super::outcome::{self, CalibrationReport, Measured};
use super::plan::{Plan, Role, Step};
use crate::engine::ab::design::Case;
use crate::engine::ab::measurer::Measurer;
use crate::engine::progress::Progress;
use crate::model::Comparison;
use crate::stats::bootstrap::Rng;
use crate::stats::decision::DecisionOpts;
use crate::store::Store;
use crate::store::calibrations::Calibration;

/// Runs the calibration of `plan` through `measurer`, one A/B comparison
/// per step, with a line per comparison on `progress`.
pub fn measure(
    plan: &Plan,
    measurer: &mut dyn Measurer,
    progress: &Progress,
) -> Result<CalibrationReport> {
    let c = plan.counts;
    let mut rng = Rng::new(plan.design.seed);
    let mut aa_done = 0u32;
    run(plan, &mut |step, case| {
        let what = match step.role {
            Role::AaControl => {
                aa_done += 1;
                format!("A/A {aa_done} of {}: none on {}", c.aa, case.workload.name)
            }
            Role::Truth(i) => format!("truth of {} ({} pairs)", plan.injected[i].label, step.pairs),
            Role::Short(i) => plan.injected[i].label.clone(),
        };
        progress.start(&what);
        let design = plan.design_of(step);
        let r = crate::engine::ab::compare(case, &design, measurer, &mut rng, &mut |t| {
            progress.tick(t)
        })?;
        progress.skip(crate::engine::ab::unmeasured_slices(&design, &r));
        progress.line(&format!(
            "{what}: {}",
            crate::engine::ab::describe_measured(&r, &design)
        ));
        Ok(r)
    })
}

/// Runs the experiments of `plan`, measuring each step with `measure`
/// (one comparison per call, given the step and its case), and computes
/// the report. An A/A failure ends the calibration; a failing injected
/// treatment is recorded as skipped with the error and its remaining
/// steps are dropped (an interrupt always ends it).
pub fn run(
    plan: &Plan,
    measure: &mut dyn FnMut(&Step, &Case) -> Result<Comparison>,
) -> Result<CalibrationReport> {
    let started = Instant::now();
    let mut aa = Vec::new();
    let mut aa_s = 0.0;
    let mut truths: Vec<Vec<Comparison>> = vec![Vec::new(); plan.injected.len()];
    let mut shorts: Vec<Vec<Comparison>> = vec![Vec::new(); plan.injected.len()];
    let mut skipped: Vec<Option<String>> = vec![None; plan.injected.len()];
    for step in plan.schedule() {
        let case = plan.case_of(&step)?;
        match step.role {
            Role::AaControl => {
                let t0 = Instant::now();
                let mut c = measure(&step, &case)?;
                aa_s += t0.elapsed().as_secs_f64();
                decide_alone(&mut c, &plan.decision);
                aa.push(c);
            }
            Role::Truth(i) | Role::Short(i) => {
                if skipped[i].is_some() {
                    continue;
                }
                match measure(&step, &case) {
                    Ok(c) if matches!(step.role, Role::Truth(_)) => truths[i].push(c),
                    Ok(mut c) => {
                        decide_alone(&mut c, &plan.decision);
                        shorts[i].push(c)
                    }
                    Err(e) if is_interrupt(&e) => return Err(e),
                    Err(e) => skipped[i] = Some(format!("{e:#}")),
                }
            }
        }
    }
    outcome::report(
        plan,
        Measured {
            aa,
            aa_s,
            truths,
            shorts,
            skipped,
        },
        started,
    )
}

/// A calibration comparison's verdict, decided as `overhead` decides a
/// table of one: significance, the noise band, the equivalence test.
fn decide_alone(c: &mut Comparison, decision: &DecisionOpts) {
    crate::engine::ab::decide_all(std::slice::from_mut(c), decision);
}

/// Whether an error is the user's interrupt, which always ends a
/// calibration.
pub(super) fn is_interrupt(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<crate::error::Interrupted>())
}

/// Stores every comparison of a calibration in run `run_id`, then the
/// calibration itself; returns its id.
pub fn store_report(store: &mut Store, run_id: i64, report: &CalibrationReport) -> Result<i64> {
    for cmp in report
        .aa
        .comparisons
        .iter()
        .chain(report.injected.iter().flat_map(|i| {
            i.truth
                .iter()
                .flat_map(|t| t.comparisons.iter())
                .chain(i.comparisons.iter())
        }))
    {
        store.add_comparison(run_id, cmp)?;
    }
    let m = &report.min_effect;
    store.add_calibration(&Calibration {
        id: 0,
        run_id,
        workload: report.workload.clone(),
        created_at: chrono::Utc::now(),
        aa_comparisons: report.aa.false_positives.total,
        aa_false_positives: report.aa.false_positives.count,
        sd_log_ratio: m.sd_log_ratio,
        pair_seconds: m.pair_seconds,
        budget_s: m.budget_s,
        min_effect_pct: m.budget_min_effect_pct,
        min_effect_pairs: m.budget_pairs,
        json: serde_json::to_value(report)?,
    })
}

/// `calibrate` on this machine: `plan` measured into the store at `db`
/// (the default one when None) under the measurement lock (`no_wait`:
/// fail at once if another secperf measures), the report stored with the
/// run. A calibration only means something complete: an interrupted one
/// leaves no half. The finished session, the calibration's id and its
/// report.
pub fn measure_stored(
    plan: &Plan,
    label: &str,
    db: Option<&std::path::Path>,
    no_wait: bool,
) -> Result<(crate::engine::session::Session, i64, CalibrationReport)> {
    use crate::engine::session::{RunSpec, Session, measurement_lock, open_store};
    let (db_path, store) = open_store(db)?;
    let measuring = measurement_lock(no_wait)?;
    let c = plan.counts;
    crate::say!(
        "secperf: calibrating on {}: {} A/A comparisons; {} injected slowdown(s), each {} truth \
         comparisons of {} pairs + {} of {} pairs; about {:.0} s of measurement",
        plan.workload.name,
        c.aa,
        plan.injected.len(),
        c.truth_comparisons,
        c.truth_pairs,
        c.injected,
        plan.design.pairs,
        plan.estimate_s()
    );
    if let Some(reason) = &plan.injected_skipped {
        crate::say!("secperf: injected slowdowns skipped: {reason}");
    }
    let mut session = Session::begin_measuring(
        measuring,
        db_path,
        store,
        &RunSpec {
            kind: "calibrate",
            label,
            params: &plan.record(),
            system_wide: false,
            audit_check: false,
            slices: plan.total_slices(),
            seed: Some(plan.design.seed),
            metric: plan.design.metric(),
        },
    )?;
    let mut live = crate::engine::ab::measurer::Live { lock: None };
    let report = measure(plan, &mut live, &session.progress);
    let report = report.map_err(|e| session.abandon("calibration", e))?;
    let calibration_id = store_report(&mut session.store, session.run_id, &report)?;
    session.finish()?;
    Ok((session, calibration_id, report))
}
