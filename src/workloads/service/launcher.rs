//! The launcher: a process forked by the task before the mechanism is
//! applied, so outside it, that waits for the server to be ready and
//! starts each client run when the task asks (fork, execve, wait4), over
//! a pipe; it reads the client's figures and watches the server while a
//! run goes on.

use super::*;

/// What the launcher needs: the client, where its output goes, the
/// readiness rule.
pub(super) struct Launcher {
    pub(super) all_cpus: libc::cpu_set_t,
    pub(super) program: CString,
    pub(super) strings: Vec<CString>,
    pub(super) shown: String,
    pub(super) args: Vec<String>,
    pub(super) parser: Option<&'static crate::clients::ClientDef>,
    pub(super) stdout_file: PathBuf,
    pub(super) stderr_file: PathBuf,
    pub(super) metrics_file: PathBuf,
    pub(super) error_file: PathBuf,
    pub(super) server_output_file: PathBuf,
    pub(super) ready: Ready,
    pub(super) ready_timeout: Duration,
    pub(super) client_timeout: Duration,
    pub(super) show_output: bool,
}

impl Launcher {
    /// The launcher's loop, outside the mechanism: 'S' + pid (await the
    /// server), 'R' (one client run); EOF: stop the server's group and
    /// leave. Returns the exit code.
    pub(super) fn serve(
        &self,
        cmd: libc::c_int,
        reply: libc::c_int,
        stop: Option<&std::sync::atomic::AtomicU32>,
    ) -> i32 {
        let mut server: Option<libc::pid_t> = None;
        let mut members = Vec::new();
        let mut runs = 0u64;
        loop {
            let mut b = [0u8; 1];
            if read_exact(cmd, &mut b).is_err() {
                if let Some(pid) = server {
                    stop_group(pid);
                }
                return 0;
            }
            let mut answer = [0u8; 17];
            match b[0] {
                b'S' => {
                    let mut pid = [0u8; 4];
                    if read_exact(cmd, &mut pid).is_err() {
                        return 1;
                    }
                    let pid = libc::pid_t::from_ne_bytes(pid);
                    server = Some(pid);
                    let waited = self
                        .ready
                        .wait(self.ready_timeout, &mut || self.server_gone(pid));
                    if let Err(e) = waited {
                        answer[0] = NOT_READY;
                        self.explain(&format!("{e}{}", self.server_tail()));
                    }
                }
                b'R' => {
                    runs += 1;
                    let Some(pid) = server else {
                        return 1;
                    };
                    answer[0] = self.run_client(pid, runs, stop);
                    let (user, sys) = server_cpu_ns(pid, &mut members).unwrap_or((0, 0));
                    answer[1..9].copy_from_slice(&user.to_ne_bytes());
                    answer[9..17].copy_from_slice(&sys.to_ne_bytes());
                }
                _ => return 1,
            }
            if write_all(reply, &answer).is_err() {
                if let Some(pid) = server {
                    stop_group(pid);
                }
                return 0;
            }
        }
    }

