//! `command`: any program the user gives after `--`, the way hyperfine
//! measures commands, but inside secperf's paired design. One operation is
//! one complete run: fork(), execve() of the command (found on `PATH` once,
//! in `prepare`), and wait4(), which checks the exit status and collects
//! the run's user and system CPU time. Short commands run back to back
//! within a slice; a command longer than a slice stretches the slice to its
//! completion (this is a `SLOW` workload: slices are measured between
//! completions), so every half holds whole runs.
//!
//! Mechanisms: a worker-scope mechanism (seccomp, Landlock, credentials)
//! is applied in the task before its first run, and is inherited by every
//! process the task forks and kept across execve, so the command runs under
//! it exactly as under a container runtime that installs the policy and
//! then execs the program. The task's own fork, execve and wait4 are
//! filtered too: three calls per run, the price any launcher pays.
//! The `cred` mechanism's overrides do not reach the program: execve
//! recomputes them (`cap_bprm_creds_from_file` sets fsuid back to euid and
//! recalculates the capability sets), so on a command `cred` measures only
//! the task's own three calls, and shows as no difference.
//! System-wide mechanisms (audit) are switched around the whole half.
//!
//! The command inherits secperf's environment and working directory;
//! stdin is /dev/null. Its stdout goes to /dev/null and its stderr to a
//! file in the measurement's scratch directory (rewritten on every run), so
//! that a failing run is reported with its exit status and the tail of its
//! stderr; `show_output=1` (`--show-output`) passes both through instead.
//! A run that exits non-zero or is killed by a signal (SIGSYS: a seccomp
//! profile killed it) stops the measurement.

use std::ffi::{CString, c_char};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::child::{self, Output, wait_child_cpu};
use super::{ParamDef, TaskCtx, Workload};
use crate::model::Params;
use crate::sys::SysError;

pub const NAME: &str = "command";

/// Bytes of the command's stderr a failure report quotes (its end).
const STDERR_TAIL_BYTES: usize = 1200;

pub struct Command {
    /// Owns the strings `argv` points into.
    _strings: Vec<CString>,
    /// The program's absolute path (execve takes no `PATH` search).
    program: CString,
    /// `[arg0, arg1, ..., NULL]`.
    argv: Vec<*const c_char>,
    /// Where the child's stderr goes (None: inherited).
    stderr_path: Option<CString>,
    /// Where the child's stdout goes (None: inherited).
    stdout_null: bool,
    /// The command as the user wrote it, for messages.
    shown: String,
    /// For the failure report.
    stderr_file: Option<PathBuf>,
    last_status: libc::c_int,
    /// The task's pid, which its runs check after arming their
    /// parent-death signal.
    task_pid: libc::pid_t,
    /// The children's CPU time so far (ns).
    user_ns: u64,
    sys_ns: u64,
}

