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
    /// Where the interval shown is at its table's level (`ci_alpha`, 1 -
    /// its confidence) rather than the cell's own 95%: the own interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ci_low_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ci_high_pct: Option<f64>,
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
            ci_alpha: None,
            own_ci_low_pct: None,
            own_ci_high_pct: None,
        }
    }

    /// The value a table shows for this cell, `baseline` being its row's
    /// first: with a change, the baseline's value x (1 + change), so that
    /// the two values shown give the printed change whatever the change
    /// estimates (a paired ratio, a Hodges-Lehmann shift); otherwise its
    /// own value (the median of its samples, which stays in the data).
    pub fn shown_value(&self, baseline: Option<&Cell>) -> f64 {
        match (self.change_pct, baseline) {
            (Some(change), Some(b)) if b.value.is_finite() => b.value * (1.0 + change / 100.0),
            _ => self.value,
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
            ci_alpha: None,
            own_ci_low_pct: None,
            own_ci_high_pct: None,
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

/// Host, kernel, CPU and LSMs of a run, key by value: a grid's machine
/// line (`compare`, a run's grid).
pub fn machine(meta: &crate::model::RunMeta) -> Vec<(String, String)> {
    let m = crate::probe::MachineFacts::of(&meta.system);
    let unknown = || "unknown".to_string();
    vec![
        ("host".into(), meta.host.clone()),
        ("kernel".into(), m.kernel.clone().unwrap_or_else(unknown)),
        (
            "cpu".into(),
            format!(
                "{} x {}",
                m.cpu_model.clone().unwrap_or_else(unknown),
                m.cpus.map_or_else(unknown, |n| n.to_string())
            ),
        ),
        ("lsms".into(), m.lsms.join(",")),
        ("secperf".into(), meta.secperf_version.clone()),
    ]
}

#[cfg(test)]
pub(crate) mod testing {
    //! Small hand-built grids the formats' tests share.

    use super::*;

    pub fn cell(value: f64, change: Option<f64>, ci: (f64, f64), p: f64, v: Verdict) -> Cell {
        Cell {
            value,
            samples: vec![value * 0.99, value, value * 1.01],
            cv_pct: Some(1.2),
            change_pct: change,
            ci_low_pct: change.map(|_| ci.0),
            ci_high_pct: change.map(|_| ci.1),
            p_value: change.map(|_| p),
            verdict: change.map(|_| v),
            amean: Some(value),
            hmean: Some(value),
            welch_p_value: None,
            ci_alpha: None,
            own_ci_low_pct: None,
            own_ci_high_pct: None,
        }
    }

    pub fn base(value: f64) -> Option<Cell> {
        Some(cell(value, None, (0.0, 0.0), 1.0, Verdict::NoChange))
    }

    /// 2 rows x 3 columns: one slower, one no-change, one faster, one
    /// missing cell.
    pub fn small() -> Report {
        Report {
            title: "secperf compare".into(),
            design: DesignKind::Unpaired,
            unit: "ns/op".into(),
            sign_convention: "% change: positive = slower than the baseline (more ns/op)".into(),
            columns: vec![
                "run 3 base".into(),
                "run 5 patched".into(),
                "run 7 rcu".into(),
            ],
            rows: vec![
                Row {
                    workload: "getpid".into(),
                    tasks: 1,
                    label: String::new(),
                    unit: None,
                    cells: vec![
                        base(297.5),
                        Some(cell(334.1, Some(12.3), (9.4, 16.5), 0.002, Verdict::Slower)),
                        Some(cell(
                            299.0,
                            Some(0.5),
                            (-3.2, 8.07),
                            0.41,
                            Verdict::NoChange,
                        )),
                    ],
                },
                Row {
                    workload: "tree_walk".into(),
                    tasks: 16,
                    label: String::new(),
                    unit: None,
                    cells: vec![
                        base(45_000.0),
                        None,
                        Some(cell(
                            40_500.0,
                            Some(-10.0),
                            (-12.1, -7.7),
                            0.0001,
                            Verdict::Faster,
                        )),
                    ],
                },
            ],
            summary: vec![
                "geometric mean of changes: run 5 patched +12.3%, run 7 rcu -5.0%".into(),
            ],
            warnings: vec!["the runs were on different kernels (6.8.0 vs 6.9.1)".into()],
            machine: vec![
                ("host".into(), "box".into()),
                ("kernel".into(), "6.8.0-45-generic".into()),
                ("cpu".into(), "AMD EPYC 7763 64-Core Processor".into()),
            ],
            command: "secperf compare 3 5 7 --format email".into(),
        }
    }

    /// Long workload, label and configuration names, non-ASCII text, many
    /// columns, a comma and quotes in names: everything a fixed-width
    /// format has to cope with.
    pub fn awkward() -> Report {
        let columns: Vec<String> = vec![
            "baseline kernel 6.8.0-45-generic with no LSM at all".into(),
            "landlock \u{2192} fs-ro, \"strict\"".into(),
            "seccomp-bpf filter with 200 rules".into(),
            "selinux enforcing targeted policy".into(),
            "apparmor".into(),
        ];
        let n = columns.len();
        let mut cells = vec![base(1234.5)];
        for i in 1..n {
            let (ch, v) = match i % 3 {
                0 => (-4.25, Verdict::Faster),
                1 => (48.2, Verdict::Slower),
                _ => (0.3, Verdict::NoChange),
            };
            cells.push(Some(cell(
                1234.5 * (1.0 + ch / 100.0),
                Some(ch),
                (ch - 1.0, ch + 1.0),
                0.01,
                v,
            )));
        }
        let mut missing = cells.clone();
        missing[2] = None;
        Report {
            title: "secperf overhead \u{2014} a very long title that goes on and on past the width of an email line".into(),
            design: DesignKind::Paired,
            unit: "ns/op".into(),
            sign_convention: "% change: positive = slower than the baseline (more ns/op)".into(),
            columns,
            rows: vec![
                Row {
                    workload: "a_really_quite_extraordinarily_long_workload_name_for_testing".into(),
                    tasks: 4_000_000_000,
                    label: "landlock:fs-ro rules=\"1000\", extra=\u{b1}1 and a long tail of parameters that never ends at all".into(),
                    unit: None,
                    cells: cells.clone(),
                },
                Row {
                    workload: "open,close".into(),
                    tasks: 1,
                    label: "seccomp:allow/kill".into(),
                    unit: None,
                    cells: missing,
                },
            ],
            summary: vec!["\u{b5}-benchmark overhead \u{2248} 48% for landlock; this line is long enough to need wrapping in an email".into()],
            warnings: vec!["stdout\nwas not a terminal".into()],
            machine: vec![
                ("cpu".into(), "Intel(R) Xeon(R) Platinum 8480+ \u{d7} 2 sockets, 112 cores".into()),
                ("mitigations".into(), "spectre_v2=retpoline,ibpb spec_store_bypass=seccomp l1tf=flush".into()),
            ],
            command: "secperf overhead --mechanisms 'landlock:fs-ro seccomp:allow' --workloads a_really_quite_extraordinarily_long_workload_name_for_testing,open --tasks 1,4000000000 --pairs 30 --format email --output /tmp/some/very/long/path/that/keeps/going/and/going/and/going/report.txt".into(),
        }
    }

    /// One configuration only (`secperf run`).
    pub fn single() -> Report {
        let mut r = small();
        r.design = DesignKind::Single;
        r.title = "secperf run".into();
        r.columns.truncate(1);
        for row in &mut r.rows {
            row.cells.truncate(1);
        }
        r.summary.clear();
        r.warnings.clear();
        r
    }

    pub fn all() -> Vec<Report> {
        vec![small(), awkward(), single()]
    }
}

#[cfg(test)]
mod tests {
    use super::testing::cell;
    use crate::stats::decision::Verdict;

    #[test]
    fn a_shown_value_gives_the_printed_change() {
        let base = cell(200.0, None, (0.0, 0.0), 1.0, Verdict::NoChange);
        // The run's median says +5%, the change (a Hodges-Lehmann shift)
        // +4%: the value shown is the baseline's x 1.04.
        let later = cell(210.0, Some(4.0), (2.0, 6.0), 0.01, Verdict::Slower);
        assert!((later.shown_value(Some(&base)) - 208.0).abs() < 1e-9);
        assert_eq!(later.value, 210.0, "the data keeps the median");
        assert_eq!(base.shown_value(Some(&base)), 200.0);
        assert_eq!(later.shown_value(None), 210.0);
    }
}
