//! End-to-end tests of the `secperf` command line: the real binary, run with
//! its own temporary database (`--db`) and temporary XDG directories, so no
//! test touches the user's results or cache. Measurements are tiny (2
//! samples of 20 ms, no warmup, 1 task) so the whole file runs in seconds.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use tempfile::TempDir;

/// The first nine workloads of the catalog, in catalog order.
const WORKLOADS: [&str; 9] = [
    "getppid",
    "eventfd",
    "open",
    "stat",
    "access1",
    "access2",
    "write",
    "tree_walk",
    "mutex_yield",
];

/// How long a secperf command may take before it is taken for hung and
/// killed: a guard, not a time check, so generous on a loaded machine.
const HANG_GUARD: Duration = Duration::from_secs(300);

/// Smallest useful timing: 2 samples of 20 ms, no warmup (add `--tasks`).
const TIMING: [&str; 6] = ["--samples", "2", "--sample-ms", "20", "--warmup", "0"];

/// Smallest tree for `tree_walk` (its default builds ~19k files).
const SMALL_TREE: [&str; 4] = [
    "--param",
    "tree_walk.dirs=10",
    "--param",
    "tree_walk.files=100",
];

/// Serializes the tests that measure: tasks are pinned from the first
/// allowed CPU on, so two measurements at once would share a CPU and a
/// 20 ms slice could pass without a single operation (which `run` rejects).
fn measuring() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A private sandbox: a temporary directory holding the database and the
/// XDG data and cache directories the binary sees.
struct Sandbox {
    dir: TempDir,
    _measuring: Option<MutexGuard<'static, ()>>,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temporary directory"),
            _measuring: None,
        }
    }

    /// A sandbox for a test that measures: holds [`measuring`] until dropped.
    fn for_runs() -> Sandbox {
        let lock = measuring();
        Sandbox {
            _measuring: Some(lock),
            ..Sandbox::new()
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The database every command of this sandbox uses.
    fn db(&self) -> PathBuf {
        self.path().join("results.db")
    }

    /// `secperf` with no arguments, isolated from the user's environment:
    /// no `SECPERF_DB`, data and cache directories inside the sandbox.
    fn bare(&self) -> Command {
        let mut cmd = Command::cargo_bin("secperf").expect("secperf binary");
        cmd.env_remove("SECPERF_DB")
            .env("XDG_DATA_HOME", self.path().join("data"))
            .env("XDG_CACHE_HOME", self.path().join("cache"))
            .timeout(HANG_GUARD);
        cmd
    }

    /// `secperf --db <sandbox db> ARGS...`.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.bare();
        cmd.arg("--db").arg(self.db()).args(args);
        cmd
    }

    /// `secperf --db <db> run --json -w WORKLOADS <timing> EXTRA...`, which
    /// must succeed; returns the parsed JSON document.
    fn run_json(&self, workloads: &str, extra: &[&str]) -> Value {
        let mut args = vec!["run", "--json", "-w", workloads];
        args.extend(TIMING);
        args.extend(extra);
        let out = self.cmd(&args).assert().success().get_output().clone();
        parse_json(&out.stdout)
    }

    /// `secperf --db <db> ARGS... --json` (must succeed), parsed.
    fn json(&self, args: &[&str]) -> Value {
        let out = self
            .cmd(args)
            .arg("--json")
            .assert()
            .success()
            .get_output()
            .clone();
        parse_json(&out.stdout)
    }
}

/// Parses stdout as exactly one JSON document (trailing whitespace only).
fn parse_json(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document: {e}\n---\n{}",
            String::from_utf8_lossy(stdout)
        )
    })
}

fn as_i64(v: &Value, what: &str) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("{what} is not an integer: {v}"))
}

fn as_f64(v: &Value, what: &str) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {v}"))
}

/// Run ids of `results list --json`, in the order listed.
fn listed_ids(sb: &Sandbox) -> Vec<i64> {
    sb.json(&["results", "list"])["runs"]
        .as_array()
        .expect("runs array")
        .iter()
        .map(|r| as_i64(&r["run_id"], "run_id"))
        .collect()
}

/// Asserts that a command failed with exit code 2, printed nothing on
/// stdout, and printed a message (not a panic or backtrace) on stderr.
/// Returns stderr.
fn assert_usage_error(cmd: &mut Command) -> String {
    let out = cmd.assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_no_panic(&stderr);
    assert!(!stderr.trim().is_empty(), "stderr is empty");
    assert!(
        out.stdout.is_empty(),
        "stdout is not empty: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

fn assert_no_panic(stderr: &str) {
    for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace"] {
        assert!(!stderr.contains(bad), "stderr contains {bad:?}:\n{stderr}");
    }
}

/// Checks one result of `run --json` against what was asked for.
fn check_result(r: &Value, workload: &str, mode: &str, tasks: i64, samples: i64) {
    assert_eq!(r["workload"], workload, "{r}");
    assert_eq!(r["mode"], mode, "{r}");
    assert_eq!(as_i64(&r["tasks"], "tasks"), tasks);
    assert_eq!(as_i64(&r["samples"], "samples"), samples);
    for key in ["ops_per_sec", "ns_per_op"] {
        let s = &r[key];
        let (lo, med, hi) = (
            as_f64(&s["ci_low"], "ci_low"),
            as_f64(&s["median"], "median"),
            as_f64(&s["ci_high"], "ci_high"),
        );
        assert!(med > 0.0, "{workload} {key}: median {med} <= 0");
        assert!(
            lo <= med && med <= hi,
            "{workload} {key}: not ci_low <= median <= ci_high: {s}"
        );
    }
    let data = r["sample_data"].as_array().expect("sample_data array");
    assert_eq!(data.len() as i64, samples, "sample_data length");
    for s in data {
        let per_task = s["per_task_ops_per_sec"]
            .as_array()
            .expect("per-task rates");
        assert_eq!(per_task.len() as i64, tasks, "one rate per task: {s}");
        assert!(
            as_i64(&s["ops"], "ops") > 0,
            "a sample without operations: {s}"
        );
    }
}

/// The CPUs this process may run on (what `run` pins tasks to).
fn allowed_cpus() -> usize {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let r = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        assert_eq!(r, 0, "sched_getaffinity failed");
        libc::CPU_COUNT(&set) as usize
    }
}

