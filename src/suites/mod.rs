//! Suites: named, versioned recipes that reproduce, with one command
//! (`secperf suite NAME`), five measurements of security mechanisms that
//! kernel developers published on mailing lists. Each suite carries the
//! post's [`Citation`] (author, date, list, subject, archive link), printed
//! in its report header and by `secperf suite list`; `docs/experiments.md`
//! says what each post measured and what the suite reproduces of it.
//!
//! A suite is data: which workloads at which task ladders are measured
//! under the configuration the machine has now (the "current side", stored
//! as ordinary results so `secperf compare` reads them across boots and
//! kernels), which mechanisms are switched on and off at run time as
//! randomised A/B pairs (stored as comparisons), the sample plan, and the
//! layout of its report, modelled on the post's own table. Configurations
//! that only a reboot can change (SELinux at boot, another kernel) cannot
//! be paired: the suite measures this side with a label and tells the user
//! how to measure the other side and put both in one table
//! (`--baseline`).
//!
//! One file per suite, registered in [`SUITES`]. The version changes when a
//! recipe changes what it measures, so stored runs of different versions
//! are never read as the same experiment.

pub mod access_2023;
pub mod audit_2017;
pub mod avc;
pub mod avc_2004;
pub mod creds_2008;
pub mod doc;
pub mod lsm_hooks_2020;
pub mod sections;

use anyhow::Result;
use serde::Serialize;

use crate::model::{Mode, Params};
use crate::workloads::{self, WorkloadDef};

/// A recipe. Plain data plus one function that sizes the plan to the
/// machine and the pass (`--quick`).
pub struct SuiteDef {
    pub name: &'static str,
    /// Bumped when the recipe changes what is measured.
    pub version: u32,
    /// The mailing-list post it reproduces.
    pub post: Citation,
    /// What the post measured, one line.
    pub title: &'static str,
    /// What the suite measures, for `suite list` and `--help`.
    pub summary: &'static str,
    /// How the report tables are laid out.
    pub layout: Layout,
    pub plan: fn(&PlanCtx) -> SuitePlan,
    /// The configurations of the post that need a reboot or another kernel,
    /// and how to measure them: printed after every run.
    pub other_side: &'static str,
}

/// A mailing-list post, cited so that a reader can find it: who wrote
/// it, when, on which list, under which exact subject, and where it is
/// archived when an archive link is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Citation {
    /// Who sent the post (and whose work it reports, when someone else's).
    pub author: &'static str,
    /// The day it was sent, `YYYY-MM-DD`.
    pub date: &'static str,
    /// The mailing lists it went to, comma-separated.
    pub list: &'static str,
    /// The exact subject line, as archives index it.
    pub subject: &'static str,
    /// A public archive's address for the message.
    pub link: Option<&'static str>,
}

impl Citation {
    /// `Author, "Subject", list, date` (the link is printed apart, whole).
    pub fn text(&self) -> String {
        format!(
            "{}, \"{}\", {}, {}",
            self.author, self.subject, self.list, self.date
        )
    }
}

/// What a plan depends on.
#[derive(Debug, Clone, Copy)]
pub struct PlanCtx {
    pub quick: bool,
    /// CPUs tasks can be pinned to.
    pub cpus: usize,
}

/// How the tables of a suite are drawn (one [`Layout`] per item, or the
/// suite's).
pub use crate::report::model::Layout;

/// How a percentage is signed in a suite's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PctStyle {
    /// The change of the value shown: +8.4% walk time is 8.4% slower,
    /// +121% ops/s is 121% more work done, in every suite. (audit-2017's
    /// post printed mmtests' gain, positive better; a table whose value
    /// is baseline x (1 + change) must print the change for the two to
    /// agree: issue 44 found a slower row printed with a lower value.)
    Change,
}

