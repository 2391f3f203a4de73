//! `eventfd`: write then read 8 bytes on a private eventfd. Both calls go
//! through `rw_verify_area()` and so the `file_permission` LSM hook with
//! almost no other work: the case of the lsm-hooks-2020 reference experiment, where the
//! BPF LSM's no-op hook cost 4%.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use anyhow::Result;

use super::{TaskCtx, Workload};
use crate::sys::{SysError, check_int};

pub struct Eventfd {
    fd: OwnedFd,
}

impl Workload for Eventfd {
    const NAME: &'static str = "eventfd";
    const DESCRIPTION: &'static str = "write + read of 8 bytes on an eventfd";
    const HOOKS: &'static [&'static str] = &["file_permission"];
    const SYSCALLS: &'static [&'static str] = &["write", "read"];

    fn prepare(_ctx: &TaskCtx) -> Result<Self> {
        // SAFETY: eventfd takes plain integers.
        let fd = check_int("eventfd", unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) })?;
        // SAFETY: fd was just created and is owned only here.
        Ok(Eventfd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        let fd = self.fd.as_raw_fd();
        let mut value: u64 = 1;
        let p = (&raw mut value).cast::<libc::c_void>();
        // SAFETY: p points at 8 valid bytes for both calls.
        let w = unsafe { libc::write(fd, p, 8) };
        if w != 8 {
            return Err(short_or_errno("write", w));
        }
        // SAFETY: as above.
        let r = unsafe { libc::read(fd, p, 8) };
        if r != 8 {
            return Err(short_or_errno("read", r));
        }
        Ok(())
    }
}

/// A failed or short transfer: errno if the call failed, EIO if short.
#[cold]
pub(crate) fn short_or_errno(call: &'static str, ret: isize) -> SysError {
    if ret < 0 {
        SysError::last(call)
    } else {
        SysError {
            call,
            errno: libc::EIO,
        }
    }
}
