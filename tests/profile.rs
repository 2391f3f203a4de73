//! End-to-end tests of `--profile`: the JSON contract, bad settings, and
//! a check of secperf's attribution against `perf record` + `perf diff`
//! on the same case (skipped with the reason where `perf`, root or
//! kernel sampling is missing, see `tests/common/skips.rs`).

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use serde_json::Value;

mod common;
use common::{TINY, root_or_skip, secperf, skip_kernel_feature, skip_missing_tool};

#[test]
fn bad_profile_settings_exit_2_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    for (args, says) in [
        (&["--profile", "--profile-hz", "0"][..], "--profile-hz 0"),
        (
            &["--profile", "--profile-hz", "999999"][..],
            "--profile-hz 999999",
        ),
        (
            &["--profile", "--profile-pairs", "0"][..],
            "--profile-pairs 0",
        ),
        (&["--profile-hz", "1000"][..], "--profile"),
    ] {
        let out = secperf(&db)
            .args(["overhead", "-m", "none", "-w", "getppid"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// The first comparison's attribution in run document `v`; None (a skip
/// said) where this kernel refused sampling.
fn attribution_or_skip<'a>(test: &str, v: &'a Value) -> Option<&'a Value> {
    let a = &v["comparisons"][0]["attribution"];
    assert!(a.is_object(), "no attribution in {v}");
    let notes: Vec<&str> = a["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if notes.iter().any(|n| n.starts_with("not profiled")) {
        let reason = format!("the sample checks: {notes:?}");
        skip_kernel_feature(test, "cpu-clock-sampling", &reason);
        return None;
    }
    Some(a)
}

#[test]
fn overhead_json_carries_the_attribution() {
    let test = "overhead_json_carries_the_attribution";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let out = secperf(&db)
        .args([
            "overhead",
            "-m",
            "none",
            "-w",
            "getppid",
            "--profile",
            "--profile-pairs",
            "2",
            "--json",
        ])
        .args(TINY)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let Some(a) = attribution_or_skip(test, &v) else {
        return;
    };
    assert_eq!(a["pairs"], 2);
    assert!(a["samples"]["total"].as_u64().unwrap() > 0);
    assert!(a["profiling_slowdown_pct"].is_number());
    for list in ["groups", "symbols"] {
        let first = &a[list][0];
        for key in [
            "name",
            "baseline_ns_per_op",
            "treatment_ns_per_op",
            "share_of_delta_pct",
        ] {
            assert!(!first[key].is_null(), "{list}[0].{key} in {a}");
        }
        for key in ["estimate", "ci_low", "ci_high"] {
            assert!(
                first["delta_ns_per_op"][key].is_number(),
                "{list}[0] in {a}"
            );
        }
    }
    // The stored run prints the attribution again.
    let shown = secperf(&db)
        .args(["results", "show", "latest"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(
        String::from_utf8_lossy(&shown).contains("Where the time goes: none:control on getppid")
    );
}

#[test]
fn a_servers_processes_are_what_is_profiled() {
    let test = "a_servers_processes_are_what_is_profiled";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    // The server spins in user space; the task only waits for the client,
    // which sleeps: every sample comes from the server.
    let out = secperf(&db)
        .args(["overhead", "-m", "seccomp:allow", "--no-control", "--json"])
        .args(["--profile", "--profile-pairs", "2"])
        .args(TINY)
        .args([
            "--server",
            "sh -c 'while :; do :; done' secperf-test-profiled-server",
            "--ready",
            "delay:20",
            "--",
            "sleep",
            "0.05",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let Some(a) = attribution_or_skip(test, &v) else {
        return;
    };
    assert_eq!(a["pairs"], 2, "{a}");
    // A 50 ms client run at 4000 Hz on a spinning server: about 200
    // samples a run, where the task's own would be a handful.
    let total = a["samples"]["total"].as_u64().unwrap();
    assert!(
        total > 100,
        "{total} samples: the server was not sampled ({a})"
    );
    let user = a["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "user space")
        .unwrap_or_else(|| panic!("no user-space group in {a}"));
    // Per operation the server's CPU time, not the client's 50 ms.
    let per_op_ms = user["baseline_ns_per_op"].as_f64().unwrap() / 1e6;
    assert!(per_op_ms > 10.0, "user space {per_op_ms} ms per run in {a}");
}

/// The example program built beside this test binary.
fn access_loop() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("examples/access_loop");
    p.exists().then_some(p)
}

/// `perf record` of `cmd`, to `out`; false when perf cannot sample here.
fn perf_record(out: &Path, cmd: &[&str]) -> bool {
    Std::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-F", "4000", "-o"])
        .arg(out)
        .arg("--")
        .args(cmd)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn largest_delta_symbol_is_among_perf_diffs_largest_increases() {
    let test = "largest_delta_symbol_is_among_perf_diffs_largest_increases";
    if !root_or_skip(test, "cred:fsuid, kernel samples") {
        return;
    }
    if let Err(e) = Std::new("perf").arg("--version").output() {
        let reason = format!("perf is not installed (Debian: linux-perf): {e}");
        skip_missing_tool(test, "perf", &reason);
        return;
    }
    let Some(access_loop) = access_loop() else {
        let reason = "examples/access_loop was not built (`cargo test` builds it)";
        skip_missing_tool(test, "examples/access_loop", reason);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (base, treat) = (dir.path().join("base.data"), dir.path().join("treat.data"));
    let prog = access_loop.to_str().unwrap();
    if !perf_record(&base, &[prog, "--seconds", "2"])
        || !perf_record(&treat, &[prog, "--fsuid", "--seconds", "2"])
    {
        let reason = "perf record -e cpu-clock fails here";
        skip_kernel_feature(test, "cpu-clock-sampling", reason);
        return;
    }
    let diff = Std::new("perf")
        .args(["diff", "-c", "delta", "-t", "|"])
        .arg(&base)
        .arg(&treat)
        .output()
        .unwrap();
    // Lines: baseline|delta|dso|symbol; the largest increases first.
    let mut increases: Vec<(f64, String)> = String::from_utf8_lossy(&diff.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            let delta: f64 = f.get(1)?.trim_end_matches('%').parse().ok()?;
            let symbol = f.get(3)?.split("] ").last()?.to_string();
            Some((delta, symbol))
        })
        .collect();
    increases.sort_by(|a, b| b.0.total_cmp(&a.0));
    let top: Vec<&str> = increases.iter().take(5).map(|(_, s)| s.as_str()).collect();
    assert!(!top.is_empty(), "perf diff printed nothing usable");

    let db = dir.path().join("t.db");
    let out = secperf(&db)
        .args([
            "overhead",
            "-m",
            "cred:fsuid",
            "-w",
            "access1",
            "--profile",
            "--pairs",
            "10",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let a = &v["comparisons"][0]["attribution"];
    let mine = a["symbols"][0]["name"].as_str().unwrap_or_default();
    assert!(
        top.contains(&mine),
        "secperf's largest delta is {mine}; perf diff's largest increases: {top:?}"
    );
    assert!(
        a["symbols"][0]["delta_ns_per_op"]["estimate"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}
