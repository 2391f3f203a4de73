//! `spawn`: UnixBench's "Process Creation" test. One operation is a fork()
//! whose child leaves at once with `_exit(0)`, plus the parent's waitpid()
//! for that child, which checks that it exited with status 0.
//!
//! Creating a task is where the kernel allocates and copies every piece of
//! per-task security state: the LSM task blob (`task_alloc`), a new set of
//! credentials (`cred_prepare`, via `copy_creds`), the audit context
//! (`audit_alloc`, a full context when audit rules exist), the seccomp
//! filter reference; exiting and reaping free them again (`task_free`,
//! `cred_free`). It is in the catalog because the 2004 SELinux patch
//! series (avc-2004, docs/experiments.md) reported UnixBench, whose index leans on this test,
//! and because process creation is what a shell, make or a CI runner
//! does all day.
//!
//! The cost of fork() grows with the task's address space (page tables
//! are copied): in both modes that is secperf's own, a few MB. In thread
//! mode the child is forked from a multi-threaded process, which is safe
//! here because it only calls `_exit`.

use anyhow::Result;

use super::child::{exited_zero, wait_child};
use super::{TaskCtx, Workload};
use crate::sys::SysError;

pub struct Spawn;

impl Workload for Spawn {
    const NAME: &'static str = "spawn";
    const DESCRIPTION: &'static str =
        "fork() of a child that _exit(0)s at once + waitpid (UnixBench Process Creation)";
    const HOOKS: &'static [&'static str] = &[
        "task_alloc",
        "cred_prepare (copy_creds)",
        "audit_alloc (per-task audit context)",
        "task_free",
        "cred_free",
    ];
    const SYSCALLS: &'static [&'static str] = &["clone", "wait4", "exit_group"];

    fn prepare(_ctx: &TaskCtx) -> Result<Self> {
        Ok(Spawn)
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        // SAFETY: the child only calls _exit, which is async-signal-safe,
        // so forking from a multi-threaded process (thread mode) is sound.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(SysError::last("fork"));
        }
        if pid == 0 {
            // SAFETY: leaves the child at once, running no destructors.
            unsafe { libc::_exit(0) };
        }
        let status = wait_child(pid)?;
        if !exited_zero(status) {
            return Err(SysError {
                call: "wait4 (child did not exit with status 0)",
                errno: libc::EIO,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Params};
    use crate::workloads::def;

    #[test]
    fn spawn_measures_in_both_modes() {
        for mode in [Mode::Process, Mode::Thread] {
            let r =
                crate::runner::testing::measure_briefly(&def::<Spawn>(), mode, 50, &Params::new());
            assert!(r.ops_per_sec.median > 0.0, "{mode:?}");
        }
    }
}
