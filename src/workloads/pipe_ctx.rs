//! `pipe_ctx`: UnixBench's "Pipe-based Context Switching" (`context1`). The
//! task and a partner process ping-pong a 4-byte token over two pipes; one
//! operation is one round trip: the task writes, the partner reads and
//! writes back, the task reads. Every read and write passes
//! `rw_verify_area()` and so the `file_permission` LSM hook, and each round
//! trip is two sleeps and two wakeups, so the scheduler (and whatever a
//! mechanism adds to a context switch) is in the path too. It is in the
//! catalog because UnixBench's index, which the SELinux AVC scalability
//! post (avc-2004, docs/experiments.md) reports, weights this test alongside pipe throughput.
//!
//! The partner is forked in `prepare`, after the task pinned itself, and
//! inherits that pinning: both ends of the ping-pong share one CPU, so the
//! figure is the cost of a same-CPU switch and a partner never takes
//! another task's CPU. (UnixBench does not pin; run with `--no-pin` for
//! that.) A worker-scope mechanism (a seccomp filter, a per-task audit
//! context) is applied after `prepare`, so it covers the task's calls but
//! not the partner's. The partner exits when it reads end-of-file (the
//! task's end closed), when the forking thread dies, or when it is killed
//! and reaped on drop; if it dies first, the task's read sees end-of-file
//! and fails with EIO rather than blocking.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use anyhow::{Context, Result};

use super::eventfd::short_or_errno;
use super::{TaskCtx, Workload};
use crate::sys::{SysError, check_int};

const TOKEN: usize = 4;

pub struct PipeCtx {
    /// Write end of the pipe the partner reads.
    to_partner: OwnedFd,
    /// Read end of the pipe the partner writes back into.
    from_partner: OwnedFd,
    token: [u8; TOKEN],
    _partner: ChildProc,
}

impl Workload for PipeCtx {
    const NAME: &'static str = "pipe_ctx";
    const DESCRIPTION: &'static str =
        "4-byte token round trip to a partner process over two pipes (UnixBench context1)";
    const HOOKS: &'static [&'static str] = &["file_permission", "scheduler (context switch)"];
    const SYSCALLS: &'static [&'static str] = &["write", "read"];

    fn prepare(_ctx: &TaskCtx) -> Result<Self> {
        let (down_r, down_w) = pipe()?;
        let (up_r, up_w) = pipe()?;
        let (r, w) = (down_r.as_raw_fd(), up_w.as_raw_fd());
        let partner = ChildProc::spawn(&[r, w], None, move || echo_loop(r, w))
            .context("forking the pipe_ctx partner")?;
        // Only the partner holds these ends now: its death is our EOF/EPIPE.
        drop(down_r);
        drop(up_w);
        let mut w = PipeCtx {
            to_partner: down_w,
            from_partner: up_r,
            token: *b"ping",
            _partner: partner,
        };
        w.op().context("first round trip with the partner")?;
        Ok(w)
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        let p = self.token.as_mut_ptr().cast::<libc::c_void>();
        // SAFETY: p points at TOKEN valid bytes owned by self for both calls.
        let w = unsafe { libc::write(self.to_partner.as_raw_fd(), p, TOKEN) };
        if w != TOKEN as isize {
            return Err(short_or_errno("write", w));
        }
        // SAFETY: as above.
        let r = unsafe { libc::read(self.from_partner.as_raw_fd(), p, TOKEN) };
        if r != TOKEN as isize {
            return Err(short_or_errno("read", r));
        }
        Ok(())
    }
}

