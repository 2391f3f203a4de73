//! The seam between the A/B loop and the machine: a [`Measurer`] measures
//! one half of a pair, or one workload under the current configuration.
//! [`Live`] does it for real (mechanism applied, fresh tasks, mechanism
//! undone); tests of the orchestration use [`testing::Scripted`], which
//! returns scripted figures without timing anything (as hyperfine tests its
//! scheduler with a mock executor).

use anyhow::{Context, Result};

use super::design::{Case, Design};
use crate::mechanisms::{Arm, Scope, SystemEnv, WorkerEnv};
use crate::model::{ChildCpu, Figure, Measure, Metric, WorkloadResult};
#[cfg(doc)]
use crate::runner::Unobserved;
use crate::runner::{self, MeasureOpts, Observer, Tick};
use crate::safety::StateLock;
use crate::workloads::WorkloadDef;

/// What one half of a pair measured.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfResult {
    /// Median of the half's slices, per operation, in the comparison's
    /// measure (time, or counted instructions).
    pub per_op: f64,
    /// CPU time per operation of the processes the workload started
    /// (`command`, `service`); None for other workloads.
    pub child_cpu: Option<ChildCpu>,
    /// The half's figures of the measures beside the comparison's own: a
    /// client's (`service`), medians over the half's runs; the server's
    /// CPU per run; time beside counted instructions.
    pub beside: Vec<Figure>,
}

impl HalfResult {
    /// A half of one figure per operation and nothing beside it.
    pub fn of(per_op: f64) -> Self {
        HalfResult {
            per_op,
            child_cpu: None,
            beside: Vec::new(),
        }
    }

    /// A measurement's figure per operation in `metric`, and those it
    /// gives beside it: the client's, the CPU of the processes it started
    /// where its workload shows that as measures of their own (`service`'s
    /// server), and where an event was counted beside the clock (the PMU's
    /// instructions), whichever of time and the count is not `metric`.
    /// Without a count, the clock's figure is the metric's (in a guest
    /// booted with icount the clock counts instructions).
    pub fn of_result(def: &WorkloadDef, result: &WorkloadResult, metric: Metric) -> HalfResult {
        let mut beside: Vec<Figure> = result
            .client_metrics
            .iter()
            .map(|m| Figure {
                measure: Measure::per_run(m.name.clone(), m.higher_is_better),
                value: m.value,
            })
            .collect();
        if let (Some(prefix), Some(cpu)) = (def.child_cpu_beside, result.child_cpu) {
            beside.extend(child_cpu_figures(prefix, &cpu));
        }
        let time = result.ns_per_op.median;
        let per_op = match (&result.counted_per_op, metric) {
            (Some(counted), Metric::Instructions) => {
                beside.push(Figure {
                    measure: Measure::of(Metric::Time),
                    value: time,
                });
                counted.median
            }
            (Some(counted), Metric::Time) => {
                beside.push(Figure {
                    measure: Measure::of(Metric::Instructions),
                    value: counted.median,
                });
                time
            }
            // The guest's clock counts instructions (icount): other work
            // in the guest only adds to a slice, so the half is its least.
            (None, Metric::Instructions) => least_sample(result).unwrap_or(time),
            (None, Metric::Time) => time,
        };
        HalfResult {
            per_op,
            child_cpu: result.child_cpu,
            beside,
        }
    }
}

/// The least of a measurement's slices per operation, by the clock: where
/// the clock counts instructions (a guest booted with icount) whatever
/// else the guest does in a slice (a kworker, a timer's work) only adds to
/// it, and one such slice would move a median of two by half its excess
/// (3 of 136 halves of the real streams read 5-13% more; docs/findings.md
/// "A branch tracked"). None without slices.
pub fn least_sample(result: &WorkloadResult) -> Option<f64> {
    result
        .sample_data
        .iter()
        .map(|s| s.ns_per_op)
        .filter(|v| v.is_finite())
        .min_by(f64::total_cmp)
}

