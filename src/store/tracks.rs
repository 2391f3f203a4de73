//! Tracks (`secperf track`): one record each, rewritten after every
//! tested revision, so that the stream's state (tests and alarms so far,
//! which make the next test's level) survives a restart or a kill. The
//! record names its tests' runs by id; those runs are stored as any other.

use anyhow::{Context, Result};

use super::Store;
use super::codec::json_from_sql;
use super::series::SeriesRow;
use crate::model::track::TrackRecord;

/// A stored track in a list: enough to pick one.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrackSummary {
    pub id: String,
    pub updated_at: chrono::DateTime<chrono::Utc>,
    pub source: String,
    pub branch: String,
    pub workload: String,
    pub tested: usize,
    pub alarms: usize,
}

impl Store {
    /// Writes `t`, replacing the record with its id (`created_at` stays
    /// the first one's).
    pub fn put_track(&mut self, t: &TrackRecord) -> Result<()> {
        let row = SeriesRow {
            table: "tracks",
            what: "track",
            id: &t.id,
            created_at: &t.created_at,
            updated_at: &t.updated_at,
            status: None,
        };
        self.put_series_row(&row, t)
    }

    /// The track with id `id` exactly, if stored (how a track finds its
    /// own record to go on).
    pub fn track_by_id(&self, id: &str) -> Result<Option<TrackRecord>> {
        Ok(self
            .series_record::<TrackRecord>("tracks", id)?
            .map(|(mut record, created_at)| {
                record.created_at = created_at;
                record
            }))
    }

    /// The track `spec` names: its id, a unique prefix of it, or `latest`
    /// (the one written last).
    pub fn track(&self, spec: &str) -> Result<TrackRecord> {
        let id = self.id_named(
            "tracks",
            "updated_at",
            spec,
            "track",
            "`secperf results list` lists the tracks stored, or give the --db the track \
             stored its tests in",
        )?;
        self.track_by_id(&id)?
            .context("the track vanished while reading it")
    }

    /// Every stored track, the one written last first.
    pub fn list_tracks(&self) -> Result<Vec<TrackSummary>> {
        let mut stmt = self
            .conn
            .prepare("SELECT record_json FROM tracks ORDER BY updated_at DESC")?;
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        rows.iter()
            .map(|json| {
                let t: TrackRecord = json_from_sql(json, "tracks.record_json")?;
                Ok(TrackSummary {
                    tested: t.points.len(),
                    alarms: t.alarms().count(),
                    id: t.id,
                    updated_at: t.updated_at,
                    source: t.question.source,
                    branch: t.question.branch,
                    workload: t.question.workload,
                })
            })
            .collect()
    }
}
