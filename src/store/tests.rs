//! Tests of the store against real database files in temporary directories.

use std::cell::RefCell;
use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;

use super::migrations::MIGRATIONS;
use super::*;
use crate::error::exit_code;
use crate::model::{Mode, RunMeta, Sample, StoredRun, Summary, UnitRate, WorkloadResult};

fn t(secs: i64, nanos: u32) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000 + secs, nanos).expect("valid timestamp")
}

fn meta(label: &str, started_at: DateTime<Utc>) -> RunMeta {
    RunMeta {
        label: label.into(),
        kind: "run".into(),
        started_at,
        host: "testhost".into(),
        secperf_version: "0.1.0".into(),
        command: "secperf run --label x".into(),
        params: json!({"tasks": [1, 2, 4], "mode": "process"}),
        system: json!({"kernel": {"release": "6.8.0-test"}, "lsm": ["selinux"]}),
    }
}

fn sample(index: u32, value: f64) -> Sample {
    Sample {
        index,
        elapsed_ns: 100_000_123 + u64::from(index),
        ops: 1_234_567 + u64::from(index),
        ops_per_sec: value,
        ns_per_op: 1e9 / value,
        counted_per_op: None,
        per_task_ops_per_sec: vec![value / 3.0, value * 2.0 / 3.0],
        involuntary_ctxt_switches: u64::from(index) * 7,
        steal_ms: 0.1 * f64::from(index),
        flags: if index.is_multiple_of(2) {
            vec![]
        } else {
            vec!["preempted".into(), "steal".into()]
        },
    }
}

fn result(workload: &str, tasks: u32, values: &[f64]) -> WorkloadResult {
    WorkloadResult {
        workload: workload.into(),
        mode: Mode::Process,
        tasks,
        pinned: true,
        cpus: (0..tasks as usize).collect(),
        params: [("depth".to_string(), "4".to_string())]
            .into_iter()
            .collect(),
        sample_ms: 100,
        warmup_samples: 2,
        samples: values.len() as u32,
        ops_per_sec: Summary {
            median: 12_345_678.901_234_5,
            ci_low: 12_000_000.000_000_1,
            ci_high: 12_999_999.999_999_9,
        },
        ns_per_op: Summary {
            median: 81.000_000_000_000_01,
            ci_low: 1.0 / 3.0,
            ci_high: std::f64::consts::PI,
        },
        unit_rate: None,
        sample_data: values
            .iter()
            .enumerate()
            .map(|(i, v)| sample(i as u32, *v))
            .collect(),
        started_at: t(1, 123_456_789),
        finished_at: t(2, 987_654_321),
        profile: None,
        child_cpu: None,
        client_metrics: Vec::new(),
        counted_per_op: None,
    }
}

fn open_temp() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("secperf.db")).expect("open store");
    (dir, store)
}

fn count(store: &Store, table: &str) -> i64 {
    store
        .conn
        .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
        .expect("count rows")
}

fn user_version(store: &Store) -> i64 {
    store
        .conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("user_version")
}

#[test]
fn migrates_from_empty_and_reopens_idempotently() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("secperf.db");
    let mut store = Store::open(&path).expect("first open creates");
    assert_eq!(store.path(), path);
    assert_eq!(user_version(&store), MIGRATIONS.len() as i64);
    let run_id = store.begin_run(&meta("a", t(0, 0))).expect("begin");
    drop(store);

    for _ in 0..2 {
        let store = Store::open(&path).expect("reopen");
        assert_eq!(user_version(&store), MIGRATIONS.len() as i64);
        assert_eq!(count(&store, "runs"), 1);
        assert_eq!(store.resolve_run("latest").expect("latest"), run_id);
        let fk: bool = store
            .conn
            .pragma_query_value(None, "foreign_keys", |r| r.get(0))
            .expect("pragma");
        assert!(fk, "foreign keys enabled on every open");
    }
}

#[test]
fn newer_schema_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("future.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("raw open");
        conn.pragma_update(None, "user_version", 99)
            .expect("set version");
    }
    let before = std::fs::read(&path).unwrap();
    for err in [
        Store::open(&path)
            .err()
            .expect("must refuse a newer schema"),
        Store::open_read_only(&path)
            .err()
            .expect("readers refuse it too"),
    ] {
        assert_eq!(exit_code(&err), 2);
        let msg = format!("{err:#}");
        assert!(
            msg.contains(&format!(
                "written by a newer secperf (schema 99; this secperf knows up to {}): upgrade \
                 secperf or use another --db",
                MIGRATIONS.len()
            )),
            "{msg}"
        );
        assert!(msg.contains(&path.display().to_string()), "{msg}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "file left untouched");
}

#[test]
fn read_only_open_reads_without_writing() {
    let (dir, mut store) = open_temp();
    let id = store.begin_run(&meta("ro", t(0, 0))).unwrap();
    store
        .add_result(id, &result("getppid", 1, &[1.0, 2.0]))
        .unwrap();
    drop(store);
    let path = dir.path().join("secperf.db");
    let before = std::fs::read(&path).unwrap();
    let ro = Store::open_read_only(&path).expect("read-only open");
    assert_eq!(ro.list_runs().unwrap().len(), 1);
    assert_eq!(ro.load_run(id).unwrap().results.len(), 1);
    assert!(ro.conn.is_readonly(MAIN_DB).unwrap());
    drop(ro);
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing written");
}

#[test]
fn read_only_open_upgrades_an_old_writable_schema() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("old.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("raw open");
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let store = Store::open_read_only(&path).expect("upgraded on open");
    assert_eq!(user_version(&store), MIGRATIONS.len() as i64);
}

#[test]
fn disk_full_errors_say_so_and_name_the_database() {
    let full = anyhow::Error::new(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
        None,
    ))
    .context("cannot store result");
    let path = Path::new("/mnt/small/secperf.db");
    let msg = format!("{:#}", disk_full(full, path));
    assert!(msg.contains("is full"), "{msg}");
    assert!(msg.contains("/mnt/small/secperf.db"), "{msg}");
    assert!(msg.contains("cannot store result"), "{msg}");
    let enospc = anyhow::Error::new(std::io::Error::from_raw_os_error(libc::ENOSPC));
    assert!(is_disk_full(&enospc));
    let other = anyhow::anyhow!("constraint failed");
    assert_eq!(format!("{:#}", disk_full(other, path)), "constraint failed");
}

