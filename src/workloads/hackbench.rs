//! `hackbench`: Rusty Russell's scheduler benchmark, the "HackBench" column
//! of the SELinux AVC post (avc-2004, docs/experiments.md), where SELinux with the global AVC
//! lock made it 20 times slower on a 16-way machine. In hackbench, groups
//! of senders write 100-byte messages round-robin to groups of receivers
//! over socketpairs (or pipes), and every process runs at once.
//!
//! Within the workload contract, each secperf task is one sender: in
//! `prepare` it forks `groups` x `fds` receiver processes, each with its
//! own socketpair (`transport=socket`, the default, like hackbench) or
//! pipe (`transport=pipe`, hackbench `-p`). One operation is one message:
//! a write() of 100 bytes to the next receiver in turn. Receivers read
//! 100 bytes at a time and discard them, and exit when the sender's end
//! closes. They are extra processes, free to run on any online CPU, so
//! they compete with the senders for the CPUs as in hackbench; a sender
//! that fills a receiver's buffer sleeps until that receiver reads, so the
//! rate includes the wakeups and switches. If a receiver dies, the write
//! to it fails with EPIPE (ECONNRESET on a socket it left unread data
//! in), and a sender sleeping on its full buffer is woken to that, rather
//! than hanging.
//!
//! Hooks: every write() and read() passes `rw_verify_area()` and so
//! `file_permission`; over sockets they also reach `socket_sendmsg` and
//! `socket_recvmsg`. The receivers' reads happen in processes forked
//! before a worker-scope mechanism is applied, so only a system-wide
//! mechanism covers them.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use anyhow::{Context, Result};

use super::eventfd::short_or_errno;
use super::pipe_ctx::{ChildProc, errno, pipe};
use super::{ParamDef, TaskCtx, Workload, param_u64};
use crate::error::UsageError;
use crate::model::Params;
use crate::sys::{SysError, check_int};

/// hackbench's message size.
const DATASIZE: usize = 100;

pub struct Hackbench {
    /// The sender's end for each receiver, in round-robin order.
    fds: Vec<RawFd>,
    next: usize,
    msg: [u8; DATASIZE],
    /// Owners of `fds`. Fields drop in order: these close first, then the
    /// receivers are killed and reaped.
    _ends: Vec<OwnedFd>,
    _receivers: Vec<ChildProc>,
}

impl Workload for Hackbench {
    const NAME: &'static str = "hackbench";
    const DESCRIPTION: &'static str =
        "100-byte messages round-robin to groups x fds receiver processes (hackbench)";
    const HOOKS: &'static [&'static str] = &[
        "file_permission",
        "socket_sendmsg, socket_recvmsg (transport=socket)",
        "scheduler (wakeups, context switches)",
    ];
    const SYSCALLS: &'static [&'static str] = &["write"];
    const PARAMS: &'static [ParamDef] = &[
        ParamDef {
            name: "transport",
            default: "socket",
            help: "socket: AF_UNIX stream socketpairs (hackbench's default); pipe: pipes (-p)",
        },
        ParamDef {
            name: "groups",
            default: "1",
            help: "receiver groups per task (1 to 64)",
        },
        ParamDef {
            name: "fds",
            default: "4",
            help: "receivers per group (1 to 64)",
        },
    ];

    fn validate(params: &Params) -> Result<()> {
        transport(params)?;
        super::check_range(params, Self::NAME, "groups", 1..=64)?;
        super::check_range(params, Self::NAME, "fds", 1..=64)
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let use_pipe = transport(ctx.params)?;
        let groups = param_u64(ctx.params, Self::NAME, "groups")?;
        let per_group = param_u64(ctx.params, Self::NAME, "fds")?;
        let n = (groups * per_group) as usize;
        let cpus = online_set()?;
        let mut w = Hackbench {
            fds: Vec::with_capacity(n),
            next: 0,
            msg: [b'x'; DATASIZE],
            _ends: Vec::with_capacity(n),
            _receivers: Vec::with_capacity(n),
        };
        for i in 0..n {
            let (theirs, ours) = if use_pipe { pipe()? } else { socketpair()? };
            let fd = theirs.as_raw_fd();
            let child = ChildProc::spawn(&[fd], Some(&cpus), move || receive_loop(fd))
                .with_context(|| format!("forking hackbench receiver {i}"))?;
            // Only the receiver holds its end now: its death is our EPIPE.
            drop(theirs);
            w.fds.push(ours.as_raw_fd());
            w._ends.push(ours);
            w._receivers.push(child);
        }
        for _ in 0..n {
            w.op().context("a first message to every receiver")?;
        }
        Ok(w)
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        let fd = self.fds[self.next];
        self.next += 1;
        if self.next == self.fds.len() {
            self.next = 0;
        }
        // SAFETY: msg holds DATASIZE valid bytes.
        let w = unsafe { libc::write(fd, self.msg.as_ptr().cast(), DATASIZE) };
        if w != DATASIZE as isize {
            return Err(short_or_errno("write", w));
        }
        Ok(())
    }
}

