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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::measurer::testing::Scripted;
    use crate::engine::session::{RunSpec, open_store};

    #[test]
    fn every_workload_at_every_count_is_stored_as_it_finishes() {
        let dir = tempfile::tempdir().unwrap();
        let (db_path, store) = open_store(Some(&dir.path().join("t.db"))).unwrap();
        let workloads: Vec<&'static WorkloadDef> = ["getppid", "open"]
            .iter()
            .map(|n| crate::workloads::find(n).unwrap())
            .collect();
        let plan = RunPlan {
            params: crate::workloads::select::resolve_params(&workloads, &[]).unwrap(),
            workloads,
            tasks: vec![1, 2],
            mode: Mode::Process,
            samples: 3,
            sample_ms: 10,
            warmup: 0,
            pin: false,
            cpus: vec![],
            label: "t".into(),
            scratch: dir.path().to_path_buf(),
            quick: false,
        };
        let mut session = Session::begin(
            db_path,
            store,
            &RunSpec {
                kind: "run",
                label: "t",
                params: &plan,
                system_wide: false,
                slices: plan.slices(),
            },
        )
        .unwrap();
        assert!(
            session.lock.is_none(),
            "no lock without a system-wide mechanism"
        );
        let results = plan
            .measure(&mut session, &mut Scripted::new(|_, _, _| Ok(1.0)))
            .unwrap();
        let order: Vec<(String, u32)> = results
            .iter()
            .map(|r| (r.workload.clone(), r.tasks))
            .collect();
        assert_eq!(
            order,
            [("getppid", 1), ("getppid", 2), ("open", 1), ("open", 2)]
                .map(|(w, n)| (w.to_string(), n))
        );
        assert_eq!(results[2].params["depth"], "4");
        session.finish().unwrap();
        let stored = session.store.load_run(session.run_id).unwrap();
        assert_eq!(stored.results.len(), 4);
        assert!(stored.finished_at.is_some());
        assert_eq!(stored.meta.kind, "run");
        assert_eq!(
            session.stopped(anyhow::anyhow!("boom")).to_string(),
            format!(
                "run {0}: what was measured so far is stored (`secperf results show {0}`)",
                session.run_id
            )
        );
    }
}
