//! The run document: everything any output says about one run, in one
//! value. It is built once, from the store, by `read::document` (after a
//! measuring command finishes, or for a stored run), and every output
//! renders from it: the terminal table, every `--format`, `--json`,
//! `results show`, `results export` and the HTML page. So a command's
//! `--json` is, field for field, `results export --json` of the run it
//! stored.
//!
//! Its JSON is the stored run (`run_id`, the run's metadata, `results`,
//! `comparisons`) with what the reports add: the database it is in, the
//! negative control's judgement, the sweeps, the policy files measured,
//! the problems met reading it back and, for a suite run, the suite's
//! report as data ([`SuiteDoc`]: its post, notes, AVC counters and the
//! sections' tables).

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::suite::SuiteDoc;
use crate::model::{
    Comparison, NegativeControl, PolicyFile, RunMeta, RunSettings, StoredRun, Sweep, WorkloadResult,
};
use crate::probe::MachineFacts;

/// One run as every output shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDoc {
    pub run_id: i64,
    /// The run's identity across databases (absent in runs read from files
    /// of secperf before schema 11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The campaign and host that measured the run, when a campaign did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<crate::model::CampaignTag>,
    /// The results database the run is stored in.
    pub db: PathBuf,
    #[serde(flatten)]
    pub meta: RunMeta,
    /// None: the run stopped before it finished (interrupted or failed).
    pub finished_at: Option<DateTime<Utc>>,
    /// Measurements of one configuration (`run`, suites).
    pub results: Vec<WorkloadResult>,
    /// A/B comparisons (`overhead`, suites), with their final verdicts.
    pub comparisons: Vec<Comparison>,
    /// The negative control's judgement; null when none was measured.
    pub negative_control: Option<NegativeControl>,
    /// `--sweep`: each sweep's points and fitted line.
    pub sweeps: Vec<Sweep>,
    /// The policy files the run measured, as read.
    pub policy_files: Vec<PolicyFile>,
    /// Parts of the run that could not be read back (said, not fatal).
    pub problems: Vec<String>,
    /// A suite run's report as data; absent for other runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteDoc>,
    /// A kernel A/B across boots (`--kernel`): each arm's kernel, command
    /// line and boots; absent for other runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boot_arms: Vec<crate::vm::arms::ArmRecord>,
}

impl RunDoc {
    /// The document of a stored run with nothing added yet.
    pub fn of(run: StoredRun, db: PathBuf) -> RunDoc {
        RunDoc {
            run_id: run.run_id,
            uuid: run.uuid,
            campaign: run.campaign,
            db,
            meta: run.meta,
            finished_at: run.finished_at,
            results: run.results,
            comparisons: run.comparisons,
            negative_control: None,
            sweeps: Vec::new(),
            policy_files: Vec::new(),
            problems: Vec::new(),
            suite: None,
            boot_arms: Vec::new(),
        }
    }

    /// "run 3" or "label (run 3)".
    pub fn name(&self) -> String {
        if self.meta.label.is_empty() {
            format!("run {}", self.run_id)
        } else {
            format!("{} (run {})", self.meta.label, self.run_id)
        }
    }

    /// The settings stored with the run (seed, thresholds, skipped
    /// mechanisms, treatment notes).
    pub fn settings(&self) -> RunSettings {
        RunSettings::of(&self.meta.params)
    }

    /// What its figures are: time, or counted instructions.
    pub fn metric(&self) -> crate::model::Metric {
        crate::model::metric::of_params(&self.meta.params)
    }

    /// Kernel, CPU and LSMs of the machine it ran on.
    pub fn machine(&self) -> MachineFacts {
        MachineFacts::of(&self.meta.system)
    }
}
