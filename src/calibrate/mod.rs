//! `secperf calibrate`: the A/B method checks itself on this machine
//! (docs/methodology.md).
//!
//! Three experiments, all with the same design and the same decision rule
//! as `secperf overhead` (randomised interleaved pairs,
//! [`crate::engine::ab::compare`]; sequential unless `--pairs` is given,
//! so by default it checks the sequential stopping rule):
//!
//! 1. **A/A**: K comparisons of the `none` control against itself, each
//!    decided as a table of one. A verdict "slower" or "faster" is a false
//!    positive; the rate comes with a 95% Wilson interval. The target is at
//!    most 5% (alpha). Also counted: intervals that exclude 0 at all, and
//!    the pairs a comparison took.
//! 2. **Injected slowdowns**: an allow-all seccomp filter costs a stable,
//!    known time per system call: about 10% of `getppid` and 2.5% of
//!    `open` here ([`DEFAULT_INJECTED`], whatever `-w` is). Its "truth" is
//!    measured independently by T long comparisons of a fixed number of
//!    pairs (3x the budget each), pooled: exp(median of all their
//!    log-ratios) - 1. Then M short comparisons (the normal design) are
//!    run, interleaved with the truth blocks so drift affects both alike;
//!    reported are the detection rate (verdict "slower"), the coverage
//!    (the fraction of 95% intervals that contain the truth; should be at
//!    least 95%) and the pairs they took.
//! 3. **Smallest detectable effect**: the pooled within-comparison spread
//!    of the A/A log-ratios (robust: 1.4826 x MAD, since a preempted half
//!    gives heavy tails that the median ignores) gives, by a normal approximation
//!    ([`min_detectable_effect_pct`]), the smallest slowdown detected
//!    with 80% power at alpha 0.05 by 10 pairs and by as many pairs as fit
//!    in the time budget (budget / measured seconds per pair).
//!
//! `plan` says what to measure (the counts from the budget, the schedule,
//! each step's case and design); `run` measures it through a measuring
//! callback (so the bookkeeping is tested without a machine), or through
//! the engine's [`Measurer`](crate::engine::ab::measurer::Measurer), and
//! stores it; `outcome` computes the [`CalibrationReport`] (plain data in
//! `model::calibration`) from the measured comparisons;
//! `report::sections::calibration` prints it. The command line is in
//! `cli/calibrate.rs`.

mod outcome;
mod plan;
pub mod replay;
mod run;

pub use crate::stats::power::{Proportion, min_detectable_effect_pct, pairs_for_precision};
pub use outcome::{
    AA_TARGET_PCT, AaResult, CalibrationReport, DesignSummary, InjectedResult, MinEffect, Truth,
};
pub use plan::{
    Counts, DEFAULT_INJECTED, Injected, MAX_COMPARISONS, MIN_AA, MIN_INJECTED_COMPARISONS, Plan,
    QUICK_AA, QUICK_INJECTED, QUICK_INJECTED_COMPARISONS, Record, Request, Role, Step,
    TRUTH_COMPARISONS, TRUTH_PAIRS_FACTOR, counts, estimate_comparison_s,
};
pub use run::{measure, measure_stored, run, store_report};

#[cfg(test)]
mod tests;
