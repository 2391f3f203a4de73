//! Test helper: paths of the fixture trees under tests/fixtures/probe.
//!
//! Each tree is a miniature root file system (`proc/`, `sys/`, `etc/`) for
//! one situation: SELinux enforcing, AppArmor with mixed profiles,
//! securityfs not mounted, and so on; its README says which.

use std::path::PathBuf;

/// The root of the fixture tree `name`.
pub fn fixture(name: &str) -> PathBuf {
    let root = fixture_file(name);
    assert!(root.is_dir(), "fixture tree {} missing", root.display());
    root
}

/// A path under tests/fixtures/probe.
pub fn fixture_file(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/probe")
        .join(rel)
}
