//! A reference experiment run by the engine: the suite's plan for this
//! machine, split into what can run here and what is skipped (with the
//! reason), measured as one run (the current configuration as results, the
//! live-switchable mechanisms as A/B pairs, SELinux AVC counters as notes),
//! and the record that lets the run document of a stored suite run carry
//! the same report later (`read::suite`, which reads the record back).

use std::path::Path;

use anyhow::{Context, Result};

use super::ab::design::{Case, Design};
use super::ab::measure_comparisons;
use super::ab::measurer::Measurer;
use super::current::measure_one;
use super::session::{Session, cache_dir};
use crate::mechanisms::{Availability, Scope, Treatment};
use crate::model::{Mode, Skipped, StoredRun};
use crate::profile::ProfileOpts;
use crate::read::suite::{AVC_NOTE, SuiteRecord};
use crate::runner::MeasureOpts;
use crate::stats::decision::{DecisionOpts, min_pairs_for};
use crate::store::Store;
use crate::suites::avc::{AvcDelta, AvcStats};
use crate::suites::{PlanCtx, SuiteDef, SuitePlan};
use crate::usage_bail;

/// A suite planned for this machine, before anything runs.
pub struct SuiteRun {
    pub plan: SuitePlan,
    /// The A/B cases, each with the task mode of its item.
    pub cases: Vec<(Case, Mode)>,
    pub record: SuiteRecord,
    /// CPUs the tasks are pinned to.
    pub cpus: Vec<usize>,
}

impl SuiteRun {
    /// Measures the suite into `store` (at its path) under the measurement
    /// lock (`no_wait`: fail at once if another secperf measures), with
    /// workloads' files under `scratch`; the finished session.
    pub fn measure_stored(
        &self,
        def: &SuiteDef,
        label: &str,
        scratch: &Path,
        (db_path, store): (std::path::PathBuf, crate::store::Store),
        no_wait: bool,
        metric: crate::model::Metric,
    ) -> Result<Session> {
        let measuring = super::session::measurement_lock(no_wait)?;
        let ab_text = match self.cases.len() {
            0 => "no A/B comparison".to_string(),
            n => format!("{n} A/B comparisons x {} pairs", self.record.pairs),
        };
        crate::say!(
            "secperf: suite {} v{}: {} measurements and {ab_text}, about {:.0} s of measurement",
            def.name,
            def.version,
            self.plan
                .current
                .iter()
                .map(|i| i.tasks.len())
                .sum::<usize>(),
            self.estimate_s()
        );
        let (run_slices, ab_slices) = self.slices();
        let mut session = Session::begin_measuring(
            measuring,
            db_path,
            store,
            &super::session::RunSpec {
                kind: "suite",
                label,
                params: &self.record,
                system_wide: self.system_wide(),
                audit_check: self.switches("audit"),
                slices: run_slices + ab_slices,
                seed: Some(self.record.seed),
                metric,
            },
        )?;
        let lock = session.lock.take();
        let measured = self.measure(
            &mut session,
            &mut super::ab::measurer::Live {
                lock: lock.as_ref(),
            },
            scratch,
        );
        drop(lock);
        measured.map_err(|e| session.stopped(e))?;
        session.finish()?;
        Ok(session)
    }

    /// Plans `def` for the CPUs this process may use; treatments that
    /// cannot run here are recorded as skipped with the reason.
    pub fn new(
        def: &SuiteDef,
        quick: bool,
        seed: u64,
        profile: Option<ProfileOpts>,
    ) -> Result<SuiteRun> {
        let cpus =
            crate::sys::cpus::allowed_cpus().context("reading this process's CPU affinity")?;
        let plan = (def.plan)(&PlanCtx {
            quick,
            cpus: cpus.len(),
        });
        plan.validate()?;
        let mut treatments = Vec::new();
        let mut skipped = Vec::new();
        for spec in &plan.treatments {
            let t = Treatment::parse(spec)?;
            match t.mechanism.probe() {
                Availability::Available => treatments.push(t),
                Availability::Unavailable(reason) => skipped.push(Skipped {
                    mechanism: t.to_string(),
                    reason,
                }),
            }
        }
        let mut cases = Vec::new();
        for t in &treatments {
            for item in &plan.ab_items {
                for &n in &item.tasks {
                    let case = Case {
                        workload: item.def(),
                        workload_params: item.full_params(),
                        treatment: t.clone(),
                        tasks: n,
                    };
                    cases.push((case, item.mode));
                }
            }
        }
        let pairs =
            min_pairs_for(cases.len(), DecisionOpts::default().alpha).max(plan.ab.min_pairs);
        let record = SuiteRecord {
            suite: def.name.into(),
            version: def.version,
            quick,
            cpus: cpus.len(),
            pairs,
            seed,
            skipped,
            plan: serde_json::to_value(&plan)?,
            profile,
        };
        Ok(SuiteRun {
            plan,
            cases,
            record,
            cpus,
        })
    }

