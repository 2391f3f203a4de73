//! Kernels built from source for `overhead --kernel NAME=SOURCE` end to
//! end: bad input refused before anything is copied or built (exit 2, no
//! cache entry, no tree, no QEMU), and, with Debian's linux-source-6.1
//! unpacked (`.ci/run` does it and sets SECPERF_TEST_KERNEL_SOURCE), a
//! real build of two arms that differ by audit-2017's patch plus the
//! layout control, booted paired; run again from the cache; a build that
//! fails; and a build stopped by Ctrl-C and by SIGKILL, which leave no
//! entry and no make behind.
//!
//! Builds share one cache (`SECPERF_TEST_KERNEL_CACHE`, default
//! /tmp/secperf-test-kernels), so that a machine builds the 6.1 tree from
//! clean once (about 7 minutes on 2 CPUs) and later runs rebuild only
//! what their patches touch.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use common::{json_of, secperf, skip_missing_tool, under_ci, wait_for};

static ONE_BUILD: Mutex<()> = Mutex::new(());

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The kernel tools a build needs, or a skip (a failure under CI).
fn build_tools(test: &str) -> bool {
    for tool in [
        "make", "gcc", "flex", "bison", "bc", "pahole", "git", "busybox", "vng",
    ] {
        if secperf::sys::which(tool).is_none() {
            skip_missing_tool(
                test,
                "kernel build tools",
                &format!("{tool} is not on PATH"),
            );
            return false;
        }
    }
    true
}

/// A directory that looks like a kernel tree to every check before a
/// build (top files, a Kconfig defining two options, kernel/auditsc.c).
fn fake_tree(dir: &Path) {
    for (f, text) in [
        ("Makefile", "all:\n"),
        (
            "Kconfig",
            "config AUDIT\n\tbool \"audit\"\nconfig SECURITY\n\tbool \"s\"\n",
        ),
        ("arch/x86/Kconfig", "config X86\n\tdef_bool y\n"),
        ("kernel/Makefile", "obj-y += auditsc.o\n"),
        ("kernel/auditsc.c", "int a;\nint b;\nint c;\n"),
    ] {
        let p = dir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// What the cache holds: entries (complete or not) and trees.
fn cache_contents(cache: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for d in ["secperf/kernels/entries", "secperf/kernels/trees"] {
        for e in std::fs::read_dir(cache.join(d))
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push(format!("{d}/{}", e.file_name().to_string_lossy()));
        }
    }
    out
}

#[test]
fn bad_source_arms_exit_2_and_leave_nothing_behind() {
    let test = "bad_source_arms_exit_2_and_leave_nothing_behind";
    if !build_tools(test) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let cache = t.path().join("cache");
    let src = t.path().join("linux");
    fake_tree(&src);
    let s = src.display().to_string();
    let bad_patch = t.path().join("bad.patch");
    std::fs::write(
        &bad_patch,
        "--- a/kernel/auditsc.c\n+++ b/kernel/auditsc.c\n@@ -2,2 +2,2 @@\n-int nope;\n+int b2;\n int c;\n",
    )
    .unwrap();
    let fragment = t.path().join("frag.config");
    std::fs::write(&fragment, "CONFIG_AUDIT=y\nCONFIG_AUIDT_TYPO=y\n").unwrap();
    let empty = t.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    // A git checkout of the same tree, for rev=.
    let repo = t.path().join("repo");
    fake_tree(&repo);
    let git = |args: &[&str]| {
        let ok = StdCommand::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    let r = repo.display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                format!("base={}", empty.display()),
                format!("p={}", empty.display()),
            ],
            "not a kernel source tree",
        ),
        (
            vec![format!("base={r},rev=v9.9-nope"), format!("p={r}")],
            "no such commit",
        ),
        (
            vec![
                format!("base={s}"),
                format!("p={s},patch={}", bad_patch.display()),
            ],
            "hunk #1 of kernel/auditsc.c (at line 2)",
        ),
        (
            vec![
                format!("base={s}"),
                format!("p={s},config={}", fragment.display()),
            ],
            "CONFIG_AUIDT_TYPO (line 2)",
        ),
        (
            vec![format!("base={s},rev=HEAD"), format!("p={s}")],
            "not a git checkout",
        ),
    ];
    for (arms, says) in cases {
        let mut c = secperf(&t.path().join("t.db"));
        c.env("XDG_CACHE_HOME", &cache)
            .args(["overhead", "-w", "getppid", "--max-pairs", "3"]);
        for a in &arms {
            c.args(["--kernel", a]);
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arms:?}: {err}");
        assert!(err.contains(says), "{arms:?}: wanted '{says}' in: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            cache_contents(&cache).is_empty(),
            "{arms:?} left {:?}",
            cache_contents(&cache)
        );
    }
    // A missing build tool: named with the apt-get line, before anything.
    let out = secperf(&t.path().join("t.db"))
        .env("XDG_CACHE_HOME", &cache)
        .env("PATH", t.path().join("no-bin"))
        .args([
            "overhead",
            "-w",
            "getppid",
            "--kernel",
            &format!("base={s}"),
        ])
        .args(["--kernel", &format!("p={s},patch={}", bad_patch.display())])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("apt-get install") && err.contains("nothing was built"),
        "{err}"
    );
    assert!(cache_contents(&cache).is_empty());
}

