//! End-to-end tests of `secperf compare` and the `--format` outputs of
//! `compare`, `run` and `overhead`, on tiny real measurements.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn secperf(db: &Path) -> Command {
    let mut c = Command::cargo_bin("secperf").unwrap();
    c.env_remove("SECPERF_DB").arg("--db").arg(db);
    c
}

/// 6 samples a run: with 4 a side no Mann-Whitney p reaches alpha / 2
/// (the smallest is 2 / C(8, 4) = 0.029), so a column of two rows shows
/// unbounded intervals (an unbounded end is null in JSON).
const TINY_RUN: &[&str] = &[
    "run",
    "-w",
    "getppid,eventfd",
    "--tasks",
    "1",
    "--samples",
    "6",
    "--sample-ms",
    "40",
    "--warmup",
    "0",
    "--no-pin",
];

/// Measurements run one at a time: parallel tests starving each other's
/// tasks would make a slice empty, which secperf rightly refuses.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn measuring() -> std::sync::MutexGuard<'static, ()> {
    MEASURING.lock().unwrap_or_else(|p| p.into_inner())
}

fn two_runs(db: &Path) {
    let _one_at_a_time = measuring();
    for label in ["base", "new"] {
        secperf(db)
            .args(TINY_RUN)
            .args(["--label", label])
            .assert()
            .success();
    }
}

fn stdout(c: &mut Command) -> String {
    String::from_utf8(c.assert().success().get_output().stdout.clone()).unwrap()
}

#[test]
fn email_format_is_ascii_within_72_columns_and_says_how_to_reproduce() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    two_runs(&db);
    let out = stdout(secperf(&db).args(["compare", "base", "new", "--format", "email"]));
    for line in out.lines() {
        assert!(line.len() <= 72, "too long: {line:?}");
        assert!(line.is_ascii(), "not ASCII: {line:?}");
    }
    assert!(out.contains("unpaired"), "{out}");
    assert!(out.contains("getppid") && out.contains("eventfd"), "{out}");
    assert!(out.contains("Reproduce: secperf compare base new"), "{out}");
}

#[test]
fn json_csv_markdown_and_benchstat_render() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    two_runs(&db);
    let v: Value = serde_json::from_str(&stdout(
        secperf(&db).args(["--json", "compare", "base", "new"]),
    ))
    .unwrap();
    assert_eq!(v["design"], "unpaired");
    assert_eq!(v["columns"].as_array().unwrap().len(), 2);
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    let cell = &v["rows"][0]["cells"][1];
    for k in [
        "value",
        "change_pct",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "verdict",
        "cv_pct",
        "amean",
        "hmean",
        "welch_p_value",
    ] {
        assert!(!cell[k].is_null(), "{k} missing in {cell}");
    }

    let csv = stdout(secperf(&db).args(["compare", "base", "new", "--format", "csv"]));
    assert!(
        csv.starts_with("workload,tasks,label,configuration,unit,value"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 2 * 2, "{csv}");

    let md = stdout(secperf(&db).args(["compare", "base", "new", "--format", "markdown"]));
    assert!(md.contains("| getppid"), "{md}");

    let out_dir = dir.path().join("bench");
    secperf(&db)
        .args(["compare", "base", "new", "--format", "benchstat", "-o"])
        .arg(&out_dir)
        .assert()
        .success();
    let files: Vec<_> = std::fs::read_dir(&out_dir).unwrap().collect();
    assert_eq!(files.len(), 2);
    for f in files {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        let bench: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("Benchmark"))
            .collect();
        assert_eq!(bench.len(), 2 * 6, "{text}");
        assert!(
            bench
                .iter()
                .all(|l| l.ends_with(" ns/op") && l.split_whitespace().count() == 4),
            "{text}"
        );
    }
}

#[test]
fn run_and_overhead_speak_the_formats_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let _one_at_a_time = measuring();
    let out = stdout(secperf(&db).args(TINY_RUN).args(["--format", "markdown"]));
    assert!(out.contains("getppid"), "{out}");
    let out = stdout(secperf(&db).args([
        "overhead",
        "-m",
        "none",
        "-w",
        "getppid",
        "--pairs",
        "10",
        "--sample-ms",
        "10",
        "--samples-per-half",
        "1",
        "--warmup",
        "0",
        "--format",
        "email",
    ]));
    assert!(out.lines().all(|l| l.len() <= 72 && l.is_ascii()), "{out}");
    assert!(out.contains("paired"), "{out}");
}

#[test]
fn bad_compare_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    two_runs(&db);
    for args in [
        &["compare", "base"][..],
        &["compare", "base", "nope"][..],
        &["compare", "base", "new", "--format", "pdf"][..],
        &["compare", "base", "new", "--alpha", "2"][..],
    ] {
        let out = secperf(&db).args(args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            !err.is_empty() && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}
