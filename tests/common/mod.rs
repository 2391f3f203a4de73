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
