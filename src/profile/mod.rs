//! Where the time goes: `--profile` samples the tasks of extra, profiled
//! halves and attributes each A/B difference to kernel functions.
//!
//! - [`sampler`]: `perf_event_open` on `cpu-clock`, IP and kernel call
//!   chain per sample.
//! - [`symbols`]: names for kernel (`kallsyms`, live JIT-ed BPF programs)
//!   and user addresses.
//! - [`groups`]: the one table of function groups (audit, seccomp, each
//!   LSM, credentials, ...).
//! - [`attribute`]: shares x ns/op per half, deltas per pair, intervals.
//!
//! A half's samples become folded stacks (`outer;...;leaf` -> count), the
//! format flame graph tools read, and everything else is computed from
//! those.

pub mod attribute;
pub mod groups;
pub mod sampler;
pub mod symbols;

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use self::attribute::{UNSYMBOLISED_FRAME, USER_FRAME};
use self::sampler::{RawProfile, Site, TaskSampler};
use self::symbols::{BpfSymbols, Symbols};
use crate::runner::Observer;

/// Folded call stacks: `outer;...;leaf` -> samples.
pub type Folded = BTreeMap<String, u64>;

/// Default sampling frequency per task, Hz: enough samples for shares of a
/// few percent in a 1-second half, little enough to slow a syscall loop by
/// only a few percent.
pub const DEFAULT_HZ: u64 = 4000;
/// Default number of profiled pairs per comparison.
pub const DEFAULT_PAIRS: u32 = 8;
/// Highest frequency accepted (the kernel's own default cap is 100 kHz).
pub const MAX_HZ: u64 = 50_000;
/// Symbol rows kept per comparison.
pub const TOP_SYMBOLS: usize = 25;

/// What `--profile` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProfileOpts {
    pub hz: u64,
    pub pairs: u32,
}

/// Profiles one half: opens the events when the tasks are ready (and
/// snapshots the JIT-ed BPF programs they loaded), samples the kept slices.
pub struct HalfProfiler {
    hz: u64,
    drain_ms: u64,
    sampler: Option<TaskSampler>,
    bpf: BpfSymbols,
}

impl HalfProfiler {
    /// A profiler sampling at `hz`, drained every `drain_ms` (the slice).
    pub fn new(hz: u64, drain_ms: u64) -> HalfProfiler {
        HalfProfiler {
            hz,
            drain_ms,
            sampler: None,
            bpf: BpfSymbols::default(),
        }
    }

    /// The half's folded stacks and lost-sample count.
    pub fn finish(self, symbols: &Symbols) -> (Folded, u64) {
        match self.sampler {
            Some(s) => (fold(&s.raw, &self.bpf, symbols), s.raw.lost),
            None => (Folded::new(), 0),
        }
    }
}

impl Observer for HalfProfiler {
    fn ready(&mut self, tids: &[i32], cpus: &[Option<usize>], follow: bool) -> Result<()> {
        self.bpf = BpfSymbols::snapshot();
        if follow && tids.is_empty() {
            anyhow::bail!("the processes to sample were not found (the server had exited?)");
        }
        self.sampler = Some(TaskSampler::open(
            tids,
            cpus,
            follow,
            self.hz,
            self.drain_ms,
        )?);
        Ok(())
    }

    fn keep(&mut self) -> Result<()> {
        match &mut self.sampler {
            Some(s) => s.enable(),
            None => Ok(()),
        }
    }

    fn slice(&mut self) -> Result<()> {
        if let Some(s) = &mut self.sampler {
            s.drain();
        }
        Ok(())
    }

    fn done(&mut self) -> Result<()> {
        if let Some(s) = &mut self.sampler {
            s.disable()?;
            s.drain();
        }
        Ok(())
    }
}

