//! `service`: your server under the mechanism, a real client outside it
//! (`--server 'CMD ARGS' [--ready ...] -- CLIENT ARGS`). What platform
//! engineers ask: what does this policy cost *my service*, redis, nginx,
//! PostgreSQL, measured with the load client they already use.
//!
//! In each half the server is started fresh, by the task, after the arm's
//! worker-scope mechanism was applied to it (seccomp, Landlock, cred): the
//! server and every process it forks run under the mechanism, as under a
//! container runtime. System-wide mechanisms (audit) are switched around
//! the whole half, as for every workload. As for `command`, the `cred`
//! mechanism's overrides do not survive the server's execve (it recomputes
//! fsuid and the capability sets), so `cred` shows no difference here.
//! The task then waits until the server is ready (`--ready
//! tcp:PORT|unix:PATH|delay:MS`).
//!
//! One operation is one complete run of the client; the run in progress
//! when the half's last slice was read is cut short (it would count for
//! nothing). The client runs
//! *outside* the mechanism: a launcher process forked by the task before
//! the mechanism is applied starts it (fork, execve, wait4) when the task
//! asks, over a pipe. So the figure is the service's cost as its client
//! sees it, with the client's own calls unfiltered. Each run:
//! - must exit with status 0 (its stderr's tail is reported otherwise);
//! - must finish while the server runs: a server that dies ends the run
//!   (a client such as redis-benchmark would otherwise wait forever);
//! - is read by its parser when secperf knows the client
//!   ([`crate::clients`]: redis-benchmark, ab, wrk, pgbench): requests/s
//!   and latencies become extra figures with their own paired intervals,
//!   and failed requests are an error, never a fast run.
//!
//! The server's CPU time (user and system of every process in its group,
//! their threads and the children they reaped, from `/proc/PID/stat`) is
//! read after every client run and reported per run in place of a
//! command's child CPU time.
//!
//! After the half the server's process group gets SIGTERM, then SIGKILL
//! after [`STOP_GRACE`]; the half ends only once it is gone, so the next
//! half finds its address free. Should the task die (SIGKILL), the
//! launcher sees its pipe close and stops the group itself. A taken
//! address is refused before the server starts: the client would measure
//! whatever listens there.
//!
//! The server and the client run on every online CPU, as in production:
//! only the task that relays between them is pinned.
//!
//! One task only, in process mode (one server per half; the launcher is
//! forked, which a threaded process must not do with this much work in
//! the child).

use std::ffi::{CString, c_char};
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use self::group::{server_cpu_ns, stat_fields, stop_group};
use self::launcher::Launcher;
use self::pipe::{pipe, read_exact, write_all};
use self::ready::Ready;
use super::child::{self, Output};
use super::{ParamDef, TaskCtx, Workload, command};
use crate::model::Params;
use crate::sys::SysError;

pub const NAME: &str = "service";

/// How long a stopped server has between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// Bytes of an output's end that a failure report quotes.
const TAIL_BYTES: usize = 1200;

/// Replies from the launcher.
const OK: u8 = 0;
const CLIENT_FAILED: u8 = 1;
const SERVER_GONE: u8 = 2;
const UNREADABLE: u8 = 3;
const TIMED_OUT: u8 = 4;
const NOT_READY: u8 = 5;
/// The measurement stopped while the client ran: the run was cut short
/// and counts for nothing (the last slice was already read).
const ABORTED: u8 = 6;
/// How often the launcher looks at the server and the stop flag while a
/// client runs (it wakes at once when the client exits).
const WATCH: Duration = Duration::from_millis(20);

/// Where a task's client figures go, one JSON line per run
/// (`{"op": N, "metrics": [...]}`), read by the runner after the
/// measurement.
pub fn metrics_path(scratch: &Path, task: usize) -> PathBuf {
    scratch.join(format!("service-metrics-{task}.jsonl"))
}

/// One client run's figures, as the launcher writes them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunMetrics {
    /// Which run (1 = the first), as the task's operation counter counts.
    pub op: u64,
    pub metrics: Vec<crate::clients::ClientMetric>,
}

