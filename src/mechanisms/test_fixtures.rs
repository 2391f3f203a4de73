//! Test helper: writable copies of the fixture trees under
//! tests/fixtures/mechanisms/, so a test can apply and restore a mechanism
//! against fake sysfs files.

use std::path::{Path, PathBuf};

/// A writable copy of tests/fixtures/mechanisms/<kind>/<name>.
pub fn fixture_copy(kind: &str, name: &str) -> tempfile::TempDir {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mechanisms")
        .join(kind)
        .join(name);
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&src, dir.path());
    dir
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}
