//! Machine safety for system-scope mechanisms: a lock, a journal, and
//! guarded application that always puts the machine back.
//!
//! A run that changes machine-wide state (audit rules, an LSM mode) holds
//! [`StateLock`], an exclusive `flock` on `lock` in [`state_dir`], for its
//! whole duration, so two secperf processes never interleave changes; the
//! lock file names the holder's pid for the message the second one gets.
//! Each arm of a pair goes through [`StateLock::apply`]:
//!
//! 1. the mechanism takes a snapshot of the current state;
//! 2. a journal entry with the snapshot is written and fsynced
//!    (`journal.json`, see [`journal`]) *before* anything changes;
//! 3. the arm is applied; if that fails, the snapshot is restored at once;
//! 4. the returned [`Applied`] guard restores the snapshot when dropped (at
//!    the end of the arm, on an error, or while a panic unwinds) and then
//!    removes the journal entry. A failed restore is printed loudly and the
//!    entry is kept, so `secperf restore` can try again.
//!
//! What no guard can cover (SIGKILL, a crash, power loss) the journal does:
//! [`recover_at_start`] runs at every secperf start and, when a journal
//! exists and no live secperf holds the lock (a dead process's `flock` is
//! gone with it), restores every entry through the mechanism registry and
//! removes the journal. (Tasks a killed secperf had forked share its lock
//! until they die with it; when the pid in the lock file is gone, recovery
//! waits a few seconds for them.) `secperf restore` ([`restore_command`])
//! does the same on request, waiting for the lock. Restores are idempotent,
//! so an interrupted recovery can simply run again.
//!
//! Measuring itself is serialised by a second lock, [`MeasureLock`]
//! (`measure.lock` beside `lock`), which every measuring command takes
//! first, whatever it measures; see [`measure_lock`].
//!
//! The internal functions take the state directory as a `&Path` (and the
//! recovery a lookup function), so tests use a temporary directory and a
//! fake mechanism without touching process-wide environment variables.

pub mod journal;
pub mod measure_lock;

pub use measure_lock::MeasureLock;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use crate::mechanisms::{Arm, Mechanism, Scope, SystemEnv, Treatment};
use journal::JournalEntry;

/// How long `secperf restore` waits for a running secperf.
pub const RESTORE_WAIT: Duration = Duration::from_secs(10);

/// Finds a mechanism by its journal name (the registry, or a test's fake).
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<&'static dyn Mechanism>;

/// The registry lookup.
fn registry(name: &str) -> Option<&'static dyn Mechanism> {
    crate::mechanisms::find(name)
}

/// Where the lock and the journal live: `$SECPERF_STATE_DIR` when set,
/// else `/run/secperf` for root (tmpfs, like the state it guards: a reboot
/// resets both), else `$XDG_RUNTIME_DIR/secperf` or `/tmp/secperf-<uid>`.
pub fn state_dir() -> PathBuf {
    // SAFETY: geteuid cannot fail and has no side effects.
    let uid = unsafe { libc::geteuid() };
    state_dir_from(|k| std::env::var_os(k), uid)
}

/// [`state_dir`] from an environment lookup and an effective uid.
fn state_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>, uid: u32) -> PathBuf {
    let set = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("SECPERF_STATE_DIR") {
        return dir;
    }
    if uid == 0 {
        return PathBuf::from("/run/secperf");
    }
    match set("XDG_RUNTIME_DIR") {
        Some(run) => run.join("secperf"),
        None => PathBuf::from(format!("/tmp/secperf-{uid}")),
    }
}

/// Creates the state directory (mode 0700) when missing.
fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| {
            format!(
                "creating the state directory {} (set SECPERF_STATE_DIR to a writable directory)",
                dir.display()
            )
        })
}

/// Exclusive right to change system state, held for a whole run.
pub struct StateLock {
    /// The locked file; closing it (drop, or the process dying) unlocks.
    file: File,
    dir: PathBuf,
    /// Serialises journal updates between threads of this process.
    journal_mu: Mutex<()>,
}

impl std::fmt::Debug for StateLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateLock").field("dir", &self.dir).finish()
    }
}

