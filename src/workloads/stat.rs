//! `stat`: fstatat of a per-task file at a configurable path depth. The path
//! walk checks each component (`inode_permission`) and the stat itself asks
//! `inode_getattr`: path-based LSMs (Landlock, AppArmor) and SELinux both
//! see it, with no file opened.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

use anyhow::Result;

use super::open::DEPTH;
use super::util::{make_nested_file, open_dir, task_dir};
use super::{ParamDef, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::SysError;

pub struct Stat {
    dir: OwnedFd,
    rel: CString,
    st: libc::stat,
}

impl Workload for Stat {
    const NAME: &'static str = "stat";
    const DESCRIPTION: &'static str = "fstatat() of a per-task file at a path depth";
    const HOOKS: &'static [&'static str] = &["inode_permission", "inode_getattr"];
    const SYSCALLS: &'static [&'static str] = &["newfstatat"];
    const PARAMS: &'static [ParamDef] = &[DEPTH];

    fn validate(params: &Params) -> Result<()> {
        super::open::check_depth(params, Self::NAME)
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let depth = param_u64(ctx.params, Self::NAME, "depth")?;
        let base = task_dir(ctx.scratch, ctx.task)?;
        let rel = make_nested_file(&base, depth)?;
        // SAFETY: libc::stat is plain data; all-zero is a valid value.
        let st = unsafe { std::mem::zeroed() };
        Ok(Stat {
            dir: open_dir(&base)?,
            rel,
            st,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        // SAFETY: rel is NUL-terminated, st is a valid stat buffer.
        let r = unsafe { libc::fstatat(self.dir.as_raw_fd(), self.rel.as_ptr(), &mut self.st, 0) };
        if r < 0 {
            return Err(SysError::last("fstatat"));
        }
        Ok(())
    }
}
