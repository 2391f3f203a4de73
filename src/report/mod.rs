//! Turning runs into text and pages for people.
//!
//! [`doc`] is the run document every output of one run renders (built by
//! `read::document` from the store; with [`suite`], a suite run's
//! report as data); [`label`] names workloads, treatments and comparisons
//! once; [`number`] formats every number and words every change and
//! verdict; [`sections`] writes each part of a run once against the
//! [`markup`] interface, whose formats (terminal, plain, email, markdown,
//! csv, html) supply the primitives; [`html`] draws the page; [`export`]
//! is `results export --format csv`.
//!
//! [`model`], [`build`] and [`formats`] are the grid of several
//! configurations side by side: `compare` of stored runs, benchstat, and
//! the data behind the suites' post-shaped tables. [`table`] is the list
//! of stored runs.

pub mod build;
pub mod campaign;
pub mod doc;
pub mod export;
pub mod formats;
pub mod html;
pub mod label;
pub mod markup;
pub mod model;
pub mod number;
pub mod sections;
pub mod suite;
pub mod table;

pub use number::{ci_pct, ns, si};
