//! Measurements of the current configuration (`run`, and the current side
//! of a suite): the plan of `run` (workloads x a task ladder), and one
//! workload at one task count, stored as soon as it finishes so a late
//! failure loses nothing.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::ab::measurer::Measurer;
use super::session::{Session, cache_dir};
use crate::model::{Mode, Params, Profile, WorkloadResult};
use crate::profile::attribute::profile_of;
use crate::profile::{ProfileOpts, profile_half};
use crate::runner::{MeasureOpts, Unobserved};
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
    /// Profiled measurements after each timed one (`--profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileOpts>,
}

fn ser_names<S: serde::Serializer>(w: &[&'static WorkloadDef], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(w.iter().map(|d| d.name))
}

/// `run`: measures `plan` into the store at `db` (the default one when
/// None) under the measurement lock (`no_wait`: fail at once if another
/// secperf measures), each result stored as it finishes; the finished
/// session.
pub fn measure_stored(
    plan: &RunPlan,
    db: Option<&std::path::Path>,
    no_wait: bool,
) -> Result<Session> {
    let measuring = super::session::measurement_lock(no_wait)?;
    if let Some(run_ms) = super::trial::command_trial(&plan.params)? {
        crate::say!(
            "secperf: {} slices of at least {} ms each, about {:.0} s of measurement",
            plan.slices(),
            plan.sample_ms,
            plan.slices() as f64 * (plan.sample_ms as f64 + run_ms) / 1000.0 * 1.1
        );
    }
    let (db_path, store) = super::session::open_store(db)?;
    let mut session = Session::begin_measuring(
        measuring,
        db_path,
        store,
        &super::session::RunSpec {
            kind: "run",
            label: &plan.label,
            params: plan,
            system_wide: false,
            audit_check: false,
            slices: plan.slices(),
            seed: None,
            metric: crate::model::Metric::Time,
        },
    )?;
    plan.measure(&mut session, &mut super::ab::measurer::Live { lock: None })
        .map_err(|e| session.stopped(e))?;
    session.finish()?;
    Ok(session)
}

impl RunPlan {
    /// Slices the plan measures, warmup and profiled measurements included.
    pub fn slices(&self) -> u64 {
        let per_count = 1 + self.profile.map_or(0, |p| p.pairs) as u64;
        (self.workloads.len() * self.tasks.len()) as u64
            * per_count
            * (self.samples + self.warmup) as u64
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
                    count: None,
                };
                results.push(measure_one(
                    session,
                    measurer,
                    def,
                    &opts,
                    def.name,
                    self.profile,
                )?);
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
    profile: Option<ProfileOpts>,
) -> Result<WorkloadResult> {
    let what = format!("{name} tasks={}", opts.tasks);
    session.progress.start(&format!("{what} ({})", opts.mode));
    let progress = &session.progress;
    let mut r = measurer.current(def, opts, &mut Unobserved, &mut |t| progress.tick(t))?;
    if let Some(p) = profile {
        r.profile = Some(profile_current(
            measurer,
            def,
            opts,
            &p,
            &mut |t| progress.tick(t),
            r.ns_per_op.median,
        ));
    }
    session.store.add_result(session.run_id, &r)?;
    session.progress.line(&format!(
        "{what}: {} ops/s, {} per op",
        crate::report::si(r.ops_per_sec.median),
        crate::report::ns(r.ns_per_op.median)
    ));
    Ok(r)
}

/// Profiled measurements of `def` after its timed one, each sampled;
/// sampling that is refused or fails ends the profile with a note, never
/// the run.
fn profile_current(
    measurer: &mut dyn Measurer,
    def: &WorkloadDef,
    opts: &MeasureOpts,
    p: &ProfileOpts,
    on_tick: &mut dyn FnMut(crate::runner::Tick),
    timed_ns_per_op: f64,
) -> Profile {
    let (symbols, mut notes) = crate::profile::readiness(p.hz);
    let mut halves = Vec::new();
    if let Some(symbols) = &symbols {
        for i in 0..p.pairs {
            let half = profile_half(symbols, p.hz, opts.sample_ms, |observer| {
                Ok(measurer
                    .current(def, opts, observer, on_tick)?
                    .ns_per_op
                    .median)
            });
            match half {
                Ok(half) => halves.push(half),
                Err(e) => {
                    notes.push(format!(
                        "profiled measurement {} of {} failed: {e:#}",
                        i + 1,
                        p.pairs
                    ));
                    break;
                }
            }
        }
    }
    let mut profile = profile_of(&halves, p.hz, timed_ns_per_op, crate::profile::TOP_SYMBOLS);
    if halves.is_empty() {
        profile.notes.retain(|n| !n.contains("no profiled"));
    }
    notes.append(&mut profile.notes);
    profile.notes = notes;
    profile
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ab::measurer::testing::Scripted;
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
            profile: None,
        };
        let mut session = Session::begin(
            db_path,
            store,
            &RunSpec {
                kind: "run",
                label: "t",
                params: &plan,
                system_wide: false,
                audit_check: false,
                slices: plan.slices(),
                seed: None,
                metric: crate::model::Metric::Time,
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
