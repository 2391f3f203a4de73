//! Helpers the end-to-end test files share (each test file uses some).

#![allow(dead_code)]

pub mod skips;

use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use secperf::safety::StateLock;
use secperf::sys::audit::{AuditSocket, AuditState};

// Each test file uses some of them.
#[allow(unused_imports)]
pub use skips::{root_or_skip, skip_kernel_feature, skip_missing_tool, under_ci};

/// secperf with its database at `db`.
pub fn secperf(db: &Path) -> Command {
    let mut c = Command::cargo_bin("secperf").unwrap();
    c.arg("--db").arg(db);
    c
}

/// The smallest design the CLI accepts; unpinned so tests running side by
/// side cannot starve each other's tasks out of a whole slice.
pub const TINY: &[&str] = &[
    "--pairs",
    "10",
    "--sample-ms",
    "20",
    "--samples-per-half",
    "1",
    "--warmup",
    "0",
    "--no-pin",
];

/// The one JSON document in `out`, or a panic showing what came instead.
pub fn json_of(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}): {}",
            String::from_utf8_lossy(out)
        )
    })
}

/// Puts audit back to the recorded state on drop (printing, not
/// panicking, if that fails).
pub struct PutBack(pub secperf::sys::audit::AuditState);

impl Drop for PutBack {
    fn drop(&mut self) {
        let result = secperf::sys::audit::AuditSocket::open().and_then(|s| {
            s.set_state(&self.0)?;
            s.state()
        });
        match result {
            Ok(now) if now == self.0 => {}
            Ok(now) => eprintln!(
                "FAILED to put audit back: enabled {} with {} rules, expected enabled {} with {} \
                 rules; check `auditctl -s` and `auditctl -l`",
                now.enabled,
                now.rules.len(),
                self.0.enabled,
                self.0.rules.len()
            ),
            Err(e) => eprintln!("FAILED to put audit back: {e}"),
        }
    }
}

/// The audit state now.
pub fn audit_state() -> secperf::sys::audit::AuditState {
    secperf::sys::audit::AuditSocket::open()
        .and_then(|s| s.state())
        .expect("reading audit state")
}

/// The audit state, when `test` can change audit here; otherwise the test
/// is skipped (needs root, and audit present, not locked, not in panic
/// mode) and `None` comes back.
pub fn usable_audit(test: &str) -> Option<AuditState> {
    if !root_or_skip(test, "changing audit needs CAP_AUDIT_CONTROL") {
        return None;
    }
    let state = match AuditSocket::open().and_then(|s| s.state()) {
        Ok(s) if s.enabled == 2 => {
            skip_kernel_feature(test, "audit", "audit is locked (enabled=2) until reboot");
            return None;
        }
        Ok(s) => s,
        Err(e) => {
            skip_kernel_feature(test, "audit", &format!("audit unavailable: {e}"));
            return None;
        }
    };
    match AuditSocket::open().and_then(|s| s.status()) {
        Ok(status) if status.failure == 2 => {
            let reason = "the audit failure mode is panic (failure=2)";
            skip_kernel_feature(test, "audit", reason);
            None
        }
        Ok(_) => Some(state),
        Err(e) => {
            let reason = format!("audit status unavailable: {e}");
            skip_kernel_feature(test, "audit", &reason);
            None
        }
    }
}

/// secperf's default state lock, so that runs elsewhere on the machine
/// wait for `test`; skipped (`None`) when another secperf holds it for 2
/// minutes.
pub fn state_lock(test: &str) -> Option<StateLock> {
    match StateLock::acquire(Duration::from_secs(120)) {
        Ok(lock) => Some(lock),
        Err(e) => {
            skip_kernel_feature(test, "free-state-lock", &format!("{e:#}"));
            None
        }
    }
}

/// Polls `happened` until it is true. Gives up after `limit`, a guard
/// against hanging and not a time check (keep it generous), with a panic
/// saying that `what` did not happen.
pub fn wait_for(what: &str, limit: Duration, mut happened: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !happened() {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen (gave up waiting after {limit:?})"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What the tests' audit rules watch: a file that never exists, in a
/// directory that never vanishes. A watch goes with its directory: if that
/// is deleted while the rule is loaded, Linux drops the rule without
/// uncounting it, and every syscall pays for audit rules until reboot
/// (phantom rules, docs/findings.md). So no test watches a path under a
/// temporary directory.
pub const WATCHED: &str = "/etc/secperf-test-watched";

/// Where the kernel is fresh enough for the answer to mean something (the
/// CI's guest step sets `SECPERF_CHECK_PHANTOM=1`): checks that `secperf
/// probe --active` finds no phantom audit rules after `what`, with no
/// audit rules loaded (the check leaves a machine with rules alone).
pub fn no_phantom_rules(what: &str) {
    if std::env::var_os("SECPERF_CHECK_PHANTOM").is_none_or(|v| v != "1") {
        return;
    }
    // "cannot tell" (null: too few samples in audit's filters, as an
    // emulated guest's sampler sometimes gives) is no answer: ask again
    // with more rounds. A phantom rule found fails at once.
    let mut last = String::new();
    for rounds in ["1", "3", "5"] {
        let state = tempfile::tempdir().unwrap();
        let out = Command::cargo_bin("secperf")
            .unwrap()
            .env("SECPERF_STATE_DIR", state.path())
            .args(["probe", "--active", "--rounds", rounds, "--json"])
            .output()
            .expect("running secperf probe --active");
        let v = json_of(&out.stdout);
        let found = &v["audit"]["phantom_rules"];
        last = format!(
            "{} ({rounds} rounds)\n{}",
            v["audit"]["phantom_check"]["reason"],
            String::from_utf8_lossy(&out.stderr)
        );
        assert_ne!(
            found,
            &serde_json::Value::Bool(true),
            "after {what}, `secperf probe --active` found phantom audit rules: {last}"
        );
        if found == &serde_json::Value::Bool(false) {
            eprintln!("{what}: no phantom audit rules");
            return;
        }
    }
    panic!("after {what}, `secperf probe --active` could not tell, 3 times: {last}");
}

/// The newest /boot/vmlinuz-*, when virtme-ng and QEMU are there too;
/// None (after a skip line, or a failure under CI) otherwise.
pub fn guest_kernel(test: &str) -> Option<std::path::PathBuf> {
    if secperf::sys::which("vng").is_none() || secperf::sys::which("qemu-system-x86_64").is_none() {
        skip_missing_tool(
            test,
            "virtme-ng",
            "vng or qemu-system-x86_64 is not on PATH",
        );
        return None;
    }
    let mut images: Vec<std::path::PathBuf> = std::fs::read_dir("/boot")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("vmlinuz-"))
                && std::fs::File::open(p).is_ok()
        })
        .collect();
    images.sort();
    let image = images.pop();
    if image.is_none() {
        skip_missing_tool(test, "guest kernel", "no readable /boot/vmlinuz-*");
    }
    image
}