impl StateLock {
    /// Waits up to `wait` for another secperf to finish; then errors with
    /// a message naming the holder's pid.
    pub fn acquire(wait: Duration) -> Result<StateLock> {
        Self::acquire_in(&state_dir(), wait)
    }

    /// [`StateLock::acquire`] in `dir`.
    pub(crate) fn acquire_in(dir: &Path, wait: Duration) -> Result<StateLock> {
        let file = open_lock_file(dir)?;
        let deadline = Instant::now() + wait;
        while !try_flock(&file, dir)? {
            let now = Instant::now();
            if now >= deadline {
                let holder = read_holder(dir).map_or("unknown".to_string(), |p| p.to_string());
                bail!(
                    "another secperf (pid {holder}) is changing system state; wait for it or \
                     stop it (lock {}, waited {:.1} s)",
                    dir.join("lock").display(),
                    wait.as_secs_f64()
                );
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
        }
        Self::locked(file, dir)
    }

    /// The lock if nobody holds it, else `None`. Never waits.
    fn try_acquire_in(dir: &Path) -> Result<Option<StateLock>> {
        let file = open_lock_file(dir)?;
        if try_flock(&file, dir)? {
            Ok(Some(Self::locked(file, dir)?))
        } else {
            Ok(None)
        }
    }

    /// Records the holder's pid in the locked file.
    fn locked(mut file: File, dir: &Path) -> Result<StateLock> {
        let pid = format!("{}\n", std::process::id());
        file.set_len(0)
            .and_then(|()| file.write_all(pid.as_bytes()))
            .with_context(|| format!("writing the pid to {}", dir.join("lock").display()))?;
        Ok(StateLock {
            file,
            dir: dir.to_path_buf(),
            journal_mu: Mutex::new(()),
        })
    }

    /// The state directory this lock guards.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Applies one arm of a system-scope mechanism: snapshot, journal
    /// entry written and fsynced, then `apply_system`. If applying fails,
    /// the snapshot is restored at once. The guard restores on drop.
    pub fn apply<'a>(&'a self, t: &Treatment, arm: Arm, env: &SystemEnv) -> Result<Applied<'a>> {
        let m = t.mechanism;
        if m.scope() != Scope::System {
            bail!(
                "{} is a worker-scope mechanism; only system-scope ones are applied through \
                 the state lock",
                m.name()
            );
        }
        let snapshot = m
            .snapshot()
            .with_context(|| format!("{}: taking a snapshot of the current state", m.name()))?;
        let entry = JournalEntry {
            mechanism: m.name().to_string(),
            snapshot,
            pid: std::process::id(),
            started_at: chrono::Utc::now(),
        };
        self.journal_push(&entry).with_context(|| {
            format!(
                "{}: journalling the snapshot before changing anything (nothing was changed)",
                m.name()
            )
        })?;
        let applied = Applied {
            lock: self,
            mechanism: m,
            entry,
            done: false,
        };
        let arm_name = match arm {
            Arm::Baseline => "baseline",
            Arm::Treatment => "treatment",
        };
        if let Err(e) = m.apply_system(t, arm, env) {
            return Err(match applied.restore() {
                Ok(()) => e.context(format!(
                    "applying the {arm_name} arm of {t} (the previous state was restored)"
                )),
                Err(r) => anyhow!(
                    "applying the {arm_name} arm of {t} failed: {e:#}; restoring the previous \
                     state failed too: {r:#}"
                ),
            });
        }
        Ok(applied)
    }

    /// Adds an entry to the journal.
    fn journal_push(&self, entry: &JournalEntry) -> Result<()> {
        let _g = self.journal_mu.lock().unwrap_or_else(|e| e.into_inner());
        let mut entries = journal::read(&self.dir)?;
        entries.push(entry.clone());
        journal::write(&self.dir, &entries)
    }

    /// Removes an entry from the journal (the journal goes when empty).
    fn journal_remove(&self, entry: &JournalEntry) -> Result<()> {
        let _g = self.journal_mu.lock().unwrap_or_else(|e| e.into_inner());
        let mut entries = journal::read(&self.dir)?;
        entries.retain(|e| !e.same(entry));
        journal::write(&self.dir, &entries)
    }

    /// Restores `entry`'s snapshot and, when that worked, removes the
    /// entry. A panicking restore counts as a failed one.
    fn restore_entry(&self, m: &'static dyn Mechanism, entry: &JournalEntry) -> Result<()> {
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.restore(&entry.snapshot)));
        match outcome {
            Ok(Ok(())) => self.journal_remove(entry).with_context(|| {
                format!(
                    "{} was restored, but its journal entry could not be removed",
                    entry.mechanism
                )
            }),
            Ok(Err(e)) => Err(e),
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_string());
                Err(anyhow!("the restore panicked: {msg}"))
            }
        }
    }
}