/// The figure a table shows for a workload, computed from ns/op per task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Metric {
    /// Milliseconds per operation (one tree walk): lower is better.
    MsPerOp,
    /// Nanoseconds per operation of one task: lower is better.
    NsPerOp,
    /// Operations per second, all tasks: higher is better.
    OpsPerSec,
    /// Thousands of operations per second, all tasks (Kcalls/sec).
    KOpsPerSec,
    /// Megabytes (10^6 bytes) per second of the workload's unit.
    MBPerSec,
    /// Kilobytes (1024 bytes, as ApacheBench and UnixBench count them) per
    /// second of the workload's unit.
    KBPerSec,
}

impl Metric {
    pub fn unit(self) -> &'static str {
        match self {
            Metric::MsPerOp => "ms per op",
            Metric::NsPerOp => "ns per op",
            Metric::OpsPerSec => "ops/s",
            Metric::KOpsPerSec => "K ops/s",
            Metric::MBPerSec => "MB/s",
            Metric::KBPerSec => "KB/s",
        }
    }

    /// Whether a larger value is a slower system.
    pub fn is_time(self) -> bool {
        matches!(self, Metric::MsPerOp | Metric::NsPerOp)
    }

    /// The value for `tasks` tasks each taking `ns_per_op` per operation;
    /// `units_per_op` is the workload's unit count (bytes) per operation,
    /// needed by the byte rates (None: not known, the value is None).
    pub fn from_ns(self, ns_per_op: f64, tasks: u32, units_per_op: Option<u64>) -> Option<f64> {
        let ops_per_sec = tasks as f64 * 1e9 / ns_per_op;
        Some(match self {
            Metric::MsPerOp => ns_per_op / 1e6,
            Metric::NsPerOp => ns_per_op,
            Metric::OpsPerSec => ops_per_sec,
            Metric::KOpsPerSec => ops_per_sec / 1e3,
            Metric::MBPerSec => ops_per_sec * units_per_op? as f64 / 1e6,
            Metric::KBPerSec => ops_per_sec * units_per_op? as f64 / 1024.0,
        })
    }

    /// A percent change of ns/op as a percent change of this metric
    /// (rates move the other way: +100% time is -50% ops/s).
    pub fn pct_from_time_pct(self, pct: f64) -> f64 {
        if self.is_time() {
            pct
        } else {
            (1.0 / (1.0 + pct / 100.0) - 1.0) * 100.0
        }
    }
}

/// One workload measured at a task ladder.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    pub workload: &'static str,
    /// Non-default parameters.
    pub params: Vec<(&'static str, String)>,
    pub tasks: Vec<usize>,
    pub mode: Mode,
    pub metric: Metric,
    /// The table layout of this item when not the suite's.
    pub layout: Option<Layout>,
    /// What a task is in this item's tables: "CPUs", "clients", "threads".
    pub per: &'static str,
    /// Row/table name in the report ("File Copy 256B"); the workload name
    /// when empty.
    pub title: String,
}

impl Item {
    pub fn new(workload: &'static str, tasks: Vec<usize>, metric: Metric) -> Item {
        Item {
            workload,
            params: Vec::new(),
            tasks,
            mode: Mode::Process,
            metric,
            layout: None,
            per: "tasks",
            title: String::new(),
        }
    }

    pub fn per(mut self, per: &'static str) -> Item {
        self.per = per;
        self
    }

    pub fn laid_out(mut self, layout: Layout) -> Item {
        self.layout = Some(layout);
        self
    }

    pub fn threads(mut self) -> Item {
        self.mode = Mode::Thread;
        self
    }

    pub fn param(mut self, key: &'static str, value: impl Into<String>) -> Item {
        self.params.push((key, value.into()));
        self
    }

    pub fn titled(mut self, title: impl Into<String>) -> Item {
        self.title = title.into();
        self
    }

    pub fn def(&self) -> &'static WorkloadDef {
        workloads::find(self.workload)
            .unwrap_or_else(|| panic!("suite names unknown workload {}", self.workload))
    }

    /// The workload's parameters with defaults filled in.
    pub fn full_params(&self) -> Params {
        let given: Params = self
            .params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        self.def().params_with_defaults(&given)
    }

    pub fn name(&self) -> String {
        if self.title.is_empty() {
            self.workload.to_string()
        } else {
            self.title.clone()
        }
    }
}