#[test]
fn a_dry_run_estimates_an_arm_sharing_a_tree_as_a_rebuild() {
    // Two arms of one source share secperf's tree: the second rebuilds
    // the files its patch changes, not the whole kernel (it took 51 s
    // where the plan said about 25 min).
    let test = "a_dry_run_estimates_an_arm_sharing_a_tree_as_a_rebuild";
    if !build_tools(test) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("linux");
    fake_tree(&src);
    let patch = t.path().join("one.patch");
    std::fs::write(
        &patch,
        "--- a/kernel/auditsc.c\n+++ b/kernel/auditsc.c\n@@ -2,2 +2,2 @@\n-int b;\n+int b2;\n int c;\n",
    )
    .unwrap();
    let s = src.display().to_string();
    let out = secperf(&t.path().join("t.db"))
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .args(["--json", "overhead", "-w", "getppid", "--dry-run"])
        .args(["--kernel", &format!("base={s}")])
        .args(["--kernel", &format!("p={s},patch={}", patch.display())])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let builds = plan["builds"].as_array().unwrap();
    let (first, second) = (&builds[0]["build"], &builds[1]["build"]);
    let note = second["note"].as_str().unwrap();
    assert!(
        note.contains("shares secperf's tree with arm base")
            && note.contains("rebuilds only what differs, 1 file (kernel/auditsc.c), then links"),
        "{note}"
    );
    let (a, b) = (
        first["estimate_s"].as_f64().unwrap(),
        second["estimate_s"].as_f64().unwrap(),
    );
    assert!(
        b < a / 5.0,
        "a rebuild of one file {b} s against a first build {a} s"
    );
    assert!(
        (plan["build_estimate_s"].as_f64().unwrap() - (a + b)).abs() < 1e-6,
        "{plan}"
    );
}

