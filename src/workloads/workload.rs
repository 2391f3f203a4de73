//! The contract every workload keeps (will-it-scale's): a workload
//! prepares per-task state outside the timed loop, then does one checked
//! operation per call of [`Workload::op`]; the harness counts and times.
//! [`WorkloadDef`] is a workload as the catalog holds it ([`def`]).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::ParamDef;
use super::task;
use crate::model::Params;
use crate::sys::SysError;

/// What the whole measurement shares, prepared once in the parent before
/// any task starts (a file tree, a shared file).
#[derive(Debug, Clone)]
pub struct SetupCtx<'a> {
    /// Scratch directory for this measurement, removed afterwards.
    pub scratch: &'a Path,
    /// Directory kept across runs for expensive fixtures (the walk tree).
    pub cache: &'a Path,
    pub params: &'a Params,
    pub tasks: usize,
}

/// What `setup` tells the harness.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// For workloads whose operation does many smaller things: how many
    /// (e.g. directory entries per tree walk), reported as a second rate.
    pub units_per_op: Option<u64>,
    /// A directory prepared for the tasks (e.g. the tree to walk).
    pub data_dir: Option<PathBuf>,
}

/// What one task knows when it prepares.
#[derive(Debug, Clone)]
pub struct TaskCtx<'a> {
    /// 0-based task index.
    pub task: usize,
    pub tasks: usize,
    pub scratch: &'a Path,
    pub params: &'a Params,
    pub setup: &'a Setup,
    /// The measurement's stop flag (non-zero once the last slice was
    /// read), for a workload whose operation runs in another process and
    /// can be cut short at the stop (`service`); None outside the runner.
    pub stop: Option<&'a std::sync::atomic::AtomicU32>,
}

/// One workload: per-task state plus one timed operation.
pub trait Workload: Sized {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// Security hooks (LSM hooks, seccomp, audit paths) the operation reaches.
    const HOOKS: &'static [&'static str];
    /// System calls one operation makes (names as in `man 2`, x86_64
    /// spelling: `newfstatat`), for mechanisms that filter on them (an
    /// audit rule on the workload's own syscall).
    const SYSCALLS: &'static [&'static str];
    const PARAMS: &'static [ParamDef] = &[];
    /// The unit of [`Setup::units_per_op`], plural ("entries").
    const UNIT: Option<&'static str> = None;
    /// Whether `-w all` includes it (false for workloads that need a value
    /// from the user, such as the command to run).
    const IN_ALL: bool = true;
    /// Whether [`Workload::child_cpu_ns`] reports CPU time per operation.
    const CHILD_CPU: bool = false;
    /// Where that CPU time is a measure of its own beside the workload's
    /// time in a comparison, the name it goes under (`server` for
    /// `service`: `server.cpu_ms_per_run`, ...). None: shown as child CPU.
    const CHILD_CPU_BESIDE: Option<&'static str> = None;
    /// Operations long enough (milliseconds) that counting whole operations
    /// in a slice would quantise the rate: the harness then also records
    /// when each operation completed, and measures between completions.
    const SLOW: bool = false;
    /// The task holds nothing to clean up (no child process, no state
    /// outside its memory and the scratch directory): once the last slice
    /// is read, a process task is killed instead of being left to finish
    /// the operation in progress. Saves up to one operation per half for
    /// workloads whose operation is long (a 100 ms tree walk).
    const KILL_AT_STOP: bool = false;
    /// The threads `--profile` samples instead of the task's own, given
    /// the task's pid (process mode), with the processes they start from
    /// then on: for a workload whose work runs in processes the task
    /// started (`service`'s server). None: the task itself.
    const OBSERVED: Option<fn(libc::pid_t) -> Vec<i32>> = None;

    /// Checks parameter values before anything runs (a usage error names
    /// the valid range). Numbers are already known to parse.
    fn validate(_params: &Params) -> Result<()> {
        Ok(())
    }

    /// Shared preparation, once per measurement, in the parent.
    fn setup(_ctx: &SetupCtx) -> Result<Setup> {
        Ok(Setup::default())
    }

    /// Per-task preparation, outside the timed loop.
    fn prepare(ctx: &TaskCtx) -> Result<Self>;

    /// After the worker-scope mechanism was applied to the task, before it
    /// reports ready: where a workload starts what must run under the
    /// mechanism (`service`'s server). Default: nothing.
    fn after_mechanism(&mut self) -> Result<()> {
        Ok(())
    }

    /// One operation. Checks every call; the first failure ends the run.
    fn op(&mut self) -> Result<(), SysError>;

    /// After [`Workload::op`] failed: a fuller account than the call and
    /// errno, when the workload has one (a command's exit status and the
    /// tail of its stderr). Default: none.
    fn failure_detail(&self) -> Option<String> {
        None
    }

    /// Slow workloads that start processes: the user and system CPU time,
    /// in ns, of every process they started and waited for so far
    /// (`wait4`'s rusage), published with each completion. Default: none.
    #[inline(always)]
    fn child_cpu_ns(&self) -> Option<(u64, u64)> {
        None
    }
}

/// A workload as the rest of secperf sees it: a row of the table.
#[derive(Clone, Copy)]
pub struct WorkloadDef {
    pub name: &'static str,
    pub description: &'static str,
    pub hooks: &'static [&'static str],
    pub syscalls: &'static [&'static str],
    pub params: &'static [ParamDef],
    pub unit: Option<&'static str>,
    pub slow: bool,
    pub kill_at_stop: bool,
    pub in_all: bool,
    pub child_cpu: bool,
    pub child_cpu_beside: Option<&'static str>,
    pub observed: Option<fn(libc::pid_t) -> Vec<i32>>,
    pub validate: fn(&Params) -> Result<()>,
    pub setup: fn(&SetupCtx) -> Result<Setup>,
    /// The monomorphised task body (prepare, wait, loop, clean up).
    pub task: task::TaskFn,
}

impl std::fmt::Debug for WorkloadDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadDef")
            .field("name", &self.name)
            .finish()
    }
}

pub const fn def<W: Workload>() -> WorkloadDef {
    WorkloadDef {
        name: W::NAME,
        description: W::DESCRIPTION,
        hooks: W::HOOKS,
        syscalls: W::SYSCALLS,
        params: W::PARAMS,
        unit: W::UNIT,
        slow: W::SLOW,
        kill_at_stop: W::KILL_AT_STOP,
        in_all: W::IN_ALL,
        child_cpu: W::CHILD_CPU,
        child_cpu_beside: W::CHILD_CPU_BESIDE,
        observed: W::OBSERVED,
        validate: W::validate,
        setup: W::setup,
        task: task::task_body::<W>,
    }
}
