//! The machine-safety promise, end to end: a secperf that is SIGKILLed
//! while audit is switched leaves a journal, and the next `secperf restore`
//! (or any later secperf start) puts audit back exactly as it was.
//!
//! Needs root and a usable audit subsystem; without them each test is
//! skipped (see `tests/common/skips.rs`). Audit state is read through the
//! library's own netlink code (`secperf::sys::audit`). A drop guard puts
//! the recorded state back whatever happens, so a failing assertion never
//! leaves the machine changed. The tests share one lock: both change audit.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use secperf::sys::audit::AuditState;

use common::{PutBack, audit_state, usable_audit};

const SECPERF: &str = env!("CARGO_BIN_EXE_secperf");

static SERIAL: Mutex<()> = Mutex::new(());

/// Starts `secperf overhead` on audit:unrelated-rule, waits until it is in
/// a treatment arm (journal written, audit enabled), and SIGKILLs it.
/// Returns after checking something was left to restore.
fn start_and_kill(tmp: &Path, state_dir: &Path, before: &AuditState) {
    let journal = state_dir.join("journal.json");
    let stderr_path = tmp.join("overhead.stderr");
    let mut child = Command::new(SECPERF)
        .env("SECPERF_STATE_DIR", state_dir)
        .arg("--db")
        .arg(tmp.join("results.db"))
        .args([
            "overhead",
            "-m",
            "audit:unrelated-rule",
            "-w",
            "getppid",
            "--pairs",
            "40",
            "--sample-ms",
            "100",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("starting secperf overhead");
    // The run reaches it or ends; the limit only stops a hang.
    let start = Instant::now();
    let mut in_treatment = false;
    while start.elapsed() < Duration::from_secs(300) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "secperf overhead ended ({status}) before it switched audit:\n{}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        }
        if journal.exists() && audit_state().enabled == 1 {
            in_treatment = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    assert!(
        in_treatment,
        "secperf overhead never reached a treatment arm (gave up after 300 s):\n{}",
        std::fs::read_to_string(&stderr_path).unwrap_or_default()
    );
    let after_kill = audit_state();
    assert!(
        after_kill != *before || journal.exists(),
        "after SIGKILL: audit unchanged and no journal; nothing to test"
    );
    assert!(
        journal.exists(),
        "a SIGKILLed run must leave its journal behind"
    );
}

/// Runs secperf with `args` in `state_dir`; returns stdout and stderr.
fn secperf(state_dir: &Path, db: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(SECPERF)
        .env("SECPERF_STATE_DIR", state_dir)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("running secperf");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "secperf {args:?} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    (stdout, stderr)
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let db = tmp.path().join("results.db");
    (tmp, state, db)
}

#[test]
fn restore_command_undoes_a_sigkilled_run() {
    let test = "restore_command_undoes_a_sigkilled_run";
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(before) = usable_audit(test) else {
        return;
    };
    let _put_back = PutBack(before.clone());
    let (tmp, state_dir, db) = dirs();
    start_and_kill(tmp.path(), &state_dir, &before);

    let (stdout, stderr) = secperf(&state_dir, &db, &["restore"]);
    // The restore itself, or the start-up recovery that runs before any
    // command, says what it restored.
    assert!(
        stdout.contains("restored audit") || stderr.contains("audit (changed by pid"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(audit_state(), before, "audit restored exactly");
    assert!(!state_dir.join("journal.json").exists(), "journal removed");

    // Nothing is left: a second restore says so and changes nothing.
    let (stdout, _) = secperf(&state_dir, &db, &["restore"]);
    assert!(stdout.contains("nothing to restore"), "{stdout}");
    assert_eq!(audit_state(), before);
}

#[test]
fn any_later_start_undoes_a_sigkilled_run() {
    let test = "any_later_start_undoes_a_sigkilled_run";
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(before) = usable_audit(test) else {
        return;
    };
    let _put_back = PutBack(before.clone());
    let (tmp, state_dir, db) = dirs();
    start_and_kill(tmp.path(), &state_dir, &before);

    let (_, stderr) = secperf(&state_dir, &db, &["list"]);
    assert_eq!(
        audit_state(),
        before,
        "start-up recovery (in `secperf list`) did not restore audit; stderr:\n{stderr}"
    );
    assert!(
        !state_dir.join("journal.json").exists(),
        "start-up recovery left the journal; stderr:\n{stderr}"
    );
}
