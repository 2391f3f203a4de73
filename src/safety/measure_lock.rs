//! One measurement at a time on a machine.
//!
//! Two measurements running side by side share the CPUs, the caches and
//! the memory bandwidth, so each would report the other's interference as
//! overhead. Every measuring command (`run`, `overhead`, `suite`,
//! `calibrate`, and a command workload through `run`/`overhead`) therefore
//! holds [`MeasureLock`], an exclusive `flock` on `measure.lock` in the
//! state directory ([`super::state_dir`]), from the moment its arguments
//! are checked until its results are stored. A second one waits, saying on
//! stderr whom it waits for (pid, command line, since when) and, every
//! 10 s, that it still does; with `--no-wait` it fails at once with exit
//! code 2 and the same description, so a script can retry later.
//! Read-only commands (`list`, `probe`, `results`, `compare`, `report`,
//! `completions`, `man`) never take it; `restore` takes only the state
//! lock.
//!
//! It is a separate lock from [`super::StateLock`], always taken first:
//! the state lock keeps its meaning (who may change system state, and
//! whether a journal belongs to a live process), and since every holder of
//! the state lock either holds the measurement lock already or never asks
//! for it (`restore`, the recovery at start), no two processes can wait on
//! each other.
//!
//! The holder writes its pid, command line and start time into the locked
//! file (one JSON object) and empties it when it lets go. `flock` is
//! released by the kernel when the holder's last descriptor closes, so a
//! SIGKILLed holder leaves no stale lock: its forked tasks share the
//! descriptor only until they die with it (PR_SET_PDEATHSIG), a moment
//! later, and a waiter takes over at once. A holder that lets go
//! unlocks explicitly (`LOCK_UN`), so a forked task that outlives the
//! lock (or another thread's child, in the tests) does not keep it.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::UsageError;

/// The lock file's name in the state directory.
pub const FILE_NAME: &str = "measure.lock";

/// How often a waiter says it still waits.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// How often a waiter tries the lock.
const POLL: Duration = Duration::from_millis(50);

/// Who holds the measurement lock, as written into the lock file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    /// The command line as typed (`secperf overhead ...`).
    pub command: String,
    pub since: DateTime<Utc>,
}

impl Holder {
    /// "pid 123 (`secperf run -w getppid`), measuring since 12:00:01 UTC
    /// (5 s ago)", and whether the pid is gone while its tasks finish.
    pub fn describe(&self, now: DateTime<Utc>) -> String {
        let ago = (now - self.since).num_seconds().max(0);
        let gone = if super::pid_alive(self.pid) {
            ""
        } else {
            "; it has exited and its tasks are finishing"
        };
        format!(
            "pid {} (`{}`), measuring since {} ({ago} s ago){gone}",
            self.pid,
            self.command,
            self.since.format("%Y-%m-%d %H:%M:%S UTC")
        )
    }
}

/// The right to measure on this machine, held for a whole run; dropping it
/// (or the process dying) lets the next one go.
pub struct MeasureLock {
    /// The locked file; closing it unlocks.
    file: File,
    path: PathBuf,
}

impl std::fmt::Debug for MeasureLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeasureLock")
            .field("path", &self.path)
            .finish()
    }
}

impl MeasureLock {
    /// Takes the lock in the state directory for `command`, waiting for
    /// another measurement (saying so on stderr) unless `no_wait`, which
    /// fails at once with a usage error (exit code 2) naming the holder.
    pub fn acquire(command: &str, no_wait: bool) -> Result<MeasureLock> {
        Self::acquire_in(&super::state_dir(), command, no_wait, &mut |msg| {
            crate::say!("secperf: {msg}")
        })
    }

    /// [`MeasureLock::acquire`] in `dir`, telling `say` what it waits for.
    pub(crate) fn acquire_in(
        dir: &Path,
        command: &str,
        no_wait: bool,
        say: &mut dyn FnMut(&str),
    ) -> Result<MeasureLock> {
        let path = dir.join(FILE_NAME);
        let file = open_lock_file(dir, &path)?;
        let started = Instant::now();
        // What was last said, and when.
        let mut said: Option<(Instant, Option<Holder>)> = None;
        loop {
            if try_flock(&file, &path)? {
                return Self::locked(file, path, command);
            }
            let holder = read_holder_settled(&path);
            let who = holder.as_ref().map_or_else(
                || "another secperf (it has not recorded itself yet)".to_string(),
                |h| h.describe(Utc::now()),
            );
            if no_wait {
                return Err(UsageError::new(format!(
                    "another measurement is running: {who}; measurements on one machine would \
                     disturb each other, so they take turns: retry when it has finished, or \
                     leave out --no-wait to wait for it (lock {})",
                    path.display()
                ))
                .into());
            }
            match &said {
                None => {
                    say(&format!(
                        "waiting for another measurement to finish: {who} (--no-wait fails \
                         instead of waiting)"
                    ));
                    said = Some((Instant::now(), holder));
                }
                Some((_, before)) if holder.is_some() && holder != *before => {
                    say(&format!("now waiting for {who}"));
                    said = Some((Instant::now(), holder));
                }
                Some((at, _)) if at.elapsed() >= PROGRESS_EVERY => {
                    let pid = holder
                        .as_ref()
                        .map_or_else(|| "another secperf".into(), |h| format!("pid {}", h.pid));
                    say(&format!(
                        "still waiting for {pid} ({:.0} s so far)",
                        started.elapsed().as_secs_f64()
                    ));
                    said = Some((Instant::now(), holder));
                }
                Some(_) => {}
            }
            std::thread::sleep(POLL);
        }
    }

