//! The A/B loop: randomised interleaved pairs, measured through a
//! [`Measurer`](self::measurer::Measurer), stored, then decided
//! together. A table of sequential comparisons runs in rounds (one pair of
//! each running comparison per round,
//! [`crate::stats::sequential::rounds`]); a fixed one comparison after
//! comparison.
//!
//! For each pair a coin decides whether the baseline or the treatment runs
//! first (AB or BA); each half starts fresh tasks on the same CPUs (so
//! fork-time state such as an audit context is right), discards a warmup
//! slice and keeps `samples_per_half` slices of the same length in both
//! halves. A half's figure is the median ns/op of its slices. Per pair
//! r = ln(treatment / baseline); the statistics (median of r, bootstrap
//! interval over pairs, Wilcoxon signed-rank) live in
//! [`crate::stats::paired`], the verdicts of a whole table in
//! [`crate::stats::decision`]. Running A and B in alternation is what turns
//! slow machine drift into noise instead of a false difference.
//!
//! One file per job, each using only the ones listed below it (no cycle
//! between them, as `tests/layers.rs` checks):
//!
//! - `table`: a table of comparisons, measured (fixed ones one after the
//!   other, sequential ones in `rounds`), stored and decided together.
//! - `rounds`: a table of sequential comparisons, a pair of each running
//!   comparison per round.
//! - `comparison`: one comparison, pair after pair.
//! - `profiled`: the profiled pairs after a comparison's timed pairs, and
//!   the comparison they finish.
//! - `pair`: one pair, its halves in AB or BA order.
//! - `decided`: the table's final verdicts, applied and stored.
//! - `summary`: a comparison's figures from its pairs.
//! - `words`: what the progress lines say.

mod comparison;
pub mod counting;
mod decided;
pub mod design;
pub mod measurer;
mod pair;
mod profiled;
mod rounds;
mod summary;
mod table;
pub mod warmup;
mod words;

pub use comparison::{Stopped, compare, measure};
pub use decided::decide_all;
pub(super) use decided::store_decided;
pub use summary::log_ratios;
pub(super) use summary::{arm_median, pair_log_ratios, summarise};
pub use table::measure_comparisons;
pub use words::{describe_measured, own_alpha, unmeasured_slices};

#[cfg(test)]
mod tests;
