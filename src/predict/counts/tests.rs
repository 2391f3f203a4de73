//! Counting a real command's syscalls, against `perf trace -s` where perf
//! is installed (CI installs it). Root only (tracepoints; tracefs is
//! mounted for the test when it is not, and unmounted after).

use super::*;

/// Mounts tracefs at /sys/kernel/tracing for the test when nothing is
/// mounted; unmounts it when dropped, if it mounted it. The tests that use
/// it take turns (one must not unmount it under another).
struct Tracefs {
    mounted: bool,
    _turn: std::sync::MutexGuard<'static, ()>,
}

static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Tracefs {
    fn ensure() -> Tracefs {
        let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        if tracefs().is_ok() {
            return Tracefs {
                mounted: false,
                _turn: turn,
            };
        }
        let ok = std::process::Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mount -t tracefs failed");
        Tracefs {
            mounted: true,
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

#[test]
fn the_summary_parser_reads_perf_trace_s() {
    let text = "\n Summary of events:\n\n tar (12831), 462 events, 98.1%\n\n   syscall            calls  errors  total       min       avg       max       stddev\n                                     (msec)    (msec)    (msec)    (msec)        (%)\n   --------------- --------  ------ -------- --------- --------- ---------     ------\n   newfstatat            63      0     1.426     0.018     0.023     0.124      7.77%\n   openat                44     19     1.072     0.020     0.024     0.076      5.46%\n\n sh (12830), 10 events\n\n   openat                 2      0     0.1     0.018     0.023     0.124      7.77%\n";
    let m = perf_trace_summary(text);
    assert_eq!(m["newfstatat"], 63);
    assert_eq!(m["openat"], 46);
    assert_eq!(m.len(), 2);
}

#[test]
fn a_command_s_syscalls_are_counted_as_perf_trace_counts_them() {
    let test = "a_command_s_syscalls_are_counted_as_perf_trace_counts_them";
    if !crate::testing::root_or_skip(test, "tracepoints and mounting tracefs") {
        return;
    }
    let _tracefs = Tracefs::ensure();
    let tree = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let argv: Vec<String> = ["tar", "cf", "/dev/null", tree]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (counted, status) = count_command(&argv).unwrap_or_else(|e| panic!("{e:#}"));
    assert!(
        counted.cpu_ns > 0 && counted.wall_ns >= counted.cpu_ns / 4,
        "cpu {} ns, wall {} ns",
        counted.cpu_ns,
        counted.wall_ns
    );
    let ours = counted.counts;
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    // tar stats every file of the tree (it writes to /dev/null, so GNU
    // tar does not read them), and exits once.
    let files = walk_files(std::path::Path::new(tree));
    assert!(
        ours["newfstatat"] as usize >= files,
        "{files} files: {ours:?}"
    );
    assert_eq!(ours.get("exit_group"), Some(&1), "{ours:?}");
    assert_eq!(ours.get("execve"), Some(&1), "{ours:?}");

    let Some(perf) = crate::sys::which("perf") else {
        crate::testing::skip_missing_tool(test, "perf", "perf is not installed");
        return;
    };
    let out = tempfile::NamedTempFile::new().unwrap();
    let ok = std::process::Command::new(perf)
        .args(["trace", "-s", "-o"])
        .arg(out.path())
        .arg("--")
        .args(&argv)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "perf trace -s failed");
    let theirs = perf_trace_summary(&std::fs::read_to_string(out.path()).unwrap());
    assert!(!theirs.is_empty(), "perf trace printed no summary");
    eprintln!("secperf's counts: {ours:?}\nperf trace -s:    {theirs:?}");
    // Every syscall perf counted 20 times or more: within 5%.
    for (name, &n) in theirs.iter().filter(|(_, n)| **n >= 20) {
        let m = ours.get(name).copied().unwrap_or(0);
        let off = (m as f64 - n as f64).abs() / n as f64;
        assert!(
            off <= 0.05,
            "{name}: ours {m}, perf trace {n}\n{ours:?}\n{theirs:?}"
        );
    }
    let (a, b): (u64, u64) = (ours.values().sum(), theirs.values().sum());
    assert!(
        (a as f64 - b as f64).abs() / (b as f64) <= 0.05,
        "total: ours {a}, perf trace {b}"
    );
}

fn walk_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            if e.file_type().unwrap().is_dir() {
                walk_files(&e.path())
            } else {
                1
            }
        })
        .sum()
}

