//! One measurement at a time, end to end: while a measuring command runs,
//! another fails without waiting with `--no-wait` (exit code 2, naming the
//! first's pid), waits without it (saying for whom) and then succeeds,
//! read-only commands never wait, and a SIGKILLed holder lets the waiter
//! go.
//!
//! Every check is on events (the lock file's holder, a line on stderr, a
//! process's exit), never on how long something took: the machine may be
//! loaded. Waits give up after [`HANG_GUARD`], which only stops a hang.
//!
//! Each test has its own state directory (`SECPERF_STATE_DIR`), so the
//! tests of this file, and those of others running beside them, never wait
//! for one another.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::wait_for;

const SECPERF: &str = env!("CARGO_BIN_EXE_secperf");

/// How long to wait for an event before calling it lost.
const HANG_GUARD: Duration = Duration::from_secs(300);

/// secperf with its own database and state directory.
fn secperf(db: &Path, state: &Path) -> Command {
    let mut c = Command::new(SECPERF);
    c.arg("--db").arg(db).env("SECPERF_STATE_DIR", state);
    c
}

/// `overhead -m none -w getppid` with the tiny design (`common::TINY`)
/// stretched to last at least `pairs` x 0.4 s.
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

/// Panics with `stderr`'s text if `child` has exited: `what` can no longer
/// happen.
fn still_running(child: &mut Child, what: &str, stderr: &Path) {
    if let Some(status) = child.try_wait().unwrap() {
        panic!(
            "secperf exited ({status}) before {what}:\n{}",
            std::fs::read_to_string(stderr).unwrap_or_default()
        );
    }
}

/// Waits until `child` holds the lock (it has started measuring).
fn wait_for_holder(state: &Path, child: &mut Child, stderr: &Path) {
    wait_for("the measurement taking the lock", HANG_GUARD, || {
        still_running(child, "it took the lock", stderr);
        holder_pid(state) == Some(child.id())
    });
}

/// Waits until `child` has written `line` to the file `stderr`.
fn wait_for_line(child: &mut Child, stderr: &Path, line: &str) {
    wait_for(&format!("the line '{line}' on stderr"), HANG_GUARD, || {
        still_running(child, &format!("it wrote '{line}'"), stderr);
        std::fs::read_to_string(stderr).is_ok_and(|t| t.contains(line))
    });
}

/// Checks that the first measurement (`pid`) is running and holds the lock:
/// whatever ran meanwhile ran while it held it.
fn assert_still_holding(state: &Path, first: &mut Child, pid: u32, after: &str) {
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first measurement ended before {after} was done"
    );
    assert_eq!(holder_pid(state), Some(pid), "the first holds the lock");
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

/// Sends `signal` to our child `pid`.
fn signal(pid: u32, signal: i32) {
    // SAFETY: kill sends a signal to our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
}

#[test]
fn a_second_measurement_fails_with_no_wait_or_waits_and_readers_never_wait() {
    let (dir, db, state) = dirs();
    // Far longer than the test: it holds the lock until SIGTERMed below.
    let first_stderr = dir.path().join("first.stderr");
    let mut first = KillOnDrop(Some(
        long_overhead(&db, &state, 1000)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&first_stderr).unwrap())
            .spawn()
            .unwrap(),
    ));
    wait_for_holder(&state, first.child(), &first_stderr);
    let pid = first.child().id();

    // Read-only commands run to their end while the first holds the lock:
    // they do not wait for it.
    for args in [&["results", "list"][..], &["probe"][..], &["list"][..]] {
        let out = secperf(&db, &state).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("waiting"),
            "{args:?}"
        );
        assert_still_holding(&state, first.child(), pid, &format!("{args:?}"));
    }

    // --no-wait fails while the first still holds the lock (so without
    // waiting for it), exit code 2, naming the holder.
    let out = short_run(&db, &state).arg("--no-wait").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("pid {pid}")) && err.contains("overhead -m none -w getppid"),
        "{err}"
    );
    assert!(err.contains("retry"), "{err}");
    assert!(out.stdout.is_empty(), "nothing measured");
    assert_still_holding(&state, first.child(), pid, "the --no-wait run");

    // Without it, a second one waits, saying for whom, as long as the first
    // holds the lock ...
    let waiter_stderr = dir.path().join("waiter.stderr");
    let mut waiter = KillOnDrop(Some(
        short_run(&db, &state)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&waiter_stderr).unwrap())
            .spawn()
            .unwrap(),
    ));
    let waiting = "waiting for another measurement to finish";
    wait_for_line(waiter.child(), &waiter_stderr, waiting);
    let err = std::fs::read_to_string(&waiter_stderr).unwrap();
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    assert!(waiter.child().try_wait().unwrap().is_none(), "it waits");
    assert_still_holding(&state, first.child(), pid, "the waiter said it waits");

    // ... and runs once the first has stopped (SIGTERM: a clean stop).
    signal(pid, libc::SIGTERM);
    let stopped = first.take().wait().unwrap();
    assert_eq!(
        stopped.code(),
        Some(130),
        "the first measurement, SIGTERMed: {}",
        std::fs::read_to_string(&first_stderr).unwrap_or_default()
    );
    let out = finish(waiter.take(), "the waiting run");
    let run = common::json_of(&out.stdout);
    assert_eq!(run["results"].as_array().unwrap().len(), 1, "{run}");
    assert_eq!(holder_pid(&state), None, "released when done");
}

#[test]
fn a_sigkilled_holder_lets_the_waiter_go() {
    let (dir, db, state) = dirs();
    // In processes, so the holder's forked task shares the lock and must
    // die with it for the lock to go.
    let first_stderr = dir.path().join("first.stderr");
    let mut first = KillOnDrop(Some(
        long_overhead(&db, &state, 1000)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&first_stderr).unwrap())
            .spawn()
            .unwrap(),
    ));
    wait_for_holder(&state, first.child(), &first_stderr);
    let pid = first.child().id();
    let stderr_path = dir.path().join("waiter.stderr");
    let mut waiter = KillOnDrop(Some(
        short_run(&db, &state)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap(),
    ));
    wait_for_line(
        waiter.child(),
        &stderr_path,
        "waiting for another measurement",
    );
    signal(pid, libc::SIGKILL);
    let killed = Instant::now();
    let _ = first.take().wait();
    let waiter_pid = waiter.child().id();
    wait_for(
        "the waiter taking the lock after the SIGKILL",
        HANG_GUARD,
        || {
            match waiter.child().try_wait().unwrap() {
                // It may have taken the lock, measured and finished already.
                Some(status) => {
                    assert!(status.success(), "the waiting run: {status}");
                    true
                }
                None => holder_pid(&state) == Some(waiter_pid),
            }
        },
    );
    println!(
        "the waiter took over {:?} after the SIGKILL",
        killed.elapsed()
    );
    let out = finish(waiter.take(), "the waiting run");
    let err = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    common::json_of(&out.stdout);
}