#[test]
fn kernels_list_and_prune_say_what_is_cached() {
    let t = tempfile::tempdir().unwrap();
    let out = secperf(&t.path().join("t.db"))
        .env("XDG_CACHE_HOME", t.path())
        .args(["--json", "kernels", "list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = json_of(&out.stdout);
    assert_eq!(v["builds"].as_array().map(Vec::len), Some(0));
    let out = secperf(&t.path().join("t.db"))
        .env("XDG_CACHE_HOME", t.path())
        .args(["kernels", "prune", "abcd"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("kernels list"));
    let out = secperf(&t.path().join("t.db"))
        .env("XDG_CACHE_HOME", t.path())
        .args(["kernels", "prune"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    // Issue 44: `list` said "2 builds, 17.7 MiB" while trees/ held 3.6
    // GiB, and pruning every key left them unsaid. A source tree (1 MiB
    // of objects) is listed with its size, and --trees removes it.
    let tree = t.path().join("secperf/kernels/trees/linux-0123abcd");
    std::fs::create_dir_all(tree.join("build/kernel")).unwrap();
    std::fs::write(tree.join("build/kernel/fork.o"), vec![7u8; 1 << 20]).unwrap();
    let kernels = |args: &[&str]| {
        let out = secperf(&t.path().join("t.db"))
            .env("XDG_CACHE_HOME", t.path())
            .arg("kernels")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let listed = kernels(&["list"]);
    assert!(listed.contains("linux-0123abcd"), "{listed}");
    assert!(listed.contains("1 source tree (1.0 MiB)"), "{listed}");
    assert!(listed.contains("kernels prune --trees"), "{listed}");
    let v = json_of(
        &secperf(&t.path().join("t.db"))
            .env("XDG_CACHE_HOME", t.path())
            .args(["--json", "kernels", "list"])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(v["trees_bytes"].as_u64().unwrap() >= 1 << 20, "{v}");
    let pruned = kernels(&["prune", "--trees"]);
    assert!(
        pruned.contains("and 1 source tree. Left: 0 builds"),
        "{pruned}"
    );
    assert!(!tree.exists());
}

/// Issue 44: a `--kernel` build ran `make -j2` for 20 minutes while
/// another secperf held the measurement lock and measured. A build now
/// takes the lock as a measurement does: with `--no-wait` it fails at once
/// (exit 2) naming the holder, having built nothing.
#[test]
fn a_build_waits_for_another_measurement_or_says_so() {
    let test = "a_build_waits_for_another_measurement_or_says_so";
    if !build_tools(test) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let cache = t.path().join("cache");
    let state = t.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let src = t.path().join("linux");
    fake_tree(&src);
    let patch = t.path().join("good.patch");
    std::fs::write(
        &patch,
        "--- a/kernel/auditsc.c\n+++ b/kernel/auditsc.c\n@@ -1,3 +1,3 @@\n int a;\n-int b;\n+int b2;\n int c;\n",
    )
    .unwrap();
    // Another measurement holds the lock (flock(1) on its file).
    let mut holder = StdCommand::new("flock")
        .arg(state.join("measure.lock"))
        .args(["sleep", "60"])
        .spawn()
        .expect("flock (util-linux)");
    let lock = state.join("measure.lock");
    let held = std::time::Instant::now();
    while !lock.exists() && held.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let out = secperf(&t.path().join("t.db"))
        .env("XDG_CACHE_HOME", &cache)
        .env("SECPERF_STATE_DIR", &state)
        .args(["overhead", "-w", "getppid", "--no-wait"])
        .args(["--kernel", &format!("base={}", src.display())])
        .args([
            "--kernel",
            &format!("p={},patch={}", src.display(), patch.display()),
        ])
        .output()
        .unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("another measurement is running"), "{err}");
    assert!(
        cache_contents(&cache).is_empty(),
        "built while another measured: {:?}",
        cache_contents(&cache)
    );
}

/// The unpacked linux-source-6.1 tree, or a skip (a failure under CI).
fn kernel_source(test: &str) -> Option<PathBuf> {
    let Some(p) = std::env::var_os("SECPERF_TEST_KERNEL_SOURCE").map(PathBuf::from) else {
        skip_missing_tool(
            test,
            "kernel source",
            "SECPERF_TEST_KERNEL_SOURCE is not set (an unpacked linux-source-6.1 tree)",
        );
        return None;
    };
    if !p.join("Kconfig").is_file() {
        skip_missing_tool(
            test,
            "kernel source",
            &format!("{} is not a kernel tree", p.display()),
        );
        return None;
    }
    Some(p)
}

fn kernel_cache() -> PathBuf {
    std::env::var_os("SECPERF_TEST_KERNEL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/secperf-test-kernels"))
}

/// Whether a make building in the test cache's trees is running.
fn make_running(cache: &Path) -> bool {
    let needle = cache.join("secperf/kernels/trees").display().to_string();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .is_ok_and(|c| c.starts_with("make") && c.contains(&needle))
        })
}

fn entries(cache: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(cache.join("secperf/kernels/entries"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A patch adding a line to a file of the 6.1 tree, for builds the test
/// stops or breaks.
fn one_line_patch(dir: &Path, name: &str, line: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!(
            "--- a/kernel/sys_ni.c\n+++ b/kernel/sys_ni.c\n@@ -1,3 +1,4 @@\n+{line}\n \
             // SPDX-License-Identifier: GPL-2.0\n \n #include <linux/linkage.h>\n"
        ),
    )
    .unwrap();
    p
}

#[test]
fn a_patch_becomes_a_verdict_with_a_layout_control_and_is_cached() {
    let test = "a_patch_becomes_a_verdict_with_a_layout_control_and_is_cached";
    let Some(src) = kernel_source(test) else {
        return;
    };
    if !build_tools(test) || common::guest_kernel(test).is_none() {
        return;
    }
    let _one = ONE_BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let cache = kernel_cache();
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("t.db");
    let s = src.display().to_string();
    let patch = repo_file("docs/experiments/patches/002-audit-fine-clock-6.1.patch");
    let arms = [
        format!("base={s},append=audit=1"),
        format!("fine={s},patch={},append=audit=1", patch.display()),
    ];
    let run = |layout: bool| {
        let mut c = secperf(&db);
        c.env("XDG_CACHE_HOME", &cache)
            .timeout(Duration::from_secs(1800))
            .args(["--json", "overhead", "-w", "getppid", "--max-pairs", "3"])
            .args([
                "--sample-ms",
                "20",
                "--samples-per-half",
                "2",
                "--warmup",
                "0",
            ]);
        for a in &arms {
            c.args(["--kernel", a]);
        }
        if layout {
            c.arg("--layout-control");
        }
        c.output().unwrap()
    };
    let out = run(true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = json_of(&out.stdout);
    let cs = doc["comparisons"].as_array().unwrap();
    let variants: Vec<&str> = cs.iter().map(|c| c["variant"].as_str().unwrap()).collect();
    assert_eq!(variants, ["fine", "layout"], "{doc}");
    let arms_doc = doc["boot_arms"].as_array().unwrap();
    assert_eq!(arms_doc.len(), 3);
    let builds: Vec<&serde_json::Value> = arms_doc.iter().map(|a| &a["build"]).collect();
    assert!(
        builds
            .iter()
            .all(|b| b["key"].is_string() && b["config"].is_string())
    );
    assert_eq!(
        builds[1]["patches"][0]["content"]
            .as_str()
            .map(|c| c.contains("ktime_get_real_ts64")),
        Some(true)
    );
    assert_eq!(builds[2]["layout"]["file"], "init/main.c");
    // The guests ran the kernels built: their release is 6.1's.
    let boots = arms_doc[1]["boots"].as_array().unwrap();
    assert!(
        boots[0]["guest"]["release"]
            .as_str()
            .is_some_and(|r| r.starts_with("6.1")),
        "{doc}"
    );

    // Again: every arm from the cache, said so.
    let out = run(false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("every arm from the cache (base, fine)"),
        "{err}"
    );
    let before = entries(&cache);

    // A build that fails: exit 2 with the compiler's error, no entry.
    let broken = one_line_patch(t.path(), "broken.patch", "#error secperf-test-broken-build");
    let out = secperf(&db)
        .env("XDG_CACHE_HOME", &cache)
        .timeout(Duration::from_secs(900))
        .args(["overhead", "-w", "getppid", "--max-pairs", "3"])
        .args(["--kernel", &arms[0]])
        .args([
            "--kernel",
            &format!("broken={s},patch={}", broken.display()),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("secperf-test-broken-build") && err.contains("failed"),
        "{err}"
    );
    assert_eq!(entries(&cache), before);

    // Stopped mid-build by Ctrl-C (SIGINT), then by SIGKILL: no entry, no
    // make left running.
    for (i, sig) in [libc::SIGINT, libc::SIGKILL].into_iter().enumerate() {
        let p = one_line_patch(
            t.path(),
            &format!("stop{i}.patch"),
            &format!("/* secperf stop test {i} */"),
        );
        let bin = assert_cmd::cargo::cargo_bin("secperf");
        let mut child = StdCommand::new(bin)
            .env("XDG_CACHE_HOME", &cache)
            .arg("--db")
            .arg(&db)
            .args(["overhead", "-w", "getppid", "--max-pairs", "3"])
            .args(["--kernel", &arms[0]])
            .args(["--kernel", &format!("stop{i}={s},patch={}", p.display())])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(
            &format!("{test}: make to start (signal {sig})"),
            Duration::from_secs(120),
            || make_running(&cache),
        );
        std::thread::sleep(Duration::from_secs(2));
        // SAFETY: kill(2) on the child this test started.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        if sig == libc::SIGINT {
            assert_eq!(status.code(), Some(130), "{status:?}");
        }
        wait_for(
            &format!("{test}: make to be gone (signal {sig})"),
            Duration::from_secs(60),
            || !make_running(&cache),
        );
        assert_eq!(entries(&cache), before, "signal {sig} left an entry");
    }
    if under_ci() {
        eprintln!(
            "kbuild: cache {} holds {:?}",
            cache.display(),
            entries(&cache)
        );
    }
}
