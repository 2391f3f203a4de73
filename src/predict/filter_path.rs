//! What a seccomp filter costs one system call, read off the filter
//! itself: whether the kernel's action cache lets the call skip the filter
//! (Linux 5.11+: `seccomp_cache_prepare` emulates each filter once per
//! syscall number with only `nr` and `arch` known, and a number whose
//! outcome is a constant `SECCOMP_RET_ALLOW` is marked in a bitmap), and
//! otherwise how many instructions the filter runs for that number. The
//! emulation here is the kernel's (`seccomp_is_const_allow` in
//! kernel/seccomp.c), instruction for instruction; the path length is
//! counted on the call's data with every argument 0, since a count of
//! calls does not know their arguments.

use crate::sys::bpf::SockFilter;
use crate::sys::bpf_emulate::{const_allow, run_counted};

/// The way one syscall number goes through a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterPath {
    /// Allowed by the action cache: the filter does not run.
    Cached,
    /// The filter runs `insns` instructions and returns `ret`.
    Runs { insns: usize, ret: u32 },
}

impl FilterPath {
    /// Whether the call goes ahead (ALLOW or LOG; the cached path always).
    pub fn allows(self) -> bool {
        match self {
            FilterPath::Cached => true,
            FilterPath::Runs { ret, .. } => {
                let action = ret & libc::SECCOMP_RET_ACTION_FULL;
                action == libc::SECCOMP_RET_ALLOW || action == libc::SECCOMP_RET_LOG
            }
        }
    }
}

/// The path of call `nr` through `prog` (the same filter installed
/// once or stacked several times: the cache holds a number only when every
/// filter allows it constantly, and each filter then runs the same path).
pub fn path(prog: &[SockFilter], arch: u32, nr: u32) -> Option<FilterPath> {
    if const_allow(prog, arch, nr) {
        return Some(FilterPath::Cached);
    }
    let (insns, ret) = run_counted(prog, arch, nr)?;
    Some(FilterPath::Runs { insns, ret })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::seccomp::{AUDIT_ARCH_NATIVE, FilterKind, build_filter};

    fn arch() -> u32 {
        AUDIT_ARCH_NATIVE.unwrap()
    }

    #[test]
    fn number_only_filters_are_cached_and_argument_filters_run_their_length() {
        let getppid = libc::SYS_getppid as u32;
        let allow = build_filter(FilterKind::Allow, arch(), 64).unwrap();
        assert_eq!(path(&allow, arch(), getppid), Some(FilterPath::Cached));
        // A denied number is not cached, and its run returns EPERM.
        let denied = libc::SYS_kexec_load as u32;
        match path(&allow, arch(), denied) {
            Some(p @ FilterPath::Runs { ret, .. }) => {
                assert!(!p.allows());
                assert_eq!(ret & libc::SECCOMP_RET_ACTION_FULL, libc::SECCOMP_RET_ERRNO);
            }
            other => panic!("{other:?}"),
        }
        // The args variant: never cached; an unmatched call runs about
        // the whole filter, so the count grows with its length.
        let mut last = 0;
        for insns in [16, 64, 256, 1024] {
            let args = build_filter(FilterKind::Args, arch(), insns).unwrap();
            let Some(FilterPath::Runs { insns: ran, ret }) = path(&args, arch(), getppid) else {
                panic!("args filter cached")
            };
            assert_eq!(ret, libc::SECCOMP_RET_ALLOW);
            assert!(
                ran > last && ran <= args.len(),
                "{insns}: ran {ran} of {}",
                args.len()
            );
            assert!(
                ran + 8 >= args.len() / 2,
                "{insns}: ran {ran} of {}",
                args.len()
            );
            last = ran;
        }
    }

    #[test]
    fn another_architecture_is_not_cached() {
        let allow = build_filter(FilterKind::Allow, arch(), 64).unwrap();
        assert!(!const_allow(&allow, 0x4000_0003, libc::SYS_getppid as u32));
    }
}