impl Drop for StateLock {
    fn drop(&mut self) {
        // The lock goes with the file; the pid left in it is harmless (the
        // next holder overwrites it) but would mislead someone reading it.
        let _ = self.file.set_len(0);
        // Unlocked explicitly: a task forked without exec shares this open
        // file description and would otherwise keep the flock for as long
        // as it lives (see measure_lock).
        let _ = self.file.unlock();
    }
}

/// Opens (creating) the lock file in `dir`.
fn open_lock_file(dir: &Path) -> Result<File> {
    ensure_dir(dir)?;
    let path = dir.join("lock");
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("opening the state lock {}", path.display()))
}

/// `flock(LOCK_EX | LOCK_NB)`: true when taken, false when another open
/// file description holds it.
fn try_flock(file: &File, dir: &Path) -> Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("flock(LOCK_EX) on {}", dir.join("lock").display()))
        }
    }
}

/// The pid the holder wrote into the lock file.
fn read_holder(dir: &Path) -> Option<u32> {
    std::fs::read_to_string(dir.join("lock"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// One applied arm. Dropping it restores the snapshot and clears its
/// journal entry; [`Applied::restore`] does the same and returns errors.
pub struct Applied<'a> {
    lock: &'a StateLock,
    mechanism: &'static dyn Mechanism,
    entry: JournalEntry,
    done: bool,
}

impl std::fmt::Debug for Applied<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applied")
            .field("mechanism", &self.entry.mechanism)
            .field("started_at", &self.entry.started_at)
            .finish()
    }
}

impl Applied<'_> {
    /// The mechanism's name.
    pub fn mechanism(&self) -> &'static str {
        self.mechanism.name()
    }

    /// Restores now; on failure the journal keeps the snapshot and the
    /// error says to run `secperf restore`.
    pub fn restore(mut self) -> Result<()> {
        self.done = true;
        self.lock
            .restore_entry(self.mechanism, &self.entry)
            .with_context(|| {
                format!(
                    "FAILED to restore {}; the journal {} keeps the snapshot: fix the cause and \
                     run `secperf restore`",
                    self.mechanism.name(),
                    journal::path(&self.lock.dir).display()
                )
            })
    }
}

impl Drop for Applied<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        if let Err(e) = self.lock.restore_entry(self.mechanism, &self.entry) {
            crate::say!(
                "secperf: FAILED to restore {}: {e:#}; run `secperf restore`",
                self.mechanism.name()
            );
        }
    }
}

/// Called at every secperf start (one `stat` when there is no journal):
/// when a journal exists and no live secperf holds the lock, restores
/// every entry through the registry and removes the journal. Returns what
/// it restored, for a message on stderr.
pub fn recover_at_start() -> Result<Vec<String>> {
    recover_in(&state_dir(), &registry)
}

/// Called at every start after [`recover_at_start`]: with the journal
/// empty (nothing a killed run changed is still in effect), removes the
/// scratch directories of measurements that were killed
/// ([`crate::runner::scratch::sweep`]). Returns them, for a message on
/// stderr.
pub fn sweep_scratch_at_start() -> Vec<PathBuf> {
    let dir = state_dir();
    if journal::path(&dir).exists() {
        return Vec::new();
    }
    crate::runner::scratch::sweep(&dir.join(crate::runner::scratch::RECORDS))
}

/// [`recover_at_start`] in `dir` with mechanisms from `lookup`.
fn recover_in(dir: &Path, lookup: Lookup) -> Result<Vec<String>> {
    recover_waiting(dir, lookup, ORPHAN_WAIT)
}

