//! secperf: measure what Linux kernel security mechanisms cost.
//!
//! The modules form layers, each importing only from those below it:
//!
//! - `cli`: arguments, a call into the engine, rendering.
//! - `serve`: the store in a browser (HTTP, the server's pages).
//! - `calibrate`: the A/B method checks itself (A/A, injected slowdowns).
//! - `engine`: what the measuring commands share: planning, the A/B loop
//!   behind a measuring seam, measurements of the current configuration,
//!   suite runs, the run session.
//! - `read`: the read side: the documents every output draws, built from
//!   the store (a run's document, the negative control judged over it, a
//!   suite run's report, a campaign's view).
//! - `suites`: the reference experiments as recipes, and their sections.
//! - `compare`: stored runs side by side, unpaired.
//! - `predict`: a policy's cost predicted from a program's syscall
//!   counts, without switching it.
//! - `report`: the one report model, number formatting, output formats.
//! - `remote`: a shared PostgreSQL store and the OpenSSH client of
//!   campaigns.
//! - `store`: SQLite and its migrations.
//! - `safety`: the state lock and the journal of system-wide changes.
//! - `mechanisms`: one file per security mechanism; `profile`: where the
//!   time goes (perf sampling of profiled halves, symbols, attribution);
//!   `vm`: VM guests booted with virtme-ng (the guest's command line,
//!   its processes, what it records).
//! - `kbuild`: kernels built from source for boot arms (source identity,
//!   patches, the one config, secperf's build trees, the image cache).
//! - `policy`: the policies users bring (OCI seccomp profiles, audit
//!   rules, Landlock sandboxes), parsed and compiled for the mechanisms.
//! - `runner`: how a workload is timed (tasks, shared counters, slices).
//! - `workloads`: what is timed, one file each; `probe`: the machine's
//!   security configuration, one file per item.
//! - `model`: the data every part passes around.
//! - `stats`: pure maths, including the one decision step.
//! - `params`, `sys`, `clients`: parameters; raw syscalls and kernel
//!   queries; the load clients' output read (redis-benchmark, ab, wrk,
//!   pgbench).
//! - `error`: errors and exit codes.
//!
//! Modules named on one line sit side by side: neither imports the other.
//! `tests/layers.rs` checks all of this on the source, and lists the few
//! known exceptions (test code that takes a lock or a fixture from above),
//! each with its reason. `docs/ARCHITECTURE.md` draws the layers, the way
//! a measurement flows through them, and where to add things.

pub mod calibrate;
pub mod cli;
pub mod clients;
pub mod compare;
pub mod engine;
pub mod error;
pub mod kbuild;
pub mod mechanisms;
pub mod model;
pub mod params;
pub mod policy;
pub mod predict;
pub mod probe;
pub mod profile;
pub mod read;
pub mod remote;
pub mod report;
pub mod runner;
pub mod safety;
pub mod serve;
pub mod stats;
pub mod store;
pub mod suites;
pub mod sys;
pub mod vm;
pub mod workloads;

/// Skips for the unit tests, the same file as the integration tests'.
#[cfg(test)]
#[path = "../tests/common/skips.rs"]
pub(crate) mod testing;
