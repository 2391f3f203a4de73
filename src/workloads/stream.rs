//! `stream`: the STREAM triad, `a[i] = b[i] + s * c[i]`, over three
//! per-task arrays of `elements` doubles (default 2,000,000: 16 MB each,
//! 48 MB in all, far beyond any cache). One operation is one full pass;
//! the rate is also given in bytes per second with STREAM's convention
//! (24 bytes per element: two arrays read, one written), i.e. memory
//! bandwidth.
//!
//! No system call and no security hook runs in the loop: this is the
//! negative control. A mechanism that changes it does so indirectly (page
//! table isolation, cache or TLB flushes on other CPUs' syscalls, timer
//! ticks), or the machine is noisy. It is in the catalog because the 2004
//! SELinux patch series (avc-2004, docs/experiments.md) reported STREAM beside its syscall
//! benchmarks, and a figure that moves where no hook runs tells how far
//! to trust the others.
//!
//! The arrays are allocated and touched in `prepare`, so no page fault
//! is timed. The scalar alternates between passes and one element, a
//! different one each pass, is checked afterwards: a pass the compiler
//! dropped, or one that did not write, fails the run.

use anyhow::Result;

use super::{ParamDef, Setup, SetupCtx, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::SysError;

pub struct Stream {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    pass: u64,
}

/// Bytes STREAM counts per triad element: read b and c, write a.
const BYTES_PER_ELEMENT: u64 = 3 * 8;

impl Workload for Stream {
    const NAME: &'static str = "stream";
    const DESCRIPTION: &'static str =
        "STREAM triad a = b + s*c over per-task f64 arrays (no syscall: negative control)";
    const HOOKS: &'static [&'static str] =
        &["none (negative control: no security hook runs in the loop)"];
    const SYSCALLS: &'static [&'static str] = &[];
    const PARAMS: &'static [ParamDef] = &[ParamDef {
        name: "elements",
        default: "2000000",
        help: "f64 elements per array (3 arrays; 2000000 = 48 MB in all)",
    }];
    const UNIT: Option<&'static str> = Some("bytes");
    const SLOW: bool = true;
    /// It only computes on its own arrays: nothing to clean up.
    const KILL_AT_STOP: bool = true;

    fn validate(params: &Params) -> Result<()> {
        super::check_range(params, Self::NAME, "elements", 1000..=100_000_000)
    }

    fn setup(ctx: &SetupCtx) -> Result<Setup> {
        let n = param_u64(ctx.params, Self::NAME, "elements")?;
        Ok(Setup {
            units_per_op: Some(BYTES_PER_ELEMENT * n),
            data_dir: None,
        })
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let n = param_u64(ctx.params, Self::NAME, "elements")? as usize;
        // Non-zero fills: every page is written here, not on first use.
        Ok(Stream {
            a: vec![1.0; n],
            b: vec![2.0; n],
            c: vec![0.5; n],
            pass: 0,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        self.pass = self.pass.wrapping_add(1);
        // 3.0 and 4.0 in turn, so every pass changes a[].
        let s = std::hint::black_box(3.0 + (self.pass & 1) as f64);
        let (a, b, c) = (
            std::hint::black_box(&mut self.a[..]),
            std::hint::black_box(&self.b[..]),
            std::hint::black_box(&self.c[..]),
        );
        triad(a, b, c, s);
        let a = std::hint::black_box(&self.a[..]);
        // A different element each pass (2654435761: Knuth's multiplier).
        let k = (self.pass.wrapping_mul(2_654_435_761) % a.len() as u64) as usize;
        if a[k] != self.b[k] + s * self.c[k] {
            return Err(SysError {
                call: "stream: triad result check failed",
                errno: libc::EIO,
            });
        }
        Ok(())
    }
}

/// The kernel proper, out of line so it is one loop to read in `perf`.
#[inline(never)]
fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + s * c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::workloads::def;

    #[test]
    fn stream_measures_bandwidth() {
        let mut params = Params::new();
        params.insert("elements".into(), "200000".into());
        let r =
            crate::runner::testing::measure_briefly(&def::<Stream>(), Mode::Process, 50, &params);
        assert!(r.ops_per_sec.median > 0.0);
        let u = r.unit_rate.expect("bytes rate");
        assert_eq!((u.unit.as_str(), u.per_op), ("bytes", 24 * 200_000));
    }

    #[test]
    fn every_pass_writes_the_triad() {
        let mut w = Stream {
            a: vec![1.0; 1000],
            b: vec![2.0; 1000],
            c: vec![0.5; 1000],
            pass: 0,
        };
        w.op().unwrap();
        assert!(w.a.iter().all(|&x| x == 2.0 + 4.0 * 0.5));
        w.op().unwrap();
        assert!(w.a.iter().all(|&x| x == 2.0 + 3.0 * 0.5));
        // A corrupted array fails the check on the element it samples.
        w.b.iter_mut().for_each(|x| *x = f64::NAN);
        assert_eq!(w.op().unwrap_err().errno, libc::EIO);
    }

    #[test]
    fn validate_checks_range() {
        let mut p = Params::new();
        p.insert("elements".into(), "999".into());
        assert!(Stream::validate(&p).is_err());
        p.insert("elements".into(), "1000".into());
        assert!(Stream::validate(&p).is_ok());
    }
}