// ---------------------------------------------------------------------------
// list, probe, help
// ---------------------------------------------------------------------------

#[test]
fn list_json_describes_every_workload() {
    let sb = Sandbox::new();
    let out = sb.bare().args(["list", "--json"]).assert().success();
    let doc = parse_json(&out.get_output().stdout);
    let workloads = doc["workloads"].as_array().expect("workloads array");
    let names: Vec<&str> = workloads
        .iter()
        .map(|w| w["name"].as_str().expect("name"))
        .collect();
    // The first nine, in catalog order; later issues add more after them.
    assert_eq!(names[..WORKLOADS.len()], WORKLOADS);
    for w in workloads {
        let name = &w["name"];
        assert!(
            !w["description"].as_str().unwrap_or("").is_empty(),
            "{name}: no description"
        );
        let hooks = w["hooks"].as_array().expect("hooks array");
        assert!(!hooks.is_empty(), "{name}: no hooks");
        assert!(
            hooks
                .iter()
                .all(|h| h.as_str().is_some_and(|h| !h.is_empty()))
        );
        assert!(w["params"].is_array(), "{name}: params is not an array");
    }
    let open = workloads
        .iter()
        .find(|w| w["name"] == "open")
        .expect("open");
    let depth = open["params"]
        .as_array()
        .expect("params")
        .iter()
        .find(|p| p["name"] == "depth")
        .expect("open has a depth parameter");
    assert_eq!(depth["default"], "4");
    let tree_walk = workloads
        .iter()
        .find(|w| w["name"] == "tree_walk")
        .expect("tree_walk");
    assert_eq!(tree_walk["unit"], "entries");
}

#[test]
fn list_table_names_every_workload() {
    let sb = Sandbox::new();
    let mut assert = sb.bare().arg("list").assert().success();
    for name in WORKLOADS {
        assert = assert.stdout(predicate::str::contains(name));
    }
    assert.stdout(predicate::str::contains("--param"));
}

#[test]
fn probe_json_has_kernel_cpu_and_security_sections() {
    let sb = Sandbox::new();
    let out = sb.bare().args(["probe", "--json"]).assert().success();
    let doc = parse_json(&out.get_output().stdout);
    let release = doc["kernel"]["release"]
        .as_str()
        .expect("kernel.release is a string");
    assert!(!release.is_empty());
    for key in ["cpu", "lsm", "seccomp", "audit", "mitigations"] {
        assert!(
            doc.get(key).is_some_and(|v| !v.is_null()),
            "probe --json has no {key}: {doc}"
        );
    }
}

#[test]
fn probe_text_shows_kernel_section() {
    let sb = Sandbox::new();
    sb.bare()
        .arg("probe")
        .assert()
        .success()
        .stdout(predicate::str::contains("Kernel"));
}

