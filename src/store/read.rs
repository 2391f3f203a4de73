//! Reading runs back: the list, whole runs, and turning what a user typed
//! (`42`, `latest~1`, a label) into a run id.
//!
//! Everything read from the database is checked on the way out: a bad
//! timestamp, a negative counter or corrupt JSON is an error naming the
//! column and the run or result, never a panic.

use std::collections::HashMap;

use anyhow::{Context, Result, anyhow};
use rusqlite::{OptionalExtension, params};

use super::codec::{f64s_from_json, int_from_sql, json_from_sql, real_from_sql, time_from_sql};
use super::{CHOOSE_ANOTHER, Store, no_run_error, run_exists};
use crate::model::{
    CampaignTag, Mode, RunMeta, RunSummary, Sample, StoredRun, Summary, UnitRate, WorkloadResult,
};
use crate::usage_bail;

/// What a run's comparisons switched and decided: its treatments in order,
/// and its verdicts counted.
pub(super) type Tally = (Vec<String>, std::collections::BTreeMap<String, u32>);

/// The [`Tally`] of every run (`run_id` None) or of one.
pub(super) fn comparison_tally(
    conn: &rusqlite::Connection,
    run_id: Option<i64>,
) -> Result<HashMap<i64, Tally>> {
    let mut stmt = conn.prepare(
        "SELECT run_id, mechanism, variant, verdict, unfinished FROM comparisons
         WHERE ?1 IS NULL OR run_id = ?1 ORDER BY run_id, id",
    )?;
    let mut rows = stmt.query([run_id])?;
    let mut out: HashMap<i64, Tally> = HashMap::new();
    while let Some(row) = rows.next()? {
        let (mechanism, variant): (String, String) = (row.get(1)?, row.get(2)?);
        let treatment = if variant.is_empty() {
            mechanism
        } else {
            format!("{mechanism}:{variant}")
        };
        let verdict: String = if row.get::<_, i64>(4)? != 0 {
            "unfinished".into()
        } else {
            row.get(3)?
        };
        let entry = out.entry(row.get(0)?).or_default();
        if !entry.0.contains(&treatment) {
            entry.0.push(treatment);
        }
        *entry.1.entry(verdict).or_default() += 1;
    }
    Ok(out)
}

