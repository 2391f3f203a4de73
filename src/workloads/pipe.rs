//! `pipe`: UnixBench's "Pipe Throughput" (`pipe`): one task writes 512
//! bytes into a pipe and reads them back from the other end, so one
//! operation is a write plus a read and nothing ever sleeps. Both calls
//! pass `rw_verify_area()` and so the `file_permission` LSM hook (SELinux's
//! AVC lookup on every call in the seed-001 era) with a little pipe copy
//! work. It is in the catalog because UnixBench's index, the figure the
//! SELinux AVC scalability post (avc-2004, docs/experiments.md) compares across kernels, is
//! built in part from this test; it is `eventfd` with a real data copy.

use std::os::fd::{AsRawFd, OwnedFd};

use anyhow::Result;

use super::eventfd::short_or_errno;
use super::pipe_ctx::pipe;
use super::{TaskCtx, Workload};
use crate::sys::SysError;

/// UnixBench's block size.
const BLOCK: usize = 512;

pub struct Pipe {
    read_end: OwnedFd,
    write_end: OwnedFd,
    buf: [u8; BLOCK],
}

impl Workload for Pipe {
    const NAME: &'static str = "pipe";
    const DESCRIPTION: &'static str =
        "write + read of 512 bytes through a private pipe (UnixBench pipe throughput)";
    const HOOKS: &'static [&'static str] = &["file_permission"];
    const SYSCALLS: &'static [&'static str] = &["write", "read"];

    fn prepare(_ctx: &TaskCtx) -> Result<Self> {
        let (read_end, write_end) = pipe()?;
        Ok(Pipe {
            read_end,
            write_end,
            buf: [b'x'; BLOCK],
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        // The pipe is empty at the start of every operation and holds at
        // least two pages, so neither call can block.
        let p = self.buf.as_mut_ptr().cast::<libc::c_void>();
        // SAFETY: p points at BLOCK valid bytes owned by self for both calls.
        let w = unsafe { libc::write(self.write_end.as_raw_fd(), p, BLOCK) };
        if w != BLOCK as isize {
            return Err(short_or_errno("write", w));
        }
        // SAFETY: as above.
        let r = unsafe { libc::read(self.read_end.as_raw_fd(), p, BLOCK) };
        if r != BLOCK as isize {
            return Err(short_or_errno("read", r));
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{Mode, Params};
    use crate::workloads::{WorkloadDef, def};

    /// Measures `d` briefly with one unpinned task (1 warmup + 3 samples of
    /// 50 ms) and returns the median ops/s; panics on failure.
    pub(crate) fn run_briefly(d: &WorkloadDef, mode: Mode, params: Params) -> f64 {
        let r = crate::runner::testing::measure_briefly(d, mode, 50, &params);
        r.ops_per_sec.median
    }

    #[test]
    fn pipe_runs_in_both_modes() {
        for mode in [Mode::Process, Mode::Thread] {
            let r = run_briefly(&def::<Pipe>(), mode, Params::new());
            assert!(r > 0.0, "{mode}: {r}");
        }
    }
}
