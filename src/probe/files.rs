//! Reading the small text files of /proc and /sys, under a root directory.
//!
//! Every probe takes a root (`/` on the real machine, a fixture tree in
//! tests) and reads paths relative to it through these helpers, which turn
//! an I/O error into a reason naming the file: "reading /proc/cmdline: No
//! such file or directory (os error 2)". Permission errors add the hint that
//! the item needs root.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// `root` joined with a path written as absolute ("/proc/cmdline").
pub fn under(root: &Path, abs: &str) -> PathBuf {
    root.join(abs.trim_start_matches('/'))
}

/// The reason for a failed read of `path`.
pub fn read_error(path: &Path, err: &std::io::Error) -> String {
    match err.kind() {
        ErrorKind::PermissionDenied => {
            format!(
                "reading {}: permission denied (run as root)",
                path.display()
            )
        }
        _ => format!("reading {}: {err}", path.display()),
    }
}

/// The whole file as text (invalid UTF-8 replaced), or a reason.
pub fn read(root: &Path, abs: &str) -> Result<String, String> {
    let path = under(root, abs);
    std::fs::read(&path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| read_error(&path, &e))
}

/// The file with surrounding whitespace (the trailing newline) removed.
pub fn read_trimmed(root: &Path, abs: &str) -> Result<String, String> {
    read(root, abs).map(|s| s.trim().to_string())
}

/// The file parsed as one unsigned number.
pub fn read_u32(root: &Path, abs: &str) -> Result<u32, String> {
    let s = read_trimmed(root, abs)?;
    s.parse().map_err(|_| {
        format!(
            "{}: expected a number, found '{s}'",
            under(root, abs).display()
        )
    })
}

/// Whether the path exists (following links); errors count as absent.
pub fn exists(root: &Path, abs: &str) -> bool {
    under(root, abs).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_missing_file() {
        let root = Path::new("/nonexistent-secperf-root");
        let err = read(root, "/proc/cmdline").unwrap_err();
        assert!(
            err.starts_with("reading /nonexistent-secperf-root/proc/cmdline: "),
            "{err}"
        );
    }

    #[test]
    fn reads_and_parses_numbers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/n"), "42\n").unwrap();
        std::fs::write(dir.path().join("a/x"), "forty\n").unwrap();
        assert_eq!(read_u32(dir.path(), "/a/n").unwrap(), 42);
        assert!(
            read_u32(dir.path(), "/a/x")
                .unwrap_err()
                .contains("expected a number")
        );
        assert_eq!(read_trimmed(dir.path(), "/a/n").unwrap(), "42");
    }
}
