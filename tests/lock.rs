//! One measurement at a time, end to end: while a measuring command runs,
//! another fails at once with `--no-wait` (exit code 2, naming the first's
//! pid), waits without it (saying for whom) and then succeeds, read-only
//! commands never wait, and a SIGKILLed holder lets the waiter go at once.
//!
//! Each test has its own state directory (`SECPERF_STATE_DIR`), so the
//! tests of this file, and those of others running beside them, never wait
//! for one another.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const SECPERF: &str = env!("CARGO_BIN_EXE_secperf");

/// secperf with its own database and state directory.
fn secperf(db: &Path, state: &Path) -> Command {
    let mut c = Command::new(SECPERF);
    c.arg("--db").arg(db).env("SECPERF_STATE_DIR", state);
    c
}

/// `overhead -m none -w getppid` with the tiny design (`common::TINY`)
/// stretched to last about `pairs` x 0.4 s.
fn long_overhead(db: &Path, state: &Path, pairs: u32) -> Command {
    let mut c = secperf(db, state);
    c.args(["overhead", "-m", "none", "-w", "getppid", "--json"])
        .args(["--pairs", &pairs.to_string(), "--sample-ms", "200"])
        .args(["--samples-per-half", "1", "--warmup", "0", "--no-pin"]);
    c
}

/// A short `run` of getppid.
fn short_run(db: &Path, state: &Path) -> Command {
    let mut c = secperf(db, state);
    c.args([
        "run",
        "-w",
        "getppid",
        "--tasks",
        "1",
        "--no-pin",
        "--samples",
        "2",
        "--sample-ms",
        "20",
        "--json",
    ]);
    c
}

/// The pid recorded in the measurement lock, if any.
fn holder_pid(state: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(state.join("measure.lock")).ok()?;
    let v: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    v["pid"].as_u64().map(|p| p as u32)
}

/// Waits until `pid` holds the lock (it has started measuring).
fn wait_for_holder(state: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while holder_pid(state) != Some(child.id()) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("secperf exited ({status}) before it took the lock");
        }
        assert!(Instant::now() < deadline, "no lock taken in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Output of a finished child, with its stderr in the panic message.
fn finish(child: Child, what: &str) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Kills the child on drop, so a failing assertion leaves nothing running.
struct KillOnDrop(Option<Child>);

impl KillOnDrop {
    fn take(&mut self) -> Child {
        self.0.take().unwrap()
    }
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().unwrap()
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let state = dir.path().join("state");
    (dir, db, state)
}

#[test]
fn a_second_measurement_fails_with_no_wait_or_waits_and_readers_never_wait() {
    let (_dir, db, state) = dirs();
    let mut first = KillOnDrop(Some(
        long_overhead(&db, &state, 12)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    wait_for_holder(&state, first.child());
    let pid = first.child().id();

    // Read-only commands run meanwhile without waiting.
    for args in [&["results", "list"][..], &["probe"][..], &["list"][..]] {
        let t = Instant::now();
        let out = secperf(&db, &state).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "{args:?} took {:?}",
            t.elapsed()
        );
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("waiting"),
            "{args:?}"
        );
    }
    assert_eq!(holder_pid(&state), Some(pid), "the first still measures");

    // --no-wait fails at once, exit code 2, naming the holder.
    let t = Instant::now();
    let out = short_run(&db, &state).arg("--no-wait").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(
        err.contains(&format!("pid {pid}")) && err.contains("overhead -m none -w getppid"),
        "{err}"
    );
    assert!(err.contains("retry"), "{err}");
    assert!(out.stdout.is_empty(), "nothing measured");

    // Without it, a second one waits, saying for whom, and then runs.
    let waiter = short_run(&db, &state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first_out = finish(first.take(), "the first measurement");
    let first_done = Instant::now();
    let out = finish(waiter, "the waiting run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("waiting for another measurement to finish")
            && err.contains(&format!("pid {pid}")),
        "{err}"
    );
    assert!(
        first_done.elapsed() < Duration::from_secs(30),
        "the waiter ran after the first"
    );
    let run = common::json_of(&out.stdout);
    assert_eq!(run["results"].as_array().unwrap().len(), 1, "{run}");
    common::json_of(&first_out.stdout);
    assert_eq!(holder_pid(&state), None, "released when done");
}

#[test]
fn a_sigkilled_holder_lets_the_waiter_go_at_once() {
    let (_dir, db, state) = dirs();
    // In processes, so the holder's forked task shares the lock and must
    // die with it for the lock to go.
    let mut first = KillOnDrop(Some(
        long_overhead(&db, &state, 100)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ));
    wait_for_holder(&state, first.child());
    let pid = first.child().id();
    let stderr_path = state.join("waiter.stderr");
    let mut waiter = KillOnDrop(Some(
        short_run(&db, &state)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap(),
    ));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&stderr_path)
        .unwrap()
        .contains("waiting for another measurement")
    {
        assert!(Instant::now() < deadline, "the waiter never said it waits");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill sends a signal to our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    let killed = Instant::now();
    let _ = first.take().wait();
    let waiter_pid = waiter.child().id();
    while holder_pid(&state) != Some(waiter_pid) {
        if let Some(status) = waiter.child().try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the waiter did not take the lock within 5 s of the SIGKILL"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    println!(
        "the waiter took over {:?} after the SIGKILL",
        killed.elapsed()
    );
    let out = finish(waiter.take(), "the waiting run");
    let err = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    common::json_of(&out.stdout);
}
