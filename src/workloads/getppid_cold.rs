//! `getppid_cold`: getppid after `fault_pages` fresh pages of anonymous
//! memory were written to (default 1), so the kernel's page-fault path
//! runs between calls: kernel code and data through the caches, as a
//! server's network stack goes through them between its calls, and no
//! system call, so no mechanism's hook. A mechanism's cost on `getppid` is
//! what it costs with its rules, filter and code in L1; here it is what it
//! costs a busy server (`predict`'s cache-cold term: under Docker's
//! profile +26 ns on `getppid` and +51 ns here, under the STIG audit rules
//! +131 and +207 ns). The faults are the same in both halves, so the A/B's
//! difference is still the mechanism's; the pages are given back with one
//! `madvise` every 256 faults, whose share of the difference is a 256th of
//! a call. Its own workload, so that `getppid`'s hot loop has nothing in
//! it but the call.

use anyhow::Result;

use super::{ParamDef, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::SysError;

pub const NAME: &str = "getppid_cold";

/// Pages of the fault region: faulted in one after another, then given
/// back together with one madvise.
const REGION_PAGES: usize = 256;

/// The most `fault_pages` a call.
pub const MAX_FAULT_PAGES: u64 = 64;

/// Fresh pages to fault in, one write each.
struct Faults {
    region: *mut u8,
    page: usize,
    next: usize,
}

impl Faults {
    fn new() -> Result<Faults> {
        // SAFETY: sysconf has no memory effects.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // SAFETY: a fresh private anonymous mapping; checked below.
        let region = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page * REGION_PAGES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if region == libc::MAP_FAILED {
            return Err(SysError::last("mmap (getppid_cold's fault region)").into());
        }
        Ok(Faults {
            region: region.cast(),
            page,
            next: 0,
        })
    }

    /// Faults in the next `n` pages, giving the region back when all of
    /// it was used.
    #[inline(always)]
    fn fault(&mut self, n: usize) -> Result<(), SysError> {
        for _ in 0..n {
            if self.next == REGION_PAGES {
                // SAFETY: our mapping; its pages are given back, not unmapped.
                let r = unsafe {
                    libc::madvise(
                        self.region.cast(),
                        self.page * REGION_PAGES,
                        libc::MADV_DONTNEED,
                    )
                };
                if r != 0 {
                    return Err(SysError::last("madvise (getppid_cold's fault region)"));
                }
                self.next = 0;
            }
            // SAFETY: within the mapping (next < REGION_PAGES).
            unsafe { self.region.add(self.next * self.page).write_volatile(1) };
            self.next += 1;
        }
        Ok(())
    }
}

impl Drop for Faults {
    fn drop(&mut self) {
        // SAFETY: our mapping, no longer used.
        unsafe { libc::munmap(self.region.cast(), self.page * REGION_PAGES) };
    }
}

/// How long one fault takes on this machine, ns: the fastest of 5 rounds
/// of 255 faults. What `predict` uses to decide whether a target spends
/// enough CPU time per call for the cold term.
pub fn fault_ns_per_page() -> Result<f64> {
    let mut f = Faults::new()?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        // Each round starts with the region given back.
        f.next = REGION_PAGES;
        f.fault(1)?;
        let start = std::time::Instant::now();
        f.fault(REGION_PAGES - 1)?;
        best = best.min(start.elapsed().as_nanos() as f64 / (REGION_PAGES - 1) as f64);
    }
    Ok(best)
}

pub struct GetppidCold {
    faults: Faults,
    pages: usize,
}

impl Workload for GetppidCold {
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str =
        "getppid() after fresh pages are faulted in: a call as a busy server's caches leave it";
    const HOOKS: &'static [&'static str] = &["syscall entry/exit (seccomp, audit)"];
    const SYSCALLS: &'static [&'static str] = &["getppid"];
    const PARAMS: &'static [ParamDef] = &[ParamDef {
        name: "fault_pages",
        default: "1",
        help: "fresh pages faulted in before each call, so that the kernel's own code runs \
               between calls as a server's does, with no system call (1 to 64)",
    }];
    const IN_ALL: bool = false;

    fn validate(params: &Params) -> Result<()> {
        super::check_range(params, Self::NAME, "fault_pages", 1..=MAX_FAULT_PAGES)
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        Ok(GetppidCold {
            faults: Faults::new()?,
            pages: param_u64(ctx.params, Self::NAME, "fault_pages")? as usize,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        self.faults.fault(self.pages)?;
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
    fn faults_cycle_through_the_region_and_take_time() {
        let mut f = Faults::new().expect("region");
        f.fault(REGION_PAGES + 3).expect("faults");
        assert_eq!(f.next, 3, "given back once, then 3 more");
        let ns = fault_ns_per_page().expect("timed");
        // A page fault and a 4 KiB clear: well above 10 ns, well below
        // a millisecond on any machine.
        assert!(ns > 10.0 && ns < 1e6, "{ns} ns a page");
    }
}
