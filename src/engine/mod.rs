//! The engine under the commands: what `run`, `overhead`, `suite` and
//! `calibrate` measure, store and decide. The command line parses
//! arguments, calls in here and renders what comes back.
//!
//! - [`plan`]: what a command will do, decided before anything runs.
//! - [`design`]: one A/B case and its design (pairs, slices, the coin).
//! - [`phantom`]: the active check for phantom audit rules.
//! - [`measurer`]: the seam between the loops and the machine (live, or
//!   scripted in tests).
//! - [`ab`]: randomised interleaved pairs, stored as they finish, decided
//!   together.
//! - [`current`]: measurements of the current configuration.
//! - [`suite`]: a reference experiment's run, which stores its record
//!   (read back, with every run's document, by `crate::read`).
//! - [`session`]: the run around the measurements (store, lock,
//!   interrupts, record, progress).
//! - [`progress`]: the bar or lines on stderr.
//! - [`rerun`]: repeating a stored run from what was stored.

pub mod ab;
pub mod boots;
pub mod campaign;
pub mod current;
pub mod overhead;
pub mod phantom;
pub mod plan;
mod plan_calibrations;
pub mod probes;
pub mod progress;
pub mod rerun;
pub mod series;
pub mod session;
pub mod startup;
pub mod suite;
pub mod sweep;
pub mod trial;