#[test]
fn help_states_units() {
    let sb = Sandbox::new();
    sb.bare()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("ops/s"))
        .stdout(predicate::str::contains("ns/op"));
    sb.bare()
        .args(["run", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("milliseconds"))
        .stdout(predicate::str::contains("--no-pin"));
    sb.bare()
        .args(["results", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("export"));
}

#[test]
fn alphas_help_names_the_default_error_rate() {
    // Issue 44: --alpha's help read as if Holm were the default, while
    // overhead's sequential design controls the FDR (e-BH) by default.
    let out = Sandbox::new()
        .bare()
        .args(["overhead", "--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8_lossy(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let alpha = help.split("--alpha").nth(1).unwrap_or_default();
    assert!(
        alpha.contains("(the default) holds its false discovery rate at P (e-BH)"),
        "{alpha}"
    );
}

#[test]
fn version_prints_the_package_version() {
    let sb = Sandbox::new();
    sb.bare()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
}

// ---------------------------------------------------------------------------
// run
// ---------------------------------------------------------------------------

#[test]
fn run_json_is_one_document_with_summaries_and_samples() {
    let sb = Sandbox::for_runs();
    let doc = sb.run_json("getppid,eventfd", &["--tasks", "1"]);
    let run_id = as_i64(&doc["run_id"], "run_id");
    assert!(run_id > 0);
    assert!(doc["label"].is_string(), "label: {}", doc["label"]);
    assert!(doc["system"].is_object(), "system is not an object");
    assert!(doc["system"]["kernel"].is_object(), "system has no kernel");
    let results = doc["results"].as_array().expect("results array");
    assert_eq!(results.len(), 2);
    check_result(&results[0], "getppid", "process", 1, 2);
    check_result(&results[1], "eventfd", "process", 1, 2);
    assert_eq!(results[0]["pinned"], true);
    // The database named in the output is the one given.
    assert_eq!(doc["db"].as_str().map(PathBuf::from), Some(sb.db()));
}

#[test]
fn run_json_samples_follow_the_samples_option() {
    let sb = Sandbox::for_runs();
    let mut args = vec!["run", "--json", "-w", "getppid", "--tasks", "1"];
    args.extend(["--samples", "3", "--sample-ms", "20", "--warmup", "1"]);
    let out = sb.cmd(&args).assert().success().get_output().clone();
    let doc = parse_json(&out.stdout);
    let r = &doc["results"][0];
    check_result(r, "getppid", "process", 1, 3);
    assert_eq!(as_i64(&r["warmup_samples"], "warmup_samples"), 1);
    assert_eq!(as_i64(&r["sample_ms"], "sample_ms"), 20);
}

#[test]
fn run_json_thread_mode() {
    let sb = Sandbox::for_runs();
    let doc = sb.run_json("getppid,mutex_yield", &["--tasks", "1", "--mode", "thread"]);
    let results = doc["results"].as_array().expect("results array");
    assert_eq!(results.len(), 2);
    check_result(&results[0], "getppid", "thread", 1, 2);
    check_result(&results[1], "mutex_yield", "thread", 1, 2);
}

#[test]
fn run_json_task_ladder_without_pinning() {
    let sb = Sandbox::for_runs();
    let doc = sb.run_json("getppid", &["--tasks", "1,2", "--no-pin"]);
    let results = doc["results"].as_array().expect("results array");
    assert_eq!(results.len(), 2);
    check_result(&results[0], "getppid", "process", 1, 2);
    check_result(&results[1], "getppid", "process", 2, 2);
    for r in results {
        assert_eq!(r["pinned"], false);
    }
}

#[test]
fn run_json_file_workloads_with_params() {
    let sb = Sandbox::for_runs();
    let scratch = sb.path().join("scratch");
    std::fs::create_dir(&scratch).expect("scratch dir");
    let scratch = scratch.to_str().expect("utf-8 path");
    let doc = sb.run_json(
        "open,stat,access1,access2,write",
        &[
            "--tasks",
            "1",
            "--scratch",
            scratch,
            "--param",
            "open.depth=2",
            "--param",
            "write.target=null",
        ],
    );
    let results = doc["results"].as_array().expect("results array");
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["workload"].as_str().expect("workload"))
        .collect();
    assert_eq!(names, ["open", "stat", "access1", "access2", "write"]);
    for r in results {
        check_result(r, r["workload"].as_str().unwrap(), "process", 1, 2);
    }
    assert_eq!(results[0]["params"]["depth"], "2");
    assert_eq!(results[1]["params"]["depth"], "4", "stat keeps its default");
    assert_eq!(results[4]["params"]["target"], "null");
    // Workloads clean their scratch files up.
    let left: Vec<_> = std::fs::read_dir(scratch)
        .expect("read scratch")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(left.is_empty(), "scratch not cleaned up: {left:?}");
}

#[test]
fn run_tree_walk_with_small_tree_reports_entries() {
    let sb = Sandbox::for_runs();
    let mut extra = vec!["--tasks", "1"];
    extra.extend(SMALL_TREE);
    let doc = sb.run_json("tree_walk", &extra);
    let r = &doc["results"][0];
    check_result(r, "tree_walk", "process", 1, 2);
    let unit = &r["unit_rate"];
    assert_eq!(unit["unit"], "entries", "{r}");
    assert_eq!(as_i64(&unit["per_op"], "per_op"), 110);
    let med = as_f64(&unit["per_sec"]["median"], "per_sec.median");
    assert!(med > 0.0);
    // The tree is cached under $XDG_CACHE_HOME/secperf, not elsewhere.
    assert!(
        sb.path().join("cache").join("secperf").is_dir(),
        "no tree cache under XDG_CACHE_HOME"
    );
}

#[test]
fn run_table_names_workload_and_stored_run() {
    let sb = Sandbox::for_runs();
    let mut args = vec!["run", "-w", "getppid", "--tasks", "1"];
    args.extend(TIMING);
    args.extend(["--label", "tbl"]);
    sb.cmd(&args)
        .assert()
        .success()
        .stdout(predicate::str::contains("getppid"))
        .stderr(predicate::str::contains("Stored as run 1"))
        .stderr(predicate::str::contains("label 'tbl'"))
        .stderr(predicate::str::contains("secperf: measuring getppid"));
}

#[test]
fn run_label_finds_the_run_again() {
    let sb = Sandbox::for_runs();
    let ran = sb.run_json("getppid,eventfd", &["--tasks", "1", "--label", "foo"]);
    assert_eq!(ran["label"], "foo");
    let shown = sb.json(&["results", "show", "foo"]);
    assert_eq!(shown["run_id"], ran["run_id"]);
    assert_eq!(shown["label"], "foo");
    assert_eq!(shown["kind"], "run");
    assert!(shown["finished_at"].is_string(), "run not finished");
    assert_eq!(
        shown["results"], ran["results"],
        "stored results differ from the ones printed"
    );
    assert_eq!(shown["system"], ran["system"]);
}

// ---------------------------------------------------------------------------
// results
// ---------------------------------------------------------------------------

#[test]
fn results_list_on_empty_database() {
    let sb = Sandbox::new();
    sb.cmd(&["results", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("No runs stored"));
    let doc = sb.json(&["results", "list"]);
    assert_eq!(doc["runs"], serde_json::json!([]));
}

#[test]
fn results_round_trip_list_export_delete() {
    let sb = Sandbox::for_runs();
    let first = as_i64(
        &sb.run_json("getppid", &["--tasks", "1", "--label", "one"])["run_id"],
        "run_id",
    );
    let second = as_i64(
        &sb.run_json("getppid,eventfd", &["--tasks", "1", "--label", "two"])["run_id"],
        "run_id",
    );
    assert_ne!(first, second);

    // list: both, newest first, with counts.
    let list = sb.json(&["results", "list"]);
    let runs = list["runs"].as_array().expect("runs");
    assert_eq!(listed_ids(&sb), [second, first]);
    assert_eq!(runs[0]["label"], "two");
    assert_eq!(as_i64(&runs[0]["results"], "results"), 2);
    assert_eq!(
        runs[0]["workloads"],
        serde_json::json!(["getppid", "eventfd"])
    );
    assert!(runs[0]["kernel"].is_string());
    sb.cmd(&["results", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("two"))
        .stdout(predicate::str::contains("one"));

    // latest, latest~1.
    let latest = sb.json(&["results", "show", "latest"]);
    assert_eq!(as_i64(&latest["run_id"], "run_id"), second);
    let before = sb.json(&["results", "show", "latest~1"]);
    assert_eq!(as_i64(&before["run_id"], "run_id"), first);
    let err = assert_usage_error(&mut sb.cmd(&["results", "show", "latest~5"]));
    assert!(err.contains("only 2 run"), "{err}");

    // show as text.
    sb.cmd(&["results", "show", &second.to_string()])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "secperf run: two (run {second})"
        )))
        .stdout(predicate::str::contains("eventfd"))
        .stdout(predicate::str::contains("Kernel"));

    // export CSV: a header and one row per sample (2 results x 2 samples).
    let out = sb
        .cmd(&["results", "export", &second.to_string(), "--format", "csv"])
        .assert()
        .success()
        .get_output()
        .clone();
    let csv = String::from_utf8(out.stdout).expect("utf-8 CSV");
    let lines: Vec<&str> = csv.lines().filter(|l| !l.is_empty()).collect();
    assert!(
        lines[0].starts_with("run_id,label,"),
        "header: {}",
        lines[0]
    );
    assert_eq!(lines.len(), 1 + 2 * 2, "CSV:\n{csv}");
    let columns = lines[0].split(',').count();
    for row in &lines[1..] {
        assert!(row.starts_with(&format!("{second},two,")), "row: {row}");
        assert_eq!(row.split(',').count(), columns, "row: {row}");
    }

    // export CSV of both runs: 2 + 4 sample rows.
    let out = sb
        .cmd(&["results", "export", "one", "two", "--format", "csv"])
        .assert()
        .success()
        .get_output()
        .clone();
    let rows = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(rows, 1 + 2 + 4);

    // export JSON: one run is an object with results.
    let out = sb
        .cmd(&["results", "export", &first.to_string(), "--format", "json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = parse_json(&out.stdout);
    assert_eq!(as_i64(&doc["run_id"], "run_id"), first);
    let results = doc["results"].as_array().expect("results");
    assert_eq!(results.len(), 1);
    check_result(&results[0], "getppid", "process", 1, 2);

    // export JSON of two runs: an array.
    let out = sb
        .cmd(&["results", "export", "latest", "latest~1"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = parse_json(&out.stdout);
    assert_eq!(doc.as_array().map(Vec::len), Some(2), "{doc}");

    // -o FILE writes the file, nothing on stdout.
    let file = sb.path().join("export.csv");
    sb.cmd(&["results", "export", "latest", "--format", "csv", "-o"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    let written = std::fs::read_to_string(&file).expect("export file written");
    assert_eq!(written.trim_end(), csv.trim_end());

    // delete, then the run is gone.
    sb.cmd(&["results", "delete", &first.to_string()])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("Deleted run {first}")));
    let err = assert_usage_error(&mut sb.cmd(&["results", "show", &first.to_string()]));
    assert!(err.contains("secperf results list"), "{err}");
    assert_eq!(listed_ids(&sb), [second]);
    let err = assert_usage_error(&mut sb.cmd(&["results", "show", "latest~1"]));
    assert!(err.contains("only 1 run"), "{err}");

    // delete --json reports the ids.
    let doc = sb.json(&["results", "delete", "two"]);
    assert_eq!(doc["deleted"], serde_json::json!([second]));
    assert_eq!(listed_ids(&sb), Vec::<i64>::new());
    let err = assert_usage_error(&mut sb.cmd(&["results", "show", "latest"]));
    assert!(err.contains("no runs recorded"), "{err}");
}

#[test]
fn results_delete_unknown_run_is_usage_error() {
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&["results", "delete", "42"]));
    assert!(err.contains("secperf results list"), "{err}");
}

#[test]
fn secperf_db_env_var_is_honoured() {
    let sb = Sandbox::for_runs();
    let db = sb.path().join("from-env.db");
    let mut args = vec!["run", "--json", "-w", "getppid", "--tasks", "1"];
    args.extend(TIMING);
    let out = sb
        .bare()
        .env("SECPERF_DB", &db)
        .args(&args)
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = parse_json(&out.stdout);
    let run_id = as_i64(&doc["run_id"], "run_id");
    assert_eq!(doc["db"].as_str().map(PathBuf::from), Some(db.clone()));
    assert!(db.is_file(), "SECPERF_DB file not created");
    assert!(
        !sb.path().join("data").exists(),
        "the default data directory was used despite SECPERF_DB"
    );
    let out = sb
        .bare()
        .arg("--db")
        .arg(&db)
        .args(["results", "list", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let list = parse_json(&out.stdout);
    assert_eq!(list["runs"][0]["run_id"], run_id);
    // --db wins over SECPERF_DB.
    let other = sb.path().join("other.db");
    let out = sb
        .bare()
        .env("SECPERF_DB", &db)
        .arg("--db")
        .arg(&other)
        .args(["results", "list", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(parse_json(&out.stdout)["runs"], serde_json::json!([]));
}

// ---------------------------------------------------------------------------
// bad input: exit code 2, a message, no panic
// ---------------------------------------------------------------------------

/// `secperf --db <db> run -w WORKLOADS <timing> EXTRA...`, expected to be
/// refused with exit code 2; returns stderr. Nothing may be stored.
fn refused_run(sb: &Sandbox, workloads: &str, extra: &[&str]) -> String {
    let mut args = vec!["run", "-w", workloads];
    args.extend(TIMING);
    args.extend(extra);
    let err = assert_usage_error(&mut sb.cmd(&args));
    if sb.db().exists() {
        assert_eq!(
            listed_ids(sb),
            Vec::<i64>::new(),
            "a refused run was stored"
        );
    }
    err
}

#[test]
fn unknown_workload_lists_valid_names() {
    let sb = Sandbox::new();
    let err = refused_run(&sb, "getppid,nope", &["--tasks", "1"]);
    assert!(err.contains("nope"), "{err}");
    for name in WORKLOADS {
        assert!(err.contains(name), "{name} missing from: {err}");
    }
}

#[test]
fn zero_tasks_is_usage_error() {
    let sb = Sandbox::new();
    let err = refused_run(&sb, "getppid", &["--tasks", "0"]);
    assert!(err.contains("--tasks"), "{err}");
}

#[test]
fn non_numeric_tasks_is_usage_error() {
    let sb = Sandbox::new();
    let err = refused_run(&sb, "getppid", &["--tasks", "abc"]);
    assert!(err.contains("abc"), "{err}");
}

#[test]
fn non_numeric_samples_is_usage_error() {
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&[
        "run",
        "-w",
        "getppid",
        "--tasks",
        "1",
        "--samples",
        "abc",
    ]));
    assert!(err.contains("--samples"), "{err}");
}

#[test]
fn zero_samples_is_usage_error() {
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&[
        "run",
        "-w",
        "getppid",
        "--tasks",
        "1",
        "--samples",
        "0",
    ]));
    assert!(err.contains("--samples"), "{err}");
}

#[test]
fn too_short_sample_is_usage_error() {
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&[
        "run",
        "-w",
        "getppid",
        "--tasks",
        "1",
        "--sample-ms",
        "1",
    ]));
    assert!(err.contains("--sample-ms"), "{err}");
}

#[test]
fn unknown_mode_is_usage_error() {
    let sb = Sandbox::new();
    let err = refused_run(&sb, "getppid", &["--tasks", "1", "--mode", "bogus"]);
    assert!(err.contains("bogus"), "{err}");
    assert!(err.contains("thread"), "valid modes not listed: {err}");
}

#[test]
fn unknown_param_key_is_usage_error() {
    let sb = Sandbox::new();
    let err = refused_run(&sb, "open", &["--tasks", "1", "--param", "open.nope=1"]);
    assert!(err.contains("nope"), "{err}");
    assert!(err.contains("depth"), "valid keys not listed: {err}");
}

#[test]
fn non_numeric_param_value_is_usage_error() {
    let sb = Sandbox::new();
    let err = refused_run(&sb, "open", &["--tasks", "1", "--param", "depth=x"]);
    assert!(err.contains("depth"), "{err}");
}

#[test]
fn param_for_unselected_workload_is_usage_error() {
    let sb = Sandbox::new();
    let err = refused_run(&sb, "getppid", &["--tasks", "1", "--param", "open.depth=2"]);
    assert!(err.contains("-w"), "{err}");
}

#[test]
fn more_tasks_than_cpus_with_pinning_suggests_no_pin() {
    let sb = Sandbox::new();
    let cpus = allowed_cpus();
    let tasks = if cpus < 64 { 64 } else { cpus + 1 };
    let err = refused_run(&sb, "getppid", &["--tasks", &tasks.to_string()]);
    assert!(err.contains("--no-pin"), "{err}");
}

#[test]
fn unwritable_db_is_usage_error_naming_db_option() {
    let sb = Sandbox::new();
    let mut args = vec![
        "--db",
        "/proc/nope/x.db",
        "run",
        "-w",
        "getppid",
        "--tasks",
        "1",
    ];
    args.extend(TIMING);
    let err = assert_usage_error(sb.bare().args(&args));
    assert!(err.contains("--db"), "{err}");
    assert!(err.contains("/proc/nope"), "{err}");
}

#[test]
fn db_that_is_a_directory_or_not_a_database_is_usage_error() {
    let sb = Sandbox::new();
    let dir = sb.path().join("a-directory");
    std::fs::create_dir(&dir).expect("directory");
    let err = assert_usage_error(sb.bare().arg("--db").arg(&dir).args(["results", "list"]));
    assert!(err.contains("--db"), "{err}");

    let junk = sb.path().join("junk.db");
    std::fs::write(&junk, vec![b'x'; 4096]).expect("junk file");
    let err = assert_usage_error(sb.bare().arg("--db").arg(&junk).args(["results", "list"]));
    assert!(err.contains("--db"), "{err}");
    // The file is left as it was.
    assert_eq!(std::fs::read(&junk).expect("junk"), vec![b'x'; 4096]);
}

#[test]
fn show_unknown_run_is_usage_error() {
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&["results", "show", "999999"]));
    assert!(err.contains("999999"), "{err}");
    assert!(err.contains("secperf results list"), "{err}");
}

