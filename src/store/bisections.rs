//! Bisections (`secperf bisect`): one record each, written after every
//! step, so that an interrupted bisection shows how far it got. The
//! record names its steps' runs by id; those runs are stored as any
//! other, and deleting one leaves the bisection's own figures intact.

use super::Store;
use super::codec::json_from_sql;
use super::series::SeriesRow;
use crate::model::bisect::{BisectionRecord, Status};
use anyhow::{Context, Result};

/// A stored bisection in a list: enough to pick one.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BisectionSummary {
    pub id: String,
    pub updated_at: chrono::DateTime<chrono::Utc>,
    pub status: Status,
    pub workload: String,
    pub revisions: usize,
    pub steps: usize,
    pub verdict: String,
}

impl Store {
    /// Writes `b`, replacing the record with its id (`created_at` stays
    /// the first one's).
    pub fn put_bisection(&mut self, b: &BisectionRecord) -> Result<()> {
        let status = serde_json::to_value(b.status)?
            .as_str()
            .unwrap_or("in-progress")
            .to_string();
        let row = SeriesRow {
            table: "bisections",
            what: "bisection",
            id: &b.id,
            created_at: &b.created_at,
            updated_at: &b.updated_at,
            status: Some(&status),
        };
        self.put_series_row(&row, b)
    }

    /// The bisection `spec` names: its id, a unique prefix of it, or
    /// `latest` (the one written last).
    pub fn bisection(&self, spec: &str) -> Result<BisectionRecord> {
        let id = self.id_named(
            "bisections",
            "updated_at",
            spec,
            "bisection",
            "`secperf results list` lists the bisections stored, or give the --db the \
             bisection stored its steps in",
        )?;
        let (mut record, created_at): (BisectionRecord, _) = self
            .series_record("bisections", &id)?
            .context("the bisection vanished while reading it")?;
        record.created_at = created_at;
        Ok(record)
    }

    /// Every stored bisection, the one written last first.
    pub fn list_bisections(&self) -> Result<Vec<BisectionSummary>> {
        let mut stmt = self
            .conn
            .prepare("SELECT record_json FROM bisections ORDER BY updated_at DESC")?;
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        rows.iter()
            .map(|json| {
                let b: BisectionRecord = json_from_sql(json, "bisections.record_json")?;
                Ok(BisectionSummary {
                    steps: b.outcome.steps.len(),
                    revisions: b.outcome.revisions.len(),
                    id: b.id,
                    updated_at: b.updated_at,
                    status: b.status,
                    workload: b.workload,
                    verdict: b.outcome.verdict,
                })
            })
            .collect()
    }
}