/// How long each measurement of the current side runs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RunShape {
    pub samples: u32,
    pub sample_ms: u64,
    pub warmup: u32,
}

impl RunShape {
    /// Syscall-sized workloads: 10 samples of 300 ms, or 5 of 100 ms with
    /// `--quick`, after one warmup slice.
    pub fn standard(quick: bool) -> RunShape {
        if quick {
            RunShape {
                samples: 5,
                sample_ms: 100,
                warmup: 1,
            }
        } else {
            RunShape {
                samples: 10,
                sample_ms: 300,
                warmup: 1,
            }
        }
    }
}

/// How each A/B comparison is measured (pairs are sized by the CLI so
/// that Holm correction over the suite's comparisons can succeed).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct AbShape {
    pub min_pairs: u32,
    pub sample_ms: u64,
    pub samples_per_half: u32,
    pub warmup: u32,
}

impl AbShape {
    /// Syscall-sized workloads: at least 12 pairs of halves with 2 samples
    /// of 60 ms, or 10 pairs of one 30 ms sample with `--quick`.
    pub fn standard(quick: bool) -> AbShape {
        if quick {
            AbShape {
                min_pairs: 10,
                sample_ms: 30,
                samples_per_half: 1,
                warmup: 1,
            }
        } else {
            AbShape {
                min_pairs: 12,
                sample_ms: 60,
                samples_per_half: 2,
                warmup: 1,
            }
        }
    }
}

/// Everything a suite does on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct SuitePlan {
    /// Measured under the current configuration, stored as results.
    pub current: Vec<Item>,
    pub run: RunShape,
    /// Treatments switched at run time (`Treatment::parse` specs), each
    /// measured as A/B pairs on every item of `ab_items`.
    pub treatments: Vec<String>,
    pub ab_items: Vec<Item>,
    pub ab: AbShape,
    /// What the baseline arm of the A/B tables is called ("audit off").
    pub baseline_name: String,
    pub pct_style: PctStyle,
    /// Read /sys/fs/selinux/avc/cache_stats around each current-side item.
    pub collect_avc: bool,
    /// Said under the tables: ladders capped by the machine, departures
    /// from the post.
    pub notes: Vec<String>,
}

impl SuitePlan {
    /// Every workload the plan names exists and its parameters are valid.
    pub fn validate(&self) -> Result<()> {
        for item in self.current.iter().chain(&self.ab_items) {
            (item.def().validate)(&item.full_params())?;
        }
        for t in &self.treatments {
            crate::mechanisms::Treatment::parse(t)?;
        }
        Ok(())
    }
}

/// The catalog of suites.
pub static SUITES: &[&SuiteDef] = &[
    &creds_2008::SUITE,
    &avc_2004::SUITE,
    &audit_2017::SUITE,
    &access_2023::SUITE,
    &lsm_hooks_2020::SUITE,
];

pub fn find(name: &str) -> Option<&'static SuiteDef> {
    SUITES.iter().copied().find(|s| s.name == name)
}

