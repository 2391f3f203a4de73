//! Any command as the workload (`-- CMD ARGS...`) end to end: `run` and
//! `overhead` measure it and report CPU time per run; a failing command, a
//! missing program and contradictory options exit 2 with the reason.

mod common;

use common::{TINY, json_of, secperf};

#[test]
fn run_measures_a_command_with_cpu_time_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = secperf(&db)
        .args([
            "--json",
            "run",
            "--samples",
            "2",
            "--sample-ms",
            "20",
            "-t",
            "1",
            "--no-pin",
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 500 ]; do i=$((i+1)); done",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    let r = &v["results"][0];
    assert_eq!(r["workload"], "command");
    assert!(r["ns_per_op"]["median"].as_f64().unwrap() > 0.0);
    let cpu = &r["child_cpu"];
    assert!(cpu["runs"].as_u64().unwrap() > 0, "{cpu}");
    assert!(cpu["user_ns_per_op"].as_f64().unwrap() > 0.0, "{cpu}");
    let argv: Vec<String> = serde_json::from_str(r["params"]["argv"].as_str().unwrap()).unwrap();
    assert_eq!(argv[0], "sh");
}

#[test]
fn overhead_pairs_a_command_and_reports_cpu_for_both_arms() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = secperf(&db)
        .args(["--json", "overhead", "-m", "seccomp:args"])
        .args(TINY)
        .args(["--", "true"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    let c = &v["comparisons"][0];
    assert_eq!(c["workload"], "command");
    assert_eq!(c["child_cpu"].as_array().unwrap().len(), 2, "{c}");
    // The table names the command itself.
    let id = v["run_id"].as_i64().unwrap().to_string();
    secperf(&db)
        .args(["results", "show", &id])
        .assert()
        .success()
        .stdout(predicates::str::contains("CPU time per run"));
}

#[test]
fn a_failing_command_exits_2_with_its_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = secperf(&db)
        .args([
            "run",
            "--quick",
            "--",
            "sh",
            "-c",
            "echo broken pipe dream >&2; exit 4",
        ])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("exited with status 4"), "{err}");
    assert!(err.contains("broken pipe dream"), "{err}");
}

#[test]
fn bad_command_lines_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for args in [
        &["run", "--", "secperf-no-such-program"][..],
        &["run", "--", "/nonexistent/x"],
        &["run", "-w", "getppid", "--", "true"],
        &["overhead", "--", "true"],
        &["overhead", "-m", "seccomp", "-w", "open", "--", "true"],
        &["run", "--show-output"],
    ] {
        let out = secperf(&db)
            .args(args)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.trim().is_empty(), "{args:?}: no message");
    }
}
