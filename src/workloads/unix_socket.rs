//! `unix_socket`: send() of `size` bytes (default 64) on one end of a
//! private AF_UNIX SOCK_STREAM socketpair and recv() of them on the other,
//! in the same task; one operation is the pair. `send`/`recv` are the
//! `sendto`/`recvfrom` system calls on x86_64 and go straight to
//! `sock_sendmsg`/`sock_recvmsg`, so they reach the `socket_sendmsg` and
//! `socket_recvmsg` LSM hooks and not `file_permission` (no
//! `rw_verify_area()`). Stream sockets skip `unix_may_send`, which only
//! datagram sends check. It is in the catalog because the SELinux AVC post
//! (avc-2004, docs/experiments.md) names networking as the area where per-call permission
//! checks still fell back to slow lookups; local IPC is where that shows
//! without a network.
//!
//! Both ends are non-blocking: everything sent is read back in the same
//! operation, so a full buffer (a `size` too large for the socket's send
//! buffer) fails with EAGAIN or a short count instead of blocking the task
//! against itself. `prepare` does one operation to report that early.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use anyhow::{Context, Result};

use super::eventfd::short_or_errno;
use super::{ParamDef, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::{SysError, check_int};

pub struct UnixSocket {
    tx: OwnedFd,
    rx: OwnedFd,
    out: Vec<u8>,
    inb: Vec<u8>,
}

impl Workload for UnixSocket {
    const NAME: &'static str = "unix_socket";
    const DESCRIPTION: &'static str =
        "send + recv of 64 bytes (size) on an AF_UNIX stream socketpair";
    const HOOKS: &'static [&'static str] = &["socket_sendmsg", "socket_recvmsg"];
    const SYSCALLS: &'static [&'static str] = &["sendto", "recvfrom"];
    const PARAMS: &'static [ParamDef] = &[ParamDef {
        name: "size",
        default: "64",
        help: "bytes per send and recv (1 to 65536)",
    }];

    fn validate(params: &Params) -> Result<()> {
        super::check_range(params, Self::NAME, "size", 1..=65536)
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let size = param_u64(ctx.params, Self::NAME, "size")? as usize;
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds has room for the two descriptors socketpair writes.
        check_int("socketpair", unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                0,
                fds.as_mut_ptr(),
            )
        })?;
        // SAFETY: both descriptors were just created and are owned only here.
        let (tx, rx) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let mut w = UnixSocket {
            tx,
            rx,
            out: vec![b'x'; size],
            inb: vec![0; size],
        };
        w.op()
            .with_context(|| format!("a first send + recv of {size} bytes"))?;
        Ok(w)
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        let n = self.out.len();
        // SAFETY: out holds n valid bytes; MSG_NOSIGNAL: no SIGPIPE.
        let s = unsafe {
            libc::send(
                self.tx.as_raw_fd(),
                self.out.as_ptr().cast(),
                n,
                libc::MSG_NOSIGNAL,
            )
        };
        if s != n as isize {
            return Err(short_or_errno("sendto", s));
        }
        // SAFETY: inb has room for n bytes.
        let r = unsafe { libc::recv(self.rx.as_raw_fd(), self.inb.as_mut_ptr().cast(), n, 0) };
        if r != n as isize {
            return Err(short_or_errno("recvfrom", r));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::workloads::def;
    use crate::workloads::pipe::tests::run_briefly;

    #[test]
    fn unix_socket_runs_in_both_modes_and_sizes() {
        for mode in [Mode::Process, Mode::Thread] {
            let r = run_briefly(&def::<UnixSocket>(), mode, Params::new());
            assert!(r > 0.0, "{mode}: {r}");
        }
        let mut big = Params::new();
        big.insert("size".into(), "65536".into());
        assert!(run_briefly(&def::<UnixSocket>(), Mode::Process, big) > 0.0);
    }

    #[test]
    fn size_out_of_range_is_a_usage_error() {
        for bad in ["0", "65537"] {
            let mut p = Params::new();
            p.insert("size".into(), bad.into());
            let e = UnixSocket::validate(&p).unwrap_err();
            assert!(
                e.downcast_ref::<crate::error::UsageError>().is_some(),
                "{e}"
            );
        }
    }
}