#[test]
fn unusable_paths_are_usage_errors_naming_the_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![b'x'; 4096]).expect("write garbage");
    let paths = [
        Path::new("/proc/nope/x.db").to_path_buf(), // parent cannot be created
        Path::new("/proc/x.db").to_path_buf(),      // read-only location
        dir.path().to_path_buf(),                   // a directory
        garbage,                                    // not a database
    ];
    for path in paths {
        let err = Store::open(&path).err().expect("must fail");
        assert_eq!(exit_code(&err), 2, "{err:#}");
        let msg = format!("{err:#}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("--db PATH or SECPERF_DB"), "{msg}");
    }
}

#[test]
fn db_path_precedence_and_only_the_default_directory_is_created() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cli = dir.path().join("cli/x.db");
    let env = dir.path().join("env/y.db");
    let data = dir.path().join("data");
    std::fs::create_dir(dir.path().join("cli")).expect("cli dir");
    std::fs::create_dir(dir.path().join("env")).expect("env dir");

    let got = resolve_db_path_from(Some(&cli), Some(env.clone().into()), Some(data.clone()))
        .expect("cli");
    assert_eq!(got, cli);

    let got =
        resolve_db_path_from(None, Some(env.clone().into()), Some(data.clone())).expect("env");
    assert_eq!(got, env);

    let got = resolve_db_path_from(None, Some("".into()), Some(data.clone())).expect("default");
    assert_eq!(got, data.join("secperf/secperf.db"));
    assert!(data.join("secperf").is_dir());

    let err = resolve_db_path_from(None, None, None).expect_err("no data dir");
    assert_eq!(exit_code(&err), 2);

    let err = resolve_db_path_from(Some(Path::new("/proc/nope/x.db")), None, None)
        .expect_err("uncreatable parent");
    assert_eq!(exit_code(&err), 2);
    assert!(err.to_string().contains("/proc/nope"), "{err}");

    // A directory the user named is never created: --db, SECPERF_DB, and
    // Store::open itself.
    let missing = dir.path().join("missing/sub");
    let err = resolve_db_path_from(Some(&missing.join("x.db")), None, Some(data.clone()))
        .expect_err("missing --db directory");
    assert_eq!(exit_code(&err), 2);
    let msg = err.to_string();
    assert!(msg.starts_with("--db "), "{msg}");
    assert!(
        msg.contains(&format!("directory {} does not exist", missing.display())),
        "{msg}"
    );
    assert!(msg.contains("mkdir -p"), "{msg}");
    assert!(msg.contains("--db PATH or SECPERF_DB"), "{msg}");
    let err = resolve_db_path_from(None, Some(missing.join("y.db").into()), Some(data.clone()))
        .expect_err("missing SECPERF_DB directory");
    assert_eq!(exit_code(&err), 2);
    assert!(err.to_string().starts_with("SECPERF_DB="), "{err}");
    let err = Store::open(&missing.join("z.db"))
        .err()
        .expect("missing directory");
    assert_eq!(exit_code(&err), 2);
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(
        !dir.path().join("missing").exists(),
        "a directory was created"
    );

    // A file where the directory should be.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("file");
    let err =
        resolve_db_path_from(Some(&file.join("x.db")), None, None).expect_err("file as directory");
    assert_eq!(exit_code(&err), 2);
    assert!(err.to_string().contains("is not a directory"), "{err}");
}

