//! How a workload is timed, will-it-scale style: N tasks (processes or
//! threads) pinned to distinct CPUs, all released at once, each bumping its
//! own counter in shared memory after every operation; the parent reads the
//! counters at fixed slice boundaries, discards warmup slices and keeps
//! every other slice as a sample.
//!
//! The hot loop holds the operation, the counter store and a read of the
//! stop flag, nothing else. Operations long enough to be counted in
//! handfuls per slice (`SLOW` workloads) also publish their completion
//! time, so a slice is measured between completions instead of being
//! quantised to whole operations.

pub mod counted;
pub mod procfs;
pub mod scratch;
pub mod shm;
pub mod workers;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use chrono::Utc;

use self::shm::Shm;
use self::workers::{TaskSpec, with_tasks};
use crate::model::{ChildCpu, Mode, Params, Sample, UnitRate, WorkloadResult};
use crate::stats::median_ci;
use crate::sys;
use crate::workloads::task::CounterReading;
use crate::workloads::{SetupCtx, TaskCtx, WorkloadDef};

pub use crate::workloads::task::AfterPrepare;

/// Set by the CLI's SIGINT/SIGTERM handlers; the sampling loop stops when
/// it turns true.
static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Makes `flag` the interrupt flag the sampling loop watches.
pub fn set_interrupt_source(flag: Arc<AtomicBool>) {
    let _ = INTERRUPT.set(flag);
}

/// How to measure one workload at one task count.
#[derive(Debug, Clone)]
pub struct MeasureOpts {
    pub tasks: usize,
    pub mode: Mode,
    /// CPUs to pin task i to (`cpus[i]`); empty = no pinning.
    pub cpus: Vec<usize>,
    pub warmup: u32,
    pub samples: u32,
    pub sample_ms: u64,
    /// Where per-measurement scratch directories are made.
    pub scratch_root: PathBuf,
    /// Where fixtures kept across runs live (the walk tree).
    pub cache_dir: PathBuf,
    /// Effective workload parameters (defaults filled in).
    pub params: Params,
    /// Count this event per task beside the clock: each slice then also
    /// gives the event's count per operation (`counted_per_op`: the PMU's
    /// instructions on a host); None: time alone.
    pub count: Option<counted::Event>,
}

/// Progress reported after every slice.
#[derive(Debug, Clone, Copy)]
pub struct Tick {
    /// Slices done so far (warmup included) and in all.
    pub done: u32,
    pub total: u32,
    pub ops_per_sec: f64,
}

/// One reading of all counters at a slice boundary.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub t_ns: u64,
    /// Per task: operations so far, and when the last one completed (0
    /// when not recorded).
    pub ops: Vec<(u64, u64)>,
    pub nivcsw: Vec<u64>,
    /// Per task: nanoseconds spent runnable but waiting on a run queue, and
    /// times put on a CPU (`/proc/<tid>/schedstat`); 0s when not available.
    pub run_wait: Vec<(u64, u64)>,
    pub steal_ticks: u64,
    /// Per task: the counted event so far ([`MeasureOpts::count`]); empty
    /// when nothing is counted.
    pub counted: Vec<u64>,
}

/// Measures `def` as `opts` says; returns the kept samples and summaries.
pub fn measure(
    def: &WorkloadDef,
    opts: &MeasureOpts,
    on_tick: &mut dyn FnMut(Tick),
) -> Result<WorkloadResult> {
    measure_with(def, opts, &|_| Ok(()), on_tick)
}

/// Watches one measurement from outside its tasks (the profiler). Each
/// call comes from the measuring thread at a fixed point of the
/// measurement; an error stops it.
pub trait Observer {
    /// Every task has prepared (its mechanism applied); none is released
    /// yet. `cpus[i]` is task i's CPU when pinned. With `follow`, `tids`
    /// are the threads of processes a task started (a server's), to be
    /// watched on every CPU with what they start.
    fn ready(&mut self, tids: &[i32], cpus: &[Option<usize>], follow: bool) -> Result<()>;
    /// The warmup is over: the kept slices start now.
    fn keep(&mut self) -> Result<()>;
    /// A kept slice ended.
    fn slice(&mut self) -> Result<()>;
    /// The last kept slice ended; the tasks are still alive.
    fn done(&mut self) -> Result<()>;
}

/// Observes nothing.
pub struct Unobserved;

