//! `exec`: UnixBench's "Execl Throughput" test. One operation is a fork(),
//! an execve() of a tiny program in the child (default `/bin/true`, with
//! an empty environment), and the parent's waitpid(), which checks the
//! program exited with status 0.
//!
//! execve is where most LSMs decide about a program: `bprm_creds_for_exec`
//! and `bprm_creds_from_file` (SELinux domain transitions, AppArmor
//! profile attachment), `bprm_check_security` (also IMA measurement and
//! appraisal), `file_open` of the binary and, for a dynamic program, of
//! its interpreter and libraries, `mmap_file` and `file_mprotect` as the
//! loader maps them, `bprm_committing_creds`/`bprm_committed_creds`; the
//! fork adds `task_alloc` and `cred_prepare`, the exit `task_free`.
//! Audit logs an EXECVE record for every exec once any rule matches it.
//! It is in the catalog because UnixBench (avc-2004, docs/experiments.md) counts it, and
//! because program start is the path where a policy is consulted most.
//!
//! Only the three calls above are made by secperf; the program itself
//! makes the loader's calls (openat, mmap, mprotect, ...) and exit_group.
//! The child runs only async-signal-safe code between fork and execve
//! (no allocation: argv and envp are built in `prepare`). When execve
//! fails the child stores its errno in a page shared with the parent and
//! leaves with status 127, so a denial (Landlock, seccomp, a noexec mount)
//! is reported as "execve: EACCES", not as a vague exit status.

use std::ffi::{CString, c_char};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::child::{exited_zero, wait_child};
use super::{ParamDef, Setup, SetupCtx, TaskCtx, Workload};
use crate::model::Params;
use crate::sys::SysError;

pub struct Exec {
    /// Owns the strings `argv` points into.
    _program: CString,
    /// `[program, NULL]`.
    argv: Vec<*const c_char>,
    /// `[NULL]`: the program starts with an empty environment.
    envp: Vec<*const c_char>,
    /// A MAP_SHARED page the child writes execve's errno into.
    exec_errno: SharedErrno,
}

const DEFAULT_PROGRAM: &str = "/bin/true";
/// How long the trial run in setup may take before the program is
/// declared unsuitable (it must exit at once, or op() would hang).
const TRIAL_TIMEOUT: Duration = Duration::from_secs(5);

impl Workload for Exec {
    const NAME: &'static str = "exec";
    const DESCRIPTION: &'static str =
        "fork() + execve() of a tiny program + waitpid (UnixBench Execl Throughput)";
    const HOOKS: &'static [&'static str] = &[
        "bprm_creds_for_exec",
        "bprm_creds_from_file",
        "bprm_check_security",
        "bprm_committing_creds",
        "bprm_committed_creds",
        "file_open (binary, loader, libraries)",
        "mmap_file",
        "file_mprotect",
        "task_alloc",
        "cred_prepare",
        "task_free",
    ];
    const SYSCALLS: &'static [&'static str] = &["clone", "execve", "wait4", "exit_group"];
    /// About a millisecond per operation: a 10 or 20 ms slice (as
    /// calibrate and overhead use) would hold a handful, so slices are
    /// measured between completions. One clock read per op costs nothing
    /// next to an exec.
    const SLOW: bool = true;
    const PARAMS: &'static [ParamDef] = &[ParamDef {
        name: "program",
        default: DEFAULT_PROGRAM,
        help: "absolute path of a program that exits at once with status 0 (run with no \
               arguments and an empty environment)",
    }];

    fn validate(params: &Params) -> Result<()> {
        let program = program(params);
        if !program.starts_with('/') || program.contains('\0') {
            crate::usage_bail!(
                "workload exec: program={program} is not valid (an absolute path is needed)"
            );
        }
        let c = CString::new(program).expect("checked for NUL above");
        // SAFETY: c is a valid NUL-terminated path.
        let ok = unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0;
        if !ok || !Path::new(program).is_file() {
            crate::usage_bail!(
                "workload exec: program {program} does not exist or is not an executable file \
                 ({}); choose another with --param exec.program=PATH",
                std::io::Error::last_os_error()
            );
        }
        Ok(())
    }

    fn setup(ctx: &SetupCtx) -> Result<Setup> {
        trial_run(program(ctx.params))?;
        Ok(Setup::default())
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let program = CString::new(Path::new(program(ctx.params)).as_os_str().as_bytes())
            .context("exec: program path contains a NUL byte")?;
        let argv = vec![program.as_ptr(), std::ptr::null()];
        Ok(Exec {
            argv,
            envp: vec![std::ptr::null()],
            _program: program,
            exec_errno: SharedErrno::new()?,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        // SAFETY: the child runs only async-signal-safe code (execve, an
        // atomic store to a shared page, _exit) before it is replaced or
        // leaves, so forking from a multi-threaded process is sound.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(SysError::last("fork"));
        }
        if pid == 0 {
            // SAFETY: argv and envp are NULL-terminated arrays of valid
            // C strings owned by self, unchanged since prepare.
            unsafe {
                libc::execve(self.argv[0], self.argv.as_ptr(), self.envp.as_ptr());
                self.exec_errno.set(*libc::__errno_location());
                libc::_exit(127);
            }
        }
        let status = wait_child(pid)?;
        if exited_zero(status) {
            return Ok(());
        }
        Err(self.failure(status))
    }
}