#[test]
fn a_running_process_is_counted_over_a_window() {
    let test = "a_running_process_is_counted_over_a_window";
    if !crate::testing::root_or_skip(test, "tracepoints and mounting tracefs") {
        return;
    }
    let _tracefs = Tracefs::ensure();
    // A shell that starts a process over and over: clone and wait4 in the
    // shell itself, execve in its children (counted through inherit once
    // they exit).
    let mut child = std::process::Command::new("sh")
        .args(["-c", "while :; do /bin/true; done"])
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let counted = (|| -> Result<BTreeMap<String, u64>> {
        let mut c = SyscallCounters::open(syscall_events()?, &threads_of(pid)?)?;
        c.enable()?;
        std::thread::sleep(std::time::Duration::from_millis(300));
        c.disable()?;
        c.read()
    })();
    let _ = child.kill();
    let _ = child.wait();
    let counts = counted.unwrap_or_else(|e| panic!("{e:#}"));
    let spawned = ["clone", "clone3", "fork", "vfork"]
        .iter()
        .filter_map(|n| counts.get(*n))
        .max();
    assert!(spawned.is_some_and(|n| *n > 5), "{counts:?}");
    assert!(counts.get("execve").is_some_and(|n| *n > 5), "{counts:?}");
    assert!(counts.get("wait4").is_some_and(|n| *n > 5), "{counts:?}");
}

#[test]
fn a_server_s_workers_that_exist_before_the_count_are_counted_with_it() {
    let test = "a_server_s_workers_that_exist_before_the_count_are_counted_with_it";
    if !crate::testing::root_or_skip(test, "tracepoints and mounting tracefs") {
        return;
    }
    let _tracefs = Tracefs::ensure();
    // A "master" that sleeps (no calls while counted) and a "worker" it
    // started before the count that does all the work: nginx's shape.
    let mut master = std::process::Command::new("sh")
        .args(["-c", "sh -c 'while :; do /bin/true; done' & wait"])
        .spawn()
        .unwrap();
    let pid = master.id() as libc::pid_t;
    // Until the worker exists.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while tree_of(pid).map_or(0, |t| t.len()) < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let counted = count_pid(
        pid,
        std::time::Duration::from_millis(500),
        std::time::Duration::from_millis(200),
        &mut |_| {},
    );
    let tree = tree_of(pid);
    let _ = std::process::Command::new("pkill")
        .args(["-KILL", "-P", &pid.to_string()])
        .status();
    let _ = master.kill();
    let _ = master.wait();
    let (counted, shape, when) = counted.unwrap_or_else(|e| panic!("{e:#}"));
    assert!(shape.processes >= 2, "{shape:?} {tree:?}");
    assert_eq!(when.calls_per_slice.len(), 2, "{when:?}");
    assert!(
        counted.counts.get("execve").is_some_and(|n| *n > 5),
        "the worker's children's execve: {:?}",
        counted.counts
    );
    assert!(counted.cpu_ns > 0, "the tree's CPU time");
    // The window after the count counted every call of the tree (its CPU
    // time is in clock ticks: 200 ms of a loop that mostly forks may read
    // 0).
    let light = counted.light.expect("a light window");
    assert!(light.calls > 10, "{light:?}");
    assert!(light.cpu_ns_per_call().is_some());
}

#[test]
fn a_burst_anywhere_in_the_window_is_counted_whole() {
    // A load that came in the first third of --for was seen only by the
    // counter without names, and predict said "made no system calls".
    let test = "a_burst_anywhere_in_the_window_is_counted_whole";
    if !crate::testing::root_or_skip(test, "tracepoints and mounting tracefs") {
        return;
    }
    let _tracefs = Tracefs::ensure();
    // Idle, then 0.6 s of a Python loop of os.getppid() (time.time() is
    // in the vDSO: no call), then idle: a burst in the window's first
    // third.
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            "import os,time\ntime.sleep(0.3)\nt=time.time()\nn=0\nwhile time.time()-t<0.6:\n    os.getppid(); n+=1\nprint(n, flush=True)\ntime.sleep(30)",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let counted = count_pid(
        pid,
        std::time::Duration::from_secs(3),
        std::time::Duration::from_millis(500),
        &mut |_| {},
    );
    let made: u64 = {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        line.trim().parse().unwrap()
    };
    let _ = child.kill();
    let _ = child.wait();
    let (counted, _, when) = counted.unwrap_or_else(|e| panic!("{e:#}"));
    let (from, to) = when.active_s().expect("calls");
    assert!(from < 0.6 && to < 2.0, "{when:?}");
    // Every call counted by name: getppid's count within 2% of what the
    // loop made (time.time() is in the vDSO; the interpreter's own calls
    // are not getppid).
    let got = counted.counts.get("getppid").copied().unwrap_or(0) as f64;
    assert!(
        (got / made as f64 - 1.0).abs() < 0.02,
        "getppid counted {got}, made {made}: {:?} {when:?}",
        counted.counts
    );
    assert!(when.calls >= made, "{when:?} made {made}");
}

