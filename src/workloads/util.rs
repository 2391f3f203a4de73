//! Small helpers the workloads share for their preparation (never for the
//! timed operation itself): owned descriptors and nested test paths.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::sys::{SysError, check_int, cstring};

/// Opens a directory as an owned descriptor, for `*at()` calls.
pub fn open_dir(path: &Path) -> Result<OwnedFd> {
    let c = cstring(path);
    // SAFETY: c is a valid NUL-terminated path; the returned fd is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    let fd =
        check_int("open", fd).with_context(|| format!("opening directory {}", path.display()))?;
    // SAFETY: fd was just returned by open and nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens (creating if needed) a file with `flags`, as an owned descriptor.
pub fn open_file(path: &Path, flags: libc::c_int) -> Result<OwnedFd> {
    let c = cstring(path);
    // SAFETY: c is a valid NUL-terminated path; mode is passed for O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644 as libc::c_uint) };
    let fd = check_int("open", fd).with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: fd was just returned by open and nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Creates `base/d1/d2/.../file` so that the relative path has `depth`
/// components (depth 1 = just "file"), and returns that relative path.
pub fn make_nested_file(base: &Path, depth: u64) -> Result<CString> {
    let depth = depth.max(1);
    let mut rel = PathBuf::new();
    for i in 1..depth {
        rel.push(format!("d{i}"));
    }
    std::fs::create_dir_all(base.join(&rel))
        .with_context(|| format!("creating {}", base.join(&rel).display()))?;
    rel.push("file");
    let full = base.join(&rel);
    std::fs::write(&full, b"secperf\n").with_context(|| format!("creating {}", full.display()))?;
    Ok(cstring(&rel))
}

/// Closes a raw descriptor, checking the result (close can fail: EIO).
#[inline(always)]
pub fn close(fd: libc::c_int) -> Result<(), SysError> {
    // SAFETY: the caller owns fd and does not use it afterwards.
    check_int("close", unsafe { libc::close(fd) }).map(|_| ())
}

/// The per-task directory `scratch/task<N>`, created.
pub fn task_dir(scratch: &Path, task: usize) -> Result<PathBuf> {
    let dir = scratch.join(format!("task{task}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_file_has_depth_components() {
        let t = tempfile::tempdir().unwrap();
        let rel = make_nested_file(t.path(), 4).unwrap();
        assert_eq!(rel.to_str().unwrap(), "d1/d2/d3/file");
        assert!(t.path().join("d1/d2/d3/file").is_file());
        assert_eq!(
            make_nested_file(t.path(), 1).unwrap().to_str().unwrap(),
            "file"
        );
    }
}
