//! `--vm` and `overhead --kernel` end to end: real guests booted with
//! virtme-ng (under emulation on the CI VM, about 30 s a boot), the LSMs
//! the host does not run measured in them, a kernel A/B over boots, and
//! guests that fail, hang or lose their secperf leaving no QEMU behind.
//!
//! The tests take one lock, so that one guest boots at a time (a boot
//! loads both CPUs) and each can tell its own QEMU processes.

mod common;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use common::{guest_kernel, json_of, secperf, skip_missing_tool, wait_for};

static ONE_GUEST: Mutex<()> = Mutex::new(());

/// The small design every guest measures with.
const SMALL: &[&str] = &[
    "--pairs",
    "10",
    "--sample-ms",
    "10",
    "--samples-per-half",
    "1",
    "--warmup",
    "0",
];

/// Pids of the QEMU processes running now.
fn qemu_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim().starts_with("qemu-system"))
        })
        .collect()
}

/// What a test holds while its guests run: the lock (one guest at a
/// time), the QEMU processes that ran before it, a scratch directory.
struct OneGuest {
    _lock: std::sync::MutexGuard<'static, ()>,
    before: Vec<u32>,
    dir: tempfile::TempDir,
}

fn one_guest() -> OneGuest {
    OneGuest {
        _lock: ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner()),
        before: qemu_pids(),
        dir: tempfile::tempdir().unwrap(),
    }
}

fn no_qemu_left(test: &str, before: &[u32]) {
    wait_for(
        &format!("{test}: the guest's QEMU to be gone"),
        Duration::from_secs(20),
        || qemu_pids().iter().all(|p| before.contains(p)),
    );
}

