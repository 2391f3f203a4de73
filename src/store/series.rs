//! The row a series' record is stored in, the same for bisections and
//! tracks (`store::bisections`, `store::tracks`): the record whole as JSON
//! under its id, beside the times it was first and last written, and
//! written over by id as the series goes on, `created_at` staying the
//! first one's. A bisection's row also holds its status (for the list);
//! the records themselves differ, each its own model type.

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, ToSql};
use serde::de::DeserializeOwned;

use super::codec::{json_from_sql, time_from_sql, time_to_sql};
use super::{Store, disk_full};

/// A series' record as it is written: which table, and what of it the
/// row holds beside the JSON.
pub(super) struct SeriesRow<'a> {
    /// The table (`bisections`, `tracks`).
    pub table: &'a str,
    /// What the record is, in errors (`bisection`, `track`).
    pub what: &'a str,
    pub id: &'a str,
    pub created_at: &'a DateTime<Utc>,
    pub updated_at: &'a DateTime<Utc>,
    /// The row's status column, for a table that has one.
    pub status: Option<&'a str>,
}

impl Store {
    /// Writes `record` in its row, replacing the one with its id
    /// (`created_at` stays the first one's).
    pub(super) fn put_series_row<T: serde::Serialize>(
        &mut self,
        row: &SeriesRow<'_>,
        record: &T,
    ) -> Result<()> {
        let json = serde_json::to_string(record)
            .with_context(|| format!("cannot encode the {}", row.what))?;
        let (created, updated) = (time_to_sql(row.created_at), time_to_sql(row.updated_at));
        let (sql, values): (String, Vec<&dyn ToSql>) = match &row.status {
            Some(status) => (
                format!(
                    "INSERT INTO {} (id, created_at, updated_at, status, record_json)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(id) DO UPDATE SET updated_at = ?3, status = ?4, record_json = ?5",
                    row.table
                ),
                vec![&row.id, &created, &updated, status, &json],
            ),
            None => (
                format!(
                    "INSERT INTO {} (id, created_at, updated_at, record_json)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(id) DO UPDATE SET updated_at = ?3, record_json = ?4",
                    row.table
                ),
                vec![&row.id, &created, &updated, &json],
            ),
        };
        self.conn
            .execute(&sql, values.as_slice())
            .with_context(|| {
                format!(
                    "cannot record {} {} in {}",
                    row.what,
                    row.id,
                    self.path.display()
                )
            })
            .map_err(|e| disk_full(e, &self.path))?;
        Ok(())
    }

    /// The record stored in `table` under `id` exactly, with the time its
    /// row was first written, if stored.
    pub(super) fn series_record<T: DeserializeOwned>(
        &self,
        table: &str,
        id: &str,
    ) -> Result<Option<(T, DateTime<Utc>)>> {
        let row: Option<(String, String)> = self
            .conn
            .query_row(
                &format!("SELECT created_at, record_json FROM {table} WHERE id = ?1"),
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        row.map(|(created, json)| {
            let record: T = json_from_sql(&json, &format!("{table}.record_json"))?;
            Ok((
                record,
                time_from_sql(&created, &format!("{table}.created_at"))?,
            ))
        })
        .transpose()
    }
}