#[test]
fn unknown_subcommand_is_usage_error() {
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&["frobnicate"]));
    assert!(err.contains("frobnicate"), "{err}");
    let err = assert_usage_error(&mut sb.cmd(&["results", "frobnicate"]));
    assert!(err.contains("frobnicate"), "{err}");
}

#[test]
fn missing_scratch_directory_is_usage_error() {
    let sb = Sandbox::new();
    let err = refused_run(
        &sb,
        "open",
        &["--tasks", "1", "--scratch", "/nonexistent-dir"],
    );
    assert!(err.contains("--scratch"), "{err}");
    assert!(err.contains("/nonexistent-dir"), "{err}");
}

// ---------------------------------------------------------------------------
// failures during a run
// ---------------------------------------------------------------------------

#[test]
fn a_run_that_measured_nothing_is_reported_and_not_stored() {
    // /proc is a directory nobody (root included) can create files in, so
    // the workload's setup fails after the run has started, before any
    // result: no empty run is left claiming data.
    let sb = Sandbox::new();
    let mut args = vec!["run", "-w", "open", "--tasks", "1", "--scratch", "/proc"];
    args.extend(TIMING);
    let out = sb.cmd(&args).assert().code(1).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_no_panic(&stderr);
    assert!(stderr.contains("secperf: error:"), "{stderr}");
    assert!(stderr.contains("/proc"), "{stderr}");
    assert!(
        stderr.contains("nothing was measured, so no run was stored"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "stdout not empty");
    let list = sb.json(&["results", "list"]);
    assert_eq!(list["runs"], serde_json::json!([]), "{list}");
}

#[test]
fn interrupt_stops_the_run_and_keeps_finished_results() {
    let sb = Sandbox::for_runs();
    let scratch = sb.path().join("scratch");
    std::fs::create_dir(&scratch).expect("scratch dir");
    // Long enough slices that the signal lands while eventfd is measured.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_secperf"))
        .env_remove("SECPERF_DB")
        .env("XDG_DATA_HOME", sb.path().join("data"))
        .env("XDG_CACHE_HOME", sb.path().join("cache"))
        .arg("--db")
        .arg(sb.db())
        .args(["run", "--json", "-w", "getppid,eventfd", "--tasks", "1"])
        .args(["--samples", "5", "--sample-ms", "200", "--warmup", "0"])
        .arg("--scratch")
        .arg(&scratch)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start secperf");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = stderr.read_line(&mut line).expect("read stderr");
        assert!(n > 0, "secperf ended before measuring eventfd:\n{seen}");
        seen.push_str(&line);
        if line.contains("measuring eventfd") {
            break;
        }
    }
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: plain kill(2) of the child we started and still own.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    stderr.read_to_string(&mut seen).expect("read stderr");
    let out = child.wait_with_output().expect("wait for secperf");
    assert_no_panic(&seen);
    let code = out.status.code();
    assert!(
        code == Some(130),
        "interrupted run exited with {:?}:\n{seen}",
        out.status
    );
    assert!(seen.contains("interrupted"), "{seen}");
    assert!(seen.contains("secperf results show 1"), "{seen}");
    assert!(out.stdout.is_empty(), "stdout not empty");

    // getppid finished and is kept; the run is unfinished.
    let shown = sb.json(&["results", "show", "1"]);
    assert!(shown["finished_at"].is_null(), "run marked finished");
    let results = shown["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{shown}");
    check_result(&results[0], "getppid", "process", 1, 5);
    // Tasks stopped, scratch removed.
    let left: Vec<_> = std::fs::read_dir(&scratch)
        .expect("read scratch")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(left.is_empty(), "scratch not cleaned up: {left:?}");
}