#[test]
fn round_trip_is_exact() {
    let (_dir, mut store) = open_temp();
    let meta = meta("base", t(0, 1));
    let run_id = store.begin_run(&meta).expect("begin");

    let first = result(
        "getpid",
        1,
        &[1.0e7 + 0.1, 9_999_999.999_999_998, 1e7 / 3.0],
    );
    let mut second = result("tree_walk", 2, &[0.1, 0.2, 0.30000000000000004, 5e-324]);
    second.mode = Mode::Thread;
    second.pinned = false;
    second.cpus = vec![];
    second.unit_rate = Some(UnitRate {
        unit: "entries".into(),
        per_op: 1000,
        per_sec: Summary {
            median: 123_456_789.012_345_67,
            ci_low: 0.1 + 0.2,
            ci_high: f64::MAX,
        },
    });
    let id1 = store.add_result(run_id, &first).expect("add first");
    let id2 = store.add_result(run_id, &second).expect("add second");
    assert!(id2 > id1);

    let unfinished = store.load_run(run_id).expect("load unfinished");
    assert_eq!(unfinished.finished_at, None);

    let before = Utc::now() - Duration::seconds(1);
    store.finish_run(run_id).expect("finish");
    let loaded = store.load_run(run_id).expect("load");
    let finished_at = loaded.finished_at.expect("finished");
    assert!(finished_at >= before && finished_at <= Utc::now() + Duration::seconds(1));

    let expected = StoredRun {
        run_id,
        meta,
        finished_at: Some(finished_at),
        comparisons: Vec::new(),
        results: vec![first, second],
        uuid: loaded.uuid.clone(),
        campaign: None,
    };
    let uuid = loaded
        .uuid
        .as_deref()
        .expect("a run records its uuid when it starts");
    assert_eq!(uuid.len(), 36, "{uuid}");
    assert_eq!(
        uuid::Uuid::parse_str(uuid)
            .expect("a uuid")
            .get_version_num(),
        4
    );
    assert_eq!(loaded, expected);
    // PartialEq on f64 is not bitwise; check the bits of every float too.
    for (a, b) in loaded.results.iter().zip(&expected.results) {
        let bits = |r: &WorkloadResult| {
            let mut v = vec![
                r.ops_per_sec.median,
                r.ops_per_sec.ci_low,
                r.ops_per_sec.ci_high,
                r.ns_per_op.median,
                r.ns_per_op.ci_low,
                r.ns_per_op.ci_high,
            ];
            if let Some(u) = &r.unit_rate {
                v.extend([u.per_sec.median, u.per_sec.ci_low, u.per_sec.ci_high]);
            }
            for s in &r.sample_data {
                v.extend([s.ops_per_sec, s.ns_per_op, s.steal_ms]);
                v.extend(&s.per_task_ops_per_sec);
            }
            v.into_iter().map(f64::to_bits).collect::<Vec<_>>()
        };
        assert_eq!(bits(a), bits(b));
    }

    // Summary columns are plain REALs usable from SQL.
    let median: f64 = store
        .conn
        .query_row(
            "SELECT ops_per_sec_median FROM results WHERE id = ?1",
            [id1],
            |r| r.get(0),
        )
        .expect("query");
    assert_eq!(median, 12_345_678.901_234_5);
}

#[test]
fn non_finite_floats_survive() {
    let (_dir, mut store) = open_temp();
    let run_id = store.begin_run(&meta("x", t(0, 0))).expect("begin");
    let mut r = result("w", 1, &[1.0]);
    r.ops_per_sec.median = f64::NAN;
    r.ns_per_op.ci_high = f64::INFINITY;
    r.sample_data[0].ns_per_op = f64::INFINITY;
    r.sample_data[0].steal_ms = f64::NAN;
    r.sample_data[0].per_task_ops_per_sec = vec![f64::NAN, f64::NEG_INFINITY, -0.0];
    store.add_result(run_id, &r).expect("add");
    let back = &store.load_run(run_id).expect("load").results[0];
    assert!(back.ops_per_sec.median.is_nan());
    assert_eq!(back.ns_per_op.ci_high, f64::INFINITY);
    let s = &back.sample_data[0];
    assert_eq!(s.ns_per_op, f64::INFINITY);
    assert!(s.steal_ms.is_nan());
    assert!(s.per_task_ops_per_sec[0].is_nan());
    assert_eq!(s.per_task_ops_per_sec[1], f64::NEG_INFINITY);
    assert!(s.per_task_ops_per_sec[2].is_sign_negative());
}

#[test]
fn list_is_newest_first_with_counts() {
    let (_dir, mut store) = open_temp();
    let old = store.begin_run(&meta("base", t(0, 0))).expect("begin");
    store
        .add_result(old, &result("getpid", 1, &[1.0]))
        .expect("add");
    store
        .add_result(old, &result("open", 1, &[1.0]))
        .expect("add");
    store
        .add_result(old, &result("getpid", 2, &[1.0]))
        .expect("add");
    store.finish_run(old).expect("finish");
    // Inserted later but started earlier: ordering is by start time.
    let mut m = meta("older", t(-100, 0));
    m.system = json!({"kernel": {"release": {"value": "5.15.0"}}});
    let older = store.begin_run(&m).expect("begin");
    let mut m = meta("new", t(50, 5));
    m.system = json!({"nothing": true});
    let newest = store.begin_run(&m).expect("begin");

    let list = store.list_runs().expect("list");
    let ids: Vec<i64> = list.iter().map(|r| r.run_id).collect();
    assert_eq!(ids, vec![newest, old, older]);

    let base = &list[1];
    assert_eq!(base.label, "base");
    assert_eq!(base.kind, "run");
    assert_eq!(base.host, "testhost");
    assert_eq!(base.started_at, t(0, 0));
    assert!(base.finished_at.is_some());
    assert_eq!(base.kernel.as_deref(), Some("6.8.0-test"));
    assert_eq!(base.results, 3);
    assert_eq!(
        base.workloads,
        vec!["getpid".to_string(), "open".to_string()]
    );

    assert_eq!(list[0].finished_at, None, "unfinished run shows as such");
    assert_eq!(list[0].kernel, None);
    assert_eq!(list[0].results, 0);
    assert!(list[0].workloads.is_empty());
    assert_eq!(list[2].kernel.as_deref(), Some("5.15.0"));
}

