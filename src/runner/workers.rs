//! Starting and stopping the tasks of one measurement: forked processes
//! (each a fresh process, so per-process state such as a seccomp filter or
//! an audit context is decided after it starts) or threads. Either way each
//! task pins itself, prepares, and waits for the common release.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use super::shm::{self, Shm};
use crate::model::Mode;
use crate::sys;
use crate::workloads::{TaskCtx, WorkloadDef};

/// What a task needs besides its context.
pub struct TaskSpec<'a> {
    pub def: &'a WorkloadDef,
    pub cpu: Option<usize>,
    pub after_prepare: &'a super::AfterPrepare<'a>,
    pub ctx: TaskCtx<'a>,
}

/// Runs one task to completion in the current thread or process.
fn run_task(spec: &TaskSpec, shm: &Shm, after_prepare: &super::AfterPrepare) {
    let i = spec.ctx.task;
    let info = &shm.slot(i).info;
    info.tid.store(sys::gettid(), Ordering::Relaxed);
    if let Some((cpu, Err(e))) = spec.cpu.map(|c| (c, sys::pin_to_cpu(c))) {
        info.fail(&format!("pinning to CPU {cpu}: {e}"));
        return;
    }
    (spec.def.task)(&spec.ctx, &SlotHarness { shm, i }, after_prepare);
}

/// Task `i`'s view of the shared memory.
struct SlotHarness<'a> {
    shm: &'a Shm,
    i: usize,
}

impl crate::workloads::task::Harness for SlotHarness<'_> {
    fn counter(&self) -> &crate::workloads::task::Counter {
        &self.shm.slot(self.i).counter
    }

    fn stop_flag(&self) -> &std::sync::atomic::AtomicU32 {
        &self.shm.flags().stop
    }

    fn ready_and_wait(&self) {
        let info = &self.shm.slot(self.i).info;
        info.state.store(shm::READY, Ordering::Release);
        self.shm.wait_for_release();
    }

    fn done(&self) {
        let info = &self.shm.slot(self.i).info;
        info.state.store(shm::DONE, Ordering::Release);
    }

    fn fail(&self, msg: &str) {
        self.shm.slot(self.i).info.fail(msg);
    }
}

/// Forked worker processes; dropping this kills and reaps any still alive.
pub struct Processes {
    /// Task i's pid, or -1 once reaped.
    pids: Vec<libc::pid_t>,
}

impl Processes {
    /// Forks one process per spec. The caller must be single-threaded (the
    /// CLI is: no helper threads exist while measuring in process mode).
    pub fn spawn(specs: &[TaskSpec], shm: &Shm) -> Result<Processes> {
        let mut procs = Processes {
            pids: Vec::with_capacity(specs.len()),
        };
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        for spec in specs {
            // SAFETY: fork in a single-threaded process; the child only runs
            // the task and leaves with _exit, never returning into Rust code
            // that could observe duplicated state.
            let pid = unsafe { libc::fork() };
            if pid < 0 {
                return Err(sys::SysError::last("fork").into());
            }
            if pid == 0 {
                // SAFETY: prctl with integer arguments; getppid cannot fail.
                unsafe {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                }
                // The kernel clears the parent-death signal when a task's
                // euid, egid, fsuid or fsgid changes (the cred mechanism does
                // that in after_prepare): arm it again afterwards, or a
                // task of a SIGKILLed secperf would spin on forever.
                let rearmed = |ctx: &crate::workloads::TaskCtx| -> anyhow::Result<()> {
                    (spec.after_prepare)(ctx)?;
                    // Only when it was cleared, so that the calls made under
                    // a seccomp filter stay one prctl (a denied one leaves
                    // `sig` as it was: nothing to do).
                    let mut sig: libc::c_int = libc::SIGKILL;
                    // SAFETY: prctl writes one int into sig; the rest takes
                    // integer arguments; getppid cannot fail.
                    unsafe {
                        libc::prctl(libc::PR_GET_PDEATHSIG, &mut sig as *mut libc::c_int);
                        if sig == 0 {
                            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                            if libc::getppid() != parent {
                                libc::_exit(1);
                            }
                        }
                    }
                    Ok(())
                };
                run_task(spec, shm, &rearmed);
                let ok = shm.slot(spec.ctx.task).info.state.load(Ordering::Acquire) != shm::FAILED;
                // SAFETY: leaves the child without running the parent's
                // destructors or atexit handlers.
                unsafe { libc::_exit(if ok { 0 } else { 1 }) };
            }
            procs.pids.push(pid);
        }
        Ok(procs)
    }

    /// Fails if a task died without reporting (a crash, a kill).
    pub fn check_alive(&mut self, shm: &Shm) -> Result<()> {
        for i in 0..self.pids.len() {
            let pid = self.pids[i];
            if pid <= 0 {
                continue;
            }
            let mut status = 0;
            // SAFETY: pid is our unreaped child; status is a valid out pointer.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                self.pids[i] = -1;
                let state = shm.slot(i).info.state.load(Ordering::Acquire);
                if state != shm::DONE && state != shm::FAILED {
                    bail!(
                        "task {i} (pid {pid}) died unexpectedly ({})",
                        describe_status(status)
                    );
                }
            }
        }
        Ok(())
    }

    /// Waits for every task to exit, killing those that take longer than
    /// `grace` after the stop request.
    pub fn join(mut self, grace: Duration) {
        let deadline = Instant::now() + grace;
        while self.pids.iter().any(|&p| p > 0) && Instant::now() < deadline {
            for pid in self.pids.iter_mut().filter(|p| **p > 0) {
                // SAFETY: as in check_alive.
                if unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) } == *pid {
                    *pid = -1;
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Drop kills the rest.
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        for &pid in self.pids.iter().filter(|&&p| p > 0) {
            // SAFETY: pid is our unreaped child, so it cannot be reused yet.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

fn describe_status(status: i32) -> String {
    if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("exit status {}", libc::WEXITSTATUS(status))
    }
}

/// Runs `body` while the tasks run, in the chosen mode; stops and collects
/// the tasks afterwards whatever `body` returns. With `kill_at_stop`,
/// process tasks are killed once `body` succeeded instead of being waited
/// for ([`crate::workloads::Workload::KILL_AT_STOP`]).
pub fn with_tasks<R>(
    mode: Mode,
    kill_at_stop: bool,
    specs: &[TaskSpec],
    shm: &Shm,
    body: impl FnOnce(&mut dyn FnMut() -> Result<()>) -> Result<R>,
) -> Result<R> {
    match mode {
        Mode::Process => {
            let mut procs = Processes::spawn(specs, shm)?;
            let result = body(&mut || procs.check_alive(shm));
            shm.request_stop();
            // A task that may be killed is not waited for: its operation
            // in progress counts for nothing (Drop kills and reaps it).
            if !(kill_at_stop && result.is_ok()) {
                procs.join(Duration::from_secs(10));
            }
            result
        }
        Mode::Thread => std::thread::scope(|s| {
            for spec in specs {
                s.spawn(move || run_task(spec, shm, spec.after_prepare));
            }
            let result = body(&mut || Ok(()));
            shm.request_stop();
            result
        }),
    }
}
