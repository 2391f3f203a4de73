//! The skip rule of `tests/common/skips.rs`, which every test follows:
//! under `CI=true` a missing tool fails the test, and so does a missing
//! kernel feature unless `KERNEL_FEATURE_SKIPS` lists it; elsewhere both
//! print `skipped: <test>: <reason>` and the test returns.

mod common;

use common::skips::{KERNEL_FEATURE_SKIPS, Outcome, TOOLS, kernel_feature, missing_tool};

#[test]
fn a_missing_tool_fails_under_ci_and_is_skipped_elsewhere() {
    let Outcome::Fail(message) = missing_tool(true, "t", "perf", "perf is not installed") else {
        panic!("a missing tool under CI must fail");
    };
    assert!(
        message.starts_with("t: perf is not installed; "),
        "{message}"
    );
    assert!(
        message.contains(".ci/run installs Debian's linux-perf"),
        "{message}"
    );
    assert_eq!(
        missing_tool(false, "t", "perf", "perf is not installed"),
        Outcome::Skip("skipped: t: perf is not installed".into())
    );
}

#[test]
fn a_tool_missing_from_the_table_is_a_mistake_everywhere() {
    for ci in [true, false] {
        let outcome = missing_tool(ci, "t", "pref", "typo");
        assert!(
            matches!(&outcome, Outcome::Fail(m) if m.contains("not in TOOLS")),
            "{outcome:?}"
        );
    }
}

#[test]
fn under_ci_only_listed_kernel_features_may_be_skipped() {
    let Outcome::Fail(message) = kernel_feature(true, "t", "root", "needs root") else {
        panic!("CI runs as root: 'root' is not a skip there");
    };
    assert!(message.starts_with("t: needs root; "), "{message}");
    assert!(message.contains("KERNEL_FEATURE_SKIPS"), "{message}");
    let Outcome::Skip(line) = kernel_feature(true, "t", "selinux", "SELinux is not active") else {
        panic!("the CI VM has no SELinux: a listed skip");
    };
    assert!(line.starts_with("skipped: t: SELinux is not active (allowed under CI: "));
    assert_eq!(
        kernel_feature(false, "t", "root", "needs root"),
        Outcome::Skip("skipped: t: needs root".into())
    );
}

#[test]
fn every_table_entry_says_why() {
    for table in [TOOLS, KERNEL_FEATURE_SKIPS] {
        for (i, (name, why)) in table.iter().enumerate() {
            assert!(!name.is_empty() && !why.is_empty(), "{name}: {why}");
            assert!(
                table[..i].iter().all(|(n, _)| n != name),
                "{name} listed twice"
            );
        }
    }
}

/// The real thing, in this environment: a skip for a missing tool returns
/// here, and fails the test under `CI=true`.
#[test]
fn a_skip_for_a_missing_tool_fails_only_under_ci() {
    let test = "a_skip_for_a_missing_tool_fails_only_under_ci";
    let skipped = std::panic::catch_unwind(|| {
        common::skip_missing_tool(test, "perf", "a demonstration: perf taken as missing");
    });
    assert_eq!(
        skipped.is_err(),
        common::under_ci(),
        "CI={:?}",
        std::env::var("CI")
    );
}
