//! What one A/B comparison is and how it is measured: the case (a
//! treatment on a workload at a task count), the design (pairs, slices,
//! placement, seed) and the seeded coin that orders each pair.

use std::path::PathBuf;

use super::counting::Counting;
use crate::mechanisms::{Arm, Treatment};
use crate::model::{Metric, Mode, Params};
use crate::profile::ProfileOpts;
use crate::stats::bootstrap::Rng;
use crate::stats::sequential::StopRule;
use crate::workloads::WorkloadDef;

/// The negative control's workload, judged on the read side.
pub use crate::read::control::CONTROL_WORKLOAD;

/// One comparison to make: a treatment on a workload at a task count.
#[derive(Debug, Clone)]
pub struct Case {
    pub workload: &'static WorkloadDef,
    pub workload_params: Params,
    pub treatment: Treatment,
    pub tasks: usize,
}

/// How every comparison of a run is measured.
#[derive(Debug, Clone)]
pub struct Design {
    /// Pairs per comparison: all of them in the fixed design, the budget
    /// (the most) in the sequential one.
    pub pairs: u32,
    pub sample_ms: u64,
    pub samples_per_half: u32,
    pub warmup: u32,
    pub mode: Mode,
    /// CPUs tasks are pinned to (empty: no pinning).
    pub cpus: Vec<usize>,
    pub scratch_root: PathBuf,
    pub cache_dir: PathBuf,
    pub seed: u64,
    /// Extra profiled pairs after the timed ones (`--profile`).
    pub profile: Option<ProfileOpts>,
    /// The sequential design's stopping rule; None for a fixed number of
    /// pairs (`--pairs`).
    pub stop: Option<StopRule>,
    /// How each half counts its figure per operation (decided once, by
    /// [`super::counting::decide`]): time by the clock, or instructions
    /// (by the PMU on a host, by the clock in a guest booted with icount).
    pub counting: Counting,
}

impl Design {
    /// A design for tests that time nothing: `pairs` pairs of 60 ms
    /// halves (one warmup, two samples) on CPU 0, seed `seed`.
    #[cfg(test)]
    pub fn for_tests(pairs: u32, seed: u64) -> Design {
        Design {
            pairs,
            sample_ms: 60,
            samples_per_half: 2,
            warmup: 1,
            mode: Mode::Process,
            cpus: vec![0],
            scratch_root: std::env::temp_dir(),
            cache_dir: std::env::temp_dir(),
            seed,
            profile: None,
            stop: None,
            counting: Counting::Clock,
        }
    }

    /// The measure of each half's figure: the run's `--metric`.
    pub fn metric(&self) -> Metric {
        self.counting.metric()
    }

    /// Slices one half runs (for progress and time estimates).
    pub fn slices_per_half(&self) -> u64 {
        (self.warmup + self.samples_per_half) as u64
    }
}

/// Which arm runs first in each pair, from a seeded coin.
pub fn pair_orders(pairs: u32, rng: &mut Rng) -> Vec<[Arm; 2]> {
    (0..pairs).map(|_| pair_order(rng)).collect()
}

/// Which arm runs first in the next pair (one toss of the seeded coin).
pub fn pair_order(rng: &mut Rng) -> [Arm; 2] {
    if rng.next_u64() & 1 == 0 {
        [Arm::Baseline, Arm::Treatment]
    } else {
        [Arm::Treatment, Arm::Baseline]
    }
}

/// A pair's order as stored: "AB" when the baseline ran first, else "BA".
pub fn order_label(order: [Arm; 2]) -> String {
    if order[0] == Arm::Baseline {
        "AB"
    } else {
        "BA"
    }
    .to_string()
}
