//! End-to-end tests of `secperf overhead`: the A/B output contract, the
//! errors for bad or unavailable mechanisms, and running as a non-root
//! user (unprivileged mechanisms work, root-only ones are skipped with a
//! reason).

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;

use common::{TINY, json_of, root_or_skip, secperf, skip_kernel_feature};

/// Runs secperf with `args` and the [`TINY`] design; its stdout.
fn tiny_run(db: &Path, args: &[&str]) -> Vec<u8> {
    secperf(db)
        .args(args)
        .args(TINY)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

#[test]
fn a_a_control_reports_the_documented_fields_and_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = tiny_run(&db, &["--json", "overhead", "-m", "none", "-w", "getppid"]);
    let v = json_of(&out);
    assert!(v["run_id"].is_i64());
    assert!(v["system"]["kernel"].is_object());
    assert!(v["params"]["skipped"].is_array());
    let c = &v["comparisons"][0];
    assert_eq!(c["workload"], "getppid");
    assert_eq!(c["mechanism"], "none");
    assert_eq!(c["variant"], "control");
    assert!(c["params"].is_object());
    assert_eq!(c["tasks"], 1);
    assert_eq!(c["pairs"], 10);
    assert!(c["baseline_per_op"].as_f64().unwrap() > 0.0);
    assert!(c["treatment_per_op"].as_f64().unwrap() > 0.0);
    assert_eq!(c["measure"]["name"], "time");
    assert_eq!(c["measure"]["unit"], "ns");
    let o = &c["overhead_pct"];
    for k in ["estimate", "ci_low", "ci_high", "p_value"] {
        assert!(o[k].is_f64(), "overhead_pct.{k} missing: {o}");
    }
    let verdict = o["verdict"].as_str().unwrap();
    assert!(
        ["slower", "faster", "no-change", "negligible"].contains(&verdict),
        "{verdict}"
    );
    assert_eq!(c["pair_data"].as_array().unwrap().len(), 10);
    // -w given: no negative control is added, and none was measured.
    assert_eq!(v["params"]["controls"], serde_json::json!([]));
    assert!(v["negative_control"].is_null(), "{}", v["negative_control"]);

    let id = v["run_id"].as_i64().unwrap().to_string();
    let shown = secperf(&db)
        .args(["--json", "results", "show", &id])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let shown = json_of(&shown);
    assert_eq!(shown["comparisons"][0]["overhead_pct"], *o);
    assert_eq!(shown["kind"], "overhead");

    // One run document: the command's --json is results export --json of
    // the run it stored, byte for byte.
    for args in [
        vec!["--json", "results", "export", id.as_str()],
        vec!["results", "export", id.as_str(), "--format", "json"],
    ] {
        let exported = secperf(&db)
            .args(&args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        assert_eq!(
            String::from_utf8_lossy(&exported),
            String::from_utf8_lossy(&out),
            "{args:?}"
        );
    }
    // And the default table is `--format table` (both of the stored run).
    let table = |extra: &[&str]| {
        let mut args = vec!["results", "show", id.as_str()];
        args.extend_from_slice(extra);
        secperf(&db)
            .args(&args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(table(&[]), table(&["--format", "table"]));
}

/// Whether mechanism `name` is available here; if not, `test` is skipped
/// (a kernel feature skip on the mechanism) with `list`'s reason.
fn available_or_skip(db: &Path, test: &str, name: &str) -> bool {
    let out = secperf(db)
        .args(["--json", "list"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let listing = json_of(&out);
    let mechanism = listing["mechanisms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing from list: {listing}"));
    let availability = &mechanism["availability"];
    if availability["status"] == "available" {
        return true;
    }
    let reason = format!("{name} is unavailable here: {}", availability["reason"]);
    skip_kernel_feature(test, name, &reason);
    false
}

#[test]
fn without_w_each_mechanism_gets_the_stream_negative_control() {
    let test = "without_w_each_mechanism_gets_the_stream_negative_control";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    if !available_or_skip(&db, test, "seccomp") {
        return;
    }
    // seccomp's survey workloads (getppid, eventfd) plus the control.
    let out = tiny_run(&db, &["--json", "overhead", "-m", "seccomp"]);
    let v = json_of(&out);
    assert_eq!(
        v["params"]["controls"],
        serde_json::json!(["seccomp:allow on stream x1"])
    );
    let comparisons = v["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 3, "{:?}", v["params"]["comparisons"]);
    let stream = comparisons.iter().find(|c| c["workload"] == "stream");
    let stream = stream.expect("the stream control was measured");
    assert_eq!(stream["params"], comparisons[0]["params"]);
    assert_eq!(stream["workload_params"]["elements"], "2000000");
    let nc = &v["negative_control"];
    assert_eq!(nc["workload"], "stream");
    assert_eq!(nc["comparisons"], serde_json::json!(["seccomp:allow"]));
    let changed =
        ["slower", "faster"].contains(&stream["overhead_pct"]["verdict"].as_str().unwrap());
    assert_eq!(nc["passed"], !changed, "{nc}");
    assert_eq!(
        nc["failed"].as_array().unwrap().is_empty(),
        !changed,
        "{nc}"
    );
}

#[test]
fn the_table_reads_stream_as_the_negative_control() {
    let test = "the_table_reads_stream_as_the_negative_control";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    if !available_or_skip(&db, test, "seccomp") {
        return;
    }
    // Asked for with -w: measured as asked (no control added), and read as
    // the control under the table.
    let out = tiny_run(&db, &["overhead", "-m", "seccomp", "-w", "getppid,stream"]);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(
            "Negative control (stream: no syscall in the loop, so no mechanism should change it):\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  passed: no mechanism changed stream (seccomp:allow ")
            || text.contains("  FAILED: stream changed under seccomp:allow ("),
        "{text}"
    );
}

#[test]
fn bad_mechanism_specs_exit_2_naming_what_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for (spec, needle) in [
        ("nope", "valid: none"),
        ("none:bogus", "valid: control"),
        ("none,colour=red", "no parameter"),
        ("seccomp,filters=many", "filters"),
    ] {
        let out = secperf(&db)
            .args(["overhead", "-m", spec, "-w", "getppid"])
            .args(TINY)
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(needle), "{spec}: {err}");
        assert!(!err.contains("panicked"), "{spec}: {err}");
    }
    let out = secperf(&db)
        .args(["overhead", "-m", "none", "--pairs", "5"])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("at least 10"));
}

#[test]
fn asking_for_an_unavailable_mechanism_exits_2_with_the_reason() {
    let test = "asking_for_an_unavailable_mechanism_exits_2_with_the_reason";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let listing = secperf(&db)
        .args(["--json", "list"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let listing = json_of(&listing);
    let unavailable = listing["mechanisms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["availability"]["status"] == "unavailable");
    let Some(m) = unavailable else {
        let reason = "every mechanism is available on this machine";
        skip_kernel_feature(test, "an-unavailable-mechanism", reason);
        return;
    };
    let name = m["name"].as_str().unwrap();
    let reason = m["availability"]["reason"].as_str().unwrap();
    let out = secperf(&db)
        .args(["overhead", "-m", name])
        .args(TINY)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains(reason),
        "{name}: expected '{reason}' in: {err}"
    );
}

#[test]
fn list_json_describes_mechanisms() {
    let dir = tempfile::tempdir().unwrap();
    let out = secperf(&dir.path().join("r.db"))
        .args(["--json", "list"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    let names: Vec<&str> = v["mechanisms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for n in [
        "none", "seccomp", "landlock", "audit", "cred", "bpf-lsm", "selinux", "apparmor",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    for m in v["mechanisms"].as_array().unwrap() {
        assert!(!m["variants"].as_array().unwrap().is_empty());
        assert!(["worker", "system"].contains(&m["scope"].as_str().unwrap()));
    }
}

/// Runs secperf as user `nobody` (65534) with its own writable dirs.
fn as_nobody(dir: &Path, args: &[&str]) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("secperf");
    let mut c = std::process::Command::new(bin);
    c.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .env("TMPDIR", dir)
        .uid(65534)
        .gid(65534);
    c.output().unwrap()
}

#[test]
fn non_root_user_gets_unprivileged_mechanisms_and_reasons_for_the_rest() {
    let test = "non_root_user_gets_unprivileged_mechanisms_and_reasons_for_the_rest";
    if !root_or_skip(test, "to switch to the nobody user") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let out = as_nobody(dir.path(), &["--json", "list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    for m in v["mechanisms"].as_array().unwrap() {
        if m["name"] == "audit" {
            assert_eq!(m["availability"]["status"], "unavailable");
            let reason = m["availability"]["reason"].as_str().unwrap();
            assert!(
                reason.contains("root"),
                "audit reason for non-root: {reason}"
            );
        }
    }
    let mut args = vec!["--json", "overhead", "-m", "none", "-w", "getppid"];
    args.extend_from_slice(TINY);
    let out = as_nobody(dir.path(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_of(&out.stdout)["comparisons"][0]["mechanism"], "none");
}

/// Without `--pairs` a comparison is sequential: it stops once settled, at
/// `--max-pairs` at the latest, and says where and why.
#[test]
fn the_default_design_is_sequential_and_reports_its_stop() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = secperf(&db)
        .args(["--json", "overhead", "-m", "none", "-w", "getppid"])
        .args(["--max-pairs", "10", "--sample-ms", "20"])
        .args(["--samples-per-half", "1", "--warmup", "0", "--no-pin"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    let stop = &v["params"]["stop"];
    assert_eq!(stop["max_pairs"], 10, "{stop}");
    assert_eq!(stop["family"], 1);
    // The default test is both (sign and t), which looks from the 3rd pair,
    // and the table's error rate the FDR.
    assert_eq!(stop["min_pairs"], 3);
    assert_eq!(v["params"]["decision"]["test"], "both");
    assert_eq!(v["params"]["decision"]["error_rate"], "fdr");
    let c = &v["comparisons"][0];
    let pairs = c["pairs"].as_u64().unwrap();
    assert!((3..=10).contains(&pairs), "{pairs}");
    assert_eq!(c["pair_data"].as_array().unwrap().len() as u64, pairs);
    let s = &c["sequential"];
    assert_eq!(s["max_pairs"], 10);
    let stopped = s["stopped"].as_str().unwrap();
    assert!(
        ["slower", "faster", "negligible", "max-pairs", "futile"].contains(&stopped),
        "{stopped}"
    );
    // Stopped before the budget only when settled or futile.
    if pairs < 10 {
        assert_ne!(stopped, "max-pairs");
    }
    // Stored and shown back with the stop; the table says N/M.
    let id = v["run_id"].as_i64().unwrap().to_string();
    let shown = secperf(&db)
        .args(["--json", "results", "show", &id])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(json_of(&shown)["comparisons"][0]["sequential"], *s);
    let table = secperf(&db)
        .args(["results", "show", &id])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8_lossy(&table);
    assert!(table.contains(&format!("{pairs}/10")), "{table}");
    assert!(table.contains("anytime-valid"), "{table}");
}

#[test]
fn sequential_options_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for (args, needle) in [
        (&["--max-pairs", "5"][..], "--max-pairs 5"),
        (
            &["--pairs", "12", "--max-pairs", "20"][..],
            "cannot be used with",
        ),
        (
            &["--pairs", "12", "--precision", "2"][..],
            "cannot be used with",
        ),
    ] {
        let out = secperf(&db)
            .args(["overhead", "-m", "none", "-w", "getppid"])
            .args(args)
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `--metric instructions` on a host with a PMU: each task's retired
/// instructions per operation, in the table and the stored run. Skipped
/// where there is no PMU (the CI VM); the counting path itself is checked
/// there with a software event (`runner::tests`).
#[test]
fn instructions_are_counted_on_a_host_with_a_pmu() {
    let test = "instructions_are_counted_on_a_host_with_a_pmu";
    if let Err(why) = secperf::sys::pmu::instructions_counter() {
        skip_kernel_feature(test, "hardware-counters", &why);
        return;
    }
    if !root_or_skip(
        test,
        "seccomp needs no root, but the counters of the kernel's part may",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let out = tiny_run(
        &db,
        &[
            "--json",
            "overhead",
            "-w",
            "getppid",
            "-m",
            "seccomp:allow",
            "--metric",
            "instructions",
        ],
    );
    let doc = json_of(&out);
    assert_eq!(doc["params"]["metric"], "instructions");
    let c = &doc["comparisons"][0];
    // A null syscall is hundreds to thousands of instructions, user and
    // kernel; an allow-all filter adds some.
    let base = c["baseline_per_op"].as_f64().unwrap();
    assert!((50.0..20_000.0).contains(&base), "{c}");
    // Counted instructions are the verdict's measure, time shown beside.
    assert_eq!(c["measure"]["name"], "instructions", "{c}");
    assert!(
        c["beside"]
            .as_array()
            .is_some_and(|b| b.iter().any(|m| m["name"] == "time")),
        "{c}"
    );
    assert!(c["overhead_pct"]["estimate"].as_f64().unwrap() > 0.0, "{c}");
    let shown = secperf(&db)
        .args(["results", "show", "latest"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("insns"), "{text}");
}

#[test]
fn an_output_path_is_checked_before_measuring_and_a_late_failure_names_the_stored_run() {
    // Issue 53: `-o /nonexistent/dir/x.txt` measured, then failed without
    // saying that the run was stored.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    let started = std::time::Instant::now();
    let out = secperf(&db)
        .args(["overhead", "-m", "none", "-w", "getppid"])
        .args(TINY)
        .args(["--format", "email", "-o", "/nonexistent/dir/x.txt"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("-o /nonexistent/dir/x.txt: directory /nonexistent/dir does not exist"),
        "{err}"
    );
    assert!(!err.contains("pair"), "nothing was measured: {err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // A file that passes the check and fails when written (a full disk):
    // the run is stored, and the error says so.
    let out = secperf(&db)
        .args(["overhead", "-m", "none", "-w", "getppid"])
        .args(TINY)
        .args(["--format", "csv", "-o", "/dev/full"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Stored as run 1"), "{err}");
    assert!(
        err.contains("showing run 1, which is stored (`secperf results show 1`"),
        "{err}"
    );
}