/// `transport`: true for pipe, false for socket; a usage error otherwise.
fn transport(params: &Params) -> Result<bool> {
    match params.get("transport").map(String::as_str) {
        Some("socket") | None => Ok(false),
        Some("pipe") => Ok(true),
        Some(other) => Err(UsageError::new(format!(
            "workload hackbench: transport={other} is not valid (valid: socket, pipe)"
        ))
        .into()),
    }
}

/// An AF_UNIX stream socketpair, as (receiver's end, sender's end).
fn socketpair() -> Result<(OwnedFd, OwnedFd), SysError> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors socketpair writes.
    check_int("socketpair", unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    })?;
    // SAFETY: both descriptors were just created and are owned only here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Every online CPU, as an affinity mask for the receivers (the task that
/// forks them is pinned; hackbench's receivers run anywhere).
fn online_set() -> Result<libc::cpu_set_t> {
    let cpus = crate::sys::cpus::online_cpus()?;
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        Ok(set)
    }
}

/// A receiver: read 100 bytes at a time until end-of-file or an error.
/// Runs in a forked child, so it only makes raw system calls.
fn receive_loop(fd: RawFd) -> i32 {
    let mut buf = [0u8; DATASIZE];
    loop {
        // SAFETY: buf is DATASIZE writable bytes on this stack.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), DATASIZE) };
        if n > 0 || (n < 0 && errno() == libc::EINTR) {
            continue;
        }
        return 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::workloads::def;
    use crate::workloads::pipe::tests::run_briefly;

    #[test]
    fn hackbench_runs_over_sockets_and_pipes_in_both_modes() {
        for mode in [Mode::Process, Mode::Thread] {
            for t in ["socket", "pipe"] {
                let mut p = Params::new();
                p.insert("transport".into(), t.into());
                // Two receivers: light on CPUs other tests run on at once.
                p.insert("fds".into(), "2".into());
                let r = run_briefly(&def::<Hackbench>(), mode, p);
                assert!(r > 0.0, "{mode} {t}: {r}");
            }
        }
    }

    #[test]
    fn bad_params_are_usage_errors() {
        for (k, v) in [
            ("groups", "0"),
            ("groups", "65"),
            ("fds", "0"),
            ("fds", "65"),
            ("transport", "tcp"),
        ] {
            let mut p = def::<Hackbench>().params_with_defaults(&Params::new());
            p.insert(k.into(), v.into());
            let e = Hackbench::validate(&p).unwrap_err();
            assert!(e.downcast_ref::<UsageError>().is_some(), "{k}={v}: {e:#}");
        }
    }

    #[test]
    fn dead_receiver_fails_instead_of_hanging() {
        let scratch = std::env::temp_dir();
        let params = def::<Hackbench>().params_with_defaults(&Params::new());
        let setup = crate::workloads::Setup::default();
        let ctx = TaskCtx {
            task: 0,
            tasks: 1,
            scratch: &scratch,
            params: &params,
            setup: &setup,
            stop: None,
        };
        let mut w = Hackbench::prepare(&ctx).unwrap();
        // SAFETY: receiver 0 is our child; killing it is the test.
        unsafe { libc::kill(w._receivers[0].pid(), libc::SIGKILL) };
        // Keep sending: once the kernel has torn down the dead receiver's
        // end, a write to it fails.
        let e = loop {
            if let Err(e) = w.op() {
                break e;
            }
        };
        // EPIPE, or ECONNRESET for a socket closed with data still unread.
        assert_eq!(e.call, "write", "{e}");
        assert!([libc::EPIPE, libc::ECONNRESET].contains(&e.errno), "{e}");
    }
}
