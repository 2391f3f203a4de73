//! Turning results into text for people. [`doc`] is the run document
//! every output of a run renders (with [`suite`], a suite run's report as
//! data), written by [`sections`] through the [`markup`] interface in
//! every format; [`model`] is the grid of rows and configurations with
//! changes and verdicts that `compare` renders through [`formats`] (table,
//! email, markdown, json, csv, benchstat) and [`build`] makes of a run for
//! benchstat; [`number`] is the one place numbers are formatted; [`table`]
//! holds the terminal tables of runs, results and comparisons that are
//! not reports.

pub mod build;
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
