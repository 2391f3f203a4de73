//! secperf: measure what Linux kernel security mechanisms cost.
//!
//! The crate is split the way the work is: `workloads` (what is timed, one
//! file each), `runner` (how it is timed: tasks, shared counters, slices),
//! `probe` (the machine's security configuration), `store` (SQLite),
//! `stats` (pure maths), `report` (tables and exports), `suites` (the
//! reference experiments as recipes) and `cli`.

pub mod calibrate;
pub mod cli;
pub mod compare;
pub mod engine;
pub mod error;
pub mod mechanisms;
pub mod model;
pub mod params;
pub mod probe;
pub mod report;
pub mod runner;
pub mod safety;
pub mod stats;
pub mod store;
pub mod suites;
pub mod sys;
pub mod workloads;
