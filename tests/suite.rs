//! End-to-end tests of `secperf suite`: the catalog, input errors (exit 2
//! with the valid choices), a real quick pass stored and printed in the
//! post's shape, its `--json` equal to `results export` of the run, and
//! the reboot-side workflow (`--report` with `--baseline`, in every
//! format) on stored runs.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn secperf(db: &Path) -> Command {
    let mut c = Command::cargo_bin("secperf").unwrap();
    c.arg("--db").arg(db);
    c
}

fn stdout_of(c: &mut Command) -> String {
    String::from_utf8(c.assert().success().get_output().stdout.clone()).unwrap()
}

const SUITES: [&str; 5] = [
    "creds-2008",
    "avc-2004",
    "audit-2017",
    "access-2023",
    "lsm-hooks-2020",
];

#[test]
fn list_shows_the_five_suites_with_their_posts() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout_of(secperf(&dir.path().join("r.db")).args(["suite", "list"]));
    for s in SUITES {
        assert!(out.contains(s), "{s} missing from:\n{out}");
    }
    // Each post is cited (author, subject, list, date), not a file path.
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for cited in [
        "David Howells",
        "Performance degradation measurement",
        "2008-03-19",
    ] {
        assert!(flat.contains(cited), "{cited} missing from:\n{out}");
    }
    assert!(!out.contains(".txt"), "{out}");
    let v: Value = serde_json::from_str(&stdout_of(
        secperf(&dir.path().join("r.db")).args(["--json", "suite", "list"]),
    ))
    .unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, SUITES);
    for e in v.as_array().unwrap() {
        let post = &e["post"];
        for field in ["author", "date", "list", "subject"] {
            assert!(
                post[field].as_str().is_some_and(|s| !s.is_empty()),
                "{}: no {field} in {post}",
                e["name"]
            );
        }
        assert!(
            post["link"].as_str().unwrap().starts_with("https://"),
            "{post}"
        );
    }
}

#[test]
fn unknown_suite_is_a_usage_error_naming_the_valid_ones() {
    let dir = tempfile::tempdir().unwrap();
    secperf(&dir.path().join("r.db"))
        .args(["suite", "creds-2009"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown suite 'creds-2009'"))
        .stderr(predicate::str::contains("lsm-hooks-2020"));
}

#[test]
fn quick_pass_is_stored_printed_and_reprinted_with_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // The quickest suite (about 2 s): eventfd, an A/A control, and the
    // BPF LSM / SELinux / AppArmor, each measured or skipped with a reason.
    let measured = secperf(&db)
        .args(["suite", "lsm-hooks-2020", "--quick", "--label", "side-a"])
        .assert()
        .success();
    let out = String::from_utf8(measured.get_output().stdout.clone()).unwrap();
    let err = String::from_utf8(measured.get_output().stderr.clone()).unwrap();
    assert!(out.starts_with("lsm-hooks-2020 v1:"), "{out}");
    assert!(
        out.lines()
            .nth(1)
            .unwrap()
            .trim_start()
            .starts_with("reproduces: Brendan Jackman"),
        "{out}"
    );
    assert!(out.contains("eventfd write+read [ns per op]"), "{out}");
    assert!(out.contains("A/A control"), "{out}");
    assert!(out.contains("other side:"), "{out}");
    // The post's shape: fixed-width columns between ASCII rules.
    assert!(out.lines().any(|l| l.starts_with("-----")), "{out}");
    assert!(err.contains("Stored as run 1 label 'side-a'"), "{err}");
    // bpf-lsm is either measured (a column) or skipped with the reason.
    assert!(
        out.contains("skipped: bpf-lsm:noop: ")
            || out
                .lines()
                .any(|l| l.split_whitespace().any(|w| w == "bpf-lsm:noop")),
        "{out}"
    );

    // The other side, its --json the run document `results export` gives.
    let json = stdout_of(secperf(&db).args([
        "--json",
        "suite",
        "lsm-hooks-2020",
        "--quick",
        "--label",
        "side-b",
    ]));
    let export = stdout_of(secperf(&db).args(["results", "export", "side-b", "--format", "json"]));
    assert_eq!(json, export);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["run_id"], 2);
    assert_eq!(v["kind"], "suite");
    assert_eq!(v["suite"]["name"], "lsm-hooks-2020");
    assert_eq!(v["suite"]["baseline_run_id"], Value::Null);
    assert_eq!(
        v["suite"]["runs"]["report"]["columns"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Both in one table from the store.
    let both = [
        "suite",
        "lsm-hooks-2020",
        "--report",
        "side-b",
        "--baseline",
        "side-a",
    ];
    let report = stdout_of(secperf(&db).args(both));
    assert!(
        report.contains("Runs: the baseline run and this one"),
        "{report}"
    );
    assert!(report.contains("side-a (run 1)"), "{report}");
    assert!(report.contains("side-b (run 2)"), "{report}");
    // The later run's cell carries a % change against the baseline's.
    let row = report
        .lines()
        .skip_while(|l| !l.contains("Runs:"))
        .find(|l| l.contains("eventfd write+read"))
        .unwrap();
    assert!(row.contains('%'), "{row}");

    // With --json: this run's document, its sections against the baseline.
    let v: Value = serde_json::from_str(&stdout_of(secperf(&db).arg("--json").args(both))).unwrap();
    assert_eq!(v["run_id"], 2);
    assert_eq!(v["suite"]["name"], "lsm-hooks-2020");
    assert_eq!(v["suite"]["baseline_run_id"], 1);
    assert_eq!(
        v["suite"]["runs"]["report"]["columns"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(
        v["suite"]["other_side"]
            .as_str()
            .unwrap()
            .contains("--baseline")
    );

    // The other formats, and `results show`, draw the same report.
    let email = stdout_of(secperf(&db).args(both).args(["--format", "email"]));
    assert!(email.contains("side-b (run 2)"), "{email}");
    assert!(
        email.lines().all(|l| l.len() <= 72 && l.is_ascii()),
        "{email}"
    );
    let csv = stdout_of(secperf(&db).args(both).args(["--format", "csv"]));
    assert!(csv.contains("item,unit"), "{csv}");
    let shown = stdout_of(secperf(&db).args(["results", "show", "side-b"]));
    assert!(shown.contains("lsm-hooks-2020 v1:"), "{shown}");
    assert!(shown.contains("eventfd write+read [ns per op]"), "{shown}");

    // The stored runs are ordinary runs `compare` reads.
    let cmp = stdout_of(secperf(&db).args(["compare", "side-a", "side-b"]));
    assert!(cmp.contains("eventfd"), "{cmp}");
}

#[test]
fn baseline_must_be_a_run_of_the_same_suite() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    stdout_of(secperf(&db).args([
        "run",
        "-w",
        "getppid",
        "--tasks",
        "1",
        "--samples",
        "2",
        "--sample-ms",
        "20",
        "--label",
        "plain",
    ]));
    secperf(&db)
        .args(["suite", "creds-2008", "--baseline", "plain"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is a `run` run, not a run of suite creds-2008",
        ));
    secperf(&db)
        .args(["suite", "creds-2008", "--report", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run matches 'nope'"));
    stdout_of(secperf(&db).args(["suite", "lsm-hooks-2020", "--quick"]));
    secperf(&db)
        .args(["suite", "creds-2008", "--report", "lsm-hooks-2020"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is suite lsm-hooks-2020, not creds-2008",
        ));
}