impl Observer for Unobserved {
    fn ready(&mut self, _: &[i32], _: &[Option<usize>], _: bool) -> Result<()> {
        Ok(())
    }
    fn keep(&mut self) -> Result<()> {
        Ok(())
    }
    fn slice(&mut self) -> Result<()> {
        Ok(())
    }
    fn done(&mut self) -> Result<()> {
        Ok(())
    }
}

/// [`measure`], with `after_prepare` run in every task once it prepared
/// (where a worker-scope mechanism is applied).
pub fn measure_with(
    def: &WorkloadDef,
    opts: &MeasureOpts,
    after_prepare: &AfterPrepare,
    on_tick: &mut dyn FnMut(Tick),
) -> Result<WorkloadResult> {
    measure_observed(def, opts, after_prepare, &mut Unobserved, on_tick)
}

/// [`measure_with`], watched by `observer`.
pub fn measure_observed(
    def: &WorkloadDef,
    opts: &MeasureOpts,
    after_prepare: &AfterPrepare,
    observer: &mut dyn Observer,
    on_tick: &mut dyn FnMut(Tick),
) -> Result<WorkloadResult> {
    let scratch = scratch_dir(def, &opts.scratch_root)?;
    measure_in(def, opts, scratch.path(), after_prepare, observer, on_tick)
}

/// A fresh scratch directory for one measurement of `def` under `root`
/// (`secperf-<workload>-XXXXXX`), removed when dropped, and recorded in
/// the state directory while it lives so that a SIGKILL does not leave it
/// for good ([`scratch`]).
pub fn scratch_dir(def: &WorkloadDef, root: &Path) -> Result<Scratch> {
    std::fs::create_dir_all(root)
        .with_context(|| format!("creating scratch directory {}", root.display()))?;
    let dir = tempfile::Builder::new()
        .prefix(&format!("{SCRATCH_PREFIX}{}-", def.name))
        .tempdir_in(root)
        .with_context(|| format!("creating a scratch directory in {}", root.display()))?;
    let record = scratch::record_here(dir.path());
    Ok(Scratch {
        dir: Some(dir),
        _record: record,
    })
}

/// A scratch directory ([`scratch_dir`]): removed when dropped, then its
/// record.
#[derive(Debug)]
pub struct Scratch {
    dir: Option<tempfile::TempDir>,
    _record: Option<scratch::Record>,
}

impl Scratch {
    pub fn path(&self) -> &Path {
        self.dir
            .as_ref()
            .expect("a scratch directory until dropped")
            .path()
    }

    /// Keeps the directory (and forgets its record, so that no later
    /// start removes it); returns its path.
    pub fn keep(mut self) -> PathBuf {
        self._record.take();
        self.dir
            .take()
            .expect("a scratch directory until dropped")
            .keep()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // The directory first: its record goes after (field order).
        self.dir.take();
    }
}

/// What every scratch directory's name starts with.
pub const SCRATCH_PREFIX: &str = "secperf-";

