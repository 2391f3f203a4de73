//! `results push`: copying runs from a local results file into a shared
//! PostgreSQL store, each exactly once.
//!
//! A run is known everywhere by the UUID it got when it started. Each run
//! is copied in one transaction that begins by inserting its `runs` row
//! with `ON CONFLICT (uuid) DO NOTHING`: a run already there (pushed
//! before, by this host or another copy of its file) is skipped, and a push
//! cut off half-way (network, server restart, Ctrl-C) leaves either the
//! whole run or nothing of it, so pushing again completes it. When the
//! connection is lost, the push reconnects (for up to about 15 s) and goes
//! on with the run it was copying; each reconnection is reported.
//!
//! Unfinished runs (still measuring, or interrupted) are not pushed: a run
//! pushed while measuring would be stored incomplete for good.
//!
//! Bisections and tracks follow the runs (when every run is pushed): each
//! is one row, whose record names its runs by id, so the ids are turned
//! into the shared store's (through the runs' uuids) and the row is
//! written, or rewritten when the local one is newer (a track grows).

use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::types::Value;

use super::schema::{Table, tables};
use super::value::Cell;
use crate::store::{RUN_CHILDREN, Store};

/// Rows per INSERT for tables nothing references (samples, pairs).
const BATCH_ROWS: usize = 200;

/// How long a lost connection is retried, in waits between attempts.
const RECONNECT_WAITS_MS: &[u64] = &[250, 500, 1000, 2000, 4000, 8000];

/// What a push did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct PushReport {
    /// The store pushed to, without its password.
    pub remote: String,
    /// Runs copied: (local id, id in the shared store, uuid).
    pub pushed: Vec<PushedRun>,
    /// Runs that were already in the shared store.
    pub already_there: usize,
    /// Unfinished runs left out.
    pub unfinished: usize,
    /// Connections lost and made again, with the error that ended each.
    pub reconnects: Vec<String>,
    /// Bisections and tracks copied or brought up to date (pushed with
    /// every run, not with --run).
    pub bisections: usize,
    pub tracks: usize,
    /// Runs a pushed bisection or track names that the shared store does
    /// not have (unfinished, or not pushed): named there as no run.
    pub unlinked_runs: usize,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PushedRun {
    pub local_id: i64,
    pub remote_id: i64,
    pub uuid: String,
}

