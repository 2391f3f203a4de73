//! Running one guest so that no QEMU outlives secperf: whatever ends
//! secperf (a normal exit, an error, Ctrl-C, a timeout, SIGKILL), the
//! guest's processes end with it.
//!
//! virtme-ng is a Python program that starts a shell that starts another
//! Python program that forks QEMU, so no single pid stands for the guest.
//! secperf therefore starts a small guard (`secperf vm-guard`, its own
//! binary) that puts `vng` and everything below it in a new process group,
//! and holds a pipe from secperf on its stdin. When that pipe closes
//! (secperf closed it, or the kernel did because secperf died, even by
//! SIGKILL), the guard kills the whole group. The guard ignores the
//! terminal's SIGINT: secperf decides, and says what it stopped.

use std::collections::VecDeque;
use std::io::{BufRead, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::vng;

/// Console lines kept for the error of a failed boot.
pub const TAIL_LINES: usize = 40;

/// The guard's main: runs `argv` in a new process group and kills that
/// group when stdin closes. Returns the exit code to exit with (the
/// command's, or 128 + the signal that ended it).
pub fn guard(argv: &[String]) -> Result<i32> {
    let Some((program, args)) = argv.split_first() else {
        anyhow::bail!("vm-guard: no command given");
    };
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: setting a signal's disposition to SIG_IGN has no handler
        // to run and affects only this process.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
    let stdout = std::io::stdout();
    let err_fd = std::os::fd::AsFd::as_fd(&stdout)
        .try_clone_to_owned()
        .context("vm-guard: duplicating stdout")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::from(err_fd))
        .process_group(0)
        .spawn()
        .with_context(|| format!("vm-guard: starting {program}"))?;
    let group = child.id() as i32;
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
        kill_group(group);
    });
    let status = child.wait().context("vm-guard: waiting for the guest")?;
    // QEMU may outlive a virtme-ng killed by a signal: the group goes too.
    kill_group(group);
    Ok(status.code().unwrap_or_else(|| {
        128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)
    }))
}

/// SIGKILL to every process of group `group` (none left is fine), then
/// waits (at most 10 s) until none is left, so that when the guard exits
/// no QEMU of its guest remains.
fn kill_group(group: i32) {
    // SAFETY: kill(2) with a negative pid signals that process group only;
    // no memory is involved.
    let signal = |sig| unsafe { libc::kill(-group, sig) };
    if signal(libc::SIGKILL) != 0 {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    // Signal 0 checks that the group still has a process (a killed one
    // stays until its parent, or init, reaps it).
    while signal(0) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Time limits of one guest.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Until the guest starts its command (kernel boot, virtme-ng's init).
    pub boot: Duration,
    /// Until the guest has finished, boot included.
    pub total: Duration,
    /// The longest the console may stay silent while the guest boots: a
    /// file QEMU cannot boot (a kernel's config instead of its image)
    /// prints nothing at all, and a kernel that hangs early stops printing.
    pub silent_boot: Duration,
    /// The longest the console may stay silent once secperf runs in the
    /// guest (its progress lines come at least every round).
    pub silent: Duration,
}

/// How long a guest may take, as the user set it (`--vm-timeout`,
/// `--vm-silence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// The whole guest, boot included.
    pub total: Duration,
    /// The console's silence while the guest boots.
    pub silent_boot: Duration,
}

impl Timeouts {
    /// `total`, with the default silence.
    pub fn total(total: Duration) -> Timeouts {
        Timeouts {
            total,
            silent_boot: SILENT_BOOT,
        }
    }
}

/// [`Limits::silent_boot`] by default: a boot under emulation prints its
/// first kernel messages within seconds, on a loaded host within a minute.
pub const SILENT_BOOT: Duration = Duration::from_secs(120);
/// [`Limits::silent`] by default.
pub const SILENT: Duration = Duration::from_secs(900);

/// How one guest ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Seconds from starting virtme-ng to the guest starting its command;
    /// None when it never did.
    pub boot_s: Option<f64>,
    /// Seconds from starting virtme-ng to its exit.
    pub wall_s: f64,
    /// The host's clock when virtme-ng started, and when it exited: a
    /// guest's own clock may be far from it (under icount it counts
    /// instructions), so these stamp the guest's run.
    pub host_started_at: chrono::DateTime<chrono::Utc>,
    pub host_finished_at: chrono::DateTime<chrono::Utc>,
    /// virtme-ng's exit code.
    pub vng_code: i32,
    /// The last console lines (kernel messages, virtme-ng's, the guest
    /// command's).
    pub console_tail: Vec<String>,
}

/// Why a guest was stopped before it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    Interrupted,
    BootTimeout,
    Timeout,
    /// The console printed nothing for this long (while booting when
    /// secperf had not started in the guest).
    Silent {
        for_s: u64,
        booting: bool,
    },
}