#[test]
fn a_guest_that_cannot_boot_exits_2_with_the_console_tail() {
    let test = "a_guest_that_cannot_boot_exits_2_with_the_console_tail";
    if guest_kernel(test).is_none() {
        return;
    }
    let g = one_guest();
    let (before, dir) = (&g.before, &g.dir);
    // Issue 53: a file that is not a kernel (the config Debian installs
    // beside its image) hung until the user killed it. Its header is
    // checked before anything boots.
    let kernel = guest_kernel(test).expect("a kernel");
    let config = kernel.with_file_name(
        kernel
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace("vmlinuz-", "config-"),
    );
    let text = dir.path().join("vmlinuz-not-a-kernel");
    std::fs::write(&text, "this is not a kernel\n").unwrap();
    for (image, says) in [
        (
            &text,
            "it is a text file, starting \"this is not a kernel\"",
        ),
        (&config, "it is a kernel's configuration (text)"),
    ] {
        if !image.is_file() {
            continue;
        }
        let started = std::time::Instant::now();
        let out = secperf(&dir.path().join("t.db"))
            .args(["run", "-w", "getppid", "-t", "1", "--quick"])
            .args(["--vm-accel", "emulated", "--vm"])
            .arg(image)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("is not a kernel image QEMU can boot"), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("booting"), "nothing booted: {err}");
        assert!(started.elapsed() < Duration::from_secs(5), "{err}");
    }
    assert!(
        String::from_utf8_lossy(
            &secperf(&dir.path().join("t.db"))
                .args(["run", "-w", "getppid", "--vm"])
                .arg(&config)
                .output()
                .unwrap()
                .stderr
        )
        .contains(&format!("beside it: {}", kernel.display())),
        "the image beside the config is named"
    );
    // A kernel's first 4 KiB (its setup header) and nothing after: QEMU
    // loads it and the console stays silent; --vm-silence stops it, with
    // the tail.
    let silent = dir.path().join("vmlinuz-header-only");
    let mut head = std::fs::read(&kernel).unwrap();
    head.truncate(4096);
    head.resize(8 << 20, 0);
    std::fs::write(&silent, head).unwrap();
    let started = std::time::Instant::now();
    let out = secperf(&dir.path().join("t.db"))
        .args(["run", "-w", "getppid", "-t", "1", "--quick"])
        .args(["--vm-accel", "emulated", "--vm-silence", "5", "--vm"])
        .arg(&silent)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("printed nothing for 5 s while it booted"),
        "{err}"
    );
    assert!(err.contains("its console ended with:\n"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(60), "{err}");
    no_qemu_left(test, before);

    // A kernel that panics while booting (40 MB of memory is not enough):
    // the same, with the panic in the tail.
    let Some(kernel) = guest_kernel(test) else {
        return;
    };
    let out = secperf(&dir.path().join("t.db"))
        .args(["run", "-w", "getppid", "-t", "1", "--quick"])
        .arg(format!("--vm={},append=mem=40M", kernel.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Kernel panic"), "{err}");
    no_qemu_left(test, before);
}

#[test]
fn a_hang_past_the_timeout_and_a_killed_secperf_leave_no_qemu() {
    let test = "a_hang_past_the_timeout_and_a_killed_secperf_leave_no_qemu";
    let Some(kernel) = guest_kernel(test) else {
        return;
    };
    let g = one_guest();
    let (before, dir) = (&g.before, &g.dir);
    let db = dir.path().join("t.db");
    // A guest that cannot start secperf within 6 s (an emulated boot takes
    // about 20 s) is stopped: exit 2 with the console's tail.
    let out = secperf(&db)
        .args([
            "run",
            "-w",
            "getppid",
            "-t",
            "1",
            "--quick",
            "--vm-timeout",
            "6",
        ])
        .arg("--vm")
        .arg(&kernel)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did not start secperf within 6 s"), "{err}");
    assert!(err.contains("  | "), "no console tail: {err}");
    no_qemu_left(test, before);

    // SIGKILL of secperf while its guest boots: the guard sees its pipe
    // close and kills the guest's process group.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("secperf"))
        .arg("--db")
        .arg(&db)
        .args(["run", "-w", "getppid", "-t", "1", "--quick"])
        .arg("--vm")
        .arg(&kernel)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        &format!("{test}: a QEMU to start"),
        Duration::from_secs(60),
        || qemu_pids().iter().any(|p| !before.contains(p)),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    no_qemu_left(test, before);
    // Nothing was stored of either.
    let list = secperf(&db)
        .args(["--json", "results", "list"])
        .output()
        .unwrap();
    assert_eq!(json_of(&list.stdout)["runs"], serde_json::json!([]));
}

/// `overhead --vm KERNEL -m ...` with the small design, as JSON.
fn overhead_in_guest(test: &str, kernel: &PathBuf, args: &[&str]) -> serde_json::Value {
    let g = one_guest();
    let (before, dir) = (&g.before, &g.dir);
    let db = dir.path().join("t.db");
    let out = secperf(&db)
        .arg("--json")
        .arg("overhead")
        .arg("--vm")
        .arg(kernel)
        .args(args)
        .args(SMALL)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{test}: {err}");
    no_qemu_left(test, before);
    let doc = json_of(&out.stdout);
    // The stored run is the one shown, and every text view marks it.
    let shown = secperf(&db)
        .args(["results", "show", "latest"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if doc.pointer("/system/vm/accel") == Some(&serde_json::json!("emulated")) {
        assert!(
            flat.contains("emulated: timings are not those of real hardware"),
            "{text}"
        );
    }
    assert!(text.contains("VM: "), "{text}");
    // The data formats carry it on every row.
    let csv = secperf(&db)
        .args(["results", "show", "latest", "--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    let accel = doc
        .pointer("/system/vm/accel")
        .and_then(|a| a.as_str())
        .unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",vm_accel"), "{csv}");
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.ends_with(&format!(",{accel}"))),
        "{csv}"
    );
    doc
}

fn verdicts(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["mechanism"].as_str().unwrap().to_string(),
                c["overhead_pct"]["verdict"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn selinux_is_measured_in_a_guest_with_the_allow_all_policy() {
    let test = "selinux_is_measured_in_a_guest_with_the_allow_all_policy";
    let Some(kernel) = guest_kernel(test) else {
        return;
    };
    if secperf::sys::which("secilc").is_none() {
        skip_missing_tool(test, "secilc", "secilc is not on PATH");
        return;
    }
    let doc = overhead_in_guest(test, &kernel, &["-m", "selinux", "-w", "open"]);
    let v = verdicts(&doc);
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].0, "selinux");
    assert!(!v[0].1.is_empty(), "no verdict: {v:?}");
    let lsms = doc.pointer("/system/lsm/modules").unwrap().to_string();
    assert!(lsms.contains("selinux"), "{lsms}");
    let cmdline = doc["system"]["vm"]["guest"]["cmdline"].as_str().unwrap();
    assert!(
        cmdline.contains("lsm=") && cmdline.contains("selinux"),
        "{cmdline}"
    );
    let prepared = doc["system"]["vm"]["guest"]["prepared"].to_string();
    assert!(prepared.contains("allow-all policy"), "{prepared}");
    assert!(doc["system"]["vm"]["guest"]["build_id"].is_string());
    assert!(
        doc["command"].as_str().unwrap().contains("--vm"),
        "{}",
        doc["command"]
    );
}

#[test]
fn apparmor_and_the_bpf_lsm_are_measured_in_one_guest() {
    let test = "apparmor_and_the_bpf_lsm_are_measured_in_one_guest";
    let Some(kernel) = guest_kernel(test) else {
        return;
    };
    if secperf::sys::which("apparmor_parser").is_none() {
        skip_missing_tool(test, "apparmor_parser", "apparmor_parser is not on PATH");
        return;
    }
    let doc = overhead_in_guest(
        test,
        &kernel,
        &["-m", "apparmor", "-m", "bpf-lsm", "-w", "eventfd"],
    );
    let v = verdicts(&doc);
    let names: Vec<&str> = v.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(names, ["apparmor", "bpf-lsm"], "{v:?}");
    assert!(v.iter().all(|(_, verdict)| !verdict.is_empty()), "{v:?}");
    let lsms = doc.pointer("/system/lsm/modules").unwrap().to_string();
    assert!(lsms.contains("apparmor") && lsms.contains("bpf"), "{lsms}");
    assert!(doc.pointer("/system/apparmor").is_some());
}

#[test]
fn a_kernel_ab_of_one_image_with_two_command_lines_pairs_boots() {
    let test = "a_kernel_ab_of_one_image_with_two_command_lines_pairs_boots";
    let Some(kernel) = guest_kernel(test) else {
        return;
    };
    let g = one_guest();
    let (before, dir) = (&g.before, &g.dir);
    let k = kernel.display();
    let out = secperf(&dir.path().join("t.db"))
        .args([
            "--json", "overhead", "-w", "getppid", "--pairs", "3", "--seed", "5",
        ])
        .args([
            "--sample-ms",
            "10",
            "--samples-per-half",
            "1",
            "--warmup",
            "0",
        ])
        .args(["--profile", "--profile-pairs", "1"])
        .arg(format!("--kernel=audit0={k},append=audit=0"))
        .arg(format!("--kernel=audit1={k},append=audit=1"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("boot 6 of at most 6 done"), "{err}");
    no_qemu_left(test, before);
    let doc = json_of(&out.stdout);
    let c = &doc["comparisons"][0];
    assert_eq!(c["mechanism"], "kernel");
    assert_eq!(c["variant"], "audit1");
    assert_eq!(c["pairs"], 3);
    assert!(c["overhead_pct"]["ci_low"].is_number(), "{c}");
    // The first pair's boots were profiled, symbolised in the guests.
    let a = &c["attribution"];
    assert_eq!(a["pairs"], 1, "{a}");
    assert!(a["groups"].as_array().is_some_and(|g| !g.is_empty()), "{a}");
    let arms = doc["boot_arms"].as_array().unwrap();
    assert_eq!(arms.len(), 2);
    for (arm, word) in arms.iter().zip(["audit=0", "audit=1"]) {
        let boots = arm["boots"].as_array().unwrap();
        assert_eq!(boots.len(), 3, "{arm}");
        for b in boots {
            assert!(
                b["guest"]["cmdline"].as_str().unwrap().contains(word),
                "{b}"
            );
            assert!(b["guest"]["release"].is_string(), "{b}");
        }
    }
    // The report names each arm's kernel and command line.
    let shown = secperf(&dir.path().join("t.db"))
        .args(["--json", "results", "show", "latest"])
        .output()
        .unwrap();
    assert_eq!(json_of(&shown.stdout)["boot_arms"], doc["boot_arms"]);
    let text = secperf(&dir.path().join("t.db"))
        .args(["results", "show", "latest"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("Kernel A/B across boots"), "{text}");
    assert!(
        flat.contains("audit0 command line (virtme-ng's own words left out): loglevel=4 audit=0")
            && text.contains("audit=1"),
        "{text}"
    );
}

#[test]
fn a_suites_other_side_is_one_command_and_list_says_what_a_guest_has() {
    let test = "a_suites_other_side_is_one_command_and_list_says_what_a_guest_has";
    let Some(kernel) = guest_kernel(test) else {
        return;
    };
    let g = one_guest();
    let (before, dir) = (&g.before, &g.dir);
    let db = dir.path().join("t.db");
    let k = kernel.display();
    // `list --vm IMAGE -m selinux`: the guest boots with SELinux (and its
    // allow-all policy), so selinux is available there.
    let out = secperf(&db)
        .args(["--json", "list", "-m", "selinux"])
        .arg("--vm")
        .arg(&kernel)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let listing = json_of(&out.stdout);
    let status = |name: &str| {
        listing["mechanisms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .map(|m| m["availability"]["status"].clone())
    };
    assert_eq!(
        status("selinux"),
        Some(serde_json::json!("available")),
        "{listing}"
    );
    // SELinux and AppArmor are exclusive: this boot has no AppArmor.
    assert_eq!(status("apparmor"), Some(serde_json::json!("unavailable")));
    no_qemu_left(test, before);

    // The suite once in a guest of each command line, printed in the
    // post's table, B against A.
    let out = secperf(&db)
        .args(["suite", "audit-2017", "--quick"])
        .arg(format!("--kernel=audit0={k},append=audit=0"))
        .arg(format!("--kernel=audit1={k},append=audit=1"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    no_qemu_left(test, before);
    let text = String::from_utf8_lossy(&out.stdout);
    // Words, whatever the terminal width wrapped.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("the baseline run and this one (unpaired)"),
        "{text}"
    );
    assert!(
        flat.contains("audit0 (run ") && flat.contains("audit1 (run "),
        "{text}"
    );
    assert!(
        flat.contains("VM: kvm,")
            || flat.contains("emulated: timings are not those of real hardware"),
        "{text}"
    );
    let list = secperf(&db)
        .args(["--json", "results", "list"])
        .output()
        .unwrap();
    let runs = json_of(&list.stdout)["runs"].clone();
    assert_eq!(runs.as_array().map(Vec::len), Some(2), "{runs}");
}

#[test]
fn instructions_are_counted_in_a_guest_exactly_and_labelled_so() {
    // One boot under QEMU's icount: seccomp:allow on getppid, and the
    // control (nothing switched), in the default sequential design. Every
    // half repeats to a fraction of a percent, so both settle in the
    // fewest pairs the tests allow, whatever the host is doing.
    let test = "instructions_are_counted_in_a_guest_exactly_and_labelled_so";
    let Some(kernel) = guest_kernel(test) else {
        return;
    };
    let g = one_guest();
    let (before, dir) = (&g.before, &g.dir);
    let db = dir.path().join("t.db");
    let out = secperf(&db)
        .args(["--json", "overhead", "--metric", "instructions"])
        .arg("--vm")
        .arg(&kernel)
        .args(["-m", "seccomp:allow", "-m", "none:control", "-w", "getppid"])
        .args(["--sample-ms", "20", "--samples-per-half", "3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{test}: {err}");
    no_qemu_left(test, before);
    let doc = json_of(&out.stdout);
    assert_eq!(doc["params"]["metric"], "instructions", "{}", doc["params"]);
    let vm = &doc["system"]["vm"];
    assert_eq!(vm["accel"], "emulated");
    assert_eq!(vm["vcpus"], 1, "one vCPU for one task");
    assert_eq!(vm["icount"]["options"], "-icount shift=0,sleep=off");
    assert!(
        vm["icount"]["version"]
            .as_str()
            .is_some_and(|v| v.contains("QEMU")),
        "{vm}"
    );
    let prepared = vm["guest"]["prepared"].to_string();
    assert!(prepared.contains("clock counts instructions"), "{prepared}");
    for c in doc["comparisons"].as_array().unwrap() {
        assert_eq!(c["measure"]["name"], "instructions", "{c}");
        let pairs = c["pair_data"].as_array().unwrap();
        let ratios: Vec<f64> = pairs
            .iter()
            .map(|p| {
                (p["treatment_per_op"].as_f64().unwrap() / p["baseline_per_op"].as_f64().unwrap())
                    .ln()
            })
            .collect();
        let spread = ratios.iter().cloned().fold(f64::MIN, f64::max)
            - ratios.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread < 0.005, "pairs' log ratios spread {spread}: {c}");
        let verdict = c["overhead_pct"]["verdict"].as_str().unwrap();
        let estimate = c["overhead_pct"]["estimate"].as_f64().unwrap();
        match c["mechanism"].as_str().unwrap() {
            // An entry filter that allows everything: about +44% of
            // getppid's instructions on Debian's 6.1 (+10% of its time on
            // a host: the entry path's mitigations cost time, not
            // instructions).
            "seccomp" => {
                assert_eq!(verdict, "slower", "{c}");
                assert!((25.0..70.0).contains(&estimate), "{c}");
            }
            _ => assert_eq!(verdict, "negligible", "{c}"),
        }
        // An effect settles in at most 4 pairs; a null is shown
        // negligible in 4, at most 5 (methodology 8.3's table: the
        // equivalence test needs its interval inside the 0.5% band).
        let most = if verdict == "negligible" { 5 } else { 4 };
        assert!(
            c["pairs"].as_u64().unwrap() <= most,
            "settled in at most {most} pairs: {c}"
        );
    }
    let shown = secperf(&db)
        .args(["results", "show", "latest"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("insns"), "{text}");
    assert!(flat.contains("instructions per operation"), "{text}");
    assert!(flat.contains("not time"), "{text}");
    assert!(!flat.contains(" ns │"), "{text}");
}

/// A directory with a `vng` whose QEMU fails the first `failures` boots
/// with the assertion CI met (2026-12-03), then runs the guest's command
/// here on the host, and a `qemu-system-x86_64` and `busybox` for
/// secperf to find. It boots nothing: what is tested is what secperf does
/// when the emulator fails.
fn failing_emulator(dir: &std::path::Path, failures: u32) -> std::ffi::OsString {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let count = dir.join("boots");
    let vng = format!(
        "#!/bin/sh\n\
         n=$(cat '{count}' 2>/dev/null || echo 0)\n\
         echo $((n + 1)) > '{count}'\n\
         if [ \"$n\" -lt {failures} ]; then\n\
         echo 'Poking KASLR using RDRAND RDTSC...'\n\
         echo \"qemu-system-x86_64: ../../hw/pci/msix.c:218: msix_table_mmio_write: Assertion \\`addr + size <= dev->msix_entries_nr * PCI_MSIX_ENTRY_SIZE' failed.\"\n\
         exit 255\n\
         fi\n\
         while [ $# -gt 0 ]; do\n\
         if [ \"$1\" = --exec ]; then exec sh -c \"$2\"; fi\n\
         shift\n\
         done\n\
         exit 1\n",
        count = count.display()
    );
    for (name, text) in [
        ("vng", vng.as_str()),
        ("qemu-system-x86_64", "#!/bin/sh\nexit 1\n"),
        ("busybox", "#!/bin/sh\nexit 1\n"),
    ] {
        let p = bin.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut path = std::ffi::OsString::from(bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

#[test]
fn a_boot_is_made_again_when_qemu_itself_fails_and_given_up_after_three_tries() {
    let dir = tempfile::tempdir().unwrap();
    // Not booted: the vng here runs the command on the host.
    let image = dir.path().join("vmlinuz");
    std::fs::write(&image, secperf::vm::spec::header_only_image()).unwrap();
    let run = |failures: u32, sub: &str| {
        let d = dir.path().join(sub);
        let path = failing_emulator(&d, failures);
        let out = secperf(&d.join("t.db"))
            .env("PATH", path)
            .args(["run", "-w", "getppid", "-t", "1", "--quick"])
            .args(["--vm-accel", "emulated"])
            .arg("--vm")
            .arg(&image)
            .output()
            .unwrap();
        let boots: u32 = std::fs::read_to_string(d.join("boots"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        (out, boots)
    };

    // QEMU fails once: a warning, a second boot, a run.
    let (out, boots) = run(1, "once");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(boots, 2, "{err}");
    assert_eq!(
        err.matches("secperf: warning: QEMU itself failed during a boot (qemu-system-x86_64: ../../hw/pci/msix.c:218")
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains("booting again (try 2 of 3)"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("getppid"));

    // QEMU fails every time: three boots, then exit 2 saying so, with the
    // console's tail.
    let (out, boots) = run(5, "always");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(boots, 3, "{err}");
    assert!(
        err.contains("QEMU itself failed in each of 3 tries of this boot"),
        "{err}"
    );
    assert!(err.contains("not of the guest's kernel"), "{err}");
    assert!(err.contains("  | Poking KASLR"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
