//! Tests of the lock, the journal and guarded application, with a fake
//! system-scope mechanism whose "machine state" is a file in a temporary
//! directory. Each test has its own state directory, passed explicitly, so
//! they run in parallel without touching environment variables.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use super::*;
use crate::mechanisms::{Availability, VariantDef};
use crate::model::Params;

/// A system mechanism whose state is the text of `state`.
struct Fake {
    state: PathBuf,
    /// The state directory, to look at the journal from inside apply.
    dir: PathBuf,
    fail_apply: AtomicBool,
    fail_restore: AtomicBool,
    panic_restore: AtomicBool,
    /// What apply saw in the journal, one line per call.
    seen: Mutex<Vec<String>>,
}

impl Fake {
    /// A fresh fake with state "original", leaked to be `'static` as
    /// registry entries are.
    fn new(dir: &Path) -> &'static Fake {
        let state = dir.join("fake-state");
        std::fs::write(&state, "original").unwrap();
        Box::leak(Box::new(Fake {
            state,
            dir: dir.join("state"),
            fail_apply: AtomicBool::new(false),
            fail_restore: AtomicBool::new(false),
            panic_restore: AtomicBool::new(false),
            seen: Mutex::new(Vec::new()),
        }))
    }

    fn state(&self) -> String {
        std::fs::read_to_string(&self.state).unwrap()
    }

    fn treatment(&'static self) -> Treatment {
        Treatment {
            mechanism: self,
            variant: "on",
            params: Params::new(),
        }
    }
}

impl Mechanism for Fake {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn description(&self) -> &'static str {
        "a test double"
    }
    fn scope(&self) -> Scope {
        Scope::System
    }
    fn variants(&self) -> &'static [VariantDef] {
        &[VariantDef {
            name: "on",
            description: "on",
        }]
    }
    fn survey_workloads(&self) -> &'static [&'static str] {
        &[]
    }
    fn probe(&self) -> Availability {
        Availability::Available
    }
    fn snapshot(&self) -> Result<serde_json::Value> {
        Ok(serde_json::Value::String(self.state()))
    }
    fn apply_system(&self, _t: &Treatment, arm: Arm, _env: &SystemEnv) -> Result<()> {
        let entries = journal::read(&self.dir).unwrap();
        self.seen.lock().unwrap().push(format!(
            "{} entries, last {}",
            entries.len(),
            entries
                .last()
                .map_or("none".into(), |e| e.snapshot.to_string())
        ));
        std::fs::write(&self.state, "half-applied").unwrap();
        if self.fail_apply.load(Ordering::SeqCst) {
            bail!("fake apply failed");
        }
        let text = match arm {
            Arm::Baseline => "baseline",
            Arm::Treatment => "treatment",
        };
        std::fs::write(&self.state, text).unwrap();
        Ok(())
    }
    fn restore(&self, snapshot: &serde_json::Value) -> Result<()> {
        if self.panic_restore.load(Ordering::SeqCst) {
            panic!("fake restore panicked");
        }
        if self.fail_restore.load(Ordering::SeqCst) {
            bail!("fake restore failed");
        }
        std::fs::write(&self.state, snapshot.as_str().unwrap()).unwrap();
        Ok(())
    }
}

/// A temporary directory and its `state` subdirectory (not yet created).
fn dirs() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    (tmp, state)
}

fn env() -> SystemEnv<'static> {
    SystemEnv {
        workload: crate::workloads::find("getppid").unwrap(),
    }
}

/// A lookup that knows only `fake`.
fn only(fake: &'static Fake) -> impl Fn(&str) -> Option<&'static dyn Mechanism> {
    move |name| (name == "fake").then_some(fake as &'static dyn Mechanism)
}

/// The pid of a process that has exited.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A journal as a killed secperf would leave it.
fn leave_journal(dir: &Path, snapshot: &str) {
    std::fs::create_dir_all(dir).unwrap();
    journal::write(
        dir,
        &[JournalEntry {
            mechanism: "fake".into(),
            snapshot: serde_json::Value::String(snapshot.into()),
            pid: dead_pid(),
            started_at: chrono::Utc::now(),
        }],
    )
    .unwrap();
}

#[test]
fn journal_is_written_before_apply_and_cleared_on_drop() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    let lock = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    let applied = lock
        .apply(&fake.treatment(), Arm::Treatment, &env())
        .unwrap();
    assert_eq!(applied.mechanism(), "fake");
    assert_eq!(*fake.seen.lock().unwrap(), ["1 entries, last \"original\""]);
    assert_eq!(fake.state(), "treatment");
    let entries = journal::read(&dir).unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].pid, std::process::id());
    assert_eq!(entries[0].mechanism, "fake");
    drop(applied);
    assert_eq!(fake.state(), "original");
    assert!(!journal::path(&dir).exists(), "journal removed when empty");
}