    /// Whether any case switches a system-wide mechanism.
    pub fn system_wide(&self) -> bool {
        self.cases
            .iter()
            .any(|(c, _)| c.treatment.mechanism.scope() == Scope::System)
    }

    /// Whether any case switches the mechanism named `name`.
    pub fn switches(&self, name: &str) -> bool {
        self.cases
            .iter()
            .any(|(c, _)| c.treatment.mechanism.name() == name)
    }

    /// Slices of the current side and of the A/B side.
    pub fn slices(&self) -> (u64, u64) {
        let p = &self.plan;
        let run: u64 = p
            .current
            .iter()
            .map(|i| i.tasks.len() as u64 * (p.run.samples + p.run.warmup) as u64)
            .sum();
        let ab = self.cases.len() as u64
            * 2
            * (self.record.pairs + self.record.profile.map_or(0, |p| p.pairs)) as u64
            * (p.ab.warmup + p.ab.samples_per_half) as u64;
        (run, ab)
    }

    /// Estimated seconds of measurement (20% for starting tasks).
    pub fn estimate_s(&self) -> f64 {
        let (run, ab) = self.slices();
        (run * self.plan.run.sample_ms + ab * self.plan.ab.sample_ms) as f64 / 1000.0 * 1.2
    }

    /// The current side, then the A/B comparisons; everything stored as it
    /// is measured.
    pub fn measure(
        &self,
        session: &mut Session,
        measurer: &mut dyn Measurer,
        scratch: &Path,
    ) -> Result<()> {
        let plan = &self.plan;
        let avc_root = Path::new("/");
        let avc_active = plan.collect_avc && AvcStats::read(avc_root)?.is_some();
        for item in &plan.current {
            for &n in &item.tasks {
                let opts = MeasureOpts {
                    tasks: n,
                    mode: item.mode,
                    cpus: self.cpus.clone(),
                    warmup: plan.run.warmup,
                    samples: plan.run.samples,
                    sample_ms: plan.run.sample_ms,
                    scratch_root: scratch.to_path_buf(),
                    cache_dir: cache_dir(),
                    params: item.full_params(),
                    count: None,
                };
                let before = if avc_active {
                    AvcStats::read(avc_root)?
                } else {
                    None
                };
                measure_one(session, measurer, item.def(), &opts, &item.name(), None)?;
                if let Some(before) = before
                    && let Some(after) = AvcStats::read(avc_root)?
                {
                    let delta = AvcDelta {
                        workload: item.name(),
                        tasks: n as u32,
                        stats: before.delta(&after),
                    };
                    session.store.add_run_note(
                        session.run_id,
                        AVC_NOTE,
                        &serde_json::to_value(&delta)?,
                    )?;
                }
            }
        }
        let design = Design {
            pairs: self.record.pairs,
            sample_ms: plan.ab.sample_ms,
            samples_per_half: plan.ab.samples_per_half,
            warmup: plan.ab.warmup,
            mode: Mode::Process,
            cpus: self.cpus.clone(),
            scratch_root: scratch.to_path_buf(),
            cache_dir: cache_dir(),
            seed: self.record.seed,
            profile: self.record.profile,
            // A suite reproduces a published experiment with its fixed
            // number of pairs.
            stop: None,
            // A suite's tables are in its post's units: time.
            counting: crate::engine::ab::counting::Counting::Clock,
        };
        let cases = self.cases.iter().map(|(case, mode)| {
            let design = Design {
                mode: *mode,
                ..design.clone()
            };
            (case, design, "")
        });
        measure_comparisons(
            &mut session.store,
            session.run_id,
            cases,
            measurer,
            self.record.seed,
            &session.progress,
            &DecisionOpts::default(),
        )?;
        Ok(())
    }
}

/// Loads `spec` and checks it is a run of suite `def` at its version;
/// `flag` names the option in errors.
pub fn load_suite_run(
    store: &Store,
    spec: &str,
    def: &SuiteDef,
    flag: &str,
) -> Result<(StoredRun, SuiteRecord)> {
    let run = store.load_run(store.resolve_run(spec)?)?;
    let record: Option<SuiteRecord> = (run.meta.kind == "suite")
        .then(|| serde_json::from_value(run.meta.params.clone()).ok())
        .flatten();
    match record {
        Some(r) if r.suite == def.name && r.version == def.version => Ok((run, r)),
        Some(r) if r.suite == def.name => usage_bail!(
            "{flag} {spec}: run {} was made by {} v{}, this secperf has v{}: their measurements \
             differ; use `secperf compare` for a plain comparison",
            run.run_id,
            r.suite,
            r.version,
            def.version
        ),
        Some(r) => usage_bail!(
            "{flag} {spec}: run {} is suite {}, not {} (see `secperf results list`)",
            run.run_id,
            r.suite,
            def.name
        ),
        None => usage_bail!(
            "{flag} {spec}: run {} is a `{}` run, not a run of suite {} (see `secperf results list`)",
            run.run_id,
            run.meta.kind,
            def.name
        ),
    }
}
