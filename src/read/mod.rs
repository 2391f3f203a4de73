//! The read side: the documents every output draws, built from the store.
//! A run's document ([`document::load`]: the stored run, its sweeps,
//! boot arms and policy files, the negative control judged over its final
//! verdicts, a suite run's report recomputed from its record) and a
//! campaign's view ([`campaign::view`]). It sits below the engine, which
//! measures and stores, so that what only reads the store (`serve`, the
//! `results` commands, `report`) needs no part of the engine, and above
//! `suites`, `report` and `store`, which it reads through.
//!
//! - [`document`]: a stored run's document.
//! - [`campaign`]: a stored campaign, side by side per host.
//! - [`control`]: the negative control's judgement.
//! - [`suite`]: a suite run's record and report, read back.

pub mod campaign;
pub mod control;
pub mod document;
pub mod suite;