#[test]
fn explicit_restore_clears_and_both_arms_work() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    let lock = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    for (arm, text) in [(Arm::Baseline, "baseline"), (Arm::Treatment, "treatment")] {
        let applied = lock.apply(&fake.treatment(), arm, &env()).unwrap();
        assert_eq!(fake.state(), text);
        applied.restore().unwrap();
        assert_eq!(fake.state(), "original");
        assert!(!journal::path(&dir).exists());
    }
}

#[test]
fn failed_apply_restores_at_once() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    fake.fail_apply.store(true, Ordering::SeqCst);
    let lock = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    let err = lock
        .apply(&fake.treatment(), Arm::Treatment, &env())
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("fake apply failed"), "{msg}");
    assert!(msg.contains("previous state was restored"), "{msg}");
    assert_eq!(fake.state(), "original");
    assert!(!journal::path(&dir).exists());
}

#[test]
fn failed_apply_and_failed_restore_keep_the_journal() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    fake.fail_apply.store(true, Ordering::SeqCst);
    fake.fail_restore.store(true, Ordering::SeqCst);
    let lock = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    let msg = format!(
        "{:#}",
        lock.apply(&fake.treatment(), Arm::Treatment, &env())
            .unwrap_err()
    );
    assert!(msg.contains("fake apply failed"), "{msg}");
    assert!(msg.contains("fake restore failed"), "{msg}");
    assert!(msg.contains("secperf restore"), "{msg}");
    assert_eq!(fake.state(), "half-applied");
    assert_eq!(journal::read(&dir).unwrap().len(), 1);
    // Once the cause is fixed, recovery (as `secperf restore`) finishes.
    fake.fail_restore.store(false, Ordering::SeqCst);
    let restored = recover_locked(&lock, &only(fake)).unwrap();
    assert_eq!(restored.len(), 1);
    assert_eq!(fake.state(), "original");
    assert!(!journal::path(&dir).exists());
}

#[test]
fn failed_restore_on_explicit_restore_and_on_drop() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    let lock = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    fake.fail_restore.store(true, Ordering::SeqCst);
    let applied = lock
        .apply(&fake.treatment(), Arm::Treatment, &env())
        .unwrap();
    let msg = format!("{:#}", applied.restore().unwrap_err());
    assert!(msg.contains("FAILED to restore fake"), "{msg}");
    assert!(msg.contains("run `secperf restore`"), "{msg}");
    assert_eq!(journal::read(&dir).unwrap().len(), 1, "journal kept");
    // Drop prints instead of panicking, and keeps its entry too.
    let applied = lock
        .apply(&fake.treatment(), Arm::Baseline, &env())
        .unwrap();
    drop(applied);
    assert_eq!(journal::read(&dir).unwrap().len(), 2);
    fake.fail_restore.store(false, Ordering::SeqCst);
    assert_eq!(recover_locked(&lock, &only(fake)).unwrap().len(), 2);
    assert_eq!(
        fake.state(),
        "original",
        "newest first: the oldest snapshot last"
    );
}

#[test]
fn a_panicking_restore_is_an_error_not_a_panic() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    let lock = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    let applied = lock
        .apply(&fake.treatment(), Arm::Treatment, &env())
        .unwrap();
    fake.panic_restore.store(true, Ordering::SeqCst);
    let msg = format!("{:#}", applied.restore().unwrap_err());
    assert!(msg.contains("fake restore panicked"), "{msg}");
    fake.panic_restore.store(false, Ordering::SeqCst);
    recover_locked(&lock, &only(fake)).unwrap();
    assert_eq!(fake.state(), "original");
}