/// How much more than the least the most of a measurement's slices read,
/// percent (0 with fewer than two).
pub fn sample_spread_pct(result: &WorkloadResult) -> f64 {
    let v: Vec<f64> = result
        .sample_data
        .iter()
        .map(|s| s.ns_per_op)
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    match (
        v.iter().copied().min_by(f64::total_cmp),
        v.iter().copied().max_by(f64::total_cmp),
    ) {
        (Some(lo), Some(hi)) if v.len() > 1 => (hi / lo - 1.0) * 100.0,
        _ => 0.0,
    }
}

/// What a half whose slices read apart says: which slice, by how much,
/// and why the half is still exact (it takes its least slice).
fn spread_line(result: &WorkloadResult, spread: f64, what: &str) -> String {
    let values: Vec<f64> = result
        .sample_data
        .iter()
        .map(|s| s.ns_per_op)
        .filter(|v| v.is_finite())
        .collect();
    let high = values
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(1, |(i, _)| i + 1);
    let least = values.iter().copied().fold(f64::INFINITY, f64::min);
    format!(
        "slice {high} of {} of this half of {} read {spread:.1}% more instructions per \
         operation than its least ({}): something else ran on the guest's vCPU in it (a \
         kworker, a timer's work), which only ever adds instructions; the half takes its least \
         slice, the workload's own count, so it stays exact to about 0.2%",
        values.len(),
        what,
        Metric::Instructions.format(least)
    )
}

