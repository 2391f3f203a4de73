//! The seam between the A/B loop and the machine: a [`Measurer`] measures
//! one half of a pair, or one workload under the current configuration.
//! [`Live`] does it for real (mechanism applied, fresh tasks, mechanism
//! undone); tests of the orchestration use [`testing::Scripted`], which
//! returns scripted figures without timing anything (as hyperfine tests its
//! scheduler with a mock executor).

use anyhow::{Context, Result};

use super::design::{Case, Design};
use crate::mechanisms::{Arm, Scope, SystemEnv, WorkerEnv};
use crate::model::{ChildCpu, WorkloadResult};
#[cfg(doc)]
use crate::runner::Unobserved;
use crate::runner::{self, MeasureOpts, Observer, Tick};
use crate::safety::StateLock;
use crate::workloads::WorkloadDef;

/// What one half of a pair measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HalfResult {
    /// Median of the half's slices.
    pub ns_per_op: f64,
    /// CPU time per operation of the processes the workload started
    /// (`command`); None for other workloads.
    pub child_cpu: Option<ChildCpu>,
}

impl HalfResult {
    pub fn of_ns(ns_per_op: f64) -> Self {
        HalfResult {
            ns_per_op,
            child_cpu: None,
        }
    }
}

/// Measures halves of pairs and plain measurements.
pub trait Measurer {
    /// One half of a pair: `arm` set up, `case` measured in fresh tasks
    /// watched by `observer` (the profiler, or [`Unobserved`]), the arm
    /// undone (also when the measurement failed).
    fn half(
        &mut self,
        case: &Case,
        design: &Design,
        arm: Arm,
        observer: &mut dyn Observer,
        on_tick: &mut dyn FnMut(Tick),
    ) -> Result<HalfResult>;

    /// One workload under the current configuration, watched by
    /// `observer`.
    fn current(
        &mut self,
        def: &WorkloadDef,
        opts: &MeasureOpts,
        observer: &mut dyn Observer,
        on_tick: &mut dyn FnMut(Tick),
    ) -> Result<WorkloadResult>;
}

/// The real thing: the runner's tasks, mechanisms applied through the
/// state lock (system-wide ones) or in each task (worker-scope ones).
pub struct Live<'a> {
    /// Held when any case's mechanism is system-wide.
    pub lock: Option<&'a StateLock>,
}

impl Measurer for Live<'_> {
    fn half(
        &mut self,
        case: &Case,
        design: &Design,
        arm: Arm,
        observer: &mut dyn Observer,
        on_tick: &mut dyn FnMut(Tick),
    ) -> Result<HalfResult> {
        let t = &case.treatment;
        let def = case.workload;
        let opts = MeasureOpts {
            tasks: case.tasks,
            mode: design.mode,
            cpus: design.cpus.clone(),
            warmup: design.warmup,
            samples: design.samples_per_half,
            sample_ms: design.sample_ms,
            scratch_root: design.scratch_root.clone(),
            cache_dir: design.cache_dir.clone(),
            params: case.workload_params.clone(),
        };
        let applied = match t.mechanism.scope() {
            Scope::System => {
                let lock = self
                    .lock
                    .context("internal error: system-wide mechanism without the state lock")?;
                Some(lock.apply(t, arm, &SystemEnv { workload: def })?)
            }
            Scope::Worker => None,
        };
        let result = if arm == Arm::Treatment {
            let hook = |ctx: &crate::workloads::TaskCtx| {
                t.mechanism.apply_in_worker(
                    t,
                    &WorkerEnv {
                        workload: def,
                        scratch: ctx.scratch,
                        data_dir: ctx.setup.data_dir.as_deref(),
                        task: ctx.task,
                    },
                )
            };
            runner::measure_observed(def, &opts, &hook, observer, on_tick)
        } else {
            runner::measure_observed(def, &opts, &|_| Ok(()), observer, on_tick)
        };
        if let Some(applied) = applied {
            applied.restore()?;
        }
        let result = result?;
        Ok(HalfResult {
            ns_per_op: result.ns_per_op.median,
            child_cpu: result.child_cpu,
        })
    }

    fn current(
        &mut self,
        def: &WorkloadDef,
        opts: &MeasureOpts,
        observer: &mut dyn Observer,
        on_tick: &mut dyn FnMut(Tick),
    ) -> Result<WorkloadResult> {
        runner::measure_observed(def, opts, &|_| Ok(()), observer, on_tick)
    }
}

/// A measurer that times nothing, for tests of what drives it.
#[cfg(test)]
pub mod testing {
    use anyhow::Result;

    use super::*;

    /// What a scripted half is asked: the case's treatment label and
    /// workload, the arm, and the half's number (0-based, in call order).
    pub type Script = dyn FnMut(&Case, Arm, usize) -> Result<f64>;

    /// Returns `script`'s figure for every half and records each call as
    /// ("treatment on workload", arm).
    pub struct Scripted {
        pub script: Box<Script>,
        pub calls: Vec<(String, Arm)>,
        pub current_ns_per_op: f64,
    }

    impl Scripted {
        pub fn new(script: impl FnMut(&Case, Arm, usize) -> Result<f64> + 'static) -> Self {
            Scripted {
                script: Box::new(script),
                calls: Vec::new(),
                current_ns_per_op: 100.0,
            }
        }
    }

    impl Measurer for Scripted {
        fn half(
            &mut self,
            case: &Case,
            design: &Design,
            arm: Arm,
            _observer: &mut dyn Observer,
            on_tick: &mut dyn FnMut(Tick),
        ) -> Result<HalfResult> {
            let n = self.calls.len();
            self.calls
                .push((format!("{} on {}", case.treatment, case.workload.name), arm));
            let total = design.warmup + design.samples_per_half;
            for done in 1..=total {
                on_tick(Tick {
                    done,
                    total,
                    ops_per_sec: 0.0,
                });
            }
            (self.script)(case, arm, n).map(HalfResult::of_ns)
        }

        fn current(
            &mut self,
            def: &WorkloadDef,
            opts: &MeasureOpts,
            _observer: &mut dyn Observer,
            _on_tick: &mut dyn FnMut(Tick),
        ) -> Result<WorkloadResult> {
            let values = vec![self.current_ns_per_op; opts.samples as usize];
            let mut r = crate::model::testing::result(def.name, &values);
            r.tasks = opts.tasks as u32;
            r.mode = opts.mode;
            r.params = opts.params.clone();
            Ok(r)
        }
    }
}