#[test]
fn resolve_run_by_id_label_latest() {
    let (_dir, mut store) = open_temp();
    let err = store.resolve_run("latest").expect_err("empty store");
    assert_eq!(exit_code(&err), 2);
    assert!(err.to_string().contains("no runs recorded"), "{err}");

    let a1 = store.begin_run(&meta("a", t(0, 0))).expect("begin");
    let b1 = store.begin_run(&meta("b", t(10, 0))).expect("begin");
    let a2 = store.begin_run(&meta("a", t(20, 0))).expect("begin");
    let numeric_label = store.begin_run(&meta("2024", t(30, 0))).expect("begin");

    assert_eq!(store.resolve_run(&a1.to_string()).expect("id"), a1);
    assert_eq!(store.resolve_run(&format!(" {b1} ")).expect("id"), b1);
    assert_eq!(store.resolve_run("a").expect("label"), a2);
    assert_eq!(store.resolve_run("b").expect("label"), b1);
    assert_eq!(store.resolve_run("a~1").expect("label~1"), a1);
    assert_eq!(
        store.resolve_run("2024").expect("numeric label"),
        numeric_label
    );
    assert_eq!(store.resolve_run("latest").expect("latest"), numeric_label);
    assert_eq!(
        store.resolve_run("latest~0").expect("latest~0"),
        numeric_label
    );
    assert_eq!(store.resolve_run("latest~1").expect("latest~1"), a2);
    assert_eq!(store.resolve_run("latest~3").expect("latest~3"), a1);

    for bad in ["latest~4", "nope", "999", "a~5", "latest~x", ""] {
        let err = store.resolve_run(bad).expect_err(bad);
        assert_eq!(exit_code(&err), 2, "{bad}");
        assert!(
            err.to_string().contains("secperf results list"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn delete_cascades_to_results_and_samples() {
    let (_dir, mut store) = open_temp();
    let keep = store.begin_run(&meta("keep", t(0, 0))).expect("begin");
    store
        .add_result(keep, &result("w", 1, &[1.0, 2.0]))
        .expect("add");
    let gone = store.begin_run(&meta("gone", t(1, 0))).expect("begin");
    store
        .add_result(gone, &result("w", 1, &[1.0, 2.0, 3.0]))
        .expect("add");
    store
        .add_result(gone, &result("v", 2, &[4.0]))
        .expect("add");
    assert_eq!(count(&store, "samples"), 6);

    store.delete_run(gone).expect("delete");
    assert_eq!(count(&store, "runs"), 1);
    assert_eq!(count(&store, "results"), 1);
    assert_eq!(count(&store, "samples"), 2);
    assert_eq!(
        store.load_run(keep).expect("kept").results[0]
            .sample_data
            .len(),
        2
    );

    for err in [
        store.delete_run(gone).expect_err("already deleted"),
        store.load_run(gone).expect_err("deleted"),
        store.finish_run(gone).expect_err("deleted"),
        store
            .add_result(gone, &result("w", 1, &[1.0]))
            .expect_err("deleted"),
    ] {
        assert_eq!(exit_code(&err), 2, "{err:#}");
        assert!(
            format!("{err:#}").contains(&format!("no run with id {gone}")),
            "{err:#}"
        );
    }
    // Ids are never reused after a delete.
    let next = store.begin_run(&meta("next", t(2, 0))).expect("begin");
    assert!(next > gone);
}

#[test]
fn corrupt_rows_are_errors_not_panics() {
    let (_dir, mut store) = open_temp();
    let run_id = store.begin_run(&meta("x", t(0, 0))).expect("begin");
    store
        .add_result(run_id, &result("w", 1, &[1.0]))
        .expect("add");
    store
        .conn
        .execute("UPDATE samples SET ops = -5", [])
        .expect("corrupt");
    let err = store.load_run(run_id).expect_err("negative ops");
    let msg = format!("{err:#}");
    assert!(msg.contains("samples.ops"), "{msg}");
    assert_eq!(exit_code(&err), 1);
}

#[test]
fn any_finite_sample_values_round_trip_exactly() {
    let (_dir, mut store) = open_temp();
    let run_id = store.begin_run(&meta("prop", t(0, 0))).expect("begin");
    let store = RefCell::new(store);
    use proptest::num::f64 as pf;
    // Every finite class; -0.0 is excluded from REAL columns because SQLite
    // stores a whole-number REAL as an integer and reads -0.0 back as 0.0
    // (equal, but not the same bits). Per-task values keep the sign of zero.
    let finite = pf::POSITIVE | pf::NEGATIVE | pf::NORMAL | pf::SUBNORMAL | pf::ZERO;
    let strategy = prop::collection::vec(
        (finite, finite, finite, prop::collection::vec(finite, 0..4)),
        0..8,
    );
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    runner
        .run(&strategy, |values| {
            let mut r = result("prop", 1, &[]);
            r.sample_data = values
                .iter()
                .enumerate()
                .map(|(i, (a, b, c, per_task))| Sample {
                    ops_per_sec: *a,
                    ns_per_op: *b,
                    steal_ms: *c,
                    per_task_ops_per_sec: per_task.clone(),
                    ..sample(i as u32, 1.0)
                })
                .collect();
            if let Some((a, b, c, _)) = values.first() {
                r.ops_per_sec = Summary {
                    median: *a,
                    ci_low: *b,
                    ci_high: *c,
                };
            }
            r.samples = values.len() as u32;
            store.borrow_mut().add_result(run_id, &r).expect("add");
            let loaded = store.borrow().load_run(run_id).expect("load");
            let back = loaded.results.into_iter().last().expect("just added");
            prop_assert_eq!(back.sample_data.len(), r.sample_data.len());
            let sig = |x: f64| if x == 0.0 { 0 } else { x.to_bits() };
            for (x, y) in back.sample_data.iter().zip(&r.sample_data) {
                prop_assert_eq!(sig(x.ops_per_sec), sig(y.ops_per_sec));
                prop_assert_eq!(sig(x.ns_per_op), sig(y.ns_per_op));
                prop_assert_eq!(sig(x.steal_ms), sig(y.steal_ms));
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(&x.per_task_ops_per_sec), bits(&y.per_task_ops_per_sec));
            }
            prop_assert_eq!(sig(back.ops_per_sec.median), sig(r.ops_per_sec.median));
            prop_assert_eq!(sig(back.ops_per_sec.ci_low), sig(r.ops_per_sec.ci_low));
            prop_assert_eq!(sig(back.ops_per_sec.ci_high), sig(r.ops_per_sec.ci_high));
            Ok(())
        })
        .expect("round trip");
}

#[test]
fn concurrent_first_opens_migrate_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("shared.db");
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || -> i64 {
                let mut store = Store::open(&path).expect("concurrent open");
                store
                    .begin_run(&meta(&format!("t{i}"), t(i, 0)))
                    .expect("begin")
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
    let store = Store::open(&path).expect("open");
    assert_eq!(user_version(&store), MIGRATIONS.len() as i64);
    assert_eq!(store.list_runs().expect("list").len(), 4);
}

#[test]
fn comparisons_round_trip_and_cascade() {
    use crate::model::{Comparison, PairData};
    use crate::stats::paired::{OverheadPct, Verdict};
    let (_dir, mut store) = open_temp();
    let run_id = store.begin_run(&meta("ab", t(0, 0))).unwrap();
    let c = Comparison {
        workload: "getppid".into(),
        workload_params: Default::default(),
        mechanism: "seccomp".into(),
        variant: "args".into(),
        params: [("filters".to_string(), "4".to_string())]
            .into_iter()
            .collect(),
        mode: Mode::Process,
        tasks: 1,
        pairs: 2,
        sample_ms: 60,
        samples_per_half: 2,
        measure: Default::default(),
        baseline_per_op: 201.25,
        treatment_per_op: 298.5,
        overhead_pct: OverheadPct {
            estimate: 48.2,
            ci_low: 45.1,
            ci_high: 51.0,
            p_value: 0.001953125,
            verdict: Verdict::Slower,
        },
        hodges_lehmann_pct: crate::stats::paired::hodges_lehmann_pct(
            &[200.0, 202.5],
            &[300.0, 297.0],
        ),
        pair_data: vec![
            PairData {
                index: 0,
                order: "AB".into(),
                baseline_per_op: 200.0,
                treatment_per_op: 300.0,
                beside: Vec::new(),
            },
            PairData {
                index: 1,
                order: "BA".into(),
                baseline_per_op: 202.5,
                treatment_per_op: 297.0,
                beside: Vec::new(),
            },
        ],
        attribution: None,
        child_cpu: None,
        sequential: None,
        unfinished: false,
        ci_alpha: None,
        own_ci_low_pct: None,
        own_ci_high_pct: None,
        beside: Vec::new(),
    };
    store.add_comparison(run_id, &c).unwrap();
    // A profiled one: the attribution (NaN bounds included) and the folded
    // stacks of both arms come back as they went in.
    let mut profiled = c.clone();
    let mut a = crate::report::sections::testing::attribution();
    a.total.delta_ns_per_op.ci_low = f64::NAN;
    a.folded[0].insert("entry_SYSCALL_64;do_syscall_64".into(), 7);
    a.folded[1].insert("[user];getppid".into(), 3);
    a.folded[1].insert("a;b;c".into(), 11);
    profiled.attribution = Some(a);
    store.add_comparison(run_id, &profiled).unwrap();
    // A client figure whose interval too few pairs left unbounded: its
    // infinite end goes into JSON as null and comes back infinite (it
    // once made the run unreadable).
    let mut unbounded = c.clone();
    unbounded.beside = vec![crate::model::MeasureChange {
        measure: crate::model::Measure::per_run("latency_p50_ms", false),
        baseline: 0.75,
        treatment: 0.75,
        treatment_median: 0.75,
        change_pct: crate::stats::paired::OverheadPct {
            estimate: 0.0,
            ci_low: -100.0,
            ci_high: f64::INFINITY,
            p_value: 1.0,
            verdict: crate::stats::paired::Verdict::NoChange,
        },
        pairs: 2,
        ci_alpha: None,
    }];
    store.add_comparison(run_id, &unbounded).unwrap();
    // A comparison in counted instructions keeps its measure.
    let mut counted = c.clone();
    counted.measure = crate::model::Measure::of(crate::model::Metric::Instructions);
    store.add_comparison(run_id, &counted).unwrap();
    store.finish_run(run_id).unwrap();
    let loaded = store.load_run(run_id).unwrap();
    assert_eq!(loaded.comparisons[0], c);
    assert_eq!(loaded.comparisons[2], unbounded);
    assert_eq!(loaded.comparisons[3], counted);
    let back = loaded.comparisons[1]
        .attribution
        .clone()
        .expect("attribution stored");
    let want = profiled.attribution.clone().unwrap();
    assert!(back.total.delta_ns_per_op.ci_low.is_nan());
    assert_eq!(back.folded, want.folded);
    assert_eq!(back.groups, want.groups);
    assert_eq!(back.symbols, want.symbols);
    assert_eq!(back.notes, want.notes);
    assert!(loaded.results.is_empty());
    store.delete_run(run_id).unwrap();
    assert_eq!(count(&store, "comparisons"), 0);
    assert_eq!(count(&store, "comparison_pairs"), 0);
    assert_eq!(count(&store, "comparison_profiles"), 0);
}

#[test]
fn two_writers_at_once_wait_for_each_other() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("shared.db");
    let barrier = std::sync::Barrier::new(2);
    let ids: Vec<i64> = std::thread::scope(|s| {
        let writers: Vec<_> = ["a", "b"]
            .map(|label| {
                let (path, barrier) = (&path, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    // Both open (and migrate) a fresh file at once.
                    let mut store = Store::open(path).expect("open");
                    let id = store.begin_run(&meta(label, t(0, 0))).expect("begin");
                    for i in 0..40 {
                        store
                            .add_result(id, &result("getppid", i, &[1.0, 2.0, 3.0]))
                            .expect("add while the other writes");
                    }
                    store.finish_run(id).expect("finish");
                    id
                })
            })
            .into();
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(store.list_runs().unwrap().len(), 2);
    for id in ids {
        assert_eq!(store.load_run(id).unwrap().results.len(), 40);
    }
}

#[test]
fn sqlite_errors_are_not_repeated_by_their_code() {
    let code = rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN);
    let with_message = anyhow::Error::new(rusqlite::Error::SqliteFailure(
        code,
        Some("unable to open database file: /x/y.db".into()),
    ));
    assert_eq!(
        chain_text(&with_message),
        "unable to open database file: /x/y.db"
    );
    assert!(failed_for_lack_of_write_access(&with_message));
    let bare =
        anyhow::Error::new(rusqlite::Error::SqliteFailure(code, None)).context("cannot read it");
    assert_eq!(chain_text(&bare), format!("cannot read it: {code}"));
    assert!(!failed_for_lack_of_write_access(&anyhow::anyhow!("other")));
}

#[test]
fn a_writable_place_has_no_read_only_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    assert!(read_only_error(&dir.path().join("x.db")).is_none());
    assert!(!mounted_read_only(dir.path()));
}

#[test]
fn a_hot_journal_left_by_a_killed_writer_is_rolled_back_for_a_reader() {
    // A writer killed mid-commit leaves the database with pages of an
    // uncommitted transaction and a hot rollback journal. Copying both
    // while a transaction that spilled to the file is open makes that
    // state without killing anything.
    let dir = tempfile::tempdir().expect("temp dir");
    let (src, dst) = (dir.path().join("src.db"), dir.path().join("dst.db"));
    let mut store = Store::open(&src).expect("open");
    let id = store
        .begin_run(&meta("kept", t(1_700_000_000, 0)))
        .expect("run");
    drop(store);
    let conn = rusqlite::Connection::open(&src).expect("raw open");
    conn.execute_batch("PRAGMA cache_size = 1; BEGIN IMMEDIATE;")
        .expect("begin");
    for i in 0..2000 {
        conn.execute(
            "INSERT INTO runs (label, kind, started_at, host, secperf_version, command,
                               params_json, system_json)
             VALUES (?1, 'run', '2023-01-01T00:00:00.000000000Z', 'h', '0', 'c', '{}', '{}')",
            [format!("uncommitted {i} {}", "x".repeat(200))],
        )
        .expect("insert");
    }
    std::fs::copy(&src, &dst).expect("copy db");
    let journal = dir.path().join("src.db-journal");
    assert!(
        journal.exists(),
        "the transaction spilled: a journal exists"
    );
    std::fs::copy(&journal, dir.path().join("dst.db-journal")).expect("copy journal");
    drop(conn);

    let reader = Store::open_read_only(&dst).expect("a reader opens it");
    let runs = reader.list_runs().expect("list");
    assert_eq!(runs.len(), 1, "the uncommitted runs were rolled back");
    assert_eq!(runs[0].run_id, id);
    assert!(!dir.path().join("dst.db-journal").exists());
}