/// [`measure_observed`] in the scratch directory `scratch`, which the
/// caller made ([`scratch_dir`]) and removes: a caller that switched a
/// system-wide mechanism undoes it first, so that nothing is deleted while
/// audit rules that might watch it are loaded.
pub fn measure_in(
    def: &WorkloadDef,
    opts: &MeasureOpts,
    scratch: &Path,
    after_prepare: &AfterPrepare,
    observer: &mut dyn Observer,
    on_tick: &mut dyn FnMut(Tick),
) -> Result<WorkloadResult> {
    let started_at = Utc::now();
    if opts.tasks == 0 || opts.samples == 0 || opts.sample_ms == 0 {
        bail!("tasks, samples and sample length must be positive");
    }
    let setup = (def.setup)(&SetupCtx {
        scratch,
        cache: &opts.cache_dir,
        params: &opts.params,
        tasks: opts.tasks,
    })
    .with_context(|| format!("workload {}: setup", def.name))?;

    let shm = Shm::new(opts.tasks)?;
    // The parent wakes once per slice; when tasks leave CPUs free, it
    // stays on those so it never preempts a task.
    let _parent_cpus = ParentAffinity::away_from_tasks(opts);
    let specs: Vec<TaskSpec> = (0..opts.tasks)
        .map(|task| TaskSpec {
            def,
            cpu: opts.cpus.get(task).copied(),
            after_prepare,
            ctx: TaskCtx {
                task,
                tasks: opts.tasks,
                scratch,
                params: &opts.params,
                setup: &setup,
                stop: Some(&shm.flags().stop),
            },
        })
        .collect();

    let pinned_cpus: Option<&[usize]> = if opts.cpus.is_empty() {
        None
    } else {
        Some(&opts.cpus[..opts.tasks])
    };
    let hz = procfs::ticks_per_sec();
    let samples = with_tasks(opts.mode, def.kill_at_stop, &specs, &shm, |check_alive| {
        wait_ready(&shm, check_alive).with_context(|| format!("workload {}", def.name))?;
        let tids: Vec<i32> = (0..opts.tasks)
            .map(|i| shm.slot(i).info.tid.load(Ordering::Relaxed))
            .collect();
        let task_cpus: Vec<Option<usize>> =
            (0..opts.tasks).map(|i| opts.cpus.get(i).copied()).collect();
        match def.observed {
            // The task's work runs in processes it started: watch those.
            Some(observed) => {
                let watched: Vec<i32> = tids.iter().flat_map(|&t| observed(t)).collect();
                observer.ready(&watched, &vec![None; watched.len()], true)?;
            }
            None => observer.ready(&tids, &task_cpus, false)?,
        }
        let mut counters = opts
            .count
            .map(|e| counted::Counters::open(e, &tids))
            .transpose()
            .with_context(|| format!("workload {}", def.name))?;
        let mut counted_now =
            || -> Result<Vec<u64>> { counters.as_mut().map_or(Ok(Vec::new()), |c| c.read()) };
        let read = |t_ns: u64, counted: Vec<u64>| Snapshot {
            t_ns,
            ops: (0..opts.tasks)
                .map(|i| {
                    let c = &shm.slot(i).counter;
                    if def.slow {
                        c.read_timed()
                    } else {
                        (c.ops.load(Ordering::Relaxed), 0)
                    }
                })
                .collect(),
            nivcsw: tids
                .iter()
                .map(|&t| procfs::involuntary_switches(t).unwrap_or(0))
                .collect(),
            run_wait: tids
                .iter()
                .map(|&t| procfs::run_queue_wait(t).unwrap_or((0, 0)))
                .collect(),
            steal_ticks: procfs::steal_for(&procfs::steal_ticks(), pinned_cpus),
            counted,
        };
        let mut prev = read(sys::monotonic_ns(), counted_now()?);
        let go_ns = sys::monotonic_ns();
        shm.release();
        // Slow workloads measure from their first completion; before that,
        // the release time stands in for "last completion".
        for p in prev.ops.iter_mut() {
            p.1 = go_ns;
        }
        prev.t_ns = go_ns;
        let total = opts.warmup + opts.samples;
        let mut kept = Vec::with_capacity(opts.samples as usize);
        let counters = || -> Vec<CounterReading> {
            (0..opts.tasks)
                .map(|i| shm.slot(i).counter.read())
                .collect()
        };
        let mut kept_from = counters();
        for k in 0..total {
            if k == opts.warmup {
                kept_from = counters();
                observer.keep()?;
            }
            let deadline = prev.t_ns + opts.sample_ms * 1_000_000;
            sleep_until(deadline, &shm, check_alive)
                .with_context(|| format!("workload {}", def.name))?;
            // A slice ends at the first moment every task has completed an
            // operation in it: a slow workload's operation may outlast the
            // slice, and on a loaded machine a task may have been kept off
            // its CPU for the whole slice (flagged `starved`). No slice is
            // ever empty, so no figure is ever divided by zero operations.
            wait_for_completion(&shm, &prev, check_alive)
                .with_context(|| format!("workload {}", def.name))?;
            let now_ns = sys::monotonic_ns();
            let cur = read(now_ns, counted_now()?);
            let sample = compute_sample(
                &prev,
                &cur,
                opts.sample_ms,
                hz,
                k.saturating_sub(opts.warmup),
            )
            .with_context(|| format!("workload {}, slice {} of {total}", def.name, k + 1))?;
            on_tick(Tick {
                done: k + 1,
                total,
                ops_per_sec: sample.ops_per_sec,
            });
            if k >= opts.warmup {
                kept.push(sample);
                observer.slice()?;
            }
            prev = cur;
        }
        observer.done()?;
        let kept_to = counters();
        let child_cpu = def
            .child_cpu
            .then(|| child_cpu_between(&kept_from, &kept_to));
        let kept_ops: Vec<(u64, u64)> = kept_from
            .iter()
            .zip(&kept_to)
            .map(|(a, b)| (a.ops, b.ops))
            .collect();
        Ok((kept, child_cpu, kept_ops))
    })?;
    let (samples, child_cpu, kept_ops) = samples;
    // A task that failed while the last slice was read still fails the run.
    check_failed(&shm).with_context(|| format!("workload {}", def.name))?;
    let client_metrics = client_metrics(scratch, &kept_ops)?;

    let ops: Vec<f64> = samples.iter().map(|s| s.ops_per_sec).collect();
    let ns: Vec<f64> = samples.iter().map(|s| s.ns_per_op).collect();
    let counted: Vec<f64> = samples.iter().filter_map(|s| s.counted_per_op).collect();
    let ops_per_sec = median_ci(&ops, 0.95).context("summarising samples")?;
    let unit_rate = match (def.unit, setup.units_per_op) {
        (Some(unit), Some(per_op)) => Some(UnitRate {
            unit: unit.to_string(),
            per_op,
            per_sec: median_ci(
                &ops.iter().map(|x| x * per_op as f64).collect::<Vec<_>>(),
                0.95,
            )
            .context("summarising samples")?,
        }),
        _ => None,
    };
    Ok(WorkloadResult {
        workload: def.name.to_string(),
        mode: opts.mode,
        tasks: opts.tasks as u32,
        pinned: !opts.cpus.is_empty(),
        cpus: pinned_cpus.map(<[usize]>::to_vec).unwrap_or_default(),
        params: opts.params.clone(),
        sample_ms: opts.sample_ms,
        warmup_samples: opts.warmup,
        samples: samples.len() as u32,
        ops_per_sec,
        ns_per_op: median_ci(&ns, 0.95).context("summarising samples")?,
        counted_per_op: (!counted.is_empty() && counted.len() == samples.len())
            .then(|| median_ci(&counted, 0.95))
            .flatten(),
        unit_rate,
        sample_data: samples,
        started_at,
        finished_at: Utc::now(),
        profile: None,
        child_cpu: child_cpu.flatten(),
        client_metrics,
    })
}