/// The CPU time per run of the processes a workload started, as measures
/// per run named under `prefix` (user, system and their sum, in ms), so
/// that they get the paired change, interval and verdict every measure
/// gets: for `service`, the server's CPU that `predict --pid` is checked
/// against.
fn child_cpu_figures(prefix: &str, cpu: &ChildCpu) -> Vec<Figure> {
    type Of = fn(&ChildCpu) -> f64;
    let figures: [(&str, Of); 3] = [
        ("cpu_ms_per_run", ChildCpu::ns_per_op),
        ("user_ms_per_run", |c| c.user_ns_per_op),
        ("system_ms_per_run", |c| c.sys_ns_per_op),
    ];
    figures
        .iter()
        .map(|&(name, f)| Figure {
            measure: Measure::per_run(format!("{prefix}.{name}"), false),
            value: f(cpu) / 1e6,
        })
        .collect()
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
            // What each task counts beside the clock: the design's
            // counting says (the PMU's instructions, or nothing).
            count: design.counting.event(),
        };
        // The scratch directory outlives the arm: it is made before the
        // mechanism is applied and removed after it is undone, so nothing
        // the half deletes goes while audit rules that could watch it are
        // loaded (the kernel would drop such a rule without uncounting it:
        // phantom rules, docs/findings.md). A SIGKILL leaves it in place
        // for the next start, which removes it once the journal is empty
        // (`runner::scratch`).
        let scratch = runner::scratch_dir(def, &opts.scratch_root)?;
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
            runner::measure_in(def, &opts, scratch.path(), &hook, observer, on_tick)
        } else {
            runner::measure_in(def, &opts, scratch.path(), &|_| Ok(()), observer, on_tick)
        };
        if let Some(applied) = applied
            && let Err(e) = applied.restore()
        {
            // Whatever is still applied may watch it: left in place.
            let kept = scratch.keep();
            return Err(e.context(format!("the scratch directory {} is kept", kept.display())));
        }
        drop(scratch);
        let result = result?;
        if design.counting.by_least_slice() {
            let spread = sample_spread_pct(&result);
            if spread > 1.0 {
                let what = crate::report::label::workload(def.name, &case.workload_params);
                crate::say!("secperf: counting: {}", spread_line(&result, spread, &what));
            }
        }
        Ok(HalfResult::of_result(def, &result, design.metric()))
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use super::*;
    use crate::clients::ClientMetric;
    use crate::mechanisms::{Availability, Mechanism, Treatment, VariantDef};
    use crate::model::Params;

    /// A system mechanism that, when undone, notes the scratch
    /// directories present under `root`.
    struct SeesScratch {
        root: PathBuf,
        at_restore: Mutex<Vec<Vec<String>>>,
    }

    fn scratch_dirs(root: &Path) -> Vec<String> {
        std::fs::read_dir(root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(runner::SCRATCH_PREFIX))
            .collect()
    }

    impl Mechanism for SeesScratch {
        fn name(&self) -> &'static str {
            "sees-scratch"
        }
        fn description(&self) -> &'static str {
            "a test double"
        }
        fn scope(&self) -> Scope {
            Scope::System
        }
        fn variants(&self) -> &'static [VariantDef] {
            &[VariantDef {
                name: "on",
                description: "on",
            }]
        }
        fn survey_workloads(&self) -> &'static [&'static str] {
            &[]
        }
        fn probe(&self) -> Availability {
            Availability::Available
        }
        fn snapshot(&self) -> Result<serde_json::Value> {
            Ok(serde_json::Value::Null)
        }
        fn apply_system(&self, _t: &Treatment, _arm: Arm, _env: &SystemEnv) -> Result<()> {
            Ok(())
        }
        fn restore(&self, _snapshot: &serde_json::Value) -> Result<()> {
            self.at_restore
                .lock()
                .unwrap()
                .push(scratch_dirs(&self.root));
            Ok(())
        }
    }

    /// The order that keeps audit from leaking rules: a system arm is
    /// undone while the half's scratch directory still exists, and the
    /// directory goes after.
    #[test]
    fn a_system_arm_is_undone_before_the_scratch_directory_goes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("scratch");
        std::fs::create_dir(&root).unwrap();
        let m: &'static SeesScratch = Box::leak(Box::new(SeesScratch {
            root: root.clone(),
            at_restore: Mutex::new(Vec::new()),
        }));
        let lock =
            StateLock::acquire_in(&dir.path().join("state"), std::time::Duration::ZERO).unwrap();
        let case = Case {
            workload: crate::workloads::find("getppid").unwrap(),
            workload_params: Params::new(),
            treatment: Treatment {
                mechanism: m,
                variant: "on",
                params: Params::new(),
            },
            tasks: 1,
        };
        let mut design = Design::for_tests(1, 1);
        design.scratch_root = root.clone();
        design.cpus = Vec::new();
        let mut live = Live { lock: Some(&lock) };
        for arm in [Arm::Baseline, Arm::Treatment] {
            let half = live
                .half(&case, &design, arm, &mut runner::Unobserved, &mut |_| {})
                .unwrap();
            assert!(half.per_op > 0.0);
            assert!(scratch_dirs(&root).is_empty(), "removed after the half");
        }
        let seen = m.at_restore.lock().unwrap();
        assert_eq!(seen.len(), 2);
        for dirs in seen.iter() {
            assert_eq!(
                dirs.len(),
                1,
                "the half's scratch directory at restore: {dirs:?}"
            );
            assert!(dirs[0].starts_with("secperf-getppid-"), "{dirs:?}");
        }
    }

    fn result_of(time_ns: f64, counted: Option<f64>) -> WorkloadResult {
        let mut r = crate::model::testing::result("service", &[time_ns]);
        r.ns_per_op.median = time_ns;
        r.counted_per_op = counted.map(|median| crate::model::Summary {
            median,
            ci_low: median,
            ci_high: median,
        });
        r.client_metrics = vec![ClientMetric::throughput("requests_per_sec", 5000.0)];
        r.child_cpu = Some(ChildCpu {
            runs: 4,
            user_ns_per_op: 3e6,
            sys_ns_per_op: 1e6,
        });
        r
    }

    #[test]
    fn a_half_gives_its_metric_and_every_other_measure_beside_it() {
        let service = crate::workloads::find("service").unwrap();
        let names = |h: &HalfResult| -> Vec<(String, f64)> {
            h.beside
                .iter()
                .map(|f| (f.measure.name.clone(), f.value))
                .collect()
        };
        // Counted on a host with a PMU, asked for time: time is the
        // figure, the count beside it; and the reverse.
        let h = HalfResult::of_result(service, &result_of(200.0, Some(900.0)), Metric::Time);
        assert_eq!(h.per_op, 200.0);
        assert!(names(&h).contains(&("instructions".into(), 900.0)), "{h:?}");
        let h = HalfResult::of_result(
            service,
            &result_of(200.0, Some(900.0)),
            Metric::Instructions,
        );
        assert_eq!(h.per_op, 900.0);
        assert!(names(&h).contains(&("time".into(), 200.0)), "{h:?}");
        // Nothing counted (a guest whose clock counts): the clock's figure.
        let h = HalfResult::of_result(service, &result_of(336.0, None), Metric::Instructions);
        assert_eq!(h.per_op, 336.0);
        // A client's figure per run, and the server's CPU per run in ms,
        // because the workload says its child CPU is a measure of its own.
        let n = names(&h);
        assert!(n.contains(&("requests_per_sec".into(), 5000.0)), "{n:?}");
        assert!(n.contains(&("server.cpu_ms_per_run".into(), 4.0)), "{n:?}");
        assert!(n.contains(&("server.user_ms_per_run".into(), 3.0)), "{n:?}");
        let rps = &h.beside[0].measure;
        assert_eq!(
            (rps.per, rps.higher_is_better),
            (crate::model::Per::Run, true)
        );
        // A command's child CPU stays its own (no measures beside).
        let command = crate::workloads::find("command").unwrap();
        let mut r = result_of(1e6, None);
        r.client_metrics.clear();
        assert!(
            HalfResult::of_result(command, &r, Metric::Time)
                .beside
                .is_empty()
        );
    }

    #[test]
    fn counting_by_the_guest_clock_a_half_is_its_least_slice_and_time_its_median() {
        let getppid = crate::workloads::find("getppid").unwrap();
        // One slice of three caught other work in the guest (+12%).
        let r = crate::model::testing::result("getppid", &[575.9, 645.0, 575.8]);
        assert_eq!(least_sample(&r), Some(575.8));
        assert!(
            (sample_spread_pct(&r) - 12.0).abs() < 0.1,
            "{}",
            sample_spread_pct(&r)
        );
        assert_eq!(
            HalfResult::of_result(getppid, &r, Metric::Instructions).per_op,
            575.8
        );
        // Time keeps the median: a slow slice is as real as a fast one.
        assert_eq!(
            HalfResult::of_result(getppid, &r, Metric::Time).per_op,
            r.ns_per_op.median
        );
        // A PMU's count (a host) keeps its median too: it counts the task
        // alone, which others' work does not reach.
        let mut counted = r.clone();
        counted.counted_per_op = Some(crate::model::Summary {
            median: 900.0,
            ci_low: 890.0,
            ci_high: 910.0,
        });
        assert_eq!(
            HalfResult::of_result(getppid, &counted, Metric::Instructions).per_op,
            900.0
        );
        let one = crate::model::testing::result("getppid", &[575.8]);
        assert_eq!(sample_spread_pct(&one), 0.0);
        // Issue 53: the line said a slice read more, beside "exact to about
        // 0.2%", without which slice or why the half is still exact.
        let line = spread_line(&r, sample_spread_pct(&r), "getppid");
        assert!(
            line.starts_with("slice 2 of 3 of this half of getppid read 12.0% more"),
            "{line}"
        );
        assert!(
            line.contains("575.8 insns") && line.contains("takes its least"),
            "{line}"
        );
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
            (self.script)(case, arm, n).map(HalfResult::of)
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
