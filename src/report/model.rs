//! The shape every output format renders: a report is a grid of rows
//! (workload x tasks, maybe x mechanism) and columns (configurations: the
//! baseline first, then each candidate), with a header saying how it was
//! compared and a footer saying where and how to reproduce it. `compare`
//! builds one and `report::formats` turns it into table, email, markdown,
//! json, csv or benchstat text; a run's grid (`report::build`) feeds
//! benchstat; a suite's sections are grids with the post-shaped tables
//! they are drawn as ([`PostSection`], drawn by `report::sections::post`).

use serde::{Deserialize, Serialize};

use crate::stats::decision::Verdict;

/// How the numbers in a report were compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DesignKind {
    /// A/B pairs in one run (`overhead`): drift cancels out.
    Paired,
    /// Runs from different times, boots or machines (`compare`).
    Unpaired,
    /// One configuration, no comparison (`run`).
    Single,
}

/// One configuration's figure in one row, and how it differs from the
/// row's first (baseline) cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Central value (median) in `Report::unit`.
    #[serde(deserialize_with = "crate::stats::estimate::nan_if_null")]
    pub value: f64,
    /// Every sample behind it, in the same unit (for benchstat and csv).
    pub samples: Vec<f64>,
    /// Coefficient of variation of the samples, percent.
    pub cv_pct: Option<f64>,
    /// % change against the baseline cell (positive = slower/worse, see
    /// `Report::sign_convention`); None for the baseline itself.
    pub change_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub p_value: Option<f64>,
    pub verdict: Option<Verdict>,
    /// mmtests-style summaries of the samples: arithmetic and harmonic mean.
    pub amean: Option<f64>,
    pub hmean: Option<f64>,
    /// Welch's t-test of the means against the baseline (unpaired reports),
    /// beside the Mann-Whitney `p_value` the verdict uses.
    pub welch_p_value: Option<f64>,
}

impl Cell {
    /// A cell of one central value, without samples or comparison yet.
    pub fn of_value(value: f64) -> Cell {
        Cell {
            value,
            samples: Vec::new(),
            cv_pct: None,
            change_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
            p_value: None,
            verdict: None,
            amean: None,
            hmean: None,
            welch_p_value: None,
        }
    }

    /// A cell of `samples` with its median, CV and means; no comparison yet.
    pub fn from_samples(samples: Vec<f64>) -> Cell {
        let d = crate::stats::summary::describe(&samples);
        Cell {
            value: crate::stats::median(&samples).unwrap_or(f64::NAN),
            cv_pct: d.as_ref().map(|d| d.cv_pct),
            amean: d.as_ref().map(|d| d.amean),
            hmean: d.as_ref().map(|d| d.hmean),
            samples,
            change_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
            p_value: None,
            verdict: None,
            welch_p_value: None,
        }
    }
}

/// One row: a workload at a task count (and, for overhead, a mechanism).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub workload: String,
    pub tasks: u32,
    /// Extra row label (the mechanism and variant for `overhead`), or "".
    pub label: String,
    /// The unit of this row's values where rows differ (suite tables mix
    /// ops/s, MB/s and ms per op); None: `Report::unit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// One per `Report::columns`; None where that configuration lacks the row.
    pub cells: Vec<Option<Cell>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// "secperf compare", "secperf overhead", "secperf run".
    pub title: String,
    pub design: DesignKind,
    /// Unit of `Cell::value`: "ns/op".
    pub unit: String,
    /// e.g. "% change: positive = slower than the baseline (more ns/op)".
    pub sign_convention: String,
    /// Configuration names, baseline first ("run 3 base", "run 5 patched").
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    /// Summary lines (geometric mean of changes per column, ...).
    pub summary: Vec<String>,
    /// Things the reader must know (the probes differ in kernel, ...).
    pub warnings: Vec<String>,
    /// Short machine/config description, key/value.
    pub machine: Vec<(String, String)>,
    /// The exact secperf command that reproduces it.
    pub command: String,
}

/// How a post-shaped table (the suites' reports, after the posts they
/// reproduce) lays out rows of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    /// One table per workload, a row per configuration and a column per
    /// task count (the 2004 AVC tables, the 2008 degradation list).
    ConfigRows,
    /// One table per workload, a row per task count and a column per
    /// configuration (mmtests' "Amean N", here the median).
    TaskRows,
    /// Consecutive workloads in one table, a row per workload and task
    /// count and a column per configuration (will-it-scale's "test proc",
    /// UnixBench's sub-tests).
    ItemRows,
}

/// One post-shaped table over some rows of a report: the rows of one
/// workload at its task ladder or, for [`Layout::ItemRows`], of several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostTable {
    pub layout: Layout,
    /// Indices into `Report::rows`, in the table's order.
    pub rows: Vec<usize>,
    /// What a task is in this table: "CPUs", "clients", "threads".
    pub per: String,
}

/// A section of a suite's report: a report (rows: each item at each task
/// count; columns: the configurations) and the post-shaped tables it is
/// drawn as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostSection {
    pub report: Report,
    pub tables: Vec<PostTable>,
}