impl Store {
    /// All runs, newest first (by start time, then id).
    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        // Result and comparison counts and distinct workloads (in order of
        // first insertion, results first) for all runs in one pass each.
        let mut per_run: HashMap<i64, (u32, u32, Vec<String>)> = HashMap::new();
        for (table, comparisons) in [("results", false), ("comparisons", true)] {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT run_id, workload, COUNT(*) FROM {table}
                 GROUP BY run_id, workload ORDER BY run_id, MIN(id)"
            ))?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let run_id: i64 = row.get(0)?;
                let count: u32 = int_from_sql(row.get(2)?, "number of results")?;
                let workload: String = row.get(1)?;
                let entry = per_run.entry(run_id).or_default();
                if comparisons {
                    entry.1 += count;
                } else {
                    entry.0 += count;
                }
                if !entry.2.contains(&workload) {
                    entry.2.push(workload);
                }
            }
        }

        let mut tallies = comparison_tally(&self.conn, None)?;
        let mut stmt = self.conn.prepare(
            "SELECT id, label, kind, started_at, finished_at, host, system_json FROM runs
             ORDER BY started_at DESC, id DESC",
        )?;
        let mut rows = stmt.query([])?;
        let mut runs = Vec::new();
        while let Some(row) = rows.next()? {
            let run_id: i64 = row.get(0)?;
            let system_json: String = row.get(6)?;
            let (results, comparisons, workloads) = per_run.remove(&run_id).unwrap_or_default();
            let (mechanisms, verdicts) = tallies.remove(&run_id).unwrap_or_default();
            runs.push(RunSummary {
                run_id,
                label: row.get(1)?,
                kind: row.get(2)?,
                started_at: time_from_sql(&row.get::<_, String>(3)?, "runs.started_at")
                    .with_context(|| format!("run {run_id} is corrupt"))?,
                finished_at: row
                    .get::<_, Option<String>>(4)?
                    .map(|t| time_from_sql(&t, "runs.finished_at"))
                    .transpose()
                    .with_context(|| format!("run {run_id} is corrupt"))?,
                host: row.get(5)?,
                kernel: kernel_release(&system_json),
                results,
                comparisons,
                workloads,
                mechanisms,
                verdicts,
            });
        }
        Ok(runs)
    }

    /// Reads a whole run back: metadata, results, samples, in insertion order.
    pub fn load_run(&self, run_id: i64) -> Result<StoredRun> {
        self.load_run_inner(run_id)
            .with_context(|| format!("cannot read run {run_id} from {}", self.path.display()))
    }

    fn load_run_inner(&self, run_id: i64) -> Result<StoredRun> {
        let run = self
            .conn
            .query_row(
                "SELECT label, kind, started_at, finished_at, host, secperf_version, command,
                        params_json, system_json, uuid, campaign, campaign_host
                 FROM runs WHERE id = ?1",
                [run_id],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, Option<String>>(3)?,
                        row.get::<_, String>(4)?,
                        row.get::<_, String>(5)?,
                        row.get::<_, String>(6)?,
                        row.get::<_, String>(7)?,
                        row.get::<_, String>(8)?,
                        (
                            row.get::<_, Option<String>>(9)?,
                            row.get::<_, Option<String>>(10)?,
                            row.get::<_, Option<String>>(11)?,
                        ),
                    ))
                },
            )
            .optional()?;
        let Some((
            label,
            kind,
            started_at,
            finished_at,
            host,
            secperf_version,
            command,
            params,
            system,
            (uuid, campaign, campaign_host),
        )) = run
        else {
            return Err(no_run_error(run_id));
        };
        let meta = RunMeta {
            label,
            kind,
            started_at: time_from_sql(&started_at, "runs.started_at")?,
            host,
            secperf_version,
            command,
            params: json_from_sql(&params, "runs.params_json")?,
            system: json_from_sql(&system, "runs.system_json")?,
        };
        let finished_at = finished_at
            .map(|t| time_from_sql(&t, "runs.finished_at"))
            .transpose()?;

        let mut results = Vec::new();
        let mut stmt = self.conn.prepare(
            "SELECT id, workload, mode, tasks, pinned, cpus_json, params_json, sample_ms,
                    warmup_samples, kept_samples,
                    ops_per_sec_median, ops_per_sec_ci_low, ops_per_sec_ci_high,
                    ns_per_op_median, ns_per_op_ci_low, ns_per_op_ci_high,
                    unit_rate_unit, unit_rate_per_op,
                    unit_rate_per_sec_median, unit_rate_per_sec_ci_low, unit_rate_per_sec_ci_high,
                    started_at, finished_at, child_cpu_json, client_metrics_json
             FROM results WHERE run_id = ?1 ORDER BY id",
        )?;
        let mut samples_stmt = self.conn.prepare(
            "SELECT idx, elapsed_ns, ops, ops_per_sec, ns_per_op, per_task_ops_per_sec_json,
                    involuntary_ctxt_switches, steal_ms, flags_json
             FROM samples WHERE result_id = ?1 ORDER BY id",
        )?;
        let mut rows = stmt.query([run_id])?;
        while let Some(row) = rows.next()? {
            let result_id: i64 = row.get(0)?;
            let summary = |first: usize| -> rusqlite::Result<Summary> {
                Ok(Summary {
                    median: real_from_sql(row.get(first)?),
                    ci_low: real_from_sql(row.get(first + 1)?),
                    ci_high: real_from_sql(row.get(first + 2)?),
                })
            };
            let mut read = || -> Result<WorkloadResult> {
                let mode: String = row.get(2)?;
                let unit_rate = match (
                    row.get::<_, Option<String>>(16)?,
                    row.get::<_, Option<i64>>(17)?,
                ) {
                    (Some(unit), Some(per_op)) => Some(UnitRate {
                        unit,
                        per_op: int_from_sql(per_op, "results.unit_rate_per_op")?,
                        per_sec: summary(18)?,
                    }),
                    (None, None) => None,
                    _ => anyhow::bail!(
                        "unit_rate_unit and unit_rate_per_op must both be set or both be NULL"
                    ),
                };
                Ok(WorkloadResult {
                    workload: row.get(1)?,
                    mode: mode
                        .parse::<Mode>()
                        .map_err(|e| anyhow!("results.mode: {e}"))?,
                    tasks: int_from_sql(row.get(3)?, "results.tasks")?,
                    pinned: row.get(4)?,
                    cpus: json_from_sql(&row.get::<_, String>(5)?, "results.cpus_json")?,
                    params: json_from_sql(&row.get::<_, String>(6)?, "results.params_json")?,
                    sample_ms: int_from_sql(row.get(7)?, "results.sample_ms")?,
                    warmup_samples: int_from_sql(row.get(8)?, "results.warmup_samples")?,
                    samples: int_from_sql(row.get(9)?, "results.kept_samples")?,
                    ops_per_sec: summary(10)?,
                    ns_per_op: summary(13)?,
                    // Counted only in the halves of comparisons, which
                    // keep their figures in their pairs.
                    counted_per_op: None,
                    unit_rate,
                    sample_data: load_samples(&mut samples_stmt, result_id)?,
                    started_at: time_from_sql(&row.get::<_, String>(21)?, "results.started_at")?,
                    finished_at: time_from_sql(&row.get::<_, String>(22)?, "results.finished_at")?,
                    profile: super::comparisons::load_result_profile(&self.conn, result_id)?,
                    child_cpu: row
                        .get::<_, Option<String>>(23)?
                        .map(|j| json_from_sql(&j, "results.child_cpu_json"))
                        .transpose()?,
                    client_metrics: row
                        .get::<_, Option<String>>(24)?
                        .map(|j| json_from_sql(&j, "results.client_metrics_json"))
                        .transpose()?
                        .unwrap_or_default(),
                })
            };
            results.push(read().with_context(|| format!("result {result_id} is corrupt"))?);
        }
        Ok(StoredRun {
            run_id,
            meta,
            finished_at,
            results,
            comparisons: super::comparisons::load_comparisons(&self.conn, run_id)?,
            uuid,
            campaign: campaign.map(|id| CampaignTag {
                id,
                host: campaign_host.unwrap_or_default(),
            }),
        })
    }

    /// Turns what a user typed into a run id: a run id (`42`), `latest`,
    /// `latest~N` (N runs before the latest), a label (its latest run) or
    /// `LABEL~N`. An id that does not exist is tried as a label. The latest
    /// run is the one stored last (the highest id), whatever its stamps say.
    pub fn resolve_run(&self, spec: &str) -> Result<i64> {
        let spec = spec.trim();
        if let Ok(id) = spec.parse::<i64>()
            && run_exists(&self.conn, id)?
        {
            return Ok(id);
        }
        if spec == "latest" {
            return self.nth_latest(None, 0, spec);
        }
        if let Some(back) = spec.strip_prefix("latest~")
            && let Ok(back) = back.parse::<u32>()
        {
            return self.nth_latest(None, back, spec);
        }
        if let Some(id) = self.nth_latest_opt(Some(spec), 0)? {
            return Ok(id);
        }
        if let Some((label, back)) = spec.rsplit_once('~')
            && let Ok(back) = back.parse::<u32>()
            && self.nth_latest_opt(Some(label), 0)?.is_some()
        {
            return self.nth_latest(Some(label), back, spec);
        }
        usage_bail!(
            "no run matches '{spec}': give a run id, a label, `latest` or `latest~N` \
             (see `secperf results list` for ids and labels in {})",
            self.path.display()
        )
    }

    /// The `back`-th run before the newest (with `label`, if given), or a
    /// usage error saying how many there are.
    fn nth_latest(&self, label: Option<&str>, back: u32, spec: &str) -> Result<i64> {
        if let Some(id) = self.nth_latest_opt(label, back)? {
            return Ok(id);
        }
        let count: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM runs WHERE ?1 IS NULL OR label = ?1",
            [label],
            |r| r.get(0),
        )?;
        if count == 0 {
            usage_bail!(
                "no runs recorded yet in {} (start one with `secperf run`, or {CHOOSE_ANOTHER})",
                self.path.display()
            );
        }
        usage_bail!(
            "'{spec}' asks for {back} runs before the latest, but only {count} run(s) are \
             recorded (see `secperf results list`)"
        )
    }

    fn nth_latest_opt(&self, label: Option<&str>, back: u32) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE ?1 IS NULL OR label = ?1
                 ORDER BY id DESC LIMIT 1 OFFSET ?2",
                params![label, back],
                |r| r.get(0),
            )
            .optional()?)
    }
}