/// A running guest, and what its console said so far.
struct Running {
    guard: Child,
    lifeline: Option<std::process::ChildStdin>,
    console: Arc<Mutex<Console>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct Console {
    tail: VecDeque<String>,
    started: Option<Instant>,
    /// When the console last printed a line.
    last_line: Option<Instant>,
}

impl Running {
    /// Closes the lifeline (the guard kills the guest) and waits.
    fn stop(&mut self) {
        self.lifeline.take();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.guard.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() > deadline => {
                    let _ = self.guard.kill();
                    let _ = self.guard.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    fn tail(&mut self) -> Vec<String> {
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        self.console
            .lock()
            .map(|c| c.tail.iter().cloned().collect())
            .unwrap_or_default()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.lifeline.is_some() {
            self.stop();
        }
    }
}

/// Boots a guest with `vng ARGS` under a guard, shows what the guest
/// command writes between [`vng::START`] and [`vng::END`] on stderr, and
/// waits for it within `limits`. `stop` is polled (Ctrl-C).
pub fn run(
    vng_path: &Path,
    args: &[String],
    limits: Limits,
    stop: &AtomicBool,
) -> Result<Result<Outcome, (Stopped, Vec<String>)>> {
    let me = std::env::current_exe().context("finding secperf's own binary for the VM guard")?;
    let begun = Instant::now();
    let host_started_at = chrono::Utc::now();
    let mut guard = Command::new(me)
        .arg("vm-guard")
        .arg("--")
        .arg(vng_path)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting the VM guard (secperf vm-guard)")?;
    let lifeline = guard.stdin.take();
    let out = guard.stdout.take().expect("piped stdout");
    let console = Arc::new(Mutex::new(Console::default()));
    let reader = {
        let console = console.clone();
        std::thread::spawn(move || read_console(out, &console))
    };
    let mut running = Running {
        guard,
        lifeline,
        console,
        reader: Some(reader),
    };
    loop {
        if let Some(status) = running.guard.try_wait().context("waiting for the guest")? {
            running.lifeline.take();
            let wall_s = begun.elapsed().as_secs_f64();
            let tail = running.tail();
            let started = running.console.lock().ok().and_then(|c| c.started);
            return Ok(Ok(Outcome {
                boot_s: started.map(|t| (t - begun).as_secs_f64()),
                wall_s,
                host_started_at,
                host_finished_at: chrono::Utc::now(),
                vng_code: status.code().unwrap_or(-1),
                console_tail: tail,
            }));
        }
        let (started, last_line) = running
            .console
            .lock()
            .map(|c| (c.started, c.last_line))
            .unwrap_or_default();
        let quiet = last_line.unwrap_or(begun).elapsed();
        let silent = if started.is_some() {
            limits.silent
        } else {
            limits.silent_boot
        };
        let why = if stop.load(Ordering::Relaxed) {
            Some(Stopped::Interrupted)
        } else if started.is_none() && begun.elapsed() > limits.boot {
            Some(Stopped::BootTimeout)
        } else if begun.elapsed() > limits.total {
            Some(Stopped::Timeout)
        } else if quiet > silent {
            Some(Stopped::Silent {
                for_s: quiet.as_secs(),
                booting: started.is_none(),
            })
        } else {
            None
        };
        if let Some(why) = why {
            running.stop();
            return Ok(Err((why, running.tail())));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A line of the guest command's stream as the user sees it: secperf's own
/// as they are, a kernel message that the console printed in between
/// ("[   28.226787] audit: kauditd hold queue overflow") marked as the
/// guest kernel's.
pub fn shown_line(line: &str) -> String {
    let kernel = line
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .is_some_and(|(stamp, _)| {
            let t = stamp.trim();
            !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.')
        });
    if kernel {
        format!("secperf: guest kernel: {line}")
    } else {
        line.to_string()
    }
}

/// Reads the console: every line into the tail; the guest command's lines
/// (between the markers) also to stderr.
fn read_console(out: impl Read, console: &Mutex<Console>) {
    let mut showing = false;
    let mut reader = std::io::BufReader::new(out);
    let mut raw = Vec::new();
    loop {
        raw.clear();
        match reader.read_until(b'\n', &mut raw) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&raw)
            .trim_end_matches(['\n', '\r'])
            .to_string();
        let Ok(mut c) = console.lock() else { break };
        c.last_line = Some(Instant::now());
        if line.trim() == vng::START {
            showing = true;
            c.started.get_or_insert_with(Instant::now);
            continue;
        }
        if line.trim() == vng::END {
            showing = false;
            continue;
        }
        if showing {
            crate::say!("{}", shown_line(&line));
        }
        if c.tail.len() == TAIL_LINES {
            c.tail.pop_front();
        }
        c.tail.push_back(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_messages_between_secperf_lines_are_marked() {
        assert_eq!(
            shown_line("[   28.226787] audit: kauditd hold queue overflow"),
            "secperf: guest kernel: [   28.226787] audit: kauditd hold queue overflow"
        );
        for own in [
            "secperf: measuring getppid tasks=1",
            "[0, 1] is not a timestamp",
            "",
        ] {
            assert_eq!(shown_line(own), own);
        }
    }
}
