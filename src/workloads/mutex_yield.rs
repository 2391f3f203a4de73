//! `mutex_yield`: lock a private mutex, sched_yield(), unlock: the
//! sysbench-threads benchmark of the audit-2017 reference experiment. The mutex is
//! uncontended (no syscall), so the cost is one cheap syscall plus the
//! scheduler: exactly where audit's per-syscall context (timestamps at
//! entry, work at exit) showed up as an 11% slowdown.

use std::sync::Mutex;

use anyhow::Result;

use super::{TaskCtx, Workload};
use crate::sys::SysError;

pub struct MutexYield {
    lock: Mutex<u64>,
}

impl Workload for MutexYield {
    const NAME: &'static str = "mutex_yield";
    const DESCRIPTION: &'static str =
        "lock a private mutex, sched_yield(), unlock (sysbench threads)";
    const HOOKS: &'static [&'static str] = &["syscall entry/exit (audit, seccomp)", "scheduler"];
    const SYSCALLS: &'static [&'static str] = &["sched_yield"];

    fn prepare(_ctx: &TaskCtx) -> Result<Self> {
        Ok(MutexYield {
            lock: Mutex::new(0),
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        // A poisoned lock cannot happen: nothing panics while holding it.
        let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: sched_yield takes no arguments.
        let r = unsafe { libc::sched_yield() };
        *guard += 1;
        drop(guard);
        if r < 0 {
            return Err(SysError::last("sched_yield"));
        }
        Ok(())
    }
}
