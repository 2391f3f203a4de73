//! A bisection's data (`secperf bisect`): its revisions, each step's
//! measured slowdown and class, how it ended, and the record the run
//! store keeps of it. The decisions themselves are `engine::series::bisect`'s;
//! these are plain serde types, shared with the store and the report.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::stats::estimate::nan_if_null;

/// What a step found of one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Good,
    Bad,
    Undecided,
    /// Did not build or boot, or `--skip`.
    Skip,
}

impl Class {
    pub fn word(self) -> &'static str {
        match self {
            Class::Good => "good",
            Class::Bad => "bad",
            Class::Undecided => "undecided",
            Class::Skip => "skip",
        }
    }
}

/// One revision of the series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    pub commit: String,
    pub subject: String,
}

impl Revision {
    /// "abc123def456 (subject)".
    pub fn short(&self) -> String {
        format!("{} ({})", self.abbrev(), self.subject)
    }

    /// The first 12 hex digits of the commit.
    pub fn abbrev(&self) -> &str {
        &self.commit[..self.commit.len().min(12)]
    }
}

/// What testing one revision against `--good` gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Tested {
    /// The slowdown against good (%) with its interval at the step's
    /// level, the pairs, and the stored run.
    Measured {
        #[serde(deserialize_with = "nan_if_null")]
        estimate: f64,
        #[serde(deserialize_with = "nan_if_null")]
        ci_low: f64,
        #[serde(deserialize_with = "nan_if_null")]
        ci_high: f64,
        pairs: u32,
        run_id: Option<i64>,
    },
    /// It did not build or boot (why).
    Failed(String),
}

/// A step as the bisection records it (also what resume reads back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Index in the series (the bad endpoint is the last).
    pub index: usize,
    pub revision: Revision,
    pub class: Class,
    pub tested: Tested,
    /// Seconds building and booting this step.
    pub seconds: f64,
}

/// How a bisection ended (or, while it runs, where it stands).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub good: Revision,
    pub revisions: Vec<Revision>,
    pub decisions: usize,
    pub step_alpha: f64,
    /// The endpoint check, then the steps, in the order measured.
    pub steps: Vec<Step>,
    /// The first bad commit, when found.
    pub first_bad: Option<Revision>,
    /// Otherwise what is left, and why.
    pub candidates: Vec<Revision>,
    pub verdict: String,
    /// A `git bisect log`-compatible log.
    pub log: Vec<String>,
}

/// Where a stored bisection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Measuring, or interrupted (the same command goes on).
    InProgress,
    /// Ended: a first bad commit, candidates, or undecided.
    Finished,
    /// Stopped before any step: the endpoints do not differ.
    Stopped,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::InProgress => "in progress",
            Status::Finished => "finished",
            Status::Stopped => "stopped",
        }
    }
}

/// A bisection as the run store keeps it: what was asked, and the
/// outcome so far (rewritten after every step). Each measured step's run
/// is stored as a run of its own (`Tested::Measured::run_id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectionRecord {
    /// The same id for the same question (source, endpoints, workload,
    /// threshold, ...): going on after Ctrl-C rewrites this record.
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// secperf's arguments, after `secperf`.
    pub command: Vec<String>,
    pub source: String,
    /// What every step measures: a workload's name, or the command.
    pub workload: String,
    /// The kernel command line of every boot.
    pub append: String,
    /// Mechanisms on in every boot (`-m`).
    pub mechanisms: Vec<String>,
    pub threshold_pct: f64,
    pub alpha: f64,
    /// What the steps measure per operation (time for bisections stored
    /// before the metric existed).
    #[serde(default)]
    pub metric: crate::model::Metric,
    pub status: Status,
    pub outcome: Outcome,
    /// Every step measured so far, in order, undecided attempts and
    /// failed builds included: what the same command goes on from after
    /// Ctrl-C or a kill (each undecided attempt keeps its share of the
    /// error budget). Empty in bisections stored before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Step>,
}

impl BisectionRecord {
    /// The steps a bisection stored as `record` goes on from: its
    /// attempts, or for one stored before they were kept, its outcome's
    /// steps.
    pub fn resumed_steps(record: Option<&BisectionRecord>) -> Vec<Step> {
        match record {
            Some(b) if !b.attempts.is_empty() => b.attempts.clone(),
            Some(b) => b.outcome.steps.clone(),
            None => Vec::new(),
        }
    }

    /// The step that measured revision `index` last (an undecided attempt
    /// measured again counts as its later one).
    pub fn step_of(&self, index: usize) -> Option<&Step> {
        self.outcome.steps.iter().rev().find(|s| s.index == index)
    }
}
