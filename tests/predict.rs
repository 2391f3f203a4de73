//! `secperf predict` end to end: bad input exits 2 with the fix; a
//! command's and a running process's syscalls are counted and priced by a
//! model whose probe is measured once, stored and reused; every format.

mod common;

use std::sync::Mutex;

use common::{json_of, root_or_skip, secperf};

/// Mounts tracefs for a test when it is not (unmounted after), one test
/// at a time.
struct Tracefs {
    mounted: bool,
    _turn: std::sync::MutexGuard<'static, ()>,
}

static TURN: Mutex<()> = Mutex::new(());

impl Tracefs {
    fn ensure() -> Tracefs {
        let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let there = std::path::Path::new("/sys/kernel/tracing/events").is_dir();
        if !there {
            let ok = std::process::Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "mount -t tracefs failed");
        }
        Tracefs {
            mounted: !there,
            _turn: turn,
        }
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.mounted {
            let _ = std::process::Command::new("umount")
                .arg("/sys/kernel/tracing")
                .status();
        }
    }
}

const SANDBOX: &str = "landlock:ro=/usr:/etc,rw=/tmp";

#[test]
fn bad_input_exits_2_and_says_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let cases: &[(&[&str], &str)] = &[
        (&["predict", "-m", "seccomp:allow"], "--pid PID"),
        (
            &["predict", "-m", "seccomp:allow", "--pid", "1", "--", "true"],
            "not both",
        ),
        (
            &["predict", "-m", "seccomp:allow", "--for", "3", "--", "true"],
            "--pid",
        ),
        (
            &["predict", "-m", "seccomp:allow", "--pid", "1", "--for", "0"],
            "between 0 and 86400",
        ),
        (
            &["predict", "-m", "cred:caps", "--", "true"],
            "overhead -m cred:caps",
        ),
        (&["predict", "-m", "seccomp:bogus", "--", "true"], "seccomp"),
        (
            &["predict", "-m", "seccomp:allow", "--pid", "2147483000"],
            "is the process running",
        ),
    ];
    for (args, says) in cases {
        let out = secperf(&db).args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should say {says:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_command_is_priced_by_a_probe_measured_once_and_reused() {
    let test = "a_command_is_priced_by_a_probe_measured_once_and_reused";
    if !root_or_skip(test, "tracepoints and Landlock's probe") {
        return;
    }
    let _tracefs = Tracefs::ensure();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let run = |extra: &[&str]| {
        let out = secperf(&db)
            .args(["predict", "-m", SANDBOX, "--quick"])
            .args(extra)
            .args(["--", "ls", "-l", "/usr"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (String::from_utf8(out.stdout).unwrap(), err)
    };
    let (first, err) = run(&["--json"]);
    assert!(err.contains("measuring the cost model's probes"), "{err}");
    // ls's own listing goes nowhere near the JSON.
    let p = json_of(first.as_bytes());
    let lines = p["per_syscall"].as_array().unwrap();
    let line = |name: &str| lines.iter().find(|l| l["name"] == name).cloned();
    let openat = line("openat").expect("ls opens files");
    // Its class, and the cache-cold term on every call when there is one.
    assert!(
        openat["class"]
            .as_str()
            .unwrap()
            .starts_with("filesystem hook"),
        "{openat}"
    );
    assert!(openat["count"].as_u64().unwrap() >= 3, "{openat}");
    let probe = &p["probes"][0];
    assert_eq!(probe["workload"], "open");
    assert_eq!(probe["pairs"], 10);
    let delta = probe["delta_ns_per_op"].as_f64().unwrap();
    // The cache-cold term, when ls spends enough CPU between calls: the
    // sandbox on getppid, hot and with the reads, measured too, and
    // charged to every call.
    let cold = match p["cold"].as_object() {
        Some(c) => {
            let pages = c["fault_pages"].as_u64().unwrap();
            assert!((1..=4).contains(&pages), "{p}");
            let workloads: Vec<&str> = p["probes"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|f| f["workload"].as_str())
                .collect();
            assert_eq!(
                workloads,
                [
                    "open",
                    "getppid",
                    &format!("getppid_cold fault_pages={pages}")
                ],
                "{p}"
            );
            c["ns_per_call"].as_f64().unwrap()
        }
        None => {
            assert!(p["notes"].to_string().contains("no cache-cold term"), "{p}");
            0.0
        }
    };
    assert!((openat["ns_per_call"].as_f64().unwrap() - (delta + cold)).abs() < 1e-6);
    // Calls without a Landlock hook cost the cold term only; the total is
    // the sum.
    for l in lines
        .iter()
        .filter(|l| l["class"].as_str().unwrap().starts_with("no Landlock hook"))
    {
        let want = l["count"].as_f64().unwrap() * cold;
        assert!((l["cost_ns"].as_f64().unwrap() - want).abs() < 1e-6, "{l}");
    }
    let sum: f64 = lines.iter().map(|l| l["cost_ns"].as_f64().unwrap()).sum();
    let added = p["added_ns"].as_f64().unwrap();
    assert!(
        (sum - added).abs() < 1e-6 * added.abs().max(1.0),
        "{sum} vs {added}"
    );
    assert!(p["cpu_ns"].as_u64().unwrap() > 0);
    assert!(p["added_low_ns"].as_f64().unwrap() <= added);
    assert!(p["added_high_ns"].as_f64().unwrap() >= added);

    // The probe is stored for this machine: not measured again. (Without
    // the cold term: its probe follows the run's CPU time per call, which
    // may round to another size.)
    let (text, err) = run(&["--no-cold"]);
    assert!(!err.contains("measuring the cost model's probes"), "{err}");
    assert!(text.contains("predicted overhead of"), "{text}");
    assert!(text.contains("openat"), "{text}");
    let (prom, _) = run(&["--format", "prometheus", "--no-cold"]);
    assert!(
        prom.contains("# TYPE secperf_predicted_overhead_ratio gauge"),
        "{prom}"
    );
    for l in prom.lines().filter(|l| !l.starts_with('#')) {
        let (_, v) = l.rsplit_once(' ').unwrap();
        assert!(v.parse::<f64>().is_ok(), "{l}");
    }
    assert!(prom.contains("secperf_counted_syscalls{") && prom.contains("syscall=\"openat\""));
}

#[test]
fn a_running_process_is_counted_over_a_window_without_being_touched() {
    let test = "a_running_process_is_counted_over_a_window_without_being_touched";
    if !root_or_skip(test, "tracepoints of another process") {
        return;
    }
    let _tracefs = Tracefs::ensure();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let mut child = std::process::Command::new("sh")
        .args(["-c", "while :; do cat /etc/hostname >/dev/null; done"])
        .spawn()
        .unwrap();
    let out = secperf(&db)
        .args(["predict", "-m", SANDBOX, "--quick", "--json", "--pid"])
        .arg(child.id().to_string())
        .args(["--for", "1.5"])
        .output()
        .unwrap();
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("read-only"), "{err}");
    // Nothing was applied to it.
    let mode = status.lines().find(|l| l.starts_with("Seccomp:")).unwrap();
    assert!(mode.ends_with('0'), "{mode}");
    let p = json_of(&out.stdout);
    assert_eq!(p["target"], format!("pid {}", child.id()));
    // Counted by syscall for the last two thirds of --for 1.5 s.
    let window = p["window_s"].as_f64().unwrap();
    assert!((0.95..4.0).contains(&window), "{window}");
    // The loop's children (started while counted) are counted: each cat
    // opens /etc/hostname, and the shell forks and waits.
    let count = |name: &str| {
        p["per_syscall"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == name)
            .and_then(|l| l["count"].as_u64())
            .unwrap_or(0)
    };
    assert!(count("execve") >= 5, "{p}");
    assert!(count("openat") >= count("execve"), "{p}");
    assert!(count("wait4") >= 5, "{p}");
    assert!(p["cpu_ns"].as_u64().unwrap() > 0, "{p}");
}

#[test]
fn an_idle_target_is_an_error_not_an_empty_prediction() {
    let test = "an_idle_target_is_an_error_not_an_empty_prediction";
    if !root_or_skip(test, "tracepoints of another process") {
        return;
    }
    let _tracefs = Tracefs::ensure();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let out = secperf(&db)
        .args(["predict", "-m", SANDBOX, "--quick", "--json", "--pid"])
        .arg(child.id().to_string())
        .args(["--for", "1"])
        .output()
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("made no system calls"), "{err}");
    assert!(err.contains("1 process, 1 thread"), "{err}");
    assert!(out.stdout.is_empty(), "no figure is printed");
}

#[test]
fn a_loaded_redis_is_counted_as_perf_trace_counts_it() {
    let test = "a_loaded_redis_is_counted_as_perf_trace_counts_it";
    if !root_or_skip(test, "tracepoints of another process") {
        return;
    }
    let tools = ["redis-server", "redis-benchmark", "perf"].map(secperf::sys::which);
    if let Some(i) = tools.iter().position(Option::is_none) {
        let tool = ["redis-server", "redis-benchmark", "perf"][i];
        common::skip_missing_tool(test, tool, &format!("{tool} is not installed"));
        return;
    }
    let _tracefs = Tracefs::ensure();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let mut redis = std::process::Command::new("redis-server")
        .args(["--port", &port, "--save", "", "--appendonly", "no"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = redis.id().to_string();
    common::wait_for(
        "redis to listen",
        std::time::Duration::from_secs(10),
        || std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_ok(),
    );
    let summary = dir.path().join("perf.txt");
    let mut perf = std::process::Command::new("timeout")
        .args(["-s", "INT", "15", "perf", "trace", "-s", "-p", &pid, "-o"])
        .arg(&summary)
        .spawn()
        .unwrap();
    let predict = std::process::Command::new(assert_cmd::cargo::cargo_bin("secperf"))
        .arg("--db")
        .arg(&db)
        .args(["predict", "-m", SANDBOX, "--quick", "--json", "--pid", &pid])
        .args(["--for", "15"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Both are counting well before the load starts, and still after it,
    // for the same 15 s (redis's own timer makes calls all along): predict
    // counts by syscall over all of --for (then 5 s more to time the
    // calls), perf trace for as long.
    std::thread::sleep(std::time::Duration::from_millis(6500));
    let bench = std::process::Command::new("redis-benchmark")
        .args(["-p", &port, "-n", "5000", "-t", "get,set", "-q"])
        .output()
        .unwrap();
    let out = predict.wait_with_output().unwrap();
    perf.wait().unwrap();
    redis.kill().unwrap();
    redis.wait().unwrap();
    assert!(bench.status.success(), "redis-benchmark failed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let p = json_of(&out.stdout);
    let ours: std::collections::BTreeMap<String, u64> = p["per_syscall"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_string(),
                l["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let theirs =
        secperf::predict::counts::perf_trace_summary(&std::fs::read_to_string(&summary).unwrap());
    eprintln!("secperf predict: {ours:?}\nperf trace -s:   {theirs:?}");
    // 5000 SETs and 5000 GETs: a read and a write each, at least.
    assert!(
        theirs.get("read").copied().unwrap_or(0) >= 10_000,
        "{theirs:?}"
    );
    for (name, &n) in theirs.iter().filter(|(_, n)| **n >= 100) {
        let m = ours.get(name).copied().unwrap_or(0);
        let off = (m as f64 - n as f64).abs() / n as f64;
        assert!(off <= 0.05, "{name}: secperf {m}, perf trace {n}");
    }
}