#[test]
fn export_to_unwritable_file_fails_with_message() {
    let sb = Sandbox::for_runs();
    sb.run_json("getppid", &["--tasks", "1"]);
    let out = sb
        .cmd(&["results", "export", "latest", "-o", "/proc/nope/out.json"])
        .assert()
        .failure()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_no_panic(&stderr);
    assert!(stderr.contains("/proc/nope/out.json"), "{stderr}");
}

// ---------------------------------------------------------------------------
// regressions: bugs found by these tests, fixed
// ---------------------------------------------------------------------------

#[test]
fn invalid_write_target_is_usage_error() {
    let sb = Sandbox::for_runs();
    let err = refused_run(
        &sb,
        "write",
        &["--tasks", "1", "--param", "write.target=bogus"],
    );
    assert!(err.contains("target"), "{err}");
}

#[test]
fn huge_open_depth_is_usage_error() {
    // Thread mode, so the timeout's kill reaches every task.
    let sb = Sandbox::for_runs();
    let mut args = vec!["run", "-w", "open", "--tasks", "1", "--mode", "thread"];
    args.extend(TIMING);
    args.extend(["--param", "open.depth=99999999999999"]);
    // Scratch in the sandbox: the timeout's SIGKILL leaves it behind.
    let mut cmd = sb.cmd(&args);
    cmd.arg("--scratch").arg(sb.path());
    // Refused before anything runs; the timeout only stops a run that
    // would try to build the path.
    cmd.timeout(HANG_GUARD);
    let err = assert_usage_error(&mut cmd);
    assert!(err.contains("depth"), "{err}");
}

