//! The results database at its edges: two writers at once, a read-only
//! file or directory, a full disk, a database from a newer secperf.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use common::{json_of, root_or_skip, secperf, skip_kernel_feature};
use secperf::model::WorkloadResult;
use secperf::store::{Store, migrations::MIGRATIONS};

/// The shortest real measurement `secperf run` accepts.
const QUICK_RUN: &[&str] = &[
    "run",
    "-w",
    "getppid",
    "--quick",
    "-t",
    "1",
    "--samples",
    "2",
    "--sample-ms",
    "20",
    "--no-pin",
];

/// One quick run stored in `db`, with `label`.
fn quick_run(db: &Path, label: &str) {
    secperf(db)
        .args(QUICK_RUN)
        .args(["--label", label])
        .assert()
        .success();
}

fn listed_labels(db: &Path) -> Vec<String> {
    let out = secperf(db)
        .args(["--json", "results", "list"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "results list failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect()
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// None when this process cannot mount (and `test` is skipped).
    fn mount(test: &str, size: &str) -> Option<Tmpfs> {
        if !root_or_skip(test, "mounting a tmpfs") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = StdCommand::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status();
        match status {
            Ok(s) if s.success() => Some(Tmpfs { dir }),
            other => {
                let reason = format!("mount -t tmpfs failed: {other:?}");
                skip_kernel_feature(test, "tmpfs-mount", &reason);
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount_read_only(&self) {
        let ok = StdCommand::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount read-only");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn two_processes_writing_at_once_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    // Several rounds, the first on a fresh file (both migrate at once).
    for round in 0..3 {
        let spawn = |label: String| {
            let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("secperf"));
            c.arg("--db")
                .arg(&db)
                .args(QUICK_RUN)
                .args(["--label", &label]);
            c.output().unwrap()
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| spawn(format!("a{round}")));
            let b = s.spawn(|| spawn(format!("b{round}")));
            (a.join().unwrap(), b.join().unwrap())
        });
        for out in [&a, &b] {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "round {round}: {stderr}");
            assert!(!stderr.contains("locked"), "{stderr}");
        }
    }
    let mut labels = listed_labels(&db);
    labels.sort();
    assert_eq!(labels, ["a0", "a1", "a2", "b0", "b1", "b2"]);
}

/// Every read command, on `db`; each must succeed.
fn read_commands_work(db: &Path, out_dir: &Path) {
    let report = out_dir.join("report.html");
    let cases: Vec<Vec<&str>> = vec![
        vec!["results", "list"],
        vec!["--json", "results", "list"],
        vec!["results", "show", "latest"],
        vec!["results", "export", "latest"],
        vec!["results", "export", "--format", "csv", "latest"],
        vec!["compare", "first", "latest"],
        vec!["report", "latest", "-o", report.to_str().unwrap()],
    ];
    for args in cases {
        let out = secperf(db).args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?} on a read-only database: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn read_commands_work_on_a_read_only_file_and_directory() {
    let test = "read_commands_work_on_a_read_only_file_and_directory";
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let db = data.join("ro.db");
    quick_run(&db, "first");
    quick_run(&db, "second");
    let before = std::fs::read(&db).unwrap();
    let out_dir = tempfile::tempdir().unwrap();

    // chmod: read-only for anyone but root (root writes regardless).
    set_mode(&db, 0o444);
    set_mode(&data, 0o555);
    read_commands_work(&db, out_dir.path());
    set_mode(&data, 0o755);
    set_mode(&db, 0o644);
    assert_eq!(std::fs::read(&db).unwrap(), before, "readers wrote nothing");

    // A read-only file system: read-only even for root.
    let Some(fs) = Tmpfs::mount(test, "4m") else {
        return;
    };
    let ro_db = fs.path().join("ro.db");
    std::fs::copy(&db, &ro_db).unwrap();
    fs.remount_read_only();
    read_commands_work(&ro_db, out_dir.path());
    // A writer is refused with a clear message.
    let out = secperf(&ro_db).args(QUICK_RUN).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("read-only"), "{stderr}");
}

#[test]
fn read_only_database_needing_a_migration_says_so() {
    let test = "read_only_database_needing_a_migration_says_so";
    let Some(fs) = Tmpfs::mount(test, "1m") else {
        return;
    };
    let db = fs.path().join("old.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    fs.remount_read_only();
    let out = secperf(&db).args(["results", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "has schema version 1 and this secperf needs {}",
            MIGRATIONS.len()
        )) && stderr.contains("must be upgraded"),
        "{stderr}"
    );
}

#[test]
fn newer_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("future.db");
    quick_run(&db, "old");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "user_version", MIGRATIONS.len() as i64 + 1)
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let expected = format!(
        "written by a newer secperf (schema {}; this secperf knows up to {}): upgrade secperf or \
         use another --db",
        MIGRATIONS.len() + 1,
        MIGRATIONS.len()
    );
    let results_list = ["results", "list"];
    for args in [QUICK_RUN, &results_list[..]] {
        let out = secperf(&db).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
        assert!(stderr.contains(db.to_str().unwrap()), "{stderr}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before, "bytes unchanged");
}

/// Fills the file system holding `dir` with a filler file.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let filler = dir.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let block = vec![0xa5u8; 4096];
    while f.write_all(&block).is_ok() {}
    let _ = f.sync_all();
    filler
}

#[test]
fn full_disk_is_a_clear_error_and_keeps_what_was_committed() {
    let test = "full_disk_is_a_clear_error_and_keeps_what_was_committed";
    let Some(fs) = Tmpfs::mount(test, "1m") else {
        return;
    };
    let db = fs.path().join("full.db");

    // A real result to store over and over, from a real run.
    quick_run(&db, "seed");
    let store = Store::open_read_only(&db).unwrap();
    let seed_id = store.resolve_run("seed").unwrap();
    let seed = store.load_run(seed_id).unwrap();
    drop(store);
    let mut big: WorkloadResult = seed.results[0].clone();
    // Fatter samples, so the disk fills in a few dozen commits.
    let template = big.sample_data[0].clone();
    big.sample_data = (0..200)
        .map(|i| {
            let mut s = template.clone();
            s.index = i;
            s.flags = vec!["x".repeat(40)];
            s
        })
        .collect();

    // Library: write until a write fails.
    let mut store = Store::open(&db).unwrap();
    let run = store.begin_run(&seed.meta).unwrap();
    let mut committed = 0;
    let err = loop {
        match store.add_result(run, &big) {
            Ok(_) => committed += 1,
            Err(e) => break e,
        }
        assert!(committed < 10_000, "the 1 MiB disk never filled");
    };
    assert!(committed > 0, "nothing fit");
    let msg = format!("{err:#}");
    assert!(msg.contains("is full"), "{msg}");
    assert!(msg.contains(db.to_str().unwrap()), "{msg}");
    drop(store);
    let store = Store::open_read_only(&db).expect("still opens");
    assert_eq!(store.list_runs().unwrap().len(), 2);
    assert_eq!(store.load_run(run).unwrap().results.len(), committed);
    drop(store);

    // CLI: a run into the full disk fails with the message, exit 1, no
    // panic or backtrace; the database still lists both runs after.
    fill(fs.path());
    let out = secperf(&db)
        .args(QUICK_RUN)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is full"), "{stderr}");
    assert!(stderr.contains(db.to_str().unwrap()), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("stack backtrace"), "{stderr}");
    let labels = listed_labels(&db);
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels.contains(&"seed".to_string()), "{labels:?}");
}

