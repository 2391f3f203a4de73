//! `access1`: access(R_OK) on a per-task file (will-it-scale access1,
//! the access-2023 reference experiment). access() checks with the real uid, so when
//! fsuid or the capability sets differ the kernel must build and override
//! credentials (`prepare_creds`, `cred_prepare`); otherwise it is a path
//! walk plus `inode_permission`.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

use anyhow::Result;

use super::util::{make_nested_file, open_dir, task_dir};
use super::{TaskCtx, Workload};
use crate::sys::SysError;

pub struct Access1 {
    dir: OwnedFd,
    rel: CString,
}

impl Workload for Access1 {
    const NAME: &'static str = "access1";
    const DESCRIPTION: &'static str = "access(R_OK) on a per-task file";
    const HOOKS: &'static [&'static str] = &[
        "inode_permission",
        "cred_prepare (when credentials are overridden)",
    ];
    const SYSCALLS: &'static [&'static str] = &["faccessat"];

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let base = task_dir(ctx.scratch, ctx.task)?;
        let rel = make_nested_file(&base, 1)?;
        Ok(Access1 {
            dir: open_dir(&base)?,
            rel,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        access_r_ok(&self.dir, &self.rel)
    }
}

/// The faccessat syscall (dir, rel, R_OK): access(2) relative to a
/// directory, the same real-id path (`do_faccessat` without AT_EACCESS).
/// Called directly because glibc's faccessat() goes through faccessat2.
#[inline(always)]
pub(crate) fn access_r_ok(dir: &OwnedFd, rel: &CString) -> Result<(), SysError> {
    crate::sys::calls::faccessat(dir.as_raw_fd(), rel, libc::R_OK)
}