pub struct Service {
    /// Owns what the pointers below point into.
    _strings: Vec<CString>,
    server_program: CString,
    server_argv: Vec<*const c_char>,
    server_output: CString,
    show_output: bool,
    /// Every online CPU: the server and the client are not pinned with
    /// the task that relays for them.
    all_cpus: libc::cpu_set_t,
    /// The pipe ends the task keeps: commands to the launcher, replies
    /// from it (-1 once closed).
    to_launcher: libc::c_int,
    from_launcher: libc::c_int,
    launcher: libc::pid_t,
    /// The server's pid (and process group), once started.
    server: Option<libc::pid_t>,
    task_pid: libc::pid_t,
    /// Where the launcher explains a failure.
    error_file: PathBuf,
    last_reply: u8,
    user_ns: u64,
    sys_ns: u64,
}

impl Workload for Service {
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "your server (--server) under the mechanism, your client \
         (after --) outside it: one operation is one complete client run; wall time per run, \
         the server's CPU time per run, and the client's own figures (requests/s, latency) \
         where secperf reads its output";
    const HOOKS: &'static [&'static str] = &[
        "whatever the server reaches",
        "socket_sendmsg, socket_recvmsg and the network path",
    ];
    /// The server makes its own; these are the task's per run.
    const SYSCALLS: &'static [&'static str] = &["write", "read"];
    const SLOW: bool = true;
    const IN_ALL: bool = false;
    const CHILD_CPU: bool = true;
    const CHILD_CPU_BESIDE: Option<&'static str> = Some("server");
    const OBSERVED: Option<fn(libc::pid_t) -> Vec<i32>> = Some(group::server_threads);
    const PARAMS: &'static [ParamDef] = &[
        ParamDef {
            name: "server",
            default: "",
            help: "the server and its arguments as a JSON array of strings; set by --server \
                   'CMD ARGS'",
        },
        ParamDef {
            name: "argv",
            default: "",
            help: "the client and its arguments as a JSON array of strings; set by `-- CLIENT \
                   ARGS...`",
        },
        ParamDef {
            name: "ready",
            default: "delay:1000",
            help: "when the server is ready for its client: tcp:PORT (it accepts connections on \
                   127.0.0.1:PORT), unix:PATH, or delay:MS (a fixed wait); set by --ready",
        },
        ParamDef {
            name: "ready_timeout_ms",
            default: "10000",
            help: "how long to wait for the server to be ready, milliseconds (--ready-timeout)",
        },
        ParamDef {
            name: "client_timeout_ms",
            default: "600000",
            help: "how long one client run may take before it counts as hung, milliseconds",
        },
        ParamDef {
            name: "show_output",
            default: "0",
            help: "1: the server's output and the client's stderr pass through \
                   (--show-output); 0: kept for the failure report",
        },
    ];

    fn validate(params: &Params) -> Result<()> {
        let server = server_of(params)?;
        command::resolve_program(&server[0])?;
        let client = command::argv_of(params)?;
        command::resolve_program(&client[0])?;
        ready_of(params)?;
        crate::workloads::check_range(params, NAME, "ready_timeout_ms", 1..=3_600_000)?;
        crate::workloads::check_range(params, NAME, "client_timeout_ms", 1..=86_400_000)?;
        crate::workloads::check_range(params, NAME, "show_output", 0..=1)?;
        Ok(())
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        if ctx.tasks != 1 {
            crate::usage_bail!(
                "workload service runs one server and one client per half: measure it with one \
                 task (--tasks 1), not {}",
                ctx.tasks
            );
        }
        if threads_of_this_process() != Some(1) {
            crate::usage_bail!(
                "workload service needs process mode (--mode process): its launcher is forked \
                 from the task"
            );
        }
        let p = ctx.params;
        let server = server_of(p)?;
        let client = command::argv_of(p)?;
        let ready = ready_of(p)?;
        let ready_timeout =
            Duration::from_millis(crate::workloads::param_u64(p, NAME, "ready_timeout_ms")?);
        let client_timeout =
            Duration::from_millis(crate::workloads::param_u64(p, NAME, "client_timeout_ms")?);
        let show_output = p.get("show_output").map(String::as_str) == Some("1");
        check_free(&ready)?;

        let server_program = command::resolve_program(&server[0])?;
        let client_program = command::resolve_program(&client[0])?;
        let cstr = |s: &str| {
            CString::new(s.as_bytes()).context("service: an argument contains a NUL byte")
        };
        let path_c = |p: &Path| {
            CString::new(p.as_os_str().as_bytes()).context("service: a path contains a NUL byte")
        };
        let server_strings: Vec<CString> = server.iter().map(|a| cstr(a)).collect::<Result<_>>()?;
        let mut server_argv: Vec<*const c_char> =
            server_strings.iter().map(|s| s.as_ptr()).collect();
        server_argv.push(std::ptr::null());
        let server_output_file = ctx.scratch.join(format!("service-server-{}", ctx.task));
        let error_file = ctx.scratch.join(format!("service-error-{}", ctx.task));

        let all_cpus = cpu_set(&crate::sys::cpus::online_cpus()?);
        let launcher = Launcher {
            all_cpus,
            program: path_c(&client_program)?,
            strings: client.iter().map(|a| cstr(a)).collect::<Result<_>>()?,
            shown: command::shown(&client),
            args: client[1..].to_vec(),
            parser: crate::clients::find(&client[0]),
            stdout_file: ctx.scratch.join(format!("service-client-out-{}", ctx.task)),
            stderr_file: ctx.scratch.join(format!("service-client-err-{}", ctx.task)),
            metrics_file: metrics_path(ctx.scratch, ctx.task),
            error_file: error_file.clone(),
            server_output_file: server_output_file.clone(),
            ready,
            ready_timeout,
            client_timeout,
            show_output,
        };
        let (cmd_read, cmd_write) = pipe()?;
        let (reply_read, reply_write) = pipe()?;
        // SAFETY: getpid cannot fail.
        let task_pid = unsafe { libc::getpid() };
        // SAFETY: the task is single-threaded (checked above), so the
        // child may run ordinary code; it leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(SysError::last("fork (the client launcher)").into());
        }
        if pid == 0 {
            // SAFETY: closing the task's ends in the child, so that the
            // launcher sees EOF when the task goes.
            unsafe {
                libc::close(cmd_write);
                libc::close(reply_read);
            }
            let code = launcher.serve(cmd_read, reply_write, ctx.stop);
            // SAFETY: leaves without the task's destructors.
            unsafe { libc::_exit(code) }
        }
        // SAFETY: the launcher's ends, not used by the task.
        unsafe {
            libc::close(cmd_read);
            libc::close(reply_write);
        }
        Ok(Service {
            server_program: path_c(&server_program)?,
            _strings: server_strings,
            server_argv,
            server_output: path_c(&server_output_file)?,
            all_cpus,
            show_output,
            to_launcher: cmd_write,
            from_launcher: reply_read,
            launcher: pid,
            server: None,
            task_pid,
            error_file,
            last_reply: OK,
            user_ns: 0,
            sys_ns: 0,
        })
    }

    fn after_mechanism(&mut self) -> Result<()> {
        // SAFETY: the child runs only async-signal-safe calls on data
        // prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(SysError::last("fork (the server)").into());
        }
        if pid == 0 {
            // SAFETY: see above; never returns.
            unsafe { self.server_child() }
        }
        // SAFETY: puts the child in its own group, as it does itself
        // (whichever runs first), so that the group can be signalled.
        unsafe { libc::setpgid(pid, pid) };
        self.server = Some(pid);
        let mut msg = [b'S', 0, 0, 0, 0];
        msg[1..].copy_from_slice(&pid.to_ne_bytes());
        write_all(self.to_launcher, &msg)
            .map_err(|e| anyhow::anyhow!("service: telling the launcher the server's pid: {e}"))?;
        let mut reply = [0u8; 17];
        read_exact(self.from_launcher, &mut reply)
            .map_err(|e| anyhow::anyhow!("service: the launcher did not answer: {e}"))?;
        if reply[0] != OK {
            let why = std::fs::read_to_string(&self.error_file).unwrap_or_default();
            crate::usage_bail!("service: {}", why.trim_end());
        }
        Ok(())
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        write_all(self.to_launcher, b"R").map_err(|errno| SysError {
            call: "write (to the client launcher)",
            errno,
        })?;
        let mut reply = [0u8; 17];
        read_exact(self.from_launcher, &mut reply).map_err(|errno| SysError {
            call: "read (from the client launcher)",
            errno,
        })?;
        self.last_reply = reply[0];
        if reply[0] == ABORTED {
            return Ok(());
        }
        if reply[0] != OK {
            return Err(SysError {
                call: "the client run",
                errno: libc::EIO,
            });
        }
        self.user_ns = u64::from_ne_bytes(reply[1..9].try_into().expect("8 bytes"));
        self.sys_ns = u64::from_ne_bytes(reply[9..17].try_into().expect("8 bytes"));
        Ok(())
    }

    fn failure_detail(&self) -> Option<String> {
        let why = std::fs::read_to_string(&self.error_file).ok()?;
        Some(format!("service: {}", why.trim_end()))
    }

    #[inline(always)]
    fn child_cpu_ns(&self) -> Option<(u64, u64)> {
        Some((self.user_ns, self.sys_ns))
    }
}

