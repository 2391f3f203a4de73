//! Calibrations (`secperf calibrate`): one row per calibration, with the
//! figures later commands need as columns (the spread of per-pair
//! log-ratios, seconds per pair, the smallest detectable effect) and the
//! whole report as JSON. `overhead --precision` can size its pairs from
//! [`latest_calibration`] with `calibrate::pairs_for_precision`.

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use rusqlite::params;

use super::codec::{
    int_from_sql, json_from_sql, json_to_sql, real_from_sql, time_from_sql, time_to_sql,
};
use super::{Store, no_run_error, run_exists};

/// One stored calibration.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Calibration {
    /// Row id (ignored by [`Store::add_calibration`]).
    pub id: i64,
    /// The `runs` row (kind "calibrate") it belongs to.
    pub run_id: i64,
    pub workload: String,
    pub created_at: DateTime<Utc>,
    /// A/A comparisons made, and how many had a verdict other than no change.
    pub aa_comparisons: u32,
    pub aa_false_positives: u32,
    /// Pooled within-comparison standard deviation of per-pair ln(B/A)
    /// (NaN when it could not be estimated).
    pub sd_log_ratio: f64,
    /// Wall-clock seconds of one A/B pair with the calibrated design.
    pub pair_seconds: f64,
    /// The time budget the smallest detectable effect refers to.
    pub budget_s: f64,
    /// Smallest slowdown (percent) detectable with 80% power in the budget,
    /// and the pairs that fit in it.
    pub min_effect_pct: f64,
    pub min_effect_pairs: u32,
    /// The full report (`calibrate::CalibrationReport`), including
    /// the design (`json["design"]`) the figures are valid for.
    pub json: serde_json::Value,
}

impl Calibration {
    /// The A/A pairs of the calibration, for resampling null comparisons
    /// (`overhead --equivalence auto`): every A/A comparison's per-pair
    /// log ratios, centred on that comparison's median (so slow drift
    /// between comparisons does not widen them). Read from the stored
    /// report field by field: a report may hold nulls where a figure was
    /// not finite. Empty when it has none.
    pub fn aa_pool(&self) -> Vec<f64> {
        aa_pool(&self.json)
    }
}

/// [`Calibration::aa_pool`] of a stored report.
pub fn aa_pool(json: &serde_json::Value) -> Vec<f64> {
    let Some(comparisons) = json["aa"]["comparisons"].as_array() else {
        return Vec::new();
    };
    comparisons
        .iter()
        .flat_map(|c| {
            let r: Vec<f64> = c["pair_data"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| {
                    let (b, t) = crate::model::PairData::arms_of_json(p)?;
                    let v = (t / b).ln();
                    v.is_finite().then_some(v)
                })
                .collect();
            let m = crate::stats::median(&r).unwrap_or(0.0);
            r.into_iter().map(move |v| v - m)
        })
        .collect()
}

impl Store {
    /// Stores a calibration for its run, committed before returning.
    /// Returns the new row id.
    pub fn add_calibration(&mut self, c: &Calibration) -> Result<i64> {
        let context = || {
            format!(
                "cannot store the calibration of {} for run {}",
                c.workload, c.run_id
            )
        };
        if !run_exists(&self.conn, c.run_id)? {
            return Err(no_run_error(c.run_id)).with_context(context);
        }
        self.conn
            .execute(
                "INSERT INTO calibrations (run_id, workload, created_at, aa_comparisons,
                     aa_false_positives, sd_log_ratio, pair_seconds, budget_s, min_effect_pct,
                     min_effect_pairs, json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    c.run_id,
                    c.workload,
                    time_to_sql(&c.created_at),
                    c.aa_comparisons,
                    c.aa_false_positives,
                    finite(c.sd_log_ratio),
                    finite(c.pair_seconds),
                    finite(c.budget_s),
                    finite(c.min_effect_pct),
                    c.min_effect_pairs,
                    json_to_sql(&c.json, "calibrations.json")?,
                ],
            )
            .with_context(context)?;
        Ok(self.conn.last_insert_rowid())
    }
}

/// NaN and infinities are stored as NULL (read back as NaN).
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// The newest calibration of `workload` (by creation time, then id), or
/// `None` when the workload was never calibrated in this database (run
/// `secperf calibrate -w WORKLOAD`).
pub fn latest_calibration(store: &Store, workload: &str) -> Result<Option<Calibration>> {
    Ok(calibrations_of(store, workload)?.into_iter().next())
}

/// Every calibration of `workload`, newest first (by creation time, then
/// id).
pub fn calibrations_of(store: &Store, workload: &str) -> Result<Vec<Calibration>> {
    calibrations_where(store, "workload = ?1", &workload, &format!("of {workload}"))
}

/// The calibration stored by run `run_id` (`secperf results list`), if
/// that run was a calibration.
pub fn calibration_of_run(store: &Store, run_id: i64) -> Result<Option<Calibration>> {
    Ok(
        calibrations_where(store, "run_id = ?1", &run_id, &format!("of run {run_id}"))?
            .into_iter()
            .next(),
    )
}