    /// One client run; the reply code. Writes the figures or the failure.
    fn run_client(
        &self,
        server: libc::pid_t,
        run: u64,
        stop: Option<&std::sync::atomic::AtomicU32>,
    ) -> u8 {
        let mut argv: Vec<*const c_char> = self.strings.iter().map(|s| s.as_ptr()).collect();
        argv.push(std::ptr::null());
        let (Ok(out), Ok(err)) = (
            CString::new(self.stdout_file.as_os_str().as_bytes()),
            CString::new(self.stderr_file.as_os_str().as_bytes()),
        ) else {
            self.explain("a scratch path contains a NUL byte");
            return CLIENT_FAILED;
        };
        // SAFETY: getpid cannot fail.
        let me = unsafe { libc::getpid() };
        // SAFETY: the launcher is single-threaded; the child makes only
        // async-signal-safe calls on data prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            self.explain(&format!("fork (the client): {}", SysError::last("fork")));
            return CLIENT_FAILED;
        }
        if pid == 0 {
            let exec = child::Exec {
                program: &self.program,
                argv: argv.as_ptr(),
                parent: me,
                own_group: false,
                cpus: Some(&self.all_cpus),
                stdout: Output::Truncate(&out),
                stderr: if self.show_output {
                    Output::Inherit
                } else {
                    Output::Truncate(&err)
                },
                failed: b"secperf: execve of the client failed\n",
            };
            // SAFETY: in the child of the fork; never returns.
            unsafe { exec.run() }
        }
        let status = match self.wait_client(pid, server, stop) {
            Ok(status) => status,
            Err(code) => return code,
        };
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            let how = if libc::WIFEXITED(status) {
                format!("exited with status {}", libc::WEXITSTATUS(status))
            } else {
                format!("was killed by signal {}", libc::WTERMSIG(status))
            };
            let tail = tail_of(&self.stderr_file).unwrap_or_default();
            let out_tail = tail_of(&self.stdout_file).unwrap_or_default();
            self.explain(&format!(
                "the client `{}` {how}; the end of its output:\n{}{}{}",
                self.shown,
                out_tail.trim_end(),
                if tail.trim().is_empty() { "" } else { "\n" },
                tail.trim_end()
            ));
            return CLIENT_FAILED;
        }
        let Some(parser) = self.parser else {
            return OK;
        };
        let mut output = std::fs::read_to_string(&self.stdout_file).unwrap_or_default();
        output.push_str(&std::fs::read_to_string(&self.stderr_file).unwrap_or_default());
        match (parser.parse)(&output, &self.args) {
            Ok(metrics) => {
                let line = RunMetrics { op: run, metrics };
                let written = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.metrics_file)
                    .and_then(|mut f| {
                        writeln!(f, "{}", serde_json::to_string(&line).expect("serialises"))
                    });
                if let Err(e) = written {
                    self.explain(&format!(
                        "writing the client's figures to {}: {e}",
                        self.metrics_file.display()
                    ));
                    return UNREADABLE;
                }
                OK
            }
            Err(e) => {
                self.explain(&format!("the client `{}`: {e}", self.shown));
                UNREADABLE
            }
        }
    }

    /// Waits for the client `pid` to exit, watching the server; its wait
    /// status, or the reply code when the server went or the client hung
    /// (the client is then killed and reaped).
    fn wait_client(
        &self,
        pid: libc::pid_t,
        server: libc::pid_t,
        stop: Option<&std::sync::atomic::AtomicU32>,
    ) -> Result<libc::c_int, u8> {
        // -1 on kernels without pidfd_open: then polled by waitpid.
        let pidfd = crate::sys::calls::pidfd_open(pid).unwrap_or(-1);
        let started = Instant::now();
        let give_up = |code: u8, why: String| {
            // SAFETY: our unreaped child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
                if pidfd >= 0 {
                    libc::close(pidfd);
                }
            }
            self.explain(&why);
            Err(code)
        };
        loop {
            let mut status = 0;
            // SAFETY: our child; status is a valid out pointer.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                if pidfd >= 0 {
                    // SAFETY: our descriptor.
                    unsafe { libc::close(pidfd) };
                }
                return Ok(status);
            }
            if stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed) != 0) {
                // SAFETY: our unreaped child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, std::ptr::null_mut(), 0);
                    if pidfd >= 0 {
                        libc::close(pidfd);
                    }
                }
                return Err(ABORTED);
            }
            if let Some(why) = self.server_gone(server) {
                return give_up(
                    SERVER_GONE,
                    format!(
                        "the server {why} while the client `{}` ran{}",
                        self.shown,
                        self.server_tail()
                    ),
                );
            }
            if started.elapsed() > self.client_timeout {
                return give_up(
                    TIMED_OUT,
                    format!(
                        "the client `{}` ran longer than {} ms (client_timeout_ms): killed as \
                         hung; check that it reaches the server{}",
                        self.shown,
                        self.client_timeout.as_millis(),
                        self.server_tail()
                    ),
                );
            }
            if pidfd >= 0 {
                let mut p = libc::pollfd {
                    fd: pidfd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut p, 1, WATCH.as_millis() as libc::c_int) };
            } else {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Why the server is gone (exited, killed), or None while it runs.
    fn server_gone(&self, pid: libc::pid_t) -> Option<String> {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return Some("exited".to_string());
        };
        let fields = stat_fields(&stat)?;
        if fields.first() != Some(&"Z") && fields.first() != Some(&"X") {
            return None;
        }
        // Field 52, exit_code, in waitpid's format (fields[0] is field 3).
        let code: Option<i32> = fields.get(49).and_then(|c| c.parse().ok());
        Some(match code {
            Some(c) if libc::WIFEXITED(c) => format!("exited with status {}", libc::WEXITSTATUS(c)),
            Some(c) if libc::WIFSIGNALED(c) => {
                format!("was killed by signal {}", libc::WTERMSIG(c))
            }
            _ => "exited".to_string(),
        })
    }

    /// "; the end of the server's output: ..." when it said anything.
    fn server_tail(&self) -> String {
        if self.show_output {
            return " (see its output above)".to_string();
        }
        match tail_of(&self.server_output_file) {
            Some(t) if !t.trim().is_empty() => {
                format!("; the end of the server's output:\n{}", t.trim_end())
            }
            _ => " (the server printed nothing)".to_string(),
        }
    }

    fn explain(&self, why: &str) {
        let _ = std::fs::write(&self.error_file, why);
    }
}
