//! Measurements of the current configuration (`run`, and the current side
//! of a suite): the plan of `run` (workloads x a task ladder), and one
//! workload at one task count, stored as soon as it finishes so a late
//! failure loses nothing.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::measurer::Measurer;
use super::session::{Session, cache_dir};
use crate::model::{Mode, Params, WorkloadResult};
use crate::runner::MeasureOpts;
use crate::workloads::WorkloadDef;

/// Everything `run` will do, validated.
#[derive(Debug, Clone, Serialize)]
pub struct RunPlan {
    #[serde(serialize_with = "ser_names")]
    pub workloads: Vec<&'static WorkloadDef>,
    pub tasks: Vec<usize>,
    pub mode: Mode,
    pub samples: u32,
    pub sample_ms: u64,
    pub warmup: u32,
    pub pin: bool,
    /// CPUs tasks are pinned to, in order.
    pub cpus: Vec<usize>,
    /// Effective parameters per workload (defaults filled in).
    pub params: std::collections::BTreeMap<String, Params>,
    pub label: String,
    pub scratch: PathBuf,
    pub quick: bool,
}

fn ser_names<S: serde::Serializer>(w: &[&'static WorkloadDef], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(w.iter().map(|d| d.name))
}

impl RunPlan {
    /// Slices the plan measures, warmup included.
    pub fn slices(&self) -> u64 {
        (self.workloads.len() * self.tasks.len()) as u64 * (self.samples + self.warmup) as u64
    }

    /// Each workload at each task count, in order, each stored as it
    /// finishes.
    pub fn measure(
        &self,
        session: &mut Session,
        measurer: &mut dyn Measurer,
    ) -> Result<Vec<WorkloadResult>> {
        let mut results = Vec::new();
        for def in &self.workloads {
            for &tasks in &self.tasks {
                let opts = MeasureOpts {
                    tasks,
                    mode: self.mode,
                    cpus: self.cpus.clone(),
                    warmup: self.warmup,
                    samples: self.samples,
                    sample_ms: self.sample_ms,
                    scratch_root: self.scratch.clone(),
                    cache_dir: cache_dir(),
                    params: self.params[def.name].clone(),
                };
                results.push(measure_one(session, measurer, def, &opts, def.name)?);
            }
        }
        Ok(results)
    }
}

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