/// The calibrations matching `condition` (on `?1` = `value`), newest first.
fn calibrations_where(
    store: &Store,
    condition: &str,
    value: &dyn rusqlite::ToSql,
    what: &str,
) -> Result<Vec<Calibration>> {
    let mut stmt = store
        .conn
        .prepare(&format!(
            "SELECT id, run_id, workload, created_at, aa_comparisons, aa_false_positives,
                    sd_log_ratio, pair_seconds, budget_s, min_effect_pct, min_effect_pairs, json
             FROM calibrations WHERE {condition}
             ORDER BY created_at DESC, id DESC"
        ))
        .with_context(|| format!("cannot read calibrations {what}"))?;
    let rows = stmt
        .query_map([value], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, Option<f64>>(6)?,
                r.get::<_, Option<f64>>(7)?,
                r.get::<_, Option<f64>>(8)?,
                r.get::<_, Option<f64>>(9)?,
                r.get::<_, i64>(10)?,
                r.get::<_, String>(11)?,
            ))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .with_context(|| format!("cannot read calibrations {what}"))?;
    rows.into_iter()
        .map(
            |(id, run_id, workload, created, aa, fp, sd, ps, budget, eff, pairs, json)| {
                let read = || -> Result<Calibration> {
                    Ok(Calibration {
                        id,
                        run_id,
                        workload,
                        created_at: time_from_sql(&created, "calibrations.created_at")?,
                        aa_comparisons: int_from_sql(aa, "calibrations.aa_comparisons")?,
                        aa_false_positives: int_from_sql(fp, "calibrations.aa_false_positives")?,
                        sd_log_ratio: real_from_sql(sd),
                        pair_seconds: real_from_sql(ps),
                        budget_s: real_from_sql(budget),
                        min_effect_pct: real_from_sql(eff),
                        min_effect_pairs: int_from_sql(pairs, "calibrations.min_effect_pairs")?,
                        json: json_from_sql(&json, "calibrations.json")?,
                    })
                };
                read().with_context(|| format!("calibration {id} is corrupt"))
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunMeta;

    fn run(store: &mut Store) -> i64 {
        store
            .begin_run(&RunMeta {
                label: String::new(),
                kind: "calibrate".into(),
                started_at: Utc::now(),
                host: "h".into(),
                secperf_version: "0".into(),
                command: "secperf calibrate".into(),
                params: serde_json::json!({}),
                system: serde_json::json!({}),
            })
            .unwrap()
    }

    fn calibration(run_id: i64, workload: &str, sd: f64, at: &str) -> Calibration {
        Calibration {
            id: 0,
            run_id,
            workload: workload.into(),
            created_at: at.parse().unwrap(),
            aa_comparisons: 12,
            aa_false_positives: 1,
            sd_log_ratio: sd,
            pair_seconds: 0.37,
            budget_s: 60.0,
            min_effect_pct: f64::NAN,
            min_effect_pairs: 162,
            json: serde_json::json!({"design": {"pairs": 10}}),
        }
    }

    #[test]
    fn latest_calibration_per_workload_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("c.db")).unwrap();
        assert_eq!(latest_calibration(&store, "getppid").unwrap(), None);
        let r = run(&mut store);
        store
            .add_calibration(&calibration(r, "getppid", 0.02, "2026-01-01T00:00:00Z"))
            .unwrap();
        let newer = calibration(r, "getppid", 0.03, "2026-01-02T00:00:00Z");
        let id = store.add_calibration(&newer).unwrap();
        store
            .add_calibration(&calibration(r, "open", 0.5, "2026-01-03T00:00:00Z"))
            .unwrap();
        let got = latest_calibration(&store, "getppid").unwrap().unwrap();
        assert_eq!(got.id, id);
        assert_eq!(got.sd_log_ratio, 0.03);
        assert!(
            got.min_effect_pct.is_nan(),
            "NaN stored as NULL reads back as NaN"
        );
        assert_eq!(got.json["design"]["pairs"], 10);
        assert_eq!(got.min_effect_pairs, 162);
        // Deleting the run deletes its calibrations.
        store.delete_run(r).unwrap();
        assert_eq!(latest_calibration(&store, "getppid").unwrap(), None);
    }

    #[test]
    fn a_calibration_needs_its_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("c.db")).unwrap();
        let e = store
            .add_calibration(&calibration(99, "getppid", 0.02, "2026-01-01T00:00:00Z"))
            .unwrap_err();
        assert!(format!("{e:#}").contains("no run with id 99"), "{e:#}");
    }

    #[test]
    fn the_aa_pool_reads_a_stored_report_with_nulls() {
        let json = serde_json::json!({
            "aa": {"comparisons": [
                {"pair_data": [
                    {"baseline_ns_per_op": 100.0, "treatment_ns_per_op": 110.0},
                    {"baseline_per_op": 100.0, "treatment_per_op": 100.0},
                    {"baseline_per_op": 100.0, "treatment_per_op": 90.0}
                ]},
                {"pair_data": [{"baseline_ns_per_op": null, "treatment_ns_per_op": 1.0}]}
            ]},
            "min_effect": {"budget_min_effect_pct": null}
        });
        let pool = aa_pool(&json);
        assert_eq!(pool.len(), 3);
        // Centred on the comparison's median (0 here).
        assert!((pool[0] - 1.1f64.ln()).abs() < 1e-12);
        assert_eq!(pool[1], 0.0);
        assert!(aa_pool(&serde_json::json!({})).is_empty());
    }
}