#[test]
fn a_run_imported_from_another_database_reads_back_the_same() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/runs.db");
    let dir = tempfile::tempdir().unwrap();
    // A copy: the fixture's directory may be read-only.
    let src = dir.path().join("src.db");
    std::fs::copy(&fixture, &src).unwrap();
    let ids = Store::runs_in(&src).unwrap();
    assert!(ids.len() >= 3, "{ids:?}");
    let source = Store::open_read_only(&src).unwrap();
    let mut dst = Store::open(&dir.path().join("dst.db")).unwrap();
    for &id in &ids {
        let new = dst.import_run(&src, id, None, None, None).unwrap();
        let mut want = source.load_run(id).unwrap();
        let got = dst.load_run(new).unwrap();
        want.run_id = got.run_id;
        assert_eq!(got, want, "run {id}");
        assert_eq!(
            dst.policy_files(new).unwrap(),
            source.policy_files(id).unwrap()
        );
    }
    // Every child row came along, and nothing else.
    for table in [
        "results",
        "samples",
        "comparisons",
        "comparison_pairs",
        "policy_files",
    ] {
        assert_eq!(count(&dst, table), count(&source, table), "{table}");
    }
    // A run already here (the same uuid) is not copied twice.
    let e = dst.import_run(&src, ids[0], None, None, None).unwrap_err();
    assert!(format!("{e:#}").contains("already stored here"), "{e:#}");
    // The command and the system facts can be replaced on the way in.
    let system = serde_json::json!({"vm": {"accel": "emulated"}});
    let mut dst = Store::open(&dir.path().join("dst2.db")).unwrap();
    let new = dst
        .import_run(
            &src,
            ids[0],
            Some("secperf run --vm x"),
            Some(&system),
            None,
        )
        .unwrap();
    let got = dst.load_run(new).unwrap();
    assert_eq!(got.meta.command, "secperf run --vm x");
    assert_eq!(got.meta.system, system);
    // A run that is not there is an error naming it.
    let e = dst.import_run(&src, 999_999, None, None, None).unwrap_err();
    assert!(format!("{e:#}").contains("no run 999999"), "{e:#}");
}