impl Workload for Command {
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "your command (after --): one operation is one complete run \
         (fork, execve, wait4); wall time and CPU time per run";
    const HOOKS: &'static [&'static str] = &[
        "whatever the command reaches",
        "bprm_check_security and the exec path",
        "task_alloc",
        "task_free",
    ];
    /// The calls secperf makes per run; the command makes its own.
    const SYSCALLS: &'static [&'static str] = &[
        "clone",
        "prctl",
        "getppid",
        "openat",
        "dup2",
        "execve",
        "wait4",
        "exit_group",
    ];
    const SLOW: bool = true;
    const IN_ALL: bool = false;
    const CHILD_CPU: bool = true;
    const PARAMS: &'static [ParamDef] = &[
        ParamDef {
            name: "argv",
            default: "",
            help: "the command and its arguments as a JSON array of strings; set by \
                   `-- CMD ARGS...` on the command line",
        },
        ParamDef {
            name: "show_output",
            default: "0",
            help: "1: the command's stdout and stderr pass through (--show-output); 0: stdout \
                   to /dev/null, stderr kept for the failure report",
        },
    ];

    fn validate(params: &Params) -> Result<()> {
        let argv = argv_of(params)?;
        resolve_program(&argv[0])?;
        crate::workloads::check_range(params, NAME, "show_output", 0..=1)?;
        Ok(())
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let args = argv_of(ctx.params)?;
        let program = resolve_program(&args[0])?;
        let strings: Vec<CString> = args
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .context("command: an argument contains a NUL byte")?;
        let mut argv: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        argv.push(std::ptr::null());
        let show = ctx.params.get("show_output").map(String::as_str) == Some("1");
        let stderr_file = (!show).then(|| ctx.scratch.join(format!("command-stderr-{}", ctx.task)));
        let stderr_path = stderr_file
            .as_ref()
            .map(|p| CString::new(p.as_os_str().as_bytes()))
            .transpose()
            .context("command: scratch path contains a NUL byte")?;
        Ok(Command {
            program: CString::new(program.as_os_str().as_bytes())
                .context("command: program path contains a NUL byte")?,
            _strings: strings,
            argv,
            stderr_path,
            stdout_null: !show,
            shown: shown(&args),
            stderr_file,
            last_status: 0,
            // SAFETY: getpid cannot fail.
            task_pid: unsafe { libc::getpid() },
            user_ns: 0,
            sys_ns: 0,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        // SAFETY: the child runs only async-signal-safe calls (open, dup2,
        // close, execve, _exit) on data prepared before the fork, so forking
        // from a multi-threaded process is sound.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(SysError::last("fork"));
        }
        if pid == 0 {
            // SAFETY: see above; every pointer is a NUL-terminated string or
            // array owned by self, unchanged since prepare.
            unsafe { self.child() }
        }
        let (status, user_ns, sys_ns) = wait_child_cpu(pid)?;
        self.user_ns += user_ns;
        self.sys_ns += sys_ns;
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            return Ok(());
        }
        self.last_status = status;
        Err(SysError {
            call: "wait4 (the command failed)",
            errno: libc::EIO,
        })
    }

    fn failure_detail(&self) -> Option<String> {
        let how = super::child::describe_status(self.last_status);
        let tail = self
            .stderr_file
            .as_deref()
            .and_then(|p| stderr_tail(p, STDERR_TAIL_BYTES))
            .filter(|t| !t.trim().is_empty());
        Some(match tail {
            Some(t) => format!(
                "command `{}` {how}; the end of its stderr:\n{}",
                self.shown,
                t.trim_end()
            ),
            None if self.stderr_file.is_some() => {
                format!("command `{}` {how} (its stderr was empty)", self.shown)
            }
            None => format!("command `{}` {how} (see its output above)", self.shown),
        })
    }

    #[inline(always)]
    fn child_cpu_ns(&self) -> Option<(u64, u64)> {
        Some((self.user_ns, self.sys_ns))
    }
}

impl Command {
    /// The forked child: redirect, exec, or leave with 127.
    ///
    /// # Safety
    /// Only in the child of a fork; uses async-signal-safe calls only.
    unsafe fn child(&self) -> ! {
        let exec = child::Exec {
            program: &self.program,
            argv: self.argv.as_ptr(),
            parent: self.task_pid,
            own_group: false,
            cpus: None,
            stdout: if self.stdout_null {
                Output::Null
            } else {
                Output::Inherit
            },
            stderr: self
                .stderr_path
                .as_deref()
                .map_or(Output::Inherit, Output::Truncate),
            failed: b"secperf: execve of the command failed\n",
        };
        // SAFETY: in the child of a fork, as this function requires.
        unsafe { exec.run() }
    }
}

/// The last `max` bytes of a file, as text.
fn stderr_tail(path: &Path, max: usize) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let start = bytes.len().saturating_sub(max);
    Some(String::from_utf8_lossy(&bytes[start..]).into_owned())
}

/// The `argv` parameter: a non-empty JSON array of strings.
pub fn argv_of(params: &Params) -> Result<Vec<String>> {
    let raw = params.get("argv").map(String::as_str).unwrap_or("");
    if raw.trim().is_empty() {
        crate::usage_bail!(
            "workload command needs the command to run: give it after `--`, e.g. \
             `secperf run -- dd if=/dev/zero of=/dev/null bs=1 count=100000`"
        );
    }
    let argv: Vec<String> = serde_json::from_str(raw).map_err(|e| {
        crate::error::UsageError::new(format!(
            "workload command: argv={raw} is not a JSON array of strings ({e}); give the \
             command after `--` instead"
        ))
    })?;
    if argv.is_empty() || argv[0].is_empty() {
        crate::usage_bail!("workload command: the command is empty; give it after `--`");
    }
    if argv.iter().any(|a| a.contains('\0')) {
        crate::usage_bail!("workload command: an argument contains a NUL byte");
    }
    Ok(argv)
}

/// The `argv` parameter's value for a command line.
pub fn argv_param<S: AsRef<str>>(argv: &[S]) -> String {
    let argv: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    serde_json::to_string(&argv).expect("strings serialise")
}

