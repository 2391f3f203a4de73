//! Measurements of the current configuration (`run`, and the current side
//! of a suite): one workload at one task count, stored as soon as it
//! finishes so a late failure loses nothing.

use anyhow::Result;

use super::measurer::Measurer;
use super::session::Session;
use crate::model::WorkloadResult;
use crate::runner::MeasureOpts;
use crate::workloads::WorkloadDef;

/// Measures `def` as `opts` says through `measurer`, stores the result in
/// the session's run and reports it on the progress line, where `name`
/// names it (the workload, or a suite's item).
pub fn measure_one(
    session: &mut Session,
    measurer: &mut dyn Measurer,
    def: &WorkloadDef,
    opts: &MeasureOpts,
    name: &str,
) -> Result<WorkloadResult> {
    let what = format!("{name} tasks={}", opts.tasks);
    session.progress.start(&format!("{what} ({})", opts.mode));
    let progress = &session.progress;
    let r = measurer.current(def, opts, &mut |t| progress.tick(t))?;
    session.store.add_result(session.run_id, &r)?;
    session.progress.line(&format!(
        "{what}: {} ops/s, {} per op",
        crate::report::si(r.ops_per_sec.median),
        crate::report::ns(r.ns_per_op.median)
    ));
    Ok(r)
}