    /// Records the holder in the locked file.
    fn locked(file: File, path: PathBuf, command: &str) -> Result<MeasureLock> {
        let holder = Holder {
            pid: std::process::id(),
            command: command.to_string(),
            since: Utc::now(),
        };
        let mut text = serde_json::to_string(&holder)?;
        text.push('\n');
        file.set_len(0)
            .and_then(|()| file.write_all_at(text.as_bytes(), 0))
            .with_context(|| format!("recording this secperf in {}", path.display()))?;
        Ok(MeasureLock { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for MeasureLock {
    fn drop(&mut self) {
        // The holder left in the file would mislead.
        let _ = self.file.set_len(0);
        // Unlocked explicitly, not by closing: a task forked without exec
        // (a worker, or another thread's child in the tests) shares this
        // open file description, and `flock` holds until its last
        // descriptor closes, so closing ours alone would leave the lock
        // held for as long as such a task lives. LOCK_UN on any duplicate
        // releases it for all.
        let _ = self.file.unlock();
    }
}

/// Who holds the lock in `dir` now, if anyone recorded it.
pub fn holder_in(dir: &Path) -> Option<Holder> {
    read_holder(&dir.join(FILE_NAME))
}

fn read_holder(path: &Path) -> Option<Holder> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(text.trim()).ok()
}

/// [`read_holder`], giving a holder that has just taken the lock a moment
/// to write itself down.
fn read_holder_settled(path: &Path) -> Option<Holder> {
    for _ in 0..10 {
        if let Some(h) = read_holder(path) {
            return Some(h);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Opens (creating) the lock file.
fn open_lock_file(dir: &Path, path: &Path) -> Result<File> {
    super::ensure_dir(dir)?;
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("opening the measurement lock {}", path.display()))
}

/// `flock(LOCK_EX | LOCK_NB)`: true when taken.
fn try_flock(file: &File, path: &Path) -> Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("flock(LOCK_EX) on {}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_taker_fails_with_no_wait_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = MeasureLock::acquire_in(dir.path(), "secperf run -w x", false, &mut |_| {
            panic!("nothing to wait for")
        })
        .unwrap();
        let h = holder_in(dir.path()).unwrap();
        assert_eq!(h.pid, std::process::id());
        assert_eq!(h.command, "secperf run -w x");
        let e = MeasureLock::acquire_in(dir.path(), "second", true, &mut |_| {}).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("pid {}", std::process::id()))
                && msg.contains("secperf run -w x")
                && msg.contains("--no-wait"),
            "{msg}"
        );
        drop(first);
        assert_eq!(holder_in(dir.path()), None, "emptied on release");
        MeasureLock::acquire_in(dir.path(), "third", true, &mut |_| {}).unwrap();
    }

    #[test]
    fn a_forked_child_that_outlives_the_holder_does_not_keep_the_lock() {
        // The flake CI met on a fresh machine: another test's thread
        // forked a task (without exec) while this lock was open; the task
        // shared the open file description, and closing ours alone left
        // the flock held.
        let dir = tempfile::tempdir().unwrap();
        let first = MeasureLock::acquire_in(dir.path(), "first", true, &mut |_| {}).unwrap();
        // SAFETY: the child calls only async-signal-safe functions (sleep,
        // _exit) and is killed below.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: as above.
            unsafe {
                libc::sleep(30);
                libc::_exit(0);
            }
        }
        drop(first);
        let taken = MeasureLock::acquire_in(dir.path(), "second", true, &mut |_| {});
        // SAFETY: pid is our own child; kill and reap it before asserting.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        taken.expect("the lock is free once its holder let go, whatever its forks hold");
    }

    #[test]
    fn a_waiter_says_whom_it_waits_for_once_and_goes_when_released() {
        let dir = tempfile::tempdir().unwrap();
        let first = MeasureLock::acquire_in(dir.path(), "first", false, &mut |_| {}).unwrap();
        let d = dir.path().to_path_buf();
        let waiter = std::thread::spawn(move || {
            let mut said = Vec::new();
            let lock =
                MeasureLock::acquire_in(&d, "second", false, &mut |m| said.push(m.to_string()));
            (lock.map(|_| ()), said)
        });
        std::thread::sleep(Duration::from_millis(300));
        drop(first);
        let (lock, said) = waiter.join().unwrap();
        lock.unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("waiting for another measurement"),
            "{said:?}"
        );
        assert!(said[0].contains("`first`"), "{said:?}");
    }
}
