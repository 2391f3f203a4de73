//! `open`: openat + close of a per-task file at a configurable path depth.
//! Each path component is looked up with a permission check
//! (`inode_permission`), then the open reaches `file_open` and the file
//! security blob is allocated and freed. Landlock and SELinux pay per
//! component and per open, which is why the depth is a parameter.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

use anyhow::Result;

use super::util::{close, make_nested_file, open_dir, task_dir};
use super::{ParamDef, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::SysError;

pub struct Open {
    dir: OwnedFd,
    rel: CString,
}

pub(crate) const DEPTH: ParamDef = ParamDef {
    name: "depth",
    default: "4",
    help: "path components from the task's directory to the file (1 = the file itself)",
};

/// Path depths a path can hold: "dN/" components stay far below PATH_MAX.
pub(crate) fn check_depth(params: &Params, workload: &str) -> Result<()> {
    super::check_range(params, workload, "depth", 1..=256)
}

impl Workload for Open {
    const NAME: &'static str = "open";
    const DESCRIPTION: &'static str = "openat(O_RDONLY) + close of a per-task file at a path depth";
    const HOOKS: &'static [&'static str] = &[
        "inode_permission",
        "file_open",
        "file_alloc_security",
        "file_free_security",
    ];
    const SYSCALLS: &'static [&'static str] = &["openat", "close"];
    const PARAMS: &'static [ParamDef] = &[DEPTH];

    fn validate(params: &Params) -> Result<()> {
        check_depth(params, Self::NAME)
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let depth = param_u64(ctx.params, Self::NAME, "depth")?;
        let base = task_dir(ctx.scratch, ctx.task)?;
        let rel = make_nested_file(&base, depth)?;
        Ok(Open {
            dir: open_dir(&base)?,
            rel,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        // SAFETY: rel is a valid NUL-terminated relative path, dir a valid fd.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                self.rel.as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(SysError::last("openat"));
        }
        close(fd)
    }
}
