//! `access2`: access(R_OK) by every task on one shared file (will-it-scale
//! access2, the access-2023 reference experiment). With many tasks the shared dentry
//! and inode reference counts become the contention point, and any
//! credential allocation access() does is paid on top.

use std::ffi::CString;
use std::os::fd::OwnedFd;

use anyhow::Result;

use super::access1::access_r_ok;
use super::util::{make_nested_file, open_dir};
use super::{Setup, SetupCtx, TaskCtx, Workload};
use crate::sys::{SysError, cstring};

pub struct Access2 {
    dir: OwnedFd,
    rel: CString,
}

impl Workload for Access2 {
    const NAME: &'static str = "access2";
    const DESCRIPTION: &'static str = "access(R_OK) by all tasks on one shared file";
    const HOOKS: &'static [&'static str] = &[
        "inode_permission",
        "cred_prepare (when credentials are overridden)",
    ];
    const SYSCALLS: &'static [&'static str] = &["faccessat"];

    fn setup(ctx: &SetupCtx) -> Result<Setup> {
        let shared = ctx.scratch.join("shared");
        make_nested_file(&shared, 1)?;
        Ok(Setup {
            data_dir: Some(shared),
            ..Setup::default()
        })
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let shared = ctx
            .setup
            .data_dir
            .as_deref()
            .ok_or_else(|| anyhow::anyhow!("access2: setup did not run"))?;
        Ok(Access2 {
            dir: open_dir(shared)?,
            rel: cstring("file".as_ref()),
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        access_r_ok(&self.dir, &self.rel)
    }
}