#[test]
fn the_window_says_when_the_calls_came() {
    let w = Window {
        slice_s: 0.25,
        calls_per_slice: vec![0, 0, 5, 0, 7, 0],
        calls: 12,
    };
    assert_eq!(w.active_s(), Some((0.5, 1.25)));
    assert_eq!(
        w.describe(),
        "12 calls, from 0.50 s to 1.25 s of the window, each counted by name"
    );
    assert_eq!(Window::default().active_s(), None);
}

#[test]
fn a_tree_is_its_root_and_every_descendant() {
    let mut children: BTreeMap<libc::pid_t, Vec<libc::pid_t>> = BTreeMap::new();
    children.insert(1, vec![10, 20]);
    children.insert(10, vec![12, 11]);
    children.insert(20, vec![]);
    children.insert(30, vec![31]);
    assert_eq!(descendants(10, &children), [10, 11, 12]);
    assert_eq!(descendants(1, &children), [1, 10, 11, 12, 20]);
    assert_eq!(descendants(31, &children), [31]);
    // A parent field after a command name with spaces and parentheses.
    assert_eq!(parent_of("42 (a b) c) S 7 42 42 0"), Some(7));
    assert_eq!(parent_of("garbage"), None);
    let me = std::process::id() as libc::pid_t;
    assert_eq!(tree_of(me).unwrap()[0], me);
    assert!(format!("{:#}", tree_of(i32::MAX - 7).unwrap_err()).contains("no such process"));
    let t = Tree {
        processes: 3,
        threads: 5,
        gone: 0,
        started: 1,
    };
    assert_eq!(
        t.describe(),
        "3 processes, 5 threads (1 process started during the window)"
    );
    let t = Tree {
        processes: 8,
        threads: 8,
        gone: 2,
        started: 0,
    };
    assert_eq!(
        t.describe(),
        "8 processes, 8 threads (2 threads gone before they could be counted)"
    );
}

#[test]
fn a_missing_process_and_a_missing_tracefs_are_said_plainly() {
    let e = threads_of(i32::MAX - 7).unwrap_err();
    assert!(format!("{e:#}").contains("no such process"), "{e:#}");
}

#[test]
fn the_median_run_by_cpu_time_is_taken_whole() {
    let run = |cpu_ns: u64, calls: u64| Counted {
        counts: BTreeMap::from([("read".to_string(), calls)]),
        cpu_ns,
        wall_ns: cpu_ns,
        light: None,
    };
    let m = median_run(vec![run(900, 1), run(100, 2), run(300, 3)]);
    assert_eq!((m.cpu_ns, m.counts["read"]), (300, 3));
    let m = median_run(vec![run(900, 1), run(100, 2), run(300, 3), run(500, 4)]);
    assert_eq!(m.cpu_ns, 300);
    assert_eq!(median_run(vec![run(7, 7)]).cpu_ns, 7);
}

#[test]
fn the_cpu_time_predicted_against_is_the_light_windows_per_call() {
    let counted = |light: Option<Light>| Counted {
        counts: BTreeMap::from([("read".to_string(), 1_000_000u64)]),
        cpu_ns: 5_000_000_000,
        wall_ns: 6_000_000_000,
        light,
    };
    // 3 us a call lightly counted: 3 s for the million calls, not the 5 s
    // taken while counted by name.
    let light = Light {
        calls: 100_000,
        cpu_ns: 300_000_000,
        wall_ns: 3_000_000_000,
    };
    let (cpu, note) = counted(Some(light)).cpu_for_prediction();
    assert_eq!(cpu, 3_000_000_000);
    assert!(note.unwrap().contains("+67%"));
    // Too little CPU time in the light window to time a call in ticks.
    let thin = Light {
        cpu_ns: 100_000_000,
        ..light
    };
    let (cpu, note) = counted(Some(thin)).cpu_for_prediction();
    assert_eq!(cpu, 5_000_000_000);
    assert!(note.unwrap().contains("too little"));
    assert_eq!(counted(None).cpu_for_prediction(), (5_000_000_000, None));
    // The load stopped before the light window: said, not silent.
    let idle = Light {
        calls: 0,
        cpu_ns: 0,
        ..light
    };
    let (cpu, note) = counted(Some(idle)).cpu_for_prediction();
    assert_eq!(cpu, 5_000_000_000);
    assert!(
        note.unwrap()
            .contains("made no call in the 3.0 s after the count")
    );
}