#[test]
fn comparisons_stored_in_ns_columns_migrate_as_time_with_their_figures() {
    // The fixture was written at schema 8, with `*_ns_per_op` columns.
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/runs.db");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    std::fs::copy(&fixture, &path).unwrap();
    let old: Vec<(i64, f64, f64)> = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT run_id, baseline_ns_per_op, treatment_ns_per_op FROM comparisons \
                 ORDER BY id",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    assert!(!old.is_empty());
    let store = Store::open(&path).unwrap();
    let mut runs: Vec<i64> = old.iter().map(|o| o.0).collect();
    runs.dedup();
    let got: Vec<crate::model::Comparison> = runs
        .iter()
        .flat_map(|&id| store.load_run(id).unwrap().comparisons)
        .collect();
    assert_eq!(got.len(), old.len());
    for (c, (_, b, t)) in got.iter().zip(&old) {
        assert_eq!(
            c.measure,
            crate::model::Measure::of(crate::model::Metric::Time)
        );
        assert_eq!((c.baseline_per_op, c.treatment_per_op), (*b, *t));
        assert!(c.pair_data.iter().all(|p| p.baseline_per_op > 0.0));
    }
    // The columns are renamed, so a shared store can follow them.
    for &(version, table, old, new) in super::migrations::RENAMED {
        assert!(version <= MIGRATIONS.len());
        let cols: Vec<String> = store
            .conn
            .prepare(&format!("PRAGMA table_info({table})"))
            .unwrap()
            .query_map([], |r| r.get(1))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(cols.contains(&new.to_string()) && !cols.contains(&old.to_string()));
    }
}