/// The median over the kept operations of each figure a client reported
/// (`service`: one JSON line per client run in the scratch directory,
/// [`crate::workloads::service::metrics_path`]); empty when none did.
/// `kept_ops[i]`: task i's operation counts when the kept slices began
/// and ended (runs after the first and up to the second are kept).
fn client_metrics(
    scratch: &Path,
    kept_ops: &[(u64, u64)],
) -> Result<Vec<crate::clients::ClientMetric>> {
    use crate::workloads::service::{RunMetrics, metrics_path};
    let mut by_name: Vec<(String, bool, Vec<f64>)> = Vec::new();
    for (task, &(from, to)) in kept_ops.iter().enumerate() {
        let path = metrics_path(scratch, task);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let run: RunMetrics = serde_json::from_str(line)
                .with_context(|| format!("reading the client's figures in {}", path.display()))?;
            if run.op <= from || run.op > to {
                continue;
            }
            for m in run.metrics {
                match by_name.iter_mut().find(|(n, _, _)| *n == m.name) {
                    Some((_, _, v)) => v.push(m.value),
                    None => by_name.push((m.name, m.higher_is_better, vec![m.value])),
                }
            }
        }
    }
    Ok(by_name
        .into_iter()
        .filter_map(|(name, higher_is_better, values)| {
            Some(crate::clients::ClientMetric {
                name,
                value: crate::stats::median(&values)?,
                higher_is_better,
            })
        })
        .collect())
}

/// CPU per operation of the tasks' children between two readings of every
/// counter (each reading consistent: the CPU times belong to its ops).
fn child_cpu_between(from: &[CounterReading], to: &[CounterReading]) -> Option<ChildCpu> {
    let mut runs = 0;
    let (mut user, mut sys) = (0u64, 0u64);
    for (a, b) in from.iter().zip(to) {
        runs += b.ops.saturating_sub(a.ops);
        user += b.child_user_ns.saturating_sub(a.child_user_ns);
        sys += b.child_sys_ns.saturating_sub(a.child_sys_ns);
    }
    (runs > 0).then(|| ChildCpu {
        runs,
        user_ns_per_op: user as f64 / runs as f64,
        sys_ns_per_op: sys as f64 / runs as f64,
    })
}

/// Moves the calling thread onto the CPUs no task is pinned to, and back
/// to its previous CPUs when dropped.
struct ParentAffinity {
    previous: Option<Vec<usize>>,
}

impl ParentAffinity {
    fn away_from_tasks(opts: &MeasureOpts) -> ParentAffinity {
        let free = opts.cpus.get(opts.tasks..).unwrap_or(&[]);
        let previous = match crate::sys::cpus::allowed_cpus() {
            Ok(prev) if !free.is_empty() && sys::set_affinity(free).is_ok() => Some(prev),
            _ => None,
        };
        ParentAffinity { previous }
    }
}

