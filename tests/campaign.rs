//! Many machines, one store, end to end with real servers: hosts are
//! network namespaces each running its own OpenSSH server
//! (`docs/scripts/lab.sh hosts-up`), the shared store a real PostgreSQL
//! cluster (`lab.sh pg-up`, or the one `.ci/run` started: `SECPERF_TEST_PG`
//! and `SECPERF_TEST_PG_DIR`). Nothing outside this machine is contacted.
//!
//! Checked: a campaign of `run -w getppid` lands in PostgreSQL and reads
//! back through the URL; a second push stores nothing twice; a push killed
//! half-way and pushed again stores each run once; a push survives the
//! server restarting under it; a host whose sshd stops mid-campaign loses
//! nothing of the others, is reported, and `--resume` does only it; a
//! campaign over 32 hosts, 8 at a time, completes. Passwords never show.
//!
//! The lab's namespaces have fixed names (`secperf-h*`), so the tests take
//! turns and the lab is taken down when the test process exits.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use common::{json_of, root_or_skip, skip_missing_tool};

const LAB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scripts/lab.sh");
const HOSTS: usize = 32;
/// The password lab.sh gives the role; it must never show in output.
const PASSWORD: &str = "secperf-test";
/// A small run: a few short samples of one task.
const SMALL_RUN: &[&str] = &[
    "run",
    "-w",
    "getppid",
    "-t",
    "1",
    "--samples",
    "3",
    "--sample-ms",
    "20",
    "--warmup",
    "1",
    "--no-pin",
];

struct Lab {
    hosts_dir: PathBuf,
    /// postgresql://secperf@127.0.0.1:PORT/secperf
    url: String,
    pgpass: PathBuf,
    pg_dir: PathBuf,
}

static SERIAL: Mutex<()> = Mutex::new(());
static THE_LAB: OnceLock<Option<Lab>> = OnceLock::new();
static TEARDOWN: Mutex<Vec<Vec<String>>> = Mutex::new(Vec::new());

extern "C" fn teardown() {
    if let Ok(cmds) = TEARDOWN.lock() {
        for args in cmds.iter() {
            let _ = Command::new("bash").arg(LAB).args(args).output();
        }
    }
}

