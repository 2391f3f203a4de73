//! Questions asked of the running kernel that more than one part of
//! secperf needs (the probe that reports the configuration, the mechanism
//! that uses it, the runner), each asked in one place with its error
//! naming the call.

use super::{SysError, check};

/// `LANDLOCK_CREATE_RULESET_VERSION`: return the ABI version.
pub const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1 << 0;
/// `LANDLOCK_CREATE_RULESET_ERRATA`: return the fixed-errata bitmask (6.15+).
pub const LANDLOCK_CREATE_RULESET_ERRATA: u32 = 1 << 1;

/// `landlock_create_ruleset(NULL, 0, flags)`: the number the kernel
/// returns for a query flag, or the errno (EOPNOTSUPP: built in but not
/// enabled at boot; ENOSYS: not built).
pub fn landlock_query(flags: u32) -> Result<i64, SysError> {
    // SAFETY: with a NULL attribute pointer and size 0 the kernel reads no
    // memory; the call only returns a number (no file descriptor is made).
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            flags,
        )
    };
    check("landlock_create_ruleset", r)
}

/// The running kernel's Landlock ABI version.
pub fn landlock_abi() -> Result<u32, SysError> {
    landlock_query(LANDLOCK_CREATE_RULESET_VERSION).map(|v| v as u32)
}

/// `prctl(PR_GET_SECCOMP)`: the calling thread's seccomp mode (EINVAL: a
/// kernel built without seccomp).
pub fn seccomp_mode() -> Result<i32, SysError> {
    // SAFETY: PR_GET_SECCOMP takes no pointers and only returns the mode; a
    // process in strict mode (where the call is fatal) could not be running
    // this code.
    let r = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    super::check_int("prctl(PR_GET_SECCOMP)", r)
}

/// A zero-filled anonymous mapping of `len` bytes shared with the
/// processes this one forks (counters, an errno page); the caller unmaps
/// it with `munmap(ptr, len)`.
pub fn mmap_shared_anon(len: usize) -> Result<*mut u8, SysError> {
    // SAFETY: an anonymous mapping with no address hint touches no existing
    // memory; the result is checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(SysError::last("mmap"));
    }
    Ok(p.cast())
}

/// The value of a `Key:\tvalue` line of a `/proc/.../status` file, trimmed.
pub fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_pages_are_zeroed_and_writable() {
        let len = 4096;
        let p = mmap_shared_anon(len).unwrap();
        // SAFETY: p is a fresh mapping of len bytes.
        unsafe {
            assert_eq!(*p, 0);
            *p = 7;
            assert_eq!(*p, 7);
            libc::munmap(p.cast(), len);
        }
    }

    #[test]
    fn questions_answer_or_name_the_call() {
        match landlock_abi() {
            Ok(abi) => assert!(abi >= 1),
            Err(e) => assert_eq!(e.call, "landlock_create_ruleset"),
        }
        match seccomp_mode() {
            Ok(mode) => assert!((0..=2).contains(&mode)),
            Err(e) => assert_eq!(e.errno, libc::EINVAL),
        }
    }
}