/// A run as a guest stored it: started at `start` by the guest's clock,
/// finished at `end`, with a result inside it at `inner` (both ends).
fn guest_run(
    store: &mut Store,
    system: serde_json::Value,
    start: i64,
    inner: i64,
    end: i64,
) -> i64 {
    let mut m = meta("guest", t(start, 0));
    m.system = system;
    let id = store.begin_run(&m).expect("begin");
    let mut r = result("getppid", 1, &[1.0, 2.0]);
    r.started_at = t(inner, 0);
    r.finished_at = t(inner + 1, 0);
    store.add_result(id, &r).expect("result");
    store
        .conn
        .execute(
            "UPDATE runs SET finished_at = ?1 WHERE id = ?2",
            params![codec::time_to_sql(&t(end, 0)), id],
        )
        .expect("finish");
    id
}

#[test]
fn a_guest_run_is_copied_onto_the_hosts_clock() {
    // Issue 53: a guest under icount stamped its run minutes in the future.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("guest.db");
    let mut guest = Store::open(&src).unwrap();
    // The guest's clock: started at +1000 s, a result at +1060 s, ended at
    // +1100 s; the host booted it at 0, the guest's secperf started at +5 s
    // and the guest was done at +15 s.
    let probed =
        json!({"probed_at": codec::time_to_sql(&t(1010, 0)), "kernel": {"release": "6.1"}});
    let id = guest_run(&mut guest, probed, 1000, 1060, 1100);
    drop(guest);
    let mut host = Store::open(&dir.path().join("host.db")).unwrap();
    let span = HostSpan {
        started_at: t(0, 0),
        inner_from: t(5, 0),
        finished_at: t(15, 0),
    };
    let new = host.import_run(&src, id, None, None, Some(span)).unwrap();
    let run = host.load_run(new).unwrap();
    assert_eq!(run.meta.started_at, t(0, 0));
    assert_eq!(run.finished_at, Some(t(15, 0)));
    // 60 of the guest's 100 s in: 6 of the host's 10 s after +5 s.
    assert_eq!(run.results[0].started_at, t(11, 0));
    assert_eq!(run.results[0].finished_at, t(11, 100_000_000));
    // The guest's probe too: 10 of its 100 s in.
    assert_eq!(
        run.meta.system["probed_at"],
        json!(codec::time_to_sql(&t(6, 0)))
    );
    assert_eq!(run.meta.system["kernel"]["release"], "6.1");
    // An unfinished guest run stays unfinished.
    let mut guest = Store::open(&src).unwrap();
    let id = guest_run(&mut guest, json!({}), 2000, 2010, 2020);
    guest
        .conn
        .execute("UPDATE runs SET finished_at = NULL WHERE id = ?1", [id])
        .unwrap();
    drop(guest);
    let new = host.import_run(&src, id, None, None, Some(span)).unwrap();
    let run = host.load_run(new).unwrap();
    assert_eq!(run.meta.started_at, t(0, 0));
    assert_eq!(run.finished_at, None);
    assert_eq!(
        run.results[0].finished_at,
        t(15, 0),
        "its last stamp: the end"
    );
}