fn lab_cmd(args: &[&str]) -> std::process::Output {
    let out = Command::new("bash")
        .arg(LAB)
        .args(args)
        .output()
        .expect("run lab.sh");
    assert!(
        out.status.success(),
        "lab.sh {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The lab, set up once per test process; None (after a printed skip)
/// where it cannot be.
fn lab(test: &str) -> Option<(&'static Lab, MutexGuard<'static, ()>)> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !root_or_skip(test, "network namespaces and sshd") {
        return None;
    }
    for (tool, path) in [("sshd", "/usr/sbin/sshd"), ("ssh", "/usr/bin/ssh")] {
        if !Path::new(path).exists() {
            skip_missing_tool(test, tool, &format!("{path} is not installed"));
            return None;
        }
    }
    let have_pg = std::env::var_os("SECPERF_TEST_PG").is_some()
        || std::fs::read_dir("/usr/lib/postgresql").is_ok_and(|mut d| d.next().is_some());
    if !have_pg {
        skip_missing_tool(test, "postgresql", "PostgreSQL is not installed");
        return None;
    }
    let lab = THE_LAB.get_or_init(|| {
        // SAFETY: registers a plain extern "C" function to run at exit.
        unsafe { libc::atexit(teardown) };
        let hosts_dir = PathBuf::from("/tmp/secperf-test-lab");
        TEARDOWN
            .lock()
            .unwrap()
            .push(vec!["hosts-down".into(), hosts_dir.display().to_string()]);
        let started = Instant::now();
        lab_cmd(&["hosts-up", &HOSTS.to_string(), hosts_dir.to_str().unwrap()]);
        eprintln!(
            "{HOSTS} namespace hosts up in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let (url, pg_dir) = match (
            std::env::var("SECPERF_TEST_PG"),
            std::env::var("SECPERF_TEST_PG_DIR"),
        ) {
            (Ok(url), Ok(dir)) => (url, PathBuf::from(dir)),
            _ => {
                let dir = PathBuf::from("/tmp/secperf-test-pg");
                TEARDOWN
                    .lock()
                    .unwrap()
                    .push(vec!["pg-down".into(), dir.display().to_string()]);
                let out = lab_cmd(&["pg-up", dir.to_str().unwrap(), "25433"]);
                let url = String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .last()
                    .expect("pg-up prints the URL")
                    .trim()
                    .to_string();
                (url, dir)
            }
        };
        Some(Lab {
            pgpass: pg_dir.join("pgpass"),
            hosts_dir,
            url,
            pg_dir,
        })
    });
    lab.as_ref().map(|l| (l, guard))
}

impl Lab {
    fn ssh_config(&self) -> String {
        self.hosts_dir.join("ssh_config").display().to_string()
    }

    /// A URL of a schema of its own for `name` (created empty), so tests
    /// sharing the cluster do not see each other's runs.
    fn fresh_store(&self, name: &str) -> String {
        let mut c = self.client(&self.url);
        c.batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
        ))
        .expect("create a schema");
        format!("{}?options=-csearch_path%3D{name}", self.url)
    }

    fn client(&self, url: &str) -> postgres::Client {
        let url = url.replacen("secperf@", &format!("secperf:{PASSWORD}@"), 1);
        secperf::remote::conn::connect(&url).expect("connect to the test cluster")
    }

    fn count(&self, url: &str, sql: &str) -> i64 {
        self.client(url).query_one(sql, &[]).expect(sql).get(0)
    }

    /// secperf with a local results file in `dir` and the lab's password file.
    fn secperf(&self, dir: &Path) -> assert_cmd::Command {
        let mut c = assert_cmd::Command::cargo_bin("secperf").unwrap();
        c.env("PGPASSFILE", &self.pgpass)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env_remove("SECPERF_DB")
            .env_remove("SECPERF_REMOTE");
        c
    }
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Each host's (name, status) in a campaign's JSON document.
fn statuses(doc: &serde_json::Value) -> Vec<(&str, &str)> {
    doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["host"].as_str().unwrap(), h["status"].as_str().unwrap()))
        .collect()
}

fn hosts(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|i| format!("h{i}")).collect::<Vec<_>>().join(",")
}

#[test]
fn two_names_of_one_machine_are_refused_before_anything_runs() {
    let Some((lab, _turn)) = lab("two_names_of_one_machine_are_refused") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let out = lab
        .secperf(dir.path())
        .arg("--db")
        .arg(&db)
        .args(["campaign", "--hosts", "h1,root@h1,h2"])
        .args(["--ssh-config", &lab.ssh_config(), "--"])
        .args(SMALL_RUN)
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains("hosts h1 and root@h1 reach the same machine"),
        "{all}"
    );
    assert!(
        !all.contains("copying this secperf"),
        "nothing was copied: {all}"
    );
}