/// The command as a shell would show it (quoted where needed).
pub fn shown(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The program's path: as given when it contains a slash, else the first
/// executable of that name on `PATH`, as a shell finds it.
pub fn resolve_program(name: &str) -> Result<PathBuf> {
    let executable = |p: &Path| {
        let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: c is a valid NUL-terminated path.
        p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        if executable(&p) {
            return Ok(std::path::absolute(&p).unwrap_or(p));
        }
        crate::usage_bail!(
            "command {name}: no such executable file (check the path and its execute permission)"
        );
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let p = dir.join(name);
        if executable(&p) {
            return Ok(p);
        }
    }
    crate::usage_bail!(
        "command {name}: not found on PATH ({}); give its full path",
        path.to_string_lossy()
    )
}

/// What one trial run told: how long it took and whether it succeeded.
#[derive(Debug, Clone)]
pub struct Trial {
    pub wall_ms: f64,
    pub user_ms: f64,
    pub sys_ms: f64,
}

/// Runs the command once, as the workload will (stdin from /dev/null,
/// output discarded unless `show_output`), and insists it exits with 0:
/// the failure (exit status, stderr tail) is a usage error before anything
/// is measured. Its duration sizes the estimate shown before starting.
pub fn trial(params: &Params) -> Result<Trial> {
    let argv = argv_of(params)?;
    let dir = tempfile::tempdir().context("command: a directory for the trial run")?;
    let setup = super::Setup::default();
    let ctx = TaskCtx {
        task: 0,
        tasks: 1,
        scratch: dir.path(),
        params,
        setup: &setup,
        stop: None,
    };
    let mut c = Command::prepare(&ctx)?;
    let t0 = std::time::Instant::now();
    let r = c.op();
    let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
    if r.is_err() {
        crate::usage_bail!(
            "{} on a trial run before measuring; the command must succeed (exit 0) every time",
            c.failure_detail().unwrap_or_else(|| shown(&argv))
        );
    }
    Ok(Trial {
        wall_ms,
        user_ms: c.user_ns as f64 / 1e6,
        sys_ms: c.sys_ns as f64 / 1e6,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;
    use crate::model::Mode;
    use crate::workloads::def;

    fn params(argv: &[&str]) -> Params {
        let mut p = Params::new();
        let v: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        p.insert("argv".into(), argv_param(&v));
        p.insert("show_output".into(), "0".into());
        p
    }

    #[test]
    fn measures_a_real_command_with_its_cpu_time() {
        let p = params(&[
            "sh",
            "-c",
            "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done",
        ]);
        let r = crate::runner::testing::measure_briefly(&def::<Command>(), Mode::Process, 50, &p);
        assert!(r.ops_per_sec.median > 0.0);
        let cpu = r.child_cpu.expect("command reports CPU time");
        assert!(cpu.runs > 0);
        // A busy shell loop spends its time in user space.
        assert!(cpu.user_ns_per_op > 0.0, "{cpu:?}");
    }

    #[test]
    fn failing_command_reports_status_and_stderr_tail() {
        let p = params(&[
            "sh",
            "-c",
            "echo first line >&2; echo 'no such thing' >&2; exit 3",
        ]);
        let e = trial(&p).unwrap_err();
        let m = format!("{e:#}");
        assert_eq!(exit_code(&e), 2, "{m}");
        assert!(m.contains("exited with status 3"), "{m}");
        assert!(m.contains("no such thing"), "{m}");
    }

    #[test]
    fn a_signal_is_reported_by_number() {
        let p = params(&["sh", "-c", "kill -SEGV $$"]);
        let m = format!("{:#}", trial(&p).unwrap_err());
        assert!(m.contains(&format!("signal {}", libc::SIGSEGV)), "{m}");
    }

    #[test]
    fn bad_argv_and_unknown_programs_are_usage_errors() {
        for p in [
            Params::new(),
            params(&[]),
            params(&["secperf-no-such-program-anywhere"]),
            params(&["/nonexistent/prog"]),
            {
                let mut p = Params::new();
                p.insert("argv".into(), "dd if=x".into());
                p
            },
        ] {
            let e = Command::validate(&p).unwrap_err();
            assert_eq!(exit_code(&e), 2, "{e:#}");
        }
        assert!(Command::validate(&params(&["true"])).is_ok());
    }

    #[test]
    fn trial_times_a_successful_run() {
        let t = trial(&params(&["true"])).unwrap();
        assert!(t.wall_ms > 0.0);
    }

    #[test]
    fn shown_quotes_what_a_shell_would_split() {
        let v: Vec<String> = ["dd", "if=/dev/zero", "a b", "it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(shown(&v), r"dd if=/dev/zero 'a b' 'it'\''s'");
    }
}
