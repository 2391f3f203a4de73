//! Turning results into text for people. [`model`] is the one shape every
//! output renders (a grid of rows and configurations with changes and
//! verdicts); [`build`] makes one from what `run` and `overhead` measured;
//! [`formats`] renders it (table, email, markdown, json, csv, benchstat, and
//! the post-shaped tables of suites); [`number`] is the one place numbers
//! are formatted; [`table`] holds the terminal tables of runs, results and
//! comparisons that are not reports.

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
pub mod table;

pub use number::{ci_pct, ns, si};