#[test]
fn a_campaign_lands_in_postgresql_reads_back_and_pushes_once() {
    let Some((lab, _turn)) = lab("a_campaign_lands_in_postgresql") else {
        return;
    };
    let url = lab.fresh_store("t_campaign");
    let dir = tempfile::tempdir().unwrap();
    // The URL with the password in it: it must not show anywhere.
    let with_password = url.replacen("secperf@", &format!("secperf:{PASSWORD}@"), 1);
    let out = lab
        .secperf(dir.path())
        .args([
            "--db",
            &with_password,
            "--json",
            "campaign",
            "--hosts",
            &hosts(1..=2),
        ])
        .args(["--parallel", "2", "--ssh-config", &lab.ssh_config(), "--"])
        .args(SMALL_RUN)
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(!all.contains(PASSWORD), "the password shows: {all}");
    let doc = json_of(&out.stdout);
    let id = doc["campaign"]["id"].as_str().unwrap().to_string();
    let hosts_done: Vec<&str> = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["status"].as_str().unwrap())
        .collect();
    assert_eq!(hosts_done, ["done", "done"], "{all}");
    assert!(all.contains("[h1] copying this secperf"), "{all}");
    assert!(
        all.contains("[h2] | "),
        "the hosts' progress is streamed: {all}"
    );

    // In PostgreSQL: one run per host, tagged, with no password stored.
    assert_eq!(lab.count(&url, "SELECT count(*) FROM runs"), 2);
    assert_eq!(
        lab.count(
            &url,
            &format!("SELECT count(DISTINCT campaign_host) FROM runs WHERE campaign = '{id}'")
        ),
        2
    );
    assert_eq!(
        lab.count(&url, "SELECT count(*) FROM results"),
        2,
        "one getppid result per run"
    );
    assert!(lab.count(&url, "SELECT count(*) FROM samples") >= 6);
    assert_eq!(
        lab.count(
            &url,
            &format!("SELECT count(*) FROM runs WHERE command LIKE '%{PASSWORD}%'")
        ),
        0
    );

    // Read back through the URL as from a file.
    let out = lab
        .secperf(dir.path())
        .args([
            "--db",
            &url,
            "results",
            "show",
            "--campaign",
            &id,
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let csv = String::from_utf8_lossy(&out.stdout);
    for h in ["h1", "h2"] {
        assert!(csv.contains(h), "{csv}");
    }
    let out = lab
        .secperf(dir.path())
        .args(["--db", &url, "--json", "results", "list"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(json_of(&out.stdout)["runs"].as_array().unwrap().len(), 2);
    let page = dir.path().join("campaign.html");
    let out = lab
        .secperf(dir.path())
        .args(["--db", &url, "report", "--campaign", &id, "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("h1") && html.contains("h2") && html.contains("<svg"));

    // The local file has both runs; pushing it again stores nothing twice.
    let local = dir.path().join("data/secperf/secperf.db");
    let out = lab
        .secperf(dir.path())
        .args(["--db"])
        .arg(&local)
        .args(["--json", "results", "push", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let report = json_of(&out.stdout);
    assert_eq!(report["pushed"].as_array().unwrap().len(), 0, "{report}");
    assert_eq!(report["already_there"], 2, "{report}");
    assert_eq!(lab.count(&url, "SELECT count(*) FROM runs"), 2);
    assert_eq!(lab.count(&url, "SELECT count(*) FROM results"), 2);
}

/// A results file of `n` finished runs (the fixture's runs, copied with
/// new uuids), for pushing.
fn many_runs(dir: &Path, n: usize) -> PathBuf {
    let db = dir.join("many.db");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/runs/runs.db"),
        &db,
    )
    .unwrap();
    let mut store = secperf::store::Store::open(&db).unwrap();
    let ids: Vec<i64> = store
        .list_runs()
        .unwrap()
        .iter()
        .map(|r| r.run_id)
        .collect();
    let src = dir.join("src.db");
    std::fs::copy(&db, &src).unwrap();
    let mut i = 0;
    while store.list_runs().unwrap().len() < n {
        let id = ids[i % ids.len()];
        let new = store
            .import_run(&src, id, None, None, None)
            .unwrap_or_else(|_| {
                // The copy has the same uuid: give the source run a new one.
                let c = rusqlite::Connection::open(&src).unwrap();
                c.execute(
                    "UPDATE runs SET uuid = ?1 WHERE id = ?2",
                    rusqlite::params![uuid_v4(), id],
                )
                .unwrap();
                store.import_run(&src, id, None, None, None).unwrap()
            });
        assert!(new > 0);
        i += 1;
    }
    db
}

fn uuid_v4() -> String {
    let b: [u8; 16] = std::array::from_fn(|_| rand_byte());
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        u16::from_be_bytes([b[4], b[5]]),
        u16::from_be_bytes([b[6], b[7]]) & 0xfff,
        u16::from_be_bytes([b[8], b[9]]) & 0xfff,
        u64::from_be_bytes([0, 0, b[10], b[11], b[12], b[13], b[14], b[15]])
    )
}

fn rand_byte() -> u8 {
    let mut b = [0u8; 1];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .unwrap();
    b[0]
}

/// Starts `results push` of `db` to `url` and returns the child once it
/// has said it pushed at least `after` runs.
fn push_until(lab: &Lab, dir: &Path, db: &Path, url: &str, after: usize) -> std::process::Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("secperf"));
    cmd.env("PGPASSFILE", &lab.pgpass)
        .env("XDG_DATA_HOME", dir.join("data"))
        .arg("--db")
        .arg(db)
        .args(["results", "push", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut reader = std::io::BufReader::new(stderr);
    let mut line = String::new();
    loop {
        line.clear();
        let n = std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        assert!(n > 0, "push ended before pushing {after} runs");
        if let Some(rest) = line.trim().strip_prefix("secperf: pushed ")
            && let Some(done) = rest.split(' ').next().and_then(|d| d.parse::<usize>().ok())
            && done >= after
        {
            break;
        }
    }
    // Keep draining stderr so the push never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    child
}

#[test]
fn an_interrupted_push_and_a_server_restart_store_each_run_once() {
    let Some((lab, _turn)) = lab("an_interrupted_push_and_a_server_restart") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = many_runs(dir.path(), 300);
    // Unfinished runs (the fixture has one) are not pushed.
    let local = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = local
        .query_row(
            "SELECT count(*) FROM runs WHERE finished_at IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let local_samples: i64 = local
        .query_row(
            "SELECT count(*) FROM samples JOIN results ON results.id = samples.result_id \
             JOIN runs ON runs.id = results.run_id WHERE runs.finished_at IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();

    // Killed half-way (SIGKILL), then pushed again.
    let url = lab.fresh_store("t_interrupted");
    let mut child = push_until(lab, dir.path(), &db, &url, 50);
    child.kill().unwrap();
    child.wait().unwrap();
    let stored = lab.count(&url, "SELECT count(*) FROM runs");
    assert!(
        (50..n).contains(&stored),
        "killed after 50 of {n} runs, {stored} stored"
    );
    let out = lab
        .secperf(dir.path())
        .arg("--db")
        .arg(&db)
        .args(["--json", "results", "push", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let report = json_of(&out.stdout);
    assert_eq!(report["already_there"], stored, "{report}");
    assert_eq!(lab.count(&url, "SELECT count(*) FROM runs"), n);
    assert_eq!(lab.count(&url, "SELECT count(DISTINCT uuid) FROM runs"), n);
    // Every run whole: as many samples as the file's finished runs have.
    assert_eq!(
        lab.count(&url, "SELECT count(*) FROM samples"),
        local_samples
    );

    // The server restarts mid-push: the push reconnects and says so.
    let url = lab.fresh_store("t_restart");
    let child = push_until(lab, dir.path(), &db, &url, 25);
    lab_cmd(&["pg-restart", lab.pg_dir.to_str().unwrap()]);
    let out = child.wait_with_output().unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("The connection was lost"),
        "the restart came after the push ended: {all}"
    );
    assert_eq!(lab.count(&url, "SELECT count(*) FROM runs"), n, "{all}");
    assert_eq!(lab.count(&url, "SELECT count(DISTINCT uuid) FROM runs"), n);
    assert_eq!(
        lab.count(&url, "SELECT count(*) FROM samples"),
        local_samples
    );
    eprintln!("push across a server restart: {all}");
}

#[test]
fn a_host_lost_mid_campaign_loses_nothing_and_resume_does_only_it() {
    let Some((lab, _turn)) = lab("a_host_lost_mid_campaign") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("local.db");
    // One host at a time, so host 5 is stopped while host 4 measures.
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("secperf"))
        .arg("--db")
        .arg(&db)
        .args([
            "--json",
            "campaign",
            "--hosts",
            &hosts(4..=6),
            "--parallel",
            "1",
        ])
        .args(["--ssh-config", &lab.ssh_config(), "--"])
        .args(SMALL_RUN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut reader = std::io::BufReader::new(stderr);
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        assert!(n > 0, "the campaign ended before h4 ran: {seen}");
        seen.push_str(&line);
        if line.starts_with("[h4] running") {
            break;
        }
    }
    lab_cmd(&["host-stop", "5", lab.hosts_dir.to_str().unwrap()]);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    seen.push_str(&rest);
    let out = child.wait_with_output().unwrap();
    lab_cmd(&["host-start", "5", lab.hosts_dir.to_str().unwrap()]);
    assert!(
        !out.status.success(),
        "a lost host fails the campaign: {seen}"
    );
    assert!(seen.contains("--resume"), "{seen}");
    let doc = json_of(&out.stdout);
    let id = doc["campaign"]["id"].as_str().unwrap().to_string();
    let status = statuses(&doc);
    assert_eq!(
        status,
        [("h4", "done"), ("h5", "failed"), ("h6", "done")],
        "{seen}"
    );
    assert!(
        doc["hosts"][1]["error"]
            .as_str()
            .unwrap()
            .contains("ssh could not connect"),
        "{doc}"
    );

    let out = Command::new(assert_cmd::cargo::cargo_bin("secperf"))
        .arg("--db")
        .arg(&db)
        .args(["--json", "campaign", "--resume", &id])
        .args(["--ssh-config", &lab.ssh_config()])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let doc = json_of(&out.stdout);
    let status = statuses(&doc);
    assert_eq!(
        status,
        [
            ("h4", "already done"),
            ("h5", "done"),
            ("h6", "already done")
        ],
        "{all}"
    );
    assert!(
        !all.contains("[h4] running") && !all.contains("[h6] running"),
        "{all}"
    );
    // Each host's run once.
    let c = rusqlite::Connection::open(&db).unwrap();
    let per_host: Vec<(String, i64)> = c
        .prepare(
            "SELECT campaign_host, count(*) FROM runs WHERE campaign = ?1 GROUP BY 1 ORDER BY 1",
        )
        .unwrap()
        .query_map([&id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        per_host,
        [("h4".into(), 1), ("h5".into(), 1), ("h6".into(), 1)]
    );
}

#[test]
fn thirty_two_hosts_eight_at_a_time() {
    let Some((lab, _turn)) = lab("thirty_two_hosts_eight_at_a_time") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("local.db");
    let started = Instant::now();
    let out = Command::new(assert_cmd::cargo::cargo_bin("secperf"))
        .arg("--db")
        .arg(&db)
        .args(["--json", "campaign", "--hosts"])
        .arg(lab.hosts_dir.join("hosts"))
        .args(["--parallel", "8", "--ssh-config", &lab.ssh_config(), "--"])
        .args(SMALL_RUN)
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let doc = json_of(&out.stdout);
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), HOSTS);
    assert!(hosts.iter().all(|h| h["status"] == "done"), "{all}");
    eprintln!("campaign over {HOSTS} namespace hosts, 8 at a time: {seconds:.1} s");
    let _ = Duration::ZERO;
}

#[test]
fn sslmode_is_honoured_and_a_newer_store_is_refused() {
    let Some((lab, _turn)) = lab("sslmode_is_honoured") else {
        return;
    };
    let root = lab.pg_dir.join("root.crt");
    if !root.exists() {
        skip_missing_tool(
            "sslmode_is_honoured",
            "postgresql",
            "the test cluster has no TLS certificate (lab.sh pg-up makes one with openssl)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = lab.fresh_store("t_tls");
    let db = dir.path().join("local.db");
    lab.secperf(dir.path())
        .arg("--db")
        .arg(&db)
        .args([
            "run",
            "-w",
            "getppid",
            "--samples",
            "2",
            "--sample-ms",
            "10",
        ])
        .assert()
        .success();
    let tls = |host: &str, mode: &str| {
        url.replacen("127.0.0.1", host, 1)
            + &format!("&sslmode={mode}&sslrootcert={}", root.display())
    };
    // The certificate names localhost only.
    let out = lab
        .secperf(dir.path())
        .arg("--db")
        .arg(&db)
        .args(["results", "push", &tls("localhost", "verify-full")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    for (host, mode) in [("127.0.0.1", "require"), ("127.0.0.1", "verify-ca")] {
        let out = lab
            .secperf(dir.path())
            .args(["--db", &tls(host, mode), "--json", "results", "list"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{mode}: {}", text(&out));
        assert_eq!(json_of(&out.stdout)["runs"].as_array().unwrap().len(), 1);
    }
    let out = lab
        .secperf(dir.path())
        .args(["--db", &tls("127.0.0.1", "verify-full"), "results", "list"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out).contains("does not name host \"127.0.0.1\""),
        "{}",
        text(&out)
    );

    // A store written by a newer secperf is refused, read or pushed to.
    lab.client(&url)
        .batch_execute("UPDATE secperf_schema SET version = 999")
        .unwrap();
    for args in [
        vec!["--db", url.as_str(), "results", "list"],
        vec![
            "--db",
            db.to_str().unwrap(),
            "results",
            "push",
            url.as_str(),
        ],
    ] {
        let out = lab.secperf(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("newer secperf"), "{}", text(&out));
    }
}

/// A shared store made before a comparison's measure was a dimension of
/// its own (schema 13: `baseline_ns_per_op` columns) follows the local
/// schema's renames when pushed to, instead of gaining empty columns
/// beside the old ones, and what is pushed then reads back.
#[test]
fn a_store_from_before_measures_renames_its_columns_when_pushed_to() {
    let Some((lab, _turn)) = lab("a_store_from_before_measures") else {
        return;
    };
    use secperf::store::migrations::{MIGRATIONS, RENAMED};
    let url = lab.fresh_store("t_renamed");
    // The remote's tables as a secperf of schema 13 made them.
    let old = rusqlite::Connection::open_in_memory().unwrap();
    for m in &MIGRATIONS[..13] {
        old.execute_batch(m).unwrap();
    }
    let mut client = lab.client(&url);
    secperf::remote::schema::migrate_remote(&old, &mut client, &url).unwrap();
    client
        .batch_execute("UPDATE secperf_schema SET version = 13")
        .unwrap();
    let columns = |client: &mut postgres::Client, table: &str| {
        secperf::remote::schema::remote_columns(client, table).unwrap()
    };
    assert!(columns(&mut client, "comparisons").contains(&"baseline_ns_per_op".to_string()));

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("local.db");
    lab.secperf(dir.path())
        .arg("--db")
        .arg(&db)
        .args([
            "overhead",
            "-w",
            "getppid",
            "-m",
            "seccomp:allow",
            "--no-control",
        ])
        .args([
            "--pairs",
            "10",
            "--samples-per-half",
            "2",
            "--sample-ms",
            "10",
        ])
        .assert()
        .success();
    let out = lab
        .secperf(dir.path())
        .arg("--db")
        .arg(&db)
        .args(["results", "push", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    for &(_, table, old, new) in RENAMED {
        let have = columns(&mut client, table);
        assert!(
            have.iter().any(|c| c == new) && !have.iter().any(|c| c == old),
            "{table}: {have:?}"
        );
    }
    let out = lab
        .secperf(dir.path())
        .args(["--db", &url, "--json", "results", "show", "latest"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let c = &json_of(&out.stdout)["comparisons"][0];
    assert_eq!(c["measure"]["name"], "time", "{c}");
    assert!(c["baseline_per_op"].as_f64().unwrap() > 0.0, "{c}");
}

#[test]
fn bad_input_is_a_usage_error_that_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let cases: &[(&[&str], &str)] = &[
        (&["campaign", "--", "run", "-w", "getppid"], "--hosts"),
        (&["campaign", "--hosts", "a,a", "--", "run"], "listed twice"),
        (
            &["campaign", "--hosts", "a", "--", "results", "list"],
            "does not measure",
        ),
        (
            &["campaign", "--hosts", "a", "--", "run", "--db", "y.db"],
            "--db",
        ),
        (
            &["campaign", "--hosts", "a", "--parallel", "0", "--", "run"],
            "--parallel",
        ),
        (
            &["campaign", "--hosts=-oProxyCommand=x", "--", "run"],
            "ssh destination",
        ),
        (
            &["campaign", "--hosts", "a", "--", "run", "--bogus"],
            "not valid",
        ),
        (
            &["campaign", "--hosts", "/no/such/hosts", "--", "run"],
            "no such file",
        ),
        (&["results", "push", "not-a-url"], "postgresql://"),
    ];
    for (args, says) in cases {
        let out = common::secperf(&db).args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A measuring command given a URL says to measure into a file and push.
    let out = assert_cmd::Command::cargo_bin("secperf")
        .unwrap()
        .args([
            "--db",
            "postgresql://u:hunter2@127.0.0.1:1/x",
            "run",
            "-w",
            "getppid",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("results push"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    // A server that is not there: said, without the password.
    let out = assert_cmd::Command::cargo_bin("secperf")
        .unwrap()
        .args([
            "--db",
            "postgresql://u:hunter2@127.0.0.1:1/x",
            "results",
            "list",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("127.0.0.1:1"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

/// A track whose tests name local runs `runs` (and a run the shared store
/// will not have), and a bisection whose step names `runs[0]`, stored in
/// `db`; `points` tests, updated at `at`.
fn put_records(db: &Path, runs: &[i64], points: usize, at: chrono::DateTime<chrono::Utc>) {
    use secperf::model::bisect::Tested;
    use secperf::model::bisect::{BisectionRecord, Class, Outcome, Revision, Status, Step};
    use secperf::model::track::{Outcome as Test, Point, Question, TrackRecord};
    let rev = |i: usize| Revision {
        commit: format!("{i}{}", "c".repeat(39)),
        subject: format!("commit {i}"),
    };
    let run_of = |i: usize| runs.get(i).copied().or(Some(999_999));
    let point = |i: usize| Point {
        revision: rev(i + 1),
        position: i + 1,
        baseline: rev(i),
        level: Some(0.002),
        outcome: Test::Measured {
            estimate: 0.1,
            ci_low: -0.5,
            ci_high: 0.7,
            pairs: 4,
            run_id: run_of(i),
            alarm: None,
        },
        tested_at: at,
        seconds: 60.0,
        culprit: None,
        culprit_note: None,
        bisection: None,
    };
    let question = Question {
        source: "/src/linux".into(),
        branch: "master".into(),
        from: rev(0),
        workload: "getppid".into(),
        mechanisms: vec![],
        append: String::new(),
        config: None,
        metric: secperf::model::Metric::Instructions,
        threshold_pct: 4.0,
        alpha: 0.05,
        batch: 1,
    };
    let track = TrackRecord {
        id: "feedfacefeedface".into(),
        created_at: at,
        updated_at: at,
        command: vec!["track".into()],
        question,
        stream: secperf::stats::online::ELond {
            alpha: 0.05,
            tests: points as u64,
            alarms: 0,
        },
        points: (0..points).map(point).collect(),
    };
    let step = Step {
        index: 0,
        revision: rev(1),
        class: Class::Bad,
        tested: Tested::Measured {
            estimate: 9.0,
            ci_low: 8.0,
            ci_high: 10.0,
            pairs: 4,
            run_id: Some(runs[0]),
        },
        seconds: 60.0,
    };
    let bisection = BisectionRecord {
        id: "beefbeefbeefbeef".into(),
        created_at: at,
        updated_at: at,
        command: vec!["bisect".into()],
        source: "/src/linux".into(),
        workload: "getppid".into(),
        append: String::new(),
        mechanisms: vec![],
        threshold_pct: 4.0,
        alpha: 0.05,
        metric: secperf::model::Metric::Instructions,
        status: Status::Finished,
        outcome: Outcome {
            good: rev(0),
            revisions: vec![rev(1)],
            decisions: 1,
            step_alpha: 0.05,
            steps: vec![step.clone()],
            first_bad: Some(rev(1)),
            candidates: vec![],
            verdict: "the first bad commit is commit 1".into(),
            log: vec![],
        },
        attempts: vec![step],
    };
    let mut store = secperf::store::Store::open(db).unwrap();
    store.put_track(&track).unwrap();
    store.put_bisection(&bisection).unwrap();
}

#[test]
fn tracks_and_bisections_are_pushed_with_the_shared_stores_run_ids() {
    let Some((lab, _turn)) = lab("tracks_and_bisections_are_pushed") else {
        return;
    };
    let url = lab.fresh_store("t_records");
    let dir = tempfile::tempdir().unwrap();
    let db = many_runs(dir.path(), 4);
    let push = |only: &[&str]| {
        let mut c = lab.secperf(dir.path());
        c.arg("--db")
            .arg(&db)
            .args(["--json", "results", "push", &url]);
        for r in only {
            c.args(["--run", r]);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        json_of(&out.stdout)
    };
    // Finished runs only: an unfinished one is not pushed (the fixture
    // store has one), and a point naming it would be unlinked there.
    let ids: Vec<i64> = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let mut stmt = c
            .prepare("SELECT id FROM runs WHERE finished_at IS NOT NULL ORDER BY id DESC")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    assert!(ids.len() >= 4, "four finished runs: {ids:?}");
    // Two runs first, so that the others get other ids there than here.
    let (a, b) = (ids[2].to_string(), ids[3].to_string());
    let first = push(&[&a, &b]);
    assert_eq!(first["tracks"], 0, "not with --run: {first}");
    let now = chrono::Utc::now();
    put_records(&db, &[ids[0], ids[1]], 3, now);
    let second = push(&[]);
    assert_eq!(
        (second["tracks"].as_u64(), second["bisections"].as_u64()),
        (Some(1), Some(1)),
        "{second}"
    );
    assert_eq!(
        second["unlinked_runs"], 1,
        "run 999999 is nowhere: {second}"
    );
    let remote_of = |local: i64| {
        second["pushed"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["local_id"] == local)
            .map(|p| p["remote_id"].as_i64().unwrap())
            .unwrap()
    };
    assert_ne!(remote_of(ids[0]), ids[0], "ids differ there: {second}");
    let show = |what: &str| {
        let out = lab
            .secperf(dir.path())
            .args(["--db", &url, "--json", "results", "show", what, "latest"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        json_of(&out.stdout)
    };
    let t = show("--track");
    let runs: Vec<serde_json::Value> = t["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["outcome"]["run_id"].clone())
        .collect();
    assert_eq!(
        runs,
        [
            serde_json::json!(remote_of(ids[0])),
            serde_json::json!(remote_of(ids[1])),
            serde_json::Value::Null
        ],
        "{t}"
    );
    let b = show("--bisection");
    assert_eq!(
        b["outcome"]["steps"][0]["tested"]["Measured"]["run_id"],
        remote_of(ids[0]),
        "{b}"
    );
    // Pushed again unchanged: nothing rewritten; grown: rewritten.
    let again = push(&[]);
    assert_eq!(
        (again["tracks"].as_u64(), again["bisections"].as_u64()),
        (Some(0), Some(0)),
        "{again}"
    );
    put_records(
        &db,
        &[ids[0], ids[1]],
        4,
        now + chrono::Duration::seconds(5),
    );
    let grown = push(&[]);
    assert_eq!(grown["tracks"], 1, "{grown}");
    assert_eq!(show("--track")["points"].as_array().unwrap().len(), 4);
}
