//! A track's data (`secperf track`): a branch of a kernel tree followed
//! commit by commit, each tested revision compared with the one tested
//! before it, alarms raised under e-LOND ([`crate::stats::online`]). Plain
//! serde types shared by the engine (`engine::series::track`, which decides), the
//! store (one record per track, rewritten after every test) and the views.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::bisect::Revision;
use crate::stats::online::ELond;

/// What a track follows and asks: the same question gets the same id, so
/// that the same command goes on where it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// The kernel tree (a git checkout), canonical.
    pub source: String,
    /// The branch (or any ref) followed, by its first parents.
    pub branch: String,
    /// The revision the track starts from: the first baseline.
    pub from: Revision,
    /// What every test measures: a workload's name, or the command.
    pub workload: String,
    /// Mechanisms on in every boot (`-m`).
    pub mechanisms: Vec<String>,
    /// The kernel command line of every boot.
    pub append: String,
    /// A config fragment for every build.
    pub config: Option<String>,
    pub metric: crate::model::Metric,
    /// The change that counts, percent: a test alarms when its whole
    /// interval is beyond half of it, either way.
    pub threshold_pct: f64,
    /// The stream's false discovery rate (e-LOND).
    pub alpha: f64,
    /// Every Nth first-parent commit is tested.
    pub batch: usize,
}

/// Which way a change went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Slower,
    Faster,
}

impl Direction {
    pub fn word(self) -> &'static str {
        match self {
            Direction::Slower => "slower",
            Direction::Faster => "faster",
        }
    }
}

/// How the test of one revision ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
pub enum Outcome {
    /// Measured against the revision tested before it: the change (%)
    /// with its interval at the test's level, the pairs, the stored run,
    /// and the alarm, if it raised one.
    Measured {
        #[serde(deserialize_with = "crate::stats::estimate::nan_if_null")]
        estimate: f64,
        #[serde(deserialize_with = "crate::stats::estimate::nan_if_null")]
        ci_low: f64,
        #[serde(deserialize_with = "crate::stats::estimate::nan_if_null")]
        ci_high: f64,
        pairs: u32,
        run_id: Option<i64>,
        alarm: Option<Direction>,
    },
    /// It did not build or boot (why): recorded and skipped; it spends no
    /// level and never alarms, and the next revision is compared with the
    /// last one measured.
    Failed { why: String },
}

/// One tested revision of the track.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub revision: Revision,
    /// Its place on the branch: first-parent commits after `from`.
    pub position: usize,
    /// The revision it was compared with (the last one measured before it,
    /// or `from`).
    pub baseline: Revision,
    /// The e-LOND level it was tested at (the interval's level), for a
    /// measured test.
    pub level: Option<f64>,
    pub outcome: Outcome,
    pub tested_at: DateTime<Utc>,
    /// Seconds building, booting and measuring it.
    pub seconds: f64,
    /// For an alarm: the first commit that made the change, when the batch
    /// held one commit (itself) or a bisection named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub culprit: Option<Revision>,
    /// For an alarm over a batch of several commits: why no culprit is
    /// named yet, or what the bisection inside it found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub culprit_note: Option<String>,
    /// For an alarm over several commits: the bisection inside them (its
    /// id in the store's bisections), once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bisection: Option<String>,
}

impl Point {
    pub fn alarm(&self) -> Option<Direction> {
        match &self.outcome {
            Outcome::Measured { alarm, .. } => *alarm,
            Outcome::Failed { .. } => None,
        }
    }

    pub fn measured(&self) -> bool {
        matches!(self.outcome, Outcome::Measured { .. })
    }
}

/// A track as stored: its question, its stream's state and every test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrackRecord {
    /// The same id for the same question.
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// secperf's arguments, after `secperf`, of the invocation that wrote
    /// it last.
    pub command: Vec<String>,
    pub question: Question,
    /// The e-LOND state after the tests below: what the next test's level
    /// is made of.
    pub stream: ELond,
    /// Every tested revision, in the order tested (the branch's order).
    pub points: Vec<Point>,
}

impl TrackRecord {
    /// The points that raised an alarm.
    pub fn alarms(&self) -> impl Iterator<Item = &Point> {
        self.points.iter().filter(|p| p.alarm().is_some())
    }

    /// The revision the next test compares with: the last one measured,
    /// or `from`.
    pub fn last_measured(&self) -> &Revision {
        self.points
            .iter()
            .rev()
            .find(|p| p.measured())
            .map_or(&self.question.from, |p| &p.revision)
    }
}