#[test]
fn latest_is_the_run_stored_last_whatever_its_stamps() {
    // Issue 53: a guest's run stamped in the future hid the runs after it.
    let (_dir, mut store) = open_temp();
    let future = store.begin_run(&meta("a", t(10_000, 0))).expect("begin");
    let now = store.begin_run(&meta("b", t(0, 0))).expect("begin");
    assert_eq!(store.resolve_run("latest").unwrap(), now);
    assert_eq!(store.resolve_run("latest~1").unwrap(), future);
}

#[test]
fn migration_17_mends_guest_runs_from_their_facts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let mut store = Store::open(&path).unwrap();
    let vm = |icount: bool, uptime: Option<f64>| {
        json!({"vm": {
            "accel": "emulated", "vcpus": 1, "memory": "2048M", "image": "/boot/vmlinuz",
            "image_sha256": null, "append": "", "boot_s": 20.0, "wall_s": 50.0,
            "guest": {"release": "6.1", "cmdline": "", "build_id": null, "uptime_s": uptime},
            "icount": if icount { json!({"qemu": "QEMU 7.2", "options": "-icount"}) } else { json!(null) },
        }})
    };
    // Counted instructions, with the guest's uptime: its kernel read the
    // host's clock at 1000 - 130 = 870, so the host started it at 850.
    let mended = guest_run(&mut store, vm(true, Some(130.0)), 1000, 1010, 1020);
    // Counted, but without the uptime: left, and said.
    let unmended = guest_run(&mut store, vm(true, None), 5000, 5010, 5020);
    // A guest whose clock kept time: left as it was.
    let kept = guest_run(&mut store, vm(false, Some(30.0)), 300, 310, 320);
    // A kernel A/B: the host's own run.
    let ab = guest_run(&mut store, vm(true, None), 400, 410, 420);
    store
        .add_run_note(ab, crate::vm::arms::NOTE, &json!([]))
        .unwrap();
    // A run on the host itself is not touched.
    let local = store.begin_run(&meta("local", t(600, 0))).unwrap();
    store
        .conn
        .pragma_update(None, "user_version", 16)
        .expect("back to 16");
    drop(store);
    let store = Store::open(&path).unwrap();
    let notices: Vec<String> = migrations::take_notices()
        .into_iter()
        .filter(|n| n.contains(&path.display().to_string()))
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains(&format!("run {unmended} was measured"))
            && notices[0].contains("ahead of the host's"),
        "{notices:?}"
    );
    let stamps = |id: i64| {
        let run = store.load_run(id).unwrap();
        let s: crate::vm::Stamps =
            serde_json::from_value(run.meta.system["vm"]["stamps"].clone()).unwrap();
        (run, s)
    };
    let (run, s) = stamps(mended);
    assert_eq!(run.meta.started_at, t(850, 0));
    assert_eq!(run.finished_at, Some(t(900, 0)));
    // The result, 10 of the guest's 20 s in, half way from 870 to 900.
    assert_eq!(run.results[0].started_at, t(885, 0));
    match s {
        crate::vm::Stamps::Mended { guest, within_s } => {
            assert_eq!(guest.started_at, t(1000, 0));
            assert_eq!(within_s, 20.0);
        }
        other => panic!("not mended: {other:?}"),
    }
    assert!(s_note(&stamps(mended).1).contains("mended"));
    let (run, s) = stamps(unmended);
    assert_eq!(run.meta.started_at, t(5000, 0), "left as it was");
    assert!(
        matches!(&s, crate::vm::Stamps::Unmended { why } if why.contains("uptime")),
        "{s:?}"
    );
    assert!(s_note(&s).contains("not mended"));
    let (run, s) = stamps(kept);
    assert_eq!(run.meta.started_at, t(300, 0));
    assert_eq!(s, crate::vm::Stamps::GuestKeptTime);
    let (run, s) = stamps(ab);
    assert_eq!(run.meta.started_at, t(400, 0));
    assert_eq!(s, crate::vm::Stamps::Host { guest: None });
    let run = store.load_run(local).unwrap();
    assert!(run.meta.system.get("vm").is_none());
}

fn s_note(s: &crate::vm::Stamps) -> String {
    s.note().unwrap_or_default()
}
