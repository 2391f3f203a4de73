//! The service workload through the runner, with real processes: a shell
//! or redis as the server, a script or redis-benchmark as the client. The
//! task is a forked process (single-threaded), as in `overhead`.

use std::net::{Ipv4Addr, TcpListener};

use super::*;
use crate::model::{Mode, WorkloadResult};
use crate::runner::testing::brief_opts;
use crate::workloads::def;

fn params(server: &[&str], client: &[&str], ready: &str) -> Params {
    let s = command::argv_param::<&str>;
    let mut p = Params::new();
    p.insert("server".into(), s(server));
    p.insert("argv".into(), s(client));
    p.insert("ready".into(), ready.into());
    def::<Service>().params_with_defaults(&p)
}

fn measure(p: &Params) -> Result<WorkloadResult> {
    let d = def::<Service>();
    (d.validate)(p)?;
    let mut opts = brief_opts(Mode::Process, 20, p.clone());
    opts.warmup = 0;
    opts.samples = 2;
    crate::runner::measure(&d, &opts, &mut |_| {})
}

use super::ready::tests::free_port;

/// Processes whose command line contains `marker`.
fn running_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat_fields(&stat).is_some_and(|f| f.first() == Some(&"Z"));
            if cmd.contains(marker) && !zombie {
                found.push(cmd);
            }
        }
    }
    found
}

#[test]
fn a_server_per_half_and_its_client_runs_leave_nothing_running() {
    // The server: a shell that burns a little CPU, then sleeps; marked so
    // that it can be found afterwards.
    let marker = "secperf-test-server-4711";
    let p = params(
        &[
            "sh",
            "-c",
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exec sleep 60",
            marker,
        ],
        &["sh", "-c", "sleep 0.02"],
        "delay:50",
    );
    let r = measure(&p).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(r.samples, 2);
    // 2 slices, each at least one 20 ms client run.
    assert!(r.ns_per_op.median > 15e6, "{:?}", r.ns_per_op);
    assert!(r.child_cpu.is_some(), "the server's CPU per run");
    assert!(r.client_metrics.is_empty(), "sh is no client secperf reads");
    assert!(
        running_with(marker).is_empty(),
        "{:?}",
        running_with(marker)
    );
}

#[test]
fn a_known_client_s_figures_are_kept_per_half() {
    // A stand-in for redis-benchmark: prints the real tool's captured
    // --csv output (the parser is chosen by the program's file name).
    let dir = tempfile::tempdir().unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/clients/redis-benchmark-csv.txt");
    let client = dir.path().join("redis-benchmark");
    std::fs::write(
        &client,
        format!("#!/bin/sh\nsleep 0.02\ncat '{}'\n", fixture.display()),
    )
    .unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&client).unwrap().permissions(),
        0o755,
    );
    std::fs::set_permissions(&client, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let p = params(
        &["sleep", "60"],
        &[client.to_str().unwrap(), "--csv"],
        "delay:10",
    );
    let r = measure(&p).unwrap_or_else(|e| panic!("{e:#}"));
    let names: Vec<&str> = r.client_metrics.iter().map(|m| m.name.as_str()).collect();
    assert!(
        names.iter().any(|n| n.ends_with("requests_per_sec")),
        "{names:?}"
    );
    let direct = crate::clients::redis_benchmark::parse(
        &std::fs::read_to_string(&fixture).unwrap(),
        &["--csv".to_string()],
    )
    .unwrap();
    // Every run printed the same: the half's median is that value.
    assert_eq!(r.client_metrics, direct);
}

#[test]
fn a_failing_client_stops_the_measurement_with_its_output() {
    let p = params(
        &["sleep", "60"],
        &["sh", "-c", "echo 'ERR connection refused' >&2; exit 4"],
        "delay:10",
    );
    let m = format!("{:#}", measure(&p).unwrap_err());
    assert!(m.contains("exited with status 4"), "{m}");
    assert!(m.contains("ERR connection refused"), "{m}");
}

#[test]
fn a_server_that_dies_while_the_client_runs_ends_the_run_at_once() {
    let p = params(
        &[
            "sh",
            "-c",
            "sleep 0.2; echo 'server: out of memory' >&2; exit 9",
        ],
        &["sleep", "30"],
        "delay:10",
    );
    let start = Instant::now();
    let m = format!("{:#}", measure(&p).unwrap_err());
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert!(m.contains("exited with status 9 while the client"), "{m}");
    assert!(m.contains("out of memory"), "{m}");
}