#[test]
fn guard_restores_while_a_panic_unwinds() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    let lock = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _applied = lock
            .apply(&fake.treatment(), Arm::Treatment, &env())
            .unwrap();
        assert_eq!(fake.state(), "treatment");
        panic!("measurement failed");
    }));
    assert!(result.is_err());
    assert_eq!(fake.state(), "original");
    assert!(!journal::path(&dir).exists());
}

#[test]
fn recovery_restores_a_journal_left_behind_and_is_idempotent() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    std::fs::write(&fake.state, "treatment").unwrap();
    leave_journal(&dir, "original");
    let restored = recover_in(&dir, &only(fake)).unwrap();
    assert_eq!(restored.len(), 1);
    assert!(
        restored[0].starts_with("fake (changed by pid "),
        "{restored:?}"
    );
    assert_eq!(fake.state(), "original");
    assert!(!journal::path(&dir).exists());
    // Nothing left: nothing to do.
    assert_eq!(recover_in(&dir, &only(fake)).unwrap(), Vec::<String>::new());
    // A recovery interrupted after restoring but before clearing runs again
    // harmlessly.
    leave_journal(&dir, "original");
    assert_eq!(recover_in(&dir, &only(fake)).unwrap().len(), 1);
    assert_eq!(fake.state(), "original");
}

#[test]
fn recovery_leaves_a_live_holder_alone() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    let held = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    leave_journal(&dir, "something");
    assert_eq!(recover_in(&dir, &only(fake)).unwrap(), Vec::<String>::new());
    assert!(journal::path(&dir).exists());
    assert_eq!(fake.state(), "original");
    drop(held);
    // Tasks forked meanwhile by other tests in this process inherit the
    // locked descriptor until they exit (flock follows the open file
    // description), so the lock may stay held for a moment. The limit only
    // stops a hang.
    let limit = Duration::from_secs(120);
    let deadline = Instant::now() + limit;
    let restored = loop {
        let r = recover_in(&dir, &only(fake)).unwrap();
        if !r.is_empty() || Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        restored.len(),
        1,
        "nothing was restored once the holder let go (gave up after {limit:?})"
    );
    assert_eq!(fake.state(), "something");
}

/// Holds the lock in `dir` as the forked tasks of a killed secperf do: a
/// separate open file description, with the dead parent's pid in the file.
fn hold_as_orphans(dir: &Path) -> std::fs::File {
    let f = open_lock_file(dir).unwrap();
    assert!(try_flock(&f, dir).unwrap());
    std::fs::write(dir.join("lock"), format!("{}\n", dead_pid())).unwrap();
    f
}

#[test]
fn recovery_waits_for_the_tasks_of_a_killed_secperf() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    leave_journal(&dir, "something");
    let orphans = hold_as_orphans(&dir);
    let exit = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        drop(orphans);
    });
    // Generous: recovery goes on as soon as the orphans let go.
    let restored = recover_waiting(&dir, &only(fake), Duration::from_secs(120)).unwrap();
    exit.join().unwrap();
    assert_eq!(restored.len(), 1);
    assert_eq!(fake.state(), "something");
    assert!(!journal::path(&dir).exists());
}

#[test]
fn recovery_says_so_when_the_tasks_of_a_killed_secperf_linger() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    leave_journal(&dir, "something");
    let _orphans = hold_as_orphans(&dir);
    let err = recover_waiting(&dir, &only(fake), Duration::from_millis(100)).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("was killed"), "{msg}");
    assert!(msg.contains("secperf restore"), "{msg}");
    assert!(journal::path(&dir).exists());
    assert_eq!(fake.state(), "original");
}

#[test]
fn liveness_of_pids() {
    assert!(pid_alive(std::process::id()));
    assert!(!pid_alive(dead_pid()));
    // A zombie (exited, not yet reaped) is not alive.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let limit = Duration::from_secs(120);
    let start = Instant::now();
    while pid_alive(child.id()) && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        !pid_alive(child.id()),
        "`true` never exited, or its zombie counts as alive (gave up after {limit:?})"
    );
    child.wait().unwrap();
}