/// Pushes the finished runs of `store` (only `only`, when given) to the
/// shared store at `url`. `progress` is told (done, total) after each run.
pub fn push(
    store: &mut Store,
    url: &str,
    only: Option<&[i64]>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PushReport> {
    let shown = super::conn::redact(url);
    let mut client = super::conn::connect(url)?;
    let local = store.connection();
    super::schema::migrate_remote(local, &mut client, &shown)?;
    let schema = tables(local)?;
    let mut report = PushReport {
        remote: shown.clone(),
        ..PushReport::default()
    };
    let runs: Vec<(i64, String, bool)> = {
        let mut stmt =
            local.prepare("SELECT id, uuid, finished_at IS NOT NULL FROM runs ORDER BY id")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut todo = Vec::new();
    for (id, uuid, finished) in runs {
        if only.is_some_and(|o| !o.contains(&id)) {
            continue;
        }
        if !finished {
            report.unfinished += 1;
            continue;
        }
        todo.push((id, uuid));
    }
    let remote_uuids: std::collections::HashSet<String> = client
        .query("SELECT uuid FROM runs", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let total = todo.len();
    for (done, (id, uuid)) in todo.into_iter().enumerate() {
        if remote_uuids.contains(&uuid) {
            report.already_there += 1;
            progress(done + 1, total);
            continue;
        }
        let mut waits = RECONNECT_WAITS_MS.iter();
        loop {
            match push_run(local, &schema, &mut client, id) {
                Ok(Some(remote_id)) => {
                    report.pushed.push(PushedRun {
                        local_id: id,
                        remote_id,
                        uuid: uuid.clone(),
                    });
                    break;
                }
                Ok(None) => {
                    report.already_there += 1;
                    break;
                }
                Err(e) if lost_connection(&client, &e) => {
                    let Some(wait) = waits.next() else {
                        return Err(e).with_context(|| {
                            format!(
                                "pushing run {id} to {shown}: the connection was lost and could \
                                 not be made again; {} runs were pushed before, and pushing \
                                 again sends only the rest",
                                report.pushed.len()
                            )
                        });
                    };
                    report.reconnects.push(format!("{e:#}"));
                    std::thread::sleep(Duration::from_millis(*wait));
                    if let Ok(c) = super::conn::connect(url) {
                        client = c;
                    }
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("pushing run {id} to {shown}"));
                }
            }
        }
        progress(done + 1, total);
    }
    if only.is_none() {
        push_records(local, &schema, &mut client, &mut report)
            .with_context(|| format!("pushing bisections and tracks to {shown}"))?;
    }
    Ok(report)
}

/// Copies the bisections and tracks, their run ids turned into the shared
/// store's: a row the shared store has is rewritten only when the local
/// one was updated later.
fn push_records(
    local: &rusqlite::Connection,
    schema: &[Table],
    client: &mut postgres::Client,
    report: &mut PushReport,
) -> Result<()> {
    let local_uuids: std::collections::HashMap<i64, String> = {
        let mut stmt = local.prepare("SELECT id, uuid FROM runs")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let remote_ids: std::collections::HashMap<String, i64> = client
        .query("SELECT uuid, id FROM runs", &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut unlinked = 0;
    let mut remap = |id: &mut Option<i64>| {
        if let Some(local_id) = *id {
            *id = local_uuids
                .get(&local_id)
                .and_then(|u| remote_ids.get(u))
                .copied();
            unlinked += id.is_none() as usize;
        }
    };
    let mut tx = client.transaction()?;
    for table in ["bisections", "tracks"] {
        let Some(t) = schema.iter().find(|t| t.name == table) else {
            continue;
        };
        let cols = t.column_names();
        let json_at = cols
            .iter()
            .position(|c| *c == "record_json")
            .context("no record_json column")?;
        let ids: Vec<String> = {
            let mut stmt = local.prepare(&format!("SELECT id FROM \"{table}\" ORDER BY id"))?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        let set: Vec<String> = cols
            .iter()
            .filter(|c| **c != "id" && **c != "created_at")
            .map(|c| format!("\"{c}\" = EXCLUDED.\"{c}\""))
            .collect();
        let tail = format!(
            "ON CONFLICT (id) DO UPDATE SET {} WHERE \"{table}\".updated_at < EXCLUDED.updated_at \
             RETURNING 1::BIGINT",
            set.join(", ")
        );
        for id in ids {
            for mut row in local_rows(local, t, "id", &Value::Text(id.clone()), &[])? {
                let Value::Text(json) = &row[json_at] else {
                    continue;
                };
                let json = if table == "tracks" {
                    let mut r: crate::model::track::TrackRecord = serde_json::from_str(json)
                        .with_context(|| format!("reading track {id}"))?;
                    for p in &mut r.points {
                        if let crate::model::track::Outcome::Measured { run_id, .. } =
                            &mut p.outcome
                        {
                            remap(run_id);
                        }
                    }
                    serde_json::to_string(&r)?
                } else {
                    let mut b: crate::model::bisect::BisectionRecord =
                        serde_json::from_str(json)
                            .with_context(|| format!("reading bisection {id}"))?;
                    for s in b.outcome.steps.iter_mut().chain(b.attempts.iter_mut()) {
                        if let crate::model::bisect::Tested::Measured { run_id, .. } = &mut s.tested
                        {
                            remap(run_id);
                        }
                    }
                    serde_json::to_string(&b)?
                };
                row[json_at] = Value::Text(json);
                if insert(&mut tx, t, &cols, &row, &tail)?.is_some() {
                    if table == "tracks" {
                        report.tracks += 1;
                    } else {
                        report.bisections += 1;
                    }
                }
            }
        }
    }
    tx.commit()?;
    report.unlinked_runs = unlinked;
    Ok(())
}

/// Whether an error means the connection is gone (rather than the server
/// refusing the data).
fn lost_connection(client: &postgres::Client, err: &anyhow::Error) -> bool {
    if client.is_closed() {
        return true;
    }
    err.chain()
        .filter_map(|e| e.downcast_ref::<postgres::Error>())
        .any(|e| {
            e.is_closed()
                || e.as_db_error().is_some_and(|db| {
                    // admin_shutdown, crash_shutdown, cannot_connect_now
                    matches!(db.code().code(), "57P01" | "57P02" | "57P03")
                })
                || e.as_db_error().is_none()
        })
}

/// Copies one run with everything under it in one transaction. None when
/// the shared store already has a run with its uuid.
fn push_run(
    local: &rusqlite::Connection,
    schema: &[Table],
    client: &mut postgres::Client,
    run_id: i64,
) -> Result<Option<i64>> {
    let table = |name: &str| -> Result<&Table> {
        schema
            .iter()
            .find(|t| t.name == name)
            .with_context(|| format!("the local schema has no table {name}"))
    };
    let mut tx = client.transaction()?;
    // The campaign that pulled the run, first: the run names it.
    let campaign: Option<String> =
        local.query_row("SELECT campaign FROM runs WHERE id = ?1", [run_id], |r| {
            r.get(0)
        })?;
    if let Some(campaign) = campaign {
        let t = table("campaigns")?;
        let rows = local_rows(local, t, "id", &Value::Text(campaign), &[])?;
        for row in rows {
            insert(
                &mut tx,
                t,
                &t.column_names(),
                &row,
                "ON CONFLICT (id) DO NOTHING",
            )?;
        }
    }
    let runs = table("runs")?;
    let run_cols: Vec<&str> = runs
        .column_names()
        .into_iter()
        .filter(|c| *c != "id")
        .collect();
    let row = local_rows(local, runs, "id", &Value::Integer(run_id), &["id"])?
        .pop()
        .with_context(|| format!("no run {run_id} in the local store"))?;
    let Some(remote_run) = insert(
        &mut tx,
        runs,
        &run_cols,
        &row,
        "ON CONFLICT (uuid) DO NOTHING RETURNING id",
    )?
    else {
        return Ok(None);
    };
    for (name, children) in RUN_CHILDREN {
        let t = table(name)?;
        let cols: Vec<&str> = t
            .column_names()
            .into_iter()
            .filter(|c| *c != "id")
            .collect();
        let ids: Vec<i64> = {
            let mut stmt = local.prepare(&format!(
                "SELECT id FROM \"{name}\" WHERE run_id = ?1 ORDER BY id"
            ))?;
            stmt.query_map([run_id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        for old in ids {
            let mut row = local_rows(local, t, "id", &Value::Integer(old), &["id"])?
                .pop()
                .context("a row vanished while pushing")?;
            set(&mut row, &cols, "run_id", Value::Integer(remote_run));
            let returning = if children.is_empty() {
                ""
            } else {
                "RETURNING id"
            };
            let new = insert(&mut tx, t, &cols, &row, returning)?;
            for (child, key) in *children {
                let ct = table(child)?;
                let ccols: Vec<&str> = ct
                    .column_names()
                    .into_iter()
                    .filter(|c| *c != "id")
                    .collect();
                let mut rows = local_rows(local, ct, key, &Value::Integer(old), &["id"])?;
                let new = new.context("no id returned for a parent row")?;
                for r in &mut rows {
                    set(r, &ccols, key, Value::Integer(new));
                }
                insert_many(&mut tx, ct, &ccols, &rows)?;
            }
        }
    }
    tx.commit()?;
    Ok(Some(remote_run))
}

/// The rows of `t` whose `key` is `value`, with every column but `skip`,
/// ordered by the table's first column.
fn local_rows(
    local: &rusqlite::Connection,
    t: &Table,
    key: &str,
    value: &Value,
    skip: &[&str],
) -> Result<Vec<Vec<Value>>> {
    let cols: Vec<String> = t
        .columns
        .iter()
        .filter(|c| !skip.contains(&c.name.as_str()))
        .map(|c| format!("\"{}\"", c.name))
        .collect();
    let mut stmt = local.prepare(&format!(
        "SELECT {} FROM \"{}\" WHERE \"{key}\" = ?1 ORDER BY 1",
        cols.join(", "),
        t.name
    ))?;
    let n = cols.len();
    let rows = stmt
        .query_map([value], |r| {
            (0..n)
                .map(|i| r.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<_>>>()
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

fn set(row: &mut [Value], cols: &[&str], name: &str, v: Value) {
    if let Some(i) = cols.iter().position(|c| *c == name) {
        row[i] = v;
    }
}

/// Inserts one row; the id it returns when `tail` says RETURNING id.
fn insert(
    tx: &mut postgres::Transaction<'_>,
    t: &Table,
    cols: &[&str],
    row: &[Value],
    tail: &str,
) -> Result<Option<i64>> {
    let names: Vec<String> = cols.iter().map(|c| format!("\"{c}\"")).collect();
    let marks: Vec<String> = (1..=cols.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "INSERT INTO \"{}\" ({}) VALUES ({}) {tail}",
        t.name,
        names.join(", "),
        marks.join(", ")
    );
    let cells: Vec<Cell> = row.iter().cloned().map(Cell).collect();
    let params: Vec<&(dyn postgres::types::ToSql + Sync)> = cells
        .iter()
        .map(|c| c as &(dyn postgres::types::ToSql + Sync))
        .collect();
    let rows = tx
        .query(&sql, &params)
        .with_context(|| format!("inserting into {}", t.name))?;
    Ok(rows.first().and_then(|r| r.try_get::<_, i64>(0).ok()))
}

/// Inserts rows nothing references, many per statement.
fn insert_many(
    tx: &mut postgres::Transaction<'_>,
    t: &Table,
    cols: &[&str],
    rows: &[Vec<Value>],
) -> Result<()> {
    let names: Vec<String> = cols.iter().map(|c| format!("\"{c}\"")).collect();
    for chunk in rows.chunks(BATCH_ROWS) {
        let mut values = Vec::with_capacity(chunk.len());
        let mut cells = Vec::with_capacity(chunk.len() * cols.len());
        for row in chunk {
            let base = cells.len();
            let marks: Vec<String> = (1..=cols.len()).map(|i| format!("${}", base + i)).collect();
            values.push(format!("({})", marks.join(", ")));
            cells.extend(row.iter().cloned().map(Cell));
        }
        let sql = format!(
            "INSERT INTO \"{}\" ({}) VALUES {}",
            t.name,
            names.join(", "),
            values.join(", ")
        );
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> = cells
            .iter()
            .map(|c| c as &(dyn postgres::types::ToSql + Sync))
            .collect();
        tx.execute(&sql, &params)
            .with_context(|| format!("inserting into {}", t.name))?;
    }
    Ok(())
}