impl Exec {
    #[cold]
    fn failure(&self, status: libc::c_int) -> SysError {
        let errno = self.exec_errno.get();
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 127 && errno != 0 {
            SysError {
                call: "execve",
                errno,
            }
        } else if libc::WIFSIGNALED(status) {
            SysError {
                call: "wait4 (exec'd program killed by a signal)",
                errno: libc::EIO,
            }
        } else {
            SysError {
                call: "wait4 (exec'd program exited with a non-zero status)",
                errno: libc::EIO,
            }
        }
    }
}

fn program(params: &Params) -> &str {
    params
        .get("program")
        .map(String::as_str)
        .unwrap_or(DEFAULT_PROGRAM)
}

/// Runs the program once as the workload will (no arguments, empty
/// environment), and insists it exits with status 0 within
/// [`TRIAL_TIMEOUT`]: a program that waits for input would hang op().
fn trial_run(program: &str) -> Result<()> {
    let mut child = Command::new(program)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("exec: cannot run program {program}"))?;
    let deadline = Instant::now() + TRIAL_TIMEOUT;
    loop {
        if let Some(status) = child
            .try_wait()
            .with_context(|| format!("exec: waiting for {program}"))?
        {
            if !status.success() {
                bail!(
                    "exec: program {program} exited with {status} on a trial run; it must \
                     exit with status 0 (choose another with --param exec.program=PATH)"
                );
            }
            return Ok(());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "exec: program {program} did not exit within {} s on a trial run; it must \
                 exit at once (choose another with --param exec.program=PATH)",
                TRIAL_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// One `i32` on an anonymous MAP_SHARED page, so a forked child's store is
/// seen by the parent. Unmapped on drop.
struct SharedErrno {
    ptr: *mut AtomicI32,
}

impl SharedErrno {
    fn new() -> Result<Self> {
        let len = page_size();
        let p = crate::sys::query::mmap_shared_anon(len).context("exec: mapping the errno page")?;
        // The page is zero-filled: the errno starts at 0.
        Ok(SharedErrno { ptr: p.cast() })
    }

    #[inline(always)]
    fn set(&self, errno: i32) {
        // SAFETY: ptr points at a live, aligned, shared page (see new).
        unsafe { (*self.ptr).store(errno, Ordering::Relaxed) }
    }

    fn get(&self) -> i32 {
        // SAFETY: as in set.
        unsafe { (*self.ptr).load(Ordering::Relaxed) }
    }
}

impl Drop for SharedErrno {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly the mapping made in new, unused after.
        unsafe { libc::munmap(self.ptr.cast(), page_size()) };
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf with a valid name cannot fail for _SC_PAGESIZE.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as usize } else { 4096 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::workloads::def;

    fn params(program: &str) -> Params {
        let mut p = Params::new();
        p.insert("program".into(), program.into());
        p
    }

    #[test]
    fn exec_measures_true() {
        let r = crate::runner::testing::measure_briefly(
            &def::<Exec>(),
            Mode::Process,
            50,
            &params(DEFAULT_PROGRAM),
        );
        assert!(r.ops_per_sec.median > 0.0);
    }

    #[test]
    fn validate_refuses_missing_or_relative_programs() {
        assert!(Exec::validate(&params(DEFAULT_PROGRAM)).is_ok());
        let e = Exec::validate(&params("/nonexistent/secperf-true")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/secperf-true"), "{e}");
        assert!(Exec::validate(&params("true")).is_err());
        // A directory is not a program.
        assert!(Exec::validate(&params("/")).is_err());
    }

    #[test]
    fn failing_exec_reports_execve_and_errno() {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::default();
        let p = params("/nonexistent/secperf-true");
        let ctx = TaskCtx {
            task: 0,
            tasks: 1,
            scratch: dir.path(),
            params: &p,
            setup: &setup,
            stop: None,
        };
        let mut w = Exec::prepare(&ctx).unwrap();
        let e = w.op().unwrap_err();
        assert_eq!((e.call, e.errno), ("execve", libc::ENOENT));
    }

    #[test]
    fn non_zero_exit_is_an_error() {
        if !Path::new("/bin/false").exists() {
            let test = "non_zero_exit_is_an_error";
            crate::testing::skip_missing_tool(test, "/bin/false", "/bin/false is missing");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::default();
        let p = params("/bin/false");
        let ctx = TaskCtx {
            task: 0,
            tasks: 1,
            scratch: dir.path(),
            params: &p,
            setup: &setup,
            stop: None,
        };
        let mut w = Exec::prepare(&ctx).unwrap();
        let e = w.op().unwrap_err();
        assert_eq!(e.errno, libc::EIO);
        assert!(trial_run("/bin/false").is_err());
    }
}
