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

/// A temporary root holding `files` (absolute-looking path, contents), for
/// probes of a few small files.
pub fn write_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let path = root.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
        std::fs::write(&path, text).expect("write fixture file");
    }
    root
}
