//! Forked children, written once: the start of a child that execs a
//! program (`command`'s runs, `service`'s server and its clients), and the
//! reaping of a child with its wait status and CPU time (`spawn`, `exec`,
//! `command`).
//!
//! Everything a child needs is prepared before the fork; between fork and
//! execve it makes only async-signal-safe calls (prctl, getppid, setpgid,
//! sched_setaffinity, open, dup2, execv, write, _exit), so forking from a
//! multi-threaded process (thread mode) is sound.

use std::ffi::{CStr, c_char};

use crate::sys::SysError;

/// Where a child's standard output or error goes.
#[derive(Clone, Copy)]
pub(crate) enum Output<'a> {
    /// Left as the parent's.
    Inherit,
    /// `/dev/null`.
    Null,
    /// A file, created or emptied.
    Truncate(&'a CStr),
    /// A file, created or appended to.
    Append(&'a CStr),
}

/// A child to exec: all of it prepared before the fork.
pub(crate) struct Exec<'a> {
    /// The program's absolute path (execv takes no `PATH` search).
    pub program: &'a CStr,
    /// A NULL-terminated array of NUL-terminated strings, program first.
    pub argv: *const *const c_char,
    /// The process that forks it: the child leaves with 127 if it was
    /// orphaned before its death signal was set.
    pub parent: libc::pid_t,
    /// A process group of its own (a server, stopped as a group).
    pub own_group: bool,
    /// The CPUs it may run on (the task's own pinning undone), or as
    /// inherited.
    pub cpus: Option<&'a libc::cpu_set_t>,
    pub stdout: Output<'a>,
    pub stderr: Output<'a>,
    /// Written to its stderr when execv fails ("secperf: execve of the
    /// command failed\n").
    pub failed: &'a [u8],
}

impl Exec<'_> {
    /// In the child: dies with its parent, stdin from `/dev/null`, the
    /// outputs redirected, then the program; 127 if execv fails.
    ///
    /// # Safety
    /// Only in the child of a fork, with `argv` as documented.
    pub(crate) unsafe fn run(&self) -> ! {
        // SAFETY: (the whole body) async-signal-safe calls on data prepared
        // before the fork; the child never returns.
        unsafe {
            if self.own_group {
                libc::setpgid(0, 0);
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != self.parent {
                libc::_exit(127);
            }
            if let Some(cpus) = self.cpus {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), cpus);
            }
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
            if null >= 0 {
                libc::dup2(null, 0);
            }
            redirect(self.stdout, null, 1);
            redirect(self.stderr, null, 2);
            libc::execv(self.program.as_ptr(), self.argv);
            libc::write(2, self.failed.as_ptr().cast(), self.failed.len());
            libc::_exit(127)
        }
    }
}

/// Points `fd` at `to` (`null`: an open `/dev/null`, or negative).
///
/// # Safety
/// Async-signal-safe; for the child of a fork.
unsafe fn redirect(to: Output, null: libc::c_int, fd: libc::c_int) {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC;
    // SAFETY: open and dup2 on NUL-terminated paths prepared before the
    // fork; a failure leaves the descriptor as inherited.
    unsafe {
        let from = match to {
            Output::Inherit => return,
            Output::Null => null,
            Output::Truncate(path) => libc::open(path.as_ptr(), flags | libc::O_TRUNC, 0o600),
            Output::Append(path) => libc::open(path.as_ptr(), flags | libc::O_APPEND, 0o600),
        };
        if from >= 0 {
            libc::dup2(from, fd);
        }
    }
}

/// Waits for child `pid` and returns its wait status. Retries on EINTR
/// (a signal handler ran), so the child is always reaped.
#[inline(always)]
pub(crate) fn wait_child(pid: libc::pid_t) -> Result<libc::c_int, SysError> {
    reap(pid, std::ptr::null_mut())
}