fn load_samples(stmt: &mut rusqlite::Statement<'_>, result_id: i64) -> Result<Vec<Sample>> {
    let mut rows = stmt.query([result_id])?;
    let mut samples = Vec::new();
    while let Some(row) = rows.next()? {
        let index: u32 = int_from_sql(row.get(0)?, "samples.idx")?;
        let read = || -> Result<Sample> {
            Ok(Sample {
                index,
                elapsed_ns: int_from_sql(row.get(1)?, "samples.elapsed_ns")?,
                ops: int_from_sql(row.get(2)?, "samples.ops")?,
                ops_per_sec: real_from_sql(row.get(3)?),
                ns_per_op: real_from_sql(row.get(4)?),
                counted_per_op: None,
                per_task_ops_per_sec: f64s_from_json(
                    &row.get::<_, String>(5)?,
                    "samples.per_task_ops_per_sec_json",
                )?,
                involuntary_ctxt_switches: int_from_sql(
                    row.get(6)?,
                    "samples.involuntary_ctxt_switches",
                )?,
                steal_ms: real_from_sql(row.get(7)?),
                flags: json_from_sql(&row.get::<_, String>(8)?, "samples.flags_json")?,
            })
        };
        samples.push(read().with_context(|| format!("sample {index} is corrupt"))?);
    }
    Ok(samples)
}

/// Kernel release from a probe snapshot, leniently (see
/// `probe::MachineFacts`). The list is for display, so an unparsable
/// snapshot shows no kernel rather than failing the list.
pub(super) fn kernel_release(system_json: &str) -> Option<String> {
    let system: serde_json::Value = serde_json::from_str(system_json).ok()?;
    crate::probe::MachineFacts::of(&system).kernel
}
