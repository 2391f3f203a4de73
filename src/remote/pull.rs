//! Reading a shared PostgreSQL store as if it were a results file.
//!
//! `results list/show/export`, `compare` and `report` read SQLite. Given a
//! `postgresql://` URL instead, the shared store's rows are copied, ids and
//! all, into a private temporary SQLite file of this secperf's schema, and
//! the command reads that: one code path for every output, and run ids that
//! are the shared store's own. The copy is whole (one query per table), so
//! its cost grows with the store; docs/guide.md gives the figures.

use std::path::PathBuf;

use anyhow::{Context, Result};
use postgres::fallible_iterator::FallibleIterator;
use rusqlite::types::Value;

use super::schema::tables;
use crate::store::Store;

/// A shared store copied to a temporary file, removed when dropped.
pub struct Pulled {
    pub store: Store,
    _dir: tempfile::TempDir,
}

impl Pulled {
    /// The copy's file (for more read-only connections to it).
    pub fn path(&self) -> PathBuf {
        self._dir.path().join("remote.db")
    }
}

/// Copies the shared store at `url` into a temporary SQLite store, shown
/// in messages and documents as the URL (without password).
pub fn pull(url: &str) -> Result<Pulled> {
    let shown = super::conn::redact(url);
    let mut client = super::conn::connect(url)?;
    pull_from(&mut client, &shown)
}

/// Copies the shared store `client` is connected to (shown as `shown`)
/// into a temporary SQLite store, with whatever transaction the client
/// is in (`secperf serve` reads in a read-only one).
pub fn pull_from(client: &mut postgres::Client, shown: &str) -> Result<Pulled> {
    let shown = shown.to_string();
    super::schema::check_readable(client, &shown)?;
    let dir = tempfile::Builder::new()
        .prefix("secperf-remote-")
        .tempdir()
        .context("creating a temporary directory for the shared store's copy")?;
    let path: PathBuf = dir.path().join("remote.db");
    let mut store = Store::open(&path)?;
    copy_all(client, store.connection(), &shown)
        .with_context(|| format!("reading the shared store {shown}"))?;
    let mut store = Store::open_read_only(&path)?;
    store.show_as(&shown);
    Ok(Pulled { store, _dir: dir })
}

fn copy_all(
    client: &mut postgres::Client,
    local: &mut rusqlite::Connection,
    shown: &str,
) -> Result<()> {
    let schema = tables(local)?;
    let tx = local.transaction()?;
    for t in &schema {
        let remote_cols = super::schema::remote_columns(client, &t.name)?;
        if remote_cols.is_empty() {
            continue;
        }
        let cols: Vec<&str> = t
            .column_names()
            .into_iter()
            .filter(|c| remote_cols.iter().any(|r| r == c))
            .collect();
        let quoted: Vec<String> = cols.iter().map(|c| format!("\"{c}\"")).collect();
        let order = if t.has_generated_id() {
            " ORDER BY id"
        } else {
            ""
        };
        let marks: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
        let mut stmt = tx.prepare(&format!(
            "INSERT INTO \"{}\" ({}) VALUES ({})",
            t.name,
            quoted.join(", "),
            marks.join(", ")
        ))?;
        // Streamed row by row: memory stays flat however large the store.
        let mut rows = client
            .query_raw(
                &format!("SELECT {} FROM \"{}\"{order}", quoted.join(", "), t.name),
                std::iter::empty::<i32>(),
            )
            .with_context(|| format!("reading table {} of {shown}", t.name))?;
        while let Some(row) = rows
            .next()
            .with_context(|| format!("reading table {} of {shown}", t.name))?
        {
            let values = (0..cols.len())
                .map(|i| super::value::from_row(&row, i))
                .collect::<Result<Vec<Value>>>()?;
            stmt.execute(rusqlite::params_from_iter(values))
                .with_context(|| format!("copying a row of {}", t.name))?;
        }
    }
    tx.commit()?;
    Ok(())
}