/// Whether profiling can run here: the symbols to name samples with, or
/// the notes saying why not (sampling refused, kallsyms unreadable). A
/// symbol table whose kernel addresses are hidden comes with a note.
pub fn readiness(hz: u64) -> (Option<Symbols>, Vec<String>) {
    let mut notes = Vec::new();
    let symbols = match Symbols::new(std::path::Path::new("/proc/kallsyms")) {
        Ok(s) => Some(s),
        Err(e) => {
            notes.push(format!("not profiled: {e:#}"));
            None
        }
    };
    if let Some(why) = sampler::unavailable(hz) {
        notes.push(format!("not profiled: {why}"));
    }
    if !notes.is_empty() {
        return (None, notes);
    }
    if symbols.as_ref().is_some_and(|s| s.kernel_hidden) {
        notes.push(
            "kernel addresses are hidden (kernel.kptr_restrict, or lockdown's confidentiality \
             mode): every kernel sample is in \"kernel (unsymbolised)\"; as root with \
             kernel.kptr_restrict 0 or 1 they get names"
                .to_string(),
        );
    }
    (symbols, notes)
}

/// One profiled half: `measure` runs it watched by a fresh profiler and
/// returns its ns/op; the samples are named with `symbols`.
pub fn profile_half(
    symbols: &Symbols,
    hz: u64,
    drain_ms: u64,
    measure: impl FnOnce(&mut dyn Observer) -> Result<f64>,
) -> Result<attribute::HalfProfile> {
    let mut profiler = HalfProfiler::new(hz, drain_ms);
    let ns_per_op = measure(&mut profiler)?;
    let (stacks, lost) = profiler.finish(symbols);
    Ok(attribute::HalfProfile {
        ns_per_op,
        stacks,
        lost,
    })
}

/// Turns raw samples into folded stacks with names.
pub fn fold(raw: &RawProfile, bpf: &BpfSymbols, symbols: &Symbols) -> Folded {
    let mut kernel: HashSet<u64> = HashSet::new();
    let mut user: HashSet<u64> = HashSet::new();
    for site in raw.sites.keys() {
        match site {
            Site::User(ip) => {
                user.insert(*ip);
            }
            Site::Kernel(frames) => kernel.extend(frames.iter().copied()),
        }
    }
    let kernel: Vec<u64> = kernel.into_iter().collect();
    let user: Vec<u64> = user.into_iter().collect();
    let names = |addrs: &[u64], found: Vec<Option<String>>| -> HashMap<u64, String> {
        addrs
            .iter()
            .zip(found)
            .map(|(&a, n)| (a, n.unwrap_or_else(|| format!("[unknown {a:#x}]"))))
            .collect()
    };
    let kernel_names = names(&kernel, symbols.kernel(&kernel, bpf));
    let user_names = names(&user, symbols.user(&user));
    let mut folded = Folded::new();
    for (site, &n) in &raw.sites {
        let stack = match site {
            Site::User(ip) => format!("{USER_FRAME};{}", user_names[ip]),
            Site::Kernel(frames) if symbols.kernel_hidden || frames.is_empty() => {
                UNSYMBOLISED_FRAME.to_string()
            }
            Site::Kernel(frames) => frames
                .iter()
                .rev()
                .map(|a| kernel_names[a].as_str())
                .collect::<Vec<_>>()
                .join(";"),
        };
        *folded.entry(stack).or_default() += n;
    }
    folded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_samples_fold_outermost_first_with_names() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("kallsyms");
        std::fs::write(
            &path,
            "ffffffff81001000 T entry_SYSCALL_64\nffffffff81002000 T do_syscall_64\n\
             ffffffff81003000 t __audit_syscall_exit\nffffffff81004000 T _etext\n",
        )
        .expect("fixture");
        let symbols = Symbols::new(&path).expect("symbols");
        let mut raw = RawProfile::default();
        raw.sites.insert(
            Site::Kernel(vec![
                0xffffffff81003010,
                0xffffffff81002020,
                0xffffffff81001030,
            ]),
            3,
        );
        // Two sites with the same names merge.
        raw.sites.insert(
            Site::Kernel(vec![
                0xffffffff81003020,
                0xffffffff81002020,
                0xffffffff81001030,
            ]),
            2,
        );
        raw.sites.insert(Site::Kernel(vec![]), 1);
        let folded = fold(&raw, &BpfSymbols::default(), &symbols);
        assert_eq!(
            folded.get("entry_SYSCALL_64;do_syscall_64;__audit_syscall_exit"),
            Some(&5)
        );
        assert_eq!(folded.get(UNSYMBOLISED_FRAME), Some(&1));
    }
}
