//! The one place raw system calls go through.
//!
//! Every failure becomes a [`SysError`] naming the call and the errno, so a
//! failing operation in a workload reads "openat: ENOENT (No such file or
//! directory)" instead of a bare number. Helpers here are small and have no
//! policy; the callers decide what a failure means.

pub mod audit;
pub mod bpf;
pub mod bpf_emulate;
pub mod calls;
pub mod caps;
pub mod cpus;
pub mod landlock;
pub mod pmu;
pub mod query;
pub mod seccomp;
pub mod terminal;

use std::ffi::CStr;
use std::fmt;
use std::sync::atomic::AtomicU32;

/// A failed system call: which one, and the errno it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub struct SysError {
    pub call: &'static str,
    pub errno: i32,
}

impl SysError {
    /// The error of the last libc call, as left in `errno`.
    #[inline(never)]
    #[cold]
    pub fn last(call: &'static str) -> Self {
        SysError {
            call,
            errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        }
    }
}

impl fmt::Display for SysError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} ({})",
            self.call,
            errno_name(self.errno),
            std::io::Error::from_raw_os_error(self.errno)
        )
    }
}

/// Checks a libc return value: negative means failure with `errno` set.
#[inline(always)]
pub fn check(call: &'static str, ret: libc::c_long) -> Result<libc::c_long, SysError> {
    if ret < 0 {
        Err(SysError::last(call))
    } else {
        Ok(ret)
    }
}

/// Checks an `int`-returning libc call.
#[inline(always)]
pub fn check_int(call: &'static str, ret: libc::c_int) -> Result<libc::c_int, SysError> {
    if ret < 0 {
        Err(SysError::last(call))
    } else {
        Ok(ret)
    }
}

/// The symbolic name of an errno value ("ENOENT"), or "errno N".
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::EPIPE => "EPIPE",
        libc::ENOSYS => "ENOSYS",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ELOOP => "ELOOP",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ECONNRESET => "ECONNRESET",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::E2BIG => "E2BIG",
        libc::ESTALE => "ESTALE",
        _ => return format!("errno {errno}"),
    };
    name.to_string()
}

/// A path as a NUL-terminated C string, for calls that take one.
pub fn cstring(path: &std::path::Path) -> std::ffi::CString {
    use std::os::unix::ffi::OsStrExt;
    // Paths from the OS never contain interior NULs; ours are generated.
    std::ffi::CString::new(path.as_os_str().as_bytes()).expect("path without NUL bytes")
}

/// The kernel's thread id of the caller.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> Result<(), SysError> {
    set_affinity(&[cpu])
}

/// Restricts the calling thread to `cpus`.
pub fn set_affinity(cpus: &[usize]) -> Result<(), SysError> {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it,
    // and sched_setaffinity reads exactly size_of::<cpu_set_t>() bytes.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        check_int(
            "sched_setaffinity",
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
        )?;
    }
    Ok(())
}

/// Blocks while `*word == expected` (a shared, not process-private, futex,
/// so it works across forked processes on a MAP_SHARED page).
pub fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: `word` is a valid, aligned u32 that outlives the call; the
    // kernel only reads it. EAGAIN/EINTR are fine: callers re-check the word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes every waiter on `word`.
pub fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: as for futex_wait; FUTEX_WAKE does not touch memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The calling thread's CPU time, ns (`CLOCK_THREAD_CPUTIME_ID`): what
/// tests that must burn CPU on a loaded machine spin by.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// A clock that always exists, in ns.
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; both clocks used here always exist.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The host name (uname nodename).
pub fn hostname() -> String {
    // SAFETY: utsname is plain data and uname fills it with NUL-terminated strings.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return "unknown".into();
        }
        CStr::from_ptr(u.nodename.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

/// Whether the process runs with effective uid 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The first executable file `name` in the directories of `path` (a PATH
/// value).
pub fn find_in_path(name: &str, path: Option<&std::ffi::OsStr>) -> Option<std::path::PathBuf> {
    std::env::split_paths(path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                m.is_file()
                    && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
            })
        })
}

/// The first executable file `name` on this process's PATH.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    find_in_path(name, std::env::var_os("PATH").as_deref())
}