/// [`recover_in`], waiting up to `orphan_wait` for the tasks of a killed
/// secperf to let go of the lock.
fn recover_waiting(dir: &Path, lookup: Lookup, orphan_wait: Duration) -> Result<Vec<String>> {
    if !journal::path(dir).exists() {
        // Also the case of a user who cannot create the directory: then
        // nothing could have been changed.
        return Ok(Vec::new());
    }
    if let Some(lock) = StateLock::try_acquire_in(dir)? {
        return recover_locked(&lock, lookup);
    }
    // Held. By a live secperf at work (its journal is its own business),
    // or by the tasks a killed secperf had forked: they share its lock's
    // open file description and die with it (PR_SET_PDEATHSIG), which
    // takes a moment.
    let holder = read_holder(dir);
    if holder.is_none_or(pid_alive) {
        return Ok(Vec::new());
    }
    match StateLock::acquire_in(dir, orphan_wait) {
        Ok(lock) => recover_locked(&lock, lookup),
        Err(_) => bail!(
            "a secperf (pid {}) was killed while it had changed system state, and processes \
             it started still hold {}; stop them, then run `secperf restore`",
            holder.unwrap_or_default(),
            dir.join("lock").display()
        ),
    }
}

/// How long recovery waits for the tasks of a killed secperf to exit.
const ORPHAN_WAIT: Duration = Duration::from_secs(3);

/// Whether `pid` is a running process (not gone, not a zombie).
fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| !matches!(state, "Z" | "X" | "x")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        // No /proc to read: ask the kernel whether the pid exists.
        Err(_) => {
            // SAFETY: kill with signal 0 only checks for existence and
            // permission; it sends nothing.
            let ret = unsafe { libc::kill(pid as libc::pid_t, 0) };
            ret == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        }
    }
}

/// Restores every journal entry, newest first, holding `lock`. Entries
/// that restore are removed; the others stay for another attempt.
fn recover_locked(lock: &StateLock, lookup: Lookup) -> Result<Vec<String>> {
    let entries = journal::read(&lock.dir)?;
    let mut restored = Vec::new();
    let mut failed = Vec::new();
    for entry in entries.iter().rev() {
        let Some(m) = lookup(&entry.mechanism) else {
            failed.push(format!(
                "{}: no such mechanism in this secperf (was the journal written by another \
                 version?)",
                entry.describe()
            ));
            continue;
        };
        match lock.restore_entry(m, entry) {
            Ok(()) => restored.push(entry.describe()),
            Err(e) => failed.push(format!("{}: {e:#}", entry.describe())),
        }
    }
    if failed.is_empty() {
        return Ok(restored);
    }
    let done = if restored.is_empty() {
        String::new()
    } else {
        format!(" (restored: {})", restored.join(", "))
    };
    bail!(
        "FAILED to restore {}{done}; the journal {} keeps the snapshots: fix the cause and run \
         `secperf restore` again",
        failed.join("; "),
        journal::path(&lock.dir).display()
    )
}

/// `secperf restore`: takes the lock (waiting up to 10 s for a running
/// secperf), restores whatever the journal lists, and says what it did.
pub fn restore_command(json: bool) -> Result<()> {
    let dir = state_dir();
    if !journal::path(&dir).exists() {
        return report_restored(&dir, &[], json);
    }
    let lock = StateLock::acquire_in(&dir, RESTORE_WAIT)?;
    let restored = recover_locked(&lock, &registry)?;
    drop(lock);
    // Undone: the scratch directories of the killed run can go now.
    for d in sweep_scratch_at_start() {
        crate::say!(
            "secperf: removed {}, the scratch directory of an earlier run that was killed",
            d.display()
        );
    }
    report_restored(&dir, &restored, json)
}

/// Prints the outcome of `secperf restore`.
fn report_restored(dir: &Path, restored: &[String], json: bool) -> Result<()> {
    if json {
        let doc = serde_json::json!({
            "state_dir": dir,
            "restored": restored,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else if restored.is_empty() {
        println!("nothing to restore");
    } else {
        for r in restored {
            println!("restored {r}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
