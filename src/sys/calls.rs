//! System calls libc has no wrapper for (or whose wrapper is not the call
//! a workload means to time), each as the kernel defines it: the errno of
//! a failure comes back as a [`SysError`] naming the call. Those on a
//! workload's timed path are `#[inline(always)]`: a wrapper must not add
//! to what is measured.

use std::os::fd::RawFd;

use super::SysError;

/// getdents64(2): reads directory entries of `fd` into `buf`; the bytes
/// written (0 at the end of the directory).
#[inline(always)]
pub fn getdents64(fd: RawFd, buf: &mut [u8]) -> Result<usize, SysError> {
    // SAFETY: buf is valid for buf.len() bytes of writes for the call.
    let n = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len()) };
    if n < 0 {
        return Err(SysError::last("getdents64"));
    }
    Ok(n as usize)
}

/// faccessat(2) itself, without flags (the real-id path of
/// `do_faccessat`); glibc's faccessat() calls faccessat2 instead.
#[inline(always)]
pub fn faccessat(dir: RawFd, path: &std::ffi::CStr, mode: libc::c_int) -> Result<(), SysError> {
    // SAFETY: path is NUL-terminated and lives across the call; dir is
    // the caller's descriptor (the kernel checks it).
    let r = unsafe { libc::syscall(libc::SYS_faccessat, dir, path.as_ptr(), mode) };
    if r < 0 {
        return Err(SysError::last("faccessat"));
    }
    Ok(())
}

/// pidfd_open(2): a descriptor of process `pid` that polls readable when
/// it exits. The caller owns (and closes) it.
pub fn pidfd_open(pid: libc::pid_t) -> Result<libc::c_int, SysError> {
    // SAFETY: integer arguments only.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(SysError::last("pidfd_open"));
    }
    Ok(fd as libc::c_int)
}

/// `lsm_list_modules` (Linux 6.8), the same number on every architecture
/// that has the generic table.
const SYS_LSM_LIST_MODULES: libc::c_long = 461;

/// lsm_list_modules(2): the ids of the active LSMs, in `ids`; how many.
pub fn lsm_list_modules(ids: &mut [u64]) -> Result<usize, SysError> {
    let mut size = std::mem::size_of_val(ids) as u32;
    // SAFETY: `ids` is a writable buffer of `size` bytes and `size` a
    // writable u32, both living across the call; the kernel writes at most
    // `size` bytes of ids and updates `size`. Flags must be 0.
    let ret = unsafe {
        libc::syscall(
            SYS_LSM_LIST_MODULES,
            ids.as_mut_ptr(),
            &mut size as *mut u32,
            0u32,
        )
    };
    if ret < 0 {
        return Err(SysError::last("lsm_list_modules"));
    }
    Ok((ret as usize).min(ids.len()))
}

/// seccomp(SECCOMP_SET_MODE_FILTER): installs the filter `prog` on the
/// calling thread (no TSYNC). The caller has set no_new_privs or holds
/// CAP_SYS_ADMIN.
pub fn seccomp_set_mode_filter(prog: &libc::sock_fprog) -> Result<(), SysError> {
    // SAFETY: prog points at `prog.len` instructions that outlive the
    // call (the caller's program); the kernel only reads and copies them.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::c_ulong::from(libc::SECCOMP_SET_MODE_FILTER),
            0 as libc::c_ulong,
            prog as *const libc::sock_fprog,
        )
    };
    super::check("seccomp(SECCOMP_SET_MODE_FILTER)", r).map(|_| ())
}

/// bpf(2) with command `cmd` and its attribute union `attr`; the
/// call's non-negative result (a new descriptor for the commands that
/// make one).
///
/// # Safety
/// `attr` must be the `union bpf_attr` member `cmd` takes: a fully
/// initialised `repr(C)` struct without padding, of `size_of::<T>()`
/// bytes, whose pointers (to the caller's buffers) stay valid for the
/// call.
pub unsafe fn bpf<T>(cmd: u32, attr: &mut T, call: &'static str) -> Result<libc::c_long, SysError> {
    // SAFETY: as the caller promises; the kernel reads at most
    // size_of::<T>() bytes and may write output fields inside them.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd as libc::c_long,
            attr as *mut T,
            std::mem::size_of::<T>() as libc::c_long,
        )
    };
    super::check(call, ret)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn directory_entries_access_and_a_pidfd() {
        let dir = std::fs::File::open("/").unwrap();
        let mut buf = [0u8; 4096];
        assert!(getdents64(dir.as_raw_fd(), &mut buf).unwrap() > 0);
        let root = std::ffi::CString::new(".").unwrap();
        faccessat(dir.as_raw_fd(), &root, libc::R_OK).unwrap();
        let nope = std::ffi::CString::new("no-such-file-here").unwrap();
        assert_eq!(
            faccessat(dir.as_raw_fd(), &nope, libc::R_OK)
                .unwrap_err()
                .errno,
            libc::ENOENT
        );
        assert_eq!(getdents64(-1, &mut buf).unwrap_err().call, "getdents64");
        // SAFETY: getpid takes no arguments.
        let me = unsafe { libc::getpid() };
        if let Ok(fd) = pidfd_open(me) {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
        }
    }
}