#[test]
fn a_server_never_ready_is_an_error_and_is_stopped() {
    let marker = "secperf-test-never-ready-4712";
    let mut p = params(
        &["sh", "-c", "exec sleep 60", marker],
        &["true"],
        &format!("tcp:{}", free_port()),
    );
    p.insert("ready_timeout_ms".into(), "300".into());
    let m = format!("{:#}", measure(&p).unwrap_err());
    assert!(m.contains("not ready"), "{m}");
    assert!(m.contains("--ready-timeout"), "{m}");
    assert!(
        running_with(marker).is_empty(),
        "{:?}",
        running_with(marker)
    );
}

#[test]
fn a_server_that_exits_before_it_is_ready_says_why() {
    let p = params(
        &[
            "sh",
            "-c",
            "echo 'bind: Address already in use' >&2; exit 3",
        ],
        &["true"],
        &format!("tcp:{}", free_port()),
    );
    let m = format!("{:#}", measure(&p).unwrap_err());
    assert!(m.contains("exited with status 3"), "{m}");
    assert!(m.contains("Address already in use"), "{m}");
}

#[test]
fn a_taken_port_is_refused_before_the_server_starts() {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let marker = "secperf-test-taken-4713";
    let p = params(
        &["sh", "-c", "exec sleep 60", marker],
        &["true"],
        &format!("tcp:{port}"),
    );
    let m = format!("{:#}", measure(&p).unwrap_err());
    assert!(m.contains("already taken"), "{m}");
    assert!(
        running_with(marker).is_empty(),
        "{:?}",
        running_with(marker)
    );
}

#[test]
fn bad_parameters_are_usage_errors() {
    use crate::error::exit_code;
    let good = params(&["sleep", "1"], &["true"], "delay:10");
    assert!(Service::validate(&good).is_ok());
    for (k, v) in [
        ("server", ""),
        ("server", "redis-server --port 1"),
        ("server", "[\"secperf-no-such-server\"]"),
        ("argv", "[]"),
        ("ready", "tcp:0"),
        ("ready", "http:80"),
        ("ready_timeout_ms", "0"),
    ] {
        let mut p = good.clone();
        p.insert(k.into(), v.into());
        let e = Service::validate(&p).unwrap_err();
        assert_eq!(exit_code(&e), 2, "{k}={v}: {e:#}");
    }
    let e = params_for(
        "redis-server 'unclosed",
        &["true".into()],
        None,
        None,
        false,
    )
    .unwrap_err();
    assert_eq!(exit_code(&e), 2, "{e:#}");
    assert!(check_placement(&[1, 2], Mode::Process).is_err());
    assert!(check_placement(&[1], Mode::Thread).is_err());
    assert!(check_placement(&[1], Mode::Process).is_ok());
}

#[test]
fn the_server_command_line_is_split_as_a_shell_would() {
    let p = params_for(
        "redis-server --port 6390 --save \"\"",
        &["redis-benchmark".into(), "-q".into()],
        Some("tcp:6390"),
        Some(2000),
        false,
    )
    .unwrap();
    assert_eq!(
        p[0],
        r#"service.server=["redis-server","--port","6390","--save",""]"#
    );
    assert!(p.contains(&"service.ready=tcp:6390".to_string()), "{p:?}");
    assert!(
        p.contains(&"service.ready_timeout_ms=2000".to_string()),
        "{p:?}"
    );
}

/// redis-server with redis-benchmark, as the issue's example, where they
/// are installed (CI installs them).
#[test]
fn redis_under_its_real_client() {
    let (Some(_), Some(_)) = (
        crate::sys::which("redis-server"),
        crate::sys::which("redis-benchmark"),
    ) else {
        crate::testing::skip_missing_tool(
            "redis_under_its_real_client",
            "redis-server",
            "redis-server or redis-benchmark is not installed",
        );
        return;
    };
    let port = free_port().to_string();
    let p = params(
        &[
            "redis-server",
            "--port",
            &port,
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        &[
            "redis-benchmark",
            "-p",
            &port,
            "-n",
            "2000",
            "-t",
            "get,set",
            "--csv",
        ],
        &format!("tcp:{port}"),
    );
    let r = measure(&p).unwrap_or_else(|e| panic!("{e:#}"));
    let rps: Vec<f64> = r
        .client_metrics
        .iter()
        .filter(|m| m.name.ends_with("requests_per_sec"))
        .map(|m| m.value)
        .collect();
    assert_eq!(rps.len(), 2, "{:?}", r.client_metrics);
    assert!(rps.iter().all(|v| *v > 100.0), "{rps:?}");
    let cpu = r.child_cpu.expect("the server's CPU");
    assert!(cpu.user_ns_per_op + cpu.sys_ns_per_op > 0.0, "{cpu:?}");
    assert!(running_with(&format!("*:{port}")).is_empty());
}
