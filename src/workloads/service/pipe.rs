//! The pipe between a task and its launcher: both ends close-on-exec,
//! whole messages written and read, retried on EINTR.

use anyhow::Result;

use crate::sys::SysError;

/// A pipe with both ends close-on-exec: (read, write).
pub(super) fn pipe() -> Result<(libc::c_int, libc::c_int)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(SysError::last("pipe2").into());
    }
    Ok((fds[0], fds[1]))
}

/// `fd` as a file for std's `write_all` and `read_exact` (which retry on
/// EINTR), without closing it when done.
fn borrowed(fd: libc::c_int) -> std::mem::ManuallyDrop<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: fd is an open pipe end the caller owns; ManuallyDrop keeps
    // the File from closing it.
    std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// Writes all of `buf` to `fd`; the errno otherwise.
pub(super) fn write_all(fd: libc::c_int, buf: &[u8]) -> Result<(), i32> {
    use std::io::Write;
    borrowed(fd)
        .write_all(buf)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

/// Fills `buf` from `fd`; EPIPE at end of file, the errno otherwise.
pub(super) fn read_exact(fd: libc::c_int, buf: &mut [u8]) -> Result<(), i32> {
    use std::io::Read;
    borrowed(fd)
        .read_exact(buf)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EPIPE))
}