#[test]
fn closed_stdout_does_not_panic() {
    let sb = Sandbox::new();
    for args in [
        &["list", "--json"][..],
        &["probe"][..],
        &["results", "list", "--json"][..],
    ] {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_secperf"))
            .env_remove("SECPERF_DB")
            .env("XDG_DATA_HOME", sb.path().join("data"))
            .env("XDG_CACHE_HOME", sb.path().join("cache"))
            .arg("--db")
            .arg(sb.db())
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("run secperf");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(101), "{args:?} panicked: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

// ---------------------------------------------------------------------------
// the stored command line
// ---------------------------------------------------------------------------

/// Stores an (empty) run whose command line is built from `argv` as a
/// measuring command builds it, without measuring; returns its id.
fn store_run_started_by(db: &Path, argv: &[&str]) -> i64 {
    let mut store = secperf::store::Store::open(db).expect("database");
    store
        .begin_run(&secperf::model::RunMeta {
            label: String::new(),
            kind: "overhead".into(),
            started_at: chrono::Utc::now(),
            host: "test".into(),
            secperf_version: env!("CARGO_PKG_VERSION").into(),
            command: secperf::engine::session::command_line_of(argv.iter().map(|a| a.to_string())),
            params: serde_json::json!({}),
            system: serde_json::json!({}),
        })
        .expect("run recorded")
}

#[test]
fn stored_command_line_reproduces_a_quoted_command() {
    let sb = Sandbox::new();
    let argv = [
        "/build/target/debug/secperf",
        "overhead",
        "-m",
        "seccomp",
        "--",
        "sh",
        "-c",
        "a b",
    ];
    let id = store_run_started_by(&sb.db(), &argv);
    let shown = sb.json(&["results", "show", &id.to_string()]);
    let command = shown["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no command in {shown}"));
    assert_eq!(command, "secperf overhead -m seccomp -- sh -c 'a b'");
    let mut words = shell_words::split(command).expect("a shell line");
    words[0] = argv[0].to_string();
    assert_eq!(words, argv);

    // The email format's "Reproduce:" line keeps the quoted word whole.
    let out = sb
        .cmd(&["results", "show", &id.to_string(), "--format", "email"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("Reproduce: secperf overhead -m seccomp -- sh -c 'a b'"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------
// where the database goes
// ---------------------------------------------------------------------------

#[test]
fn db_in_a_missing_directory_is_usage_error_and_creates_nothing() {
    let sb = Sandbox::new();
    let missing = sb.path().join("no-such-dir/sub");
    let db = missing.join("x.db");
    let err = assert_usage_error(sb.bare().arg("--db").arg(&db).args(["results", "list"]));
    assert!(
        err.contains(&format!(
            "--db {}: directory {} does not exist; create it first (mkdir -p {}) or choose \
             another with --db PATH or SECPERF_DB",
            db.display(),
            missing.display(),
            missing.display()
        )),
        "{err}"
    );
    let err = assert_usage_error(sb.bare().env("SECPERF_DB", &db).args(["results", "list"]));
    assert!(
        err.contains(&format!("SECPERF_DB={}", db.display())),
        "{err}"
    );
    assert!(
        !sb.path().join("no-such-dir").exists(),
        "a directory was created"
    );

    // The default location is created when missing.
    sb.bare().args(["results", "list"]).assert().success();
    assert!(sb.path().join("data/secperf/secperf.db").is_file());
}

// ---------------------------------------------------------------------------
// a command after `--`
// ---------------------------------------------------------------------------

#[test]
fn double_dash_with_no_command_is_usage_error() {
    let sb = Sandbox::new();
    // Each also carries a value refused later in the checks, so that if
    // the bare `--` were let through, the command would still stop before
    // measuring anything (with another message).
    for args in [
        &["overhead", "-m", "seccomp", "--max-pairs", "5", "--"][..],
        &["run", "--samples", "0", "--"][..],
    ] {
        let err = assert_usage_error(&mut sb.cmd(args));
        assert!(
            err.contains(
                "no command after `--`: give the command to measure after --, e.g. `-- sh -c \
                 'make -j2'`, or leave out -- to measure the built-in workloads"
            ),
            "{args:?}: {err}"
        );
        assert!(!sb.db().exists(), "{args:?} opened the database");
    }
}

#[test]
fn the_t_test_and_the_fdr_need_the_sequential_design() {
    let sb = Sandbox::new();
    for (flags, says) in [
        (
            &["--test", "t"][..],
            "--test t applies to the sequential design",
        ),
        (
            &["--error-rate", "fdr"][..],
            "--error-rate fdr needs the sequential",
        ),
    ] {
        let mut args = vec![
            "overhead", "-m", "seccomp", "-w", "getppid", "--pairs", "10",
        ];
        args.extend(flags);
        let err = assert_usage_error(&mut sb.cmd(&args));
        assert!(err.contains(says), "{err}");
        assert!(err.contains("drop --pairs"), "{err}");
    }
    let err = assert_usage_error(&mut sb.cmd(&["overhead", "--test", "z"]));
    assert!(err.contains("sign") && err.contains('t'), "{err}");
}

// ---------------------------------------------------------------------------
// --metric
// ---------------------------------------------------------------------------

#[test]
fn an_unknown_metric_is_a_usage_error_with_a_did_you_mean() {
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&["overhead", "-w", "getppid", "--metric", "cycles"]));
    assert!(err.contains("cycles are not counted"), "{err}");
    assert!(err.contains("give time"), "{err}");
    let err = assert_usage_error(&mut sb.cmd(&["calibrate", "--metric", "instrucions"]));
    assert!(err.contains("did you mean 'instructions'"), "{err}");
}

#[test]
fn instructions_on_this_host_say_why_not_and_point_to_a_guest() {
    // On this project's VMs there is no PMU: exit 2, before anything is
    // measured, pointing to --vm. Where there is one, instructions are
    // counted (tests/overhead.rs checks that, and skips without a PMU).
    if secperf::sys::pmu::instructions_counter().is_ok() {
        eprintln!("a PMU counts instructions here: nothing is refused");
        return;
    }
    let sb = Sandbox::new();
    for args in [
        &[
            "overhead",
            "-w",
            "getppid",
            "-m",
            "seccomp:allow",
            "--metric",
            "instructions",
        ][..],
        &["calibrate", "--metric", "instructions"][..],
    ] {
        let err = assert_usage_error(&mut sb.cmd(args));
        assert!(
            err.contains("--metric instructions on this machine"),
            "{err}"
        );
        assert!(err.contains("--vm IMAGE"), "{err}");
        assert!(err.contains("PMU") || err.contains("refused"), "{err}");
    }
    assert!(!sb.db().exists(), "nothing was stored");
    // A suite's tables are in its post's units: it says what to run.
    let err = assert_usage_error(&mut sb.cmd(&[
        "suite",
        "audit-2017",
        "--metric",
        "instructions",
        "--vm",
        "/boot/vmlinuz-nothing",
    ]));
    assert!(err.contains("post's units"), "{err}");
}

#[test]
fn instructions_with_profile_or_a_server_say_what_is_possible() {
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&[
        "overhead",
        "-w",
        "getppid",
        "-m",
        "seccomp:allow",
        "--metric",
        "instructions",
        "--profile",
    ]));
    assert!(
        err.contains("--metric instructions with --profile"),
        "{err}"
    );
    assert!(err.contains("--metric time"), "{err}");
    let err = assert_usage_error(&mut sb.cmd(&[
        "overhead",
        "-m",
        "seccomp:allow",
        "--metric",
        "instructions",
        "--server",
        "redis-server --port 0",
        "--",
        "redis-benchmark",
    ]));
    assert!(err.contains("--metric instructions with --server"), "{err}");
}

#[test]
fn a_guest_whose_clock_does_not_count_instructions_stops_with_exit_2() {
    // The guest's check, run where the clock keeps time (this host, as a
    // guest booted without icount would): secperf started as an icount
    // guest must refuse to measure, saying why.
    let sb = Sandbox::new();
    let shared = sb.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(
        shared.join("request.json"),
        r#"{"version": 1, "icount": true, "task": {"kind": "command"}}"#,
    )
    .unwrap();
    let err = assert_usage_error(
        sb.cmd(&["list"])
            .env(secperf::vm::guest::GUEST_ENV, &shared),
    );
    assert!(err.contains("not counting instructions"), "{err}");
    assert!(err.contains("-icount shift=0,sleep=off"), "{err}");
}

#[test]
fn a_guest_is_told_by_its_request_and_refuses_one_it_cannot_read() {
    // Issue 54: a guest learns what to do from the host's request in the
    // shared directory, never from the host's arguments parsed again; a
    // request of another form, none at all, or the old `--boot-half`
    // words are each a usage error saying what happened.
    let sb = Sandbox::new();
    let shared = sb.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let guest = |args: &[&str]| {
        let mut c = sb.cmd(args);
        c.env(secperf::vm::guest::GUEST_ENV, &shared);
        c
    };
    let err = assert_usage_error(&mut guest(&["guest"]));
    assert!(err.contains("reading the host's request"), "{err}");
    std::fs::write(
        shared.join("request.json"),
        r#"{"version": 7, "icount": false, "task": {"kind": "command"}}"#,
    )
    .unwrap();
    let err = assert_usage_error(&mut guest(&["guest"]));
    assert!(err.contains("written in form 7"), "{err}");
    assert!(err.contains("the same secperf"), "{err}");
    std::fs::write(
        shared.join("request.json"),
        r#"{"version": 1, "icount": false, "task": {"kind": "boot_thirds"}}"#,
    )
    .unwrap();
    let err = assert_usage_error(&mut guest(&["guest"]));
    assert!(err.contains("not a request this secperf knows"), "{err}");
    // A --vm guest's request: its command line is what it runs, and
    // `secperf guest` has nothing to do there.
    std::fs::write(
        shared.join("request.json"),
        r#"{"version": 1, "icount": false, "task": {"kind": "command"}}"#,
    )
    .unwrap();
    let err = assert_usage_error(&mut guest(&["guest"]));
    assert!(err.contains("its command line"), "{err}");
    // The old words of a kernel A/B's guest.
    let err = assert_usage_error(&mut guest(&[
        "overhead",
        "--boot-half",
        "0,1",
        "-w",
        "getppid",
    ]));
    assert!(err.contains("--boot-half"), "{err}");
    assert!(err.contains("request.json"), "{err}");
    // Outside a guest, `secperf guest` is refused too.
    let err = assert_usage_error(&mut sb.cmd(&["guest"]));
    assert!(err.contains("run by secperf in a guest"), "{err}");
}

#[test]
fn json_beside_another_format_is_a_usage_error_before_anything_runs() {
    // Issue 44: `overhead --json --format csv` started measuring, and
    // `results show --json --format csv` printed JSON with exit 0.
    let sb = Sandbox::new();
    let started = std::time::Instant::now();
    for args in [
        &["--json", "overhead", "-w", "getppid", "--format", "csv"][..],
        &["--json", "run", "-w", "getppid", "--format", "markdown"],
        &["--json", "results", "show", "1", "--format", "csv"],
        &["--json", "compare", "1", "2", "--format", "email"],
        &[
            "--json",
            "predict",
            "--format",
            "table",
            "-m",
            "seccomp:allow",
            "--",
            "true",
        ],
        &["--json", "suite", "audit-2017", "--format", "csv"],
    ] {
        let err = assert_usage_error(&mut sb.cmd(args));
        assert!(
            err.contains("--json and --format")
                && err.contains("give one of them (--json is the same as --format json)"),
            "{args:?}: {err}"
        );
    }
    // Nothing was measured or stored: each was refused at once.
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(!sb.db().exists(), "a run was stored");
}

#[test]
fn a_negative_parameter_is_told_its_range() {
    // Issue 44: "-4 is not a whole number", with no valid range.
    let sb = Sandbox::new();
    let err = assert_usage_error(&mut sb.cmd(&[
        "overhead",
        "-w",
        "getppid",
        "-m",
        "seccomp:args,filters=-4",
    ]));
    assert!(
        err.contains("filters=-4 is not a whole number from 1 to 1024"),
        "{err}"
    );
}

#[test]
fn the_db_is_told_plainly_given_by_its_variable_or_not_a_file() {
    // Issue 53: a usage line showed `--db <PATH|URL>` as if required
    // (given by SECPERF_DB), an empty SECPERF_DB was never named, and
    // `--db /dev/null` failed to migrate with "disk I/O error".
    let sb = Sandbox::new();
    let err = assert_usage_error(
        sb.bare()
            .env("SECPERF_DB", sb.db())
            .args(["results", "delete"]),
    );
    assert!(
        err.contains("Usage: secperf results delete [OPTIONS] <RUNS>..."),
        "{err}"
    );
    assert!(!err.contains("--db <PATH|URL> <RUNS>"), "{err}");
    let err = assert_usage_error(sb.bare().env("SECPERF_DB", "").args(["results", "list"]));
    assert!(err.contains("SECPERF_DB is set but empty"), "{err}");
    // With --db, an empty variable does not matter.
    sb.bare()
        .env("SECPERF_DB", "")
        .arg("--db")
        .arg(sb.db())
        .args(["results", "list"])
        .assert()
        .success();
    for (db, says) in [("/dev/null", "a character device"), ("/tmp", "a directory")] {
        let err = assert_usage_error(sb.bare().args(["--db", db, "results", "list"]));
        assert!(err.contains(says), "{db}: {err}");
        assert!(!err.contains("disk I/O error"), "{db}: {err}");
    }
}