pub fn names() -> String {
    SUITES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// The post's task ladder capped at the CPUs there are; when capping
/// dropped counts, the CPU count itself is added so the top of the
/// machine is measured. Returns the ladder and, when capped, a note.
pub fn capped_ladder(post: &[usize], cpus: usize, what: &str) -> (Vec<usize>, Option<String>) {
    let cpus = cpus.max(1);
    let mut ladder: Vec<usize> = post.iter().copied().filter(|&n| n <= cpus).collect();
    if ladder.len() == post.len() {
        return (ladder, None);
    }
    if !ladder.contains(&cpus) {
        ladder.push(cpus);
    }
    let post_text = post
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let ladder_text = ladder
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    (
        ladder,
        Some(format!(
            "{what} capped at the {cpus} CPUs of this machine: {ladder_text} (the post used {post_text})"
        )),
    )
}

/// 1, 2, 4, ... up to the CPU count, which is always included.
pub fn doubling_ladder(cpus: usize) -> Vec<usize> {
    let cpus = cpus.max(1);
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
        .take_while(|&n| n < cpus)
        .collect();
    v.push(cpus);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_plans_valid_work_on_small_and_large_machines() {
        for s in SUITES {
            for quick in [false, true] {
                for cpus in [1, 2, 16, 64] {
                    let p = (s.plan)(&PlanCtx { quick, cpus });
                    p.validate()
                        .unwrap_or_else(|e| panic!("{} cpus={cpus}: {e:#}", s.name));
                    assert!(
                        !p.current.is_empty() || !p.ab_items.is_empty(),
                        "{}",
                        s.name
                    );
                    for item in p.current.iter().chain(&p.ab_items) {
                        assert!(
                            item.tasks.iter().all(|&n| (1..=cpus).contains(&n)),
                            "{} {}: ladder {:?} on {cpus} CPUs",
                            s.name,
                            item.workload,
                            item.tasks
                        );
                    }
                    assert_eq!(p.treatments.is_empty(), p.ab_items.is_empty());
                }
            }
        }
    }

    #[test]
    fn names_are_unique_and_findable() {
        for s in SUITES {
            assert!(std::ptr::eq(find(s.name).unwrap(), *s));
        }
        let mut n: Vec<&str> = SUITES.iter().map(|s| s.name).collect();
        n.dedup();
        assert_eq!(n.len(), 5);
        assert!(find("nope").is_none());
    }

    #[test]
    fn every_suite_cites_its_post_completely() {
        for s in SUITES {
            let c = &s.post;
            for (what, v) in [
                ("author", c.author),
                ("list", c.list),
                ("subject", c.subject),
            ] {
                assert!(!v.trim().is_empty(), "{}: empty {what}", s.name);
            }
            // An ISO date whose year is the one in the suite's name.
            let year = s.name.rsplit('-').next().unwrap();
            assert!(
                c.date.len() == 10 && c.date.starts_with(year) && c.date.as_bytes()[4] == b'-',
                "{}: date {}",
                s.name,
                c.date
            );
            if let Some(link) = c.link {
                assert!(link.starts_with("https://"), "{}: {link}", s.name);
            }
            let text = c.text();
            assert!(
                text.contains(c.subject) && text.contains(c.author),
                "{text}"
            );
            // A citation, not a path to a private file.
            assert!(
                text.starts_with(c.author) && !text.contains(".txt"),
                "{text}"
            );
        }
    }

    #[test]
    fn ladder_capping_says_what_it_dropped() {
        let (l, note) = capped_ladder(&[1, 3, 5, 7, 12, 16], 2, "threads");
        assert_eq!(l, vec![1, 2]);
        assert!(note.unwrap().contains("the post used 1, 3, 5, 7, 12, 16"));
        let (l, note) = capped_ladder(&[1, 3, 5, 7, 12, 16], 16, "threads");
        assert_eq!(l, vec![1, 3, 5, 7, 12, 16]);
        assert!(note.is_none());
        let (l, _) = capped_ladder(&[1, 2, 4, 8], 6, "clients");
        assert_eq!(l, vec![1, 2, 4, 6]);
        assert_eq!(doubling_ladder(1), vec![1]);
        assert_eq!(doubling_ladder(6), vec![1, 2, 4, 6]);
        assert_eq!(doubling_ladder(8), vec![1, 2, 4, 8]);
    }

    #[test]
    fn metrics_convert_time_to_rates() {
        assert_eq!(Metric::MsPerOp.from_ns(2e6, 1, None), Some(2.0));
        assert_eq!(Metric::OpsPerSec.from_ns(1000.0, 2, None), Some(2e6));
        assert_eq!(Metric::KOpsPerSec.from_ns(1000.0, 1, None), Some(1e3));
        assert_eq!(
            Metric::MBPerSec.from_ns(1e6, 1, Some(1_000_000)),
            Some(1000.0)
        );
        assert_eq!(Metric::KBPerSec.from_ns(1e6, 1, None), None);
        // Twice the time is half the rate.
        assert!((Metric::OpsPerSec.pct_from_time_pct(100.0) + 50.0).abs() < 1e-9);
        assert_eq!(Metric::NsPerOp.pct_from_time_pct(12.5), 12.5);
    }
}
