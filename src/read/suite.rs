//! A suite run read back: the record a suite run keeps in its parameters
//! (enough to plan it again), its AVC counters, and the suite's report as
//! data for the run's document, recomputed from the record. The engine
//! writes the record when it measures a suite (`engine::suite`); every
//! output reads it here.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::model::{Skipped, StoredRun};
use crate::profile::ProfileOpts;
use crate::report::suite::SuiteDoc;
use crate::stats::decision::DecisionOpts;
use crate::store::Store;
use crate::suites::avc::AvcDelta;
use crate::suites::sections::ReportParts;
use crate::suites::{PlanCtx, SuiteDef, SuitePlan};

/// What a suite run records about itself (the run's params), enough to
/// plan it again and print its report later.
#[derive(Debug, Serialize, Deserialize)]
pub struct SuiteRecord {
    pub suite: String,
    pub version: u32,
    pub quick: bool,
    pub cpus: usize,
    pub pairs: u32,
    pub seed: u64,
    pub skipped: Vec<Skipped>,
    /// The plan as measured (for people reading the JSON; the report is
    /// re-planned from suite, version, quick and cpus).
    pub plan: serde_json::Value,
    /// Profiled pairs after each comparison's timed ones (`--profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileOpts>,
}

impl SuiteRecord {
    /// The suite's plan as it was when the run was made.
    pub fn replan(&self, def: &SuiteDef) -> SuitePlan {
        (def.plan)(&PlanCtx {
            quick: self.quick,
            cpus: self.cpus,
        })
    }
}

/// The note name of AVC counters.
pub const AVC_NOTE: &str = "avc";

/// The AVC counters stored with a suite run, when its plan collects them:
/// Some (maybe empty) where SELinux was active or counters were stored,
/// None where there is nothing to say beyond "not active".
pub fn avc_deltas(
    store: &Store,
    run: &StoredRun,
    plan: &SuitePlan,
) -> Result<Option<Vec<AvcDelta>>> {
    if !plan.collect_avc {
        return Ok(None);
    }
    let deltas = store
        .run_notes(run.run_id, AVC_NOTE)?
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<Vec<AvcDelta>, _>>()
        .context("reading the AVC statistics of the run")?;
    let selinux_on = run
        .meta
        .system
        .pointer("/selinux/state")
        .and_then(|s| s.as_str())
        .is_some_and(|s| s == "enforcing" || s == "permissive");
    Ok((selinux_on || !deltas.is_empty()).then_some(deltas))
}

/// The suite part of the document of `run`, a stored run of kind `suite`:
/// its report recomputed from the record in its parameters, the runs
/// section against `baseline` when one is given. Fails, saying why, when
/// the record cannot be read or this secperf has another version of the
/// suite (or none by that name).
pub fn suite_doc(store: &Store, run: &StoredRun, baseline: Option<&StoredRun>) -> Result<SuiteDoc> {
    let record: SuiteRecord = serde_json::from_value(run.meta.params.clone())
        .context("reading the suite's record in the run's parameters")?;
    let Some(def) = crate::suites::find(&record.suite) else {
        bail!(
            "this secperf has no suite '{}' (valid: {})",
            record.suite,
            crate::suites::names()
        );
    };
    if record.version != def.version {
        bail!(
            "the run was made by {} v{}, this secperf has v{}",
            record.suite,
            record.version,
            def.version
        );
    }
    let plan = record.replan(def);
    let avc = avc_deltas(store, run, &plan)?;
    Ok(crate::suites::doc::part(&ReportParts {
        suite: def,
        plan: &plan,
        run,
        baseline,
        avc: avc.as_deref(),
        decision: DecisionOpts::default(),
    }))
}