impl Service {
    /// The forked server: own process group, dies with the task,
    /// output to its file, exec.
    ///
    /// # Safety
    /// Only in the child of a fork; async-signal-safe calls only.
    unsafe fn server_child(&self) -> ! {
        let output = if self.show_output {
            Output::Inherit
        } else {
            Output::Append(&self.server_output)
        };
        let exec = child::Exec {
            program: &self.server_program,
            argv: self.server_argv.as_ptr(),
            parent: self.task_pid,
            own_group: true,
            cpus: Some(&self.all_cpus),
            stdout: output,
            stderr: output,
            failed: b"secperf: execve of the server failed\n",
        };
        // SAFETY: in the child of a fork, as this function requires.
        unsafe { exec.run() }
    }
}

impl Drop for Service {
    /// Stops the server: the launcher, told by its pipe closing, signals
    /// the group (SIGTERM, SIGKILL after the grace) and exits once the
    /// group is gone; the task reaps both meanwhile.
    fn drop(&mut self) {
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(self.to_launcher);
            libc::close(self.from_launcher);
        }
        let deadline = Instant::now() + STOP_GRACE + Duration::from_secs(5);
        let mut server = self.server;
        let mut launcher = Some(self.launcher);
        while server.is_some() || launcher.is_some() {
            for slot in [&mut server, &mut launcher] {
                if let Some(pid) = *slot {
                    // SAFETY: pid is our unreaped child.
                    let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
                    if r == pid || r < 0 {
                        *slot = None;
                    }
                }
            }
            if Instant::now() > deadline {
                // The launcher is stuck: do its job.
                for pid in [server, launcher].into_iter().flatten() {
                    // SAFETY: signals and reaps our own children (and the
                    // server's group).
                    unsafe {
                        libc::kill(-pid, libc::SIGKILL);
                        libc::kill(pid, libc::SIGKILL);
                        libc::waitpid(pid, std::ptr::null_mut(), 0);
                    }
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The last bytes of a file, as text.
fn tail_of(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let start = bytes.len().saturating_sub(TAIL_BYTES);
    Some(String::from_utf8_lossy(&bytes[start..]).into_owned())
}

/// A usage error if `ready`'s address is taken before the server starts.
/// One try only: retrying would fill a silent listener's backlog until
/// connections time out and the address looked free. A previous half's
/// server is gone by then (the half ends only once its group is).
fn check_free(ready: &Ready) -> Result<()> {
    if let Err(e) = ready.check_free() {
        crate::usage_bail!("service: {e}");
    }
    Ok(())
}

/// A CPU set of `cpus`.
fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain old data; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET bounds-checks against the set's size.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    set
}

/// Threads of the calling process (`/proc/self/status`).
fn threads_of_this_process() -> Option<u32> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The `server` parameter: a non-empty JSON array of strings.
pub fn server_of(params: &Params) -> Result<Vec<String>> {
    let raw = params.get("server").map(String::as_str).unwrap_or("");
    if raw.trim().is_empty() {
        crate::usage_bail!(
            "workload service needs the server to start: give it with --server 'CMD ARGS', e.g. \
             --server 'redis-server --port 6390 --save \"\"'"
        );
    }
    let argv: Vec<String> = serde_json::from_str(raw).map_err(|e| {
        crate::error::UsageError::new(format!(
            "workload service: server={raw} is not a JSON array of strings ({e}); give it with \
             --server 'CMD ARGS' instead"
        ))
    })?;
    if argv.is_empty() || argv[0].is_empty() {
        crate::usage_bail!("workload service: the server command is empty; give it with --server");
    }
    if argv.iter().any(|a| a.contains('\0')) {
        crate::usage_bail!("workload service: a server argument contains a NUL byte");
    }
    Ok(argv)
}

/// The `ready` parameter.
pub fn ready_of(params: &Params) -> Result<Ready> {
    let raw = params
        .get("ready")
        .map(String::as_str)
        .unwrap_or("delay:1000");
    raw.parse::<Ready>()
        .map_err(|e| crate::error::UsageError::new(e.to_string()).into())
}

/// A usage error unless the placement is one task in process mode (one
/// server per half, on its address).
pub fn check_placement(tasks: &[usize], mode: crate::model::Mode) -> Result<()> {
    if tasks != [1] {
        crate::usage_bail!(
            "--server: one server and one client per half, so one task: use --tasks 1 (or leave \
             --tasks out), not {tasks:?}"
        );
    }
    if mode != crate::model::Mode::Process {
        crate::usage_bail!("--server needs --mode process: the client launcher is forked");
    }
    Ok(())
}

/// "CLIENT against SERVER", for tables.
pub fn label(params: &Params) -> Option<String> {
    let client = command::argv_of(params).ok()?;
    let server = server_of(params).ok()?;
    Some(format!(
        "{} against {}",
        command::shown(&client),
        command::shown(&server)
    ))
}

/// One trial of the whole half before measuring (server started, ready,
/// one client run, server stopped), without any mechanism: a usage error
/// that says what failed, and how long a client run took (ms), with its
/// figures.
pub fn trial(params: &Params) -> Result<(f64, Vec<crate::clients::ClientMetric>)> {
    let dir = tempfile::tempdir().context("service: a directory for the trial run")?;
    let setup = super::Setup::default();
    let ctx = TaskCtx {
        task: 0,
        tasks: 1,
        scratch: dir.path(),
        params,
        setup: &setup,
        stop: None,
    };
    let mut s = Service::prepare(&ctx)?;
    s.after_mechanism()
        .context("on a trial run before measuring")?;
    let t0 = Instant::now();
    let r = s.op();
    let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
    if r.is_err() {
        crate::usage_bail!(
            "{} (on a trial run before measuring; every client run must succeed)",
            s.failure_detail()
                .unwrap_or_else(|| "service: the client run failed".to_string())
        );
    }
    drop(s);
    let metrics = std::fs::read_to_string(metrics_path(dir.path(), 0))
        .ok()
        .and_then(|t| {
            t.lines()
                .next()
                .and_then(|l| serde_json::from_str::<RunMetrics>(l).ok())
        })
        .map(|m| m.metrics)
        .unwrap_or_default();
    Ok((wall_ms, metrics))
}

/// The `--param` values that select this workload for a server command
/// line (`--server 'CMD ARGS'`, split as a shell would) and a client.
pub fn params_for(
    server: &str,
    client: &[String],
    ready: Option<&str>,
    ready_timeout_ms: Option<u64>,
    show_output: bool,
) -> Result<Vec<String>> {
    let words = shell_words::split(server).map_err(|e| {
        crate::error::UsageError::new(format!(
            "--server {server:?}: {e}; quote it as a shell would (e.g. --server 'redis-server \
             --port 6390')"
        ))
    })?;
    if words.is_empty() {
        crate::usage_bail!("--server is empty: give the server's command line");
    }
    let mut params = vec![
        format!("{NAME}.server={}", command::argv_param(&words)),
        format!("{NAME}.argv={}", command::argv_param(client)),
    ];
    if let Some(r) = ready {
        r.parse::<Ready>()
            .map_err(|e| crate::error::UsageError::new(e.to_string()))?;
        params.push(format!("{NAME}.ready={r}"));
    }
    if let Some(ms) = ready_timeout_ms {
        params.push(format!("{NAME}.ready_timeout_ms={ms}"));
    }
    if show_output {
        params.push(format!("{NAME}.show_output=1"));
    }
    Ok(params)
}

mod group;
mod launcher;
mod pipe;
pub mod ready;

#[cfg(test)]
mod tests;
