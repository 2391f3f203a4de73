//! A server under the mechanism, its client outside it (`--server 'CMD'
//! [--ready ...] -- CLIENT`), end to end: the per-process mechanism
//! reaches the server and not the client; a server that exits, one never
//! ready and a taken port exit 2 with the reason and leave nothing
//! running; contradictory options exit 2.

mod common;

use std::net::{Ipv4Addr, TcpListener};

use common::{TINY, json_of, secperf};

/// The `Seccomp:` mode each process that wrote to `dir/NAME-*` had: 0
/// none, 2 a filter.
fn seccomp_modes(dir: &std::path::Path, prefix: &str) -> Vec<String> {
    let mut modes: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .flat_map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .map(|l| l.split_whitespace().last().unwrap_or("").to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    modes.sort();
    modes.dedup();
    modes
}

/// Processes whose command line contains `marker` (zombies aside).
fn running_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let state = std::fs::read_to_string(e.path().join("stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, r)| r.trim_start().chars().next())
            })
            .flatten();
        if cmd.contains(marker) && state != Some('Z') && !cmd.contains("secperf") {
            found.push(cmd);
        }
    }
    found
}

#[test]
fn the_mechanism_reaches_the_server_and_not_its_client() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let d = dir.path().display();
    let server = format!(
        "sh -c 'grep Seccomp: /proc/self/status > {d}/server-$$; exec sleep 60' \
         secperf-test-served-4721"
    );
    let client = format!("grep Seccomp: /proc/self/status >> {d}/client-$$");
    let out = secperf(&db)
        .args(["--json", "overhead", "-m", "seccomp:args", "--no-control"])
        .args(TINY)
        .args(["--server", &server, "--ready", "delay:20", "--"])
        .args(["sh", "-c", &client])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    let c = &v["comparisons"][0];
    assert_eq!(c["workload"], "service");
    assert_eq!(c["pairs"], 10);
    assert_eq!(c["child_cpu"].as_array().unwrap().len(), 2, "{c}");
    // The server's CPU per client run is a measure beside the time, paired
    // and decided as the time is.
    assert_eq!(c["measure"]["name"], "time", "{c}");
    let cpu = c["beside"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "server.cpu_ms_per_run")
        .unwrap_or_else(|| panic!("no server CPU beside the time: {c}"));
    assert_eq!(
        (&cpu["unit"], &cpu["per"]),
        (&"ms".into(), &"run".into()),
        "{cpu}"
    );
    assert!(cpu["change_pct"]["verdict"].is_string(), "{cpu}");
    assert!(c["pair_data"][0]["beside"].is_array(), "{c}");
    // Servers of both arms: with a filter (2) and without (0); every
    // client run: none.
    assert_eq!(seccomp_modes(dir.path(), "server-"), ["0", "2"]);
    assert_eq!(seccomp_modes(dir.path(), "client-"), ["0"]);
    assert!(running_with("secperf-test-served-4721").is_empty());
    let id = v["run_id"].as_i64().unwrap().to_string();
    secperf(&db)
        .args(["results", "show", &id])
        .assert()
        .success()
        .stdout(predicates::str::contains("against sh -c"));
}

#[test]
fn a_server_that_exits_or_is_never_ready_exits_2_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let ready = format!("tcp:{port}");
    let cases: [(&str, &[&str], &str); 2] = [
        (
            "sh -c 'echo cannot open config >&2; exit 3' secperf-test-exits-4722",
            &[],
            "exited with status 3",
        ),
        (
            "sh -c 'exec sleep 60' secperf-test-never-4723",
            &["--ready-timeout", "300"],
            "not ready",
        ),
    ];
    for (server, extra, says) in cases {
        let out = secperf(&db)
            .args(["overhead", "-m", "seccomp:args", "--no-control"])
            .args(TINY)
            .args(["--server", server, "--ready", &ready])
            .args(extra)
            .args(["--", "true"])
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8_lossy(&out);
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(running_with("secperf-test-never-4723").is_empty());
    assert!(running_with("secperf-test-exits-4722").is_empty());
}

#[test]
fn a_taken_port_exits_2_before_the_server_starts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = secperf(&db)
        .args(["run", "--quick", "--server"])
        .arg("sh -c 'exec sleep 60' secperf-test-taken-4724")
        .args(["--ready", &format!("tcp:{port}"), "--", "true"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("already taken"), "{err}");
    assert!(running_with("secperf-test-taken-4724").is_empty());
}

#[test]
fn contradictory_options_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for args in [
        // --ready without a server, a server without a client.
        &["run", "--ready", "tcp:1", "--", "true"][..],
        &["run", "--server", "sleep 1"],
        &[
            "run", "--server", "sleep 1", "--ready", "http:80", "--", "true",
        ],
        &["run", "--server", "sleep 'unclosed", "--", "true"],
        &["run", "--server", "sleep 1", "-t", "2", "--", "true"],
        &[
            "run", "--server", "sleep 1", "--mode", "thread", "--", "true",
        ],
        &["run", "--server", "secperf-no-such-server", "--", "true"],
    ] {
        let out = secperf(&db)
            .args(args)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn run_shows_the_figures_of_a_client_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // A stand-in for redis-benchmark (chosen by its file name) that prints
    // the real tool's captured --csv output.
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/clients/redis-benchmark-csv.txt"
    );
    let client = dir.path().join("redis-benchmark");
    std::fs::write(&client, format!("#!/bin/sh\nsleep 0.01\ncat '{fixture}'\n")).unwrap();
    std::fs::set_permissions(&client, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = secperf(&db)
        .args(["run", "--samples", "2", "--sample-ms", "20", "--no-pin"])
        .args(["--server", "sleep 60", "--ready", "delay:10", "--"])
        .arg(&client)
        .arg("--csv")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("The client's figures"), "{text}");
    assert!(text.contains("requests_per_sec"), "{text}");
}
