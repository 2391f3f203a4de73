//! Helpers the end-to-end test files share (each test file uses some).

#![allow(dead_code)]

use std::path::Path;

use assert_cmd::Command;

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
