//! `getppid`: the null system call. It reaches no LSM hook, only the
//! syscall entry and exit paths (seccomp filters, audit syscall context,
//! mitigations), so it is the floor every other figure is read against.
//!
//! With `touch_kib=N` each operation also reads N KiB of a 16 MiB ring
//! (one load per 64-byte line, the next N KiB each time) before its call:
//! what a busy program's own work does to the caches between its system
//! calls. A mechanism's cost on the hot loop is what it costs with its
//! rules, filter and code in L1; with the caches refilled between calls
//! it is what it costs a server (`predict`'s cold probes, measured at the
//! target's CPU time per call). The reads are the same in both halves, so
//! the A/B's difference is still the mechanism's.

use anyhow::Result;

use super::{ParamDef, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::SysError;

/// Bytes of the ring `touch_kib` reads from: beyond L2 on today's CPUs,
/// so each line read comes from L3 or memory and displaces what the call
/// left in L1 and L2.
const RING_BYTES: usize = 16 << 20;
const LINE: usize = 64;

/// Reads one byte of each of `lines` lines of `ring` (a power of two
/// long) from `at` on, wrapping; returns where the next read starts.
#[inline(always)]
fn touch(ring: &[u8], mut at: usize, lines: usize) -> usize {
    debug_assert!(ring.len().is_power_of_two());
    let mask = ring.len() - 1;
    let mut sum = 0u8;
    for _ in 0..lines {
        sum = sum.wrapping_add(ring[at]);
        at = (at + LINE) & mask;
    }
    std::hint::black_box(sum);
    at
}

/// How long `touch_kib` takes per KiB on this machine, ns: the fastest of
/// 5 reads of 4 MiB of the ring, after one to back its pages (the fastest,
/// since a busy machine slows some of them). What
/// `predict` uses to pick the `touch_kib` that matches a target's CPU time
/// per call.
pub fn touch_ns_per_kib() -> f64 {
    let ring: Vec<u8> = (0..RING_BYTES).map(|i| i as u8).collect();
    let lines = (4 << 20) / LINE;
    let mut at = touch(&ring, 0, RING_BYTES / LINE);
    (0..5)
        .map(|_| {
            let start = std::time::Instant::now();
            at = touch(&ring, at, lines);
            start.elapsed().as_nanos() as f64 / 4096.0
        })
        .fold(f64::INFINITY, f64::min)
}

pub struct Getppid {
    ring: Vec<u8>,
    lines_per_op: usize,
    at: usize,
}

impl Workload for Getppid {
    const NAME: &'static str = "getppid";
    const DESCRIPTION: &'static str = "getppid(): the null syscall, entry/exit cost only";
    const HOOKS: &'static [&'static str] = &["syscall entry/exit (seccomp, audit)"];
    const SYSCALLS: &'static [&'static str] = &["getppid"];
    const PARAMS: &'static [ParamDef] = &[ParamDef {
        name: "touch_kib",
        default: "0",
        help: "KiB of a 16 MiB ring read before each call, to leave the caches as a busy \
               program's work does (0 to 16384; 0: the hot loop)",
    }];

    fn validate(params: &Params) -> Result<()> {
        super::check_range(params, Self::NAME, "touch_kib", 0..=16384)
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let kib = param_u64(ctx.params, Self::NAME, "touch_kib")? as usize;
        // Written once, so that every page is backed before timing starts.
        let ring = if kib == 0 {
            Vec::new()
        } else {
            (0..RING_BYTES).map(|i| i as u8).collect()
        };
        Ok(Getppid {
            ring,
            lines_per_op: kib * 1024 / LINE,
            at: 0,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        if self.lines_per_op > 0 {
            self.at = touch(&self.ring, self.at, self.lines_per_op);
        }
        // SAFETY: getppid takes no arguments.
        let ppid = unsafe { libc::getppid() };
        if ppid < 0 {
            return Err(SysError::last("getppid"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_wraps_the_ring_and_takes_time() {
        let ring = vec![1u8; 4 * LINE];
        assert_eq!(touch(&ring, 0, 3), 3 * LINE);
        assert_eq!(touch(&ring, 3 * LINE, 2), LINE);
        let ns = touch_ns_per_kib();
        // 16 lines a KiB: well above 0, and well below a miss to memory
        // for every line (~100 ns each) on any machine.
        assert!(ns > 0.5 && ns < 5_000.0, "{ns} ns per KiB");
    }
}