/// The partner: echo every token back until end-of-file or an error. Runs
/// in a forked child, so it only makes raw system calls.
fn echo_loop(r: RawFd, w: RawFd) -> i32 {
    let mut buf = [0u8; TOKEN];
    loop {
        // SAFETY: buf is TOKEN writable bytes on this stack.
        let n = unsafe { libc::read(r, buf.as_mut_ptr().cast(), TOKEN) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        if n <= 0 {
            return 0;
        }
        // SAFETY: buf holds n (<= TOKEN) valid bytes.
        let m = unsafe { libc::write(w, buf.as_ptr().cast(), n as usize) };
        if m != n {
            return 1;
        }
    }
}

/// The calling thread's errno, without allocating (safe after fork).
pub(crate) fn errno() -> i32 {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// A pipe (both ends close-on-exec) as (read end, write end).
pub(crate) fn pipe() -> Result<(OwnedFd, OwnedFd), SysError> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    check_int("pipe2", unsafe {
        libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC)
    })?;
    // SAFETY: both descriptors were just created and are owned only here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A helper process forked by a task (a ping-pong partner, a hackbench
/// receiver): killed with SIGKILL and reaped when dropped.
pub(crate) struct ChildProc {
    pid: libc::pid_t,
}

impl ChildProc {
    /// Forks a child that keeps only the descriptors in `keep` (everything
    /// else from 3 up is closed, so it holds no other task's pipe ends and
    /// no lock of secperf's), ignores SIGINT and SIGTERM (it ends at
    /// end-of-file, when the forking thread dies, or when dropped), moves
    /// to `cpus` if given, runs `body` and exits with its return value.
    ///
    /// The caller may be one thread of many (thread mode), so `body` must
    /// only make async-signal-safe calls: no allocation, no locks.
    pub(crate) fn spawn(
        keep: &[RawFd],
        cpus: Option<&libc::cpu_set_t>,
        body: impl FnOnce() -> i32,
    ) -> Result<ChildProc, SysError> {
        let mut keep: Vec<libc::c_uint> = keep.iter().map(|&fd| fd as libc::c_uint).collect();
        keep.sort_unstable();
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child only makes raw system calls (prctl, signal,
        // close_range, sched_setaffinity, then `body`'s read/write) and
        // leaves with _exit, never returning into code that could observe
        // the other threads' state it did not inherit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(SysError::last("fork"));
        }
        if pid == 0 {
            // SAFETY: plain integer arguments; `keep` was built before fork
            // and is only read; `cpus` points at a valid cpu_set_t.
            unsafe {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0
                    || libc::getppid() != parent
                {
                    libc::_exit(1);
                }
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
                let mut lo: libc::c_uint = 3;
                for &fd in &keep {
                    if fd >= lo {
                        if fd > lo {
                            libc::close_range(lo, fd - 1, 0);
                        }
                        lo = fd + 1;
                    }
                }
                libc::close_range(lo, libc::c_uint::MAX, 0);
                if let Some(set) = cpus {
                    // Best effort: a child left on the task's CPU still works.
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set);
                }
                libc::_exit(body());
            }
        }
        Ok(ChildProc { pid })
    }
}

#[cfg(test)]
impl ChildProc {
    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }
}

impl Drop for ChildProc {
    fn drop(&mut self) {
        // SAFETY: pid is our unreaped child, so it cannot have been reused.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            while libc::waitpid(self.pid, std::ptr::null_mut(), 0) < 0 && errno() == libc::EINTR {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Params};
    use crate::workloads::def;
    use crate::workloads::pipe::tests::run_briefly;

    #[test]
    fn pipe_ctx_runs_in_both_modes() {
        for mode in [Mode::Process, Mode::Thread] {
            let r = run_briefly(&def::<PipeCtx>(), mode, Params::new());
            assert!(r > 0.0, "{mode}: {r}");
        }
    }

    #[test]
    fn dead_partner_fails_instead_of_hanging() {
        let ctx_scratch = std::env::temp_dir();
        let params = Params::new();
        let setup = crate::workloads::Setup::default();
        let ctx = TaskCtx {
            task: 0,
            tasks: 1,
            scratch: &ctx_scratch,
            params: &params,
            setup: &setup,
            stop: None,
        };
        let mut w = PipeCtx::prepare(&ctx).unwrap();
        // SAFETY: the partner's pid is our child; killing it is the test.
        unsafe { libc::kill(w._partner.pid, libc::SIGKILL) };
        let e = w.op().unwrap_err();
        assert!(
            (e.call == "read" && e.errno == libc::EIO)
                || (e.call == "write" && e.errno == libc::EPIPE),
            "{e}"
        );
    }
}
