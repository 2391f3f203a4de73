//! `getppid`: the null system call. It reaches no LSM hook, only the
//! syscall entry and exit paths (seccomp filters, audit syscall context,
//! mitigations), so it is the floor every other figure is read against.

use anyhow::Result;

use super::{TaskCtx, Workload};
use crate::sys::SysError;

pub struct Getppid;

impl Workload for Getppid {
    const NAME: &'static str = "getppid";
    const DESCRIPTION: &'static str = "getppid(): the null syscall, entry/exit cost only";
    const HOOKS: &'static [&'static str] = &["syscall entry/exit (seccomp, audit)"];
    const SYSCALLS: &'static [&'static str] = &["getppid"];

    fn prepare(_ctx: &TaskCtx) -> Result<Self> {
        Ok(Getppid)
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        // SAFETY: getppid takes no arguments.
        let ppid = unsafe { libc::getppid() };
        if ppid < 0 {
            return Err(SysError::last("getppid"));
        }
        Ok(())
    }
}