impl Drop for ParentAffinity {
    fn drop(&mut self) {
        if let Some(prev) = &self.previous {
            // Best effort: failing to widen again only narrows later runs' parent.
            let _ = sys::set_affinity(prev);
        }
    }
}

fn check_failed(shm: &Shm) -> Result<()> {
    for i in 0..shm.tasks() {
        let info = &shm.slot(i).info;
        if info.state.load(Ordering::Acquire) == shm::FAILED {
            bail!("task {i} failed: {}", info.error());
        }
    }
    Ok(())
}

fn check_interrupted() -> Result<()> {
    if INTERRUPT.get().is_some_and(|f| f.load(Ordering::Relaxed)) {
        return Err(crate::error::Interrupted.into());
    }
    Ok(())
}

/// Waits until every task has prepared (or one failed).
fn wait_ready(shm: &Shm, check_alive: &mut dyn FnMut() -> Result<()>) -> Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        check_failed(shm)?;
        check_alive()?;
        check_interrupted()?;
        if (0..shm.tasks()).all(|i| shm.slot(i).info.state.load(Ordering::Acquire) == shm::READY) {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            bail!("tasks did not finish preparing within 300 s");
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// Sleeps until the monotonic clock reaches `deadline_ns`, waking every
/// 50 ms to notice a failed task or an interrupt.
fn sleep_until(
    deadline_ns: u64,
    shm: &Shm,
    check_alive: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    loop {
        check_failed(shm)?;
        check_alive()?;
        check_interrupted()?;
        let now = sys::monotonic_ns();
        if now >= deadline_ns {
            return Ok(());
        }
        std::thread::sleep(Duration::from_nanos((deadline_ns - now).min(50_000_000)));
    }
}

/// Waits until every task has completed at least one operation since `prev`.
fn wait_for_completion(
    shm: &Shm,
    prev: &Snapshot,
    check_alive: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    loop {
        check_failed(shm)?;
        check_alive()?;
        check_interrupted()?;
        if (0..shm.tasks()).all(|i| shm.slot(i).counter.read_timed().0 > prev.ops[i].0) {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            bail!("a task completed no operation in 600 s");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Turns two counter readings into a sample. Pure, so it is tested without
/// running anything.
pub fn compute_sample(
    prev: &Snapshot,
    cur: &Snapshot,
    sample_ms: u64,
    ticks_per_sec: f64,
    index: u32,
) -> Result<Sample> {
    let tasks = cur.ops.len();
    let elapsed_ns = cur.t_ns.saturating_sub(prev.t_ns).max(1);
    let mut per_task = Vec::with_capacity(tasks);
    let mut ops_total = 0u64;
    for (i, (&(o1, d1), &(o0, d0))) in cur.ops.iter().zip(&prev.ops).enumerate() {
        let ops = o1.saturating_sub(o0);
        ops_total += ops;
        if ops == 0 {
            bail!(
                "task {i} completed no operation in a {sample_ms} ms slice: one operation takes \
                 longer than that, or the task is starved; raise --sample-ms"
            );
        }
        // Timed (slow) workloads: between completions; others: the slice.
        let span_ns = if d1 > 0 && d0 > 0 && d1 > d0 {
            d1 - d0
        } else {
            elapsed_ns
        };
        per_task.push(ops as f64 * 1e9 / span_ns as f64);
    }
    let ops_per_sec: f64 = per_task.iter().sum();
    let nivcsw: u64 = cur
        .nivcsw
        .iter()
        .zip(&prev.nivcsw)
        .map(|(a, b)| a.saturating_sub(*b))
        .sum();
    let steal_ms = cur.steal_ticks.saturating_sub(prev.steal_ticks) as f64 * 1000.0 / ticks_per_sec;
    let mut flags = Vec::new();
    let elapsed_ms = elapsed_ns as f64 / 1e6;
    // More than one involuntary switch per 100 ms per task, at least two.
    if nivcsw as f64 > (tasks as f64 * elapsed_ms / 100.0).max(2.0) {
        flags.push("preempted".to_string());
    }
    // A slice that had to be stretched (by 50% or more) for every task to
    // complete an operation, though operations are short: starved tasks.
    let stretched = elapsed_ms > 1.5 * sample_ms as f64;
    let slow_ops = cur.ops.iter().any(|&(_, done)| done > 0);
    if stretched && !slow_ops {
        flags.push("starved".to_string());
    }
    if busy(prev, cur, elapsed_ns) {
        flags.push("busy".to_string());
    }
    if steal_ms > 0.01 * elapsed_ms * tasks as f64 {
        flags.push("steal".to_string());
    }
    if tasks > 1 {
        let max = per_task.iter().cloned().fold(0.0, f64::max);
        let min = per_task.iter().cloned().fold(f64::INFINITY, f64::min);
        if min < 0.5 * max {
            flags.push("imbalance".to_string());
        }
    }
    // Counting an event: the slice's count per operation, beside its time.
    let counted_per_op = (cur.counted.len() == tasks && prev.counted.len() == tasks).then(|| {
        let counted: u64 = cur
            .counted
            .iter()
            .zip(&prev.counted)
            .map(|(a, b)| a.saturating_sub(*b))
            .sum();
        counted as f64 / ops_total as f64
    });
    Ok(Sample {
        index,
        elapsed_ns,
        ops: ops_total,
        ops_per_sec,
        ns_per_op: tasks as f64 * 1e9 / ops_per_sec,
        counted_per_op,
        per_task_ops_per_sec: per_task,
        involuntary_ctxt_switches: nivcsw,
        steal_ms,
        flags,
    })
}

/// Fraction of a slice a task may wait on a run queue before its sample
/// is flagged `busy`.
pub const BUSY_WAIT_FRACTION: f64 = 0.05;

/// Waiting per time a task is put on its CPU that counts as a hand-off,
/// not competition, nanoseconds.
pub const HANDOFF_WAIT_NS: u64 = 3_000;

/// Whether another runnable thread competed for a task's CPU: some task
/// waited on a run queue (runnable, not running) for more than
/// [`BUSY_WAIT_FRACTION`] of the slice, not counting up to
/// [`HANDOFF_WAIT_NS`] per time it was put on the CPU.
///
/// On the 2-CPU development VM a CPU-bound task pinned alone to its CPU
/// waits well under 1% of a slice (the odd kernel thread or timer); one
/// sharing its CPU with a spinning thread waits 60-70%, and 25-35% when
/// another process merely ran beside it on the machine. 5% is far above
/// the quiet figure and still catches a competitor that takes a twentieth
/// of the CPU, which moves ops/s by about as much. A task that hands its
/// CPU to a partner and back (pipe_ctx's ping-pong on one CPU) waits a
/// moment at every wakeup while the partner goes to sleep: about 1.5 us
/// there, 17,000 times per 100 ms, a quarter of the slice with nothing else
/// running; the 3 us allowance per switch covers that, and with a spinning
/// thread on its CPU pipe_ctx still waits 10-15% of the slice beyond it.
fn busy(prev: &Snapshot, cur: &Snapshot, elapsed_ns: u64) -> bool {
    let limit = BUSY_WAIT_FRACTION * elapsed_ns as f64;
    cur.run_wait
        .iter()
        .zip(&prev.run_wait)
        .any(|(&(w1, n1), &(w0, n0))| {
            let handoffs = n1.saturating_sub(n0).saturating_mul(HANDOFF_WAIT_NS);
            w1.saturating_sub(w0).saturating_sub(handoffs) as f64 > limit
        })
}

#[cfg(test)]
mod tests;

/// For the tests of workloads and mechanisms: a brief, real measurement.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// 1 unpinned task, 1 warmup + 3 samples of `sample_ms`, temp dirs.
    pub(crate) fn brief_opts(mode: Mode, sample_ms: u64, params: Params) -> MeasureOpts {
        MeasureOpts {
            tasks: 1,
            mode,
            cpus: vec![],
            warmup: 1,
            samples: 3,
            sample_ms,
            scratch_root: std::env::temp_dir(),
            cache_dir: std::env::temp_dir().join("secperf-test-cache"),
            params,
            count: None,
        }
    }

    /// Measures `def` briefly with `given` parameters over its defaults,
    /// validated first as the CLI does; panics naming the workload.
    pub(crate) fn measure_briefly(
        def: &WorkloadDef,
        mode: Mode,
        sample_ms: u64,
        given: &Params,
    ) -> WorkloadResult {
        let params = def.params_with_defaults(given);
        (def.validate)(&params).unwrap_or_else(|e| panic!("{}: {e:#}", def.name));
        measure(def, &brief_opts(mode, sample_ms, params), &mut |_| {})
            .unwrap_or_else(|e| panic!("{}: {e:#}", def.name))
    }
}
