//! `write`: write() of 1 byte to a per-task descriptor, the parallel write()
//! test of the avc-2004 reference experiment (where SELinux's global AVC lock made
//! it collapse beyond one CPU). Every write passes `rw_verify_area()` and
//! the `file_permission` hook. `target=file` (default) appends to a regular
//! file, so the file grows by one byte per operation (tens of MB per
//! run); `target=null` writes to /dev/null and isolates the hook path from
//! the filesystem.

use std::os::fd::{AsRawFd, OwnedFd};

use anyhow::Result;

use super::eventfd::short_or_errno;
use super::util::{open_file, task_dir};
use super::{ParamDef, TaskCtx, Workload};
use crate::error::UsageError;
use crate::model::Params;
use crate::sys::SysError;

pub struct Write {
    fd: OwnedFd,
}

impl Workload for Write {
    const NAME: &'static str = "write";
    const DESCRIPTION: &'static str = "write() of 1 byte to a per-task file descriptor";
    const HOOKS: &'static [&'static str] = &["file_permission"];
    const SYSCALLS: &'static [&'static str] = &["write"];
    const PARAMS: &'static [ParamDef] = &[ParamDef {
        name: "target",
        default: "file",
        help: "file: a per-task regular file in the scratch directory; null: /dev/null",
    }];

    fn validate(params: &Params) -> Result<()> {
        match params.get("target").map(String::as_str) {
            Some("file" | "null") | None => Ok(()),
            Some(other) => Err(UsageError::new(format!(
                "workload write: target={other} is not valid (valid: file, null)"
            ))
            .into()),
        }
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let fd = match ctx.params.get("target").map(String::as_str) {
            Some("file") | None => {
                let path = task_dir(ctx.scratch, ctx.task)?.join("write.out");
                open_file(&path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC)?
            }
            Some("null") => open_file("/dev/null".as_ref(), libc::O_WRONLY)?,
            Some(other) => {
                return Err(UsageError::new(format!(
                    "workload write: target={other} is not valid (valid: file, null)"
                ))
                .into());
            }
        };
        Ok(Write { fd })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        let byte = b'x';
        // SAFETY: one valid byte at &byte.
        let w = unsafe { libc::write(self.fd.as_raw_fd(), (&raw const byte).cast(), 1) };
        if w != 1 {
            return Err(short_or_errno("write", w));
        }
        Ok(())
    }
}
