//! The suite part of the run document ([`RunDoc::suite`](super::doc::RunDoc)):
//! what a suite run's report says beyond its stored results and
//! comparisons, as data. `suites::doc` fills it from the suite's recipe
//! and the stored run (`read::document` does so for every stored run of
//! kind `suite`; `secperf suite --baseline B` once more with the sections
//! computed against B), and `report::sections::suite` draws it in the
//! shape of the post's tables.

use serde::{Deserialize, Serialize};

use super::model::PostSection;
use crate::model::AvcDelta;

/// A suite run's report as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteDoc {
    /// The suite's name: "lsm-hooks-2020".
    pub name: String,
    /// The version of its recipe the run was made with.
    pub version: u32,
    /// What the post measured, one line.
    pub title: String,
    /// The mailing-list post the suite reproduces.
    pub reproduces: PostCitation,
    /// The plan's notes: ladders capped at this machine's CPUs, where the
    /// suite departs from the post.
    pub notes: Vec<String>,
    /// The configurations of the post that need a reboot or another
    /// kernel, and how to measure them.
    pub other_side: String,
    /// Whether the suite reads the SELinux AVC counters around each
    /// workload.
    pub collects_avc: bool,
    /// The AVC counters stored with the run (its `avc` notes), by
    /// workload; null where SELinux was not active or the suite does not
    /// collect them.
    pub avc: Option<Vec<AvcDelta>>,
    /// The stored run the `runs` section sets beside this one
    /// (`--baseline`); null without one.
    pub baseline_run_id: Option<i64>,
    /// How the baseline run's machine differs from this run's (empty
    /// without a baseline).
    pub differences: Vec<String>,
    /// "This boot, A/B pairs on the live kernel": the mechanisms switched
    /// at run time; null when nothing was paired.
    pub ab: Option<PostSection>,
    /// "This run, current configuration" (with a baseline, the two runs
    /// side by side, unpaired).
    pub runs: PostSection,
}

/// A mailing-list post, cited so that a reader can find it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostCitation {
    /// Who sent the post (and whose work it reports, when someone else's).
    pub author: String,
    /// The day it was sent, `YYYY-MM-DD`.
    pub date: String,
    /// The mailing lists it went to, comma-separated.
    pub list: String,
    /// The exact subject line, as archives index it.
    pub subject: String,
    /// A public archive's address for the message.
    pub link: Option<String>,
}

impl PostCitation {
    /// `Author, "Subject", list, date` (the link is printed apart, whole).
    pub fn text(&self) -> String {
        format!(
            "{}, \"{}\", {}, {}",
            self.author, self.subject, self.list, self.date
        )
    }
}