#[test]
fn recovery_without_a_journal_touches_nothing() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    // Not even the directory is created.
    assert_eq!(recover_in(&dir, &only(fake)).unwrap(), Vec::<String>::new());
    assert!(!dir.exists());
    // An unwritable place behaves the same (a user who cannot create it).
    let nowhere = Path::new("/proc/secperf-cannot-exist");
    assert_eq!(
        recover_in(nowhere, &only(fake)).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn recovery_keeps_entries_of_unknown_mechanisms() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    leave_journal(&dir, "original");
    let none = |_: &str| -> Option<&'static dyn Mechanism> { None };
    let msg = format!("{:#}", recover_in(&dir, &none).unwrap_err());
    assert!(msg.contains("no such mechanism"), "{msg}");
    assert!(msg.contains("secperf restore"), "{msg}");
    assert!(journal::path(&dir).exists());
    assert_eq!(recover_in(&dir, &only(fake)).unwrap().len(), 1);
}

#[test]
fn a_corrupt_journal_is_an_error_that_says_what_to_do() {
    let (tmp, dir) = dirs();
    let fake = Fake::new(tmp.path());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(journal::path(&dir), "{not json").unwrap();
    let msg = format!("{:#}", recover_in(&dir, &only(fake)).unwrap_err());
    assert!(msg.contains("not a valid secperf journal"), "{msg}");
    assert!(msg.contains("remove the file"), "{msg}");
}

#[test]
fn lock_contention_names_the_holder() {
    let (_tmp, dir) = dirs();
    let held = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    assert_eq!(read_holder(&dir), Some(std::process::id()));
    let start = Instant::now();
    let err = StateLock::acquire_in(&dir, Duration::from_millis(200)).unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(200));
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "another secperf (pid {}) is changing system state; wait for it or stop it",
            std::process::id()
        )),
        "{msg}"
    );
    // A waiter gets the lock once the holder lets go.
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        drop(held);
    });
    let again = StateLock::acquire_in(&dir, Duration::from_secs(5)).unwrap();
    releaser.join().unwrap();
    assert_eq!(again.dir(), dir);
}

#[test]
fn journal_entries_round_trip_and_write_atomically() {
    let (_tmp, dir) = dirs();
    std::fs::create_dir_all(&dir).unwrap();
    let entry = JournalEntry {
        mechanism: "audit".into(),
        snapshot: serde_json::json!({"enabled": 0, "rules": ["00ff"]}),
        pid: 42,
        started_at: chrono::Utc::now(),
    };
    journal::write(&dir, std::slice::from_ref(&entry)).unwrap();
    let back = journal::read(&dir).unwrap();
    assert_eq!(back, std::slice::from_ref(&entry));
    assert!(back[0].same(&entry));
    let text = std::fs::read_to_string(journal::path(&dir)).unwrap();
    for key in ["mechanism", "snapshot", "pid", "started_at"] {
        assert!(text.contains(&format!("\"{key}\"")), "{text}");
    }
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["journal.json"]);
    journal::write(&dir, &[]).unwrap();
    assert!(!journal::path(&dir).exists());
    journal::write(&dir, &[]).unwrap();
}

#[test]
fn worker_scope_mechanisms_are_refused() {
    let (_tmp, dir) = dirs();
    let lock = StateLock::acquire_in(&dir, Duration::ZERO).unwrap();
    let t = Treatment::parse("seccomp").unwrap();
    let msg = lock
        .apply(&t, Arm::Treatment, &env())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("worker-scope"), "{msg}");
    assert!(!journal::path(&dir).exists());
}

#[test]
fn state_dir_follows_the_environment() {
    use std::ffi::OsString;
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    };
    assert_eq!(
        state_dir_from(env(&[("SECPERF_STATE_DIR", "/x/y")]), 0),
        Path::new("/x/y")
    );
    assert_eq!(state_dir_from(env(&[]), 0), Path::new("/run/secperf"));
    assert_eq!(
        state_dir_from(env(&[("SECPERF_STATE_DIR", "")]), 0),
        Path::new("/run/secperf")
    );
    assert_eq!(
        state_dir_from(env(&[("XDG_RUNTIME_DIR", "/run/user/1000")]), 1000),
        Path::new("/run/user/1000/secperf")
    );
    assert_eq!(
        state_dir_from(env(&[]), 1000),
        Path::new("/tmp/secperf-1000")
    );
}
