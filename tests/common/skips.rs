//! Skipping a test, one way for every test: the integration tests reach
//! this file through `tests/common`, the unit tests in `src/` through
//! `crate::testing` (`src/lib.rs` includes this same file).
//!
//! A skip prints `skipped: <test>: <reason>` on the process's stderr (not
//! through `eprintln!`, which the test harness captures and shows only for
//! a failure), and the test returns. Two kinds:
//!
//! - [`skip_missing_tool`]: an optional tool or file the test needs (perf,
//!   chromium, the auditd example rules, Docker's profile). `.ci/run`
//!   installs every one of [`TOOLS`], so under `CI=true` a missing tool
//!   fails the test, saying how CI installs it.
//! - [`skip_kernel_feature`]: the kernel or the machine lacks something
//!   (an active LSM, root, a usable audit subsystem). Under `CI=true` only
//!   the features in [`KERNEL_FEATURE_SKIPS`], which the CI VM is known to
//!   lack, may be skipped; any other fails the test. Root, audit, Landlock,
//!   seccomp and cpu-clock sampling are not listed: CI runs as root on a
//!   kernel that has them.

use std::io::Write;

/// The optional tools and files tests compare against, each with how CI
/// provides it. A name not listed here is a mistake in the test.
pub const TOOLS: &[(&str, &str)] = &[
    ("perf", ".ci/run installs Debian's linux-perf"),
    ("chromium", ".ci/run installs Debian's chromium"),
    (
        "auditd example rules",
        ".ci/run unpacks Debian's auditd package (never installs it) and sets \
         SECPERF_AUDITD_EXAMPLES",
    ),
    (
        "Docker seccomp profile",
        ".ci/run unpacks Docker's default.json from Debian's \
         golang-github-docker-docker-dev and sets SECPERF_DOCKER_PROFILE",
    ),
    (
        "examples/access_loop",
        ".ci/run runs `cargo test`, which builds the examples (`cargo test --test NAME` \
         does not)",
    ),
    ("secilc", ".ci/run installs Debian's secilc"),
    (
        "git",
        ".ci/run installs Debian's git with the kernel build tools",
    ),
    (
        "kernel build tools",
        ".ci/run installs make, gcc, flex, bison, bc, dwarves (pahole), cpio, git, busybox-static, \
         libelf-dev and libssl-dev from Debian",
    ),
    (
        "kernel source",
        ".ci/run installs Debian's linux-source-6.1, unpacks it into \
         /tmp/secperf-linux-source-6.1 and sets SECPERF_TEST_KERNEL_SOURCE",
    ),
    (
        "sshd",
        ".ci/run installs Debian's openssh-server (its service is not started): the lab's \
         namespace hosts each run their own sshd",
    ),
    (
        "ssh",
        ".ci/run installs Debian's openssh-client with openssh-server",
    ),
    (
        "postgresql",
        ".ci/run installs Debian's postgresql and starts a cluster with docs/scripts/lab.sh \
         pg-up (SECPERF_TEST_PG, SECPERF_TEST_PG_DIR)",
    ),
    (
        "redis-server",
        ".ci/run installs Debian's redis-server and redis-tools (redis-benchmark)",
    ),
    (
        "nginx",
        ".ci/run installs Debian's nginx-light and apache2-utils (ab)",
    ),
    (
        "virtme-ng",
        ".ci/run installs virtme-ng from PyPI (pip) and Debian's qemu-system-x86",
    ),
    (
        "guest kernel",
        ".ci/run installs Debian's linux-image-amd64 (/boot/vmlinuz-*), booted under emulation",
    ),
    (
        "apparmor_parser",
        ".ci/run installs Debian's apparmor (its parser only: no service runs)",
    ),
    (
        "bash",
        "the CI VM is Debian, where .ci/run itself runs in bash",
    ),
    (
        "/bin/false",
        "the CI VM is Debian, whose coreutils install /bin/false",
    ),
];