/// `secperf --db DB ARGS...`: its exit code and stderr.
fn refused(db: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = secperf(db).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn writer_on_a_read_only_file_system_is_one_clear_usage_error() {
    // A new database on a file system mounted read-only (even root cannot
    // write there; `results delete` opens for writing and measures nothing).
    let Some(fs) = Tmpfs::mount(
        "writer_on_a_read_only_file_system_is_one_clear_usage_error",
        "1m",
    ) else {
        return;
    };
    fs.remount_read_only();
    let db = fs.path().join("new.db");
    let (code, stderr) = refused(&db, &["results", "delete", "1"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "secperf: error: results database {} cannot be created: the file system holding {} \
             is mounted read-only; mount it read-write, or choose another with --db PATH or \
             SECPERF_DB",
            db.display(),
            fs.path().display()
        )
    );
    drop(fs);

    // An existing database on a file system remounted read-only: writers
    // are refused, readers still work.
    let Some(fs) = Tmpfs::mount(
        "writer_on_a_read_only_file_system_is_one_clear_usage_error",
        "1m",
    ) else {
        return;
    };
    let db = fs.path().join("old.db");
    secperf(&db).args(["results", "list"]).assert().success();
    fs.remount_read_only();
    let (code, stderr) = refused(&db, &["results", "delete", "1"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "secperf: error: results database {} cannot be written: the file system holding {} \
             is mounted read-only; mount it read-write, or choose another with --db PATH or \
             SECPERF_DB (commands that only read, such as `results list`, `compare` and \
             `report`, still work on it)",
            db.display(),
            fs.path().display()
        )
    );
    secperf(&db).args(["results", "list"]).assert().success();
}
