//! Output paths checked before anything is measured: a measurement of
//! minutes must not end in "cannot write", and a stored command replayed
//! by `rerun` must fail at once, not after measuring again. Each check is
//! a usage error naming the option, the path and how to fix it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::Result;

use crate::usage_bail;

/// Checks that `path`, given with `option`, can be written as a file: it
/// is not a directory, its directory exists, and the file (or, when it is
/// not there yet, its directory) is writable.
pub fn check_output_file(path: &Path, option: &str) -> Result<()> {
    if path.is_dir() {
        usage_bail!(
            "{option} {}: is a directory; give a file name (e.g. {})",
            path.display(),
            path.join("out.txt").display()
        );
    }
    let dir = existing_parent(path, option)?;
    if path.exists() {
        writable(path, path, option)
    } else {
        writable(&dir, path, option)
    }
}

/// Checks that `path`, given with `option`, can hold files secperf
/// writes: a writable directory, or one that can be made in a writable
/// directory.
pub fn check_output_dir(path: &Path, option: &str) -> Result<()> {
    if path.exists() && !path.is_dir() {
        usage_bail!(
            "{option} {}: is a file, and this writes a directory of files there; give a \
             directory (it is made when missing)",
            path.display()
        );
    }
    if path.is_dir() {
        return writable(path, path, option);
    }
    let dir = existing_parent(path, option)?;
    writable(&dir, path, option)
}

/// The directory `path` would be made in, which must exist.
fn existing_parent(path: &Path, option: &str) -> Result<std::path::PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(dir),
        Ok(_) => usage_bail!(
            "{option} {}: {} is not a directory; choose another path with {option}",
            path.display(),
            dir.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => usage_bail!(
            "{option} {}: directory {} does not exist; create it first (mkdir -p {}) or choose \
             another path with {option}",
            path.display(),
            dir.display(),
            dir.display()
        ),
        Err(e) => usage_bail!(
            "{option} {}: cannot reach directory {}: {e}; choose another path with {option}",
            path.display(),
            dir.display()
        ),
    }
}

/// access(2) for writing (and searching, for a directory) of `what`.
fn writable(what: &Path, path: &Path, option: &str) -> Result<()> {
    let Ok(c) = CString::new(what.as_os_str().as_bytes()) else {
        usage_bail!("{option} {}: the path holds a NUL byte", path.display());
    };
    let mode = if what.is_dir() {
        libc::W_OK | libc::X_OK
    } else {
        libc::W_OK
    };
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call;
    // access(2) only reads it.
    if unsafe { libc::access(c.as_ptr(), mode) } != 0 {
        let e = std::io::Error::last_os_error();
        usage_bail!(
            "{option} {}: cannot write {}: {e}; choose another path with {option}",
            path.display(),
            what.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;

    #[test]
    fn an_output_that_cannot_be_written_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("x.txt");
        check_output_file(&ok, "-o").unwrap();
        assert!(!ok.exists(), "nothing is made by the check");
        std::fs::write(&ok, "").unwrap();
        check_output_file(&ok, "-o").unwrap();
        for (path, says) in [
            (dir.path().join("missing/x.txt"), "does not exist"),
            (dir.path().to_path_buf(), "is a directory"),
            (ok.join("y.txt"), "is not a directory"),
        ] {
            let e = check_output_file(&path, "-o").unwrap_err();
            assert_eq!(exit_code(&e), 2, "{e}");
            assert!(e.to_string().contains(says), "{path:?}: {e}");
            assert!(e.to_string().contains("-o"), "{e}");
        }
        // A place this user may not write (root may write almost
        // anywhere: a read-only directory only refuses others).
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o500))
            .unwrap();
        // SAFETY: geteuid(2) has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            let e = check_output_file(&locked.join("x"), "-o").unwrap_err();
            assert!(e.to_string().contains("cannot write"), "{e}");
        }
        check_output_dir(&dir.path().join("new"), "-o").unwrap();
        check_output_dir(dir.path(), "-o").unwrap();
        let e = check_output_dir(&ok, "-o").unwrap_err();
        assert!(e.to_string().contains("is a file"), "{e}");
        let e = check_output_dir(&dir.path().join("a/b"), "-o").unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
    }
}