/// The kernel features the CI VM lacks (Linux 6.18; active LSMs lockdown,
/// capability, landlock, bpf; no hardware PMU), each with why: the only
/// kernel-feature skips allowed under `CI=true`.
pub const KERNEL_FEATURE_SKIPS: &[(&str, &str)] = &[
    (
        "selinux",
        "SELinux is not an active LSM on the CI VM (lsm=lockdown,capability,landlock,bpf)",
    ),
    (
        "apparmor",
        "AppArmor is not an active LSM on the CI VM (lsm=lockdown,capability,landlock,bpf)",
    ),
    (
        "bpf-lsm-load",
        "the CI VM's kernel refuses to load BPF LSM programs (BPF_PROG_LOAD fails with EPERM)",
    ),
    (
        "hardware-counters",
        "the CI VM has no hardware PMU: perf works with the cpu-clock software event only",
    ),
];

/// Whether the tests run under CI: `CI=true` (or `1`), as `.ci/run`
/// exports it.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// What a skip comes to: a line to print, or a failure with its message.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Skip(String),
    Fail(String),
}

/// The skip of `test` for the missing `tool`, under CI (`ci`) or not.
pub fn missing_tool(ci: bool, test: &str, tool: &str, reason: &str) -> Outcome {
    let Some(how) = lookup(TOOLS, tool) else {
        return Outcome::Fail(format!(
            "{test}: skips on the tool '{tool}', which is not in TOOLS (tests/common/skips.rs): \
             add it there with how .ci/run installs it"
        ));
    };
    if ci {
        Outcome::Fail(format!(
            "{test}: {reason}; under CI a missing tool fails the test: {how}"
        ))
    } else {
        Outcome::Skip(format!("skipped: {test}: {reason}"))
    }
}

/// The skip of `test` for the kernel `feature` it lacks, under CI (`ci`)
/// or not.
pub fn kernel_feature(ci: bool, test: &str, feature: &str, reason: &str) -> Outcome {
    match (ci, lookup(KERNEL_FEATURE_SKIPS, feature)) {
        (false, _) => Outcome::Skip(format!("skipped: {test}: {reason}")),
        (true, Some(why)) => Outcome::Skip(format!(
            "skipped: {test}: {reason} (allowed under CI: {why})"
        )),
        (true, None) => Outcome::Fail(format!(
            "{test}: {reason}; under CI this skip fails the test: CI must have '{feature}' \
             (only the features in KERNEL_FEATURE_SKIPS, tests/common/skips.rs, may be missing \
             there)"
        )),
    }
}

/// Skips `test` because `tool` is missing: prints why, or panics under CI.
/// The caller returns right after.
#[track_caller]
pub fn skip_missing_tool(test: &str, tool: &str, reason: &str) {
    act(missing_tool(under_ci(), test, tool, reason));
}

/// Skips `test` because this kernel or machine lacks `feature`: prints
/// why, or panics under CI unless the feature is in
/// [`KERNEL_FEATURE_SKIPS`]. The caller returns right after.
#[track_caller]
pub fn skip_kernel_feature(test: &str, feature: &str, reason: &str) {
    act(kernel_feature(under_ci(), test, feature, reason));
}

/// Whether this process runs as root; if not, `test` is skipped (a kernel
/// feature skip on "root": a failure under CI, which runs as root).
#[track_caller]
pub fn root_or_skip(test: &str, why: &str) -> bool {
    // SAFETY: geteuid cannot fail and has no side effects.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    skip_kernel_feature(test, "root", &format!("needs root ({why})"));
    false
}

#[track_caller]
fn act(outcome: Outcome) {
    match outcome {
        Outcome::Skip(line) => {
            // Straight to stderr: the harness's capture would hide it.
            let _ = writeln!(std::io::stderr(), "{line}");
        }
        Outcome::Fail(message) => panic!("{message}"),
    }
}

fn lookup(table: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    table.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}