/// As [`wait_child`], adding the child's user and system CPU time in ns.
#[inline(always)]
pub(crate) fn wait_child_cpu(pid: libc::pid_t) -> Result<(libc::c_int, u64, u64), SysError> {
    // SAFETY: rusage is plain old data, written by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let status = reap(pid, &mut usage)?;
    Ok((
        status,
        timeval_ns(usage.ru_utime),
        timeval_ns(usage.ru_stime),
    ))
}

#[inline(always)]
fn reap(pid: libc::pid_t, usage: *mut libc::rusage) -> Result<libc::c_int, SysError> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: pid is our unreaped child; status is a valid out pointer
        // and usage one or null.
        let r = unsafe { libc::wait4(pid, &mut status, 0, usage) };
        if r == pid {
            return Ok(status);
        }
        let e = SysError::last("wait4");
        if r >= 0 || e.errno != libc::EINTR {
            return Err(if r >= 0 {
                SysError {
                    call: "wait4 (returned another pid)",
                    errno: libc::EIO,
                }
            } else {
                e
            });
        }
    }
}

/// A wait status in words: "exited with status 1", "was killed by signal
/// 9" (with what a SIGSYS or a status of 127 usually means).
pub fn describe_status(status: libc::c_int) -> String {
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 127 {
        "exited with status 127 (the shell's 'command not found', or execve failed)".to_string()
    } else if libc::WIFEXITED(status) {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let hint = if sig == libc::SIGSYS {
            " (SIGSYS: a seccomp filter killed it; the profile denies a call it makes)"
        } else {
            ""
        };
        format!("was killed by signal {sig}{hint}")
    } else {
        format!("ended with wait status {status:#x}")
    }
}

/// Whether a wait status says "exited normally with status 0".
#[inline(always)]
pub(crate) fn exited_zero(status: libc::c_int) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

fn timeval_ns(t: libc::timeval) -> u64 {
    (t.tv_sec as u64) * 1_000_000_000 + (t.tv_usec as u64) * 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_status_is_told_in_words() {
        // Issue 53: `predict -- false` printed "wait status 0x100".
        assert_eq!(describe_status(0x100), "exited with status 1");
        assert!(describe_status(127 << 8).contains("command not found"));
        assert_eq!(describe_status(libc::SIGKILL), "was killed by signal 9");
        assert!(describe_status(libc::SIGSYS).contains("seccomp"));
    }

    #[test]
    fn exit_status_check() {
        assert!(exited_zero(0));
        // exit status 1: (1 << 8); killed by SIGKILL: 9.
        assert!(!exited_zero(1 << 8));
        assert!(!exited_zero(9));
    }

    #[test]
    fn a_child_execs_with_its_outputs_redirected_and_is_reaped_with_its_cpu_time() {
        let dir = tempfile::tempdir().unwrap();
        let out = std::ffi::CString::new(dir.path().join("out").to_str().unwrap()).unwrap();
        let program = c"/bin/sh";
        let script = c"echo hello; echo oops >&2; exit 3";
        let argv = [
            program.as_ptr(),
            c"-c".as_ptr(),
            script.as_ptr(),
            std::ptr::null(),
        ];
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        let spec = Exec {
            program,
            argv: argv.as_ptr(),
            parent,
            own_group: false,
            cpus: None,
            stdout: Output::Truncate(&out),
            stderr: Output::Null,
            failed: b"exec failed\n",
        };
        // SAFETY: the child runs only Exec::run.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: in the child of the fork.
            unsafe { spec.run() }
        }
        let (status, _user, _sys) = wait_child_cpu(pid).unwrap();
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 3);
        assert!(!exited_zero(status));
        let text = std::fs::read_to_string(dir.path().join("out")).unwrap();
        assert_eq!(text, "hello\n");
        // A reaped child cannot be waited for again.
        assert_eq!(wait_child(pid).unwrap_err().errno, libc::ECHILD);
    }
}
